//! `c4sim bench accuracy`: how often a player leaves perfect play, on test
//! sets that c4sim generates and the perfect solver labels once (after
//! Pascal Pons' Begin-Easy … End-Hard sets, as AlphaZero.jl uses them).
//!
//! # The sets
//! 6×7 positions reached by seeded play: each ply is, with even odds, a
//! uniformly random legal move or minimax depth 4's move, so the positions
//! are ones games reach, not absurd ones. A line that ends the game before
//! its target ply is dropped and another is played. A position is kept only
//! if the side to move has no move that wins at once (those are decided in
//! one move and every player gets them right) and it was not kept before.
//! Three groups by plies — begin [`BEGIN`], middle [`MIDDLE`], end [`END`],
//! the target ply drawn uniformly — each split into terciles by the nodes
//! the solver needs to label the position from an empty table: easy,
//! medium, hard. Positions the solver cannot label within the node budget
//! are skipped (and replaced, so every set has its full size).
//!
//! The file (JSON lines) starts with a header — format, version, seed,
//! sizes, how the positions were made — then one position a line: its set,
//! move string (columns from 1), plies, the solver's nodes, and every
//! column's exact score (Pons' convention, side to move's view, `null` for
//! a full column).
//!
//! # A mistake
//! As [`crate::solver::sets`] judges it (W/D/L class worse than the best
//! column's; exact-best when the score is the best); the sets file's types,
//! parsing, `judge` and `Tally` live there, and asking a player for its
//! moves in [`crate::players::judge`], so training's `eval.accuracy`
//! shares them.

use crate::actors::mode::ModeError;
use crate::bench::error::BenchError;
use crate::game::openings::move_string;
use crate::game::Board;
use crate::players::judge::play_all;
use crate::players::{build_strategy, Strategy};
use crate::search::minimax::Minimax;
pub use crate::solver::sets::{
    board, has_choice, judge, parse_choice, parse_sets, set_names, subset, tally_by_set, Labelled, Sets, Tally,
    Verdict, ALL, BEGIN, BEGIN_MIDDLE, DEFAULT_SETS, END, FORMAT, GROUPS, LEVELS, MIDDLE, VERSION,
};
use crate::solver::{Pos, Solver};
use crate::util::seed::derive;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The depth of the minimax that plays half the moves of the generator.
const GUIDE_DEPTH: u32 = 4;
/// Seed stream of one generated line.
const STREAM_LINE: u64 = 0xacc1;

#[derive(clap::Args, Debug, Clone)]
pub struct AccuracyArgs {
    /// A player spec (name, profile or inline YAML); repeat for more players.
    #[arg(long = "player")]
    pub players: Vec<String>,
    /// The sets file (read, or written by --make-sets).
    #[arg(long, default_value = DEFAULT_SETS)]
    pub sets: PathBuf,
    /// Generate and label the sets file instead of benchmarking.
    #[arg(long)]
    pub make_sets: bool,
    /// Positions per set for --make-sets.
    #[arg(long, default_value_t = 100)]
    pub per_set: usize,
    /// Seed of the generated positions (--make-sets) or of the players.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The groups --make-sets makes (comma-separated: begin, middle, end); all three by default.
    #[arg(long, value_delimiter = ',')]
    pub groups: Vec<String>,
    /// Solver node budget per position for --make-sets; harder positions are skipped.
    #[arg(long, default_value_t = 400_000_000)]
    pub budget: u64,
    /// Solver transposition table of 2^N entries (16 bytes each) per thread.
    #[arg(long, default_value_t = 23)]
    pub table_log2: u32,
    /// Threads labelling positions (--make-sets).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Only the first N positions of each set.
    #[arg(long)]
    pub limit: Option<usize>,
    /// N positions in all instead: the fixed subset of training's
    /// `eval.accuracy`, shared evenly between the sets and spread over each.
    #[arg(long, conflicts_with = "limit")]
    pub positions: Option<usize>,
    /// Only these sets (comma-separated names, e.g. begin-hard,end-easy).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Reads a sets file, checking its header.
pub fn load_sets(path: &Path) -> Result<Sets, BenchError> {
    let text = std::fs::read_to_string(path).map_err(BenchError::file(path))?;
    parse_sets(&text, &path.display().to_string()).map_err(BenchError::below)
}

/// Plays one seeded line to `target` plies; `None` when it ends the game
/// first or stops at a position the side to move wins at once.
fn play_line(solver: &Solver, guide: &mut Minimax, seed: u64, target: usize) -> Option<(Vec<usize>, Pos)> {
    let cfg = solver.config();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut board = Board::new(cfg);
    let mut pos = solver.start();
    let mut moves = Vec::with_capacity(target);
    while moves.len() < target {
        let legal: Vec<usize> = (0..cfg.cols).filter(|&c| solver.can_play(&pos, c)).collect();
        if legal.is_empty() {
            return None;
        }
        let col = if rng.gen_bool(0.5) {
            legal[rng.gen_range(0..legal.len())]
        } else {
            guide.choose(&board, moves.len() % 2)
        };
        if solver.is_winning_move(&pos, col) {
            return None;
        }
        pos = solver.play(&pos, col).ok()?;
        board.drop_piece(col, moves.len() % 2).ok()?;
        moves.push(col);
    }
    let wins_now = (0..cfg.cols).any(|c| solver.can_play(&pos, c) && solver.is_winning_move(&pos, c));
    (!wins_now).then_some((moves, pos))
}

/// A label: the solver's nodes and every column's exact score.
type Label = (u64, Vec<Option<i32>>);

/// Labels positions on `threads` threads, each with its own solver whose
/// table is cleared before every position (so node counts do not depend on
/// the order). `None` where the budget ran out.
fn label_all(
    positions: &[(Vec<usize>, Pos)],
    budget: u64,
    table_log2: u32,
    threads: usize,
) -> Result<Vec<Option<Label>>, BenchError> {
    let next = AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Label>>> = positions.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let cfg = board();
    let mut solvers = Vec::new();
    for _ in 0..threads.max(1) {
        solvers.push(Solver::new(cfg, table_log2)?);
    }
    std::thread::scope(|s| {
        for solver in solvers.iter_mut() {
            let (next, results) = (&next, &results);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, pos)) = positions.get(i) else { break };
                solver.clear_table();
                solver.reset_stats();
                let scores = solver.scores(pos, Some(budget));
                let complete = (0..cfg.cols).all(|c| !solver.can_play(pos, c) || scores[c].is_some());
                if complete {
                    *results[i].lock().unwrap() = Some((solver.nodes(), scores));
                }
            });
        }
    });
    Ok(results.into_iter().map(|m| m.into_inner().unwrap()).collect())
}

/// What `--make-sets` did.
#[derive(Debug)]
pub struct MadeSets {
    pub sets: Sets,
    /// Positions the solver could not label within the budget.
    pub skipped: usize,
    /// Labelled positions dropped because every column has the same
    /// win/draw/loss class.
    pub no_choice: usize,
    pub seconds: f64,
}

/// Generates and labels `per_set` positions for each set of `groups`
/// ([`GROUPS`]: all nine).
pub fn make_sets(
    groups: &[(&str, (usize, usize))],
    per_set: usize,
    seed: u64,
    budget: u64,
    table_log2: u32,
    threads: usize,
    progress: &mut dyn Write,
) -> Result<MadeSets, BenchError> {
    let started = Instant::now();
    let mut maker = Maker {
        solver: Solver::new(board(), 1)?,
        guide: Minimax::new(GUIDE_DEPTH),
        seen: HashSet::new(),
        line: 0,
        skipped: 0,
        no_choice: 0,
        seed,
        budget,
        table_log2,
        threads,
        started,
    };
    let want = per_set * LEVELS.len();
    let mut positions = Vec::new();
    for &(group, plies) in groups {
        let kept = maker.group(group, plies, want, progress)?;
        positions.extend(into_levels(group, kept, want));
    }
    let header = sets_header(groups, per_set, seed, budget, maker.skipped, maker.no_choice);
    Ok(MadeSets {
        sets: Sets { header, positions },
        skipped: maker.skipped,
        no_choice: maker.no_choice,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A kept position: its moves, the solver's nodes and every column's score.
type Kept = (Vec<usize>, u64, Vec<Option<i32>>);

/// What [`make_sets`] carries from group to group: the generator, the
/// positions seen (no position twice in the file, whatever its group), the
/// seeded line counter and what was dropped.
struct Maker {
    /// Only plays moves and spots immediate wins (a 2-entry table).
    solver: Solver,
    guide: Minimax,
    seen: HashSet<Pos>,
    line: u64,
    skipped: usize,
    no_choice: usize,
    seed: u64,
    budget: u64,
    table_log2: u32,
    threads: usize,
    started: Instant,
}

impl Maker {
    /// `want` labelled positions of `group` with a W/D/L choice: lines are
    /// played and labelled in batches (labelling is what takes the time,
    /// and it runs on every thread) until enough are kept.
    fn group(
        &mut self,
        group: &str,
        (lo, hi): (usize, usize),
        want: usize,
        progress: &mut dyn Write,
    ) -> Result<Vec<Kept>, BenchError> {
        let mut done: Vec<Kept> = Vec::new();
        while done.len() < want {
            let batch = self.new_positions(lo, hi, want - done.len());
            let labels = label_all(&batch, self.budget, self.table_log2, self.threads)?;
            for ((moves, _), label) in batch.into_iter().zip(labels) {
                match label {
                    Some((nodes, scores)) if has_choice(&scores) => done.push((moves, nodes, scores)),
                    Some(_) => self.no_choice += 1,
                    None => self.skipped += 1,
                }
            }
            let _ = writeln!(
                progress,
                "{group}: {}/{want} kept, {} without a W/D/L choice and {} over the budget dropped so far, {:.0} s",
                done.len(),
                self.no_choice,
                self.skipped,
                self.started.elapsed().as_secs_f64()
            );
        }
        Ok(done)
    }

    /// `n` positions not seen before, of `lo..=hi` plies, each from the
    /// next seeded line (the line number, not the batch, fixes its seed, so
    /// the sets do not depend on the threads).
    fn new_positions(&mut self, lo: usize, hi: usize, n: usize) -> Vec<(Vec<usize>, Pos)> {
        let mut batch = Vec::new();
        while batch.len() < n {
            self.line += 1;
            let s = derive(self.seed, self.line, STREAM_LINE);
            let target = lo + (s % (hi - lo + 1) as u64) as usize;
            if let Some((moves, pos)) = play_line(&self.solver, &mut self.guide, s, target) {
                if self.seen.insert(pos) {
                    batch.push((moves, pos));
                }
            }
        }
        batch
    }
}

/// A group's kept positions as the file's entries, split into terciles
/// (easy, medium, hard) by the solver's nodes; ties keep generation order.
fn into_levels(group: &str, mut kept: Vec<Kept>, want: usize) -> impl Iterator<Item = Labelled> + '_ {
    let cols = board().cols;
    kept.sort_by_key(|(_, nodes, _)| *nodes);
    kept.into_iter().enumerate().map(move |(i, (moves, nodes, scores))| {
        let level = LEVELS[(i * LEVELS.len() / want).min(LEVELS.len() - 1)];
        Labelled {
            set: format!("{group}-{level}"),
            ply: moves.len(),
            moves: move_string(&moves, cols),
            nodes,
            scores,
        }
    })
}

/// The sets file's header: what was made and how, so a reader can tell
/// two sets files apart and remake one.
fn sets_header(
    groups: &[(&str, (usize, usize))],
    per_set: usize,
    seed: u64,
    budget: u64,
    skipped: usize,
    no_choice: usize,
) -> serde_json::Value {
    json!({
        "format": FORMAT,
        "version": VERSION,
        "board": "6x7x4",
        "seed": seed,
        "per_set": per_set,
        "sets": groups
            .iter()
            .flat_map(|(g, _)| LEVELS.iter().map(move |l| format!("{g}-{l}")))
            .collect::<Vec<_>>(),
        "plies": {"begin": [BEGIN.0, BEGIN.1], "middle": [MIDDLE.0, MIDDLE.1], "end": [END.0, END.1]},
        "generator": format!(
            "seeded lines: each ply a uniformly random legal move or minimax depth {GUIDE_DEPTH}'s, even odds; \
             target ply uniform in the group's range; lines that end the game early are dropped; kept: positions \
             not seen before where the side to move has no immediate win and the columns' win/draw/loss classes \
             differ; sets: terciles of the solver's nodes (empty table) per group"
        ),
        "scores": "Pons' convention: every column's exact score for the side to move (positive wins, 0 draw, negative loses), null for a full column",
        "label_budget_nodes": budget,
        "skipped_over_budget": skipped,
        "dropped_without_choice": no_choice,
    })
}

/// Writes a sets file.
pub fn save_sets(path: &Path, sets: &Sets) -> Result<(), BenchError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(BenchError::file(dir))?;
    }
    let mut text = serde_json::to_string(&sets.header)? + "\n";
    for p in &sets.positions {
        text += &serde_json::to_string(p)?;
        text.push('\n');
    }
    std::fs::write(path, text).map_err(BenchError::file(path))
}

/// A tally as the JSON report gives it.
fn tally_json(t: &Tally) -> serde_json::Value {
    json!({
        "positions": t.n,
        "mistakes": t.mistakes,
        "mistake_rate": t.mistake_rate(),
        "mistake_se": t.mistake_se(),
        "exact_best": t.exact_best,
        "exact_best_rate": t.exact_rate(),
        "exact_best_se": t.exact_se(),
        "ms_per_move": t.ms_per_move(),
    })
}

/// One player's results: per set, then the begin+middle and all totals.
#[derive(Clone, Debug)]
pub struct PlayerResult {
    pub spec: String,
    pub name: String,
    pub sets: Vec<(String, Tally)>,
}

impl PlayerResult {
    pub fn get(&self, set: &str) -> Option<&Tally> {
        self.sets.iter().find(|(s, _)| s == set).map(|(_, t)| t)
    }
}

/// Runs one strategy on `positions` (grouped by set, in `set_order`).
pub fn bench_player(
    strategy: &mut dyn Strategy,
    positions: &[&Labelled],
    set_order: &[String],
    seed: u64,
) -> Result<Vec<(String, Tally)>, BenchError> {
    let verdicts = play_all(strategy, positions, seed).map_err(BenchError::below)?;
    Ok(tally_by_set(positions, &verdicts, set_order))
}

/// The positions to run: `only` sets (all if empty), the first `limit` of each.
pub fn select<'a>(
    sets: &'a Sets,
    only: &[String],
    limit: Option<usize>,
) -> Result<(Vec<String>, Vec<&'a Labelled>), BenchError> {
    let names = set_names();
    if let Some(o) = only.iter().find(|o| !names.contains(o)) {
        return Err(BenchError::UnknownSet {
            name: o.clone(),
            known: names,
        });
    }
    let order: Vec<String> = names
        .into_iter()
        .filter(|n| only.is_empty() || only.contains(n))
        .collect();
    let mut chosen = Vec::new();
    for name in &order {
        let of_set = sets.positions.iter().filter(|p| &p.set == name);
        chosen.extend(of_set.take(limit.unwrap_or(usize::MAX)));
    }
    Ok((order, chosen))
}

/// The markdown tables: W/D/L mistakes, exact-best moves, time per move.
pub fn markdown(results: &[PlayerResult], order: &[String]) -> String {
    let mut cols: Vec<String> = order.to_vec();
    cols.push(BEGIN_MIDDLE.into());
    cols.push(ALL.into());
    let n_of = |c: &str| results.first().and_then(|r| r.get(c)).map_or(0, |t| t.n);
    let head = |title: &str| {
        let mut s = format!("| {title} |");
        for c in &cols {
            s += &format!(" {c} ({}) |", n_of(c));
        }
        s += "\n|---|";
        s += &"---:|".repeat(cols.len());
        s + "\n"
    };
    // One table: a row per player, a cell per set from its tally.
    let table = |title: &str, cell: &dyn Fn(&Tally) -> String| {
        let mut s = format!("{title}\n\n{}", head("player"));
        for r in results {
            s += &format!("| {} |", r.name);
            for c in &cols {
                s += &format!(" {} |", cell(&r.get(c).cloned().unwrap_or_default()));
            }
            s += "\n";
        }
        s
    };
    let mut out = table(
        "W/D/L mistakes, % ± standard error (positions per set in brackets):",
        &|t| format!("{:.1} ± {:.1}", 100.0 * t.mistake_rate(), 100.0 * t.mistake_se()),
    );
    out += "\n";
    out += &table("Exact-best moves, %:", &|t| format!("{:.1}", 100.0 * t.exact_rate()));
    out += "\n";
    out += &table("Time per move, ms (mean):", &|t| {
        let ms = t.ms_per_move();
        if ms < 1.0 {
            format!("{ms:.3}")
        } else {
            format!("{ms:.1}")
        }
    });
    out
}

/// The JSON report.
pub fn to_json(
    results: &[PlayerResult],
    sets_file: &Path,
    header: &serde_json::Value,
    seed: u64,
    limit: Option<usize>,
) -> serde_json::Value {
    json!({
        "sets_file": sets_file.display().to_string(),
        "sets_seed": header["seed"],
        "seed": seed,
        "limit": limit,
        "players": results.iter().map(|r| json!({
            "name": r.name,
            "spec": r.spec,
            "sets": r.sets.iter().map(|(s, t)| (s.clone(), tally_json(t))).collect::<serde_json::Map<_, _>>(),
        })).collect::<Vec<_>>(),
    })
}

/// A group of positions: its name and its plies.
type Group = (&'static str, (usize, usize));

/// The groups of `--groups` (all of [`GROUPS`] when empty), in
/// [`GROUPS`]' order.
fn chosen_groups(names: &[String]) -> Result<Vec<Group>, BenchError> {
    if let Some(bad) = names.iter().find(|n| !GROUPS.iter().any(|(g, _)| g == n)) {
        return Err(BenchError::UnknownGroup(bad.clone()));
    }
    Ok(GROUPS
        .into_iter()
        .filter(|(g, _)| names.is_empty() || names.iter().any(|n| n == g))
        .collect())
}

/// Bad input to a bench: exit 2, the message after `error: `.
fn usage(e: impl std::fmt::Display) -> ModeError {
    ModeError::Usage(format!("error: {e}").into())
}

/// A failure while a bench ran: exit 1.
fn failed(e: impl std::fmt::Display) -> ModeError {
    ModeError::Failed(e.to_string().into())
}

/// `c4sim bench accuracy`: bad arguments are [`ModeError::Usage`], a failure
/// while measuring [`ModeError::Failed`].
pub fn run(args: &AccuracyArgs) -> Result<(), ModeError> {
    if args.make_sets {
        return run_make_sets(args);
    }
    if args.players.is_empty() {
        return Err(usage(BenchError::NoPlayer));
    }
    let sets = load_sets(&args.sets).map_err(usage)?;
    let (order, mut chosen) = select(&sets, &args.only, args.limit).map_err(usage)?;
    if let Some(n) = args.positions {
        chosen = subset(&sets, &order, n);
    }
    let mut results = Vec::new();
    for spec_text in &args.players {
        let spec = crate::scenario::parse_player_spec(spec_text).map_err(usage)?;
        let mut strategy = build_strategy(&spec, args.seed).map_err(usage)?;
        strategy.fits(board()).map_err(usage)?;
        let started = Instant::now();
        let sets = bench_player(strategy.as_mut(), &chosen, &order, args.seed).map_err(failed)?;
        eprintln!(
            "{}: {} positions in {:.1} s",
            spec.name,
            chosen.len(),
            started.elapsed().as_secs_f64()
        );
        results.push(PlayerResult {
            spec: spec_text.clone(),
            name: display_name(spec_text, &spec.name),
            sets,
        });
    }
    print!("{}", markdown(&results, &order));
    if let Some(path) = &args.json {
        let v = to_json(&results, &args.sets, &sets.header, args.seed, args.limit);
        let text = serde_json::to_string_pretty(&v).map_err(failed)? + "\n";
        std::fs::write(path, text).map_err(|e| failed(BenchError::file(path)(e)))?;
    }
    Ok(())
}

/// `c4sim bench accuracy --make-sets`: generates, labels and writes the
/// sets file, then says how many positions each set got.
fn run_make_sets(args: &AccuracyArgs) -> Result<(), ModeError> {
    let groups = chosen_groups(&args.groups).map_err(usage)?;
    let made = make_sets(
        &groups,
        args.per_set.max(1),
        args.seed,
        args.budget,
        args.table_log2,
        args.threads,
        &mut std::io::stderr(),
    )
    .map_err(usage)?;
    save_sets(&args.sets, &made.sets).map_err(failed)?;
    let mut counts = String::new();
    for name in set_names() {
        let n = made.sets.positions.iter().filter(|p| p.set == name).count();
        if n > 0 {
            counts += &format!("{name} {n}; ");
        }
    }
    println!(
        "{}: {} positions ({counts}{} dropped without a W/D/L choice, {} skipped over the budget of {} nodes), \
         labelled in {:.0} s on {} threads",
        args.sets.display(),
        made.sets.positions.len(),
        made.no_choice,
        made.skipped,
        args.budget,
        made.seconds,
        args.threads
    );
    Ok(())
}

/// A table row's name: the spec itself when it is short inline YAML (the
/// name alone would hide the depth or simulations), else the player's name.
fn display_name(spec: &str, name: &str) -> String {
    let s = spec.trim();
    if s.starts_with('{') {
        s.replace('|', "/")
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::openings::parse_move_string;

    #[test]
    fn groups_to_make_are_chosen_by_name_in_their_order() {
        let names = |v: &[&str]| chosen_groups(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let got = |v: &[&str]| names(v).unwrap().into_iter().map(|(g, _)| g).collect::<Vec<_>>();
        assert_eq!(got(&[]), ["begin", "middle", "end"]);
        assert_eq!(got(&["end", "middle"]), ["middle", "end"]);
        assert!(names(&["start"]).unwrap_err().to_string().contains("no group `start`"));
    }

    #[test]
    fn generated_sets_are_deterministic_and_labelled() {
        let mut sink = Vec::new();
        // The end group only: the fast one in a debug build.
        let a = make_sets(&[("end", END)], 2, 7, 50_000_000, 16, 2, &mut sink).unwrap();
        let b = make_sets(&[("end", END)], 2, 7, 50_000_000, 16, 1, &mut sink).unwrap();
        assert_eq!(a.sets.positions, b.sets.positions);
        assert_eq!(a.sets.positions.len(), 6);
        let names = [
            "end-easy",
            "end-easy",
            "end-medium",
            "end-medium",
            "end-hard",
            "end-hard",
        ];
        for (p, name) in a.sets.positions.iter().zip(names) {
            assert_eq!(&p.set, name);
            let moves = parse_move_string(&p.moves, 7).unwrap();
            assert_eq!(moves.len(), p.ply);
            assert!((END.0..=END.1).contains(&p.ply));
        }
        assert!(a.sets.positions.windows(2).all(|w| w[0].nodes <= w[1].nodes));
    }
}
