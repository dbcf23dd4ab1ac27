//! Monte Carlo tree search guided by the network (PUCT), as in
//! docs/alphazero.md: priors from the policy head at expansion, values from the
//! value head at leaves, terminal positions scored exactly, illegal columns
//! masked, Dirichlet noise at the root in self-play only.
//!
//! The tree is split into steps — [`Tree::select`] walks to a leaf,
//! [`Tree::expand`] and [`Tree::backup`] apply a network output — so that a
//! caller can stop between selecting a leaf and evaluating it. Self-play
//! uses that to collect the leaves of many games into one network batch;
//! [`search`] is the plain one-game driver, and [`search_batched`] the
//! player's: several leaves of one game per network call, kept apart by
//! virtual losses.
//!
//! On top of PUCT sits an MCTS-solver (Winands et al.): finished games are
//! proven results, and proofs climb the tree (one winning child proves a
//! loss for the player who moved into the node, all losing children a win).
//! Proven nodes are scored exactly, proven-lost moves are not searched, and
//! the move played is a proven win when there is one — the search stops
//! spending visits on lines it has settled.
//!
//! Nodes live in one arena and refer to their children as a contiguous
//! range. After a move, [`Tree::advance`] keeps the chosen subtree (its
//! visits are still valid) and compacts it to the front of a new arena.

use super::encode::{encode, PLANES};
use super::inference::{Cache, Evaluate};
use crate::game::bitboard::{Bits, Geometry, Position, Status};
use rand::Rng;
use rand_distr::{Distribution, Gamma};

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    prior: f32,
    visits: u32,
    /// Sum of values from the view of the player who moved into this node.
    value_sum: f32,
    first_child: u32,
    children: u8,
    col: u8,
    /// What the search has proven about this node, for the player who
    /// moved into it: [`UNKNOWN`], [`WIN`], [`LOSS`] or [`DRAW`].
    proven: u8,
}

const UNKNOWN: u8 = 0;
const WIN: u8 = 1;
const LOSS: u8 = 2;
const DRAW: u8 = 3;

/// The exact value of a proven node for the player to move there.
fn proven_value(proven: u8) -> f32 {
    match proven {
        WIN => -1.0,
        LOSS => 1.0,
        _ => 0.0,
    }
}

impl Node {
    /// The mean value for the player who moved into this node (0 before
    /// its first visit).
    fn q(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / self.visits as f32
        }
    }

    /// PUCT's score of this child under a parent with `sqrt_n` = √visits:
    /// its value plus the exploration bonus its prior and visits earn.
    fn puct_score(&self, c_puct: f32, sqrt_n: f32) -> f32 {
        self.q() + c_puct * self.prior * sqrt_n / (1.0 + self.visits as f32)
    }

    fn new(col: usize, prior: f32) -> Node {
        Node {
            prior,
            visits: 0,
            value_sum: 0.0,
            first_child: NONE,
            children: 0,
            col: col as u8,
            proven: UNKNOWN,
        }
    }
}

/// What [`Tree::select`] reached.
#[derive(Clone, Copy, Debug)]
pub enum Leaf<B: Bits> {
    /// The game is over at the leaf: `value` for the player to move there
    /// (−1: the previous move won; 0: a draw).
    Terminal { value: f32 },
    /// An unexpanded position that needs the network.
    Evaluate { pos: Position<B> },
}

/// A search tree rooted at one position.
pub struct Tree<B: Bits> {
    nodes: Vec<Node>,
    root: u32,
    root_pos: Position<B>,
}

/// The result of a search at the root.
#[derive(Clone, Debug)]
pub struct RootInfo {
    /// Visits per column (0 for illegal columns).
    pub visits: Vec<u32>,
    /// Mean value of each visited column for the player to move at the root.
    pub q: Vec<Option<f32>>,
    /// The root's value for the player to move: the mean of backed-up
    /// values, or the exact result once the search has proven it.
    pub value: f32,
}

/// Masked softmax of `logits` over the legal columns in `legal` (a bit
/// per column), written into `out`.
pub fn masked_softmax(logits: &[f32], legal: u32, out: &mut [f32]) {
    let mut max = f32::NEG_INFINITY;
    for (c, &l) in logits.iter().enumerate() {
        if legal >> c & 1 == 1 {
            max = max.max(l);
        }
    }
    let mut sum = 0.0;
    for (c, &l) in logits.iter().enumerate() {
        out[c] = if legal >> c & 1 == 1 { (l - max).exp() } else { 0.0 };
        sum += out[c];
    }
    if sum > 0.0 {
        for p in out.iter_mut() {
            *p /= sum;
        }
    }
}

impl<B: Bits> Tree<B> {
    pub fn new(pos: Position<B>) -> Self {
        Tree {
            nodes: vec![Node::new(0, 1.0)],
            root: 0,
            root_pos: pos,
        }
    }

    pub fn root_pos(&self) -> &Position<B> {
        &self.root_pos
    }

    pub fn root_expanded(&self) -> bool {
        self.nodes[self.root as usize].first_child != NONE
    }

    pub fn root_visits(&self) -> u32 {
        self.nodes[self.root as usize].visits
    }

    /// Nodes in the arena (for tests and memory figures).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Walks from the root by PUCT to a leaf, recording the node indices
    /// in `path` (root first).
    pub fn select(&self, geo: &Geometry<B>, c_puct: f32, path: &mut Vec<u32>) -> Leaf<B> {
        self.select_from(geo, c_puct, None, path)
    }

    /// [`Tree::select`] whose first step is the root's child for column
    /// `col` (Gumbel root search picks it, PUCT the rest of the way). The
    /// root must be expanded and unproven, and `col` one of its children.
    pub fn select_under(&self, geo: &Geometry<B>, c_puct: f32, col: usize, path: &mut Vec<u32>) -> Leaf<B> {
        self.select_from(geo, c_puct, Some(col), path)
    }

    fn select_from(&self, geo: &Geometry<B>, c_puct: f32, mut first: Option<usize>, path: &mut Vec<u32>) -> Leaf<B> {
        path.clear();
        let mut node = self.root;
        let mut pos = self.root_pos;
        path.push(node);
        loop {
            let nd = self.nodes[node as usize];
            if nd.proven != UNKNOWN {
                return Leaf::Terminal {
                    value: proven_value(nd.proven),
                };
            }
            if nd.first_child == NONE {
                return Leaf::Evaluate { pos };
            }
            let kids = nd.first_child..nd.first_child + nd.children as u32;
            let forced = first
                .take()
                .and_then(|col| kids.clone().find(|&i| self.nodes[i as usize].col as usize == col));
            let best = forced.unwrap_or_else(|| self.puct_child(&nd, c_puct));
            let (next, status) = pos.play(geo, self.nodes[best as usize].col as usize);
            path.push(best);
            match status {
                Status::Won => return Leaf::Terminal { value: -1.0 },
                Status::Draw => return Leaf::Terminal { value: 0.0 },
                Status::Ongoing => {
                    pos = next;
                    node = best;
                }
            }
        }
    }

    /// The child of `nd` with the highest PUCT score, never one proven lost
    /// (the first child when all are).
    fn puct_child(&self, nd: &Node, c_puct: f32) -> u32 {
        let sqrt_n = (nd.visits.max(1) as f32).sqrt();
        let mut best = nd.first_child;
        let mut best_score = f32::NEG_INFINITY;
        for i in nd.first_child..nd.first_child + nd.children as u32 {
            let ch = &self.nodes[i as usize];
            if ch.proven == LOSS {
                continue;
            }
            let score = ch.puct_score(c_puct, sqrt_n);
            if score > best_score {
                best_score = score;
                best = i;
            }
        }
        best
    }

    /// Gives node `node` (at position `pos`) one child per legal column,
    /// with priors from the masked softmax of `logits`.
    pub fn expand(&mut self, geo: &Geometry<B>, node: u32, pos: &Position<B>, logits: &[f32]) {
        if self.nodes[node as usize].first_child != NONE {
            return;
        }
        let cols = geo.cfg.cols;
        let legal = pos.legal_mask(geo);
        let mut priors = [0f32; crate::game::MAX_SIDE];
        masked_softmax(&logits[..cols], legal, &mut priors[..cols]);
        let first = self.nodes.len() as u32;
        let mut n = 0u8;
        for (c, &p) in priors.iter().enumerate().take(cols) {
            if legal >> c & 1 == 1 {
                self.nodes.push(Node::new(c, p));
                n += 1;
            }
        }
        let nd = &mut self.nodes[node as usize];
        nd.first_child = first;
        nd.children = n;
    }

    /// Adds `value` (for the player to move at the leaf, the last node of
    /// `path`) up the path, flipping its sign at each ply.
    pub fn backup(&mut self, path: &[u32], value: f32) {
        let mut v = value;
        for &i in path.iter().rev() {
            let nd = &mut self.nodes[i as usize];
            nd.visits += 1;
            nd.value_sum -= v;
            v = -v;
        }
    }

    /// Marks `path` as being evaluated: one visit and one loss for each
    /// node on it, so that the next selections of a batch look elsewhere.
    /// [`Tree::backup_virtual`] takes it back.
    pub fn add_virtual_loss(&mut self, path: &[u32]) {
        for &i in path {
            let nd = &mut self.nodes[i as usize];
            nd.visits += 1;
            nd.value_sum -= 1.0;
        }
    }

    /// [`Tree::backup`] for a path that carries a virtual loss: replaces
    /// the virtual visit and loss by the real value.
    pub fn backup_virtual(&mut self, path: &[u32], value: f32) {
        for &i in path {
            let nd = &mut self.nodes[i as usize];
            nd.visits -= 1;
            nd.value_sum += 1.0;
        }
        self.backup(path, value);
    }

    /// [`Tree::backup`] for a leaf where the game is over (or whose result
    /// is already proven): marks it proven and proves what follows above it
    /// — a node is lost for the player who moved into it when one of its
    /// children wins, won when every child loses, drawn when every child is
    /// proven and the best is a draw.
    pub fn backup_terminal(&mut self, path: &[u32], value: f32) {
        let leaf = *path.last().expect("the path holds the root");
        self.nodes[leaf as usize].proven = if value < 0.0 {
            WIN
        } else if value > 0.0 {
            LOSS
        } else {
            DRAW
        };
        for &i in path.iter().rev().skip(1) {
            let nd = self.nodes[i as usize];
            if nd.proven != UNKNOWN {
                break;
            }
            let (mut win, mut draw, mut open) = (false, false, false);
            for ch in self.children(&nd) {
                match ch.proven {
                    WIN => win = true,
                    DRAW => draw = true,
                    LOSS => {}
                    _ => open = true,
                }
            }
            self.nodes[i as usize].proven = if win {
                LOSS
            } else if open {
                break;
            } else if draw {
                DRAW
            } else {
                WIN
            };
        }
        self.backup(path, value);
    }

    fn children(&self, nd: &Node) -> &[Node] {
        if nd.first_child == NONE {
            return &[];
        }
        &self.nodes[nd.first_child as usize..nd.first_child as usize + nd.children as usize]
    }

    /// The columns played from the root to the last node of `path` (as
    /// [`Tree::select`] records it, root first), appended to `out`.
    pub fn path_columns(&self, path: &[u32], out: &mut Vec<usize>) {
        out.extend(path.iter().skip(1).map(|&i| self.nodes[i as usize].col as usize));
    }

    /// Whether the game's result from the root is proven.
    pub fn root_proven(&self) -> bool {
        self.nodes[self.root as usize].proven != UNKNOWN
    }

    /// The move to play: a proven win if there is one, else the most
    /// visited move not proven lost (the most visited of all when every
    /// move loses; column 0 before the root is expanded).
    pub fn best_move(&self) -> usize {
        let kids = self.children(&self.nodes[self.root as usize]);
        let most_visited_of = |keep: &dyn Fn(&Node) -> bool| {
            // The first of equals wins: children are in column order.
            kids.iter()
                .filter(|c| keep(c))
                .fold(None::<&Node>, |best, c| match best {
                    Some(b) if b.visits >= c.visits => Some(b),
                    _ => Some(c),
                })
                .map(|c| c.col as usize)
        };
        most_visited_of(&|c| c.proven == WIN)
            .or_else(|| most_visited_of(&|c| c.proven != LOSS))
            .or_else(|| most_visited_of(&|_| true))
            .unwrap_or(0)
    }

    /// The policy target self-play records for the root: the visit shares,
    /// except that what the search has proven overrides them. A proven root
    /// puts everything on [`Tree::best_move`] (a proven win when there is
    /// one): once proven, the search stops, and the visits at that moment
    /// still sit on moves that do not win. Moves proven lost get nothing
    /// (unless every move is lost: then the visits as they are).
    pub fn policy_target(&self, cols: usize) -> Vec<f32> {
        self.shares_of(cols, |c| c.visits as f32)
    }

    /// The root's children a policy target shares among: those not proven
    /// lost, or all of them when no such child has a visit.
    fn target_children(&self) -> Vec<&Node> {
        let kids = self.children(&self.nodes[self.root as usize]);
        let alive = |c: &&Node| c.proven != LOSS;
        if kids.iter().filter(alive).any(|c| c.visits > 0) {
            kids.iter().filter(alive).collect()
        } else {
            kids.iter().collect()
        }
    }

    /// A policy target from a weight per child of [`Tree::target_children`],
    /// normalised; a proven root's is its [`Tree::best_move`] alone.
    fn shares_of(&self, cols: usize, weight: impl Fn(&Node) -> f32) -> Vec<f32> {
        let mut target = vec![0f32; cols];
        if self.root_proven() && self.root_expanded() {
            target[self.best_move()] = 1.0;
            return target;
        }
        let keep = self.target_children();
        let weights: Vec<f32> = keep.iter().map(|c| weight(c)).collect();
        let total: f32 = weights.iter().sum();
        for (c, w) in keep.iter().zip(weights) {
            target[c.col as usize] = if total > 0.0 { w / total } else { 0.0 };
        }
        target
    }

    /// KataGo's forced playouts (Wu 2019, section 3.1): at a self-play
    /// root with noise, a child with prior `p` is owed `sqrt(k · p · N)`
    /// visits (`N`: the root's children's visits), so that a move the
    /// noise favours is searched deeply enough to be judged, not just
    /// touched. Returns the column of the child furthest below what it is
    /// owed, if any is below; `None` once the root is proven or for `k` ≤
    /// 0. Proven children are owed nothing (their value is known).
    pub fn forced_root_column(&self, k: f32) -> Option<usize> {
        if k <= 0.0 || self.root_proven() {
            return None;
        }
        let owed = self.forced_visits(k);
        self.children(&self.nodes[self.root as usize])
            .iter()
            .filter(|c| c.proven == UNKNOWN)
            .map(|c| (owed(c) - c.visits as f32, c.col as usize))
            .filter(|&(short, _)| short > 0.0)
            .fold(None::<(f32, usize)>, |best, x| match best {
                Some(b) if b.0 >= x.0 => Some(b),
                _ => Some(x),
            })
            .map(|(_, col)| col)
    }

    /// The forced playouts a root child is owed, `sqrt(k · p · N)` with
    /// `N` the root's children's visits now: what
    /// [`Tree::forced_root_column`] gives and
    /// [`Tree::pruned_policy_target`] may take back.
    fn forced_visits(&self, k: f32) -> impl Fn(&Node) -> f32 {
        let n: u32 = self
            .children(&self.nodes[self.root as usize])
            .iter()
            .map(|c| c.visits)
            .sum();
        move |c: &Node| (k * c.prior * n as f32).sqrt()
    }

    /// [`Tree::policy_target`] with KataGo's policy target pruning, the
    /// other half of forced playouts: every child but the most visited
    /// gives back as many of its visits (at most the `sqrt(k · p · N)`
    /// forced ones) as it can without its PUCT score rising above the most
    /// visited child's, and a child left with one visit or less drops out.
    /// What remains is what PUCT would have spent without the forcing, so
    /// the noise's forced visits do not teach the network the noise.
    /// `k` ≤ 0 is the plain target.
    pub fn pruned_policy_target(&self, cols: usize, c_puct: f32, k: f32) -> Vec<f32> {
        if k <= 0.0 {
            return self.policy_target(cols);
        }
        let keep = self.target_children();
        let Some(best) = keep.iter().copied().max_by_key(|c| c.visits).filter(|c| c.visits > 0) else {
            return self.policy_target(cols);
        };
        let owed = self.forced_visits(k);
        let sqrt_n = (self.nodes[self.root as usize].visits.max(1) as f32).sqrt();
        let best_score = best.puct_score(c_puct, sqrt_n);
        self.shares_of(cols, |c| {
            if c.col == best.col || c.visits == 0 {
                return c.visits as f32;
            }
            let n = c.visits as f32;
            let forced = owed(c);
            let gap = best_score - c.q();
            // The fewest visits at which c's PUCT score is still no higher
            // than the best child's: c_puct · p · √N / (1 + n') ≤ gap.
            let needed = if gap > 0.0 {
                c_puct * c.prior * sqrt_n / gap - 1.0
            } else {
                n
            };
            let left = (n - forced).max(needed).min(n);
            if left <= 1.0 {
                0.0
            } else {
                left
            }
        })
    }

    /// Mixes Dirichlet(`alpha`) noise into the root's priors with weight
    /// `weight` (self-play only: it makes the search try moves the network
    /// does not yet like).
    pub fn add_root_noise(&mut self, rng: &mut impl Rng, alpha: f32, weight: f32) {
        let root = self.nodes[self.root as usize];
        if root.first_child == NONE || weight <= 0.0 || root.children == 0 {
            return;
        }
        let gamma = Gamma::new(alpha as f64, 1.0).expect("alpha > 0 is checked by the scenario");
        let range = root.first_child as usize..root.first_child as usize + root.children as usize;
        let noise: Vec<f64> = range.clone().map(|_| gamma.sample(rng)).collect();
        let sum: f64 = noise.iter().sum::<f64>().max(1e-12);
        for (i, eta) in range.zip(noise) {
            let p = &mut self.nodes[i].prior;
            *p = (1.0 - weight) * *p + weight * (eta / sum) as f32;
        }
    }

    /// Raises the root's priors to the power 1/`t` and normalises them
    /// (softmax of the logits divided by `t`): above 1 the search spreads
    /// over more columns. Nothing happens at `t` = 1 or before the root is
    /// expanded.
    pub fn temper_root(&mut self, t: f32) {
        let root = self.nodes[self.root as usize];
        if t == 1.0 || root.first_child == NONE || root.children == 0 {
            return;
        }
        let range = root.first_child as usize..root.first_child as usize + root.children as usize;
        let powered: Vec<f64> = range
            .clone()
            .map(|i| (self.nodes[i].prior as f64).powf(1.0 / t as f64))
            .collect();
        let sum: f64 = powered.iter().sum();
        if sum <= 0.0 || !sum.is_finite() {
            return;
        }
        for (i, p) in range.zip(powered) {
            self.nodes[i].prior = (p / sum) as f32;
        }
    }

    /// The root's prior per column (0 for illegal columns and before the
    /// root is expanded), noise included if any was added.
    pub fn root_priors(&self, cols: usize) -> Vec<f32> {
        let mut out = vec![0f32; cols];
        for ch in self.children(&self.nodes[self.root as usize]) {
            out[ch.col as usize] = ch.prior;
        }
        out
    }

    /// Visits per column and the root value.
    pub fn root_info(&self, cols: usize) -> RootInfo {
        let root = self.nodes[self.root as usize];
        let mut visits = vec![0u32; cols];
        let mut q = vec![None; cols];
        if root.first_child != NONE {
            for i in root.first_child..root.first_child + root.children as u32 {
                let ch = &self.nodes[i as usize];
                visits[ch.col as usize] = ch.visits;
                if ch.proven != UNKNOWN {
                    q[ch.col as usize] = Some(-proven_value(ch.proven));
                } else if ch.visits > 0 {
                    q[ch.col as usize] = Some(ch.value_sum / ch.visits as f32);
                }
            }
        }
        let value = if root.proven != UNKNOWN {
            proven_value(root.proven)
        } else if root.visits == 0 {
            0.0
        } else {
            -root.value_sum / root.visits as f32
        };
        RootInfo { visits, q, value }
    }

    /// Moves the root to the child for `col`, keeping its subtree (compacted
    /// into a fresh arena); an unknown child starts a new tree.
    pub fn advance(&mut self, geo: &Geometry<B>, col: usize) {
        let (next, _) = self.root_pos.play(geo, col);
        let root = self.nodes[self.root as usize];
        let child = (root.first_child != NONE)
            .then(|| {
                (root.first_child..root.first_child + root.children as u32)
                    .find(|&i| self.nodes[i as usize].col as usize == col)
            })
            .flatten();
        let Some(child) = child else {
            *self = Tree::new(next);
            return;
        };
        // Breadth-first copy keeps each node's children contiguous.
        let mut out = Vec::with_capacity(self.nodes.len() / 2 + 1);
        out.push(self.nodes[child as usize]);
        let mut i = 0;
        while i < out.len() {
            let nd = out[i];
            if nd.first_child != NONE {
                let first = out.len() as u32;
                for j in nd.first_child..nd.first_child + nd.children as u32 {
                    out.push(self.nodes[j as usize]);
                }
                out[i].first_child = first;
            }
            i += 1;
        }
        self.nodes = out;
        self.root = 0;
        self.root_pos = next;
    }
}

/// The most visited column; ties go to the lowest column.
pub fn most_visited(visits: &[u32]) -> usize {
    let mut best = 0;
    for (c, &v) in visits.iter().enumerate() {
        if v > visits[best] {
            best = c;
        }
    }
    best
}

/// Proves leaves exactly before the network sees them: what a perfect
/// solver adds to the MCTS-solver inside the tree (see
/// [`search_batched`]).
pub trait Prover {
    /// Whether to try leaves `depth` plies below the root: asked first, so
    /// a search that tries no leaf does not build their column lists.
    fn wants(&self, depth: usize) -> bool;
    /// The exact result (+1 win, 0 draw, −1 loss) for the side to move after
    /// the root's position and then `columns`, or `None` when not proven.
    fn prove(&mut self, columns: &[usize]) -> Option<f32>;
}

/// Proves nothing: the plain search.
pub struct NoProver;

impl Prover for NoProver {
    fn wants(&self, _: usize) -> bool {
        false
    }

    fn prove(&mut self, _: &[usize]) -> Option<f32> {
        None
    }
}

/// Asks `prover` about a leaf the search is about to evaluate; a proven
/// leaf is backed up as a terminal one (marked proven, proofs propagated
/// up). Returns whether it was.
fn try_prove<B: Bits>(tree: &mut Tree<B>, path: &[u32], prover: &mut dyn Prover, cols: &mut Vec<usize>) -> bool {
    // The path holds the root, so the leaf is this many plies below it.
    if !prover.wants(path.len() - 1) {
        return false;
    }
    cols.clear();
    tree.path_columns(path, cols);
    match prover.prove(cols) {
        Some(v) => {
            tree.backup_terminal(path, v);
            true
        }
        None => false,
    }
}

/// Runs `simulations` one-leaf-at-a-time simulations on `tree` (the
/// player's search at batch 1; self-play batches many games instead). The
/// root is expanded first if needed, which costs one extra network call.
/// Leaves go to `prover` first, as in [`search_batched`].
pub fn search<B: Bits>(
    tree: &mut Tree<B>,
    geo: &Geometry<B>,
    eval: &mut dyn Evaluate,
    cache: &mut Cache,
    simulations: u32,
    c_puct: f32,
    prover: &mut dyn Prover,
) {
    let mut columns = Vec::new();
    let (rows, cols) = (geo.cfg.rows, geo.cfg.cols);
    let mut planes = vec![0f32; rows * cols * PLANES];
    let (mut logits, mut values) = (Vec::new(), Vec::new());
    let mut path = Vec::new();
    let mut evaluate = |pos: &Position<B>, logits: &mut Vec<f32>| -> f32 {
        let key = pos.key();
        if let Some(c) = cache.get(key) {
            logits.clear();
            logits.extend_from_slice(&c.logits[..cols]);
            return c.value;
        }
        encode(pos, rows, cols, &mut planes);
        eval.evaluate(&planes, 1, logits, &mut values);
        cache.insert(key, &logits[..cols], values[0]);
        values[0]
    };
    if !tree.root_expanded() {
        let pos = tree.root_pos;
        let v = evaluate(&pos, &mut logits);
        let root = tree.root;
        tree.expand(geo, root, &pos, &logits);
        tree.backup(&[root], v);
    }
    for _ in 0..simulations {
        if tree.root_proven() {
            break;
        }
        match tree.select(geo, c_puct, &mut path) {
            Leaf::Terminal { value } => tree.backup_terminal(&path, value),
            Leaf::Evaluate { .. } if try_prove(tree, &path, prover, &mut columns) => {}
            Leaf::Evaluate { pos } => {
                let v = evaluate(&pos, &mut logits);
                let leaf = *path.last().expect("the path holds the root");
                tree.expand(geo, leaf, &pos, &logits);
                tree.backup(&path, v);
            }
        }
    }
}

/// [`search`] with `batch` leaves per network call: each selected leaf
/// gets a virtual loss until its value arrives, so one call evaluates many
/// different leaves — what lets a [`super::inference::ParallelCpu`] spread
/// a move's search over every core. The results depend on `batch`, not on
/// the number of threads; `batch` 1 is exactly [`search`].
///
/// Each leaf the search would send to the network is first offered to
/// `prover` ([`NoProver`] for none), and a proven one becomes a terminal
/// node of the tree (its exact value backed up, the MCTS-solver proving what
/// follows above it) without a network call.
#[allow(clippy::too_many_arguments)]
pub fn search_batched<B: Bits>(
    tree: &mut Tree<B>,
    geo: &Geometry<B>,
    eval: &mut dyn Evaluate,
    cache: &mut Cache,
    simulations: u32,
    c_puct: f32,
    batch: usize,
    prover: &mut dyn Prover,
) {
    if batch <= 1 {
        return search(tree, geo, eval, cache, simulations, c_puct, prover);
    }
    let mut columns = Vec::new();
    let (rows, cols) = (geo.cfg.rows, geo.cfg.cols);
    let inp = rows * cols * PLANES;
    let mut planes = vec![0f32; inp * batch];
    let (mut logits, mut values) = (Vec::new(), Vec::new());
    let mut path = Vec::new();
    // Leaves waiting for the network: (position, path from the root).
    let mut pending: Vec<(Position<B>, Vec<u32>)> = Vec::with_capacity(batch);
    // No simulation: expands the root as the plain search does.
    search(tree, geo, eval, cache, 0, c_puct, prover);
    let mut done = 0;
    while done < simulations && !tree.root_proven() {
        while pending.len() < batch && done < simulations && !tree.root_proven() {
            match tree.select(geo, c_puct, &mut path) {
                Leaf::Terminal { value } => tree.backup_terminal(&path, value),
                Leaf::Evaluate { pos } => {
                    let leaf = *path.last().expect("the path holds the root");
                    if pending.iter().all(|(_, p)| p.last() != Some(&leaf))
                        && try_prove(tree, &path, prover, &mut columns)
                    {
                        done += 1;
                        continue;
                    }
                    if let Some(c) = cache.get(pos.key()) {
                        tree.expand(geo, leaf, &pos, &c.logits[..cols]);
                        tree.backup(&path, c.value);
                    } else if pending.iter().any(|(_, p)| p.last() == Some(&leaf)) {
                        // Selected twice: evaluate what is waiting first.
                        break;
                    } else {
                        tree.add_virtual_loss(&path);
                        pending.push((pos, path.clone()));
                    }
                }
            }
            done += 1;
        }
        if pending.is_empty() {
            continue;
        }
        let n = pending.len();
        for (i, (pos, _)) in pending.iter().enumerate() {
            encode(pos, rows, cols, &mut planes[i * inp..(i + 1) * inp]);
        }
        eval.evaluate(&planes[..n * inp], n, &mut logits, &mut values);
        for (i, (pos, p)) in pending.drain(..).enumerate() {
            let lg = &logits[i * cols..(i + 1) * cols];
            cache.insert(pos.key(), lg, values[i]);
            let leaf = *p.last().expect("the path holds the root");
            tree.expand(geo, leaf, &pos, lg);
            tree.backup_virtual(&p, values[i]);
        }
    }
}

#[cfg(test)]
mod tests;
