//! One self-play worker's batch of games as a file: the whole protocol
//! between distributed workers and their trainer (docs/distributed.md).
//!
//! Layout: the magic `C4GAMES2`, a little-endian `u32` length and a JSON
//! header ([`BatchHeader`]: run, worker, batch number, seed, board, network
//! shape and the iteration of the network that played), then per game its
//! moves, winner and training positions (each with its reply target and
//! stamped with the network iteration that searched it), and last a CRC-32
//! of everything before it. Files of version 1 (`C4GAMES1`, from before
//! reply targets) are still read, their positions without reply targets,
//! so a worker not yet upgraded does not lose its games.
//! Workers write the file atomically ([`crate::util::write_atomic`]); the
//! checksum and the length checks still catch a file damaged on its way
//! (a copied-in half file, garbage, another program's bytes), which the
//! trainer then sets aside instead of training on it. Pure: bytes in and out.

use crate::az::encode::Sample;
use crate::az::meta::BoardMeta;
use crate::az::network::NetShape;
use crate::game::MAX_SIDE;
use serde::{Deserialize, Serialize};

const MAGIC: &[u8; 8] = b"C4GAMES2";
const MAGIC_V1: &[u8; 8] = b"C4GAMES1";
/// The largest header a reader accepts, so a damaged length cannot make it allocate.
const MAX_HEADER: usize = 64 * 1024;
/// Bytes of one position: 8 words of cells, `cols` policy floats, value,
/// `cols` reply floats (not in version 1), iteration, ply.
fn sample_bytes(cols: usize, with_reply: bool) -> usize {
    64 + 4 * cols + 4 + if with_reply { 4 * cols } else { 0 } + 4 + 2
}

/// What a batch file says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchHeader {
    /// The run's id (`run.json` in its `out`): files from another run are refused.
    pub run: String,
    pub worker: String,
    /// From 1, per worker.
    pub batch: u64,
    /// The seed its games derive from (run seed, worker name, batch number).
    pub seed: u64,
    pub board: BoardMeta,
    pub network: NetShape,
    /// The iteration of the network that played these games.
    pub net_iteration: u32,
    pub games: u32,
    pub positions: u64,
    /// What playing the batch cost, for the trainer's metrics.
    #[serde(default)]
    pub simulations: u64,
    #[serde(default)]
    pub exact_values: u64,
    #[serde(default)]
    pub seconds: f64,
    /// CPU seconds the worker process used on the batch.
    #[serde(default)]
    pub cpu_seconds: f64,
}

/// One game of a batch: enough to replay it (moves from its seed) and to train on it.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchGame {
    /// Its number within the batch (from 0), which fixes its randomness.
    pub index: u32,
    pub moves: Vec<u8>,
    /// Seat that won (0 moved first), `None` for a draw.
    pub winner: Option<u8>,
    /// Training positions with the network iteration that searched each and its ply.
    pub samples: Vec<(Sample, u32, u16)>,
}

/// A whole batch file, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    pub header: BatchHeader,
    pub games: Vec<BatchGame>,
}

impl Batch {
    /// The file; as `replay.bin`, version 1 (no reply rows) while no
    /// position has a reply target, so the workers of a run without a reply
    /// head write files of the old size.
    pub fn encode(&self) -> Vec<u8> {
        let with_reply = self
            .games
            .iter()
            .flat_map(|g| &g.samples)
            .any(|(s, _, _)| s.has_reply());
        self.encode_version(with_reply)
    }

    /// The file in version 2 (`with_reply`) or version 1, with no reply
    /// rows.
    fn encode_version(&self, with_reply: bool) -> Vec<u8> {
        let cols = self.header.board.cols;
        let header = serde_json::to_vec(&self.header).expect("a header serialises");
        let size = 64 + header.len() + self.header.positions as usize * sample_bytes(cols, with_reply);
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(if with_reply { MAGIC } else { MAGIC_V1 });
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        for g in &self.games {
            out.extend_from_slice(&g.index.to_le_bytes());
            out.push(g.winner.unwrap_or(u8::MAX));
            out.extend_from_slice(&(g.moves.len() as u16).to_le_bytes());
            out.extend_from_slice(&g.moves);
            out.extend_from_slice(&(g.samples.len() as u32).to_le_bytes());
            for (s, it, ply) in &g.samples {
                for w in s.mine.iter().chain(s.theirs.iter()) {
                    out.extend_from_slice(&w.to_le_bytes());
                }
                for p in &s.policy[..cols] {
                    out.extend_from_slice(&p.to_le_bytes());
                }
                out.extend_from_slice(&s.value.to_le_bytes());
                if with_reply {
                    for p in &s.reply[..cols] {
                        out.extend_from_slice(&p.to_le_bytes());
                    }
                }
                out.extend_from_slice(&it.to_le_bytes());
                out.extend_from_slice(&ply.to_le_bytes());
            }
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads a batch file; any damage (truncation, garbage, a wrong count)
    /// is an error that says what is wrong, never a panic or a huge allocation.
    pub fn decode(bytes: &[u8]) -> Result<Batch, BatchError> {
        let (with_reply, mut r) = open_body(bytes)?;
        let n = r.u32()? as usize;
        if n > MAX_HEADER {
            return Err(BatchError::HeaderSize(n));
        }
        let header: BatchHeader = serde_json::from_slice(r.take(n)?).map_err(|e| BatchError::Header(e.to_string()))?;
        let cols = header.board.cols;
        if cols == 0 || cols > MAX_SIDE {
            return Err(BatchError::Columns(cols));
        }
        let mut games = Vec::new();
        let mut positions = 0u64;
        for _ in 0..header.games {
            let game = r.game(&header.board, with_reply)?;
            positions += game.samples.len() as u64;
            games.push(game);
        }
        if !r.bytes.is_empty() {
            return Err(BatchError::Trailing(r.bytes.len()));
        }
        if positions != header.positions {
            return Err(BatchError::Positions {
                header: header.positions,
                found: positions,
            });
        }
        Ok(Batch { header, games })
    }
}

/// The body of a batch file after its magic, once the magic and the
/// checksum are right; `true` for a file with reply targets (`C4GAMES2`).
fn open_body(bytes: &[u8]) -> Result<(bool, Reader<'_>), BatchError> {
    if bytes.len() < MAGIC.len() + 8 {
        return Err(BatchError::NotABatch);
    }
    let with_reply = match &bytes[..MAGIC.len()] {
        m if m == MAGIC => true,
        m if m == MAGIC_V1 => false,
        _ => return Err(BatchError::NotABatch),
    };
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err(BatchError::Checksum);
    }
    Ok((
        with_reply,
        Reader {
            bytes: &body[MAGIC.len()..],
        },
    ))
}

/// Why a batch file was refused: damage, or content no network should
/// train on. Said as the ledger and the log write it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BatchError {
    #[error("not a c4sim game batch (no C4GAMES2 or C4GAMES1 header)")]
    NotABatch,
    #[error("damaged or truncated (its checksum does not match)")]
    Checksum,
    #[error("a header of {0} bytes (at most {MAX_HEADER})")]
    HeaderSize(usize),
    #[error("its header is not readable: {0}")]
    Header(String),
    #[error("a board of {0} columns")]
    Columns(usize),
    #[error("ends in the middle of a game")]
    Truncated,
    #[error("game {game} claims {count} positions, more than the file holds")]
    Overlong { game: u32, count: usize },
    #[error("game {game}: {why}")]
    Unfit { game: u32, why: Unfit },
    #[error("{0} bytes after its last game")]
    Trailing(usize),
    #[error("its header says {header} positions, its games hold {found}")]
    Positions { header: u64, found: u64 },
}

/// A recorded position no network should train on.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum Unfit {
    #[error("a cell holds two pieces")]
    TwoPieces,
    #[error("a piece outside the board")]
    OffBoard,
    #[error("a value target of {0}")]
    Value(f32),
    #[error("a policy share that is negative or not a number")]
    Share,
    #[error("policy shares that sum to {0}")]
    Sum(f32),
    #[error("reply target shares that are negative, not numbers, or sum to {0} (neither 0 nor 1)")]
    Reply(f32),
}

/// A position a network could train on: cells on the board and not
/// doubly filled, a finite value in \[-1, 1\], a policy of shares that sum
/// to 1, a reply target of shares that sum to 1 or all zero (none). The
/// checksum catches damage; this catches a file written wrong, before one
/// NaN reaches the weights.
fn sane(s: &Sample, board: &BoardMeta) -> Result<(), Unfit> {
    let cells = board.rows * board.cols;
    for i in 0..4 {
        if s.mine[i] & s.theirs[i] != 0 {
            return Err(Unfit::TwoPieces);
        }
        let beyond = |w: u64| {
            let first = i * 64;
            if cells >= first + 64 {
                false
            } else if cells <= first {
                w != 0
            } else {
                w >> (cells - first) != 0
            }
        };
        if beyond(s.mine[i]) || beyond(s.theirs[i]) {
            return Err(Unfit::OffBoard);
        }
    }
    if !s.value.is_finite() || !(-1.0..=1.0).contains(&s.value) {
        return Err(Unfit::Value(s.value));
    }
    let policy = &s.policy[..board.cols];
    if policy.iter().any(|p| !p.is_finite() || *p < 0.0) {
        return Err(Unfit::Share);
    }
    let sum: f32 = policy.iter().sum();
    if (sum - 1.0).abs() > 1e-3 {
        return Err(Unfit::Sum(sum));
    }
    let reply = &s.reply[..board.cols];
    let sum: f32 = reply.iter().sum();
    if reply.iter().any(|p| !p.is_finite() || *p < 0.0) || (sum != 0.0 && (sum - 1.0).abs() > 1e-3) {
        return Err(Unfit::Reply(sum));
    }
    Ok(())
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// One game: its index, winner, moves and samples, each sample checked
    /// ([`sane`]) against `board`.
    fn game(&mut self, board: &BoardMeta, with_reply: bool) -> Result<BatchGame, BatchError> {
        let index = self.u32()?;
        let winner = match self.take(1)?[0] {
            u8::MAX => None,
            w => Some(w),
        };
        let n = self.u16()? as usize;
        let moves = self.take(n)?.to_vec();
        let count = self.u32()? as usize;
        // Checked against what is left before allocating.
        if count.saturating_mul(sample_bytes(board.cols, with_reply)) > self.bytes.len() {
            return Err(BatchError::Overlong { game: index, count });
        }
        let mut samples = Vec::with_capacity(count);
        for _ in 0..count {
            let (s, it, ply) = self.sample(board.cols, with_reply)?;
            sane(&s, board).map_err(|why| BatchError::Unfit { game: index, why })?;
            samples.push((s, it, ply));
        }
        Ok(BatchGame {
            index,
            moves,
            winner,
            samples,
        })
    }

    /// One sample as written: the position's words, `cols` policy targets,
    /// the value, the reply targets when the file has them, then the
    /// network iteration and the ply.
    fn sample(&mut self, cols: usize, with_reply: bool) -> Result<(Sample, u32, u16), BatchError> {
        let mut s = Sample {
            mine: [0; 4],
            theirs: [0; 4],
            policy: [0.0; MAX_SIDE],
            value: 0.0,
            reply: [0.0; MAX_SIDE],
        };
        for w in s.mine.iter_mut().chain(s.theirs.iter_mut()) {
            *w = self.u64()?;
        }
        for p in &mut s.policy[..cols] {
            *p = self.f32()?;
        }
        s.value = self.f32()?;
        if with_reply {
            for p in &mut s.reply[..cols] {
                *p = self.f32()?;
            }
        }
        let it = self.u32()?;
        let ply = self.u16()?;
        Ok((s, it, ply))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], BatchError> {
        if n > self.bytes.len() {
            return Err(BatchError::Truncated);
        }
        let (a, b) = self.bytes.split_at(n);
        self.bytes = b;
        Ok(a)
    }
    fn u16(&mut self) -> Result<u16, BatchError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, BatchError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, BatchError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn f32(&mut self) -> Result<f32, BatchError> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample_batch(games: u32, per_game: usize) -> Batch {
        let board = BoardMeta {
            rows: 6,
            cols: 7,
            win_length: 4,
        };
        let network = NetShape {
            rows: 6,
            cols: 7,
            blocks: 1,
            channels: 8,
            value_hidden: 8,
            reply_head: false,
        };
        let games: Vec<BatchGame> = (0..games)
            .map(|g| BatchGame {
                index: g,
                moves: vec![3, 3, 2, g as u8 % 7],
                winner: if g % 3 == 0 { None } else { Some((g % 2) as u8) },
                samples: (0..per_game)
                    .map(|i| {
                        let mut policy = [0.0; MAX_SIDE];
                        policy[i % 7] = 1.0;
                        // A reply target on all but every third position.
                        let mut reply = [0.0; MAX_SIDE];
                        if i % 3 != 2 {
                            reply[(i + 3) % 7] = 0.5;
                            reply[(i + 4) % 7] = 0.5;
                        }
                        let s = Sample {
                            mine: [i as u64, 0, 0, 0],
                            theirs: [(g as u64) << 30 | 1 << 41, 0, 0, 0],
                            policy,
                            value: if i % 2 == 0 { 1.0 } else { -0.5 },
                            reply,
                        };
                        (s, 7, i as u16)
                    })
                    .collect(),
            })
            .collect();
        let positions = games.iter().map(|g| g.samples.len() as u64).sum();
        Batch {
            header: BatchHeader {
                run: "run-1".into(),
                worker: "w1".into(),
                batch: 3,
                seed: 99,
                board,
                network,
                net_iteration: 7,
                games: games.len() as u32,
                positions,
                simulations: 1000,
                exact_values: 2,
                seconds: 0.5,
                cpu_seconds: 0.4,
            },
            games,
        }
    }

    #[test]
    fn a_batch_comes_back_as_it_went() {
        let b = sample_batch(5, 11);
        let bytes = b.encode();
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(Batch::decode(&bytes).unwrap(), b);
        assert!(b.games[0].samples.iter().any(|(s, _, _)| s.has_reply()));
        let empty = sample_batch(0, 0);
        assert_eq!(Batch::decode(&empty.encode()).unwrap(), empty);
    }

    /// A file written before reply targets is read as it was, with none;
    /// its damage is still caught.
    #[test]
    fn a_version_1_batch_is_read_without_reply_targets() {
        let mut b = sample_batch(3, 5);
        let v1 = b.encode_version(false);
        assert_eq!(v1.len() + 3 * 5 * 7 * 4, b.encode().len(), "7 reply floats a position");
        for (s, _, _) in b.games.iter_mut().flat_map(|g| g.samples.iter_mut()) {
            s.reply = [0.0; MAX_SIDE];
        }
        assert_eq!(Batch::decode(&v1).unwrap(), b);
        assert_eq!(b.encode(), v1, "without reply targets a batch is written as version 1");
        for n in [v1.len() - 1, v1.len() - 9, v1.len() / 2] {
            assert!(Batch::decode(&v1[..n]).is_err(), "truncated to {n}");
        }
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused() {
        let bytes = sample_batch(2, 3).encode();
        for n in 0..bytes.len() {
            assert!(Batch::decode(&bytes[..n]).is_err(), "truncated to {n}");
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert!(Batch::decode(&bad).is_err(), "byte {i} flipped");
        }
        assert!(Batch::decode(b"hello, this is not a batch file at all").is_err());
    }

    #[test]
    fn positions_no_network_should_learn_from_are_refused() {
        type Spoil = Box<dyn Fn(&mut Sample)>;
        let bad: Vec<(&str, Spoil)> = vec![
            ("NaN value", Box::new(|s| s.value = f32::NAN)),
            ("value 2", Box::new(|s| s.value = 2.0)),
            ("negative share", Box::new(|s| s.policy[0] = -1.0)),
            ("shares summing to 2", Box::new(|s| s.policy[0] = 1.0)),
            ("two pieces in a cell", Box::new(|s| s.theirs[0] |= s.mine[0] | 1)),
            ("a piece off the board", Box::new(|s| s.mine[0] |= 1 << 42)),
            ("a piece in a far word", Box::new(|s| s.theirs[2] = 1)),
            ("a NaN reply share", Box::new(|s| s.reply[1] = f32::NAN)),
            ("a negative reply share", Box::new(|s| s.reply[1] = -0.5)),
            ("reply shares summing to 1.5", Box::new(|s| s.reply[6] += 0.5)),
        ];
        for (what, spoil) in bad {
            let mut b = sample_batch(1, 2);
            b.games[0].samples[1].0.mine[0] = 1;
            spoil(&mut b.games[0].samples[1].0);
            let e = Batch::decode(&b.encode()).unwrap_err();
            assert!(matches!(e, BatchError::Unfit { game: 0, .. }), "{what}: {e}");
            assert!(e.to_string().starts_with("game 0: "), "{what}: {e}");
        }
    }

    #[test]
    fn counts_that_lie_are_refused_without_allocating() {
        // A valid checksum over a body whose game claims 2^32-1 positions.
        let mut b = sample_batch(1, 0);
        b.header.positions = 0;
        let mut bytes = b.encode();
        bytes.truncate(bytes.len() - 4);
        let at = bytes.len() - 4;
        bytes[at..].copy_from_slice(&u32::MAX.to_le_bytes());
        let crc = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        let e = Batch::decode(&bytes).unwrap_err();
        assert_eq!(
            e,
            BatchError::Overlong {
                game: 0,
                count: u32::MAX as usize
            }
        );
        assert!(e.to_string().contains("more than the file holds"), "{e}");
    }
}
