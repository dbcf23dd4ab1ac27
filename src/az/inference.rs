//! Network inference for search: a fast CPU path, the candle path for GPUs,
//! and a cache of recent outputs keyed by position.
//!
//! The fast CPU path ([`Folded`]) exists because search calls the network
//! on small batches thousands of times a second, and candle's CPU backend
//! spends most of such a call in per-op overhead and small kernels. It
//! computes exactly the network of [`super::network`] in evaluation mode,
//! with three changes that do not change the result:
//! - batch norm is folded into the convolution weights and a bias
//!   (`w·γ/√(σ²+ε)`, `β − μ·γ/√(σ²+ε)`), so each layer is one product plus a bias;
//! - each 3×3 convolution unfolds its input (im2col) and runs one `gemm`
//!   (the matmul candle itself uses) over the whole chunk of positions; the
//!   residual add is folded into the product's initial value;
//! - buffers are reused between calls, and `gemm` runs single-threaded:
//!   throughput comes from one inference worker per core, each with its own
//!   games, not from threads inside small ops.

use super::im2col::unfold3;
use super::network::{NetShape, PolicyValueNet, BN_EPS, POLICY_FILTERS};
use crate::game::MAX_SIDE;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Something that turns encoded positions into policy logits and values.
pub trait Evaluate: Send {
    /// `planes`: `n` positions of `rows·cols·3` floats. Writes `n·cols`
    /// logits and `n` values (from the mover's view, in [−1, 1]).
    fn evaluate(&mut self, planes: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>);
}

/// A convolution with batch norm folded in: `[k·k·cin, cout]` and a bias.
#[derive(Clone, Debug)]
struct FConv {
    k: usize,
    cin: usize,
    cout: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

impl FConv {
    fn fold(w: &HashMap<String, Vec<f32>>, prefix: &str, k: usize, cin: usize, cout: usize) -> FConv {
        let get = |s: &str| &w[&format!("{prefix}.{s}")];
        let (gamma, beta, mean, var) = (get("gamma"), get("beta"), get("running_mean"), get("running_var"));
        let scale: Vec<f32> = (0..cout)
            .map(|o| gamma[o] / (var[o] as f64 + BN_EPS).sqrt() as f32)
            .collect();
        let mut fw = get("w").clone();
        for row in fw.chunks_mut(cout) {
            for (x, s) in row.iter_mut().zip(&scale) {
                *x *= s;
            }
        }
        let b = (0..cout).map(|o| beta[o] - mean[o] * scale[o]).collect();
        FConv { k, cin, cout, w: fw, b }
    }
}

/// The network with batch norm folded, on plain `Vec<f32>`s; immutable,
/// shared between inference workers through an `Arc`.
#[derive(Clone, Debug)]
pub struct Folded {
    pub shape: NetShape,
    stem: FConv,
    blocks: Vec<(FConv, FConv)>,
    p_conv: FConv,
    p_fc_w: Vec<f32>,
    p_fc_b: Vec<f32>,
    v_conv: FConv,
    v_fc1_w: Vec<f32>,
    v_fc1_b: Vec<f32>,
    v_fc2_w: Vec<f32>,
    v_fc2_b: f32,
}

/// Positions per im2col chunk: large enough for an efficient product,
/// small enough that the unfolded chunk stays in cache.
const CHUNK: usize = 32;

/// `dst[m×n] = init(dst) + lhs[m×k] · rhs[k×n]`, all row-major.
fn matmul_acc(m: usize, n: usize, k: usize, dst: &mut [f32], lhs: &[f32], rhs: &[f32]) {
    assert!(dst.len() >= m * n && lhs.len() >= m * k && rhs.len() >= k * n);
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the slices are at least as long as the strides below address
    // (checked above), and `dst` does not alias the inputs (a `&mut`).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            true,
            lhs.as_ptr(),
            1,
            k as isize,
            rhs.as_ptr(),
            1,
            n as isize,
            1.0f32,
            1.0f32,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Reusable buffers of one inference worker.
#[derive(Default)]
pub struct Scratch {
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    cols: Vec<f32>,
    head: Vec<f32>,
    hidden: Vec<f32>,
}

impl Folded {
    pub fn from_net(net: &PolicyValueNet) -> candle_core::Result<Folded> {
        Ok(Self::from_weights(net.shape, &net.host_weights()?))
    }

    /// From the tensors of a [`PolicyValueNet`] as host floats.
    pub fn from_weights(shape: NetShape, w: &HashMap<String, Vec<f32>>) -> Folded {
        let c = shape.channels;
        Folded {
            shape,
            stem: FConv::fold(w, "stem", 3, super::encode::PLANES, c),
            blocks: (0..shape.blocks)
                .map(|i| {
                    (
                        FConv::fold(w, &format!("block{i}.conv1"), 3, c, c),
                        FConv::fold(w, &format!("block{i}.conv2"), 3, c, c),
                    )
                })
                .collect(),
            p_conv: FConv::fold(w, "policy.conv", 1, c, POLICY_FILTERS),
            p_fc_w: w["policy.fc.w"].clone(),
            p_fc_b: w["policy.fc.b"].clone(),
            v_conv: FConv::fold(w, "value.conv", 1, c, 1),
            v_fc1_w: w["value.fc1.w"].clone(),
            v_fc1_b: w["value.fc1.b"].clone(),
            v_fc2_w: w["value.fc2.w"].clone(),
            v_fc2_b: w["value.fc2.b"][0],
        }
    }

    /// `out = conv(x) + bias (+ skip)`, then ReLU; `m` = pixels in the chunk.
    fn conv(&self, l: &FConv, x: &[f32], ns: usize, skip: Option<&[f32]>, cols: &mut Vec<f32>, out: &mut Vec<f32>) {
        let m = ns * self.shape.cells();
        out.clear();
        out.reserve(m * l.cout);
        match skip {
            Some(s) => {
                for srow in s[..m * l.cout].chunks(l.cout) {
                    out.extend(srow.iter().zip(&l.b).map(|(a, b)| a + b));
                }
            }
            None => {
                for _ in 0..m {
                    out.extend_from_slice(&l.b);
                }
            }
        }
        if l.k == 3 {
            unfold3(x, ns, self.shape.rows, self.shape.cols, l.cin, cols);
            matmul_acc(m, l.cout, 9 * l.cin, out, cols, &l.w);
        } else {
            matmul_acc(m, l.cout, l.cin, out, x, &l.w);
        }
        for v in out.iter_mut() {
            *v = v.max(0.0);
        }
    }

    /// Forward pass for `n` positions; see [`Evaluate::evaluate`].
    pub fn forward(&self, planes: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>, s: &mut Scratch) {
        let hw = self.shape.cells();
        let cols_out = self.shape.cols;
        let inp = hw * super::encode::PLANES;
        logits.clear();
        logits.resize(n * cols_out, 0.0);
        values.clear();
        values.resize(n, 0.0);
        let mut start = 0;
        while start < n {
            let ns = CHUNK.min(n - start);
            let x = &planes[start * inp..(start + ns) * inp];
            let Scratch {
                a,
                b,
                c,
                cols,
                head,
                hidden,
            } = s;
            self.conv(&self.stem, x, ns, None, cols, a);
            for (l1, l2) in &self.blocks {
                self.conv(l1, a, ns, None, cols, b);
                self.conv(l2, b, ns, Some(a), cols, c);
                std::mem::swap(a, c);
            }
            // Policy head: 1×1 conv (+BN, ReLU), then one product for the chunk.
            self.conv(&self.p_conv, a, ns, None, cols, head);
            let lg = &mut logits[start * cols_out..(start + ns) * cols_out];
            for row in lg.chunks_mut(cols_out) {
                row.copy_from_slice(&self.p_fc_b);
            }
            matmul_acc(ns, cols_out, hw * POLICY_FILTERS, lg, head, &self.p_fc_w);
            // Value head: 1×1 conv to one plane, hidden layer, tanh.
            self.conv(&self.v_conv, a, ns, None, cols, head);
            let vh = self.shape.value_hidden;
            hidden.clear();
            for _ in 0..ns {
                hidden.extend_from_slice(&self.v_fc1_b);
            }
            matmul_acc(ns, vh, hw, hidden, head, &self.v_fc1_w);
            for (i, row) in hidden.chunks(vh).enumerate() {
                let z: f32 = row.iter().zip(&self.v_fc2_w).map(|(h, w)| h.max(0.0) * w).sum();
                values[start + i] = (z + self.v_fc2_b).tanh();
            }
            start += ns;
        }
    }
}

/// One CPU inference worker: the shared folded weights and its own buffers.
pub struct CpuEvaluator {
    pub net: Arc<Folded>,
    scratch: Scratch,
}

impl CpuEvaluator {
    pub fn new(net: Arc<Folded>) -> Self {
        CpuEvaluator {
            net,
            scratch: Scratch::default(),
        }
    }
}

impl Evaluate for CpuEvaluator {
    fn evaluate(&mut self, planes: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>) {
        self.net.forward(planes, n, logits, values, &mut self.scratch);
    }
}

/// CPU inference spread over several threads, one position per forward
/// pass. Evaluating positions one by one makes each output depend on its
/// position alone — not on the batch it came in, the thread that ran it or
/// what the cache held (a matrix kernel sums in another order for another
/// batch size) — so a search, and a tournament of searches, replays
/// exactly. A batch is cut into one slice per thread: the calling thread
/// runs the first, helper threads kept for the evaluator's lifetime the
/// others (starting a thread per batch cost more than it saved).
pub struct ParallelCpu {
    net: Arc<Folded>,
    scratch: Scratch,
    helpers: Vec<Helper>,
}

/// A helper thread: positions in, their logits and values out.
struct Helper {
    jobs: Option<crossbeam_channel::Sender<Vec<f32>>>,
    results: crossbeam_channel::Receiver<(Vec<f32>, Vec<f32>)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ParallelCpu {
    pub fn new(net: Arc<Folded>, threads: usize) -> Self {
        let inp = net.shape.cells() * super::encode::PLANES;
        let helpers = (1..threads.max(1))
            .map(|_| {
                let (jobs, job_rx) = crossbeam_channel::unbounded::<Vec<f32>>();
                let (result_tx, results) = crossbeam_channel::unbounded();
                let net = net.clone();
                let thread = std::thread::spawn(move || {
                    let mut scratch = Scratch::default();
                    for x in job_rx {
                        let (mut l, mut v) = (Vec::new(), Vec::new());
                        one_by_one(&net, &x, x.len() / inp, &mut l, &mut v, &mut scratch);
                        if result_tx.send((l, v)).is_err() {
                            break;
                        }
                    }
                });
                Helper {
                    jobs: Some(jobs),
                    results,
                    thread: Some(thread),
                }
            })
            .collect();
        ParallelCpu {
            net,
            scratch: Scratch::default(),
            helpers,
        }
    }
}

impl Drop for ParallelCpu {
    fn drop(&mut self) {
        for h in &mut self.helpers {
            h.jobs = None; // closes the channel: the helper's loop ends
            if let Some(t) = h.thread.take() {
                let _ = t.join();
            }
        }
    }
}

/// Evaluates the `n` positions of `planes` one at a time, appending to
/// `logits` and `values`.
fn one_by_one(net: &Folded, planes: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>, s: &mut Scratch) {
    let inp = planes.len() / n.max(1);
    let (mut l, mut v) = (Vec::new(), Vec::new());
    for x in planes.chunks(inp).take(n) {
        net.forward(x, 1, &mut l, &mut v, s);
        logits.extend_from_slice(&l);
        values.extend_from_slice(&v);
    }
}

impl Evaluate for ParallelCpu {
    fn evaluate(&mut self, planes: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>) {
        logits.clear();
        values.clear();
        if n == 0 {
            return;
        }
        let threads = (self.helpers.len() + 1).min(n);
        let inp = planes.len() / n.max(1);
        let per = n.div_ceil(threads);
        let mut slices = planes[..n * inp].chunks(per * inp);
        let first = slices.next().unwrap_or(&[]);
        let mut sent = Vec::new();
        for (h, x) in self.helpers.iter().zip(slices) {
            let jobs = h.jobs.as_ref().expect("open until drop");
            jobs.send(x.to_vec())
                .expect("helper threads live as long as the evaluator");
            sent.push(h);
        }
        one_by_one(
            &self.net,
            first,
            first.len() / inp.max(1),
            logits,
            values,
            &mut self.scratch,
        );
        for h in sent {
            let (l, v) = h.results.recv().expect("a helper answers every job");
            logits.extend_from_slice(&l);
            values.extend_from_slice(&v);
        }
    }
}

/// The candle network in evaluation mode on any device (the GPU path).
pub struct CandleEvaluator {
    pub net: PolicyValueNet,
}

impl Evaluate for CandleEvaluator {
    fn evaluate(&mut self, planes: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>) {
        // A failing device call cannot be recovered from mid-search.
        self.net
            .infer(planes, n, logits, values)
            .unwrap_or_else(|e| panic!("network inference failed: {e}"));
    }
}

/// A network output kept in the cache.
#[derive(Clone, Copy)]
pub struct Cached {
    pub logits: [f32; MAX_SIDE],
    pub value: f32,
}

/// Keys are already well-mixed 64-bit position keys: hash them as they are.
#[derive(Default)]
pub struct KeyHasher(u64);
impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ *b as u64;
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = k;
    }
}

/// Recent network outputs by position key. Connect Four reaches the same
/// position through different move orders, and self-play games share
/// openings, so many leaves are already known. Bounded by clearing when
/// full: simple, O(1) amortised, and recent positions refill it at once.
pub struct Cache {
    map: HashMap<u64, Cached, BuildHasherDefault<KeyHasher>>,
    capacity: usize,
    pub lookups: u64,
    pub hits: u64,
}

impl Cache {
    pub fn new(capacity: usize) -> Self {
        Cache {
            map: HashMap::default(),
            capacity,
            lookups: 0,
            hits: 0,
        }
    }

    pub fn get(&mut self, key: u64) -> Option<Cached> {
        if self.capacity == 0 {
            return None;
        }
        self.lookups += 1;
        let r = self.map.get(&key).copied();
        if r.is_some() {
            self.hits += 1;
        }
        r
    }

    pub fn insert(&mut self, key: u64, logits: &[f32], value: f32) {
        if self.capacity == 0 {
            return;
        }
        if self.map.len() >= self.capacity {
            self.map.clear();
        }
        let mut l = [0f32; MAX_SIDE];
        l[..logits.len()].copy_from_slice(logits);
        self.map.insert(key, Cached { logits: l, value });
    }

    /// Forgets everything (the network changed).
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Tensor};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Folding and unfolding change the arithmetic, not the function: the
    /// fast path agrees with candle's evaluation-mode forward, including
    /// non-trivial batch-norm statistics, over more than one chunk.
    #[test]
    fn folded_path_matches_candle() {
        let dev = Device::Cpu;
        let (rows, cols, blocks, channels, value_hidden) = (6, 7, 2, 16, 32);
        let shape = NetShape {
            rows,
            cols,
            blocks,
            channels,
            value_hidden,
            reply_head: false,
        };
        let net = PolicyValueNet::new(shape, 9, &dev).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Non-trivial running statistics and affine parameters.
        for (name, v, _) in net.named() {
            if name.ends_with("running_var") || name.ends_with("gamma") {
                let n = v.elem_count();
                let vals: Vec<f32> = (0..n).map(|_| rng.gen_range(0.5..1.5)).collect();
                v.set(&Tensor::from_vec(vals, n, &dev).unwrap()).unwrap();
            } else if name.ends_with("running_mean") || name.ends_with("beta") {
                let n = v.elem_count();
                let vals: Vec<f32> = (0..n).map(|_| rng.gen_range(-0.3..0.3)).collect();
                v.set(&Tensor::from_vec(vals, n, &dev).unwrap()).unwrap();
            }
        }
        let n = 37;
        let planes: Vec<f32> = (0..n * 42 * 3)
            .map(|i| if i % 3 == 2 { 1.0 } else { rng.gen_range(0..2) as f32 })
            .collect();
        let (mut l1, mut v1) = (Vec::new(), Vec::new());
        net.infer(&planes, n, &mut l1, &mut v1).unwrap();
        let folded = Folded::from_net(&net).unwrap();
        let (mut l2, mut v2) = (Vec::new(), Vec::new());
        folded.forward(&planes, n, &mut l2, &mut v2, &mut Scratch::default());
        let max_l = l1.iter().zip(&l2).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        let max_v = v1.iter().zip(&v2).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(max_l < 1e-3, "logits differ by {max_l}");
        assert!(max_v < 1e-4, "values differ by {max_v}");
        assert!(
            l1.iter().any(|x| x.abs() > 1e-2),
            "a trivial network would prove nothing"
        );
    }

    /// Play never reads the reply head: a network with one gives exactly
    /// the policy and value of the same network without it, through the
    /// folded path and through candle's `infer`, however large its weights.
    #[test]
    fn play_never_reads_the_reply_head() {
        let dev = Device::Cpu;
        let shape = NetShape::tiny();
        let plain = PolicyValueNet::new(shape, 3, &dev).unwrap();
        let headed = PolicyValueNet::new(
            NetShape {
                reply_head: true,
                ..shape
            },
            3,
            &dev,
        )
        .unwrap();
        let (w, b) = headed.reply_fc.as_ref().unwrap();
        w.set(&(w.as_tensor() * 1e3).unwrap()).unwrap();
        b.set(&b.as_tensor().ones_like().unwrap()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 6;
        let planes: Vec<f32> = (0..n * 60)
            .map(|i| if i % 3 == 2 { 1.0 } else { rng.gen_range(0..2) as f32 })
            .collect();
        let run = |net: &PolicyValueNet| {
            let (mut l, mut v) = (Vec::new(), Vec::new());
            Folded::from_net(net)
                .unwrap()
                .forward(&planes, n, &mut l, &mut v, &mut Scratch::default());
            let (mut l2, mut v2) = (Vec::new(), Vec::new());
            net.infer(&planes, n, &mut l2, &mut v2).unwrap();
            (l, v, l2, v2)
        };
        assert_eq!(run(&plain), run(&headed));
    }

    /// Each position's output is the one a forward pass of that position
    /// alone gives, bit for bit, whatever batch and threads it came in.
    #[test]
    fn parallel_cpu_is_exact_per_position() {
        let shape = NetShape {
            rows: 6,
            cols: 7,
            blocks: 1,
            channels: 8,
            value_hidden: 16,
            reply_head: false,
        };
        let folded = Arc::new(Folded::from_net(&PolicyValueNet::new(shape, 4, &Device::Cpu).unwrap()).unwrap());
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let inp = 42 * 3;
        for n in [0, 1, 2, 7, 9] {
            let planes: Vec<f32> = (0..n * inp).map(|_| rng.gen_range(0..2) as f32).collect();
            let (mut alone_l, mut alone_v) = (Vec::new(), Vec::new());
            for x in planes.chunks(inp) {
                let (mut l, mut v) = (Vec::new(), Vec::new());
                folded.forward(x, 1, &mut l, &mut v, &mut Scratch::default());
                alone_l.extend(l);
                alone_v.extend(v);
            }
            for threads in [1, 2, 3] {
                let (mut l, mut v) = (Vec::new(), Vec::new());
                ParallelCpu::new(folded.clone(), threads).evaluate(&planes, n, &mut l, &mut v);
                assert_eq!((&alone_l, &alone_v), (&l, &v), "{n} positions on {threads} threads");
            }
        }
    }

    #[test]
    fn cache_counts_hits_and_stays_bounded() {
        let mut c = Cache::new(2);
        assert!(c.get(1).is_none());
        c.insert(1, &[0.5, 0.25], 0.1);
        assert_eq!(c.get(1).unwrap().logits[1], 0.25);
        c.insert(2, &[0.0], 0.0);
        c.insert(3, &[0.0], 0.0); // full: cleared first
        assert!(c.get(1).is_none());
        assert!(c.get(3).is_some());
        assert_eq!((c.lookups, c.hits), (4, 2));
        let mut off = Cache::new(0);
        off.insert(1, &[0.0], 0.0);
        assert!(off.get(1).is_none());
        assert_eq!(off.lookups, 0);
    }
}
