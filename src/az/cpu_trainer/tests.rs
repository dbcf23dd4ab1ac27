use super::*;
use crate::az::optimizer::AdamW;
use candle_core::{Device, Tensor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn batch(shape: &NetShape, n: usize, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let planes: Vec<f32> = (0..n * shape.cells() * 3)
        .map(|i| if i % 3 == 2 { 1.0 } else { rng.gen_range(0..2) as f32 })
        .collect();
    let mut pol = vec![0f32; n * shape.cols];
    for r in pol.chunks_mut(shape.cols) {
        let a = rng.gen_range(0..shape.cols);
        r[a] = 0.7;
        r[(a + 1) % shape.cols] += 0.3;
    }
    let val: Vec<f32> = (0..n).map(|_| [-1.0, 0.0, 1.0][rng.gen_range(0..3)]).collect();
    (planes, pol, val)
}

fn close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    let scale = b.iter().fold(0f32, |m, x| m.max(x.abs())).max(1e-6);
    let err = a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()));
    assert!(err <= 2e-3 * scale + 1e-6, "{what}: max error {err} (scale {scale})");
}

/// Reply targets for `n` positions: the policy targets of `pol`'s next
/// row, none (a zero row) for every third position.
fn replies(pol: &[f32], cols: usize) -> Vec<f32> {
    let n = pol.len() / cols;
    let mut r = vec![0f32; n * cols];
    for i in (0..n).filter(|i| i % 3 != 2) {
        let next = (i + 1) % n;
        r[i * cols..(i + 1) * cols].copy_from_slice(&pol[next * cols..(next + 1) * cols]);
    }
    r
}

/// Every trained tensor's gradient of `loss` by name.
fn candle_grads(net: &PolicyValueNet, loss: &Tensor) -> HashMap<String, Vec<f32>> {
    let gs = loss.backward().unwrap();
    net.named()
        .into_iter()
        .filter(|(_, _, t)| *t)
        .map(|(name, v, _)| {
            (
                name,
                gs.get(v.as_tensor()).unwrap().flatten_all().unwrap().to_vec1().unwrap(),
            )
        })
        .collect()
}

/// Loss, every gradient, the running statistics and AdamW updates
/// agree with candle's autograd and the candle optimizer; with a reply
/// head (`reply`), its loss and gradients too, the shared features
/// taking both heads' gradients.
fn check_against_candle(reply: bool) {
    let dev = Device::Cpu;
    let shape = NetShape {
        blocks: 2,
        reply_head: reply,
        ..NetShape::tiny()
    };
    let n = 12;
    let net = PolicyValueNet::new(shape, 5, &dev).unwrap();
    let mut host = CpuTrainer::from_net(&net, &HashMap::new(), 0, 1e-2, 1e-2, 1).unwrap();
    host.reply_weight = 0.4;
    let (x, p, z) = batch(&shape, n, 1);
    let r = replies(&p, 5);
    let xt = Tensor::from_slice(&x, (n, 4, 5, 3), &dev).unwrap();
    let pt = Tensor::from_slice(&p, (n, 5), &dev).unwrap();
    let zt = Tensor::from_slice(&z, n, &dev).unwrap();
    let rt = Tensor::from_slice(&r, (n, 5), &dev).unwrap();
    let targets = reply.then_some((&rt, 0.4));

    let l = net.loss(&xt, &pt, &zt, targets).unwrap();
    let grads = l.total.backward().unwrap();
    let (hl, hg) = host.gradients(&x, &p, &z, Some(&r), n);
    assert!((l.policy.to_scalar::<f32>().unwrap() - hl.policy).abs() < 1e-4);
    assert!((l.value.to_scalar::<f32>().unwrap() - hl.value).abs() < 1e-4);
    let candle_reply = l.reply.map(|t| t.to_scalar::<f32>().unwrap());
    assert_eq!(candle_reply.is_some(), reply);
    assert_eq!(hl.reply.is_some(), reply);
    if let (Some(a), Some(b)) = (candle_reply, hl.reply) {
        assert!((a - b).abs() < 1e-4, "reply loss {a} vs {b}");
        // Per position with a target: 8 of the 12; the total counts it
        // weighted and per position of the batch.
        let total = l.total.to_scalar::<f32>().unwrap();
        assert!((total - (hl.policy + hl.value + 0.4 * b * 8.0 / 12.0)).abs() < 1e-4);
    }
    for (name, var, trained) in net.named() {
        let want = if trained {
            grads
                .get(var.as_tensor())
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        } else {
            var.as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap()
        };
        let got = if trained {
            hg[&name].clone()
        } else {
            host.weights()[&name].clone()
        };
        close(&got, &want, &name);
    }
    assert_eq!(hg.contains_key(REPLY_FC_W), reply);
    // The reply head's own gradients, tighter: one product each.
    for name in [REPLY_FC_W, REPLY_FC_B].into_iter().filter(|_| reply) {
        let want = grads.get(net.named().iter().find(|(n, _, _)| n == name).unwrap().1.as_tensor());
        let want = want.unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let err = hg[name].iter().zip(&want).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(err < 1e-5, "{name}: {err}");
    }

    // The optimizer: the same gradients give the same update. (Steps
    // are compared from the same gradients because Adam divides by
    // √v: components with gradients near zero turn rounding noise of
    // 1e-7 into updates of ±lr, so end-to-end steps drift apart.)
    let mut host = CpuTrainer::from_net(&net, &HashMap::new(), 0, 1e-2, 1e-2, 1).unwrap();
    let mut opt = AdamW::new(&net, 1e-2, 1e-2).unwrap();
    for _ in 0..2 {
        let l = net.loss(&xt, &pt, &zt, targets).unwrap().total;
        let g = candle_grads(&net, &l);
        opt.step(&net, &l).unwrap();
        host.apply(&g);
    }
    let want = net.host_weights().unwrap();
    let got = host.weights();
    assert_eq!(host.trained_names().iter().any(|n| n == REPLY_FC_W), reply);
    for name in host.trained_names() {
        close(&got[&name], &want[&name], &name);
    }
    for name in [REPLY_FC_W, REPLY_FC_B].into_iter().filter(|_| reply) {
        let err = got[name]
            .iter()
            .zip(&want[name])
            .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(err < 1e-5, "{name} after two steps: {err}");
    }
    let hm = host.moments();
    let cm = opt.host_moments(&net).unwrap();
    for name in host.trained_names() {
        close(&hm[&name].0, &cm[&name].0, &name);
        close(&hm[&name].1, &cm[&name].1, &name);
    }
    assert_eq!(host.step, opt.step);
}

#[test]
fn matches_candle_autograd_and_adamw() {
    check_against_candle(false);
}

#[test]
fn matches_candle_autograd_and_adamw_with_a_reply_head() {
    check_against_candle(true);
}

/// The reply head's gradient, checked against finite differences of
/// the loss (so the test does not rest on candle alone), and its share
/// in the shared features: the policy convolution's gradient changes
/// with the reply targets, the value head's does not.
#[test]
fn the_reply_gradient_reaches_the_shared_features() {
    let shape = NetShape {
        reply_head: true,
        ..NetShape::tiny()
    };
    let net = PolicyValueNet::new(shape, 6, &Device::Cpu).unwrap();
    let (x, p, z) = batch(&shape, 10, 4);
    let r = replies(&p, 5);
    let host = || {
        let mut h = CpuTrainer::from_net(&net, &HashMap::new(), 0, 1e-2, 0.0, 1).unwrap();
        h.reply_weight = 1.0;
        h
    };
    let (with, g) = host().gradients(&x, &p, &z, Some(&r), 10);
    let (without, g0) = host().gradients(&x, &p, &z, None, 10);
    assert!(with.reply.is_some() && without.reply.is_none());
    assert_eq!((with.policy, with.value), (without.policy, without.value));
    assert!(!g0.contains_key(REPLY_FC_W), "no targets: no gradient, no step");
    assert_ne!(g["policy.conv.w"], g0["policy.conv.w"]);
    assert_eq!(g["value.fc1.w"], g0["value.fc1.w"]);
    assert_eq!(g["policy.fc.w"], g0["policy.fc.w"]);
    // All-zero reply rows are no targets either.
    let (zero, gz) = host().gradients(&x, &p, &z, Some(&[0.0; 50]), 10);
    assert!(zero.reply.is_none() && !gz.contains_key(REPLY_FC_W));
    // d(reply loss)/d(reply bias) by central differences: the reported
    // loss is per position with a target (7 of 10 here), the gradient is
    // of the batch loss, its sum over all 10.
    let with_target = 7.0;
    for (c, &analytic) in g[REPLY_FC_B].iter().enumerate() {
        let at = |delta: f32| {
            let mut h = host();
            h.fc.get_mut(REPLY_FC_B).unwrap()[c] += delta;
            h.gradients(&x, &p, &z, Some(&r), 10).0.reply.unwrap() * with_target / 10.0
        };
        let numeric = (at(1e-2) - at(-1e-2)) / 2e-2;
        assert!((numeric - analytic).abs() < 2e-3, "column {c}: {numeric} vs {analytic}");
    }
}

/// At value weight 0 the value loss reaches no weight, the value head
/// stays as it was (weight decay included), and the policy head's
/// gradients are unchanged; at 1 the value head learns.
#[test]
fn value_weight_zero_learns_the_policy_alone() {
    let shape = NetShape::tiny();
    let net = PolicyValueNet::new(shape, 4, &Device::Cpu).unwrap();
    let (x, p, z) = batch(&shape, 16, 3);
    let mut both = CpuTrainer::from_net(&net, &HashMap::new(), 0, 1e-2, 1e-4, 1).unwrap();
    let mut policy_only = CpuTrainer::from_net(&net, &HashMap::new(), 0, 1e-2, 1e-4, 1).unwrap();
    policy_only.value_weight = 0.0;
    let (lb, gb) = both.gradients(&x, &p, &z, None, 16);
    let (lp, gp) = policy_only.gradients(&x, &p, &z, None, 16);
    assert_eq!(
        (lb.policy, lb.value),
        (lp.policy, lp.value),
        "losses are reported unweighted"
    );
    for name in [
        "value.fc1.w",
        "value.fc1.b",
        "value.fc2.w",
        "value.fc2.b",
        "value.conv.w",
    ] {
        assert!(gp[name].iter().all(|g| *g == 0.0), "{name} moves at weight 0");
        assert!(gb[name].iter().any(|g| *g != 0.0), "{name} does not move at weight 1");
    }
    assert_eq!(gp["policy.fc.w"], gb["policy.fc.w"]);
    assert_ne!(
        gp["stem.w"], gb["stem.w"],
        "the value loss reaches the tower at weight 1 only"
    );
    let before = policy_only.weights();
    policy_only.step(&x, &p, &z, None, 16);
    let after = policy_only.weights();
    for name in policy_only.trained_names() {
        if name.starts_with("value.") {
            assert_eq!(before[&name], after[&name], "{name} moved at weight 0");
        }
    }
    assert_ne!(before["policy.fc.w"], after["policy.fc.w"]);
}

/// Steps on one batch lower its loss (the whole loop, end to end).
#[test]
fn host_steps_lower_the_loss() {
    let shape = NetShape::tiny();
    let net = PolicyValueNet::new(shape, 3, &Device::Cpu).unwrap();
    let mut host = CpuTrainer::from_net(&net, &HashMap::new(), 0, 1e-2, 1e-4, 2).unwrap();
    let (x, p, z) = batch(&shape, 16, 9);
    let first = host.step(&x, &p, &z, None, 16);
    let mut last = first;
    for _ in 0..40 {
        last = host.step(&x, &p, &z, None, 16);
    }
    assert!(
        last.policy + last.value < 0.5 * (first.policy + first.value),
        "{first:?} -> {last:?}"
    );
    // Back into candle: the network computes the same loss there.
    net.set_from_host(&host.weights()).unwrap();
    let back = CpuTrainer::from_net(&net, &host.moments(), host.step, 1e-2, 1e-4, 1).unwrap();
    assert_eq!(back.weights(), host.weights());
}
