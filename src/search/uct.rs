//! Plain UCT Monte Carlo tree search with random playouts: the reference
//! opponent between minimax and AlphaZero (no network, no priors).
//!
//! Each simulation walks down the tree by UCB1 (`Q + c·√(ln N / n)`, rewards
//! in [0, 1], c = √2 by default), expands the first node it reaches that has
//! never been expanded, and plays uniformly random moves to the end of the
//! game. Terminal nodes are scored exactly (win 1, draw ½ for the side that
//! moved into them) and never played out, so a move that wins at once is
//! found quickly: its node returns 1 every time it is visited.
//!
//! Nodes live in one arena (`Vec`) and refer to their children by index, so
//! a search allocates a few large blocks instead of one box per node. The
//! random generator is a seeded ChaCha8: the same seed gives the same moves.
//!
//! With more than two seats, [`Position::from_board`] lumps every other seat
//! together as one opponent (a paranoid approximation, as for minimax).

use crate::game::bitboard::{on_width, with_width, Bits, ByWidth, Geometry, PerWidth, Position, Status};
use crate::game::Board;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Plain UCT player; see the module documentation.
pub struct Mcts {
    simulations: u32,
    exploration: f64,
    rng: ChaCha8Rng,
    geometry: Option<AnyGeometry>,
}

/// The geometry of the current board shape, with the mask type it needs.
struct GeometryAt;
impl PerWidth for GeometryAt {
    type At<B: Bits> = Geometry<B>;
}
type AnyGeometry = ByWidth<GeometryAt>;

impl Mcts {
    /// `simulations` per move (at least 1), random playouts from `seed`.
    pub fn new(simulations: u32, seed: u64) -> Self {
        Mcts {
            simulations: simulations.max(1),
            exploration: std::f64::consts::SQRT_2,
            rng: ChaCha8Rng::seed_from_u64(seed),
            geometry: None,
        }
    }

    /// Sets the UCB1 exploration constant (√2 by default).
    pub fn with_exploration(mut self, c: f64) -> Self {
        self.exploration = c;
        self
    }

    pub fn simulations(&self) -> u32 {
        self.simulations
    }

    /// Restarts the random stream, for example once per game, so a game's
    /// moves do not depend on the games played before it.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// Column (from 0) to play: the most visited; ties go to the lowest.
    pub fn choose(&mut self, board: &Board, to_move: usize) -> usize {
        self.analyze(board, to_move).0
    }

    /// Visit shares per column (`None` for full columns) and the chosen
    /// column (most visited; ties go to the lowest column).
    pub fn analyze(&mut self, board: &Board, to_move: usize) -> (usize, Vec<Option<f64>>) {
        let cfg = board.config();
        let current = self.geometry.as_ref().map(|geo| on_width!(geo, g => g.cfg));
        if current != Some(cfg) {
            self.geometry = Some(with_width!(cfg, B => B::by_width::<GeometryAt>(Geometry::new(cfg))));
        }
        let (sims, c, rng) = (self.simulations, self.exploration, &mut self.rng);
        let geometry = self.geometry.as_ref().expect("set above");
        let visits = on_width!(geometry, g => Tree::search(g, Position::from_board(board, to_move), sims, c, rng));
        let total: u32 = visits.iter().flatten().sum();
        let mut best: Option<(u32, usize)> = None;
        for (col, v) in visits.iter().enumerate() {
            if let Some(v) = *v {
                if best.map_or(true, |(b, _)| v > b) {
                    best = Some((v, col));
                }
            }
        }
        let shares = visits
            .iter()
            .map(|v| v.map(|v| v as f64 / total.max(1) as f64))
            .collect();
        (
            best.expect("MCTS asked to move on a board with no legal move").1,
            shares,
        )
    }
}

/// What the move into a node did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Ongoing,
    Won,
    Draw,
}

/// One arena node: the position after `col`, from the next mover's view.
struct Node<B: Bits> {
    pos: Position<B>,
    /// Children are `first..first + count` in the arena (once expanded).
    first: u32,
    count: u8,
    expanded: bool,
    col: u8,
    state: State,
    visits: u32,
    /// Sum of rewards for the side that moved into this node.
    value: f64,
}

impl<B: Bits> Node<B> {
    /// A node not yet expanded nor visited: `pos` after the move `col`,
    /// which left the game in `state`.
    fn leaf(pos: Position<B>, col: u8, state: State) -> Self {
        Node {
            pos,
            first: 0,
            count: 0,
            expanded: false,
            col,
            state,
            visits: 0,
            value: 0.0,
        }
    }
}

struct Tree;

impl Tree {
    /// Runs `sims` simulations from `root`; returns the root's child visit
    /// counts per column. Each simulation is [`Tree::descend`], then the
    /// leaf's reward ([`Tree::evaluate`]), then [`Tree::backup`].
    fn search<B: Bits>(
        geo: &Geometry<B>,
        root: Position<B>,
        sims: u32,
        c: f64,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Option<u32>> {
        let cols = geo.cfg.cols;
        // About one expansion (cols children) per simulation.
        let mut nodes: Vec<Node<B>> = Vec::with_capacity((sims as usize * cols + 1).min(1 << 22));
        nodes.push(Node::leaf(root, 0, State::Ongoing));
        let mut path: Vec<u32> = Vec::with_capacity(64);
        let mut order: Vec<usize> = Vec::with_capacity(cols);
        for _ in 0..sims {
            let leaf = Self::descend(geo, &mut nodes, &mut path, &mut order, c, rng);
            let reward = Self::evaluate(geo, &nodes[leaf], rng);
            Self::backup(&mut nodes, &path, reward);
        }
        let mut visits = vec![None; cols];
        let root = &nodes[0];
        for n in &nodes[root.first as usize..root.first as usize + root.count as usize] {
            visits[n.col as usize] = Some(n.visits);
        }
        visits
    }

    /// Walks from the root by UCB1 to the node this simulation scores: a
    /// terminal node, a child never visited, or the first child of a node
    /// expanded on the way. Leaves the walk (root first) in `path` and
    /// returns the last node's index.
    #[inline(always)]
    fn descend<B: Bits>(
        geo: &Geometry<B>,
        nodes: &mut Vec<Node<B>>,
        path: &mut Vec<u32>,
        order: &mut Vec<usize>,
        c: f64,
        rng: &mut ChaCha8Rng,
    ) -> usize {
        path.clear();
        path.push(0);
        let mut cur = 0usize;
        loop {
            if nodes[cur].state != State::Ongoing {
                return cur;
            }
            if !nodes[cur].expanded {
                cur = Self::expand(geo, nodes, cur, order, rng);
                path.push(cur as u32);
                return cur;
            }
            cur = Self::select(nodes, cur, c);
            path.push(cur as u32);
            if nodes[cur].visits == 0 {
                return cur;
            }
        }
    }

    /// Adds every legal child of `cur` to the arena, in a random order, so
    /// that "first unvisited child" is a random untried move; returns the
    /// first child's index.
    #[inline(always)]
    fn expand<B: Bits>(
        geo: &Geometry<B>,
        nodes: &mut Vec<Node<B>>,
        cur: usize,
        order: &mut Vec<usize>,
        rng: &mut ChaCha8Rng,
    ) -> usize {
        let pos = nodes[cur].pos;
        order.clear();
        order.extend((0..geo.cfg.cols).filter(|&col| pos.is_legal(geo, col)));
        order.shuffle(rng);
        let first = nodes.len() as u32;
        for &col in order.iter() {
            let (child, status) = pos.play(geo, col);
            let state = match status {
                Status::Ongoing => State::Ongoing,
                Status::Won => State::Won,
                Status::Draw => State::Draw,
            };
            nodes.push(Node::leaf(child, col as u8, state));
        }
        let n = &mut nodes[cur];
        n.first = first;
        n.count = order.len() as u8;
        n.expanded = true;
        first as usize
    }

    /// The reward of `leaf` for the side that moved into it: exact for a
    /// terminal node, else one random playout.
    #[inline(always)]
    fn evaluate<B: Bits>(geo: &Geometry<B>, leaf: &Node<B>, rng: &mut ChaCha8Rng) -> f64 {
        match leaf.state {
            State::Won => 1.0,
            State::Draw => 0.5,
            State::Ongoing => Self::playout(geo, leaf.pos, rng),
        }
    }

    /// Adds one visit and the reward to every node of `path`, from the leaf
    /// up, flipping the reward at each step: each node holds it for the side
    /// that moved into it.
    #[inline(always)]
    fn backup<B: Bits>(nodes: &mut [Node<B>], path: &[u32], mut reward: f64) {
        for &i in path.iter().rev() {
            let n = &mut nodes[i as usize];
            n.visits += 1;
            n.value += reward;
            reward = 1.0 - reward;
        }
    }

    /// UCB1 choice among the children of an expanded node; an unvisited
    /// child comes first (children are stored in a random order).
    fn select<B: Bits>(nodes: &[Node<B>], parent: usize, c: f64) -> usize {
        let p = &nodes[parent];
        let ln_n = (p.visits.max(1) as f64).ln();
        let first = p.first as usize;
        let mut best = (f64::NEG_INFINITY, first);
        for (i, n) in nodes[first..first + p.count as usize].iter().enumerate() {
            let i = first + i;
            if n.visits == 0 {
                return i;
            }
            let v = n.value / n.visits as f64;
            let score = v + c * (ln_n / n.visits as f64).sqrt();
            if score > best.0 {
                best = (score, i);
            }
        }
        best.1
    }

    /// Uniformly random moves to the end; the reward for the side that moved
    /// into `pos` (the side not to move there).
    fn playout<B: Bits>(geo: &Geometry<B>, mut pos: Position<B>, rng: &mut ChaCha8Rng) -> f64 {
        let mut plies = 0u32;
        loop {
            let col = pos.random_legal_column(geo, rng);
            let (next, status) = pos.play(geo, col);
            pos = next;
            plies += 1;
            match status {
                Status::Ongoing => {}
                // The first playout move is the opponent's: odd plies mean
                // the opponent made the line.
                Status::Won => return if plies % 2 == 1 { 0.0 } else { 1.0 },
                Status::Draw => return 0.5,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Answer, BoardConfig, Game};

    fn board(moves: &[usize]) -> Board {
        let mut b = Board::new(BoardConfig::default());
        for (i, &c) in moves.iter().enumerate() {
            b.drop_piece(c, i % 2).unwrap();
        }
        b
    }

    #[test]
    fn takes_a_win_in_one() {
        // Red has three in column 0 and is to move.
        let b = board(&[0, 6, 0, 6, 0, 5]);
        let mut m = Mcts::new(1000, 1);
        assert_eq!(m.choose(&b, 0), 0);
        // A horizontal one: Red has columns 1, 2, 3 on the bottom row.
        let b = board(&[1, 1, 2, 2, 3, 3]);
        assert!([0, 4].contains(&Mcts::new(1000, 2).choose(&b, 0)));
    }

    #[test]
    fn blocks_a_loss_in_one() {
        // Yellow threatens column 6 (three stacked); Red must block.
        let b = board(&[0, 6, 1, 6, 4, 6]);
        for seed in 0..3 {
            assert_eq!(Mcts::new(1000, seed).choose(&b, 0), 6);
        }
    }

    #[test]
    fn same_seed_same_answer() {
        let b = board(&[3, 3, 2]);
        let a = Mcts::new(500, 9).analyze(&b, 1);
        let c = Mcts::new(500, 9).analyze(&b, 1);
        assert_eq!(a, c);
        let mut m = Mcts::new(500, 9);
        let first = m.analyze(&b, 1);
        m.reseed(9);
        assert_eq!(m.analyze(&b, 1), first);
        let shares: f64 = first.1.iter().flatten().sum();
        assert!((shares - 1.0).abs() < 1e-9);
    }

    #[test]
    fn beats_random() {
        let cfg = BoardConfig::default();
        let mut wins = 0;
        for g in 0..10u64 {
            let mut game = Game::new(cfg, 2, 5);
            let mut mcts = Mcts::new(400, g);
            let mut rng = ChaCha8Rng::seed_from_u64(100 + g);
            let mcts_seat = (g % 2) as usize;
            while let Some(seat) = game.to_move() {
                let col = if seat == mcts_seat {
                    mcts.choose(game.board(), seat)
                } else {
                    *game.board().legal_moves().choose(&mut rng).unwrap()
                };
                game.submit(Answer::Column(col as i64));
            }
            if game.outcome().unwrap().winner == Some(mcts_seat) {
                wins += 1;
            }
        }
        assert!(wins >= 9, "MCTS won only {wins} of 10 against random");
    }

    #[test]
    fn other_sizes_and_seats() {
        for (r, c, w) in [(9, 9, 5), (12, 12, 4), (3, 3, 2), (1, 5, 3)] {
            let cfg = BoardConfig::new(r, c, w).unwrap();
            let mut b = Board::new(cfg);
            b.drop_piece(0, 0).unwrap();
            let col = Mcts::new(200, 3).choose(&b, 1);
            assert!(b.is_legal(col));
        }
        // Three seats: the others are lumped together as one opponent.
        let mut b = Board::new(BoardConfig::default());
        for (i, c) in [3, 3, 3, 2, 2].iter().enumerate() {
            b.drop_piece(*c, i % 3).unwrap();
        }
        assert!(b.is_legal(Mcts::new(200, 3).choose(&b, 2)));
    }
}
