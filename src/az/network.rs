//! The policy–value network in candle: a residual tower with a policy head
//! and a value head (alphazero.md, "Network"), and the AdamW optimizer that
//! trains it.
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
}

impl NetShape {
    /// Whether weights trained for `from` can seed this shape by adding
    /// residual blocks, channels, or both (same board and value head; at
    /// least one of the two larger, neither smaller).
    pub fn grows_from(&self, from: &NetShape) -> bool {
        self != from
            && self.blocks >= from.blocks
            && self.channels >= from.channels
            && (self.rows, self.cols, self.value_hidden) == (from.rows, from.cols, from.value_hidden)
    }

    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// Multiply–adds of one forward pass for one position (for GFLOP/s figures).
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
        out
    }

    /// `x`: `[N, H, W, 3]` planes → (policy logits `[N, cols]`, values `[N]`).
    pub fn forward(&self, x: &Tensor, train: bool) -> Result<(Tensor, Tensor)> {
        if self.native_conv {
            return self.forward_native(x, train);
        }
        let h = self.tower(x, |c, t| c.forward(t, train))?;
        let n = h.dim(0)?;
        let hw = self.shape.cells();
        let p = self
            .p_conv
            .forward(&h, train)?
            .relu()?
            .reshape((n, hw * POLICY_FILTERS))?;
        let v = self.v_conv.forward(&h, train)?.relu()?.reshape((n, hw))?;
        self.dense_heads(&p, &v, n)
    }

    /// [`Net::forward`] with candle's `conv2d` on channels-first tensors.
    fn forward_native(&self, x: &Tensor, train: bool) -> Result<(Tensor, Tensor)> {
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
        self.dense_heads(&p, &v, n)
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
    /// by the optimizer). Returns (total, policy, value).
    pub fn loss(&self, x: &Tensor, policy: &Tensor, value: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
        let (logits, v) = self.forward(x, true)?;
        let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
        let pl = (policy * logp)?.sum(1)?.mean(0)?.neg()?;
        let vl = (v - value)?.sqr()?.mean(0)?;
        Ok(((&pl + &vl)?, pl, vl))
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
    /// saved moments sit where the saved weights do, and the new blocks'
    /// and channels' moments start at zero.
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
            // A grown network's new blocks have no saved moments: they start at zero.
            if grown_from.is_some() && name.starts_with("block") && !saved.contains_key(&format!("m.{name}")) {
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
mod tests {
    use super::*;

    fn small() -> NetShape {
        NetShape {
            rows: 4,
            cols: 5,
            blocks: 1,
            channels: 8,
            value_hidden: 16,
        }
    }

    #[test]
    fn shapes_and_ranges() {
        let net = Net::new(small(), 1, &Device::Cpu).unwrap();
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
        let from = small();
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
            let (l, _, _) = net.loss(&x, &p, &z).unwrap();
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
            let before = grown.loss(&x, &p, &z).unwrap().0.to_scalar::<f32>().unwrap();
            for _ in 0..5 {
                let (l, _, _) = grown.loss(&x, &p, &z).unwrap();
                gopt.step(&grown, &l).unwrap();
            }
            assert!(grown.loss(&x, &p, &z).unwrap().0.to_scalar::<f32>().unwrap() < before);
            if shape.channels > from.channels {
                assert_ne!(from_new(&grown), 0.0, "the new channels learn");
            }
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
        let played = Net::new(small(), 1, &Device::Cpu).unwrap();
        let trained = Net::new(small(), 2, &Device::Cpu).unwrap();
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
        let a = Net::new(small(), 7, &Device::Cpu).unwrap().host_weights().unwrap();
        let b = Net::new(small(), 7, &Device::Cpu).unwrap().host_weights().unwrap();
        let c = Net::new(small(), 8, &Device::Cpu).unwrap().host_weights().unwrap();
        assert_eq!(a, b);
        assert_ne!(a["stem.w"], c["stem.w"]);
    }

    /// A few optimizer steps on one fixed batch must lower its loss: the
    /// gradients flow through unfold, batch norm and both heads.
    #[test]
    fn adamw_lowers_the_loss() {
        let dev = Device::Cpu;
        let net = Net::new(small(), 3, &dev).unwrap();
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
        let first = net.loss(&x, &p, &z).unwrap().0.to_scalar::<f32>().unwrap();
        for _ in 0..30 {
            let (l, _, _) = net.loss(&x, &p, &z).unwrap();
            opt.step(&net, &l).unwrap();
        }
        let last = net.loss(&x, &p, &z).unwrap().0.to_scalar::<f32>().unwrap();
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
        let mut net = Net::new(small(), 4, &dev).unwrap();
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
        let net = Net::new(small(), 11, &dev).unwrap();
        let path = dir.path().join("w.safetensors");
        net.save(&path).unwrap();
        let back = Net::load(small(), &path, &dev).unwrap();
        assert_eq!(net.host_weights().unwrap(), back.host_weights().unwrap());
        let mut other = small();
        other.channels = 4;
        let err = Net::load(other, &path, &dev).err().unwrap().to_string();
        assert!(err.contains("shape"), "{err}");
    }
}
