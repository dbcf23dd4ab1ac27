//! Monte Carlo tree search guided by the network (PUCT), as in
//! alphazero.md: priors from the policy head at expansion, values from the
//! value head at leaves, terminal positions scored exactly, illegal columns
//! masked, Dirichlet noise at the root in self-play only.
//!
//! The tree is split into steps — [`Tree::select`] walks to a leaf,
//! [`Tree::expand`] and [`Tree::backup`] apply a network output — so that a
//! caller can stop between selecting a leaf and evaluating it. Self-play
//! uses that to collect the leaves of many games into one network batch;
//! [`search`] is the plain one-game driver used by the player.
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
}

impl Node {
    fn new(col: usize, prior: f32) -> Node {
        Node {
            prior,
            visits: 0,
            value_sum: 0.0,
            first_child: NONE,
            children: 0,
            col: col as u8,
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
    /// The root's value for the player to move (mean of backed-up values).
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
        path.clear();
        let mut node = self.root;
        let mut pos = self.root_pos;
        path.push(node);
        loop {
            let nd = self.nodes[node as usize];
            if nd.first_child == NONE {
                return Leaf::Evaluate { pos };
            }
            let sqrt_n = (nd.visits.max(1) as f32).sqrt();
            let mut best = nd.first_child;
            let mut best_score = f32::NEG_INFINITY;
            for i in nd.first_child..nd.first_child + nd.children as u32 {
                let ch = &self.nodes[i as usize];
                let q = if ch.visits == 0 {
                    0.0
                } else {
                    ch.value_sum / ch.visits as f32
                };
                let score = q + c_puct * ch.prior * sqrt_n / (1.0 + ch.visits as f32);
                if score > best_score {
                    best_score = score;
                    best = i;
                }
            }
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

    /// Visits per column and the root value.
    pub fn root_info(&self, cols: usize) -> RootInfo {
        let root = self.nodes[self.root as usize];
        let mut visits = vec![0u32; cols];
        let mut q = vec![None; cols];
        if root.first_child != NONE {
            for i in root.first_child..root.first_child + root.children as u32 {
                let ch = &self.nodes[i as usize];
                visits[ch.col as usize] = ch.visits;
                if ch.visits > 0 {
                    q[ch.col as usize] = Some(ch.value_sum / ch.visits as f32);
                }
            }
        }
        let value = if root.visits == 0 {
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

/// Runs `simulations` one-leaf-at-a-time simulations on `tree` (the
/// player's search; self-play batches many games instead). The root is
/// expanded first if needed, which costs one extra network call.
pub fn search<B: Bits>(
    tree: &mut Tree<B>,
    geo: &Geometry<B>,
    eval: &mut dyn Evaluate,
    cache: &mut Cache,
    simulations: u32,
    c_puct: f32,
) {
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
        match tree.select(geo, c_puct, &mut path) {
            Leaf::Terminal { value } => tree.backup(&path, value),
            Leaf::Evaluate { pos } => {
                let v = evaluate(&pos, &mut logits);
                let leaf = *path.last().expect("the path holds the root");
                tree.expand(geo, leaf, &pos, &logits);
                tree.backup(&path, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::az::inference::CpuEvaluator;
    use crate::az::inference::Folded;
    use crate::az::network::{Net, NetShape};
    use crate::game::BoardConfig;
    use candle_core::Device;
    use rand::SeedableRng;
    use std::sync::Arc;

    /// A network that knows nothing: equal logits, value 0.
    struct Uniform;
    impl Evaluate for Uniform {
        fn evaluate(&mut self, _: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>) {
            logits.clear();
            logits.resize(n * 16, 0.0);
            values.clear();
            values.resize(n, 0.0);
        }
    }

    fn untrained() -> CpuEvaluator {
        let shape = NetShape {
            rows: 6,
            cols: 7,
            blocks: 2,
            channels: 32,
            value_hidden: 32,
        };
        let net = Net::new(shape, 1, &Device::Cpu).unwrap();
        CpuEvaluator::new(Arc::new(Folded::from_net(&net).unwrap()))
    }

    fn best_after(moves: &[usize], eval: &mut dyn Evaluate, sims: u32) -> (usize, RootInfo) {
        let g = Geometry::<u64>::new(BoardConfig::default());
        let pos = Position::from_moves(&g, moves).unwrap();
        let mut tree = Tree::new(pos);
        search(&mut tree, &g, eval, &mut Cache::new(10_000), sims, 2.5);
        let info = tree.root_info(7);
        (most_visited(&info.visits), info)
    }

    #[test]
    fn untrained_network_takes_a_win_in_one() {
        // Red: 0,1,2 on the bottom row; Yellow stacked on them. Red to move wins at 3.
        let moves = [0, 0, 1, 1, 2, 2];
        let (col, info) = best_after(&moves, &mut untrained(), 300);
        assert_eq!(col, 3, "{info:?}");
        assert!(info.value > 0.5, "{info:?}");
        // Vertical: Red has three in column 6.
        let (col, _) = best_after(&[6, 0, 6, 1, 6, 0], &mut untrained(), 300);
        assert_eq!(col, 6);
    }

    #[test]
    fn untrained_network_blocks_a_loss_in_one() {
        // Yellow threatens column 5 horizontally (2,3,4 on the bottom); Red to move.
        let moves = [1, 2, 0, 3, 6, 4];
        let (col, info) = best_after(&moves, &mut untrained(), 400);
        assert_eq!(col, 5, "{info:?}");
        // A vertical threat in column 1, with the uniform network too.
        let (col, info) = best_after(&[3, 1, 3, 1, 5, 1], &mut Uniform, 400);
        assert_eq!(col, 1, "{info:?}");
    }

    #[test]
    fn legal_moves_only_and_visits_add_up() {
        let g = Geometry::<u64>::new(BoardConfig::default());
        // Column 0 full.
        let pos = Position::from_moves(&g, &[0, 0, 0, 0, 0, 0]).unwrap();
        let mut tree = Tree::new(pos);
        search(&mut tree, &g, &mut Uniform, &mut Cache::new(0), 200, 2.5);
        let info = tree.root_info(7);
        assert_eq!(info.visits[0], 0);
        // 1 root expansion + 200 simulations.
        assert_eq!(tree.root_visits(), 201);
        assert_eq!(info.visits.iter().sum::<u32>(), 200);
    }

    #[test]
    fn advance_keeps_the_subtree() {
        let g = Geometry::<u64>::new(BoardConfig::default());
        let mut tree = Tree::new(Position::<u64>::empty());
        search(&mut tree, &g, &mut Uniform, &mut Cache::new(0), 300, 2.5);
        let info = tree.root_info(7);
        let col = most_visited(&info.visits);
        let kept = info.visits[col];
        let before = tree.len();
        tree.advance(&g, col);
        assert_eq!(tree.root_visits(), kept);
        assert!(tree.len() < before);
        assert_eq!(*tree.root_pos(), Position::<u64>::empty().play(&g, col).0);
        let sub = tree.root_info(7);
        assert_eq!(sub.visits.iter().sum::<u32>() + 1, kept);
        // Searching on continues from there.
        search(&mut tree, &g, &mut Uniform, &mut Cache::new(0), 50, 2.5);
        assert_eq!(tree.root_visits(), kept + 50);
    }

    #[test]
    fn noise_changes_priors_but_keeps_a_distribution() {
        let g = Geometry::<u64>::new(BoardConfig::default());
        let mut tree = Tree::new(Position::<u64>::empty());
        search(&mut tree, &g, &mut Uniform, &mut Cache::new(0), 0, 2.5);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        tree.add_root_noise(&mut rng, 0.5, 0.25);
        let root = tree.nodes[0];
        let priors: Vec<f32> = (0..7)
            .map(|i| tree.nodes[(root.first_child + i) as usize].prior)
            .collect();
        assert!((priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(priors.iter().any(|p| (p - 1.0 / 7.0).abs() > 1e-3));
    }

    #[test]
    fn masked_softmax_ignores_illegal_columns() {
        let mut out = [0f32; 3];
        masked_softmax(&[100.0, 0.0, 0.0], 0b110, &mut out);
        assert_eq!(out, [0.0, 0.5, 0.5]);
    }
}
