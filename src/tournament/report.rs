//! The tournament report, computed from the game records alone (so a
//! resumed tournament reports exactly what an uninterrupted one does), and
//! its markdown, JSON, CSV and HTML forms.

use super::ratings::{fit, head_to_head, Bound, HeadToHead, Ratings, Result2};
use super::store::GameLine;
use crate::game::EndReason;
use serde::Serialize;
use serde_json::json;
use std::fmt::Write;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Standing {
    pub rank: usize,
    pub name: String,
    pub elo: f64,
    /// Half-width of the 95% interval.
    pub elo_error: f64,
    /// Set when the player won (lower) or lost (upper) every game.
    pub bound: Option<Bound>,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Score with draws counted half, from 0 to 1.
    pub score: f64,
    pub draw_ratio: f64,
    /// Likelihood that this player is stronger than the next one down.
    pub los_next: Option<f64>,
    /// Mean thinking time per turn in ms (see [`ms_per_move`]), so a reader
    /// can check that "equal time per move" held; `None` when none of the
    /// player's turns was timed.
    pub ms_per_move: Option<f64>,
}

/// Per-player counts of how its games ended, and its own faults.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Reasons {
    pub name: String,
    /// Games that ended by each reason (WIN, TIE, TOO_MANY_INVALID, TIMEOUT, FORFEIT).
    pub ended_by: Vec<(EndReason, u32)>,
    /// Games this player lost by its own fault, by reason.
    pub faults: Vec<(EndReason, u32)>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    pub name: String,
    pub schedule: String,
    pub total_games: u64,
    pub finished_games: u64,
    pub standings: Vec<Standing>,
    /// Player names in standings order, and `crosstable[i][j]` = (score, games) of i against j.
    pub crosstable: Vec<Vec<Option<(f64, u32)>>>,
    pub reasons: Vec<Reasons>,
    pub first_mover_games: u32,
    pub first_mover_score: f64,
    /// The classic match summary when there are exactly two players.
    pub head_to_head: Option<HeadToHead>,
    /// The sequential test, when the tournament runs one (set by the caller).
    pub sprt: Option<super::sprt::Summary>,
}

const FAULTS: [EndReason; 3] = [EndReason::TooManyInvalid, EndReason::Timeout, EndReason::Forfeit];

/// Builds the report from finished games. `anchor`: (player index, rating).
pub fn build(
    name: &str,
    schedule: &str,
    players: &[String],
    games: &[GameLine],
    total: u64,
    anchor: Option<(usize, f64)>,
) -> Report {
    let n = players.len();
    let counts = Counts::of(players, games);
    let ratings = fit(n, &counts.results, anchor);
    let thinking = ms_per_move(players, games);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| {
        ratings.elo[j]
            .total_cmp(&ratings.elo[i])
            .then(players[i].cmp(&players[j]))
    });
    let standings = build_standings(players, &order, &counts.wdl, &ratings, &thinking);
    let crosstable = order
        .iter()
        .map(|&i| {
            order
                .iter()
                .map(|&j| (counts.cross[i][j].1 > 0).then_some(counts.cross[i][j]))
                .collect()
        })
        .collect();
    let reasons = order
        .iter()
        .map(|&i| Reasons {
            name: players[i].clone(),
            ended_by: pick(&counts.ended[i], &EndReason::ALL),
            faults: pick(&counts.faults[i], &FAULTS),
        })
        .collect();
    let head_to_head = (n == 2).then(|| {
        let (w, d, l) = counts.wdl[order[0]];
        head_to_head(w, d, l)
    });
    let first = counts.first;
    Report {
        name: name.to_string(),
        schedule: schedule.to_string(),
        total_games: total,
        finished_games: games.len() as u64,
        standings,
        crosstable,
        reasons,
        first_mover_games: first.0,
        first_mover_score: if first.0 > 0 { first.1 / first.0 as f64 } else { 0.0 },
        head_to_head,
        sprt: None,
    }
}

/// What the report counts in one pass over the games, by player index;
/// games with a player not in the list are left out of every count.
struct Counts {
    /// Each game as the rating fit reads it.
    results: Vec<Result2>,
    /// (wins, draws, losses).
    wdl: Vec<(u32, u32, u32)>,
    /// `cross[i][j]`: (score, games) of i against j.
    cross: Vec<Vec<(f64, u32)>>,
    /// Games that ended by each reason, indexed as [`EndReason::ALL`].
    ended: Vec<[u32; 5]>,
    /// Games lost by the player's own fault, by reason, indexed the same way.
    faults: Vec<[u32; 5]>,
    /// (games, summed score) of the first mover.
    first: (u32, f64),
}

impl Counts {
    /// Counts `games` for `players`, in one pass and in game order.
    fn of(players: &[String], games: &[GameLine]) -> Counts {
        let n = players.len();
        let idx = |p: &str| players.iter().position(|q| q == p);
        let mut c = Counts {
            results: Vec::new(),
            wdl: vec![(0u32, 0u32, 0u32); n],
            cross: vec![vec![(0.0f64, 0u32); n]; n],
            ended: vec![[0u32; 5]; n],
            faults: vec![[0u32; 5]; n],
            first: (0u32, 0.0f64),
        };
        for g in games {
            let (Some(a), Some(b)) = (idx(&g.players[0]), idx(&g.players[1])) else {
                continue;
            };
            let sa = g.first_seat_score();
            c.results.push(Result2 { a, b, score_a: sa });
            for (me, s) in [(a, sa), (b, 1.0 - sa)] {
                if s == 1.0 {
                    c.wdl[me].0 += 1;
                } else if s == 0.5 {
                    c.wdl[me].1 += 1;
                } else {
                    c.wdl[me].2 += 1;
                }
                c.ended[me][reason_ix(g.reason)] += 1;
                if s == 0.0 && FAULTS.contains(&g.reason) {
                    c.faults[me][reason_ix(g.reason)] += 1;
                }
            }
            c.cross[a][b].0 += sa;
            c.cross[a][b].1 += 1;
            c.cross[b][a].0 += 1.0 - sa;
            c.cross[b][a].1 += 1;
            c.first.0 += 1;
            c.first.1 += sa;
        }
        c
    }
}

/// Where a reason's count sits in the per-reason arrays of [`Counts`].
fn reason_ix(r: EndReason) -> usize {
    EndReason::ALL.iter().position(|x| *x == r).unwrap_or(0)
}

/// The counts of the reasons in `only`, in [`EndReason::ALL`] order, so
/// every row of the "how games ended" table has the same columns.
fn pick(counts: &[u32; 5], only: &[EndReason]) -> Vec<(EndReason, u32)> {
    EndReason::ALL
        .iter()
        .filter(|r| only.contains(r))
        .map(|&r| (r, counts[reason_ix(r)]))
        .collect()
}

/// The standings rows in rating `order`, each with its likelihood of being
/// stronger than the player ranked just below.
fn build_standings(
    players: &[String],
    order: &[usize],
    wdl: &[(u32, u32, u32)],
    ratings: &Ratings,
    thinking: &[Option<f64>],
) -> Vec<Standing> {
    order
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let (w, d, l) = wdl[i];
            let games = w + d + l;
            Standing {
                rank: rank + 1,
                name: players[i].clone(),
                elo: ratings.elo[i],
                elo_error: ratings.error[i],
                bound: ratings.bound[i],
                games,
                wins: w,
                draws: d,
                losses: l,
                score: if games > 0 {
                    (w as f64 + 0.5 * d as f64) / games as f64
                } else {
                    0.0
                },
                draw_ratio: if games > 0 { d as f64 / games as f64 } else { 0.0 },
                los_next: order.get(rank + 1).map(|&j| ratings.los(i, j)),
                ms_per_move: thinking[i],
            }
        })
        .collect()
}

/// Each player's mean thinking time per turn over `games`, in player order:
/// the sum of its `think_ms` over the sum of its `turns`, so every turn
/// weighs the same whatever game it was in. `None` for a player with no
/// timed turn (no games, or only games recorded before turns were timed,
/// whose lines have no `think_ms`).
pub fn ms_per_move(players: &[String], games: &[GameLine]) -> Vec<Option<f64>> {
    let mut sums = vec![(0u64, 0u64); players.len()];
    for g in games {
        for ((name, &ms), &turns) in g.players.iter().zip(&g.think_ms).zip(&g.turns) {
            if let Some(i) = players.iter().position(|p| p == name) {
                sums[i].0 += ms;
                sums[i].1 += u64::from(turns);
            }
        }
    }
    sums.iter()
        .map(|&(ms, turns)| (turns > 0).then(|| ms as f64 / turns as f64))
        .collect()
}

/// What the "ms/move" column means, said under the standings table.
const MS_PER_MOVE_NOTE: &str = "ms/move: each player's mean thinking time per turn, from the referee's request to the player's reply (opening moves excluded; refused answers and timeouts count as turns), including the player's own overhead such as process pipes or the network; — where no turn was timed (games recorded by an older c4sim).";

fn elo_text(s: &Standing) -> String {
    match s.bound {
        Some(Bound::Lower) => format!("≥ {:.0}", s.elo),
        Some(Bound::Upper) => format!("≤ {:.0}", s.elo),
        None => format!("{:.0}", s.elo),
    }
}

/// One standings row as text cells, for both the markdown and the HTML table.
fn standing_cells(p: &Standing) -> [String; 12] {
    [
        p.rank.to_string(),
        p.name.clone(),
        elo_text(p),
        format!("{:.0}", p.elo_error),
        p.games.to_string(),
        p.wins.to_string(),
        p.draws.to_string(),
        p.losses.to_string(),
        pct(p.score),
        pct(p.draw_ratio),
        p.los_next.map_or(String::new(), pct),
        p.ms_per_move.map_or("—".to_string(), |x| format!("{x:.1}")),
    ]
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The report as markdown (also what the terminal shows).
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", r.name);
    let _ = writeln!(
        s,
        "{} — {} of {} games played.\n",
        r.schedule, r.finished_games, r.total_games
    );
    if let Some(t) = &r.sprt {
        let _ = writeln!(s, "{}", t.markdown());
    }
    let _ = writeln!(s, "## Standings\n");
    let _ = writeln!(
        s,
        "| rank | name | Elo | ± | games | wins | draws | losses | score | draws % | LOS next | ms/move |"
    );
    let _ = writeln!(s, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for p in &r.standings {
        let _ = writeln!(s, "| {} |", standing_cells(p).join(" | "));
    }
    let _ = writeln!(s, "\nElo: maximum likelihood over all games, centred on the pool average (or the anchor); ± is the 95% interval from the fit's covariance; ≥ marks a player who won every game (a lower bound). LOS: likelihood of superiority over the next player.\n");
    let _ = writeln!(s, "{MS_PER_MOVE_NOTE}\n");
    if let Some(h) = &r.head_to_head {
        let _ = writeln!(s, "## Match summary\n");
        let diff = match (h.elo_diff, h.elo_error) {
            (Some(d), Some(e)) => format!("{d:+.1} ± {e:.1}"),
            _ => "not finite (one side scored every point)".into(),
        };
        let _ = writeln!(
            s,
            "{}: score {} ({} wins, {} draws, {} losses), Elo difference {diff}, LOS {}, draw ratio {}.\n",
            r.standings[0].name,
            pct(h.score),
            h.wins,
            h.draws,
            h.losses,
            pct(h.los),
            pct(h.draw_ratio)
        );
    }
    let _ = writeln!(
        s,
        "## Crosstable\n\nScore of the row player against the column player (games).\n"
    );
    let names: Vec<&str> = r.standings.iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(s, "| | {} |", names.join(" | "));
    let _ = writeln!(s, "|---|{}", "---:|".repeat(names.len()));
    for (i, row) in r.crosstable.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .map(|c| c.map_or("—".to_string(), |(sc, g)| format!("{} ({g})", fmt_half(sc))))
            .collect();
        let _ = writeln!(s, "| **{}** | {} |", names[i], cells.join(" | "));
    }
    let _ = writeln!(s, "\n## How games ended\n");
    let _ = writeln!(
        s,
        "| name | WIN | TIE | TOO_MANY_INVALID | TIMEOUT | FORFEIT | own faults |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---|");
    for p in &r.reasons {
        let counts: Vec<String> = p.ended_by.iter().map(|(_, c)| c.to_string()).collect();
        let _ = writeln!(s, "| {} | {} | {} |", p.name, counts.join(" | "), faults_text(p));
    }
    let _ = writeln!(
        s,
        "\nFirst mover (RED) scored {} over {} games.",
        pct(r.first_mover_score),
        r.first_mover_games
    );
    s
}

/// "2 TIMEOUT, 1 FORFEIT", or "none".
fn faults_text(p: &Reasons) -> String {
    let faults: Vec<String> = p
        .faults
        .iter()
        .filter(|(_, c)| *c > 0)
        .map(|(r, c)| format!("{c} {r}"))
        .collect();
    if faults.is_empty() {
        "none".into()
    } else {
        faults.join(", ")
    }
}

fn fmt_half(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The report as JSON: `standings` is a list of objects with at least
/// name, elo, elo_error, games, wins, draws, losses, score, and
/// ms_per_move (null where no turn was timed).
pub fn json_value(r: &Report) -> serde_json::Value {
    let names: Vec<&str> = r.standings.iter().map(|p| p.name.as_str()).collect();
    json!({
        "name": r.name,
        "schedule": r.schedule,
        "total_games": r.total_games,
        "finished_games": r.finished_games,
        "standings": r.standings,
        "crosstable": {
            "players": names,
            "score": r.crosstable.iter().map(|row| row.iter().map(|c| c.map(|x| x.0)).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "games": r.crosstable.iter().map(|row| row.iter().map(|c| c.map_or(0, |x| x.1)).collect::<Vec<_>>()).collect::<Vec<_>>(),
        },
        "reasons": r.reasons.iter().map(|p| json!({
            "name": p.name,
            "ended_by": p.ended_by.iter().map(|(r, c)| (r.as_str().to_string(), json!(c))).collect::<serde_json::Map<String, serde_json::Value>>(),
            "faults": p.faults.iter().map(|(r, c)| (r.as_str().to_string(), json!(c))).collect::<serde_json::Map<String, serde_json::Value>>(),
        })).collect::<Vec<_>>(),
        "first_mover": {"games": r.first_mover_games, "score": r.first_mover_score},
        "head_to_head": r.head_to_head,
        "sprt": r.sprt.as_ref().map(|t| t.json()),
    })
}

/// The standings as CSV.
pub fn csv(r: &Report) -> String {
    let mut s =
        String::from("rank,name,elo,elo_error,bound,games,wins,draws,losses,score,draw_ratio,los_next,ms_per_move\n");
    for p in &r.standings {
        let bound = match p.bound {
            Some(Bound::Lower) => "lower",
            Some(Bound::Upper) => "upper",
            None => "",
        };
        let name = if p.name.contains([',', '"']) {
            format!("\"{}\"", p.name.replace('"', "\"\""))
        } else {
            p.name.clone()
        };
        let _ = writeln!(
            s,
            "{},{},{:.1},{:.1},{},{},{},{},{},{:.4},{:.4},{},{}",
            p.rank,
            name,
            p.elo,
            p.elo_error,
            bound,
            p.games,
            p.wins,
            p.draws,
            p.losses,
            p.score,
            p.draw_ratio,
            p.los_next.map_or(String::new(), |x| format!("{x:.4}")),
            p.ms_per_move.map_or(String::new(), |x| format!("{x:.1}"))
        );
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One self-contained HTML page: the tables and an SVG chart of ratings
/// with their error bars. No scripts, no external files.
pub fn html(r: &Report, games: &[GameLine]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>\nbody{{font-family:system-ui,sans-serif;margin:2em;color:#222}}\ntable{{border-collapse:collapse;margin:1em 0}}\nth,td{{border:1px solid #ccc;padding:4px 8px;text-align:right}}\nth:nth-child(2),td:nth-child(2){{text-align:left}}\nth{{background:#f3f3f3}}\ncaption{{text-align:left;color:#555;padding:4px 0}}\n</style></head><body>\n",
        esc(&r.name)
    );
    let _ = writeln!(
        s,
        "<h1>{}</h1>\n<p>{} — {} of {} games played.</p>",
        esc(&r.name),
        esc(&r.schedule),
        r.finished_games,
        r.total_games
    );
    if let Some(t) = &r.sprt {
        let _ = writeln!(
            s,
            "<h2>SPRT</h2>\n<pre>{}</pre>\n<p>{}</p>",
            esc(&t.lines().join("\n")),
            esc(&t.verdict_text())
        );
    }
    let _ = writeln!(s, "<h2>Ratings</h2>\n{}", svg_chart(r));
    let _ = writeln!(s, "<h2>Standings</h2>\n<table><tr><th>rank</th><th>name</th><th>Elo</th><th>±</th><th>games</th><th>wins</th><th>draws</th><th>losses</th><th>score</th><th>draws %</th><th>LOS next</th><th>ms/move</th></tr>");
    for p in &r.standings {
        let cells: Vec<String> = standing_cells(p)
            .iter()
            .map(|c| format!("<td>{}</td>", esc(c)))
            .collect();
        let _ = writeln!(s, "<tr>{}</tr>", cells.concat());
    }
    let _ = writeln!(s, "</table>");
    let names: Vec<&str> = r.standings.iter().map(|p| p.name.as_str()).collect();
    let _ = write!(s, "<h2>Crosstable</h2>\n<table><caption>Score of the row player against the column player (games)</caption><tr><th></th>");
    for n in &names {
        let _ = write!(s, "<th>{}</th>", esc(n));
    }
    let _ = writeln!(s, "</tr>");
    for (i, row) in r.crosstable.iter().enumerate() {
        let _ = write!(s, "<tr><th>{}</th>", esc(names[i]));
        for c in row {
            let _ = write!(
                s,
                "<td>{}</td>",
                c.map_or("—".to_string(), |(sc, g)| format!("{} ({g})", fmt_half(sc)))
            );
        }
        let _ = writeln!(s, "</tr>");
    }
    let _ = writeln!(s, "</table>\n<h2>How games ended</h2>\n<table><tr><th>name</th><th>WIN</th><th>TIE</th><th>TOO_MANY_INVALID</th><th>TIMEOUT</th><th>FORFEIT</th><th>own faults</th></tr>");
    for p in &r.reasons {
        let _ = write!(s, "<tr><td>{}</td>", esc(&p.name));
        for (_, c) in &p.ended_by {
            let _ = write!(s, "<td>{c}</td>");
        }
        let _ = writeln!(s, "<td>{}</td></tr>", faults_text(p));
    }
    let _ = writeln!(
        s,
        "</table>\n<p>First mover (RED) scored {} over {} games.</p>",
        pct(r.first_mover_score),
        r.first_mover_games
    );
    games_table(&mut s, games);
    let _ = writeln!(s, "<p><small>Elo: maximum likelihood over all games (Bradley–Terry, draws half), centred on the pool average or the anchor; ± is the 95% interval from the fit's covariance; ≥ marks a lower bound (won every game).</small></p>\n<p><small>{}</small></p>\n</body></html>", esc(MS_PER_MOVE_NOTE));
    s
}

fn svg_chart(r: &Report) -> String {
    let (w, row_h, left, right) = (720.0, 28.0, 170.0, 30.0);
    let h = row_h * r.standings.len() as f64 + 50.0;
    let lo = r
        .standings
        .iter()
        .map(|p| p.elo - p.elo_error)
        .fold(f64::INFINITY, f64::min);
    let hi = r
        .standings
        .iter()
        .map(|p| p.elo + p.elo_error)
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo - 20.0, hi + 20.0)
    } else {
        (-100.0, 100.0)
    };
    let x = |e: f64| left + (e - lo) / (hi - lo) * (w - left - right);
    let mut s = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"Elo ratings with 95% error bars\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
    // Grid every 100 Elo.
    let mut g = (lo / 100.0).ceil() * 100.0;
    while g <= hi {
        let gx = x(g);
        let _ = writeln!(s, "<line x1=\"{gx:.1}\" y1=\"10\" x2=\"{gx:.1}\" y2=\"{:.1}\" stroke=\"#e5e5e5\"/><text x=\"{gx:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#666\">{g:.0}</text>", h - 30.0, h - 15.0);
        g += 100.0;
    }
    for (i, p) in r.standings.iter().enumerate() {
        let y = 25.0 + row_h * i as f64;
        let (a, b, c) = (x(p.elo - p.elo_error), x(p.elo), x(p.elo + p.elo_error));
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"end\">{}</text>\n<line x1=\"{a:.1}\" y1=\"{y:.1}\" x2=\"{c:.1}\" y2=\"{y:.1}\" stroke=\"#36c\" stroke-width=\"2\"/><line x1=\"{a:.1}\" y1=\"{:.1}\" x2=\"{a:.1}\" y2=\"{:.1}\" stroke=\"#36c\" stroke-width=\"2\"/><line x1=\"{c:.1}\" y1=\"{:.1}\" x2=\"{c:.1}\" y2=\"{:.1}\" stroke=\"#36c\" stroke-width=\"2\"/>\n<circle cx=\"{b:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"#d33\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#333\">{}</text>",
            left - 10.0,
            y + 4.0,
            esc(&p.name),
            y - 6.0,
            y + 6.0,
            y - 6.0,
            y + 6.0,
            b + 7.0,
            y - 7.0,
            esc(&elo_text(p))
        );
    }
    let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#444\">Elo (95% interval)</text>\n</svg>", (left + w - right) / 2.0, h - 2.0);
    s
}

/// Where a report's replay links point: `c4sim web` at its default address.
pub const REPLAY_PAGE: &str = "http://127.0.0.1:8080/";

/// The games, each linked to its replay on the page (`c4sim web`, which
/// steps through it and marks the moves that threw a result away); two-seat
/// games on boards of up to 9 columns, whose moves a link can spell.
fn games_table(s: &mut String, games: &[GameLine]) {
    if games.is_empty() {
        return;
    }
    let mut sorted: Vec<&GameLine> = games.iter().collect();
    sorted.sort_by_key(|g| g.game);
    let _ = writeln!(
        s,
        "<table><caption>Games (replays open on <code>c4sim web</code> at {REPLAY_PAGE})</caption>\n<tr><th>#</th><th>players</th><th>result</th><th>moves</th><th>replay</th></tr>"
    );
    for g in sorted {
        let link = (g.players.len() == 2 && g.moves.iter().all(|&c| c < 9)).then(|| {
            let digits: String = g.moves.iter().map(|c| char::from(b'1' + *c as u8)).collect();
            let enc = |n: &str| {
                n.bytes()
                    .map(|b| {
                        if b.is_ascii_alphanumeric() {
                            (b as char).to_string()
                        } else {
                            format!("%{b:02X}")
                        }
                    })
                    .collect::<String>()
            };
            format!(
                "<a href=\"{REPLAY_PAGE}?replay={digits}&amp;red={}&amp;yellow={}\">replay</a>",
                enc(&g.players[0]),
                enc(&g.players[1])
            )
        });
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td></tr>",
            g.game,
            esc(&g.players.join(" – ")),
            esc(g.winner.as_deref().map_or("draw", |w| w)),
            g.reason.as_str(),
            g.moves.len(),
            link.unwrap_or_default()
        );
    }
    let _ = writeln!(s, "</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(game: u64, a: &str, b: &str, winner: Option<&str>, reason: EndReason) -> GameLine {
        GameLine {
            game,
            result: if winner.is_some() { "win" } else { "draw" }.into(),
            winner: winner.map(str::to_string),
            reason,
            moves: vec![],
            players: vec![a.into(), b.into()],
            opening: vec![],
            duration_ms: 0,
            seed: 0,
            think_ms: vec![],
            turns: vec![],
            forfeits: vec![],
        }
    }

    #[test]
    fn tables_add_up() {
        let players: Vec<String> = ["A", "B", "C"].iter().map(|s| s.to_string()).collect();
        let games = vec![
            g(1, "A", "B", Some("A"), EndReason::Win),
            g(2, "B", "A", Some("A"), EndReason::Timeout),
            g(3, "A", "C", None, EndReason::Tie),
            g(4, "C", "A", Some("C"), EndReason::Win),
            g(5, "B", "C", Some("C"), EndReason::Forfeit),
            g(6, "C", "B", Some("B"), EndReason::TooManyInvalid),
        ];
        let r = build("t", "round-robin", &players, &games, 6, None);
        let wins: u32 = r.standings.iter().map(|p| p.wins).sum();
        let losses: u32 = r.standings.iter().map(|p| p.losses).sum();
        assert_eq!(wins, losses);
        assert_eq!(r.standings[0].name, "A");
        let b = r.reasons.iter().find(|p| p.name == "B").unwrap();
        assert_eq!(
            b.faults,
            vec![
                (EndReason::TooManyInvalid, 0),
                (EndReason::Timeout, 1),
                (EndReason::Forfeit, 1)
            ]
        );
        assert_eq!((r.first_mover_games, r.first_mover_score), (6, 2.5 / 6.0));
        let md = markdown(&r);
        assert!(md.contains("| 1 | A |"));
        let h = html(&r, &[]);
        assert!(h.contains("<svg") && h.contains("</html>"));
        let j = json_value(&r);
        for key in ["name", "elo", "elo_error", "games", "wins", "draws", "losses", "score"] {
            assert!(j["standings"][0].get(key).is_some(), "{key}");
        }
        assert_eq!(csv(&r).lines().count(), 4);
    }

    #[test]
    fn ms_per_move_weighs_every_turn_and_skips_untimed_games() {
        let players: Vec<String> = ["A", "B", "C"].iter().map(|s| s.to_string()).collect();
        let timed = |game, a: &str, b: &str, think_ms: Vec<u64>, turns: Vec<u32>| GameLine {
            think_ms,
            turns,
            ..g(game, a, b, None, EndReason::Tie)
        };
        let games = vec![
            timed(1, "A", "B", vec![100, 30], vec![10, 10]),
            // Colours swapped: A is seat 1 now.
            timed(2, "B", "A", vec![50, 20], vec![5, 4]),
            // Recorded before thinking time was: counts for nothing here.
            g(3, "A", "C", None, EndReason::Tie),
        ];
        let ms = ms_per_move(&players, &games);
        assert_eq!(ms, vec![Some(120.0 / 14.0), Some(80.0 / 15.0), None]);

        let r = build("t", "round-robin", &players, &games, 3, None);
        let row = |name: &str| r.standings.iter().find(|p| p.name == name).unwrap();
        assert_eq!(row("A").ms_per_move, ms[0]);
        assert_eq!(row("C").ms_per_move, None);
        let md = markdown(&r);
        assert!(
            md.contains("| LOS next | ms/move |") && md.contains(MS_PER_MOVE_NOTE),
            "{md}"
        );
        let c_row = md.lines().find(|l| l.contains("| C |")).unwrap();
        assert!(c_row.ends_with("| — |"), "{c_row}");
        let a_row = md.lines().find(|l| l.contains("| A |")).unwrap();
        assert!(a_row.ends_with("| 8.6 |"), "{a_row}");
        assert!(html(&r, &[]).contains("<th>LOS next</th><th>ms/move</th>"));
        let j = json_value(&r);
        for p in j["standings"].as_array().unwrap() {
            assert!(p.get("ms_per_move").is_some(), "{p}");
        }
        let csv = csv(&r);
        assert!(csv.lines().next().unwrap().ends_with(",los_next,ms_per_move"));
        let b_line = csv.lines().find(|l| l.contains(",B,")).unwrap();
        assert!(b_line.ends_with(",5.3"), "{b_line}");
        assert!(csv.lines().find(|l| l.contains(",C,")).unwrap().ends_with(','));
    }

    /// Each game links to its replay on the page: its moves (columns from
    /// 1) and both names, escaped for a URL.
    #[test]
    fn games_link_to_their_replays() {
        let mut game = g(4, "Mini Max", "B", Some("B"), EndReason::Win);
        game.moves = vec![3, 3, 0, 6];
        let r = build(
            "t",
            "round-robin",
            &["Mini Max".into(), "B".into()],
            &[game.clone()],
            1,
            None,
        );
        let h = html(&r, &[game]);
        assert!(
            h.contains("http://127.0.0.1:8080/?replay=4417&amp;red=Mini%20Max&amp;yellow=B"),
            "{h}"
        );
    }
}
