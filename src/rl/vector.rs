//! Many two-player games stepped together for learning agents (the Python
//! package's `VectorEnv`): actions in, observations, masks and rewards out,
//! written straight into the caller's buffers.
//!
//! The games are the searches' bitboards ([`Position`]): the same rules as
//! the referee's `game::Game` (the tests below play both side by side), at
//! tens of nanoseconds a move. An env whose game ends restarts in the same
//! step, and the ended game's moves are reported beside it. With an
//! opponent (any in-process player kind), each step is the agent's move and
//! the opponent's reply; the agent moves first in an env's even-numbered
//! games and second in the others.

use crate::game::bitboard::{on_width, with_width, Bits, ByWidth, Geometry, PerWidth, Position, Status};
use crate::game::board::BoardError;
use crate::game::{Answer, Board, BoardConfig, DEFAULT_LETTERS};
use crate::players::{BuildError, FitError, Strategy, TurnView};
use crate::util::handoff::Helpers;
use crate::util::seed;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// Why a step was refused; nothing was played.
/// Why the envs cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum VecEnvError {
    #[error("num_envs must be at least 1")]
    NoEnvs,
    /// The board shape is not one the game allows.
    #[error("{0}")]
    Board(#[from] BoardError),
    /// The opponent cannot be built.
    #[error(transparent)]
    Opponent(#[from] BuildError),
    /// The opponent cannot play on the board.
    #[error(transparent)]
    Fit(#[from] FitError),
    /// An opponent's opening move would win before the agent plays.
    #[error("with an opponent, win_length must be at least 2")]
    WinLengthOne,
    /// The helper threads cannot start (in the system's words).
    #[error("{0}")]
    Threads(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    #[error("env {env}: column {column} is out of range (0..{cols})")]
    OutOfRange { env: usize, column: i64, cols: usize },
    #[error("env {env}: column {column} is full")]
    Full { env: usize, column: usize },
    #[error("{got} actions for {envs} envs")]
    Count { got: usize, envs: usize },
    #[error("env {env}: the opponent answered {answer} (not a legal column)")]
    Opponent { env: usize, answer: String },
}

/// The buffers one step writes, for `n` envs: `obs` (n·rows·cols·2, row 0
/// the top row, channel 0 the pieces of the side to move), `mask` (n·cols),
/// `rewards`, `terminated` (n each), and for envs whose game ended,
/// `final_moves` (n·rows·cols, padded with −1) and `final_len` (n).
pub struct StepOut<'a> {
    pub obs: &'a mut [i8],
    pub mask: &'a mut [i8],
    pub rewards: &'a mut [f32],
    pub terminated: &'a mut [bool],
    pub final_moves: &'a mut [i8],
    pub final_len: &'a mut [i32],
}

impl<'a> StepOut<'a> {
    /// The first `k` envs' part and the rest.
    fn split(self, k: usize, cells: usize, cols: usize) -> (StepOut<'a>, StepOut<'a>) {
        let (o1, o2) = self.obs.split_at_mut(k * cells * 2);
        let (m1, m2) = self.mask.split_at_mut(k * cols);
        let (r1, r2) = self.rewards.split_at_mut(k);
        let (t1, t2) = self.terminated.split_at_mut(k);
        let (f1, f2) = self.final_moves.split_at_mut(k * cells);
        let (l1, l2) = self.final_len.split_at_mut(k);
        (
            StepOut {
                obs: o1,
                mask: m1,
                rewards: r1,
                terminated: t1,
                final_moves: f1,
                final_len: l1,
            },
            StepOut {
                obs: o2,
                mask: m2,
                rewards: r2,
                terminated: t2,
                final_moves: f2,
                final_len: l2,
            },
        )
    }
}

/// One env: its game, the moves so far, its own random stream, and which
/// game of this env it is (the agent moves second in odd ones).
#[derive(Clone)]
struct Slot<B: Bits> {
    pos: Position<B>,
    moves: Vec<u8>,
    /// The observation from each seat's view, kept up to date move by move:
    /// a step copies one instead of drawing the board again.
    views: [Vec<i8>; 2],
    rng: Pcg64Mcg,
    game: u64,
}

impl<B: Bits> Slot<B> {
    fn new(cells: usize, rng: Pcg64Mcg) -> Self {
        Slot {
            pos: Position::empty(),
            moves: Vec::with_capacity(cells),
            views: [vec![0; cells * 2], vec![0; cells * 2]],
            rng,
            game: 0,
        }
    }

    /// An empty board.
    fn clear(&mut self) {
        self.pos = Position::empty();
        self.moves.clear();
        self.views[0].fill(0);
        self.views[1].fill(0);
    }

    /// Plays a legal column for the side to move.
    fn play(&mut self, geo: &Geometry<B>, col: usize) -> Status {
        let (rows, cols) = (geo.cfg.rows, geo.cfg.cols);
        let seat = self.moves.len() % 2;
        let at = ((rows - 1 - self.pos.heights[col] as usize) * cols + col) * 2;
        self.views[seat][at] = 1;
        self.views[1 - seat][at + 1] = 1;
        let (next, status) = self.pos.play(geo, col);
        self.pos = next;
        self.moves.push(col as u8);
        status
    }
}

/// The envs of one board width.
struct Envs<B: Bits> {
    geo: Geometry<B>,
    slots: Vec<Slot<B>>,
}

struct EnvsAt;
impl PerWidth for EnvsAt {
    type At<B: Bits> = Envs<B>;
}

/// `n` games on one board, with an optional opponent.
pub struct VecEnv {
    cfg: BoardConfig,
    seed: u64,
    envs: ByWidth<EnvsAt>,
    /// One opponent per chunk of envs (a chunk per thread), or none.
    opponents: Vec<Box<dyn Strategy>>,
    /// The threads beyond the caller's (see `util::handoff`: a step is too
    /// short to wake a sleeping thread for).
    helpers: Option<Helpers>,
}

/// A chunk's opponent, if any (the boxed players are `'static`).
type Opp<'a> = Option<&'a mut (dyn Strategy + 'static)>;

/// Below this many envs a thread, splitting a step costs more than it
/// saves. Without an opponent a step is a few tens of nanoseconds an env,
/// and waking a second thread (and sharing the memory bus) cost more than
/// it gave up to 8,192 envs on 2 cores (benches/python); an opponent's
/// reply is search, worth a thread from a few dozen envs.
const MIN_ENVS_PER_THREAD: usize = 16_384;
const MIN_ENVS_PER_THREAD_WITH_OPPONENT: usize = 32;

impl VecEnv {
    /// `n` envs on `cfg`; `opponent` builds one opponent per thread (each
    /// is told a new seed before every move, so its moves do not depend on
    /// which thread made them); `threads` 0 is one per core where splitting
    /// pays (see [`MIN_ENVS_PER_THREAD`]).
    pub fn new(
        n: usize,
        cfg: BoardConfig,
        seed: u64,
        opponent: Option<&dyn Fn() -> Result<Box<dyn Strategy>, BuildError>>,
        threads: usize,
    ) -> Result<VecEnv, VecEnvError> {
        if n == 0 {
            return Err(VecEnvError::NoEnvs);
        }
        cfg.validate()?;
        let per_thread = match opponent {
            Some(_) => MIN_ENVS_PER_THREAD_WITH_OPPONENT,
            None => MIN_ENVS_PER_THREAD,
        };
        // 0: one per core where it pays; a number given is taken as given.
        let threads = match threads {
            0 => crate::util::cores().min(n.div_ceil(per_thread)),
            t => t.min(n),
        }
        .max(1);
        let opponents = match opponent {
            Some(make) => (0..threads).map(|_| make()).collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        for o in &opponents {
            o.fits(cfg)?;
        }
        if !opponents.is_empty() && cfg.win_length == 1 {
            // The opponent's opening move would win before the agent plays.
            return Err(VecEnvError::WinLengthOne);
        }
        // The calling thread steps the first chunk itself; helpers the rest.
        let helpers = (threads > 1)
            .then(|| Helpers::new(threads - 1))
            .transpose()
            .map_err(|e| VecEnvError::Threads(e.to_string()))?;
        let envs = with_width!(cfg, B => B::by_width::<EnvsAt>(Envs::<B> {
            geo: Geometry::new(cfg),
            slots: Vec::new(),
        }));
        let mut env = VecEnv {
            cfg,
            seed,
            envs,
            opponents,
            helpers,
        };
        env.resize(n);
        Ok(env)
    }

    fn resize(&mut self, n: usize) {
        let seed = self.seed;
        on_width!(&mut self.envs, e => {
            let cells = e.geo.cfg.cells();
            e.slots = (0..n)
                .map(|i| Slot::new(cells, Pcg64Mcg::seed_from_u64(seed::derive(seed, i as u64, seed::VECTOR_ACTIONS))))
                .collect()
        });
    }

    pub fn len(&self) -> usize {
        on_width!(&self.envs, e => e.slots.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn config(&self) -> BoardConfig {
        self.cfg
    }

    /// Threads a step uses.
    pub fn threads(&self) -> usize {
        self.helpers.as_ref().map_or(1, |h| h.len() + 1)
    }

    /// Starts every env's game over; with `seed`, as a new env of that seed
    /// would (random streams and game numbers restart too).
    pub fn reset(&mut self, seed: Option<u64>, out: StepOut<'_>) -> Result<(), StepError> {
        let n = self.len();
        if let Some(s) = seed {
            self.seed = s;
            self.resize(n);
        }
        let seed = self.seed;
        let cfg = self.cfg;
        let threads = self.threads();
        let opponents = &mut self.opponents;
        let helpers = self.helpers.as_mut();
        on_width!(&mut self.envs, e => {
            let geo = &e.geo;
            for_chunks(helpers, threads, &mut e.slots, opponents, out, cfg, |slots, mut opp, out, first| {
                for (k, slot) in slots.iter_mut().enumerate() {
                    if has_begun(slot, opp.is_some()) {
                        slot.game += 1;
                    }
                    out.rewards[k] = 0.0;
                    out.terminated[k] = false;
                    no_final_game(out, k, cfg.cells());
                    start_game(geo, slot, opp.as_deref_mut(), seed, first + k)?;
                    write_view(geo, slot, k, out);
                }
                Ok(())
            })
        })
    }

    /// Plays `actions[i]` in env `i` (and the opponent's reply), restarting
    /// ended games; refuses the whole step, playing nothing, if any action
    /// is out of range or on a full column.
    pub fn step(&mut self, actions: &[i64], out: StepOut<'_>) -> Result<(), StepError> {
        let n = self.len();
        if actions.len() != n {
            return Err(StepError::Count {
                got: actions.len(),
                envs: n,
            });
        }
        let cols = self.cfg.cols;
        on_width!(&self.envs, e => {
            for (env, (&a, slot)) in actions.iter().zip(&e.slots).enumerate() {
                if a < 0 || a >= cols as i64 {
                    return Err(StepError::OutOfRange { env, column: a, cols });
                }
                if !slot.pos.is_legal(&e.geo, a as usize) {
                    return Err(StepError::Full { env, column: a as usize });
                }
            }
        });
        let seed = self.seed;
        let cfg = self.cfg;
        let threads = self.threads();
        let opponents = &mut self.opponents;
        let helpers = self.helpers.as_mut();
        on_width!(&mut self.envs, e => {
            let geo = &e.geo;
            for_chunks(helpers, threads, &mut e.slots, opponents, out, cfg, |slots, mut opp, out, first| {
                for (k, slot) in slots.iter_mut().enumerate() {
                    step_one(geo, slot, actions[first + k] as usize, opp.as_deref_mut(), seed, first + k, k, out)?;
                    write_view(geo, slot, k, out);
                }
                Ok(())
            })
        })
    }

    /// A uniformly drawn legal column in every env, from each env's own stream.
    pub fn random_actions(&mut self, out: &mut [i64]) {
        on_width!(&mut self.envs, e => {
            for (slot, a) in e.slots.iter_mut().zip(out.iter_mut()) {
                *a = slot.pos.random_legal_column(&e.geo, &mut slot.rng) as i64;
            }
        })
    }

    /// The columns played so far in env `i`'s game.
    pub fn moves(&self, i: usize) -> Option<Vec<usize>> {
        on_width!(&self.envs, e => e.slots.get(i).map(|s| s.moves.iter().map(|&c| c as usize).collect()))
    }
}

/// Whether a reset moves on to the env's next game: the agent has moved in
/// it. A reset right after construction, a seeded reset, or a second reset
/// (the opponent's opening move does not count) keeps the game's number, so
/// who moves first does not change.
fn has_begun<B: Bits>(slot: &Slot<B>, with_opponent: bool) -> bool {
    slot.moves.len() > usize::from(with_opponent && slot.game % 2 == 1)
}

/// Runs `work` over the slots in one chunk per thread (the opponent of
/// chunk `t` is `opponents[t]`), with each chunk's part of `out`; `work`
/// gets the chunk's first env index.
#[allow(clippy::too_many_arguments)]
fn for_chunks<B: Bits>(
    helpers: Option<&mut Helpers>,
    threads: usize,
    slots: &mut [Slot<B>],
    opponents: &mut [Box<dyn Strategy>],
    out: StepOut<'_>,
    cfg: BoardConfig,
    work: impl Fn(&mut [Slot<B>], Opp<'_>, &mut StepOut<'_>, usize) -> Result<(), StepError> + Sync,
) -> Result<(), StepError> {
    let n = slots.len();
    let chunk = n.div_ceil(threads);
    let (cells, cols) = (cfg.cells(), cfg.cols);
    let mut parts = Vec::with_capacity(threads);
    let mut rest_out = out;
    let mut rest_slots = slots;
    let mut opps = opponents.iter_mut();
    let mut first = 0;
    while !rest_slots.is_empty() {
        let k = chunk.min(rest_slots.len());
        let (s, s2) = rest_slots.split_at_mut(k);
        let (o, o2) = rest_out.split(k, cells, cols);
        parts.push((s, opps.next(), o, first));
        rest_slots = s2;
        rest_out = o2;
        first += k;
    }
    let run = |part: Part<'_, B>| {
        let (s, opp, mut o, first) = part;
        work(s, opp.map(|b| b.as_mut()), &mut o, first)
    };
    match helpers {
        Some(helpers) if parts.len() > 1 => {
            let mut parts = parts.into_iter();
            let head = parts.next().expect("two parts or more");
            let run = &run;
            let mut others: Vec<Pending<'_, B>> = parts.map(|p| (Some(p), Ok(()))).collect();
            let mut jobs: Vec<_> = others
                .iter_mut()
                .map(|(part, result)| {
                    move || {
                        if let Some(p) = part.take() {
                            *result = run(p);
                        }
                    }
                })
                .collect();
            let mut refs: Vec<&mut (dyn FnMut() + Send)> =
                jobs.iter_mut().map(|j| j as &mut (dyn FnMut() + Send)).collect();
            let mine = helpers.run(&mut refs, || run(head));
            drop(refs);
            drop(jobs);
            others.into_iter().try_for_each(|(_, r)| r).and(mine)
        }
        _ => parts.into_iter().try_for_each(run),
    }
}

/// A helper's part before it runs, and its result after.
type Pending<'a, B> = (Option<Part<'a, B>>, Result<(), StepError>);

/// One thread's share of a step: its slots, its opponent, its slice of the
/// output buffers and the index of its first env.
type Part<'a, B> = (&'a mut [Slot<B>], Option<&'a mut Box<dyn Strategy>>, StepOut<'a>, usize);

/// Starts the slot's next game; when the agent moves second in it, the
/// opponent makes the first move.
fn start_game<B: Bits>(
    geo: &Geometry<B>,
    slot: &mut Slot<B>,
    opp: Opp<'_>,
    seed: u64,
    env: usize,
) -> Result<(), StepError> {
    slot.clear();
    if let Some(opp) = opp {
        if slot.game % 2 == 1 {
            let col = opponent_move(geo, slot, opp, seed, env)?;
            // On a board where one move wins, the agent loses before it
            // plays: the game ends as it starts; the next one is the agent's.
            if slot.play(geo, col) != Status::Ongoing {
                slot.clear();
            }
        }
    }
    Ok(())
}

/// The opponent's column in the slot's position, checked.
fn opponent_move<B: Bits>(
    geo: &Geometry<B>,
    slot: &Slot<B>,
    opp: &mut dyn Strategy,
    seed: u64,
    env: usize,
) -> Result<usize, StepError> {
    let cfg = geo.cfg;
    let mut board = Board::new(cfg);
    for (i, &c) in slot.moves.iter().enumerate() {
        let _ = board.drop_piece(c as usize, i % 2);
    }
    let moves: Vec<usize> = slot.moves.iter().map(|&c| c as usize).collect();
    let view = TurnView {
        game: slot.game + 1,
        board,
        seat: moves.len() % 2,
        seats: 2,
        letters: DEFAULT_LETTERS.to_vec(),
        moves,
        error: None,
        tries_left: 1,
    };
    // A seed per env, game and ply: the move does not depend on which
    // thread's opponent made it or on the games before.
    let index = (env as u64) << 32 | (slot.game << 12) | slot.moves.len() as u64;
    opp.new_game(seed::derive(seed, index, seed::VECTOR_OPPONENT));
    match opp.choose(&view) {
        Answer::Column(c) if c >= 0 && slot.pos.is_legal(geo, c as usize) => Ok(c as usize),
        Answer::Column(c) => Err(StepError::Opponent {
            env,
            answer: format!("column {c}"),
        }),
        Answer::Malformed(why) => Err(StepError::Opponent { env, answer: why }),
    }
}

/// One env's step: the agent's move, then the opponent's reply; an ended
/// game is reported in `out` (at `k`) and the next one started.
#[allow(clippy::too_many_arguments)]
fn step_one<B: Bits>(
    geo: &Geometry<B>,
    slot: &mut Slot<B>,
    col: usize,
    mut opp: Opp<'_>,
    seed: u64,
    env: usize,
    k: usize,
    out: &mut StepOut<'_>,
) -> Result<(), StepError> {
    let status = slot.play(geo, col);
    let mut reward = match status {
        Status::Won => 1.0,
        _ => 0.0,
    };
    let mut over = status != Status::Ongoing;
    if !over {
        if let Some(o) = opp.as_deref_mut() {
            let reply = opponent_move(geo, slot, o, seed, env)?;
            let status = slot.play(geo, reply);
            over = status != Status::Ongoing;
            if status == Status::Won {
                reward = -1.0;
            }
        }
    }
    out.rewards[k] = reward;
    out.terminated[k] = over;
    let cells = geo.cfg.cells();
    if over {
        let fm = &mut out.final_moves[k * cells..(k + 1) * cells];
        out.final_len[k] = slot.moves.len() as i32;
        for (dst, &c) in fm.iter_mut().zip(slot.moves.iter()) {
            *dst = c as i8;
        }
        fm[slot.moves.len()..].fill(-1);
        slot.game += 1;
        start_game(geo, slot, opp, seed, env)?;
    } else {
        no_final_game(out, k, cells);
    }
    Ok(())
}

/// Says in `out` that no game of env `k` ended in this call.
fn no_final_game(out: &mut StepOut<'_>, k: usize, cells: usize) {
    out.final_len[k] = 0;
    out.final_moves[k * cells..(k + 1) * cells].fill(-1);
}

/// Writes env `k`'s observation (from the side to move) and action mask.
fn write_view<B: Bits>(geo: &Geometry<B>, slot: &Slot<B>, k: usize, out: &mut StepOut<'_>) {
    let (rows, cols) = (geo.cfg.rows, geo.cfg.cols);
    let n = rows * cols * 2;
    out.obs[k * n..(k + 1) * n].copy_from_slice(&slot.views[slot.moves.len() % 2]);
    let legal = slot.pos.legal_bytes(geo);
    for (m, &l) in out.mask[k * cols..(k + 1) * cols].iter_mut().zip(&legal) {
        *m = l as i8;
    }
}

#[cfg(test)]
mod tests;
