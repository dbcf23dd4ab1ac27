//! Self-play: many games advance at once, and the leaves their searches
//! reach go to the network in one batch.
//!
//! A worker owns `concurrent` game slots. Each round, every game runs its
//! search until it needs a network output (cache hits and terminal leaves
//! are resolved on the spot), the pending leaves are encoded side by side
//! and evaluated in one call, and each game takes its output and goes on.
//! A game whose search is complete picks its move (in proportion to visits
//! for the first `temperature_moves` plies, then the most visited), keeps
//! the visit distribution as the policy target, and reuses the subtree.
//!
//! Workers run on their own threads, one per core by default, each with
//! its own network evaluator and cache: on a CPU that keeps every core
//! busy with large products instead of synchronising on small ones. Game
//! `i` draws its randomness from `(seed, i)` alone, so the games do not
//! depend on how they are spread over workers or batched.

use super::exact::ExactValues;
use crate::az::encode::{encode, Sample, PLANES};
use crate::az::gumbel::{self, GumbelRoot, RootMove};
use crate::az::inference::{Cache, Evaluate};
use crate::az::mcts::{Leaf, Tree};
use crate::game::bitboard::{Bits, Geometry, Position, Status};
use crate::util::seed;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicU64, Ordering};

/// Self-play settings for one run of games.
#[derive(Clone, Copy, Debug)]
pub struct SelfPlayConfig {
    pub simulations: u32,
    pub c_puct: f32,
    pub dirichlet_alpha: f32,
    pub dirichlet_weight: f32,
    /// The root's priors become p^(1/T) before the noise (1: unchanged).
    pub root_prior_temperature: f32,
    pub temperature_moves: u32,
    /// Playout cap randomization (KataGo): each move is a full search
    /// (`simulations`, root noise, recorded as a training position) with
    /// this probability, else a fast one (`fast_simulations`, no noise, not
    /// recorded). Cheap moves let games reach their ends — and the value
    /// head its targets — for a fraction of the cost. 1 = every move full.
    pub full_search_share: f32,
    pub fast_simulations: u32,
    /// Value target `(1 − q_weight)·z + q_weight·q`: the game result `z`
    /// is noisy (one random game), the root's search value `q` is not, but
    /// is only as good as the network; mixing them learns faster.
    pub q_weight: f32,
    /// `q` is the value of the root's best move ([`Tree::best_move`]: a
    /// proven win, else the most visited) instead of the root's mean over
    /// all its visits, which the noise's and exploration's visits to
    /// poorer moves pull down. A proven root's value is exact either way.
    pub q_best_child: bool,
    /// Each game first plays k uniformly random moves, k drawn from
    /// `0..=random_opening_plies` (not searched, not recorded): games then
    /// also start from the odd positions that opening suites and people
    /// bring, which a network trained only on its own favourite openings
    /// has rarely seen.
    pub random_opening_plies: u32,
    /// After the opening, each move is with this chance a uniformly random
    /// legal move instead of the search's choice. Random openings taught
    /// the odd first moves; these take games into the lopsided middle
    /// games that people and weaker programs reach, where the network
    /// errs most (models/README.md, Part four). The position before a
    /// random move is still recorded with its search's targets; up to the
    /// game's last random move the value target is the search value q
    /// alone, as the result z then tells more of the random move than of
    /// the position.
    pub random_move_share: f32,
    /// Whether games give their samples reply targets (`Sample::reply`):
    /// only for a network with a reply head (`network.reply_head`), so a
    /// run without one keeps `replay.bin` at its version-1 size (a
    /// checkpoint is committed with the run).
    pub reply_targets: bool,
    /// Node budget of the perfect solver per recorded position (0: off):
    /// positions it proves get their exact result as value target instead
    /// of the mix of `z` and `q` ([`super::exact`]).
    pub exact_value_nodes: u64,
    /// Node budget for scoring every column of a position proven above (0:
    /// off): where all are proven, the policy target is the best columns.
    pub exact_policy_nodes: u64,
    /// Gumbel root search ([`crate::az::gumbel`]) instead of PUCT with
    /// Dirichlet noise at the root: Gumbel noise for the first
    /// `temperature_moves` plies, the halving's survivor played, the
    /// improved policy as target.
    pub gumbel: bool,
    /// KataGo's forced playouts with policy target pruning (`k`; 0: off):
    /// a full search's root owes each child `sqrt(k · prior · N)` visits,
    /// and the recorded policy target takes back those the child would not
    /// have had from PUCT ([`Tree::forced_root_column`],
    /// [`Tree::pruned_policy_target`]). Moves are still chosen by the raw
    /// visits. Not with `gumbel`.
    pub forced_playouts: f32,
    /// Games advanced at once by one worker (the largest network batch).
    pub concurrent: usize,
    /// Cached network outputs per worker (0: no cache).
    pub cache_size: usize,
}

impl SelfPlayConfig {
    /// A run's `train:` settings for a thread that plays `games` games:
    /// `self_play.concurrent_games` of them at once (0: 64 on a CPU, 256 on
    /// a GPU), never more than it has.
    pub fn from_settings(s: &crate::scenario::train::TrainSettings, on_cpu: bool, games: u64) -> Self {
        let concurrent = match s.self_play.concurrent_games {
            0 if on_cpu => 64,
            0 => 256,
            n => n as usize,
        }
        .min(games as usize)
        .max(1);
        SelfPlayConfig {
            simulations: s.mcts.simulations,
            c_puct: s.mcts.c_puct,
            dirichlet_alpha: s.mcts.dirichlet_alpha,
            dirichlet_weight: s.mcts.dirichlet_weight,
            root_prior_temperature: s.mcts.root_prior_temperature,
            temperature_moves: s.self_play.temperature_moves,
            full_search_share: s.self_play.full_search_share,
            fast_simulations: s.self_play.fast_simulations.unwrap_or(s.mcts.simulations),
            q_weight: s.self_play.q_weight,
            q_best_child: s.self_play.q_best_child,
            random_opening_plies: s.self_play.random_opening_plies,
            random_move_share: s.self_play.random_move_share,
            reply_targets: s.network.reply_head,
            exact_value_nodes: u64::from(s.self_play.exact_value_nodes),
            exact_policy_nodes: u64::from(s.self_play.exact_policy_nodes),
            gumbel: s.self_play.gumbel,
            forced_playouts: s.self_play.forced_playouts,
            concurrent,
            cache_size: s.self_play.cache_size as usize,
        }
    }
}

/// What a run of self-play did, for the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SelfPlayStats {
    pub games: u64,
    pub moves: u64,
    pub simulations: u64,
    /// Positions sent to the network.
    pub evaluations: u64,
    /// Network calls (batches).
    pub batches: u64,
    pub cache_lookups: u64,
    pub cache_hits: u64,
    /// Recorded positions whose value target is exact.
    pub exact_values: u64,
    /// Recorded positions whose policy target is the solver's best columns.
    pub exact_policies: u64,
}

impl SelfPlayStats {
    pub fn add(&mut self, o: &SelfPlayStats) {
        self.games += o.games;
        self.moves += o.moves;
        self.simulations += o.simulations;
        self.evaluations += o.evaluations;
        self.batches += o.batches;
        self.cache_lookups += o.cache_lookups;
        self.cache_hits += o.cache_hits;
        self.exact_values += o.exact_values;
        self.exact_policies += o.exact_policies;
    }

    pub fn cache_hit_rate(&self) -> f64 {
        if self.cache_lookups == 0 {
            0.0
        } else {
            self.cache_hits as f64 / self.cache_lookups as f64
        }
    }

    pub fn mean_batch(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.evaluations as f64 / self.batches as f64
        }
    }
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct GameOut {
    /// Its number in the run (fixes its randomness).
    pub index: u64,
    pub moves: Vec<usize>,
    /// Seat that won (0 moved first), `None` for a draw.
    pub winner: Option<usize>,
    pub samples: Vec<Sample>,
    /// The ply of each sample's position (its index into `moves`).
    pub plies: Vec<usize>,
    /// The plies whose move was uniformly random
    /// (`SelfPlayConfig::random_move_share`), in order.
    pub random_plies: Vec<usize>,
}

impl GameOut {
    /// Gives each sample its reply target (`Sample::reply`): the policy
    /// target of the next sample when that is the very next ply, so the
    /// opponent's search answering the move played; none (a zero row) at
    /// the game's last recorded position, before an unrecorded ply (a fast
    /// search of playout cap randomisation), and after a random move, which
    /// the position's own policy did not choose. Run after the targets are
    /// final (exact policy targets replace some, [`rescore`]).
    pub fn link_replies(&mut self) {
        for i in 0..self.samples.len() {
            let (ply, next) = (self.plies[i], self.plies.get(i + 1).copied());
            let linked = next == Some(ply + 1) && self.random_plies.binary_search(&ply).is_err();
            self.samples[i].reply = match linked {
                true => self.samples[i + 1].policy,
                false => [0.0; crate::game::MAX_SIDE],
            };
        }
    }
}

struct Slot<B: Bits> {
    index: u64,
    tree: Tree<B>,
    rng: ChaCha8Rng,
    moves: Vec<usize>,
    /// Recorded positions: ply, position, visit distribution and the root's
    /// search value for the mover; results filled in at the end.
    history: Vec<(usize, Position<B>, Vec<f32>, f32)>,
    sims_done: u32,
    /// Whether the current move's search is a full one (see
    /// `SelfPlayConfig::full_search_share`).
    full: bool,
    path: Vec<u32>,
    /// Waiting for the network: the leaf position (`root`: it is the root's
    /// first expansion, which is not a simulation).
    pending: Option<(Position<B>, bool)>,
    /// The current move's Gumbel plan (`SelfPlayConfig::gumbel`).
    plan: Option<GumbelRoot>,
    /// The plies of the game's random moves
    /// (`SelfPlayConfig::random_move_share`), in order.
    random_plies: Vec<usize>,
}

enum Step {
    NeedsEval,
    Finished(GameOut),
}

impl<B: Bits> Slot<B> {
    fn new(geo: &Geometry<B>, index: u64, seed: u64, cfg: &SelfPlayConfig) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed::derive(seed, index, seed::SELF_PLAY_GAME));
        let (pos, moves) = random_opening(geo, cfg.random_opening_plies, &mut rng);
        let mut slot = Slot {
            index,
            tree: Tree::new(pos),
            rng,
            moves,
            history: Vec::new(),
            sims_done: 0,
            full: true,
            path: Vec::new(),
            pending: None,
            plan: None,
            random_plies: Vec::new(),
        };
        slot.full = slot.draw_full(cfg);
        slot
    }

    /// Draws whether the next move gets a full search. Every search is
    /// full at share 1, without touching the random stream (so games are
    /// the same as before the option existed).
    fn draw_full(&mut self, cfg: &SelfPlayConfig) -> bool {
        cfg.full_search_share >= 1.0 || self.rng.gen::<f32>() < cfg.full_search_share
    }

    /// With chance `random_move_share`, a uniformly random legal column of
    /// `pos` to play instead of the search's. Draws nothing at share 0, so
    /// games are the same as before the option existed.
    fn random_move(&mut self, geo: &Geometry<B>, cfg: &SelfPlayConfig, pos: &Position<B>) -> Option<usize> {
        if cfg.random_move_share <= 0.0 || self.rng.gen::<f32>() >= cfg.random_move_share {
            return None;
        }
        Some(pos.random_legal_column(geo, &mut self.rng))
    }

    fn budget(&self, cfg: &SelfPlayConfig) -> u32 {
        if self.full {
            cfg.simulations
        } else {
            cfg.fast_simulations
        }
    }

    /// A full search's root, made to explore: its priors tempered
    /// (`root_prior_temperature`), then Dirichlet noise mixed in.
    fn explore_root(&mut self, cfg: &SelfPlayConfig) {
        self.tree.temper_root(cfg.root_prior_temperature);
        self.tree
            .add_root_noise(&mut self.rng, cfg.dirichlet_alpha, cfg.dirichlet_weight);
    }

    /// Applies a network output to the pending leaf.
    fn apply(
        &mut self,
        geo: &Geometry<B>,
        cfg: &SelfPlayConfig,
        logits: &[f32],
        value: f32,
        stats: &mut SelfPlayStats,
    ) {
        let (pos, root) = self.pending.take().expect("a pending leaf");
        let leaf = *self.path.last().expect("a path");
        self.tree.expand(geo, leaf, &pos, logits);
        self.tree.backup(&self.path, value);
        if root {
            if self.full && !cfg.gumbel {
                self.explore_root(cfg);
            }
        } else {
            self.sims_done += 1;
            stats.simulations += 1;
        }
    }

    /// Runs the game until it needs the network or ends.
    fn advance(
        &mut self,
        geo: &Geometry<B>,
        cfg: &SelfPlayConfig,
        cache: &mut Cache,
        stats: &mut SelfPlayStats,
    ) -> Step {
        let cols = geo.cfg.cols;
        loop {
            if !self.tree.root_expanded() {
                self.path.clear();
                self.path.push(0);
                let pos = *self.tree.root_pos();
                if let Some(c) = cache.get(pos.key()) {
                    self.pending = Some((pos, true));
                    self.apply(geo, cfg, &c.logits[..cols], c.value, stats);
                    continue;
                }
                self.pending = Some((pos, true));
                return Step::NeedsEval;
            }
            if self.sims_done >= self.budget(cfg) {
                if let Some(out) = self.play_move(geo, cfg, stats) {
                    return Step::Finished(out);
                }
                continue;
            }
            let leaf = match self.gumbel_column(cfg, cols).or_else(|| self.forced_column(cfg)) {
                Some(col) => self.tree.select_under(geo, cfg.c_puct, col, &mut self.path),
                None => self.tree.select(geo, cfg.c_puct, &mut self.path),
            };
            match leaf {
                Leaf::Terminal { value } => {
                    self.tree.backup_terminal(&self.path, value);
                    self.sims_done += 1;
                    stats.simulations += 1;
                }
                Leaf::Evaluate { pos } => {
                    self.pending = Some((pos, false));
                    if let Some(c) = cache.get(pos.key()) {
                        self.apply(geo, cfg, &c.logits[..cols], c.value, stats);
                        continue;
                    }
                    return Step::NeedsEval;
                }
            }
        }
    }

    /// The root move the next simulation must explore under Gumbel root
    /// search (its plan made at the move's first simulation); `None` for
    /// PUCT, or once the root is proven (the search then has nothing left
    /// to choose).
    fn gumbel_column(&mut self, cfg: &SelfPlayConfig, cols: usize) -> Option<usize> {
        if !cfg.gumbel || self.tree.root_proven() {
            return None;
        }
        let (moves, value) = root_moves(&self.tree, cols);
        if self.plan.is_none() {
            let explore = self.full && (self.moves.len() as u32) < cfg.temperature_moves;
            let budget = self.budget(cfg);
            let noise = explore.then_some(&mut self.rng as &mut dyn rand::RngCore);
            self.plan = Some(GumbelRoot::new(&moves, budget, noise));
        }
        Some(self.plan.as_mut().expect("made above").next(&moves, value))
    }

    /// The root move the next simulation must explore because forced
    /// playouts (`SelfPlayConfig::forced_playouts`) owe it visits: full
    /// PUCT searches only, whose root has noise (none when off: k = 0).
    fn forced_column(&self, cfg: &SelfPlayConfig) -> Option<usize> {
        if !self.full || cfg.gumbel {
            return None;
        }
        self.tree.forced_root_column(cfg.forced_playouts)
    }

    /// Picks and plays a move once the search is complete; returns the
    /// game when it ends.
    fn play_move(&mut self, geo: &Geometry<B>, cfg: &SelfPlayConfig, stats: &mut SelfPlayStats) -> Option<GameOut> {
        let cols = geo.cfg.cols;
        let info = self.tree.root_info(cols);
        let total: u32 = info.visits.iter().sum();
        // Visit shares, corrected by what the search proved (a proven root's
        // target is its proven move; proven losses get nothing); under
        // Gumbel search, the improved policy and the halving's survivor.
        let plan = self.plan.take().filter(|_| !self.tree.root_proven());
        let (policy, gumbel_move) = match &plan {
            Some(plan) => {
                let (moves, value) = root_moves(&self.tree, cols);
                (
                    gumbel::improved_policy(&moves, value, cols),
                    Some(plan.choose(&moves, value)),
                )
            }
            // Pruning is the plain target when forced playouts are off.
            None if self.full => (
                self.tree.pruned_policy_target(cols, cfg.c_puct, cfg.forced_playouts),
                None,
            ),
            None => (self.tree.policy_target(cols), None),
        };
        let pos = *self.tree.root_pos();
        // The first `temperature_moves` plies explore: a move drawn in
        // proportion to its visits (under Gumbel search, this search's
        // visits: the halving's survivor alone would make most games
        // alike, since σ(q) outweighs the noise).
        let exploring = (self.moves.len() as u32) < cfg.temperature_moves;
        let col = match (&plan, gumbel_move) {
            (Some(plan), Some(col)) => match exploring {
                true => draw_by_visits(&plan.search_visits(cols), &mut self.rng).unwrap_or(col),
                false => col,
            },
            _ if exploring && total > 0 && !cfg.gumbel => {
                draw_by_visits(&info.visits, &mut self.rng).unwrap_or_else(|| self.tree.best_move())
            }
            _ => self.tree.best_move(),
        };
        let col = match self.random_move(geo, cfg, &pos) {
            Some(c) => {
                self.random_plies.push(self.moves.len());
                c
            }
            None => col,
        };
        if self.full {
            let q = match cfg.q_best_child && !self.tree.root_proven() {
                true => info.q[self.tree.best_move()].unwrap_or(info.value),
                false => info.value,
            };
            self.history.push((self.moves.len(), pos, policy, q));
        }
        self.moves.push(col);
        stats.moves += 1;
        let (_, status) = pos.play(geo, col);
        if status != Status::Ongoing {
            stats.games += 1;
            return Some(self.game_over(geo.cfg.cells(), cfg, status));
        }
        self.tree.advance(geo, col);
        self.sims_done = 0;
        self.full = self.draw_full(cfg);
        if self.full && self.tree.root_expanded() {
            self.explore_root(cfg);
        }
        None
    }

    /// The finished game (ended with `status`) and its samples: each full
    /// search's position with its value target, the result blended with
    /// the search's q by `q_weight` (before the last random move, the q
    /// alone: the result is not that position's).
    fn game_over(&mut self, cells: usize, cfg: &SelfPlayConfig, status: Status) -> GameOut {
        let n = self.moves.len();
        let winner = (status == Status::Won).then_some((n - 1) % 2);
        let samples = self
            .history
            .iter()
            .map(|&(ply, ref p, ref pol, q)| {
                let value = match self.random_plies.last() {
                    Some(&r) if ply <= r => q,
                    _ => (1.0 - cfg.q_weight) * result_for(winner, ply) + cfg.q_weight * q,
                };
                Sample::new(p, cells, pol, value)
            })
            .collect();
        GameOut {
            index: self.index,
            moves: std::mem::take(&mut self.moves),
            winner,
            samples,
            plies: self.history.iter().map(|h| h.0).collect(),
            random_plies: std::mem::take(&mut self.random_plies),
        }
    }
}

/// A column drawn in proportion to `visits` (`None` when all are 0).
fn draw_by_visits(visits: &[u32], rng: &mut ChaCha8Rng) -> Option<usize> {
    let total: u32 = visits.iter().sum();
    if total == 0 {
        return None;
    }
    let mut x = rng.gen_range(0..total);
    for (c, &v) in visits.iter().enumerate() {
        if x < v {
            return Some(c);
        }
        x -= v;
    }
    None
}

/// The root's legal moves as Gumbel search sees them, and the root value.
fn root_moves<B: Bits>(tree: &Tree<B>, cols: usize) -> (Vec<RootMove>, f32) {
    let info = tree.root_info(cols);
    let priors = tree.root_priors(cols);
    let moves = (0..cols)
        .filter(|&c| priors[c] > 0.0 || info.visits[c] > 0)
        .map(|col| RootMove {
            col,
            prior: priors[col],
            visits: info.visits[col],
            q: info.q[col],
        })
        .collect();
    (moves, info.value)
}

/// Up to `max_plies` uniformly random moves (their number drawn from
/// `0..=max_plies`), never one that ends the game. Draws nothing at 0, so
/// games are the same as before the option existed.
fn random_opening<B: Bits>(geo: &Geometry<B>, max_plies: u32, rng: &mut ChaCha8Rng) -> (Position<B>, Vec<usize>) {
    let mut pos = Position::empty();
    let mut moves = Vec::new();
    if max_plies == 0 {
        return (pos, moves);
    }
    let k = rng.gen_range(0..=max_plies);
    for _ in 0..k {
        let safe: Vec<(usize, Position<B>)> = (0..geo.cfg.cols)
            .filter(|&c| pos.legal_mask(geo) >> c & 1 == 1)
            .filter_map(|c| match pos.play(geo, c) {
                (next, Status::Ongoing) => Some((c, next)),
                _ => None,
            })
            .collect();
        if safe.is_empty() {
            break;
        }
        let (c, next) = safe[rng.gen_range(0..safe.len())];
        moves.push(c);
        pos = next;
    }
    (pos, moves)
}

/// The game's result for the player to move at `ply` (0 moved first):
/// +1 they went on to win, −1 lose, 0 draw.
fn result_for(winner: Option<usize>, ply: usize) -> f32 {
    match winner {
        None => 0.0,
        Some(w) if w == ply % 2 => 1.0,
        Some(_) => -1.0,
    }
}

/// Replaces the value targets of `g`'s positions that `ex` proves with
/// their exact results, and their policy targets with the solver's best
/// columns where it scored them all; counts both in `stats`.
fn rescore(ex: &mut ExactValues, g: &mut GameOut, stats: &mut SelfPlayStats) {
    for (smp, label) in g.samples.iter_mut().zip(ex.label(&g.moves, &g.plies)) {
        let Some(label) = label else { continue };
        smp.value = label.value;
        stats.exact_values += 1;
        if let Some(best) = label.best {
            smp.policy = [0.0; crate::game::MAX_SIDE];
            for &c in &best {
                smp.policy[c] = 1.0 / best.len() as f32;
            }
            stats.exact_policies += 1;
        }
    }
}

/// Plays games `first..first + count` on this thread, batching the leaves
/// of up to `cfg.concurrent` games per network call. `done` counts
/// finished games (for progress bars).
pub fn play_games<B: Bits>(
    geo: &Geometry<B>,
    cfg: &SelfPlayConfig,
    eval: &mut dyn Evaluate,
    first: u64,
    count: u64,
    seed: u64,
    done: &AtomicU64,
) -> (Vec<GameOut>, SelfPlayStats) {
    let (rows, cols) = (geo.cfg.rows, geo.cfg.cols);
    let inp = rows * cols * PLANES;
    let mut cache = Cache::new(cfg.cache_size);
    let mut stats = SelfPlayStats::default();
    let mut slots: Vec<Option<Slot<B>>> = (0..cfg.concurrent.max(1)).map(|_| None).collect();
    let mut next = first;
    let end = first + count;
    let mut out = Vec::with_capacity(count as usize);
    let mut planes: Vec<f32> = Vec::new();
    let (mut logits, mut values) = (Vec::new(), Vec::new());
    let mut waiting: Vec<usize> = Vec::new();
    let mut exact = ExactValues::new(geo.cfg, cfg.exact_value_nodes).map(|e| e.with_policy(cfg.exact_policy_nodes));
    loop {
        waiting.clear();
        planes.clear();
        for (i, slot) in slots.iter_mut().enumerate() {
            loop {
                if slot.is_none() {
                    if next >= end {
                        break;
                    }
                    *slot = Some(Slot::new(geo, next, seed, cfg));
                    next += 1;
                }
                let s = slot.as_mut().expect("filled above");
                match s.advance(geo, cfg, &mut cache, &mut stats) {
                    Step::NeedsEval => {
                        let (pos, _) = s.pending.as_ref().expect("pending");
                        let at = planes.len();
                        planes.resize(at + inp, 0.0);
                        encode(pos, rows, cols, &mut planes[at..]);
                        waiting.push(i);
                        break;
                    }
                    Step::Finished(mut g) => {
                        if let Some(ex) = exact.as_mut() {
                            rescore(ex, &mut g, &mut stats);
                        }
                        if cfg.reply_targets {
                            g.link_replies();
                        }
                        out.push(g);
                        done.fetch_add(1, Ordering::Relaxed);
                        *slot = None;
                    }
                }
            }
        }
        if waiting.is_empty() {
            break;
        }
        let n = waiting.len();
        eval.evaluate(&planes, n, &mut logits, &mut values);
        stats.evaluations += n as u64;
        stats.batches += 1;
        for (j, &i) in waiting.iter().enumerate() {
            let s = slots[i].as_mut().expect("waiting slot");
            let l = &logits[j * cols..(j + 1) * cols];
            let key = s.pending.as_ref().expect("pending").0.key();
            cache.insert(key, l, values[j]);
            s.apply(geo, cfg, l, values[j], &mut stats);
        }
    }
    stats.cache_lookups = cache.lookups;
    stats.cache_hits = cache.hits;
    out.sort_by_key(|g| g.index);
    (out, stats)
}

/// Splits `games` over one thread per evaluator (each gets a contiguous
/// range of game numbers) and merges the results in game order.
pub fn play_parallel<B: Bits>(
    geo: &Geometry<B>,
    cfg: &SelfPlayConfig,
    evals: &mut [Box<dyn Evaluate>],
    games: u64,
    seed: u64,
    done: &AtomicU64,
) -> (Vec<GameOut>, SelfPlayStats) {
    let workers = evals.len().max(1) as u64;
    let mut results: Vec<(Vec<GameOut>, SelfPlayStats)> = Vec::new();
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut first = 0;
        for (w, ev) in evals.iter_mut().enumerate() {
            let count = games / workers + u64::from((w as u64) < games % workers);
            let start = first;
            first += count;
            handles.push(scope.spawn(move || play_games(geo, cfg, ev.as_mut(), start, count, seed, done)));
        }
        for h in handles {
            results.push(h.join().expect("a self-play worker panicked"));
        }
    });
    let mut all = Vec::new();
    let mut stats = SelfPlayStats::default();
    for (g, s) in results {
        all.extend(g);
        stats.add(&s);
    }
    all.sort_by_key(|g| g.index);
    (all, stats)
}

#[cfg(test)]
mod tests;
