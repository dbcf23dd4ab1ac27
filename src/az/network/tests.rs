use super::*;
use crate::az::optimizer::AdamW;

#[test]
fn shapes_and_ranges() {
    let net = PolicyValueNet::new(NetShape::tiny(), 1, &Device::Cpu).unwrap();
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
    let net = PolicyValueNet::new(from, 4, &dev).unwrap();
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
        let grown = PolicyValueNet::load_grown(shape, from, &dir.path().join("m.safetensors"), &dev).unwrap();
        let (l1, v1) = grown.forward(&x, false).unwrap();
        assert!(diff(&l0, &l1) < 1e-5 && diff(&v0, &v1) < 1e-5, "{shape:?}");
        let mut gopt = AdamW::new(&grown, 1e-2, 1e-4).unwrap();
        assert!(gopt.load(&grown, &dir.path().join("o.safetensors"), 3).is_err());
        gopt.load_grown(&grown, from, &dir.path().join("o.safetensors"), 3)
            .unwrap();
        // Block 0's first weight from the first new channel (tap 0, row
        // `from.channels`) into old channel 0: zero, until training moves it.
        let from_new = |n: &PolicyValueNet| n.host_weights().unwrap()["block0.conv1.w"][from.channels * shape.channels];
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
        PolicyValueNet::new(NetShape::tiny(), 3, &dev).unwrap(),
        PolicyValueNet::new(headed(), 3, &dev).unwrap(),
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
    let net = PolicyValueNet::new(headed(), 4, &Device::Cpu).unwrap();
    let mut opt = AdamW::new(&net, 1e-2, 1e-4).unwrap();
    let (x, p, z, r) = targets(16, 2);
    let reply = |net: &PolicyValueNet| scalar(net.loss(&x, &p, &z, Some((&r, 1.0))).unwrap().reply.as_ref().unwrap());
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
    let net = PolicyValueNet::new(NetShape::tiny(), 5, &dev).unwrap();
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
    let e = PolicyValueNet::load(headed(), &m, &dev).err().unwrap().to_string();
    assert!(e.contains(REPLY_FC_W), "{e}");

    let grown = PolicyValueNet::load_grown(headed(), NetShape::tiny(), &m, &dev).unwrap();
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
    let rl = |n: &PolicyValueNet| scalar(n.loss(&x, &p, &z, Some((&r, 1.0))).unwrap().reply.as_ref().unwrap());
    let first = rl(&grown);
    for _ in 0..10 {
        let l = grown.loss(&x, &p, &z, Some((&r, 1.0))).unwrap().total;
        gopt.step(&grown, &l).unwrap();
    }
    assert!(rl(&grown) < first);

    // And off again: the rest as saved, the head's tensors dropped.
    grown.save(&m).unwrap();
    gopt.save(&grown, &o).unwrap();
    let dropped = PolicyValueNet::load_grown(NetShape::tiny(), headed(), &m, &dev).unwrap();
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
    let played = PolicyValueNet::new(NetShape::tiny(), 1, &Device::Cpu).unwrap();
    let trained = PolicyValueNet::new(NetShape::tiny(), 2, &Device::Cpu).unwrap();
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
        PolicyValueNet::new(NetShape::tiny(), seed, &Device::Cpu)
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
    let net = PolicyValueNet::new(NetShape::tiny(), 3, &dev).unwrap();
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
    let mut net = PolicyValueNet::new(NetShape::tiny(), 4, &dev).unwrap();
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
    let net = PolicyValueNet::new(NetShape::tiny(), 11, &dev).unwrap();
    let path = dir.path().join("w.safetensors");
    net.save(&path).unwrap();
    let back = PolicyValueNet::load(NetShape::tiny(), &path, &dev).unwrap();
    assert_eq!(net.host_weights().unwrap(), back.host_weights().unwrap());
    let mut other = NetShape::tiny();
    other.channels = 4;
    let err = PolicyValueNet::load(other, &path, &dev).err().unwrap().to_string();
    assert!(err.contains("shape"), "{err}");
}
