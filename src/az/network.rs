//! The policy–value network in candle: a residual tower with a policy head
//! and a value head (docs/alphazero.md, "Network"), optionally a reply head (the
//! opponent's next move, an auxiliary training target that play never
//! reads); [`super::optimizer`] holds the AdamW optimizer that trains it.
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

/// What [`PolicyValueNet::loss`] computes: the total to step on, and its parts for the
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
pub struct PolicyValueNet {
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

impl PolicyValueNet {
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
        Ok(PolicyValueNet {
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
    /// The reply head, if any, is not computed: see [`PolicyValueNet::forward_heads`].
    pub fn forward(&self, x: &Tensor, train: bool) -> Result<(Tensor, Tensor)> {
        let (logits, v, _) = self.forward_heads(x, train, false)?;
        Ok((logits, v))
    }

    /// [`PolicyValueNet::forward`], and with `reply` the reply head's logits
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

    /// [`PolicyValueNet::features`] with candle's `conv2d` on channels-first tensors.
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

    /// The loss of docs/alphazero.md: policy cross-entropy against the visit
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

    /// Loads weights saved by [`PolicyValueNet::save`] into a network of `shape`;
    /// every tensor must be present with the right shape.
    pub fn load(shape: NetShape, path: &Path, device: &Device) -> Result<Self> {
        let net = PolicyValueNet::new(shape, 0, device)?;
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
        let net = PolicyValueNet::new(shape, 0x6772_6f77, device)?;
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

    /// Copies every tensor from host vectors by name (see [`PolicyValueNet::host_weights`]).
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
    pub fn average_toward(&self, trained: &PolicyValueNet, keep: f64) -> Result<()> {
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
    pub fn duplicate(&self, device: &Device) -> Result<PolicyValueNet> {
        let copy = PolicyValueNet::new(self.shape, 0, device)?;
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
pub(super) fn is_reply(name: &str) -> bool {
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
mod tests;
