//! Measurements, not checks: node counts per technique and timings of
//! chosen lines (every test here is `#[ignore]`d; run one by name with
//! `-- --ignored --nocapture`, as docs/solver.md shows).

use super::tests::{pons, random_moves};
use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// [`measure_techniques`]' first rows: each technique added in turn.
fn added_steps() -> Vec<(&'static str, Techniques)> {
    let all = Techniques::ALL;
    vec![
        (
            "plain alpha-beta (bitboards, left to right, full window)",
            Techniques::NONE,
        ),
        (
            "+ centre-first order",
            Techniques {
                order: MoveOrder::Centre,
                ..Techniques::NONE
            },
        ),
        (
            "+ null-window score search",
            Techniques {
                order: MoveOrder::Centre,
                null_window: true,
                ..Techniques::NONE
            },
        ),
        (
            "+ non-losing moves (forced blocks, not below a threat)",
            Techniques {
                order: MoveOrder::Centre,
                null_window: true,
                non_losing: true,
                ..Techniques::NONE
            },
        ),
        (
            "+ order by winning cells created",
            Techniques {
                table: false,
                symmetry: false,
                ..all
            },
        ),
        (
            "+ transposition table (2^22, both bounds)",
            Techniques {
                symmetry: false,
                etc: false,
                ..all
            },
        ),
        ("+ mirror symmetry", Techniques { etc: false, ..all }),
        ("+ enhanced transposition cutoffs (everything)", all),
    ]
}

/// [`measure_techniques`]' last rows: each technique taken away from all.
fn taken_away_steps() -> Vec<(&'static str, Techniques)> {
    let all = Techniques::ALL;
    vec![
        ("all but symmetry", Techniques { symmetry: false, ..all }),
        (
            "all but enhanced transposition cutoffs",
            Techniques { etc: false, ..all },
        ),
        (
            "all but null window",
            Techniques {
                null_window: false,
                ..all
            },
        ),
        (
            "all but non-losing moves",
            Techniques {
                non_losing: false,
                ..all
            },
        ),
        (
            "all but winning-cell order",
            Techniques {
                order: MoveOrder::Centre,
                ..all
            },
        ),
        (
            "all but any order",
            Techniques {
                order: MoveOrder::LeftToRight,
                ..all
            },
        ),
        (
            "all but the table",
            Techniques {
                table: false,
                symmetry: false,
                ..all
            },
        ),
        (
            "all but spoiled-threat order",
            Techniques {
                spoil_order: false,
                ..all
            },
        ),
        (
            "all but double-threat wins",
            Techniques {
                double_threat: false,
                ..all
            },
        ),
        (
            "all but root bounds from the table",
            Techniques {
                root_bounds: false,
                ..all
            },
        ),
        (
            "all + even-empty-cells table",
            Techniques {
                even_table: true,
                ..all
            },
        ),
        (
            "all but claimeven",
            Techniques {
                claimeven: false,
                ..all
            },
        ),
    ]
}

/// Node counts per technique on 20 seeded, balanced 6×7 positions of 16 to 24 plies,
/// each added in turn to plain alpha–beta, then each taken away from the
/// full set. A position stops at 10^8 nodes (counted as such, and reported).
/// `cargo test --lib solver::measure::measure_techniques -- --ignored --nocapture`
#[test]
#[ignore]
fn measure_techniques() {
    let c = BoardConfig::default();
    let mut s = Solver::new(c, 22).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let mut positions = Vec::new();
    // Random games are mostly decided early; keep the balanced positions
    // (exact score within ±3), the ones a solver is actually asked about.
    while positions.len() < 20 {
        let ply = rng.gen_range(16..=24);
        let mut m = random_moves(&s, &mut rng, ply);
        m.truncate(ply);
        let p = s.position(&m).unwrap();
        if s.solve(&p, None).unwrap().abs() <= 3 {
            positions.push(m);
        }
    }
    let steps: Vec<(&str, Techniques)> = added_steps().into_iter().chain(taken_away_steps()).collect();
    const CAP: u64 = 100_000_000;
    let mut reference: Vec<Option<i32>> = Vec::new();
    for (name, tech) in steps {
        s.set_techniques(tech);
        let (mut total, mut capped) = (0u64, 0);
        let t = std::time::Instant::now();
        for (i, m) in positions.iter().enumerate() {
            s.clear_table();
            s.reset_stats();
            let p = s.position(m).unwrap();
            let v = s.solve(&p, Some(CAP));
            if v.is_none() {
                capped += 1;
            }
            if reference.len() <= i {
                reference.push(v);
            } else if let (Some(a), Some(b)) = (reference[i], v) {
                assert_eq!(a, b);
            } else if reference[i].is_none() {
                reference[i] = v;
            }
            total += s.nodes();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{name:<58} {total:>12} nodes {capped:>2} capped  {secs:>7.2} s  {:>6.1} Mnodes/s",
            total as f64 / secs / 1e6
        );
    }
}

/// Time and nodes for harder published positions (ply 9 and 10).
#[test]
#[ignore]
fn time_hard_positions() {
    let log2 = std::env::var("SOLVER_LOG2").map_or(24, |v| v.parse().unwrap());
    let mut s = Solver::new(BoardConfig::default(), log2).unwrap();
    for (line, expected) in [("7234472553", 10), ("266674777", 4)] {
        s.reset_stats();
        let t = std::time::Instant::now();
        let p = s.position(&pons(line)).unwrap();
        let v = s.solve(&p, None);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{line}: {v:?} {} nodes {secs:.2} s {:.1} Mnodes/s",
            s.nodes(),
            s.nodes() as f64 / secs / 1e6
        );
        assert_eq!(v, Some(expected));
    }
}

/// Times `scores_threaded` on the lines of `SOLVER_LINES` (Pons' notation,
/// comma-separated; "" is the empty board) with `SOLVER_THREADS` threads and
/// a table of `2^SOLVER_LOG2` entries; `SOLVER_ETC=0` turns the enhanced
/// transposition cutoffs off; `SOLVER_OFF` and `SOLVER_ON` name switches
/// of [`Techniques`] to turn off or on (comma-separated).
#[test]
#[ignore]
fn time_lines() {
    let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let log2: u32 = var("SOLVER_LOG2", "24").parse().unwrap();
    let threads: usize = var("SOLVER_THREADS", "2").parse().unwrap();
    let mut s = Solver::new(BoardConfig::default(), log2).unwrap();
    let mut tech = Techniques::ALL;
    tech.etc = var("SOLVER_ETC", "1") == "1";
    tech.aspiration = var("SOLVER_ASP", "0") == "1";
    for (name, on) in var("SOLVER_OFF", "")
        .split(',')
        .map(|n| (n, false))
        .chain(var("SOLVER_ON", "").split(',').map(|n| (n, true)))
    {
        match name {
            "" => {}
            "spoil_order" => tech.spoil_order = on,
            "double_threat" => tech.double_threat = on,
            "root_bounds" => tech.root_bounds = on,
            "first_guess" => tech.first_guess = on,
            "even_table" => tech.even_table = on,
            "claimeven" => tech.claimeven = on,
            "specialised" => tech.specialised = on,
            "threat_parity" => tech.threat_parity = on,
            "dead_threats" => tech.dead_threats = on,
            other => panic!("no switch {other}"),
        }
    }
    s.set_techniques(tech);
    let (mut all_nodes, all_time) = (0, std::time::Instant::now());
    for line in var("SOLVER_LINES", "44").split(',') {
        s.reset_stats();
        let t = std::time::Instant::now();
        let p = s.position(&pons(line)).unwrap();
        let v = s.scores_threaded(&p, None, threads);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{line:>6}: {v:?} {} nodes {secs:.2} s {:.1} Mnodes/s",
            s.nodes(),
            s.nodes() as f64 / secs / 1e6
        );
        all_nodes += s.nodes();
    }
    println!("total: {all_nodes} nodes {:.2} s", all_time.elapsed().as_secs_f64());
}
