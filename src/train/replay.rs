//! The replay buffer: the most recent self-play positions, sampled
//! uniformly for training, each drawn as itself or its mirror image with
//! equal chance (mirror augmentation), and saved with each checkpoint so a
//! resumed run trains on the same data.

use crate::az::encode::{Sample, PLANES};
use crate::game::MAX_SIDE;
use rand::Rng;
use std::io::{Read, Write};
use std::path::Path;

/// A training batch as plain floats: planes (`n·rows·cols·3`), policy
/// targets (`n·cols`), value targets (`n`) and the opponent's reply
/// targets (`n·cols`, a zero row where a sample has none).
#[derive(Default)]
pub struct Batch {
    pub planes: Vec<f32>,
    pub policy: Vec<f32>,
    pub value: Vec<f32>,
    pub reply: Vec<f32>,
}

/// A ring buffer of samples.
pub struct Replay {
    samples: Vec<Sample>,
    capacity: usize,
    /// Where the next sample goes once full.
    next: usize,
}

/// File magic and format version of `replay.bin`: version 2 stores each
/// sample's reply target after its value; version 1, written before reply
/// targets existed, still loads (with no reply targets).
const MAGIC: &[u8; 8] = b"C4RPLY02";
const MAGIC_V1: &[u8; 8] = b"C4RPLY01";

impl Replay {
    pub fn new(capacity: usize) -> Self {
        Replay {
            samples: Vec::new(),
            capacity: capacity.max(1),
            next: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn push(&mut self, s: Sample) {
        if self.samples.len() < self.capacity {
            self.samples.push(s);
        } else {
            self.samples[self.next] = s;
            self.next = (self.next + 1) % self.capacity;
        }
    }

    /// The index in `samples` of the `r`-th of the newest `window`
    /// samples (`r` from 0, oldest of them first; `window` ≤ `len`).
    fn newest(&self, window: usize, r: usize) -> usize {
        let len = self.samples.len();
        if window >= len {
            // The whole buffer: the draw is the index (as before windows).
            r
        } else if len < self.capacity {
            // Not yet full: pushed in order, newest last.
            len - window + r
        } else {
            // Full: the newest is just before `next`.
            (self.next + self.capacity - window + r) % self.capacity
        }
    }

    /// Fills `batch` with `n` samples drawn uniformly from the newest
    /// `window` samples (all of them if the buffer holds fewer), each
    /// mirrored with chance ½.
    pub fn batch(&self, rng: &mut impl Rng, n: usize, window: usize, (rows, cols): (usize, usize), batch: &mut Batch) {
        let inp = rows * cols * PLANES;
        batch.planes.resize(n * inp, 0.0);
        batch.policy.resize(n * cols, 0.0);
        batch.value.resize(n, 0.0);
        batch.reply.resize(n * cols, 0.0);
        let window = window.clamp(1, self.samples.len());
        for i in 0..n {
            let s = &self.samples[self.newest(window, rng.gen_range(0..window))];
            let mirror = rng.gen_bool(0.5);
            s.encode_into(
                rows,
                cols,
                mirror,
                &mut batch.planes[i * inp..(i + 1) * inp],
                &mut batch.policy[i * cols..(i + 1) * cols],
                &mut batch.reply[i * cols..(i + 1) * cols],
            );
            batch.value[i] = s.value;
        }
    }

    /// The samples oldest first (so a reload keeps the ring's order).
    fn in_order(&self) -> impl Iterator<Item = &Sample> {
        let (a, b) = self.samples.split_at(self.next.min(self.samples.len()));
        b.iter().chain(a.iter())
    }

    /// Writes the buffer to `path` (a plain little-endian format: magic,
    /// count, then per sample 8 words of cells, 16 policy floats, a value,
    /// and in version 2 16 reply floats).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        // Version 1 (no reply rows) while no sample has a reply target: a
        // run without a reply head keeps its checkpoints a third smaller.
        let with_reply = self.samples.iter().any(Sample::has_reply);
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        w.write_all(if with_reply { MAGIC } else { MAGIC_V1 })?;
        w.write_all(&(self.samples.len() as u64).to_le_bytes())?;
        for s in self.in_order() {
            for x in s.mine.iter().chain(s.theirs.iter()) {
                w.write_all(&x.to_le_bytes())?;
            }
            for p in s.policy {
                w.write_all(&p.to_le_bytes())?;
            }
            w.write_all(&s.value.to_le_bytes())?;
            if with_reply {
                for p in s.reply {
                    w.write_all(&p.to_le_bytes())?;
                }
            }
        }
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()
    }

    /// Reads a buffer written by [`Replay::save`] into a buffer of
    /// `capacity` (keeping the newest samples if it holds more).
    pub fn load(path: &Path, capacity: usize) -> std::io::Result<Self> {
        let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
        let mut r = std::io::BufReader::new(std::fs::File::open(path)?);
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic)?;
        let with_reply = match &magic {
            m if m == MAGIC => true,
            m if m == MAGIC_V1 => false,
            _ => return Err(bad("not a c4sim replay buffer")),
        };
        let mut b8 = [0u8; 8];
        r.read_exact(&mut b8)?;
        let n = u64::from_le_bytes(b8) as usize;
        let mut out = Replay::new(capacity);
        for _ in 0..n {
            let mut words = [0u64; 8];
            for w in &mut words {
                r.read_exact(&mut b8)?;
                *w = u64::from_le_bytes(b8);
            }
            let policy = read_floats(&mut r)?;
            let [value] = read_floats::<1>(&mut r)?;
            let reply = if with_reply {
                read_floats(&mut r)?
            } else {
                [0.0; MAX_SIDE]
            };
            out.push(Sample {
                mine: [words[0], words[1], words[2], words[3]],
                theirs: [words[4], words[5], words[6], words[7]],
                policy,
                value,
                reply,
            });
        }
        Ok(out)
    }
}

/// `N` little-endian floats.
fn read_floats<const N: usize>(r: &mut impl Read) -> std::io::Result<[f32; N]> {
    let mut out = [0f32; N];
    let mut b4 = [0u8; 4];
    for x in &mut out {
        r.read_exact(&mut b4)?;
        *x = f32::from_le_bytes(b4);
    }
    Ok(out)
}

/// Position averaging (AlphaZero.jl; Oracle's Connect Four series): one
/// sample per distinct position of `samples`, in order of first
/// appearance, with the mean of its copies' policy and value targets, and
/// the mean reply target of the copies that have one (a copy without one,
/// at a game's end say, tells nothing about the reply and must not pull
/// the others' towards zero).
///
/// Why: one iteration's games share their openings (the empty board is in
/// every game), so without it the first plies fill the buffer with copies,
/// each with the noisy target of one search and one game result; the mean
/// is a better target and the buffer holds more different positions.
pub fn average_duplicates(samples: Vec<Sample>) -> Vec<Sample> {
    use std::collections::HashMap;
    let mut index: HashMap<([u64; 4], [u64; 4]), usize> = HashMap::with_capacity(samples.len());
    // Per distinct position: the sums, the copies, the copies with a reply.
    let mut merged: Vec<(Sample, u32, u32)> = Vec::with_capacity(samples.len());
    for s in samples {
        let replied = u32::from(s.has_reply());
        match index.entry((s.mine, s.theirs)) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let (m, n, r) = &mut merged[*e.get()];
                for (a, b) in m.policy.iter_mut().zip(s.policy) {
                    *a += b;
                }
                for (a, b) in m.reply.iter_mut().zip(s.reply) {
                    *a += b;
                }
                m.value += s.value;
                *n += 1;
                *r += replied;
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(merged.len());
                merged.push((s, 1, replied));
            }
        }
    }
    merged
        .into_iter()
        .map(|(mut m, n, r)| {
            let k = n as f32;
            m.policy.iter_mut().for_each(|p| *p /= k);
            m.value /= k;
            if r > 1 {
                m.reply.iter_mut().for_each(|p| *p /= r as f32);
            }
            m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Sample `i`: a reply target unless `i` is a multiple of 3.
    fn sample(i: u64) -> Sample {
        let mut policy = [0f32; MAX_SIDE];
        policy[(i % 5) as usize] = 1.0;
        let mut reply = [0f32; MAX_SIDE];
        if i % 3 != 0 {
            reply[((i + 1) % 5) as usize] = 0.25;
            reply[((i + 2) % 5) as usize] = 0.75;
        }
        Sample {
            mine: [i, 0, 0, 0],
            theirs: [i << 20, 0, 0, 0],
            policy,
            value: if i % 2 == 0 { 1.0 } else { -1.0 },
            reply,
        }
    }

    /// A copy of a position without a reply target does not count in the
    /// mean of the others' reply targets; with none, the mean is none.
    #[test]
    fn reply_targets_are_averaged_over_the_copies_that_have_one() {
        let mut a = sample(1);
        a.reply = [0.0; MAX_SIDE];
        a.reply[0] = 1.0;
        let mut b = sample(1);
        b.reply = [0.0; MAX_SIDE];
        b.reply[4] = 1.0;
        let mut none = sample(1);
        none.reply = [0.0; MAX_SIDE];
        assert!(a.has_reply() && !none.has_reply());
        let out = average_duplicates(vec![none, a, none, b, a]);
        assert_eq!(out.len(), 1);
        let r = out[0].reply;
        assert!(
            (r[0] - 2.0 / 3.0).abs() < 1e-6 && (r[4] - 1.0 / 3.0).abs() < 1e-6,
            "{r:?}"
        );
        assert!((r.iter().sum::<f32>() - 1.0).abs() < 1e-6, "still a distribution");
        // The policy and value means still count every copy.
        assert!((out[0].value + 1.0).abs() < 1e-6);
        let out = average_duplicates(vec![none, none]);
        assert!(!out[0].has_reply());
        // One copy with a reply keeps it as it is.
        assert_eq!(average_duplicates(vec![none, b])[0].reply, b.reply);
    }

    #[test]
    fn duplicates_are_averaged_in_first_seen_order() {
        let mut a = sample(1);
        a.policy = [0.0; MAX_SIDE];
        a.policy[0] = 1.0;
        a.value = 1.0;
        let mut b = sample(1);
        b.policy = [0.0; MAX_SIDE];
        b.policy[2] = 1.0;
        b.value = -1.0;
        let c = sample(2);
        let out = average_duplicates(vec![a, c, b, a]);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].mine, out[1].mine), (a.mine, c.mine));
        assert!((out[0].value - 1.0 / 3.0).abs() < 1e-6, "{}", out[0].value);
        assert!((out[0].policy[0] - 2.0 / 3.0).abs() < 1e-6);
        assert!((out[0].policy[2] - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(out[1], c);
    }

    #[test]
    fn ring_keeps_the_newest() {
        let mut r = Replay::new(3);
        for i in 0..5 {
            r.push(sample(i));
        }
        assert_eq!(r.len(), 3);
        let kept: Vec<u64> = r.in_order().map(|s| s.mine[0]).collect();
        assert_eq!(kept, vec![2, 3, 4]);
    }

    /// The values of a batch's samples (each sample's value is its number).
    fn drawn(r: &Replay, window: usize) -> std::collections::BTreeSet<u32> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut b = Batch::default();
        r.batch(&mut rng, 400, window, (4, 5), &mut b);
        b.value.iter().map(|&v| v as u32).collect()
    }

    #[test]
    fn a_window_draws_only_the_newest() {
        let numbered = |i: u64| Sample {
            value: i as f32,
            ..sample(i)
        };
        let mut r = Replay::new(6);
        for i in 0..4 {
            r.push(numbered(i));
        }
        // Not yet full: the newest are the last pushed.
        assert_eq!(drawn(&r, 2), [2, 3].into());
        assert_eq!(
            drawn(&r, 100),
            [0, 1, 2, 3].into(),
            "a window beyond the buffer is all of it"
        );
        for i in 4..9 {
            r.push(numbered(i));
        }
        // Full and wrapped (3..=8 kept, 6, 7, 8 at the front of the ring).
        assert_eq!(drawn(&r, 4), [5, 6, 7, 8].into());
        assert_eq!(drawn(&r, 1), [8].into());
        assert_eq!(drawn(&r, 6), (3..9).collect());
    }

    #[test]
    fn save_load_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Replay::new(4);
        for i in 0..6 {
            r.push(sample(i));
        }
        let p = dir.path().join("replay.bin");
        r.save(&p).unwrap();
        let back = Replay::load(&p, 4).unwrap();
        assert_eq!(
            back.in_order().copied().collect::<Vec<_>>(),
            r.in_order().copied().collect::<Vec<_>>()
        );
        // A smaller capacity keeps the newest.
        let small = Replay::load(&p, 2).unwrap();
        assert_eq!(small.in_order().map(|s| s.mine[0]).collect::<Vec<_>>(), vec![4, 5]);
        assert!(back.in_order().any(|s| s.has_reply()) && back.in_order().any(|s| !s.has_reply()));
        assert_eq!(&std::fs::read(&p).unwrap()[..8], MAGIC, "with reply targets, version 2");
        std::fs::write(&p, b"garbage!").unwrap();
        assert!(Replay::load(&p, 4).is_err());
    }

    /// `replay.bin` as version 1 wrote it (no reply targets), for samples
    /// `from..to`.
    fn version1(from: u64, to: u64) -> Vec<u8> {
        let mut out = MAGIC_V1.to_vec();
        out.extend_from_slice(&(to - from).to_le_bytes());
        for i in from..to {
            let s = sample(i);
            for x in s.mine.iter().chain(s.theirs.iter()) {
                out.extend_from_slice(&x.to_le_bytes());
            }
            for p in s.policy {
                out.extend_from_slice(&p.to_le_bytes());
            }
            out.extend_from_slice(&s.value.to_le_bytes());
        }
        out
    }

    /// A buffer saved before reply targets existed loads as it was, with
    /// none; saved again, still without any, it is the same version-1 file
    /// byte for byte.
    #[test]
    fn a_version_1_buffer_loads_without_reply_targets() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("replay.bin");
        std::fs::write(&p, version1(0, 6)).unwrap();
        let old = Replay::load(&p, 10).unwrap();
        let want: Vec<Sample> = (0..6)
            .map(|i| Sample {
                reply: [0.0; MAX_SIDE],
                ..sample(i)
            })
            .collect();
        assert_eq!(old.in_order().copied().collect::<Vec<_>>(), want);
        old.save(&p).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), version1(0, 6));
        let again = Replay::load(&p, 10).unwrap();
        assert_eq!(again.in_order().copied().collect::<Vec<_>>(), want);
        // Cut short, it is an error, not a shorter buffer.
        let bytes = version1(0, 6);
        std::fs::write(&p, &bytes[..bytes.len() - 2]).unwrap();
        assert!(Replay::load(&p, 10).is_err());
    }

    #[test]
    fn batches_mirror_about_half_the_time() {
        let mut r = Replay::new(10);
        // One asymmetric sample: a piece in the bottom-left corner, policy on column 0.
        let mut policy = [0f32; MAX_SIDE];
        policy[0] = 1.0;
        // The reply target on column 1 (flipped: column 3).
        let mut reply = [0f32; MAX_SIDE];
        reply[1] = 1.0;
        r.push(Sample {
            mine: [1, 0, 0, 0],
            theirs: [0; 4],
            policy,
            value: 1.0,
            reply,
        });
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut b = Batch::default();
        r.batch(&mut rng, 200, usize::MAX, (4, 5), &mut b);
        let (x, p, v) = (&b.planes, &b.policy, &b.value);
        assert_eq!(b.reply.len(), 200 * 5);
        let mut mirrored = 0;
        for i in 0..200 {
            let planes = &x[i * 60..(i + 1) * 60];
            let pol = &p[i * 5..(i + 1) * 5];
            let reply = &b.reply[i * 5..(i + 1) * 5];
            if planes[0] == 1.0 {
                assert_eq!(pol[0], 1.0);
                assert_eq!(reply, &[0.0, 1.0, 0.0, 0.0, 0.0]);
            } else {
                assert_eq!(planes[4 * 3], 1.0, "the piece moved to column 4");
                assert_eq!(pol[4], 1.0, "and so did the policy");
                assert_eq!(reply, &[0.0, 0.0, 0.0, 1.0, 0.0], "and the reply");
                mirrored += 1;
            }
        }
        assert!((60..140).contains(&mirrored), "{mirrored}");
        assert!(v.iter().all(|&z| z == 1.0));
    }
}
