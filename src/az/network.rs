//! The policy–value network in candle: a residual tower with a policy head
//! and a value head (alphazero.md, "Network"), optionally a reply head (the
//! opponent's next move, an auxiliary training target that play never
//! reads), and the AdamW optimizer that trains it.
//!
//! Every 3×3 convolution is written as "unfold, then one matrix product":
//! the input (`[N, H, W, C]`, pixels-major) is zero-padded, its nine
//! shifted views are concatenated along channels (`[N·H·W, 9·C]`), and one
//! matmul with the `[9·C, C_out]` weight gives the output. candle's CPU
//! matmul is fast on one large matrix and slow on many small ops, and the
//! backward pass of narrow/cat/matmul is cheap, so training uses the same
//! shape of computation as the fast inference path ([`super::inference`]),
//! which reads the very same weight layout. The code is device-agnostic: the
//! same ops run on CPU, CUDA and Metal.
//!
//! Batch norm is implemented here rather than taken from candle-nn because
//! candle-nn's `BatchNorm` copies its running statistics into private
//! variables, so they would never reach a saved checkpoint.

use super::im2col::{fold3, unfold3};
use candle_core::{CpuStorage, CustomOp1, DType, Device, Layout, Result, Shape, Tensor, Var, D};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Batch-norm epsilon, shared with the folded inference path.
pub const BN_EPS: f64 = 1e-5;
/// Weight of the newest batch in the running statistics.
const BN_MOMENTUM: f64 = 0.1;
/// Filters of the policy head's 1×1 convolution.
pub const POLICY_FILTERS: usize = 2;

/// The network's shape: what a checkpoint must match to be loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetShape {
    pub rows: usize,
    pub cols: usize,
    pub blocks: usize,
    pub channels: usize,
    pub value_hidden: usize,
    /// The auxiliary reply head (`network.reply_head`): logits for the
    /// opponent's next move, trained beside the policy and never used in
    /// play. Absent in the `meta.json` of models from before it: false.
    #[serde(default)]
    pub reply_head: bool,
}

impl NetShape {
    /// Whether weights trained for `from` can seed this shape by adding
    /// residual blocks, channels, or both, and by adding or dropping the
    /// reply head (same board and value head; blocks and channels not
    /// smaller). A new reply head starts from fresh weights; a dropped
    /// one's weights are left unread, as nothing else reads them.
    pub fn grows_from(&self, from: &NetShape) -> bool {
        self != from
            && self.blocks >= from.blocks
            && self.channels >= from.channels
            && (self.rows, self.cols, self.value_hidden) == (from.rows, from.cols, from.value_hidden)
    }

    /// Whether networks of the two shapes play alike given the same weights:
    /// the same shape but for the reply head, which play never reads.
    pub fn plays_as(&self, other: &NetShape) -> bool {
        NetShape {
            reply_head: false,
            ..*self
        } == NetShape {
            reply_head: false,
            ..*other
        }
    }

    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// Multiply–adds of one forward pass for one position (for GFLOP/s
    /// figures): the pass that plays, so without the reply head.
    pub fn macs(&self) -> u64 {
        let hw = self.cells() as u64;
        let c = self.channels as u64;
        let stem = hw * 27 * c;
        let tower = self.blocks as u64 * 2 * hw * 9 * c * c;
        let heads = hw * c * (POLICY_FILTERS as u64 + 1)
            + hw * POLICY_FILTERS as u64 * self.cols as u64
            + hw * self.value_hidden as u64
            + self.value_hidden as u64;
        stem + tower + heads
    }
}

/// The 3×3 unfold of a `[N, H, W, C]` tensor as one CPU op, with the
/// adjoint fold as its backward pass. candle's own way (pad, nine narrow
/// views, cat) costs nine full-size copies forward and nine zero-padded
/// gradients backward per convolution; these are two tight loops.
struct Unfold3 {
    dims: (usize, usize, usize, usize),
}

/// The backward of [`Unfold3`].
struct Fold3 {
    dims: (usize, usize, usize, usize),
}

fn contiguous_f32<'a>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    let (a, b) = l
        .contiguous_offsets()
        .ok_or_else(|| candle_core::Error::Msg("unfold needs a contiguous tensor".into()))?;
    Ok(&s.as_slice::<f32>()?[a..b])
}

impl CustomOp1 for Unfold3 {
    fn name(&self) -> &'static str {
        "c4sim-unfold3"
    }
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let (n, h, w, c) = self.dims;
        let mut out = Vec::new();
        unfold3(contiguous_f32(s, l)?, n, h, w, c, &mut out);
        Ok((CpuStorage::F32(out), Shape::from((n * h * w, 9 * c))))
    }
    fn bwd(&self, _arg: &Tensor, _res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(grad.contiguous()?.apply_op1_no_bwd(&Fold3 { dims: self.dims })?))
    }
}

impl CustomOp1 for Fold3 {
    fn name(&self) -> &'static str {
        "c4sim-fold3"
    }
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let (n, h, w, c) = self.dims;
        let x = fold3(contiguous_f32(s, l)?, n, h, w, c);
        Ok((CpuStorage::F32(x), Shape::from((n, h, w, c))))
    }
}

/// A convolution (kernel 1 or 3, no bias) followed by batch norm.
pub struct ConvBn {
    pub k: usize,
    pub cin: usize,
    pub cout: usize,
    /// `[k·k·cin, cout]`; row `(dy·k + dx)·cin + c`.
    pub w: Var,
    pub gamma: Var,
    pub beta: Var,
    pub mean: Var,
    pub var: Var,
}

/// The reply head's weight in the loss unless set (`optimizer.reply_weight`):
/// KataGo's for its opponent-policy target.
pub const DEFAULT_REPLY_WEIGHT: f64 = 0.15;

/// Checkpoint names of the reply head's tensors.
pub const REPLY_FC_W: &str = "reply.fc.w";
pub const REPLY_FC_B: &str = "reply.fc.b";

/// What [`Net::loss`] computes: the total to step on, and its parts for the
/// metrics. `reply`, present when reply targets were given, is the reply
/// head's cross-entropy per sample that has a target (the total counts it
/// weighted, per sample of the batch).
pub struct Losses {
    pub total: Tensor,
    pub policy: Tensor,
    pub value: Tensor,
    pub reply: Option<Tensor>,
}

/// The residual tower and its heads.
pub struct Net {
    pub shape: NetShape,
    pub device: Device,
    pub stem: ConvBn,
    pub blocks: Vec<(ConvBn, ConvBn)>,
    pub p_conv: ConvBn,
    /// `[2·H·W, cols]`, input index `(h·W + w)·2 + filter`.
    pub p_fc_w: Var,
    pub p_fc_b: Var,
    pub v_conv: ConvBn,
    pub v_fc1_w: Var,
    pub v_fc1_b: Var,
    pub v_fc2_w: Var,
    pub v_fc2_b: Var,
    /// The reply head ([`NetShape::reply_head`]): one dense layer on the
    /// same flattened policy features as `p_fc_w`, weight `[2·H·W, cols]`
    /// and bias `[cols]`. Sharing the policy head's features is what makes
    /// the auxiliary target shape them (KataGo's opponent policy, Wu 2019
    /// section 4.1); play reads only `p_fc_w`.
    pub reply_fc: Option<(Var, Var)>,
    /// Convolutions through candle's `conv2d` instead of unfold + matmul
    /// (same weights, same function; which is faster is measured by
    /// `c4sim bench train`).
    pub native_conv: bool,
}

fn uniform(rng: &mut ChaCha8Rng, n: usize, bound: f32) -> Vec<f32> {
    (0..n).map(|_| rng.gen_range(-bound..bound)).collect()
}

fn var(v: Vec<f32>, shape: &[usize], dev: &Device) -> Result<Var> {
    Var::from_tensor(&Tensor::from_vec(v, shape, dev)?)
}

impl ConvBn {
    fn new(k: usize, cin: usize, cout: usize, rng: &mut ChaCha8Rng, dev: &Device) -> Result<Self> {
        let fan_in = k * k * cin;
        // He-uniform: keeps activations' scale through ReLU layers.
        let bound = (6.0 / fan_in as f32).sqrt();
        Ok(ConvBn {
            k,
            cin,
            cout,
            w: var(uniform(rng, fan_in * cout, bound), &[fan_in, cout], dev)?,
            gamma: var(vec![1.0; cout], &[cout], dev)?,
            beta: var(vec![0.0; cout], &[cout], dev)?,
            mean: var(vec![0.0; cout], &[cout], dev)?,
            var: var(vec![1.0; cout], &[cout], dev)?,
        })
    }

    /// `x`: `[N, H, W, cin]` → `[N, H, W, cout]` (no activation). In
    /// training, normalises with the batch's statistics and updates the
    /// running ones.
    fn forward(&self, x: &Tensor, train: bool) -> Result<Tensor> {
        let (n, h, w, c) = x.dims4()?;
        let unfolded = if self.k == 3 && x.device().is_cpu() && x.dtype() == DType::F32 {
            x.contiguous()?.apply_op1(Unfold3 { dims: (n, h, w, c) })?
        } else if self.k == 3 {
            let p = x.pad_with_zeros(1, 1, 1)?.pad_with_zeros(2, 1, 1)?;
            let mut parts = Vec::with_capacity(9);
            for dy in 0..3 {
                for dx in 0..3 {
                    parts.push(p.narrow(1, dy, h)?.narrow(2, dx, w)?);
                }
            }
            Tensor::cat(&parts, 3)?
        } else {
            x.clone()
        };
        let y = unfolded
            .reshape((n * h * w, self.k * self.k * c))?
            .matmul(self.w.as_tensor())?;
        let y = self.batch_norm(&y, &[0], (1, self.cout), train)?;
        y.reshape((n, h, w, self.cout))
    }

    /// Batch norm of `y` per channel: statistics over the axes `reduce`
    /// (every axis but the channel's), the per-channel vectors seen in the
    /// `channel_shape` that broadcasts against `y`. Training normalises by
    /// the batch's statistics and moves the running ones towards them
    /// (unbiased variance); inference uses the running ones.
    fn batch_norm<S: Into<Shape> + Copy>(
        &self,
        y: &Tensor,
        reduce: &[usize],
        channel_shape: S,
        train: bool,
    ) -> Result<Tensor> {
        let per_channel = |v: &Var| v.as_tensor().reshape(channel_shape);
        let y = if train {
            let mean = y.mean_keepdim(reduce)?;
            let centred = y.broadcast_sub(&mean)?;
            let var = centred.sqr()?.mean_keepdim(reduce)?;
            let rows = (y.elem_count() / self.cout) as f64;
            let unbiased = (var.detach() * (rows / (rows - 1.0).max(1.0)))?;
            let m = ((self.mean.as_tensor() * (1.0 - BN_MOMENTUM))? + (mean.detach().flatten_all()? * BN_MOMENTUM)?)?;
            let v = ((self.var.as_tensor() * (1.0 - BN_MOMENTUM))? + (unbiased.flatten_all()? * BN_MOMENTUM)?)?;
            self.mean.set(&m.detach())?;
            self.var.set(&v.detach())?;
            centred.broadcast_div(&(var + BN_EPS)?.sqrt()?)?
        } else {
            let inv = (per_channel(&self.var)? + BN_EPS)?.sqrt()?.recip()?;
            y.broadcast_sub(&per_channel(&self.mean)?)?.broadcast_mul(&inv)?
        };
        y.broadcast_mul(&per_channel(&self.gamma)?)?
            .broadcast_add(&per_channel(&self.beta)?)
    }

    /// The same layer on `[N, cin, H, W]` through candle's own `conv2d`
    /// (the weight is permuted to `[cout, cin, k, k]`): the alternative
    /// measured by `c4sim bench train`.
    fn forward_nchw(&self, x: &Tensor, train: bool) -> Result<Tensor> {
        let w = self
            .w
            .as_tensor()
            .reshape((self.k, self.k, self.cin, self.cout))?
            .permute((3, 2, 0, 1))?
            .contiguous()?;
        let y = x.conv2d(&w, self.k / 2, 1, 1, 1)?;
        self.batch_norm(&y, &[0, 2, 3], (1, self.cout, 1, 1), train)
    }

    fn named<'a>(&'a self, prefix: &str, out: &mut Vec<(String, &'a Var, bool)>) {
        out.push((format!("{prefix}.w"), &self.w, true));
        out.push((format!("{prefix}.gamma"), &self.gamma, true));
        out.push((format!("{prefix}.beta"), &self.beta, true));
        out.push((format!("{prefix}.running_mean"), &self.mean, false));
        out.push((format!("{prefix}.running_var"), &self.var, false));
    }
}

impl Net {
    /// A freshly initialised network; the same seed gives the same weights.
    pub fn new(shape: NetShape, seed: u64, device: &Device) -> Result<Self> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x4e45_5457);
        let (c, hw) = (shape.channels, shape.cells());
        let dev = device;
        let stem = ConvBn::new(3, super::encode::PLANES, c, &mut rng, dev)?;
        let mut blocks = Vec::with_capacity(shape.blocks);
        for _ in 0..shape.blocks {
            blocks.push((
                ConvBn::new(3, c, c, &mut rng, dev)?,
                ConvBn::new(3, c, c, &mut rng, dev)?,
            ));
        }
        let p_conv = ConvBn::new(1, c, POLICY_FILTERS, &mut rng, dev)?;
        let p_in = POLICY_FILTERS * hw;
        let pb = 1.0 / (p_in as f32).sqrt();
        let p_fc_w = var(uniform(&mut rng, p_in * shape.cols, pb), &[p_in, shape.cols], dev)?;
        let p_fc_b = var(vec![0.0; shape.cols], &[shape.cols], dev)?;
        let v_conv = ConvBn::new(1, c, 1, &mut rng, dev)?;
        let vh = shape.value_hidden;
        let b1 = 1.0 / (hw as f32).sqrt();
        let v_fc1_w = var(uniform(&mut rng, hw * vh, b1), &[hw, vh], dev)?;
        let v_fc1_b = var(vec![0.0; vh], &[vh], dev)?;
        let b2 = 1.0 / (vh as f32).sqrt();
        let v_fc2_w = var(uniform(&mut rng, vh, b2), &[vh, 1], dev)?;
        let v_fc2_b = var(vec![0.0; 1], &[1], dev)?;
        // Drawn last, so that the rest of a network with the head is the
        // network without it from the same seed.
        let reply_fc = match shape.reply_head {
            true => Some((
                var(uniform(&mut rng, p_in * shape.cols, pb), &[p_in, shape.cols], dev)?,
                var(vec![0.0; shape.cols], &[shape.cols], dev)?,
            )),
            false => None,
        };
        Ok(Net {
            shape,
            device: device.clone(),
            stem,
            blocks,
            p_conv,
            p_fc_w,
            p_fc_b,
            v_conv,
            v_fc1_w,
            v_fc1_b,
            v_fc2_w,
            v_fc2_b,
            reply_fc,
            native_conv: false,
        })
    }

    /// Every tensor with its checkpoint name and whether it is trained
    /// (running statistics are not), in a fixed order.
    pub fn named(&self) -> Vec<(String, &Var, bool)> {
        let mut out = Vec::new();
        self.stem.named("stem", &mut out);
        for (i, (a, b)) in self.blocks.iter().enumerate() {
            a.named(&format!("block{i}.conv1"), &mut out);
            b.named(&format!("block{i}.conv2"), &mut out);
        }
        self.p_conv.named("policy.conv", &mut out);
        out.push(("policy.fc.w".into(), &self.p_fc_w, true));
        out.push(("policy.fc.b".into(), &self.p_fc_b, true));
        self.v_conv.named("value.conv", &mut out);
        out.push(("value.fc1.w".into(), &self.v_fc1_w, true));
        out.push(("value.fc1.b".into(), &self.v_fc1_b, true));
        out.push(("value.fc2.w".into(), &self.v_fc2_w, true));
        out.push(("value.fc2.b".into(), &self.v_fc2_b, true));
        if let Some((w, b)) = &self.reply_fc {
            out.push((REPLY_FC_W.into(), w, true));
            out.push((REPLY_FC_B.into(), b, true));
        }
        out
    }

    /// `x`: `[N, H, W, 3]` planes → (policy logits `[N, cols]`, values `[N]`).
    /// The reply head, if any, is not computed: see [`Net::forward_heads`].
    pub fn forward(&self, x: &Tensor, train: bool) -> Result<(Tensor, Tensor)> {
        let (logits, v, _) = self.forward_heads(x, train, false)?;
        Ok((logits, v))
    }

    /// [`Net::forward`], and with `reply` the reply head's logits
    /// (`[N, cols]`; `None` for a network without the head).
    pub fn forward_heads(&self, x: &Tensor, train: bool, reply: bool) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        let (p, v, n) = if self.native_conv {
            self.features_native(x, train)?
        } else {
            self.features(x, train)?
        };
        let (logits, v) = self.dense_heads(&p, &v, n)?;
        let reply_logits = match (&self.reply_fc, reply) {
            (Some((w, b)), true) => Some(p.matmul(w.as_tensor())?.broadcast_add(b.as_tensor())?),
            _ => None,
        };
        Ok((logits, v, reply_logits))
    }

    /// The heads' features after their convolutions: the flattened policy
    /// features `[N, 2·H·W]` (pixels-major, as `p_fc_w` reads them), the
    /// value features `[N, H·W]`, and `N`.
    fn features(&self, x: &Tensor, train: bool) -> Result<(Tensor, Tensor, usize)> {
        let h = self.tower(x, |c, t| c.forward(t, train))?;
        let n = h.dim(0)?;
        let hw = self.shape.cells();
        let p = self
            .p_conv
            .forward(&h, train)?
            .relu()?
            .reshape((n, hw * POLICY_FILTERS))?;
        let v = self.v_conv.forward(&h, train)?.relu()?.reshape((n, hw))?;
        Ok((p, v, n))
    }

    /// [`Net::features`] with candle's `conv2d` on channels-first tensors.
    fn features_native(&self, x: &Tensor, train: bool) -> Result<(Tensor, Tensor, usize)> {
        let x = x.permute((0, 3, 1, 2))?.contiguous()?;
        let h = self.tower(&x, |c, t| c.forward_nchw(t, train))?;
        let n = h.dim(0)?;
        let hw = self.shape.cells();
        // Flatten in the pixels-major order the weights are stored in.
        let p = self
            .p_conv
            .forward_nchw(&h, train)?
            .relu()?
            .permute((0, 2, 3, 1))?
            .reshape((n, hw * POLICY_FILTERS))?;
        let v = self.v_conv.forward_nchw(&h, train)?.relu()?.reshape((n, hw))?;
        Ok((p, v, n))
    }

    /// The stem and the residual blocks, in either convolution path's
    /// layout (`conv` is that path's convolution + batch norm).
    fn tower(&self, x: &Tensor, conv: impl Fn(&ConvBn, &Tensor) -> Result<Tensor>) -> Result<Tensor> {
        let mut h = conv(&self.stem, x)?.relu()?;
        for (a, b) in &self.blocks {
            let y = conv(b, &conv(a, &h)?.relu()?)?;
            h = (y + &h)?.relu()?;
        }
        Ok(h)
    }

    /// The heads' dense layers, shared by both convolution paths: the
    /// flattened policy features to logits, the value features to a value in
    /// [-1, 1].
    fn dense_heads(&self, p: &Tensor, v: &Tensor, n: usize) -> Result<(Tensor, Tensor)> {
        let logits = p
            .matmul(self.p_fc_w.as_tensor())?
            .broadcast_add(self.p_fc_b.as_tensor())?;
        let v = v
            .matmul(self.v_fc1_w.as_tensor())?
            .broadcast_add(self.v_fc1_b.as_tensor())?
            .relu()?;
        let v = v
            .matmul(self.v_fc2_w.as_tensor())?
            .broadcast_add(self.v_fc2_b.as_tensor())?
            .tanh()?
            .reshape(n)?;
        Ok((logits, v))
    }

    /// Evaluation-mode forward on plain floats (`n` positions of encoded
    /// planes), for devices without the folded CPU path.
    pub fn infer(&self, planes: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>) -> Result<()> {
        let (r, c) = (self.shape.rows, self.shape.cols);
        let x = Tensor::from_slice(planes, (n, r, c, super::encode::PLANES), &self.device)?;
        let (l, v) = self.forward(&x, false)?;
        *logits = l.flatten_all()?.to_dtype(DType::F32)?.to_vec1()?;
        *values = v.to_dtype(DType::F32)?.to_vec1()?;
        Ok(())
    }

    /// The loss of alphazero.md: policy cross-entropy against the visit
    /// distribution plus value mean-squared error (weight decay is applied
    /// by the optimizer); with `reply` (targets `[N, cols]`, weight) and a
    /// reply head, plus weight × the reply head's cross-entropy against
    /// the targets, summed over the batch and divided by `N`: a sample
    /// without a reply target has a zero row and adds nothing, so no mask
    /// is needed.
    pub fn loss(&self, x: &Tensor, policy: &Tensor, value: &Tensor, reply: Option<(&Tensor, f64)>) -> Result<Losses> {
        let want_reply = reply.is_some();
        if want_reply && self.reply_fc.is_none() {
            candle_core::bail!("reply targets for a network without a reply head");
        }
        let (logits, v, reply_logits) = self.forward_heads(x, true, want_reply)?;
        let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
        let pl = (policy * logp)?.sum(1)?.mean(0)?.neg()?;
        let vl = (v - value)?.sqr()?.mean(0)?;
        let mut total = (&pl + &vl)?;
        let mut rl = None;
        if let (Some((target, weight)), Some(rlogits)) = (reply, reply_logits) {
            let logq = candle_nn::ops::log_softmax(&rlogits, D::Minus1)?;
            let per_row = (target * logq)?.sum(1)?.neg()?;
            total = (total + (per_row.mean(0)? * weight)?)?;
            // Reported per sample with a target, so that the figure does not
            // depend on how many samples have one.
            let with_target = target
                .sum(1)?
                .gt(0f32)?
                .to_dtype(DType::F32)?
                .sum_all()?
                .maximum(1f32)?;
            rl = Some((per_row.sum_all()? / with_target)?.detach());
        }
        Ok(Losses {
            total,
            policy: pl,
            value: vl,
            reply: rl,
        })
    }

    /// Every tensor by name, for safetensors.
    pub fn tensors(&self) -> HashMap<String, Tensor> {
        self.named()
            .into_iter()
            .map(|(n, v, _)| (n, v.as_tensor().clone()))
            .collect()
    }

    /// Weights as plain floats by name (for the folded CPU path).
    pub fn host_weights(&self) -> Result<HashMap<String, Vec<f32>>> {
        self.named()
            .into_iter()
            .map(|(n, v, _)| Ok((n, v.as_tensor().flatten_all()?.to_dtype(DType::F32)?.to_vec1()?)))
            .collect()
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        candle_core::safetensors::save(&self.tensors(), path)
    }

    /// Loads weights saved by [`Net::save`] into a network of `shape`;
    /// every tensor must be present with the right shape.
    pub fn load(shape: NetShape, path: &Path, device: &Device) -> Result<Self> {
        let net = Net::new(shape, 0, device)?;
        let saved = candle_core::safetensors::load(path, device)?;
        net.set_from(&saved)?;
        Ok(net)
    }

    /// Loads weights saved for `from` (see [`NetShape::grows_from`]) into
    /// the larger `shape`, so that it computes exactly what the saved
    /// network did:
    /// - every new residual block starts as an identity: its second batch
    ///   norm's scale is zero, so it adds nothing to the residual stream
    ///   (`relu(0 + h) = h` for `h ≥ 0`);
    /// - every new channel starts as fresh random features that nothing old
    ///   reads: the weights from it into the saved channels are zero
    ///   ([`embed_grown`]). Their gradients are not (the new features are
    ///   not zero), so training connects them where they help. (Zeroing
    ///   the new channels themselves instead would leave them at ReLU's
    ///   kink, where no gradient passes.)
    /// - a new reply head starts from fresh random weights (it feeds nothing
    ///   the saved network computed); a dropped one's saved tensors are not
    ///   read.
    pub fn load_grown(shape: NetShape, from: NetShape, path: &Path, device: &Device) -> Result<Self> {
        if !shape.grows_from(&from) {
            candle_core::bail!(
                "a {} × {} network cannot grow into {} × {}",
                from.blocks,
                from.channels,
                shape.blocks,
                shape.channels
            );
        }
        let net = Net::new(shape, 0x6772_6f77, device)?;
        let saved = candle_core::safetensors::load(path, device)?;
        for (name, v, _) in net.named() {
            let Some(old) = saved.get(&name) else {
                if is_reply(&name) && !from.reply_head {
                    continue;
                }
                if !name.starts_with("block") {
                    candle_core::bail!("the weights have no tensor `{name}`");
                }
                if name.ends_with("conv2.gamma") {
                    v.set(&v.zeros_like()?)?;
                }
                continue;
            };
            let fresh: Vec<f32> = v.as_tensor().flatten_all()?.to_vec1()?;
            let old_host: Vec<f32> = old.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?;
            let grown = embed_grown(
                &name,
                &old_host,
                old.dims(),
                fresh,
                v.dims(),
                from.channels,
                shape.channels,
            )?;
            v.set(&Tensor::from_vec(grown, v.shape(), device)?)?;
        }
        Ok(net)
    }

    /// Copies tensor `name` from `saved` into `v`, checking its shape;
    /// returns false when it is absent and `may_miss(name)` allows that.
    fn copy_named(
        &self,
        saved: &HashMap<String, Tensor>,
        name: &str,
        v: &Var,
        may_miss: impl Fn(&str) -> bool,
    ) -> Result<bool> {
        match saved.get(name) {
            Some(t) if t.dims() == v.dims() => {
                v.set(&t.to_dtype(DType::F32)?)?;
                Ok(true)
            }
            Some(t) => candle_core::bail!(
                "tensor `{name}` has shape {:?}, the network expects {:?}",
                t.dims(),
                v.dims()
            ),
            None if may_miss(name) => Ok(false),
            None => candle_core::bail!("the weights have no tensor `{name}`"),
        }
    }

    /// Copies tensors by name (all must be present, with matching shapes).
    pub fn set_from(&self, saved: &HashMap<String, Tensor>) -> Result<()> {
        for (name, v, _) in self.named() {
            self.copy_named(saved, &name, v, |_| false)?;
        }
        Ok(())
    }

    /// Copies every tensor from host vectors by name (see [`Net::host_weights`]).
    pub fn set_from_host(&self, w: &HashMap<String, Vec<f32>>) -> Result<()> {
        for (name, v, _) in self.named() {
            let data = w
                .get(&name)
                .ok_or_else(|| candle_core::Error::Msg(format!("no tensor `{name}`")))?;
            v.set(&Tensor::from_slice(data, v.shape(), &self.device)?)?;
        }
        Ok(())
    }

    /// Moves every tensor toward `trained`'s: `self ← keep·self + (1 − keep)·trained`,
    /// running statistics included — one step of the exponential moving
    /// average that `optimizer.ema` plays with. Both nets have one shape.
    pub fn average_toward(&self, trained: &Net, keep: f64) -> Result<()> {
        let theirs = trained.tensors();
        for (name, v, _) in self.named() {
            let t = theirs
                .get(&name)
                .ok_or_else(|| candle_core::Error::Msg(format!("no tensor `{name}`")))?;
            let blended = ((v.as_tensor() * keep)? + (t.to_device(&self.device)? * (1.0 - keep))?)?;
            v.set(&blended)?;
        }
        Ok(())
    }

    /// A copy on another device (or the same one), sharing nothing.
    pub fn duplicate(&self, device: &Device) -> Result<Net> {
        let copy = Net::new(self.shape, 0, device)?;
        let moved: HashMap<String, Tensor> = self
            .tensors()
            .into_iter()
            .map(|(k, t)| Ok((k, t.to_device(device)?.copy()?)))
            .collect::<Result<_>>()?;
        copy.set_from(&moved)?;
        Ok(copy)
    }
}

/// Whether checkpoint tensor `name` belongs to the reply head.
fn is_reply(name: &str) -> bool {
    name.starts_with("reply.")
}

/// `old` (a tensor of `old_dims`, saved for a network of `from_channels`)
/// written into `base` (of `new_dims`, for `to_channels`) at the places
/// its entries had: a vector's first entries; a weight matrix
/// `[k·k·cin, cout]`'s first columns and, where `cin` grew, each kernel
/// tap's first `cin` rows (row `tap·cin + c`, see [`ConvBn::w`]). The
/// weights from a new input channel into an old output channel are zero, so
/// the old outputs are what they were; the rest of `base` is kept. Same
/// dims: `old` itself.
pub fn embed_grown(
    name: &str,
    old: &[f32],
    old_dims: &[usize],
    mut base: Vec<f32>,
    new_dims: &[usize],
    from_channels: usize,
    to_channels: usize,
) -> Result<Vec<f32>> {
    let fits = old_dims.len() == new_dims.len() && old_dims.iter().zip(new_dims).all(|(o, n)| o <= n);
    if !fits {
        candle_core::bail!("tensor `{name}` has shape {old_dims:?}, the network expects {new_dims:?}");
    }
    match *new_dims {
        [_] => base[..old.len()].copy_from_slice(old),
        [rows, cols] => {
            let (old_rows, old_cols) = (old_dims[0], old_dims[1]);
            // Rows are (tap, input channel) pairs when the input channels grew.
            let (taps, cin_old, cin_new) = if rows == old_rows {
                (1, old_rows, rows)
            } else if rows % to_channels == 0 && old_rows == rows / to_channels * from_channels {
                (rows / to_channels, from_channels, to_channels)
            } else {
                candle_core::bail!("tensor `{name}`: cannot place {old_dims:?} in {new_dims:?}")
            };
            for tap in 0..taps {
                for c in 0..cin_new {
                    let dst = (tap * cin_new + c) * cols;
                    if c < cin_old {
                        let src = (tap * cin_old + c) * old_cols;
                        base[dst..dst + old_cols].copy_from_slice(&old[src..src + old_cols]);
                    } else {
                        base[dst..dst + old_cols].fill(0.0);
                    }
                }
            }
        }
        _ => candle_core::bail!("tensor `{name}`: cannot grow a tensor of {} dimensions", new_dims.len()),
    }
    Ok(base)
}

/// AdamW moments as host vectors (first, second) by trained-tensor name.
pub type HostMoments = HashMap<String, (Vec<f32>, Vec<f32>)>;

/// AdamW (decoupled weight decay, applied to the weight matrices, not to
/// biases or batch-norm scales). Written out here so its moments can be
/// saved in a checkpoint and a resumed run continues exactly.
pub struct AdamW {
    pub lr: f64,
    pub weight_decay: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub step: u64,
    /// Per trained tensor (in [`Net::named`] order): first and second moments.
    moments: Vec<(Tensor, Tensor)>,
}

impl AdamW {
    pub fn new(net: &Net, lr: f64, weight_decay: f64) -> Result<Self> {
        let moments = net
            .named()
            .into_iter()
            .filter(|(_, _, trained)| *trained)
            .map(|(_, v, _)| Ok((v.zeros_like()?, v.zeros_like()?)))
            .collect::<Result<_>>()?;
        Ok(AdamW {
            lr,
            weight_decay,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            step: 0,
            moments,
        })
    }

    /// One step from the gradients of `loss`.
    pub fn step(&mut self, net: &Net, loss: &Tensor) -> Result<()> {
        let grads = loss.backward()?;
        self.step += 1;
        let t = self.step as i32;
        let bc1 = 1.0 - self.beta1.powi(t);
        let bc2 = 1.0 - self.beta2.powi(t);
        let trained = net.named().into_iter().filter(|(_, _, tr)| *tr);
        for ((name, v, _), (m, s)) in trained.zip(self.moments.iter_mut()) {
            let Some(g) = grads.get(v.as_tensor()) else {
                continue;
            };
            // Detached: a gradient carries the step's whole autograd graph,
            // and a moment kept with it would chain every step's graph to the
            // next (memory grows without bound).
            let g = g.detach();
            *m = ((&*m * self.beta1)? + (&g * (1.0 - self.beta1))?)?.detach();
            *s = ((&*s * self.beta2)? + (g.sqr()? * (1.0 - self.beta2))?)?.detach();
            let update = ((&*m / bc1)? / ((&*s / bc2)?.sqrt()? + self.eps)?)?;
            let decay = if name.ends_with(".w") {
                1.0 - self.lr * self.weight_decay
            } else {
                1.0
            };
            let next = ((v.as_tensor() * decay)? - (update * self.lr)?)?.detach();
            v.set(&next)?;
        }
        Ok(())
    }

    /// Moments by tensor name (`m.NAME`, `v.NAME`), for a checkpoint.
    pub fn tensors(&self, net: &Net) -> HashMap<String, Tensor> {
        let mut out = HashMap::new();
        let trained = net.named().into_iter().filter(|(_, _, tr)| *tr);
        for ((name, _, _), (m, s)) in trained.zip(self.moments.iter()) {
            out.insert(format!("m.{name}"), m.clone());
            out.insert(format!("v.{name}"), s.clone());
        }
        out
    }

    pub fn save(&self, net: &Net, path: &Path) -> Result<()> {
        candle_core::safetensors::save(&self.tensors(net), path)
    }
    /// The moments as host vectors by trained-tensor name (for the CPU
    /// trainer of [`super::hosttrain`]).
    pub fn host_moments(&self, net: &Net) -> Result<HostMoments> {
        let trained = net.named().into_iter().filter(|(_, _, tr)| *tr);
        trained
            .zip(self.moments.iter())
            .map(|((name, _, _), (m, s))| Ok((name, (m.flatten_all()?.to_vec1()?, s.flatten_all()?.to_vec1()?))))
            .collect()
    }

    /// Replaces the moments and the step count from host vectors.
    pub fn set_host_moments(&mut self, net: &Net, moments: &HostMoments, step: u64) -> Result<()> {
        let trained = net.named().into_iter().filter(|(_, _, tr)| *tr);
        for ((name, v, _), (m, s)) in trained.zip(self.moments.iter_mut()) {
            let (hm, hs) = moments
                .get(&name)
                .ok_or_else(|| candle_core::Error::Msg(format!("no moments for `{name}`")))?;
            *m = Tensor::from_slice(hm, v.shape(), &net.device)?;
            *s = Tensor::from_slice(hs, v.shape(), &net.device)?;
        }
        self.step = step;
        Ok(())
    }

    /// Restores the moments saved by [`AdamW::save`] and the step count.
    pub fn load(&mut self, net: &Net, path: &Path, step: u64) -> Result<()> {
        self.load_some(net, path, step, None)
    }

    /// As [`AdamW::load`] for a grown network ([`Net::load_grown`]): the
    /// saved moments sit where the saved weights do, and the new blocks',
    /// channels' and reply head's moments start at zero.
    pub fn load_grown(&mut self, net: &Net, from: NetShape, path: &Path, step: u64) -> Result<()> {
        self.load_some(net, path, step, Some(from))
    }

    fn load_some(&mut self, net: &Net, path: &Path, step: u64, grown_from: Option<NetShape>) -> Result<()> {
        let saved = candle_core::safetensors::load(path, &net.device)?;
        let trained = net.named().into_iter().filter(|(_, _, tr)| *tr);
        for ((name, v, _), (m, s)) in trained.zip(self.moments.iter_mut()) {
            let get = |k: String| {
                saved
                    .get(&k)
                    .cloned()
                    .ok_or_else(|| candle_core::Error::Msg(format!("the optimizer state has no tensor `{k}`")))
            };
            // A grown network's new blocks and new reply head have no saved
            // moments: they start at zero.
            let new_part = match grown_from {
                Some(from) => name.starts_with("block") || (is_reply(&name) && !from.reply_head),
                None => false,
            };
            if new_part && !saved.contains_key(&format!("m.{name}")) {
                continue;
            }
            for (key, moment) in [(format!("m.{name}"), &mut *m), (format!("v.{name}"), &mut *s)] {
                let old = get(key)?;
                *moment = match grown_from {
                    None if old.dims() != v.dims() => candle_core::bail!(
                        "the optimizer state's `{name}` has shape {:?}, the network's {:?}",
                        old.dims(),
                        v.dims()
                    ),
                    None => old,
                    Some(from) => {
                        let host: Vec<f32> = old.flatten_all()?.to_vec1()?;
                        let zeros = vec![0.0; v.elem_count()];
                        let grown = embed_grown(
                            &name,
                            &host,
                            old.dims(),
                            zeros,
                            v.dims(),
                            from.channels,
                            net.shape.channels,
                        )?;
                        Tensor::from_vec(grown, v.shape(), &net.device)?
                    }
                };
            }
        }
        self.step = step;
        Ok(())
    }
}

#[cfg(test)]
impl NetShape {
    /// One block of 8 channels on a 4 × 5 board, no reply head: small
    /// enough for optimizer steps in a unit test (the tests of the network,
    /// the CPU trainer and inference share it).
    pub(crate) fn tiny() -> NetShape {
        NetShape {
            rows: 4,
            cols: 5,
            blocks: 1,
            channels: 8,
            value_hidden: 16,
            reply_head: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_ranges() {
        let net = Net::new(NetShape::tiny(), 1, &Device::Cpu).unwrap();
        let x = Tensor::ones((3, 4, 5, 3), DType::F32, &Device::Cpu).unwrap();
        let (l, v) = net.forward(&x, false).unwrap();
        assert_eq!(l.dims(), &[3, 5]);
        assert_eq!(v.dims(), &[3]);
        for x in v.to_vec1::<f32>().unwrap() {
            assert!((-1.0..=1.0).contains(&x));
        }
    }

    /// A grown network — deeper, wider, or both — computes what the saved
    /// one did, on any input, and then trains: the weights from its new
    /// channels into the old ones start at zero and move.
    #[test]
    fn a_grown_network_starts_as_the_saved_one() {
        let dev = Device::Cpu;
        let dir = tempfile::tempdir().unwrap();
        let from = NetShape::tiny();
        let net = Net::new(from, 4, &dev).unwrap();
        let mut opt = AdamW::new(&net, 1e-2, 1e-4).unwrap();
        // Train a little so that batch-norm statistics and moments are not defaults.
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let x = Tensor::from_vec(
            (0..8 * 60).map(|_| rng.gen_range(0..2) as f32).collect::<Vec<_>>(),
            (8, 4, 5, 3),
            &dev,
        )
        .unwrap();
        let p = Tensor::from_vec(vec![0.2f32; 8 * 5], (8, 5), &dev).unwrap();
        let z = Tensor::from_vec(vec![0.5f32; 8], 8, &dev).unwrap();
        for _ in 0..3 {
            let l = net.loss(&x, &p, &z, None).unwrap().total;
            opt.step(&net, &l).unwrap();
        }
        net.save(&dir.path().join("m.safetensors")).unwrap();
        opt.save(&net, &dir.path().join("o.safetensors")).unwrap();
        assert!(!from.grows_from(&from));
        assert!(!NetShape {
            blocks: 3,
            channels: 4,
            ..from
        }
        .grows_from(&from));
        assert!(!NetShape {
            blocks: 3,
            value_hidden: 8,
            ..from
        }
        .grows_from(&from));
        let (l0, v0) = net.forward(&x, false).unwrap();
        let diff = |a: &Tensor, b: &Tensor| {
            (a - b)
                .unwrap()
                .abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap()
        };
        for shape in [
            NetShape { blocks: 3, ..from },
            NetShape { channels: 12, ..from },
            NetShape {
                blocks: 2,
                channels: 12,
                ..from
            },
        ] {
            assert!(shape.grows_from(&from) && !from.grows_from(&shape));
            let grown = Net::load_grown(shape, from, &dir.path().join("m.safetensors"), &dev).unwrap();
            let (l1, v1) = grown.forward(&x, false).unwrap();
            assert!(diff(&l0, &l1) < 1e-5 && diff(&v0, &v1) < 1e-5, "{shape:?}");
            let mut gopt = AdamW::new(&grown, 1e-2, 1e-4).unwrap();
            assert!(gopt.load(&grown, &dir.path().join("o.safetensors"), 3).is_err());
            gopt.load_grown(&grown, from, &dir.path().join("o.safetensors"), 3)
                .unwrap();
            // Block 0's first weight from the first new channel (tap 0, row
            // `from.channels`) into old channel 0: zero, until training moves it.
            let from_new = |n: &Net| n.host_weights().unwrap()["block0.conv1.w"][from.channels * shape.channels];
            if shape.channels > from.channels {
                assert_eq!(from_new(&grown), 0.0);
            }
            // And it trains.
            let before = grown.loss(&x, &p, &z, None).unwrap().total.to_scalar::<f32>().unwrap();
            for _ in 0..5 {
                let l = grown.loss(&x, &p, &z, None).unwrap().total;
                gopt.step(&grown, &l).unwrap();
            }
            assert!(grown.loss(&x, &p, &z, None).unwrap().total.to_scalar::<f32>().unwrap() < before);
            if shape.channels > from.channels {
                assert_ne!(from_new(&grown), 0.0, "the new channels learn");
            }
        }
    }

    /// Planes of `n` random positions on the small board, and policy,
    /// value and reply targets (every third reply row empty).
    fn targets(n: usize, seed: u64) -> (Tensor, Tensor, Tensor, Tensor) {
        let dev = Device::Cpu;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let planes: Vec<f32> = (0..n * 60).map(|_| rng.gen_range(0..2) as f32).collect();
        let (mut pol, mut rep) = (vec![0f32; n * 5], vec![0f32; n * 5]);
        for i in 0..n {
            pol[i * 5 + rng.gen_range(0..5)] = 1.0;
            if i % 3 != 2 {
                rep[i * 5 + rng.gen_range(0..5)] = 1.0;
            }
        }
        let z: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        (
            Tensor::from_vec(planes, (n, 4, 5, 3), &dev).unwrap(),
            Tensor::from_vec(pol, (n, 5), &dev).unwrap(),
            Tensor::from_vec(z, n, &dev).unwrap(),
            Tensor::from_vec(rep, (n, 5), &dev).unwrap(),
        )
    }

    fn scalar(t: &Tensor) -> f32 {
        t.to_scalar::<f32>().unwrap()
    }

    fn headed() -> NetShape {
        NetShape {
            reply_head: true,
            ..NetShape::tiny()
        }
    }

    /// A network with the reply head is, from the same seed, the network
    /// without it plus two tensors: the same weights, the same outputs, the
    /// same loss until reply targets are given. With them the total adds
    /// weight × the reply cross-entropy per position of the batch (empty
    /// rows add nothing), reported per position with a target.
    #[test]
    fn the_reply_head_adds_a_weighted_loss_and_nothing_else() {
        let dev = Device::Cpu;
        let (plain, with) = (
            Net::new(NetShape::tiny(), 3, &dev).unwrap(),
            Net::new(headed(), 3, &dev).unwrap(),
        );
        let (pw, ww) = (plain.host_weights().unwrap(), with.host_weights().unwrap());
        assert_eq!(ww.len(), pw.len() + 2);
        for (name, w) in &pw {
            assert_eq!(&ww[name], w, "{name}");
        }
        assert_eq!(ww[REPLY_FC_W].len(), 2 * 20 * 5);
        assert!(ww[REPLY_FC_W].iter().any(|&w| w != 0.0) && ww[REPLY_FC_B] == vec![0.0; 5]);
        let (x, p, z, r) = targets(9, 1);
        let (l0, v0) = plain.forward(&x, false).unwrap();
        let (l1, v1, none) = with.forward_heads(&x, false, false).unwrap();
        assert!(none.is_none(), "the head only when asked");
        assert_eq!(l0.to_vec2::<f32>().unwrap(), l1.to_vec2::<f32>().unwrap());
        assert_eq!(v0.to_vec1::<f32>().unwrap(), v1.to_vec1::<f32>().unwrap());
        let (.., reply) = with.forward_heads(&x, false, true).unwrap();
        assert_eq!(reply.unwrap().dims(), &[9, 5]);

        let base = plain.loss(&x, &p, &z, None).unwrap();
        assert!(base.reply.is_none());
        let same = with.loss(&x, &p, &z, None).unwrap();
        assert_eq!(scalar(&base.total), scalar(&same.total));
        let empty = Tensor::zeros((9, 5), DType::F32, &dev).unwrap();
        let nothing = with.loss(&x, &p, &z, Some((&empty, 0.15))).unwrap();
        assert!((scalar(&nothing.total) - scalar(&base.total)).abs() < 1e-6);
        let l = with.loss(&x, &p, &z, Some((&r, 0.15))).unwrap();
        let reply = scalar(l.reply.as_ref().unwrap());
        // Near ln 5 for a fresh head; 6 of the 9 positions have a target.
        assert!((0.5..5.0).contains(&reply), "{reply}");
        let want = scalar(&base.total) + 0.15 * reply * 6.0 / 9.0;
        assert!((scalar(&l.total) - want).abs() < 1e-5, "{} vs {want}", scalar(&l.total));
        assert_eq!(
            (scalar(&l.policy), scalar(&l.value)),
            (scalar(&base.policy), scalar(&base.value))
        );
        let e = plain.loss(&x, &p, &z, Some((&r, 0.15))).err().unwrap().to_string();
        assert!(e.contains("without a reply head"), "{e}");
        // A model's meta.json from before the head reads as a network without it.
        let old: NetShape =
            serde_json::from_str(r#"{"rows":4,"cols":5,"blocks":1,"channels":8,"value_hidden":16}"#).unwrap();
        assert_eq!(old, NetShape::tiny());
    }

    /// Training with reply targets lowers the reply loss: the head learns.
    #[test]
    fn the_reply_head_learns() {
        let net = Net::new(headed(), 4, &Device::Cpu).unwrap();
        let mut opt = AdamW::new(&net, 1e-2, 1e-4).unwrap();
        let (x, p, z, r) = targets(16, 2);
        let reply = |net: &Net| scalar(net.loss(&x, &p, &z, Some((&r, 1.0))).unwrap().reply.as_ref().unwrap());
        let first = reply(&net);
        for _ in 0..30 {
            let l = net.loss(&x, &p, &z, Some((&r, 1.0))).unwrap().total;
            opt.step(&net, &l).unwrap();
        }
        let last = reply(&net);
        assert!(last < first * 0.5, "reply loss {first} -> {last}");
    }

    /// Turning the reply head on at a resume: the saved network's tensors
    /// and moments load as saved, the head starts fresh with zero moments,
    /// and the network computes what the saved one did. Turning it off
    /// drops the head's tensors; a plain load of a checkpoint without the
    /// head into a network with one says what is missing.
    #[test]
    fn a_reply_head_is_added_or_dropped_on_resume() {
        let dev = Device::Cpu;
        let dir = tempfile::tempdir().unwrap();
        let (x, p, z, r) = targets(8, 3);
        let net = Net::new(NetShape::tiny(), 5, &dev).unwrap();
        let mut opt = AdamW::new(&net, 1e-2, 1e-4).unwrap();
        for _ in 0..3 {
            let l = net.loss(&x, &p, &z, None).unwrap().total;
            opt.step(&net, &l).unwrap();
        }
        let (m, o) = (dir.path().join("m.safetensors"), dir.path().join("o.safetensors"));
        net.save(&m).unwrap();
        opt.save(&net, &o).unwrap();
        assert!(headed().grows_from(&NetShape::tiny()) && NetShape::tiny().grows_from(&headed()));
        assert!(
            headed().plays_as(&NetShape::tiny())
                && !headed().plays_as(&NetShape {
                    blocks: 2,
                    ..NetShape::tiny()
                })
        );
        let e = Net::load(headed(), &m, &dev).err().unwrap().to_string();
        assert!(e.contains(REPLY_FC_W), "{e}");

        let grown = Net::load_grown(headed(), NetShape::tiny(), &m, &dev).unwrap();
        let saved = net.host_weights().unwrap();
        let loaded = grown.host_weights().unwrap();
        for (name, w) in &saved {
            assert_eq!(&loaded[name], w, "{name}");
        }
        assert!(loaded[REPLY_FC_W].iter().any(|&w| w != 0.0), "fresh random weights");
        let (l0, v0) = net.forward(&x, false).unwrap();
        let (l1, v1) = grown.forward(&x, false).unwrap();
        assert_eq!(l0.to_vec2::<f32>().unwrap(), l1.to_vec2::<f32>().unwrap());
        assert_eq!(v0.to_vec1::<f32>().unwrap(), v1.to_vec1::<f32>().unwrap());
        let mut gopt = AdamW::new(&grown, 1e-2, 1e-4).unwrap();
        assert!(
            gopt.load(&grown, &o, 3).is_err(),
            "a plain load wants the head's moments"
        );
        gopt.load_grown(&grown, NetShape::tiny(), &o, 3).unwrap();
        assert_eq!(gopt.step, 3);
        let (before, after) = (opt.host_moments(&net).unwrap(), gopt.host_moments(&grown).unwrap());
        for (name, (m1, v1)) in &before {
            assert_eq!((&after[name].0, &after[name].1), (m1, v1), "{name}");
        }
        for name in [REPLY_FC_W, REPLY_FC_B] {
            assert!(after[name].0.iter().chain(&after[name].1).all(|&x| x == 0.0), "{name}");
        }
        // It trains on, the head included.
        let rl = |n: &Net| scalar(n.loss(&x, &p, &z, Some((&r, 1.0))).unwrap().reply.as_ref().unwrap());
        let first = rl(&grown);
        for _ in 0..10 {
            let l = grown.loss(&x, &p, &z, Some((&r, 1.0))).unwrap().total;
            gopt.step(&grown, &l).unwrap();
        }
        assert!(rl(&grown) < first);

        // And off again: the rest as saved, the head's tensors dropped.
        grown.save(&m).unwrap();
        gopt.save(&grown, &o).unwrap();
        let dropped = Net::load_grown(NetShape::tiny(), headed(), &m, &dev).unwrap();
        assert!(dropped.reply_fc.is_none());
        let kept = grown.host_weights().unwrap();
        for (name, w) in dropped.host_weights().unwrap() {
            assert_eq!(kept[&name], w, "{name}");
        }
        let mut dopt = AdamW::new(&dropped, 1e-2, 1e-4).unwrap();
        dopt.load_grown(&dropped, headed(), &o, 13).unwrap();
        let (kept, now) = (gopt.host_moments(&grown).unwrap(), dopt.host_moments(&dropped).unwrap());
        assert_eq!(now.len(), kept.len() - 2);
        for (name, mv) in now {
            assert_eq!(kept[&name], mv, "{name}");
        }
    }

    /// A weight matrix grown in both dimensions keeps each old entry at its
    /// (tap, channel) place and cuts new inputs from old outputs.
    #[test]
    fn embedding_places_old_weights_by_tap_and_channel() {
        // 2 taps, 1 → 2 input channels, 1 → 2 output channels.
        let old = [1.0, 2.0];
        let grown = embed_grown("w", &old, &[2, 1], vec![9.0; 8], &[4, 2], 1, 2).unwrap();
        assert_eq!(grown, vec![1.0, 9.0, 0.0, 9.0, 2.0, 9.0, 0.0, 9.0]);
        assert_eq!(
            embed_grown("g", &[3.0], &[1], vec![9.0; 2], &[2], 1, 2).unwrap(),
            vec![3.0, 9.0]
        );
        assert!(embed_grown("w", &[0.0; 4], &[2, 2], vec![0.0; 2], &[2, 1], 1, 2).is_err());
    }

    /// Every tensor, running statistics included, moves to the blend the
    /// moving average asks for, and the trained network is left as it was.
    #[test]
    fn averaging_toward_a_network_blends_every_tensor() {
        let played = Net::new(NetShape::tiny(), 1, &Device::Cpu).unwrap();
        let trained = Net::new(NetShape::tiny(), 2, &Device::Cpu).unwrap();
        let (a, b) = (played.host_weights().unwrap(), trained.host_weights().unwrap());
        played.average_toward(&trained, 0.75).unwrap();
        let c = played.host_weights().unwrap();
        assert_eq!(trained.host_weights().unwrap(), b);
        assert_eq!(c.len(), a.len());
        let mut moved = 0;
        for (name, got) in &c {
            for ((x, y), z) in a[name].iter().zip(&b[name]).zip(got) {
                assert!((z - (0.75 * x + 0.25 * y)).abs() < 1e-6, "{name}: {z} vs {x}, {y}");
                moved += usize::from(x != y);
            }
        }
        assert!(moved > 100, "the two seeds' weights differ");
        played.average_toward(&trained, 0.0).unwrap();
        assert_eq!(played.host_weights().unwrap(), b);
    }

    #[test]
    fn same_seed_same_weights() {
        let weights = |seed| {
            Net::new(NetShape::tiny(), seed, &Device::Cpu)
                .unwrap()
                .host_weights()
                .unwrap()
        };
        let (a, b, c) = (weights(7), weights(7), weights(8));
        assert_eq!(a, b);
        assert_ne!(a["stem.w"], c["stem.w"]);
    }

    /// A few optimizer steps on one fixed batch must lower its loss: the
    /// gradients flow through unfold, batch norm and both heads.
    #[test]
    fn adamw_lowers_the_loss() {
        let dev = Device::Cpu;
        let net = Net::new(NetShape::tiny(), 3, &dev).unwrap();
        let mut opt = AdamW::new(&net, 1e-2, 1e-4).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 16;
        let planes: Vec<f32> = (0..n * 60).map(|_| rng.gen_range(0..2) as f32).collect();
        let x = Tensor::from_vec(planes, (n, 4, 5, 3), &dev).unwrap();
        let mut pol = vec![0f32; n * 5];
        for i in 0..n {
            pol[i * 5 + i % 5] = 1.0;
        }
        let p = Tensor::from_vec(pol, (n, 5), &dev).unwrap();
        let z: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let z = Tensor::from_vec(z, n, &dev).unwrap();
        let first = net.loss(&x, &p, &z, None).unwrap().total.to_scalar::<f32>().unwrap();
        for _ in 0..30 {
            let l = net.loss(&x, &p, &z, None).unwrap().total;
            opt.step(&net, &l).unwrap();
        }
        let last = net.loss(&x, &p, &z, None).unwrap().total.to_scalar::<f32>().unwrap();
        assert!(last < first * 0.5, "loss {first} -> {last}");
        assert_eq!(opt.step, 30);
        // The moments hold values only, no autograd history: a history
        // would chain every step's graph to the next and exhaust memory.
        for (m, s) in &opt.moments {
            assert!(!m.track_op() && !s.track_op());
        }
    }

    /// The CPU unfold op and candle's pad/narrow/cat give the same values
    /// and the same gradients.
    #[test]
    fn unfold_op_matches_the_generic_unfold() {
        let dev = Device::Cpu;
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let (n, h, w, c) = (2, 3, 4, 5);
        let xs: Vec<f32> = (0..n * h * w * c).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let x = Var::from_tensor(&Tensor::from_vec(xs, (n, h, w, c), &dev).unwrap()).unwrap();
        let fast = x.as_tensor().apply_op1(Unfold3 { dims: (n, h, w, c) }).unwrap();
        let p = x.pad_with_zeros(1, 1, 1).unwrap().pad_with_zeros(2, 1, 1).unwrap();
        let mut parts = Vec::new();
        for dy in 0..3 {
            for dx in 0..3 {
                parts.push(p.narrow(1, dy, h).unwrap().narrow(2, dx, w).unwrap());
            }
        }
        let slow = Tensor::cat(&parts, 3).unwrap().reshape((n * h * w, 9 * c)).unwrap();
        assert_eq!(fast.to_vec2::<f32>().unwrap(), slow.to_vec2::<f32>().unwrap());
        let weights: Vec<f32> = (0..n * h * w * 9 * c).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let wt = Tensor::from_vec(weights, (n * h * w, 9 * c), &dev).unwrap();
        let g1 = (fast * &wt).unwrap().sum_all().unwrap().backward().unwrap();
        let g2 = (slow * &wt).unwrap().sum_all().unwrap().backward().unwrap();
        let grad_of_x = |g: candle_core::backprop::GradStore| {
            g.get(x.as_tensor())
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        let (a, b) = (grad_of_x(g1), grad_of_x(g2));
        for (u, v) in a.iter().zip(&b) {
            assert!((u - v).abs() < 1e-5, "{u} vs {v}");
        }
    }

    #[test]
    fn native_conv_computes_the_same_function() {
        let dev = Device::Cpu;
        let mut net = Net::new(NetShape::tiny(), 4, &dev).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let planes: Vec<f32> = (0..6 * 60).map(|_| rng.gen_range(0..2) as f32).collect();
        let x = Tensor::from_vec(planes, (6, 4, 5, 3), &dev).unwrap();
        let (l1, v1) = net.forward(&x, false).unwrap();
        net.native_conv = true;
        let (l2, v2) = net.forward(&x, false).unwrap();
        let d = |a: &Tensor, b: &Tensor| {
            (a - b)
                .unwrap()
                .abs()
                .unwrap()
                .flatten_all()
                .unwrap()
                .max(0)
                .unwrap()
                .to_scalar::<f32>()
                .unwrap()
        };
        assert!(d(&l1, &l2) < 1e-4);
        assert!(d(&v1, &v2) < 1e-5);
    }

    #[test]
    fn save_and_load_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let dev = Device::Cpu;
        let net = Net::new(NetShape::tiny(), 11, &dev).unwrap();
        let path = dir.path().join("w.safetensors");
        net.save(&path).unwrap();
        let back = Net::load(NetShape::tiny(), &path, &dev).unwrap();
        assert_eq!(net.host_weights().unwrap(), back.host_weights().unwrap());
        let mut other = NetShape::tiny();
        other.channels = 4;
        let err = Net::load(other, &path, &dev).err().unwrap().to_string();
        assert!(err.contains("shape"), "{err}");
    }
}
