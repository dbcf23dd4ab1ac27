//! AdamW for the candle network ([`super::network::PolicyValueNet`]): decoupled
//! weight decay, moments that a checkpoint saves so a resumed run continues
//! exactly, and moments carried over when a checkpoint's network grows.

use super::network::{embed_grown, is_reply, NetShape, PolicyValueNet};
use candle_core::{Result, Tensor};
use std::collections::HashMap;
use std::path::Path;

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
    /// Per trained tensor (in [`PolicyValueNet::named`] order): first and second moments.
    pub(crate) moments: Vec<(Tensor, Tensor)>,
}

impl AdamW {
    pub fn new(net: &PolicyValueNet, lr: f64, weight_decay: f64) -> Result<Self> {
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
    pub fn step(&mut self, net: &PolicyValueNet, loss: &Tensor) -> Result<()> {
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
    pub fn tensors(&self, net: &PolicyValueNet) -> HashMap<String, Tensor> {
        let mut out = HashMap::new();
        let trained = net.named().into_iter().filter(|(_, _, tr)| *tr);
        for ((name, _, _), (m, s)) in trained.zip(self.moments.iter()) {
            out.insert(format!("m.{name}"), m.clone());
            out.insert(format!("v.{name}"), s.clone());
        }
        out
    }

    pub fn save(&self, net: &PolicyValueNet, path: &Path) -> Result<()> {
        candle_core::safetensors::save(&self.tensors(net), path)
    }
    /// The moments as host vectors by trained-tensor name (for the CPU
    /// trainer of [`super::cpu_trainer`]).
    pub fn host_moments(&self, net: &PolicyValueNet) -> Result<HostMoments> {
        let trained = net.named().into_iter().filter(|(_, _, tr)| *tr);
        trained
            .zip(self.moments.iter())
            .map(|((name, _, _), (m, s))| Ok((name, (m.flatten_all()?.to_vec1()?, s.flatten_all()?.to_vec1()?))))
            .collect()
    }

    /// Replaces the moments and the step count from host vectors.
    pub fn set_host_moments(&mut self, net: &PolicyValueNet, moments: &HostMoments, step: u64) -> Result<()> {
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
    pub fn load(&mut self, net: &PolicyValueNet, path: &Path, step: u64) -> Result<()> {
        self.load_some(net, path, step, None)
    }

    /// As [`AdamW::load`] for a grown network ([`PolicyValueNet::load_grown`]): the
    /// saved moments sit where the saved weights do, and the new blocks',
    /// channels' and reply head's moments start at zero.
    pub fn load_grown(&mut self, net: &PolicyValueNet, from: NetShape, path: &Path, step: u64) -> Result<()> {
        self.load_some(net, path, step, Some(from))
    }

    fn load_some(&mut self, net: &PolicyValueNet, path: &Path, step: u64, grown_from: Option<NetShape>) -> Result<()> {
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
