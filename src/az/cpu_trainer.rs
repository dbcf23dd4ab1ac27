//! Training steps on the CPU without candle: the same network, loss and
//! AdamW as [`super::network`], with the backward pass written out over the
//! same `gemm` calls as the fast inference path.
//!
//! Why: candle's CPU backend spends most of a training step in per-op
//! overhead and strided copies (about 30 GFLOP/s for the 6×64 net at batch
//! 64, `c4sim bench train`); a step here is a dozen large products per
//! layer and a few tight loops. It is checked against candle's autograd
//! (loss, every gradient, an optimizer step) in the tests below, and the
//! trainer copies weights, batch-norm statistics and optimizer moments in
//! and out of the candle network around each training phase, so
//! checkpoints and the GPU path are unchanged.

use super::im2col::{flip3, unfold3};
use super::network::{NetShape, PolicyValueNet};
use super::network::{BN_EPS, DEFAULT_REPLY_WEIGHT, POLICY_FILTERS, REPLY_FC_B, REPLY_FC_W};
use super::optimizer::HostMoments;
use std::collections::HashMap;

const BN_MOMENTUM: f32 = 0.1;

/// `dst[m×n] (+)= lhs · rhs` with explicit strides (row stride, column
/// stride) for each operand, so transposed operands need no copy.
#[allow(clippy::too_many_arguments)]
fn gemm_s(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    accumulate: bool,
    lhs: &[f32],
    lhs_rs: usize,
    lhs_cs: usize,
    rhs: &[f32],
    rhs_rs: usize,
    rhs_cs: usize,
    threads: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(dst.len() >= m * n);
    assert!(lhs.len() > (m - 1) * lhs_rs + (k.max(1) - 1) * lhs_cs || k == 0);
    assert!(rhs.len() > (k.max(1) - 1) * rhs_rs + (n - 1) * rhs_cs || k == 0);
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(0.0);
        }
        return;
    }
    let par = if threads > 1 && m * n * k > 1 << 18 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: bounds of every operand are checked above; `dst` is a
    // `&mut` and cannot alias the inputs.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.as_ptr(),
            lhs_cs as isize,
            lhs_rs as isize,
            rhs.as_ptr(),
            rhs_cs as isize,
            rhs_rs as isize,
            1.0f32,
            1.0f32,
            false,
            false,
            false,
            par,
        );
    }
}

/// One conv + batch-norm layer's parameters (host copies).
struct Layer {
    k: usize,
    cin: usize,
    cout: usize,
    w: Vec<f32>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
    mean: Vec<f32>,
    var: Vec<f32>,
}

/// What the backward pass of a conv + BN layer needs from its forward.
struct LayerCache {
    /// The layer input (k = 1) or its unfolding (k = 3).
    cols: Vec<f32>,
    xhat: Vec<f32>,
    invstd: Vec<f32>,
    /// The output after the activation (ReLU masks are read from it).
    out: Vec<f32>,
}

/// Gradients of one layer.
struct LayerGrad {
    w: Vec<f32>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

impl Layer {
    /// Conv, then batch norm with the batch's statistics (updating the
    /// running ones), on `m` pixels. Returns the cache; `cache.out` holds
    /// the normalised output *before* any activation.
    fn forward(&mut self, x: &[f32], ns: usize, h: usize, w: usize, threads: usize) -> LayerCache {
        let m = ns * h * w;
        let cols = if self.k == 3 {
            let mut c = Vec::new();
            unfold3(x, ns, h, w, self.cin, &mut c);
            c
        } else {
            x[..m * self.cin].to_vec()
        };
        let kk = self.k * self.k * self.cin;
        let co = self.cout;
        let mut y = vec![0f32; m * co];
        gemm_s(m, co, kk, &mut y, false, &cols, kk, 1, &self.w, co, 1, threads);
        let mut mean = vec![0f64; co];
        for row in y.chunks(co) {
            for (a, b) in mean.iter_mut().zip(row) {
                *a += *b as f64;
            }
        }
        for a in &mut mean {
            *a /= m as f64;
        }
        let mut var = vec![0f64; co];
        for row in y.chunks(co) {
            for ((a, b), mu) in var.iter_mut().zip(row).zip(&mean) {
                let d = *b as f64 - mu;
                *a += d * d;
            }
        }
        for a in &mut var {
            *a /= m as f64;
        }
        let invstd: Vec<f32> = var.iter().map(|v| (1.0 / (v + BN_EPS).sqrt()) as f32).collect();
        let mut xhat = y;
        let mut out = vec![0f32; m * co];
        for (xr, or) in xhat.chunks_mut(co).zip(out.chunks_mut(co)) {
            for c in 0..co {
                let xh = (xr[c] - mean[c] as f32) * invstd[c];
                xr[c] = xh;
                or[c] = self.gamma[c] * xh + self.beta[c];
            }
        }
        let unbias = m as f64 / (m as f64 - 1.0).max(1.0);
        for c in 0..co {
            self.mean[c] = self.mean[c] * (1.0 - BN_MOMENTUM) + mean[c] as f32 * BN_MOMENTUM;
            self.var[c] = self.var[c] * (1.0 - BN_MOMENTUM) + (var[c] * unbias) as f32 * BN_MOMENTUM;
        }
        LayerCache {
            cols,
            xhat,
            invstd,
            out,
        }
    }

    /// From the gradient of the normalised output (activation already
    /// applied by the caller), the parameter gradients and, when asked,
    /// the gradient of the layer's input.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        c: &LayerCache,
        dout: &[f32],
        ns: usize,
        h: usize,
        w: usize,
        want_dx: bool,
        threads: usize,
    ) -> (LayerGrad, Option<Vec<f32>>) {
        let m = ns * h * w;
        let co = self.cout;
        let mut dgamma = vec![0f64; co];
        let mut dbeta = vec![0f64; co];
        for (dr, xr) in dout.chunks(co).zip(c.xhat.chunks(co)) {
            for k in 0..co {
                dgamma[k] += (dr[k] * xr[k]) as f64;
                dbeta[k] += dr[k] as f64;
            }
        }
        let mut dy = vec![0f32; m * co];
        let mf = m as f32;
        for ((yr, dr), xr) in dy.chunks_mut(co).zip(dout.chunks(co)).zip(c.xhat.chunks(co)) {
            for k in 0..co {
                let g = self.gamma[k] * c.invstd[k] / mf;
                yr[k] = g * (mf * dr[k] - dbeta[k] as f32 - xr[k] * dgamma[k] as f32);
            }
        }
        let kk = self.k * self.k * self.cin;
        // dW = colsᵀ · dy
        let mut dw = vec![0f32; kk * co];
        gemm_s(kk, co, m, &mut dw, false, &c.cols, 1, kk, &dy, co, 1, threads);
        let dx = want_dx.then(|| {
            let ci = self.cin;
            let mut dx = vec![0f32; m * ci];
            if self.k == 3 {
                // dx = unfold3(dy) · flip3(W): the transposed convolution
                // as one product (see `flip3`), not fold3(dy · Wᵀ).
                let mut u = Vec::new();
                unfold3(&dy, ns, h, w, co, &mut u);
                let wf = flip3(&self.w, ci, co);
                gemm_s(m, ci, 9 * co, &mut dx, false, &u, 9 * co, 1, &wf, ci, 1, threads);
            } else {
                // dx = dy · Wᵀ
                gemm_s(m, ci, co, &mut dx, false, &dy, co, 1, &self.w, 1, co, threads);
            }
            dx
        });
        (
            LayerGrad {
                w: dw,
                gamma: dgamma.iter().map(|&x| x as f32).collect(),
                beta: dbeta.iter().map(|&x| x as f32).collect(),
            },
            dx,
        )
    }
}

fn relu_inplace(v: &mut [f32]) {
    for x in v {
        *x = x.max(0.0);
    }
}

/// Softmax cross-entropy of each row of `logits` (`cols` wide) against the
/// same row of `targets` (a distribution, or a zero row that counts
/// nothing): the sum over the rows, and the gradient of `weight × sum / div`
/// with respect to the logits.
fn softmax_xent(logits: &[f32], targets: &[f32], cols: usize, weight: f32, div: f32) -> (f64, Vec<f32>) {
    let mut d = vec![0f32; logits.len()];
    let mut loss = 0f64;
    for ((lr, tr), dr) in logits.chunks(cols).zip(targets.chunks(cols)).zip(d.chunks_mut(cols)) {
        let mx = lr.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        let se: f32 = lr.iter().map(|l| (l - mx).exp()).sum();
        let lse = mx + se.ln();
        let tsum: f32 = tr.iter().sum();
        for c in 0..cols {
            loss -= (tr[c] * (lr[c] - lse)) as f64;
            dr[c] = weight * (tsum * (lr[c] - lse).exp() - tr[c]) / div;
        }
    }
    (loss, d)
}

/// A conv layer's gradients into `grads` under the layer's names.
fn put_layer(grads: &mut HashMap<String, Vec<f32>>, name: &str, lg: LayerGrad) {
    grads.insert(format!("{name}.w"), lg.w);
    grads.insert(format!("{name}.gamma"), lg.gamma);
    grads.insert(format!("{name}.beta"), lg.beta);
}

/// Zeroes `d` where the activation `out` was clipped by ReLU.
fn relu_back(d: &mut [f32], out: &[f32]) {
    for (g, o) in d.iter_mut().zip(out) {
        if *o <= 0.0 {
            *g = 0.0;
        }
    }
}

/// The network and AdamW state as host vectors, by checkpoint name.
pub struct CpuTrainer {
    shape: NetShape,
    /// Layers in order: stem, blocks (conv1, conv2)…, policy conv, value conv.
    layers: Vec<(String, Layer)>,
    /// Fully connected tensors by name.
    fc: HashMap<String, Vec<f32>>,
    /// AdamW moments by trained-tensor name.
    m: HashMap<String, Vec<f32>>,
    v: HashMap<String, Vec<f32>>,
    pub step: u64,
    pub lr: f32,
    pub weight_decay: f32,
    pub threads: usize,
    /// How much the value loss's gradient counts against the policy's (1 by
    /// default, as in the trainer). 0 learns the policy alone: the value
    /// loss reaches no weight and the value head is frozen (no step, no
    /// weight decay), so a fine-tune on new policy targets changes the
    /// values only through the shared tower (`bench supervised
    /// --value-weight`). The reported value loss is unweighted.
    pub value_weight: f32,
    /// The reply head's weight in the loss (`optimizer.reply_weight`; with
    /// a reply head only).
    pub reply_weight: f32,
}

/// Loss values of one step.
#[derive(Clone, Copy, Debug)]
pub struct StepLoss {
    pub policy: f32,
    pub value: f32,
    /// The reply head's cross-entropy per sample with a reply target,
    /// unweighted (as [`super::network::PolicyValueNet::loss`] reports it); `None`
    /// without the head or without targets in the batch.
    pub reply: Option<f32>,
}

const FC: [&str; 6] = [
    "policy.fc.w",
    "policy.fc.b",
    "value.fc1.w",
    "value.fc1.b",
    "value.fc2.w",
    "value.fc2.b",
];

impl CpuTrainer {
    /// Copies the network's tensors and the optimizer's moments (by name;
    /// missing moments start at zero).
    pub fn from_net(
        net: &PolicyValueNet,
        moments: &HostMoments,
        step: u64,
        lr: f32,
        weight_decay: f32,
        threads: usize,
    ) -> candle_core::Result<Self> {
        let w = net.host_weights()?;
        let s = net.shape;
        let c = s.channels;
        let mut names: Vec<(String, usize, usize, usize)> = vec![("stem".into(), 3, super::encode::PLANES, c)];
        for i in 0..s.blocks {
            names.push((format!("block{i}.conv1"), 3, c, c));
            names.push((format!("block{i}.conv2"), 3, c, c));
        }
        names.push(("policy.conv".into(), 1, c, POLICY_FILTERS));
        names.push(("value.conv".into(), 1, c, 1));
        let get = |n: String| w[&n].clone();
        let layers = names
            .into_iter()
            .map(|(p, k, cin, cout)| {
                let l = Layer {
                    k,
                    cin,
                    cout,
                    w: get(format!("{p}.w")),
                    gamma: get(format!("{p}.gamma")),
                    beta: get(format!("{p}.beta")),
                    mean: get(format!("{p}.running_mean")),
                    var: get(format!("{p}.running_var")),
                };
                (p, l)
            })
            .collect();
        let fc = Self::fc_names(s).map(|n| (n.to_string(), w[n].clone())).collect();
        let mut t = CpuTrainer {
            shape: s,
            layers,
            fc,
            m: HashMap::new(),
            v: HashMap::new(),
            step,
            lr,
            weight_decay,
            threads: threads.max(1),
            value_weight: 1.0,
            reply_weight: DEFAULT_REPLY_WEIGHT as f32,
        };
        for name in t.trained_names() {
            let len = t.param(&name).len();
            let (m, v) = moments
                .get(&name)
                .cloned()
                .unwrap_or_else(|| (vec![0.0; len], vec![0.0; len]));
            t.m.insert(name.clone(), m);
            t.v.insert(name, v);
        }
        Ok(t)
    }

    /// Names of the trained tensors.
    pub fn trained_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (p, _) in &self.layers {
            for s in ["w", "gamma", "beta"] {
                v.push(format!("{p}.{s}"));
            }
        }
        v.extend(Self::fc_names(self.shape).map(str::to_string));
        v
    }

    /// The dense layers' tensors of a network of `shape`.
    fn fc_names(shape: NetShape) -> impl Iterator<Item = &'static str> {
        let reply: &[&str] = if shape.reply_head {
            &[REPLY_FC_W, REPLY_FC_B]
        } else {
            &[]
        };
        FC.iter().chain(reply).copied()
    }

    fn param(&self, name: &str) -> &Vec<f32> {
        if let Some(x) = self.fc.get(name) {
            return x;
        }
        let (p, s) = name.rsplit_once('.').expect("a dotted name");
        let l = &self.layers.iter().find(|(n, _)| n == p).expect("a layer").1;
        match s {
            "w" => &l.w,
            "gamma" => &l.gamma,
            "beta" => &l.beta,
            "running_mean" => &l.mean,
            _ => &l.var,
        }
    }

    fn param_mut(&mut self, name: &str) -> &mut Vec<f32> {
        if self.fc.contains_key(name) {
            return self.fc.get_mut(name).expect("checked");
        }
        let (p, s) = name.rsplit_once('.').expect("a dotted name");
        let l = &mut self.layers.iter_mut().find(|(n, _)| n == p).expect("a layer").1;
        match s {
            "w" => &mut l.w,
            "gamma" => &mut l.gamma,
            "beta" => &mut l.beta,
            "running_mean" => &mut l.mean,
            _ => &mut l.var,
        }
    }

    /// Every tensor (trained and running statistics) by checkpoint name.
    pub fn weights(&self) -> HashMap<String, Vec<f32>> {
        let mut out = HashMap::new();
        for (p, l) in &self.layers {
            out.insert(format!("{p}.w"), l.w.clone());
            out.insert(format!("{p}.gamma"), l.gamma.clone());
            out.insert(format!("{p}.beta"), l.beta.clone());
            out.insert(format!("{p}.running_mean"), l.mean.clone());
            out.insert(format!("{p}.running_var"), l.var.clone());
        }
        for (k, v) in &self.fc {
            out.insert(k.clone(), v.clone());
        }
        out
    }

    /// The AdamW moments by trained-tensor name.
    pub fn moments(&self) -> HostMoments {
        self.trained_names()
            .into_iter()
            .map(|n| {
                let mv = (self.m[&n].clone(), self.v[&n].clone());
                (n, mv)
            })
            .collect()
    }

    /// Loss and gradients of one batch (`planes`: `n·H·W·3`, `policy`:
    /// `n·cols`, `value`: `n`, `reply`: `n·cols` reply targets, zero rows
    /// for none), updating the batch-norm running statistics as candle's
    /// training forward does. The reply head is in the loss when there is
    /// one and the batch has a reply target; otherwise its tensors get no
    /// gradient (and no step, as in candle, where they are then outside
    /// the loss's graph). Layer by layer: the tower forward, each head
    /// forward, the losses, each head backward, the tower backward.
    pub fn gradients(
        &mut self,
        planes: &[f32],
        policy: &[f32],
        value: &[f32],
        reply: Option<&[f32]>,
        n: usize,
    ) -> (StepLoss, HashMap<String, Vec<f32>>) {
        let (h, w, cols) = (self.shape.rows, self.shape.cols, self.shape.cols);
        let (hw, th, nl) = (h * w, self.threads, self.layers.len());
        let (caches, block_out, trunk) = self.tower_forward(planes, n);
        // Policy head, and the reply head on the same features.
        let mut pc = self.layers[nl - 2].1.forward(&trunk, n, h, w, th);
        relu_inplace(&mut pc.out);
        let pin = POLICY_FILTERS * hw;
        let logits = self.dense_forward(&pc.out, n, pin, cols, "policy.fc.w", "policy.fc.b");
        let reply = reply.filter(|r| self.shape.reply_head && r.iter().any(|&x| x != 0.0));
        let reply_logits = reply.map(|_| self.dense_forward(&pc.out, n, pin, cols, REPLY_FC_W, REPLY_FC_B));
        // Value head.
        let mut vc = self.layers[nl - 1].1.forward(&trunk, n, h, w, th);
        relu_inplace(&mut vc.out);
        let vh = self.shape.value_hidden;
        let mut hid = self.dense_forward(&vc.out, n, hw, vh, "value.fc1.w", "value.fc1.b");
        relu_inplace(&mut hid);
        let w2 = &self.fc["value.fc2.w"];
        let b2 = self.fc["value.fc2.b"][0];
        let vout: Vec<f32> = hid
            .chunks(vh)
            .map(|r| (r.iter().zip(w2).map(|(a, b)| a * b).sum::<f32>() + b2).tanh())
            .collect();

        // Losses and their gradients.
        let nf = n as f32;
        let (pl, dlogits) = softmax_xent(&logits, policy, cols, 1.0, nf);
        let reply_grad = reply.zip(reply_logits).map(|(targets, rl)| {
            let (sum, d) = softmax_xent(&rl, targets, cols, self.reply_weight, nf);
            let with_target = targets.chunks(cols).filter(|t| t.iter().sum::<f32>() > 0.0).count();
            ((sum / with_target.max(1) as f64) as f32, d)
        });
        let (vl, dz) = self.value_loss(&vout, value);
        let loss = StepLoss {
            policy: (pl / n as f64) as f32,
            value: (vl / n as f64) as f32,
            reply: reply_grad.as_ref().map(|(l, _)| *l),
        };
        let mut grads: HashMap<String, Vec<f32>> = HashMap::new();

        // Policy head backward; the reply head's gradient joins the policy
        // FC's in the shared features.
        let mut dp = vec![0f32; n * pin];
        let (dims, policy_fc) = ((n, pin, cols), ("policy.fc.w", "policy.fc.b"));
        self.dense_backward(&pc.out, &dlogits, dims, policy_fc, (&mut dp, false), &mut grads);
        if let Some((_, drl)) = &reply_grad {
            let reply_fc = (REPLY_FC_W, REPLY_FC_B);
            self.dense_backward(&pc.out, drl, dims, reply_fc, (&mut dp, true), &mut grads);
        }
        relu_back(&mut dp, &pc.out);
        let (pg, dtrunk_p) = self.layers[nl - 2].1.backward(&pc, &dp, n, h, w, true, th);
        // Value head backward.
        let dhid = self.value_fc2_backward(&hid, &dz, &mut grads);
        let mut dv = vec![0f32; n * hw];
        let value_fc = ("value.fc1.w", "value.fc1.b");
        self.dense_backward(&vc.out, &dhid, (n, hw, vh), value_fc, (&mut dv, false), &mut grads);
        relu_back(&mut dv, &vc.out);
        let (vg, dtrunk_v) = self.layers[nl - 1].1.backward(&vc, &dv, n, h, w, true, th);
        let dx: Vec<f32> = dtrunk_p
            .expect("asked")
            .iter()
            .zip(dtrunk_v.expect("asked"))
            .map(|(a, b)| a + b)
            .collect();
        put_layer(&mut grads, &self.layers[nl - 2].0, pg);
        put_layer(&mut grads, &self.layers[nl - 1].0, vg);
        self.tower_backward(&caches, &block_out, dx, n, &mut grads);
        (loss, grads)
    }

    /// The tower forward: the stem, then each residual block (two convs,
    /// the skip added before the second ReLU). Returns every conv's cache
    /// (stem first), each block's output after its ReLU, and the trunk.
    fn tower_forward(&mut self, planes: &[f32], n: usize) -> (Vec<LayerCache>, Vec<Vec<f32>>, Vec<f32>) {
        let (h, w, th) = (self.shape.rows, self.shape.cols, self.threads);
        let blocks = self.shape.blocks;
        let mut caches: Vec<LayerCache> = Vec::with_capacity(self.layers.len());
        let mut c0 = self.layers[0].1.forward(planes, n, h, w, th);
        relu_inplace(&mut c0.out);
        let mut x = c0.out.clone();
        caches.push(c0);
        // Per block: the block input (for the skip) and the output after ReLU.
        let mut block_out: Vec<Vec<f32>> = Vec::with_capacity(blocks);
        for b in 0..blocks {
            let mut c1 = self.layers[1 + 2 * b].1.forward(&x, n, h, w, th);
            relu_inplace(&mut c1.out);
            let mut c2 = self.layers[2 + 2 * b].1.forward(&c1.out, n, h, w, th);
            for (o, s) in c2.out.iter_mut().zip(&x) {
                *o += s;
            }
            relu_inplace(&mut c2.out);
            x = c2.out.clone();
            caches.push(c1);
            caches.push(c2);
            block_out.push(x.clone());
        }
        (caches, block_out, x)
    }

    /// The tower backward from `dx`, the loss's gradient at the trunk:
    /// each block from the last, then the stem; the convs' gradients go
    /// into `grads`.
    fn tower_backward(
        &self,
        caches: &[LayerCache],
        block_out: &[Vec<f32>],
        mut dx: Vec<f32>,
        n: usize,
        grads: &mut HashMap<String, Vec<f32>>,
    ) {
        let (h, w, th) = (self.shape.rows, self.shape.cols, self.threads);
        for b in (0..self.shape.blocks).rev() {
            relu_back(&mut dx, &block_out[b]);
            let c2 = &caches[2 + 2 * b];
            let (g2, d1) = self.layers[2 + 2 * b].1.backward(c2, &dx, n, h, w, true, th);
            let mut d1 = d1.expect("asked");
            let c1 = &caches[1 + 2 * b];
            relu_back(&mut d1, &c1.out);
            let (g1, dskip) = self.layers[1 + 2 * b].1.backward(c1, &d1, n, h, w, true, th);
            for (a, b) in dx.iter_mut().zip(dskip.expect("asked")) {
                *a += b;
            }
            put_layer(grads, &self.layers[2 + 2 * b].0, g2);
            put_layer(grads, &self.layers[1 + 2 * b].0, g1);
        }
        relu_back(&mut dx, &caches[0].out);
        let (g0, _) = self.layers[0].1.backward(&caches[0], &dx, n, h, w, false, th);
        put_layer(grads, "stem", g0);
    }

    /// A dense layer `x·W + b` on `n` rows of `k` inputs, `out` outputs,
    /// with the tensors named `w` and `b`.
    fn dense_forward(&self, x: &[f32], n: usize, k: usize, out: usize, w: &str, b: &str) -> Vec<f32> {
        let mut y = vec![0f32; n * out];
        for r in y.chunks_mut(out) {
            r.copy_from_slice(&self.fc[b]);
        }
        gemm_s(n, out, k, &mut y, true, x, k, 1, &self.fc[w], out, 1, self.threads);
        y
    }

    /// The backward of [`CpuTrainer::dense_forward`] with input `x` and
    /// output gradient `dy` (`(n, k, out)` as there): the gradients of
    /// `W` and `b` go into `grads` under their names, and `x`'s into `dx`,
    /// added to what it holds when `accumulate`, else written.
    fn dense_backward(
        &self,
        x: &[f32],
        dy: &[f32],
        (n, k, out): (usize, usize, usize),
        (w, b): (&str, &str),
        (dx, accumulate): (&mut [f32], bool),
        grads: &mut HashMap<String, Vec<f32>>,
    ) {
        let th = self.threads;
        let mut g = vec![0f32; k * out];
        gemm_s(k, out, n, &mut g, false, x, 1, k, dy, out, 1, th);
        grads.insert(w.into(), g);
        grads.insert(b.into(), (0..out).map(|c| dy.chunks(out).map(|r| r[c]).sum()).collect());
        gemm_s(n, k, out, dx, accumulate, dy, out, 1, &self.fc[w], 1, out, th);
    }

    /// The value loss's sum of squares over the batch, and its gradient at
    /// the value head's last pre-activation (through the tanh).
    fn value_loss(&self, vout: &[f32], value: &[f32]) -> (f64, Vec<f32>) {
        let nf = vout.len() as f32;
        let mut vl = 0f64;
        let mut dz = vec![0f32; vout.len()];
        for i in 0..vout.len() {
            let d = vout[i] - value[i];
            vl += (d * d) as f64;
            dz[i] = self.value_weight * 2.0 * d / nf * (1.0 - vout[i] * vout[i]);
        }
        (vl, dz)
    }

    /// The value head's last dense layer backward from `dz`: its gradients
    /// into `grads`, and the gradient at the hidden layer `hid` (after its ReLU's
    /// backward).
    fn value_fc2_backward(&self, hid: &[f32], dz: &[f32], grads: &mut HashMap<String, Vec<f32>>) -> Vec<f32> {
        let vh = self.shape.value_hidden;
        let w2 = &self.fc["value.fc2.w"];
        let mut dw2 = vec![0f32; vh];
        for (r, d) in hid.chunks(vh).zip(dz) {
            for (a, b) in dw2.iter_mut().zip(r) {
                *a += b * d;
            }
        }
        grads.insert("value.fc2.w".into(), dw2);
        grads.insert("value.fc2.b".into(), vec![dz.iter().sum()]);
        let mut dhid = vec![0f32; hid.len()];
        for (r, d) in dhid.chunks_mut(vh).zip(dz) {
            for (a, b) in r.iter_mut().zip(w2) {
                *a = b * d;
            }
        }
        relu_back(&mut dhid, hid);
        dhid
    }

    /// One AdamW step on a batch, as [`super::optimizer::AdamW::step`] does it.
    pub fn step(&mut self, planes: &[f32], policy: &[f32], value: &[f32], reply: Option<&[f32]>, n: usize) -> StepLoss {
        let (loss, grads) = self.gradients(planes, policy, value, reply, n);
        self.apply(&grads);
        loss
    }

    /// The AdamW update from gradients by trained-tensor name; a tensor
    /// without one is left as it is (as candle's optimizer leaves a tensor
    /// outside the loss).
    pub fn apply(&mut self, grads: &HashMap<String, Vec<f32>>) {
        self.step += 1;
        let t = self.step as i32;
        let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
        let bc1 = (1.0 - b1.powi(t)) as f32;
        let bc2 = (1.0 - b2.powi(t)) as f32;
        let (lr, wd) = (self.lr, self.weight_decay);
        for name in self.trained_names() {
            if self.value_weight == 0.0 && name.starts_with("value.") {
                continue;
            }
            let Some(g) = grads.get(&name) else {
                continue;
            };
            let mut m = std::mem::take(self.m.get_mut(&name).expect("moment"));
            let mut v = std::mem::take(self.v.get_mut(&name).expect("moment"));
            let decay = if name.ends_with(".w") { 1.0 - lr * wd } else { 1.0 };
            let p = self.param_mut(&name);
            for i in 0..p.len() {
                m[i] = b1 as f32 * m[i] + (1.0 - b1 as f32) * g[i];
                v[i] = b2 as f32 * v[i] + (1.0 - b2 as f32) * g[i] * g[i];
                let upd = (m[i] / bc1) / ((v[i] / bc2).sqrt() + eps as f32);
                p[i] = p[i] * decay - lr * upd;
            }
            self.m.insert(name.clone(), m);
            self.v.insert(name, v);
        }
    }
}

#[cfg(test)]
mod tests;
