//! `c4sim analyze`: asks one player for its move on positions read from
//! standard input and prints what it knows, one JSON object a line.

use crate::game::openings::game_after;
use crate::game::{Answer, BoardConfig, DEFAULT_LETTERS};
use crate::players::kinds::{RunsAs, KINDS};
use crate::players::{build_strategy, BuildError, PlayerSpec, Strategy, TurnView};
use serde_json::json;
use std::io::{BufRead, Write};

/// A player `analyze` cannot ask, with the kinds it could.
#[derive(Debug, thiserror::Error)]
#[error("{source}; kinds that answer without a person: {}", bots.join(", "))]
pub struct AnalyzerError {
    #[source]
    pub source: BuildError,
    pub bots: Vec<&'static str>,
}

/// Builds the strategy for `analyze`, or says which kinds can answer.
pub fn analyzer(spec: &PlayerSpec, seed: u64) -> Result<Box<dyn Strategy>, AnalyzerError> {
    build_strategy(spec, seed).map_err(|source| AnalyzerError {
        source,
        bots: KINDS
            .iter()
            .filter(|k| k.runs_as == RunsAs::Bot)
            .map(|k| k.name)
            .collect(),
    })
}

/// One position (a move string, columns from 1) → one JSON object.
pub fn analyze_line(strategy: &mut dyn Strategy, cfg: BoardConfig, line: &str) -> serde_json::Value {
    let position = line.trim();
    let (moves, game) = match game_after(position, cfg) {
        Ok(g) => g,
        Err(e) => return json!({"position": position, "error": e.to_string()}),
    };
    let view = TurnView::of(&game, 0, moves.len() % 2, &DEFAULT_LETTERS, None);
    let (answer, scores) = strategy.analyze(&view);
    let column = match answer {
        Answer::Column(c) => json!(c + 1),
        Answer::Malformed(_) => serde_json::Value::Null,
    };
    json!({"position": position, "column": column, "scores": scores})
}

/// Reads positions until end of input.
pub fn run(
    strategy: &mut dyn Strategy,
    cfg: BoardConfig,
    input: impl BufRead,
    mut out: impl Write,
) -> std::io::Result<()> {
    for line in input.lines() {
        let v = analyze_line(strategy, cfg, &line?);
        writeln!(out, "{v}")?;
        out.flush()?;
    }
    Ok(())
}
