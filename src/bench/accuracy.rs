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
//! A move is a W/D/L mistake when its class (win > draw > loss, the sign of
//! its exact score) is worse than the best column's; it is exact-best when
//! its score equals the best score (fastest win, slowest loss). Rates come
//! with the binomial standard error √(p(1−p)/n).

use crate::game::openings::{move_string, parse_move_string};
use crate::game::{Answer, Board, BoardConfig, Game, DEFAULT_LETTERS};
use crate::players::{build_strategy, Strategy, TurnView};
use crate::search::minimax::Minimax;
use crate::solver::{Pos, Solver};
use crate::util::seed::derive;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The committed sets file.
pub const DEFAULT_SETS: &str = "benches/accuracy/sets-v1.jsonl";
/// What the header's `format` says.
pub const FORMAT: &str = "c4sim-accuracy-sets";
/// The file format's version.
pub const VERSION: u64 = 1;
/// Plies of the begin group. Plies 0–7 are left out: without an opening
/// book the solver needs up to minutes a position there (a trial from ply 4
/// took 225 s for 15 positions), which would make every begin-hard position
/// a ply-4 to 6 one.
pub const BEGIN: (usize, usize) = (8, 14);
pub const MIDDLE: (usize, usize) = (15, 26);
pub const END: (usize, usize) = (27, 38);
/// The depth of the minimax that plays half the moves of the generator.
const GUIDE_DEPTH: u32 = 4;
/// Seed streams: one generated line, one benchmarked position.
const STREAM_LINE: u64 = 0xacc1;
const STREAM_POSITION: u64 = 0xacc2;
const GROUPS: [(&str, (usize, usize)); 3] = [("begin", BEGIN), ("middle", MIDDLE), ("end", END)];
const LEVELS: [&str; 3] = ["easy", "medium", "hard"];

/// Every set's name, in order: begin-easy … end-hard.
pub fn set_names() -> Vec<String> {
    GROUPS
        .iter()
        .flat_map(|(g, _)| LEVELS.iter().map(move |l| format!("{g}-{l}")))
        .collect()
}

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
    /// Only these sets (comma-separated names, e.g. begin-hard,end-easy).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One labelled position of the sets file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Labelled {
    pub set: String,
    /// Columns from 1.
    pub moves: String,
    pub ply: usize,
    /// Solver nodes to label it from an empty table.
    pub nodes: u64,
    /// Every column's exact score for the side to move; `None` for a full column.
    pub scores: Vec<Option<i32>>,
}

/// The sets file: its header and positions.
#[derive(Clone, Debug)]
pub struct Sets {
    pub header: serde_json::Value,
    pub positions: Vec<Labelled>,
}

/// The 6×7 board the sets are on.
pub fn board() -> BoardConfig {
    BoardConfig::new(6, 7, 4).expect("6x7x4 is a board")
}

/// Reads a sets file, checking its header.
pub fn load_sets(path: &Path) -> Result<Sets, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or_else(|| format!("{}: empty", path.display()))?;
    let header: serde_json::Value =
        serde_json::from_str(first).map_err(|e| format!("{}:1: header: {e}", path.display()))?;
    if header["format"] != FORMAT || header["version"] != VERSION {
        return Err(format!(
            "{}:1: expected format {FORMAT} version {VERSION}, got {} {}",
            path.display(),
            header["format"],
            header["version"]
        ));
    }
    let mut positions = Vec::new();
    for (i, line) in lines {
        let p: Labelled = serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        positions.push(p);
    }
    Ok(Sets { header, positions })
}

/// How one move fares against the exact scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Its win/draw/loss class is worse than the best column's (an illegal
    /// or unlabelled move counts as one).
    pub mistake: bool,
    /// Its score is the best score.
    pub exact_best: bool,
}

/// Judges `col` (from 0) against every column's exact score.
pub fn judge(scores: &[Option<i32>], col: usize) -> Verdict {
    let best = scores.iter().flatten().copied().max();
    match (best, scores.get(col).copied().flatten()) {
        (Some(best), Some(s)) => Verdict {
            mistake: s.signum() < best.signum(),
            exact_best: s == best,
        },
        _ => Verdict {
            mistake: true,
            exact_best: false,
        },
    }
}

/// Whether the columns' win/draw/loss classes differ, so that a W/D/L
/// mistake can be made.
pub fn has_choice(scores: &[Option<i32>]) -> bool {
    let mut classes = scores.iter().flatten().map(|s| s.signum());
    let first = classes.next();
    classes.any(|c| Some(c) != first)
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
) -> Result<Vec<Option<Label>>, String> {
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
) -> Result<MadeSets, String> {
    let started = Instant::now();
    let cfg = board();
    let solver = Solver::new(cfg, 1)?;
    let mut guide = Minimax::new(GUIDE_DEPTH);
    let mut seen: HashSet<Pos> = HashSet::new();
    let mut line = 0u64;
    let mut skipped = 0;
    let mut no_choice = 0;
    let mut positions = Vec::new();
    for (group, (lo, hi)) in groups {
        let want = per_set * LEVELS.len();
        let mut done: Vec<(Vec<usize>, u64, Vec<Option<i32>>)> = Vec::new();
        while done.len() < want {
            let mut batch = Vec::new();
            while batch.len() < want - done.len() {
                line += 1;
                let s = derive(seed, line, STREAM_LINE);
                let target = lo + (s % (hi - lo + 1) as u64) as usize;
                if let Some((moves, pos)) = play_line(&solver, &mut guide, s, target) {
                    if seen.insert(pos) {
                        batch.push((moves, pos));
                    }
                }
            }
            let labels = label_all(&batch, budget, table_log2, threads)?;
            for ((moves, _), label) in batch.into_iter().zip(labels) {
                match label {
                    Some((nodes, scores)) if has_choice(&scores) => done.push((moves, nodes, scores)),
                    Some(_) => no_choice += 1,
                    None => skipped += 1,
                }
            }
            let _ = writeln!(
                progress,
                "{group}: {}/{want} kept, {no_choice} without a W/D/L choice and {skipped} over the budget dropped so far, {:.0} s",
                done.len(),
                started.elapsed().as_secs_f64()
            );
        }
        // Terciles by nodes; ties keep generation order.
        done.sort_by_key(|(_, nodes, _)| *nodes);
        for (i, (moves, nodes, scores)) in done.into_iter().enumerate() {
            let level = LEVELS[(i * LEVELS.len() / want).min(LEVELS.len() - 1)];
            positions.push(Labelled {
                set: format!("{group}-{level}"),
                ply: moves.len(),
                moves: move_string(&moves, cfg.cols),
                nodes,
                scores,
            });
        }
    }
    let header = json!({
        "format": FORMAT,
        "version": VERSION,
        "board": "6x7x4",
        "seed": seed,
        "per_set": per_set,
        "sets": set_names(),
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
    });
    Ok(MadeSets {
        sets: Sets { header, positions },
        skipped,
        no_choice,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes a sets file.
pub fn save_sets(path: &Path, sets: &Sets) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut text = serde_json::to_string(&sets.header).map_err(|e| e.to_string())? + "\n";
    for p in &sets.positions {
        text += &serde_json::to_string(p).map_err(|e| e.to_string())?;
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// One player's tally on one set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub n: usize,
    pub mistakes: usize,
    pub exact_best: usize,
    pub seconds: f64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.n += o.n;
        self.mistakes += o.mistakes;
        self.exact_best += o.exact_best;
        self.seconds += o.seconds;
    }
    pub fn mistake_rate(&self) -> f64 {
        rate(self.mistakes, self.n)
    }
    pub fn exact_rate(&self) -> f64 {
        rate(self.exact_best, self.n)
    }
    /// Binomial standard error of the mistake rate.
    pub fn mistake_se(&self) -> f64 {
        se(self.mistake_rate(), self.n)
    }
    pub fn exact_se(&self) -> f64 {
        se(self.exact_rate(), self.n)
    }
    pub fn ms_per_move(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            1000.0 * self.seconds / self.n as f64
        }
    }
    fn to_json(&self) -> serde_json::Value {
        json!({
            "positions": self.n,
            "mistakes": self.mistakes,
            "mistake_rate": self.mistake_rate(),
            "mistake_se": self.mistake_se(),
            "exact_best": self.exact_best,
            "exact_best_rate": self.exact_rate(),
            "exact_best_se": self.exact_se(),
            "ms_per_move": self.ms_per_move(),
        })
    }
}

fn rate(k: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        k as f64 / n as f64
    }
}

fn se(p: f64, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        (p * (1.0 - p) / n as f64).sqrt()
    }
}

/// One player's results: per set, then the begin+middle and all totals.
#[derive(Clone, Debug)]
pub struct PlayerResult {
    pub spec: String,
    pub name: String,
    pub sets: Vec<(String, Tally)>,
}

/// Names of the totals.
pub const BEGIN_MIDDLE: &str = "begin+middle";
pub const ALL: &str = "all";

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
) -> Result<Vec<(String, Tally)>, String> {
    let cfg = board();
    let mut tallies: Vec<(String, Tally)> = set_order.iter().map(|s| (s.clone(), Tally::default())).collect();
    for (i, p) in positions.iter().enumerate() {
        let moves = parse_move_string(&p.moves, cfg.cols)?;
        let game = Game::with_opening(cfg, 2, 1, &moves)?;
        let view = TurnView::of(&game, i as u64 + 1, moves.len() % 2, &DEFAULT_LETTERS, None);
        strategy.new_game(derive(seed, i as u64, STREAM_POSITION));
        let t = Instant::now();
        let answer = strategy.choose(&view);
        let seconds = t.elapsed().as_secs_f64();
        let col = match answer {
            Answer::Column(c) if c >= 0 => c as usize,
            _ => usize::MAX,
        };
        let v = judge(&p.scores, col);
        let Some((_, tally)) = tallies.iter_mut().find(|(s, _)| *s == p.set) else {
            continue;
        };
        tally.n += 1;
        tally.mistakes += v.mistake as usize;
        tally.exact_best += v.exact_best as usize;
        tally.seconds += seconds;
    }
    let mut bm = Tally::default();
    let mut all = Tally::default();
    for (s, t) in &tallies {
        if s.starts_with("begin-") || s.starts_with("middle-") {
            bm.add(t);
        }
        all.add(t);
    }
    tallies.push((BEGIN_MIDDLE.into(), bm));
    tallies.push((ALL.into(), all));
    Ok(tallies)
}

/// The positions to run: `only` sets (all if empty), the first `limit` of each.
pub fn select<'a>(
    sets: &'a Sets,
    only: &[String],
    limit: Option<usize>,
) -> Result<(Vec<String>, Vec<&'a Labelled>), String> {
    let names = set_names();
    for o in only {
        if !names.contains(o) {
            return Err(format!("--only: no set `{o}`; sets: {}", names.join(", ")));
        }
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
            "sets": r.sets.iter().map(|(s, t)| (s.clone(), t.to_json())).collect::<serde_json::Map<_, _>>(),
        })).collect::<Vec<_>>(),
    })
}

/// `c4sim bench accuracy`: the exit code (0 done, 1 failed, 2 bad usage).
pub fn run(args: &AccuracyArgs) -> u8 {
    match run_inner(args) {
        Ok(()) => 0,
        Err((code, e)) => {
            eprintln!("error: {e}");
            code
        }
    }
}

fn run_inner(args: &AccuracyArgs) -> Result<(), (u8, String)> {
    let usage = |e: String| (2u8, e);
    let failed = |e: String| (1u8, e);
    if args.make_sets {
        let made = make_sets(
            &GROUPS,
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
            counts += &format!("{name} {n}; ");
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
        return Ok(());
    }
    if args.players.is_empty() {
        return Err(usage("give at least one --player SPEC (or --make-sets)".into()));
    }
    let sets = load_sets(&args.sets).map_err(usage)?;
    let (order, chosen) = select(&sets, &args.only, args.limit).map_err(usage)?;
    let mut results = Vec::new();
    for spec_text in &args.players {
        let spec = crate::scenario::parse_player_spec(spec_text).map_err(|e| usage(e.to_string()))?;
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
        let text = serde_json::to_string_pretty(&v).map_err(|e| failed(e.to_string()))? + "\n";
        std::fs::write(path, text).map_err(|e| failed(format!("{}: {e}", path.display())))?;
    }
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

    fn verdict(mistake: bool, exact_best: bool) -> Verdict {
        Verdict { mistake, exact_best }
    }

    #[test]
    fn judge_classes_and_exact_best() {
        // Column 2 wins fastest, column 3 wins slower, 1 draws, 0 loses, 4 full.
        let s = [Some(-3), Some(0), Some(5), Some(2), None, Some(-1), Some(-8)];
        assert_eq!(judge(&s, 2), verdict(false, true));
        assert_eq!(judge(&s, 3), verdict(false, false));
        assert_eq!(judge(&s, 1), verdict(true, false));
        assert_eq!(judge(&s, 0), verdict(true, false));
        // A full column or one off the board is a mistake.
        assert!(judge(&s, 4).mistake);
        assert!(judge(&s, usize::MAX).mistake);
        // When the best is a draw, a loss is a mistake and another draw is not.
        let d = [Some(0), Some(-2), Some(0)];
        assert_eq!(judge(&d, 2), verdict(false, true));
        assert!(judge(&d, 1).mistake);
        // When every move loses, none is a W/D/L mistake; the slowest loss is exact.
        let l = [Some(-5), Some(-2)];
        assert_eq!(judge(&l, 0), verdict(false, false));
        assert_eq!(judge(&l, 1), verdict(false, true));
    }

    #[test]
    fn judge_on_a_solved_position() {
        // Moves 121212 (columns from 1): each side has three in its column
        // and the first player is to move. Column 1 wins at once; columns
        // 3–7 let the second player win in column 2 at once. (Column 2, the
        // block, needs a deep search and is left unlabelled here.)
        let mut solver = Solver::new(board(), 16).unwrap();
        let pos = solver.position(&[0, 1, 0, 1, 0, 1]).unwrap();
        let mut scores = vec![None; 7];
        for c in [0, 2, 3, 4, 5, 6] {
            scores[c] = Some(if solver.is_winning_move(&pos, c) {
                (42 + 1 - 7) / 2
            } else {
                -solver.solve(&solver.play(&pos, c).unwrap(), None).unwrap()
            });
        }
        assert_eq!(scores[0], Some(18), "a win with one's 4th piece scores 22 - 4");
        assert_eq!(judge(&scores, 0), verdict(false, true));
        for c in 2..7 {
            assert!(scores[c] < Some(0), "column {c}: the opponent wins with its next move");
            assert_eq!(judge(&scores, c), verdict(true, false));
        }
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

    #[test]
    fn tallies_and_standard_error() {
        let t = Tally {
            n: 100,
            mistakes: 10,
            exact_best: 50,
            seconds: 1.0,
        };
        assert!((t.mistake_rate() - 0.1).abs() < 1e-12);
        assert!((t.mistake_se() - 0.03).abs() < 1e-12);
        assert!((t.ms_per_move() - 10.0).abs() < 1e-12);
    }
}
