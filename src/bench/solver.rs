//! `c4sim bench solver`: the perfect solver's speed on 6×7, without a book.
//!
//! Two tables, both on seeded random positions (random legal moves from the
//! empty board, never a finished game, never a position where the side to
//! move wins at once), so every run times the same work:
//! - **by ply**, 0 to 20: the mean time per position and nodes/s at each
//!   ply, the curve a user needs to pick a budget;
//! - **by set**, after Pons' test sets: `end` (plies 28–34), `middle`
//!   (14–27) and `begin` (8–13), each split by the solver's own node count
//!   into easy, medium and hard thirds, with positions/s and the mean time
//!   per position.
//!
//! Each position is solved ([`Solver::solve`], one thread) from an empty
//! table; clearing the table is not timed. With `rounds > 1` every position
//! is timed that many times and its median kept. A position past the node
//! budget counts as "capped": its time enters the mean as the time spent,
//! so a row with capped positions is a lower bound, and says so.

use crate::game::BoardConfig;
use crate::solver::Solver;
use crate::util::median;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{self, Write};
use std::time::Instant;

/// What `c4sim bench solver` runs (its command-line flags).
#[derive(Clone, Debug, clap::Args)]
pub struct SolverBenchOptions {
    /// Seeded positions per ply in the per-ply table.
    #[arg(long, default_value_t = 5)]
    pub per_ply: usize,
    /// The plies of the per-ply table (inclusive).
    #[arg(long, default_value_t = 0)]
    pub min_ply: usize,
    #[arg(long, default_value_t = 20)]
    pub max_ply: usize,
    /// Positions per set (end 28–34, middle 14–27, begin 8–13 plies), split in thirds by nodes.
    #[arg(long, default_value_t = 30)]
    pub set_size: usize,
    /// Transposition table of about 2^N entries of 8 bytes.
    #[arg(long, default_value_t = 24)]
    pub table_log2: u32,
    /// Node budget per position; past it the position counts as capped.
    #[arg(long, default_value_t = 2_000_000_000)]
    pub budget: u64,
    /// Timings per position (the median is kept).
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    #[arg(long, default_value_t = 2024)]
    pub seed: u64,
}

impl Default for SolverBenchOptions {
    fn default() -> Self {
        SolverBenchOptions {
            per_ply: 5,
            min_ply: 0,
            max_ply: 20,
            set_size: 30,
            table_log2: 24,
            budget: 2_000_000_000,
            rounds: 1,
            seed: 2024,
        }
    }
}

/// The sets and their plies (inclusive).
pub const SETS: [(&str, usize, usize); 3] = [("end", 28, 34), ("middle", 14, 27), ("begin", 8, 13)];

/// `count` distinct seeded random move lists of exactly `plies` plies on
/// 6×7: no line made and no immediate win for the side to move.
pub fn random_positions(solver: &Solver, plies: usize, count: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<usize>> {
    let cols = solver.config().cols;
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(count);
    let mut tries = 0usize;
    // The empty board (and other very short games) has fewer distinct
    // positions than asked for: stop after enough failed tries.
    while out.len() < count && tries < 100 * count + 100 {
        tries += 1;
        let (moves, p) = solver.quiet_line(plies, rng);
        let wins_now = (0..cols).any(|c| solver.is_winning_move(&p, c));
        if moves.len() == plies && !wins_now && !out.contains(&moves) {
            out.push(moves);
        }
    }
    out
}

/// One position's measurement.
#[derive(Clone, Copy, Debug)]
pub struct Solved {
    pub nodes: u64,
    /// Median over the rounds, in seconds.
    pub secs: f64,
    pub capped: bool,
}

/// Solves `moves` `rounds` times from an empty table.
pub fn time_position(solver: &mut Solver, moves: &[usize], budget: u64, rounds: usize) -> Solved {
    let p = solver.position(moves).expect("a generated position");
    let mut times = Vec::with_capacity(rounds.max(1));
    let (mut nodes, mut capped) = (0, false);
    for _ in 0..rounds.max(1) {
        solver.clear_table();
        solver.reset_stats();
        let t = Instant::now();
        let v = solver.solve(&p, Some(budget));
        times.push(t.elapsed().as_secs_f64());
        nodes = solver.nodes();
        capped = v.is_none();
    }
    Solved {
        nodes,
        secs: median(&mut times),
        capped,
    }
}

/// A row's figures over some positions.
#[derive(Clone, Copy, Debug, Default)]
pub struct RowFigures {
    pub positions: usize,
    pub capped: usize,
    pub mean_s: f64,
    pub median_s: f64,
    pub mean_nodes: f64,
    pub nodes_per_s: f64,
    pub positions_per_s: f64,
}

impl RowFigures {
    /// The table's last four cells: mean and median time, mean nodes, nodes/s.
    fn time_cells(&self) -> String {
        format!(
            "{} | {} | {:.0} | {:.2} M",
            human_time(self.mean_s),
            human_time(self.median_s),
            self.mean_nodes,
            self.nodes_per_s / 1e6
        )
    }
}

pub fn row(solved: &[Solved]) -> RowFigures {
    if solved.is_empty() {
        return RowFigures::default();
    }
    let n = solved.len() as f64;
    let total_s: f64 = solved.iter().map(|s| s.secs).sum();
    let total_nodes: f64 = solved.iter().map(|s| s.nodes as f64).sum();
    let mut secs: Vec<f64> = solved.iter().map(|s| s.secs).collect();
    RowFigures {
        positions: solved.len(),
        capped: solved.iter().filter(|s| s.capped).count(),
        mean_s: total_s / n,
        median_s: median(&mut secs),
        mean_nodes: total_nodes / n,
        nodes_per_s: if total_s > 0.0 { total_nodes / total_s } else { 0.0 },
        positions_per_s: if total_s > 0.0 { n / total_s } else { 0.0 },
    }
}

/// A duration for people: µs, ms or s.
pub fn human_time(secs: f64) -> String {
    if secs < 1e-3 {
        format!("{:.1} µs", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:.2} ms", secs * 1e3)
    } else {
        format!("{secs:.2} s")
    }
}

fn capped_note(r: &RowFigures) -> String {
    if r.capped > 0 {
        format!("{} (≥, capped)", r.capped)
    } else {
        "0".to_string()
    }
}

/// Runs both tables and prints them as markdown.
pub fn solver_bench(o: &SolverBenchOptions, out: &mut dyn Write) -> io::Result<()> {
    let mut solver = Solver::new(BoardConfig::default(), o.table_log2).map_err(io::Error::other)?;
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    writeln!(
        out,
        "solver on 6x7, one thread, table {} entries ({} MiB), budget {} nodes per position, \
         {} round(s) per position (median), seed {}, no book",
        solver.table_entries(),
        (solver.table_entries() * 8) >> 20,
        o.budget,
        o.rounds.max(1),
        o.seed
    )?;
    // One random stream for both tables: the sets' positions depend on
    // the per-ply table's, as they always have.
    by_ply(o, &mut solver, &mut rng, out)?;
    by_set(o, &mut solver, &mut rng, out)
}

/// The per-ply table: `per_ply` seeded positions at each ply, timed.
fn by_ply(o: &SolverBenchOptions, solver: &mut Solver, rng: &mut ChaCha8Rng, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    writeln!(out, "## By ply")?;
    writeln!(out)?;
    writeln!(
        out,
        "| ply | positions | capped | mean time | median time | mean nodes | nodes/s |"
    )?;
    writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|")?;
    for ply in o.min_ply..=o.max_ply {
        let lines = random_positions(solver, ply, o.per_ply, rng);
        let solved: Vec<Solved> = lines
            .iter()
            .map(|m| time_position(solver, m, o.budget, o.rounds))
            .collect();
        let r = row(&solved);
        writeln!(
            out,
            "| {ply} | {} | {} | {} |",
            r.positions,
            capped_note(&r),
            r.time_cells()
        )?;
        out.flush()?;
    }
    Ok(())
}

/// The per-set table: for each of [`SETS`], `set_size` positions labelled
/// by the solver's nodes and split into easy, medium and hard thirds.
fn by_set(o: &SolverBenchOptions, solver: &mut Solver, rng: &mut ChaCha8Rng, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    writeln!(out, "## By set")?;
    writeln!(out)?;
    writeln!(
        out,
        "| set | plies | positions | capped | positions/s | mean time | median time | mean nodes | nodes/s |"
    )?;
    writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|")?;
    for (name, lo, hi) in SETS {
        let labelled = labelled_set(o, solver, rng, lo, hi);
        let n = labelled.len();
        for (k, part) in ["easy", "medium", "hard"].iter().enumerate() {
            let slice = &labelled[k * n / 3..(k + 1) * n / 3];
            let solved: Vec<Solved> = if o.rounds > 1 {
                slice
                    .iter()
                    .map(|(m, _)| time_position(solver, m, o.budget, o.rounds))
                    .collect()
            } else {
                slice.iter().map(|(_, s)| *s).collect()
            };
            let r = row(&solved);
            writeln!(
                out,
                "| {name}-{part} | {lo}–{hi} | {} | {} | {:.1} | {} |",
                r.positions,
                capped_note(&r),
                r.positions_per_s,
                r.time_cells()
            )?;
            out.flush()?;
        }
    }
    Ok(())
}

/// `set_size` distinct positions of `lo..=hi` plies (seeded plies spread
/// over the range), each timed once and sorted by its node count, which is
/// what splits the set into thirds.
fn labelled_set(
    o: &SolverBenchOptions,
    solver: &mut Solver,
    rng: &mut ChaCha8Rng,
    lo: usize,
    hi: usize,
) -> Vec<(Vec<usize>, Solved)> {
    let mut lines = Vec::with_capacity(o.set_size);
    while lines.len() < o.set_size {
        let ply = rng.gen_range(lo..=hi);
        for m in random_positions(solver, ply, 1, rng) {
            if !lines.contains(&m) {
                lines.push(m);
            }
        }
    }
    let mut labelled: Vec<(Vec<usize>, Solved)> = lines
        .into_iter()
        .map(|m| {
            let s = time_position(solver, &m, o.budget, 1);
            (m, s)
        })
        .collect();
    labelled.sort_by_key(|(_, s)| s.nodes);
    labelled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_seeded_distinct_and_open() {
        let s = Solver::new(BoardConfig::default(), 4).unwrap();
        let a = random_positions(&s, 10, 5, &mut ChaCha8Rng::seed_from_u64(1));
        let b = random_positions(&s, 10, 5, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(a, b);
        assert_eq!(a.len(), 5);
        for m in &a {
            let p = s.position(m).unwrap();
            assert_eq!(p.moves(), 10);
            assert!((0..7).all(|c| !s.is_winning_move(&p, c)));
        }
        // Only one empty board.
        assert_eq!(random_positions(&s, 0, 3, &mut ChaCha8Rng::seed_from_u64(1)).len(), 1);
    }

    #[test]
    fn a_capped_row_is_marked() {
        let r = row(&[
            Solved {
                nodes: 10,
                secs: 1.0,
                capped: false,
            },
            Solved {
                nodes: 30,
                secs: 3.0,
                capped: true,
            },
        ]);
        assert_eq!((r.positions, r.capped), (2, 1));
        assert!((r.mean_s - 2.0).abs() < 1e-12 && (r.nodes_per_s - 10.0).abs() < 1e-9);
        assert_eq!(capped_note(&r), "1 (≥, capped)");
        assert_eq!(human_time(0.0025), "2.50 ms");
    }
}
