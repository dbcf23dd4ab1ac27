//! An iteration's optimizer steps: on the CPU through the hand-written
//! trainer, elsewhere through candle, both drawing the same batches.

use super::*;

impl TrainState {
    /// `steps_per_iteration` AdamW steps; returns the mean losses. On the
    /// CPU the steps run in [`CpuTrainer`] (the same arithmetic, several
    /// times faster than candle's CPU backend; see docs/alphazero.md), with
    /// weights and moments copied in and out.
    pub(super) fn train_steps(&mut self, it: u32, window: usize) -> candle_core::Result<MeanLosses> {
        if self.device.is_cpu() {
            return self.train_steps_host(it, window);
        }
        let (rows, cols) = (self.cfg.rows, self.cfg.cols);
        self.opt.lr = self.settings.optimizer.learning_rate_at(it);
        let reply_weight = self.settings.optimizer.reply_weight;
        let (net, opt, device) = (&self.net, &mut self.opt, &self.device);
        run_steps(
            &self.replay,
            window,
            &self.settings,
            self.seed,
            it,
            (rows, cols),
            |b, n| {
                let xt = Tensor::from_slice(&b.planes, (n, rows, cols, PLANES), device)?;
                let pt = Tensor::from_slice(&b.policy, (n, cols), device)?;
                let zt = Tensor::from_slice(&b.value, n, device)?;
                // A batch without reply targets leaves the head out of the
                // loss, as the CPU trainer does (its term would be zero).
                let rt = match net.shape.reply_head && b.reply.iter().any(|&r| r != 0.0) {
                    true => Some(Tensor::from_slice(&b.reply, (n, cols), device)?),
                    false => None,
                };
                let l = net.loss(&xt, &pt, &zt, rt.as_ref().map(|t| (t, reply_weight)))?;
                opt.step(net, &l.total)?;
                Ok(StepLoss {
                    policy: l.policy.to_scalar::<f32>()?,
                    value: l.value.to_scalar::<f32>()?,
                    reply: l.reply.map(|r| r.to_scalar::<f32>()).transpose()?,
                })
            },
        )
    }

    pub(super) fn train_steps_host(&mut self, it: u32, window: usize) -> candle_core::Result<MeanLosses> {
        let o = &self.settings.optimizer;
        let threads = crate::util::threads_or_cores(o.threads);
        let mut host = CpuTrainer::from_net(
            &self.net,
            &self.opt.host_moments(&self.net)?,
            self.opt.step,
            o.learning_rate_at(it) as f32,
            o.weight_decay as f32,
            threads,
        )?;
        host.reply_weight = o.reply_weight as f32;
        let dims = (self.cfg.rows, self.cfg.cols);
        let losses = run_steps(&self.replay, window, &self.settings, self.seed, it, dims, |b, n| {
            Ok(host.step(&b.planes, &b.policy, &b.value, Some(&b.reply), n))
        })?;
        self.net.set_from_host(&host.weights())?;
        self.opt.set_host_moments(&self.net, &host.moments(), host.step)?;
        Ok(losses)
    }
}

/// An iteration's training: its steps and their mean losses (the reply
/// loss over the steps that had reply targets; `None` with none).
pub(super) struct MeanLosses {
    pub(super) policy: f64,
    pub(super) value: f64,
    pub(super) reply: Option<f64>,
    pub(super) steps: u64,
}

/// The optimizer-step loop both trainers share: `steps_per_iteration`
/// batches drawn from the newest `window` samples of `replay` (seeded by
/// the run's seed and iteration),
/// each given to `step`, which returns its losses; a progress bar.
pub(super) fn run_steps(
    replay: &Replay,
    window: usize,
    settings: &TrainSettings,
    seed: u64,
    it: u32,
    (rows, cols): (usize, usize),
    mut step: impl FnMut(&Batch, usize) -> candle_core::Result<StepLoss>,
) -> candle_core::Result<MeanLosses> {
    let o = &settings.optimizer;
    let n = o.batch_size as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed::derive(seed, it as u64, seed::TRAIN_BATCHES));
    let mut b = Batch::default();
    let pb = bar(o.steps_per_iteration as u64, "steps");
    pb.set_prefix(format!("train {it}"));
    let (mut pl_sum, mut vl_sum, mut rl_sum, mut replied) = (0.0, 0.0, 0.0, 0u64);
    for _ in 0..o.steps_per_iteration {
        replay.batch(&mut rng, n, window, (rows, cols), &mut b);
        let l = step(&b, n)?;
        pl_sum += l.policy as f64;
        vl_sum += l.value as f64;
        if let Some(r) = l.reply {
            rl_sum += r as f64;
            replied += 1;
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let steps = o.steps_per_iteration as u64;
    Ok(MeanLosses {
        policy: pl_sum / steps as f64,
        value: vl_sum / steps as f64,
        reply: (replied > 0).then(|| rl_sum / replied as f64),
        steps,
    })
}
