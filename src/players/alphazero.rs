//! The `alphazero` player kind: a trained network with MCTS, playing the
//! most visited move (no noise), reusing its tree between moves.
//!
//! With a `solver` node budget it first asks the perfect solver
//! ([`crate::solver`]) for the position: when the solver proves the result
//! within the budget, the player plays the exact best move (the fastest win,
//! the slowest loss) and says so ("proven win in 7"); otherwise it searches
//! as usual. What tablebases are to chess engines: late positions, where a
//! network's guess is least needed and a mistake costs the game, become
//! exact. Boards the solver cannot hold simply go without.
//!
//! The model's `meta.json` gives the board it was trained for and the
//! network's shape; a board of another size is refused with a message
//! that says both (as an illegal answer the referee reports, since the
//! board is only known when the player is first asked).

use crate::az::device::resolve_device;
use crate::az::inference::{Cache, CandleEvaluator, Evaluate, Folded, ParallelCpu};
use crate::az::mcts::{search_batched, NoProver, Prover, RootInfo, Tree};
use crate::az::meta::BoardMeta;
use crate::game::bitboard::{on_width, with_width, Bits, ByWidth, Geometry, PerWidth, Position};
use crate::game::board::BoardError;
use crate::game::{Answer, BoardConfig};
use crate::players::keys::{
    budget_key, count_key, optional_path_key, FitError, Key, KeyError, KeyType, KeyValue, KindKeys,
};
use crate::players::model;
use crate::players::{Strategy, TurnView};
use crate::solver::{outcome_moves, Solver};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// PUCT constant in play (the training default of docs/alphazero.md).
pub const PLAY_C_PUCT: f32 = 2.5;
/// Leaves per network call in play. Virtual losses keep a batch's leaves
/// apart; the moves depend on this number, never on the threads that share
/// the batch (a [`ParallelCpu`] evaluates position by position).
pub const PLAY_BATCH: usize = 8;
/// Cached network outputs kept by one player.
const PLAYER_CACHE: usize = 200_000;
/// Simulations per move when none are given.
pub const DEFAULT_ALPHAZERO_SIMULATIONS: u32 = 800;
/// The devices of `device:`.
pub const DEVICES: [&str; 4] = ["auto", "cpu", "cuda", "metal"];

/// An `alphazero` player's keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlphaZeroSpec {
    /// A training `out` directory or one checkpoint (see
    /// [`model::resolve_model`]). A scenario may leave it out; running the
    /// player then says it has none ([`AlphaZeroSpec::model`]).
    pub model: Option<PathBuf>,
    /// Simulations per move.
    pub simulations: u32,
    /// One of [`DEVICES`].
    pub device: String,
    /// Threads of its search on the CPU (`None`: every core).
    pub threads: Option<u32>,
    /// Node budget per move of its exact endgame solver (`None`: off).
    pub solver: Option<u64>,
}

impl Default for AlphaZeroSpec {
    fn default() -> Self {
        AlphaZeroSpec {
            model: None,
            simulations: DEFAULT_ALPHAZERO_SIMULATIONS,
            device: "auto".to_string(),
            threads: None,
            solver: None,
        }
    }
}

impl KindKeys for AlphaZeroSpec {
    const KEYS: &'static [Key<Self>] = &[
        count_key!("simulations", simulations, 1),
        optional_path_key!("model", model),
        Key {
            name: "device",
            ty: KeyType::Choice(&DEVICES),
            set: |s, v| s.device = v.word(),
            get: |s| Some(KeyValue::Word(s.device.clone())),
        },
        Key {
            name: "threads",
            ty: KeyType::Count(1),
            set: |s, v| s.threads = Some(v.count()),
            get: |s| s.threads.map(KeyValue::Count),
        },
        budget_key!("solver", solver),
    ];

    /// Whether its model fits `cfg`: the board it was trained for, read
    /// from its `meta.json` (the weights are loaded only when it is built).
    fn fits(&self, cfg: BoardConfig) -> Result<(), FitError> {
        let model = self.model()?;
        let meta = model::read_meta(&model::resolve_model(model)?)?;
        let source = format!("{} (iteration {})", model.display(), meta.iteration);
        Ok(board_fits(&source, meta.board, cfg)?)
    }
}

/// Why an AlphaZero player cannot be loaded or asked.
#[derive(Debug, thiserror::Error)]
pub enum AlphaZeroError {
    /// No `model` was given.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The model cannot be found or read.
    #[error(transparent)]
    Model(#[from] model::ModelError),
    /// The `device` cannot be had (in the device layer's words).
    #[error("{0}")]
    Device(String),
    /// The network cannot be prepared for the CPU (in the tensor library's words).
    #[error("{0}")]
    Fold(String),
    /// The position asked about is not one of the model's board.
    #[error("{0}")]
    Position(#[from] BoardError),
    /// The model was trained for another board.
    #[error(transparent)]
    Board(#[from] BoardMismatch),
}

/// A model asked to play on a board it was not trained for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("model {model} was trained for a {trained} board and cannot play on this {board} board")]
pub struct BoardMismatch {
    /// The model as people know it: its path and iteration.
    pub model: String,
    pub trained: BoardMeta,
    pub board: BoardMeta,
}

impl AlphaZeroSpec {
    /// The model, or why there is none.
    pub fn model(&self) -> Result<&Path, KeyError> {
        self.model.as_deref().ok_or(KeyError::Missing {
            kind: "alphazero",
            key: "model",
            hint: "give a training `out` directory or a checkpoint directory",
        })
    }

    /// Loads the player: its `model`, `simulations`, `device`, `threads`, `solver`.
    pub fn build(&self) -> Result<AlphaZeroBot, AlphaZeroError> {
        Ok(AlphaZeroBot::load(self.model()?, self.simulations, &self.device, self.threads)?.with_solver(self.solver))
    }
}

/// The board-size-specific part: geometry and the tree kept between moves.
struct EngineAt;
impl PerWidth for EngineAt {
    type At<B: Bits> = (Geometry<B>, Option<Tree<B>>);
}
type Engine = ByWidth<EngineAt>;

fn new_engine(cfg: BoardConfig) -> Engine {
    with_width!(cfg, B => B::by_width::<EngineAt>((Geometry::new(cfg), None)))
}

/// Searches from `pos`, reusing the kept tree when `pos` is its root or
/// one move below it, and keeps the subtree of the chosen move.
fn think<B: Bits>(
    geo: &Geometry<B>,
    kept: &mut Option<Tree<B>>,
    pos: Position<B>,
    eval: &mut dyn Evaluate,
    cache: &mut Cache,
    simulations: u32,
    prover: &mut dyn Prover,
) -> (usize, RootInfo) {
    let mut tree = match kept.take() {
        Some(t) if *t.root_pos() == pos => t,
        Some(mut t) => {
            let root = *t.root_pos();
            let reply = (0..geo.cfg.cols).find(|&c| root.is_legal(geo, c) && root.play(geo, c).0 == pos);
            match reply {
                Some(c) => {
                    t.advance(geo, c);
                    t
                }
                None => Tree::new(pos),
            }
        }
        None => Tree::new(pos),
    };
    search_batched(
        &mut tree,
        geo,
        eval,
        cache,
        simulations,
        PLAY_C_PUCT,
        PLAY_BATCH,
        prover,
    );
    let info = tree.root_info(geo.cfg.cols);
    let col = tree.best_move();
    tree.advance(geo, col);
    *kept = Some(tree);
    (col, info)
}

/// Leaves at least this many plies into the game are offered to the
/// solver inside the search (with the `solver` key): from there most
/// positions are proven within [`LEAF_NODES`] (the accuracy sets' end
/// positions, plies 27–38, need at most 3,553 nodes), so an attempt is
/// rarely wasted.
const LEAF_MIN_PLY: usize = 26;
/// Solver nodes per leaf: about 0.2 ms, a few network evaluations.
const LEAF_NODES: u64 = 1_000;

/// Proves the search's deep leaves with the endgame solver: the game's
/// moves up to the root, then the tree's columns to the leaf.
struct LeafProver<'a> {
    solver: &'a mut Solver,
    root: &'a [usize],
    moves: Vec<usize>,
}

impl Prover for LeafProver<'_> {
    fn wants(&self, depth: usize) -> bool {
        self.root.len() + depth >= LEAF_MIN_PLY
    }

    fn prove(&mut self, columns: &[usize]) -> Option<f32> {
        self.moves.clear();
        self.moves.extend_from_slice(self.root);
        self.moves.extend_from_slice(columns);
        let pos = self.solver.position(&self.moves).ok()?;
        self.solver.solve(&pos, Some(LEAF_NODES)).map(|s| s.signum() as f32)
    }
}

/// A network player.
pub struct AlphaZeroBot {
    /// Where the model came from, for messages.
    source: String,
    board: BoardMeta,
    simulations: u32,
    eval: Box<dyn Evaluate>,
    cache: Cache,
    engine: Option<Engine>,
    /// What it thought of its last move, for people watching.
    last_note: Option<String>,
    /// The exact endgame solver's node budget per move (`None`: off).
    solver_nodes: Option<u64>,
    /// Made for the first board seen (`None` inside: the board does not fit).
    solver: Option<Option<Solver>>,
}

/// Transposition-table entries (as a power of two) of the endgame solver:
/// 2^22 words are 32 MiB, plenty for the budgets a move affords.
const ENDGAME_TABLE_LOG2: u32 = 22;

impl AlphaZeroBot {
    /// A player over an in-memory network (training's evaluation games).
    pub fn with_evaluator(source: String, board: BoardMeta, simulations: u32, eval: Box<dyn Evaluate>) -> Self {
        AlphaZeroBot {
            source,
            board,
            simulations: simulations.max(1),
            eval,
            cache: Cache::new(PLAYER_CACHE),
            engine: None,
            last_note: None,
            solver_nodes: None,
            solver: None,
        }
    }

    /// Turns the exact endgames on, with `nodes` per move.
    pub fn with_solver(mut self, nodes: Option<u64>) -> Self {
        self.solver_nodes = nodes;
        self
    }

    /// Loads a model (see [`model::resolve_model`]) onto `device`;
    /// on the CPU its search runs on `threads` threads (`None`: every core).
    pub fn load(model: &Path, simulations: u32, device: &str, threads: Option<u32>) -> Result<Self, AlphaZeroError> {
        let dev = resolve_device(device).map_err(|e| AlphaZeroError::Device(e.to_string()))?;
        let (meta, net) = model::load_model(model, &dev)?;
        let eval: Box<dyn Evaluate> = if dev.is_cpu() {
            let folded = Folded::from_net(&net).map_err(|e| AlphaZeroError::Fold(e.to_string()))?;
            let threads = threads.map_or_else(crate::util::cores, |t| t as usize);
            Box::new(ParallelCpu::new(Arc::new(folded), threads))
        } else {
            Box::new(CandleEvaluator { net })
        };
        let source = format!("{} (iteration {})", model.display(), meta.iteration);
        Ok(Self::with_evaluator(source, meta.board, simulations, eval))
    }

    /// The board the network was trained for.
    pub fn board(&self) -> BoardMeta {
        self.board
    }

    /// The network's raw answer for `n` encoded positions (`az::encode`'s
    /// planes): `n·cols` logits and `n` values, from the mover's view.
    pub fn evaluate_planes(&mut self, planes: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        let (mut logits, mut values) = (Vec::new(), Vec::new());
        self.eval.evaluate(planes, n, &mut logits, &mut values);
        (logits, values)
    }

    /// Each column's share of the root's visits after a fresh search of the
    /// position after `moves` (the search kept from an earlier call is
    /// dropped, so the answer does not depend on what was asked before).
    pub fn visit_shares(&mut self, moves: &[usize]) -> Result<Vec<f32>, AlphaZeroError> {
        let cfg = BoardConfig::new(self.board.rows, self.board.cols, self.board.win_length)?;
        // Refuses a full column, one out of range, or moves that end the game.
        let game = crate::game::Game::with_opening(cfg, 2, 1, moves)?;
        self.new_game(0);
        let view = TurnView::of(&game, 0, moves.len() % 2, &crate::game::DEFAULT_LETTERS, None);
        let (_, info) = self.decide(&view)?;
        let total: u32 = info.visits.iter().sum();
        Ok(info.visits.iter().map(|&v| v as f32 / total.max(1) as f32).collect())
    }

    /// The refusal for a board the model was not trained for.
    fn check_board(&self, cfg: BoardConfig) -> Result<(), BoardMismatch> {
        board_fits(&self.source, self.board, cfg)
    }

    /// The solver's exact best move and score, when it proves one within
    /// the budget.
    fn prove(&mut self, v: &TurnView) -> Option<(usize, i32)> {
        let nodes = self.solver_nodes?;
        let cfg = v.board.config();
        let slot = self
            .solver
            .get_or_insert_with(|| Solver::new(cfg, ENDGAME_TABLE_LOG2).ok());
        let solver = slot.as_mut().filter(|s| s.config() == cfg)?;
        let pos = solver.position(&v.moves).ok()?;
        solver.best_move(&pos, Some(nodes))
    }

    fn decide(&mut self, v: &TurnView) -> Result<(usize, RootInfo), BoardMismatch> {
        let cfg = v.board.config();
        self.check_board(cfg)?;
        let engine = self.engine.get_or_insert_with(|| new_engine(cfg));
        let (eval, cache, sims) = (self.eval.as_mut(), &mut self.cache, self.simulations);
        // The solver made by `prove` (only with the `solver` key).
        let solver = self
            .solver
            .as_mut()
            .and_then(|s| s.as_mut())
            .filter(|s| s.config() == cfg);
        let mut leaf_prover;
        let prover: &mut dyn Prover = match solver {
            Some(solver) => {
                leaf_prover = LeafProver {
                    solver,
                    root: &v.moves,
                    moves: Vec::new(),
                };
                &mut leaf_prover
            }
            None => &mut NoProver,
        };
        Ok(on_width!(engine, (g, t) => think(g, t, Position::from_board(&v.board, v.seat), eval, cache, sims, prover)))
    }
}

impl Strategy for AlphaZeroBot {
    fn fits(&self, cfg: BoardConfig) -> Result<(), FitError> {
        Ok(self.check_board(cfg)?)
    }

    fn choose(&mut self, v: &TurnView) -> Answer {
        self.analyze(v).0
    }

    /// Per column: the share of the root's visits and the mean value of the
    /// move for the player to move (`null` for full columns).
    fn analyze(&mut self, v: &TurnView) -> (Answer, Option<serde_json::Value>) {
        if self.check_board(v.board.config()).is_ok() {
            if let Some((col, score)) = self.prove(v) {
                // The kept tree no longer follows the game.
                self.new_game(0);
                let cells = v.board.rows() * v.board.cols();
                self.last_note = Some(match outcome_moves(cells, v.moves.len(), score) {
                    None => "proven draw".to_string(),
                    Some((true, k)) => format!("proven win in {k}"),
                    Some((false, k)) => format!("proven loss in {k}"),
                });
                let value = score.signum() as f64;
                // The search's shape (shares summing to 1, `null` for full
                // columns), all on the proven move, with its exact score.
                let scores: Vec<serde_json::Value> = (0..v.board.cols())
                    .map(|c| {
                        if c == col {
                            json!({ "share": 1.0, "value": value, "exact": score })
                        } else if v.board.height(c) >= v.board.rows() {
                            serde_json::Value::Null
                        } else {
                            json!({ "share": 0.0, "value": null })
                        }
                    })
                    .collect();
                return (Answer::Column(col as i64), Some(json!(scores)));
            }
        }
        match self.decide(v) {
            Ok((col, info)) => {
                let total: u32 = info.visits.iter().sum();
                let win = (info.q[col].unwrap_or(info.value) as f64 + 1.0) / 2.0;
                self.last_note = Some(format!(
                    "expects to score {:.0}% after this move ({:.0}% of {total} visits)",
                    100.0 * win,
                    100.0 * info.visits[col] as f64 / total.max(1) as f64
                ));
                let scores: Vec<serde_json::Value> = (0..info.visits.len())
                    .map(|c| {
                        if v.board.height(c) >= v.board.rows() {
                            serde_json::Value::Null
                        } else {
                            json!({
                                "share": info.visits[c] as f64 / total.max(1) as f64,
                                "value": info.q[c].map(|q| (q as f64 * 1e4).round() / 1e4),
                            })
                        }
                    })
                    .collect();
                (Answer::Column(col as i64), Some(json!(scores)))
            }
            Err(e) => {
                tracing::error!("{e}");
                self.last_note = None;
                (
                    Answer::Malformed(e.to_string()),
                    Some(json!({ "error": e.to_string() })),
                )
            }
        }
    }

    fn new_game(&mut self, _seed: u64) {
        // The search is deterministic; a new game only drops the old tree.
        if let Some(e) = &mut self.engine {
            on_width!(e, (_, t) => *t = None);
        }
    }

    fn is_heavy(&self) -> bool {
        true
    }

    fn explain(&self) -> Option<String> {
        self.last_note.clone()
    }
}

/// Whether a model trained on `trained` (described as `source`) plays on
/// `cfg`, or the refusal saying why not.
pub fn board_fits(source: &str, trained: BoardMeta, cfg: BoardConfig) -> Result<(), BoardMismatch> {
    let board = BoardMeta::from(cfg);
    if board == trained {
        Ok(())
    } else {
        Err(BoardMismatch {
            model: source.to_string(),
            trained,
            board,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, DEFAULT_LETTERS};

    /// A network that knows nothing: equal logits, value 0.
    struct Uniform(usize);
    impl Evaluate for Uniform {
        fn evaluate(&mut self, _: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>) {
            logits.clear();
            logits.resize(n * self.0, 0.0);
            values.clear();
            values.resize(n, 0.0);
        }
    }

    const SMALL: BoardConfig = BoardConfig {
        rows: 4,
        cols: 5,
        win_length: 3,
    };

    fn bot(solver: Option<u64>) -> AlphaZeroBot {
        AlphaZeroBot::with_evaluator(
            "uniform".into(),
            BoardMeta::from(SMALL),
            1,
            Box::new(Uniform(SMALL.cols)),
        )
        .with_solver(solver)
    }

    fn view(moves: &[usize]) -> TurnView {
        let g = Game::with_opening(SMALL, 2, 1, moves).unwrap();
        TurnView::of(&g, 1, moves.len() % 2, &DEFAULT_LETTERS[..2], None)
    }

    #[test]
    fn a_proven_position_is_played_exactly_and_said_so() {
        // Red to move with columns 1 and 2 of the bottom row: 0 or 3 wins
        // (three in a row) at once.
        let v = view(&[1, 1, 2, 2]);
        let mut exact = bot(Some(100_000));
        let (answer, scores) = exact.analyze(&v);
        assert!(matches!(answer, Answer::Column(0) | Answer::Column(3)), "{answer:?}");
        assert_eq!(exact.explain().as_deref(), Some("proven win in 1"));
        let Answer::Column(c) = answer else { unreachable!() };
        let scores = scores.unwrap();
        assert!(scores[c as usize]["exact"].as_i64().unwrap() > 0);
        let shares: f64 = scores
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["share"].as_f64().unwrap())
            .sum();
        assert_eq!(shares, 1.0);
        // A budget too small to prove anything leaves the search to play.
        let mut starved = bot(Some(1));
        let _ = starved.analyze(&view(&[]));
        assert!(
            starved.explain().unwrap().starts_with("expects"),
            "{:?}",
            starved.explain()
        );
        // And without the solver the network's search plays.
        let mut plain = bot(None);
        let _ = plain.analyze(&v);
        assert!(plain.explain().unwrap().starts_with("expects"));
    }
}
