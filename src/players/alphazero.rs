//! The `alphazero` player kind: a trained network with MCTS, playing the
//! most visited move (no noise), reusing its tree between moves.
//!
//! The model's `meta.json` gives the board it was trained for and the
//! network's shape; a board of another size is refused with a message
//! that says both (as an illegal answer the referee reports, since the
//! board is only known when the player is first asked).

use crate::az::checkpoint::{self, BoardMeta};
use crate::az::device::resolve_device;
use crate::az::inference::{Cache, CandleEvaluator, Evaluate, Folded, ParallelCpu};
use crate::az::mcts::{search_batched, RootInfo, Tree};
use crate::game::bitboard::{on_width, with_width, Bits, ByWidth, Geometry, PerWidth, Position};
use crate::game::{Answer, BoardConfig};
use crate::players::{PlayerSpec, Strategy, TurnView};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// PUCT constant in play (the training default of alphazero.md).
pub const PLAY_C_PUCT: f32 = 2.5;
/// Leaves per network call in play. Virtual losses keep a batch's leaves
/// apart; the moves depend on this number, never on the threads that share
/// the batch (a [`ParallelCpu`] evaluates position by position).
pub const PLAY_BATCH: usize = 8;
/// Cached network outputs kept by one player.
const PLAYER_CACHE: usize = 200_000;

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
    search_batched(&mut tree, geo, eval, cache, simulations, PLAY_C_PUCT, PLAY_BATCH);
    let info = tree.root_info(geo.cfg.cols);
    let col = tree.best_move();
    tree.advance(geo, col);
    *kept = Some(tree);
    (col, info)
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
}

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
        }
    }

    /// Loads the player of a `players` entry: its `model`, `simulations`, `device`.
    pub fn from_spec(spec: &PlayerSpec) -> Result<Self, String> {
        Self::load(model_of(spec)?, spec.simulations, &spec.device, spec.threads)
    }

    /// Loads a model (see [`checkpoint::resolve_model`]) onto `device`;
    /// on the CPU its search runs on `threads` threads (`None`: every core).
    pub fn load(model: &Path, simulations: u32, device: &str, threads: Option<u32>) -> Result<Self, String> {
        let dev = resolve_device(device)?;
        let (meta, net) = checkpoint::load_model(model, &dev)?;
        let eval: Box<dyn Evaluate> = if dev.is_cpu() {
            let folded = Folded::from_net(&net).map_err(|e| e.to_string())?;
            let threads = threads.map_or_else(crate::util::cores, |t| t as usize);
            Box::new(ParallelCpu::new(Arc::new(folded), threads))
        } else {
            Box::new(CandleEvaluator { net })
        };
        let source = format!("{} (iteration {})", model.display(), meta.iteration);
        Ok(Self::with_evaluator(source, meta.board, simulations, eval))
    }

    /// The refusal for a board the model was not trained for.
    fn check_board(&self, cfg: BoardConfig) -> Result<(), String> {
        board_fits(&self.source, self.board, cfg)
    }

    fn decide(&mut self, v: &TurnView) -> Result<(usize, RootInfo), String> {
        let cfg = v.board.config();
        self.check_board(cfg)?;
        let engine = self.engine.get_or_insert_with(|| new_engine(cfg));
        let (eval, cache, sims) = (self.eval.as_mut(), &mut self.cache, self.simulations);
        Ok(on_width!(engine, (g, t) => think(g, t, Position::from_board(&v.board, v.seat), eval, cache, sims)))
    }
}

impl Strategy for AlphaZeroBot {
    fn fits(&self, cfg: BoardConfig) -> Result<(), String> {
        self.check_board(cfg)
    }

    fn choose(&mut self, v: &TurnView) -> Answer {
        self.analyze(v).0
    }

    /// Per column: the share of the root's visits and the mean value of the
    /// move for the player to move (`null` for full columns).
    fn analyze(&mut self, v: &TurnView) -> (Answer, Option<serde_json::Value>) {
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
                (Answer::Malformed(e.clone()), Some(json!({ "error": e })))
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

/// The `model` of an `alphazero` entry, or why there is none.
pub fn model_of(spec: &PlayerSpec) -> Result<&Path, String> {
    spec.model.as_deref().ok_or_else(|| {
        "is `alphazero` but has no `model`: give a training `out` directory or a checkpoint directory".to_string()
    })
}

/// Whether a model trained on `trained` (described as `source`) plays on
/// `cfg`, or the refusal saying why not.
pub fn board_fits(source: &str, trained: BoardMeta, cfg: BoardConfig) -> Result<(), String> {
    let b = BoardMeta::from(cfg);
    if b == trained {
        Ok(())
    } else {
        Err(format!(
            "model {source} was trained for a {trained} board and cannot play on this {b} board"
        ))
    }
}
