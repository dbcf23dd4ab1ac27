//! "Show the solution" on the Play view: every column's outcome and exact
//! score of a position, from the score book at once or from the solver as
//! they are proven ([`super::progress`]), as the page's `analysis`
//! messages; [`analyze`] answers once within a node budget, saying which
//! columns are known and that the rest are not, instead of guessing.

use super::progress::{search, Known, CAP_NODES};
use crate::game::board::BoardError;
use crate::game::openings::game_after;
use crate::game::{BoardConfig, Game, DEFAULT_LETTERS};
use crate::players::solver::{SolverAt, SolverBot, SolverSpec};
use crate::players::{KindSpec, PlayerSpec, Strategy, TurnView};
use serde_json::{json, Value};
use std::sync::atomic::AtomicBool;

/// Nodes [`analyze`] searches (about a second on one core) and the profile's
/// budget for its own moves; past it the columns not yet proven come back
/// as `null`.
pub const ANALYSIS_NODES: u64 = 10_000_000;

/// The solvers analysis uses, shared by a server's requests: their spec,
/// read on first use (the profile's books are files), and solvers kept
/// between requests, so a request neither reads the books nor allocates a
/// table again, and the positions of one game reuse what the table holds.
#[derive(Default)]
pub struct Analysts {
    spec: std::sync::OnceLock<SolverSpec>,
    idle: std::sync::Mutex<Vec<SolverBot>>,
}

impl Analysts {
    /// A request's whole answer with a kept solver (or a new one when all
    /// are busy), searched progressively ([`super::progress`]) on the
    /// solver's threads: every message but the last goes to `send` as it
    /// is found; the last (`final`) is returned, or `None` when `cancel`
    /// stopped the search. With `viewer`, that player's own view is
    /// searched beside it and comes with the messages once known (always
    /// with the last). At most one solver per core is kept afterwards,
    /// each holding its table.
    pub fn analyze(
        &self,
        cfg: BoardConfig,
        pos: &str,
        viewer: Option<&PlayerSpec>,
        cancel: &AtomicBool,
        send: &(dyn Fn(Value) + Sync),
    ) -> Result<Option<Value>, Refused> {
        let (moves, game) = game_after(pos, cfg)?;
        let spec = self.spec.get_or_init(analysis_spec);
        let kept = self.idle.lock().map_or(None, |mut v| v.pop());
        let mut bot = match kept {
            Some(b) => b,
            None => SolverBot::from_spec(spec).map_err(|e| Refused::Board(e.to_string()))?,
        };
        bot.fits(cfg).map_err(|e| Refused::Board(e.to_string()))?;
        let view = TurnView::of(&game, 0, moves.len() % 2, &DEFAULT_LETTERS, None);
        let mut known = nothing_known(cfg, pos, &game, moves.len());
        let seen = std::sync::OnceLock::new();
        let with_view = |mut v: Value| {
            if let Some(p) = seen.get() {
                v["player"] = Value::clone(p);
            }
            v
        };
        let result = std::thread::scope(|scope| {
            let viewing = viewer.map(|spec| {
                let seen = &seen;
                scope.spawn(move || {
                    let p = player_view(spec, cfg, pos)
                        .unwrap_or_else(|e| json!({"name": spec.name, "error": e.to_string()}));
                    let _ = seen.set(p);
                })
            });
            let end = match bot.solver_at(&view).map_err(|e| Refused::Board(e.to_string()))? {
                SolverAt::Book(scores) => {
                    known.set_scores(scores);
                    Some(known)
                }
                SolverAt::Search {
                    solver,
                    pos: p,
                    threads,
                    ceiling,
                } => search(solver, &p, threads, ceiling, known, cancel, &|v| send(with_view(v))),
            };
            if let Some(v) = viewing {
                let _ = v.join();
            }
            Ok(end.map(|k| with_view(k.message(true, Some(CAP_NODES)))))
        });
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < crate::util::cores() {
                idle.push(bot);
            }
        }
        result
    }
}

/// The solver analysis uses: the shipped `solver` profile's keys (its
/// opening and score books) where the server runs from a checkout that has
/// them, else a bare solver; always within [`ANALYSIS_NODES`].
pub fn analysis_spec() -> SolverSpec {
    let profile = crate::scenario::parse_player_spec("solver")
        .ok()
        .and_then(|p| match p.kind {
            KindSpec::Solver(s) => Some(s),
            _ => None,
        })
        .unwrap_or_default();
    SolverSpec {
        nodes: Some(ANALYSIS_NODES),
        ..profile
    }
}

/// Why a request gets no analysis.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// `pos` is not a position of this board.
    #[error("{0}")]
    Position(#[from] BoardError),
    /// The solver (or the player asked for its view) cannot analyse on
    /// this board at all.
    #[error("{0}")]
    Board(String),
}

/// The `analysis` message's data for `pos` (a move string, columns from 1)
/// on `cfg`: `scores` (per column, `null` for a full column or one not
/// proven), `words` ("wins in 3", "draw", "loses in 5", `null`), `proven`
/// (every open column known) and the budget. Runs the search: call it off
/// the actor's thread.
pub fn analyze(spec: &SolverSpec, cfg: BoardConfig, pos: &str) -> Result<Value, Refused> {
    let mut bot = SolverBot::from_spec(spec).map_err(|e| Refused::Board(e.to_string()))?;
    analyze_with(&mut bot, spec.nodes, cfg, pos)
}

/// [`analyze`] with `bot`, searching at most `nodes` nodes.
fn analyze_with(bot: &mut SolverBot, nodes: Option<u64>, cfg: BoardConfig, pos: &str) -> Result<Value, Refused> {
    let (moves, game) = game_after(pos, cfg)?;
    bot.fits(cfg).map_err(|e| Refused::Board(e.to_string()))?;
    let view = TurnView::of(&game, 0, moves.len() % 2, &DEFAULT_LETTERS, None);
    // The scores alone: no move is chosen, so an unproven position costs
    // one budget, not a second search for a fallback move.
    let scores = bot
        .column_scores(&view, nodes)
        .map_err(|e| Refused::Board(e.to_string()))?;
    let mut known = nothing_known(cfg, pos, &game, moves.len());
    known.set_scores(scores);
    Ok(known.message(true, nodes))
}

/// Nothing known yet of `pos`, the position of `game` after `ply` plies.
fn nothing_known(cfg: BoardConfig, pos: &str, game: &Game, ply: usize) -> Known {
    let open = (0..cfg.cols).map(|c| game.board().height(c) < cfg.rows).collect();
    Known::new(pos, cfg.cells(), ply, open)
}

/// Whether the page can show `spec`'s own view: the kinds whose search
/// says something of every column (AlphaZero: visit shares and expected
/// scores; MCTS: visit shares; minimax: its evaluation). The solver's view
/// is the solution itself; the others have none.
pub fn has_view(spec: &PlayerSpec) -> bool {
    matches!(
        spec.kind,
        KindSpec::Alphazero(_) | KindSpec::Mcts(_) | KindSpec::Minimax(_)
    )
}

/// `spec`'s own view of `pos` (the `analysis` message's `player`): its
/// kind, the column it would play (from 0), what it says of each column
/// (as `c4sim analyze` prints it for that kind) and its note. The player
/// is built for this request, on one thread (an analysis holds one core),
/// and searches as it plays. Runs the search: call it off the actor's thread.
pub fn player_view(spec: &PlayerSpec, cfg: BoardConfig, pos: &str) -> Result<Value, Refused> {
    let (moves, game) = game_after(pos, cfg)?;
    let mut spec = spec.clone();
    if let KindSpec::Alphazero(a) = &mut spec.kind {
        a.threads = Some(1);
    }
    let mut bot = crate::players::build_strategy(&spec, 0).map_err(|e| Refused::Board(e.to_string()))?;
    let view = TurnView::of(&game, 0, moves.len() % 2, &DEFAULT_LETTERS, None);
    let (answer, columns) = bot.analyze(&view);
    let column = match answer {
        crate::game::Answer::Column(c) => Some(c),
        _ => None,
    };
    Ok(json!({
        "name": spec.name,
        "kind": spec.kind.as_str(),
        "column": column,
        "columns": columns,
        "note": bot.explain(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SolverSpec {
        SolverSpec {
            nodes: Some(ANALYSIS_NODES),
            ..SolverSpec::default()
        }
    }

    #[test]
    fn scores_words_and_proof_of_a_late_position() {
        let cfg = BoardConfig::default();
        // Red (to move) has three in the bottom row: column 4 wins at once.
        let a = analyze(&small(), cfg, "1122334").unwrap_err();
        assert!(matches!(a, Refused::Position(_)), "a finished game is not a position");
        // A winning column is known at once.
        let a = analyze(&small(), cfg, "434543").unwrap();
        assert_eq!(a["scores"][3], 18);
        assert_eq!(a["words"][3], "wins in 1");
        // Early (ply 2, no book here): not every column within the budget,
        // and the answer says so.
        let a = analyze(&small(), cfg, "44").unwrap();
        assert_eq!(a["proven"], false);
        // Later (ply 14, one of the solver's published positions): all
        // seven, as the solver gives them without a budget.
        let pos = "43745416472735";
        let a = analyze(&small(), cfg, pos).unwrap();
        assert_eq!(a["proven"], true);
        let mut s = crate::solver::Solver::new(cfg, 20).unwrap();
        let p = s.position(&game_after(pos, cfg).unwrap().0).unwrap();
        assert_eq!(a["scores"], json!(s.scores(&p, None)));
    }

    #[test]
    fn bad_positions_and_unproven_columns() {
        let cfg = BoardConfig::default();
        assert!(matches!(analyze(&small(), cfg, "8"), Err(Refused::Position(_))));
        assert!(matches!(analyze(&small(), cfg, "1111111"), Err(Refused::Position(_))));
        let tiny = SolverSpec {
            nodes: Some(1),
            ..SolverSpec::default()
        };
        let a = analyze(&tiny, cfg, "").unwrap();
        assert_eq!(a["proven"], false);
        assert!(a["scores"].as_array().unwrap().iter().any(Value::is_null));
    }

    /// A player's own view: AlphaZero's visit shares and expected scores
    /// (summing to 1 over the open columns), its column and note; minimax's
    /// evaluation; refused for a finished game.
    #[test]
    fn a_players_view_of_a_position() {
        let cfg = BoardConfig::new(4, 5, 3).unwrap();
        let mm = crate::scenario::parse_player_spec("{kind: minimax, depth: 4, name: M}").unwrap();
        assert!(has_view(&mm));
        let v = player_view(&mm, cfg, "33").unwrap();
        assert_eq!(v["name"], "M");
        assert_eq!(v["kind"], "minimax");
        assert_eq!(v["columns"].as_array().unwrap().len(), 5);
        let col = v["column"].as_u64().unwrap() as usize;
        let best = v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_i64)
            .max()
            .unwrap();
        assert_eq!(
            v["columns"][col].as_i64().unwrap(),
            best,
            "it plays its best column: {v}"
        );
        assert!(matches!(player_view(&mm, cfg, "9"), Err(Refused::Position(_))));
        let solver = crate::scenario::parse_player_spec("{kind: solver}").unwrap();
        assert!(!has_view(&solver), "the solver's view is the solution");
        assert!(!has_view(&crate::scenario::parse_player_spec("random").unwrap()));

        // The shipped network, on its board, at 200 simulations.
        let az = crate::scenario::parse_player_spec("{use: alphazero, simulations: 200, solver: null}").unwrap();
        let v = player_view(&az, BoardConfig::default(), "4453").unwrap();
        assert_eq!(v["kind"], "alphazero");
        let cols = v["columns"].as_array().unwrap();
        let shares: Vec<f64> = cols.iter().map(|c| c["share"].as_f64().unwrap()).collect();
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-6, "{v}");
        let col = v["column"].as_u64().unwrap() as usize;
        assert!(
            shares.iter().all(|&s| s <= shares[col]),
            "it plays its most visited column: {v}"
        );
        assert!(v["note"].as_str().unwrap().contains("expects to score"), "{v}");
    }

    /// Kept solvers answer as new ones do (all of a late position at
    /// once, in one final message), and are kept (one here); a position
    /// not of the board is refused.
    #[test]
    fn kept_solvers_answer_as_new_ones() {
        let cfg = BoardConfig::default();
        let analysts = Analysts::default();
        let pos = "43745416472735";
        let fresh = analyze(&analysis_spec(), cfg, pos).unwrap();
        let never = AtomicBool::new(false);
        let sent = std::sync::Mutex::new(Vec::new());
        let push = |v: Value| sent.lock().unwrap().push(v);
        let mut a = analysts.analyze(cfg, pos, None, &never, &push).unwrap().unwrap();
        assert_eq!(a["final"], true);
        assert_eq!(a["scores"], fresh["scores"]);
        assert_eq!(a["outcomes"], fresh["outcomes"]);
        assert_eq!(analysts.idle.lock().unwrap().len(), 1);
        a = analysts.analyze(cfg, pos, None, &never, &push).unwrap().unwrap();
        assert_eq!(a["scores"], fresh["scores"]);
        assert_eq!(analysts.idle.lock().unwrap().len(), 1);
        assert!(matches!(
            analysts.analyze(cfg, "8", None, &never, &push),
            Err(Refused::Position(_))
        ));
        // From the score book (ply 2): one final message, nothing before.
        let sent_before = sent.lock().unwrap().len();
        let a = analysts.analyze(cfg, "44", None, &never, &push).unwrap().unwrap();
        assert_eq!(a["proven"], true, "{a}");
        assert_eq!(sent.lock().unwrap().len(), sent_before);
    }

    /// A player's view comes with the final message of a progressive answer.
    #[test]
    fn a_view_comes_with_the_last_message() {
        let cfg = BoardConfig::new(4, 5, 3).unwrap();
        let mm = crate::scenario::parse_player_spec("{kind: minimax, depth: 4, name: M}").unwrap();
        let never = AtomicBool::new(false);
        let a = Analysts::default()
            .analyze(cfg, "33", Some(&mm), &never, &|_| {})
            .unwrap()
            .unwrap();
        assert_eq!(a["player"]["name"], "M");
        assert_eq!(a["proven"], true);
    }
}
