//! The solver against a deliberately plain exhaustive negamax on small
//! boards, against published 6×7 scores, and its own consistency.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

fn cfg(rows: usize, cols: usize, win: usize) -> BoardConfig {
    BoardConfig::new(rows, cols, win).unwrap()
}

/// Exhaustive negamax on a plain grid: every move, every line checked by
/// walking the grid, no pruning. Its only aid is a memo of exact values by
/// grid, which cannot change a value, so that small boards finish.
struct Brute {
    rows: usize,
    cols: usize,
    win: usize,
    /// 0 empty, 1 first player, 2 second; row-major, row 0 at the bottom.
    grid: Vec<u8>,
    memo: HashMap<(u64, u64), i32>,
}

impl Brute {
    fn new(c: BoardConfig) -> Brute {
        Brute {
            rows: c.rows,
            cols: c.cols,
            win: c.win_length,
            grid: vec![0; c.rows * c.cols],
            memo: HashMap::new(),
        }
    }

    fn set(&mut self, moves: &[usize]) {
        self.grid.iter_mut().for_each(|x| *x = 0);
        for (i, &c) in moves.iter().enumerate() {
            let r = self.height(c);
            self.grid[r * self.cols + c] = 1 + (i % 2) as u8;
        }
    }

    fn height(&self, c: usize) -> usize {
        (0..self.rows)
            .find(|&r| self.grid[r * self.cols + c] == 0)
            .unwrap_or(self.rows)
    }

    fn pieces(&self) -> usize {
        self.grid.iter().filter(|&&x| x != 0).count()
    }

    /// Whether the piece at (r, c) is in a line of `win`.
    fn line_at(&self, r: usize, c: usize) -> bool {
        let me = self.grid[r * self.cols + c];
        for (dr, dc) in [(0i64, 1i64), (1, 0), (1, 1), (1, -1)] {
            let mut count = 1;
            for sign in [1i64, -1] {
                let (mut rr, mut cc) = (r as i64 + sign * dr, c as i64 + sign * dc);
                while rr >= 0
                    && cc >= 0
                    && rr < self.rows as i64
                    && cc < self.cols as i64
                    && self.grid[rr as usize * self.cols + cc as usize] == me
                {
                    count += 1;
                    rr += sign * dr;
                    cc += sign * dc;
                }
            }
            if count >= self.win {
                return true;
            }
        }
        false
    }

    /// The score of playing `c` for the side to move, `None` if full.
    fn column(&mut self, c: usize) -> Option<i32> {
        let r = self.height(c);
        if r == self.rows {
            return None;
        }
        let n = self.pieces();
        let cells = (self.rows * self.cols) as i32;
        self.grid[r * self.cols + c] = 1 + (n % 2) as u8;
        let s = if self.line_at(r, c) {
            (cells + 1 - n as i32) / 2
        } else {
            -self.value()
        };
        self.grid[r * self.cols + c] = 0;
        Some(s)
    }

    /// The score of the position for the side to move.
    fn value(&mut self) -> i32 {
        // The grid as two sets of cells (boards here have at most 64).
        let mut key = (0u64, 0u64);
        for (i, &x) in self.grid.iter().enumerate() {
            match x {
                1 => key.0 |= 1 << i,
                2 => key.1 |= 1 << i,
                _ => {}
            }
        }
        if let Some(&v) = self.memo.get(&key) {
            return v;
        }
        let best = (0..self.cols).filter_map(|c| self.column(c)).max().unwrap_or(0);
        self.memo.insert(key, best);
        best
    }
}

/// A random legal position of at least `min_ply` plies (a random target
/// between that and a full board): random moves that do not end the game,
/// starting over when every move would.
pub(super) fn random_moves(s: &Solver, rng: &mut ChaCha8Rng, min_ply: usize) -> Vec<usize> {
    let c = s.config();
    let target = rng.gen_range(min_ply.min(c.cells())..=c.cells());
    loop {
        let (moves, _) = s.quiet_line(target, rng);
        if moves.len() >= min_ply {
            return moves;
        }
    }
}

/// A seeded quiet line of `plies` moves after which the side to move cannot
/// win at once (so every column takes a search, as in the middle of a game).
fn searched_line(s: &Solver, rng: &mut ChaCha8Rng, plies: usize) -> Vec<usize> {
    loop {
        let (moves, p) = s.quiet_line(plies, rng);
        if moves.len() == plies && !p.can_win_next(&s.geo) {
            return moves;
        }
    }
}

/// Every column's score equals the brute force's on `count` random positions
/// of each board (positions of at least `min_ply` plies, to keep the brute
/// force small on the larger boards), with the solver's table kept between
/// positions so stale entries would show.
fn check_against_brute(c: BoardConfig, count: usize, min_ply: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut solver = Solver::new(c, 12).unwrap();
    let mut brute = Brute::new(c);
    for _ in 0..count {
        let moves = random_moves(&solver, &mut rng, min_ply);
        let pos = solver.position(&moves).unwrap();
        brute.set(&moves);
        let expected: Vec<Option<i32>> = (0..c.cols).map(|col| brute.column(col)).collect();
        let got = solver.scores(&pos, None);
        assert_eq!(got, expected, "{c}: moves {moves:?}");
        let value = expected.iter().flatten().max().copied().unwrap_or(0);
        assert_eq!(solver.solve(&pos, None), Some(value), "{c}: solve, moves {moves:?}");
        if let Some((col, s)) = solver.best_move(&pos, None) {
            assert_eq!(s, value);
            let first_best = centre_order(c.cols).into_iter().find(|&x| expected[x] == Some(value));
            assert_eq!(Some(col), first_best, "{c}: best move, moves {moves:?}");
        } else {
            assert!(expected.iter().all(|x| x.is_none()));
        }
    }
}

#[test]
fn matches_brute_force_on_small_boards() {
    // 4×4, 4×5, 5×4 and 5×5 with win 3 and 4, as the issue asks, plus other
    // lengths for the general line test (win 4 has its own unrolled one).
    let boards = [
        (4, 4, 3, 400, 0),
        (4, 4, 4, 400, 2),
        (4, 5, 3, 400, 2),
        (4, 5, 4, 400, 8),
        (5, 4, 3, 400, 2),
        (5, 4, 4, 400, 8),
        (5, 5, 3, 400, 8),
        (5, 5, 4, 400, 12),
        (4, 4, 2, 100, 0),
        (4, 5, 5, 100, 8),
        (5, 4, 5, 100, 8),
        (3, 6, 3, 100, 2),
        (1, 8, 3, 100, 0),
        (8, 1, 3, 100, 0),
    ];
    for (i, &(r, c, w, count, min_ply)) in boards.iter().enumerate() {
        check_against_brute(cfg(r, c, w), count, min_ply, 1000 + i as u64);
    }
}

/// Allis' claimeven bounds (`Geometry::claimeven`) never contradict the
/// exact score, on odd and even row counts, and each kind of bound is
/// found somewhere (so the check can fail).
#[test]
fn claimeven_bounds_hold_against_the_brute_force() {
    use super::position::Claim;
    let mut found = HashMap::new();
    for (i, &(r, c, w, min_ply)) in [(4, 4, 3, 0), (4, 5, 4, 4), (5, 4, 4, 4), (5, 5, 4, 12), (6, 4, 4, 10)]
        .iter()
        .enumerate()
    {
        let c = cfg(r, c, w);
        let mut rng = ChaCha8Rng::seed_from_u64(40 + i as u64);
        let solver = Solver::new(c, 10).unwrap();
        let mut brute = Brute::new(c);
        for _ in 0..1000 {
            let moves = random_moves(&solver, &mut rng, min_ply);
            let pos = solver.position(&moves).unwrap();
            if pos.can_win_next(&solver.geo) || pos.moves as usize == c.cells() {
                continue;
            }
            brute.set(&moves);
            let exact = (0..c.cols).filter_map(|col| brute.column(col)).max().unwrap();
            let claim = solver.geo.claimeven(&pos, None, -100, 100);
            match claim {
                Claim::Nothing => {}
                Claim::AtMost(hi) => assert!(exact <= hi, "{c}: {moves:?} scores {exact}, claimed <= {hi}"),
                Claim::AtLeast(lo) => assert!(exact >= lo, "{c}: {moves:?} scores {exact}, claimed >= {lo}"),
            }
            *found.entry(format!("{claim:?}")).or_insert(0) += 1;
        }
    }
    for kind in ["AtMost(0)", "AtMost(-1)", "AtLeast(0)", "AtLeast(1)"] {
        assert!(
            found.get(kind).copied().unwrap_or(0) > 0,
            "{kind} never found: {found:?}"
        );
    }
}

#[test]
fn every_technique_gives_the_same_scores() {
    let c = cfg(5, 5, 4);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let base = Solver::new(c, 10).unwrap();
    let positions: Vec<Vec<usize>> = (0..40).map(|_| random_moves(&base, &mut rng, 10)).collect();
    let orders = [MoveOrder::LeftToRight, MoveOrder::Centre, MoveOrder::CentreThenThreats];
    let mut reference: Option<Vec<Vec<Option<i32>>>> = None;
    for bits in 0..2048u32 {
        for order in orders {
            let tech = Techniques {
                null_window: bits & 1 != 0,
                aspiration: bits & 5 == 5,
                non_losing: bits & 2 != 0,
                table: bits & 4 != 0,
                symmetry: bits & 8 != 0,
                etc: bits & 16 != 0,
                spoil_order: bits & 32 != 0,
                double_threat: bits & 64 != 0,
                root_bounds: bits & 128 != 0,
                first_guess: bits & 256 != 0,
                even_table: bits & 512 != 0,
                claimeven: bits & 1024 != 0,
                specialised: true,
                threat_parity: bits & 1 == 0,
                dead_threats: bits & 2 == 0,
                order,
            };
            let mut s = Solver::new(c, 10).unwrap();
            s.set_techniques(tech);
            let all: Vec<Vec<Option<i32>>> = positions
                .iter()
                .map(|m| {
                    let p = s.position(m).unwrap();
                    s.scores(&p, None)
                })
                .collect();
            match &reference {
                None => reference = Some(all),
                Some(r) => assert_eq!(&all, r, "{tech:?}"),
            }
        }
    }
}

/// Columns in Pons' notation (from 1) to ours.
pub(super) fn pons(s: &str) -> Vec<usize> {
    s.bytes().map(|b| (b - b'1') as usize).collect()
}

/// Positions from Pons' test sets with their published scores: end-game
/// lines of Test_L3_R1 and begin-game lines of the L1 sets.
const KNOWN_6X7: &[(&str, i32)] = &[
    ("2252576253462244111563365343671351441", -1),
    ("7422341735647741166133573473242566", 1),
    ("23163416124767223154467471272416755633", 0),
    ("71255763773133525731261364622167124446454", 0),
    ("65214673556155731566316327373221417", -1),
    ("52677675164321472411331752454", 0),
    ("3135151421347443544172316522225776773566", 0),
    ("562154564361751726662253737734213275114", 0),
    ("233377345754465174223731671122611552", 1),
    ("6763525635134453444361412671365712", -1),
    ("211376455663355325112113664364524722", 0),
    ("3146762114467714356347741621375222", -1),
    ("67152117737262713366376314254", 6),
    ("2762751722231276466633475674533", 5),
    ("3642756176227637211322113551637574556", 2),
    ("22647455554314246733661634615122372377511", 0),
    ("427566236745127177115664464254", 2),
    ("7172212567451542223676134464437761515", 0),
    ("641154574541323641152467137655232232366", 0),
    ("5775265212657176476365522624313714333", 2),
    ("3575316255751336464276636772271112", -3),
    ("74642572132", 15),
    ("51756773145177", -10),
    ("165746146225", -11),
    ("1562527227511", 13),
    ("43745416472735", -13),
];

#[test]
fn known_6x7_scores() {
    let mut s = Solver::new(BoardConfig::default(), 20).unwrap();
    for &(line, expected) in KNOWN_6X7 {
        let p = s.position(&pons(line)).unwrap();
        assert_eq!(s.solve(&p, None), Some(expected), "{line}");
    }
}

#[test]
fn late_6x7_positions_match_brute_force() {
    let c = BoardConfig::default();
    check_against_brute(c, 150, 30, 42);
}

/// The copies of the search compiled for 6×7 and for the CPU's bit
/// instructions give the portable copy's scores and node counts, on 6×7
/// (its own copy) and on 7×6 (the generic copies), middle-game positions.
#[test]
fn specialised_copies_search_as_the_portable_one() {
    for (c, plies) in [(BoardConfig::default(), 16), (cfg(7, 6, 4), 18)] {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut fast = Solver::new(c, 16).unwrap();
        let mut portable = Solver::new(c, 16).unwrap();
        portable.set_techniques(Techniques {
            specialised: false,
            ..Techniques::ALL
        });
        for _ in 0..12 {
            let moves = searched_line(&fast, &mut rng, plies);
            let p = fast.position(&moves).unwrap();
            assert_eq!(fast.scores(&p, None), portable.scores(&p, None), "{c:?} {moves:?}");
            assert_eq!(fast.nodes(), portable.nodes(), "{c:?} {moves:?}");
        }
        assert!(fast.nodes() > 1000, "{c:?}: {} nodes", fast.nodes());
    }
}

/// On 6×7 the copies for the default switches fold them in as constants;
/// a solver with any of the search's switches off must not take those
/// copies: its nodes differ from the defaults' (the scores do not).
#[test]
fn a_switch_turned_off_is_honoured_on_6x7() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut all = Solver::new(BoardConfig::default(), 16).unwrap();
    let lines: Vec<Vec<usize>> = (0..6).map(|_| searched_line(&all, &mut rng, 14)).collect();
    let count = |s: &mut Solver| {
        let mut nodes = 0;
        let mut scores = Vec::new();
        for m in &lines {
            scores.push(s.scores(&s.position(m).unwrap(), None));
            nodes += s.nodes();
        }
        (scores, nodes)
    };
    let (scores, nodes) = count(&mut all);
    assert!(nodes > 1000, "{nodes} nodes");
    type Off = fn(&mut Techniques);
    let offs: [(&str, Off); 7] = [
        ("claimeven", |t| t.claimeven = false),
        ("dead_threats", |t| t.dead_threats = false),
        ("threat_parity", |t| t.threat_parity = false),
        ("double_threat", |t| t.double_threat = false),
        ("spoil_order", |t| t.spoil_order = false),
        ("etc", |t| t.etc = false),
        ("symmetry", |t| t.symmetry = false),
    ];
    for (name, off) in offs {
        let mut tech = Techniques::ALL;
        off(&mut tech);
        let mut s = Solver::new(BoardConfig::default(), 16).unwrap();
        s.set_techniques(tech);
        let (theirs, their_nodes) = count(&mut s);
        assert_eq!(theirs, scores, "{name}");
        assert_ne!(their_nodes, nodes, "{name} off searched as the defaults");
    }
}

/// Under the position's own score as its ceiling, every column scores as
/// without it, on one thread and two, and the searches take fewer nodes;
/// the best move knowing that score is the best move.
#[test]
fn a_ceiling_keeps_the_scores_and_saves_nodes() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let cfg = BoardConfig::default();
    let (mut plain_nodes, mut under_nodes) = (0, 0);
    for i in 0..8 {
        let mut plain = Solver::new(cfg, 18).unwrap();
        let moves = searched_line(&plain, &mut rng, 12);
        let p = plain.position(&moves).unwrap();
        let want = plain.scores(&p, None);
        plain_nodes += plain.nodes();
        let best = want.iter().flatten().max().copied();
        let mut under = Solver::new(cfg, 18).unwrap();
        assert_eq!(
            under.scores_threaded_at_most(&p, None, 1 + i % 2, best),
            want,
            "{moves:?}"
        );
        under_nodes += under.nodes();
        assert_eq!(
            under.best_move_scoring(&p, None, best),
            plain.best_move(&p, None),
            "{moves:?}"
        );
    }
    assert!(
        under_nodes < plain_nodes,
        "{under_nodes} nodes under the ceiling, {plain_nodes} without"
    );
}

/// The 7 first moves of 6×7: Pons' scores -2, -1, 0, 1, 0, -1, -2 (only
/// the centre wins, with the first player's last piece). Minutes of work.
#[test]
#[ignore]
fn empty_6x7_board() {
    let mut s = Solver::new(BoardConfig::default(), 24).unwrap();
    let p = s.start();
    let t = std::time::Instant::now();
    let threads = std::env::var("SOLVER_THREADS").map_or(1, |v| v.parse().unwrap());
    let scores = s.scores_threaded(&p, None, threads);
    println!(
        "{threads} thread(s): empty 6x7: {scores:?} in {:?}, {} nodes",
        t.elapsed(),
        s.nodes()
    );
    assert_eq!(scores, [-2, -1, 0, 1, 0, -1, -2].map(Some).to_vec());
}

/// Everything but the techniques that prove the budget tests' position
/// within their tiny budgets.
const EASY_TO_CUT: Techniques = Techniques {
    double_threat: false,
    root_bounds: false,
    ..Techniques::ALL
};

/// Positions that are their own mirror image score their right half as
/// the mirror of their left (not searched), on one thread and on two:
/// still the brute force's scores; a position off the mirror is searched.
#[test]
fn symmetric_positions_score_as_the_brute_force() {
    for (r, c, w, lines) in [
        (
            4,
            5,
            3,
            vec![vec![], vec![2], vec![2, 2], vec![0, 2, 4], vec![1, 0, 3, 4]],
        ),
        (5, 5, 4, vec![vec![], vec![2, 2, 2], vec![1, 2, 3]]),
        (4, 4, 3, vec![vec![], vec![0, 1, 3, 2], vec![1, 0, 2, 3]]),
    ] {
        let c = cfg(r, c, w);
        let mut brute = Brute::new(c);
        for moves in lines {
            let mut s = Solver::new(c, 12).unwrap();
            let pos = s.position(&moves).unwrap();
            assert!(pos.is_symmetric(), "{c}: {moves:?}");
            brute.set(&moves);
            let expected: Vec<Option<i32>> = (0..c.cols).map(|col| brute.column(col)).collect();
            assert_eq!(s.scores(&pos, None), expected, "{c}: {moves:?}");
            let mut t = Solver::new(c, 12).unwrap();
            assert_eq!(t.scores_threaded(&pos, None, 2), expected, "{c}: 2 threads, {moves:?}");
        }
        let s = Solver::new(c, 12).unwrap();
        assert!(!s.position(&[0]).unwrap().is_symmetric());
    }
}

#[test]
fn threaded_scores_equal_plain_scores() {
    let c = cfg(5, 5, 4);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut plain = Solver::new(c, 10).unwrap();
    let mut threaded = Solver::new(c, 10).unwrap();
    for _ in 0..30 {
        let m = random_moves(&plain, &mut rng, 8);
        let p = plain.position(&m).unwrap();
        assert_eq!(threaded.scores_threaded(&p, None, 2), plain.scores(&p, None), "{m:?}");
    }
    let mut s = Solver::new(BoardConfig::default(), 12).unwrap();
    // Double-threat wins and root bounds settle every column of this
    // position within a few nodes; without them the budget bites.
    s.set_techniques(EASY_TO_CUT);
    let p = s.position(&pons("43745416472735")).unwrap();
    let partial = s.scores_threaded(&p, Some(6), 2);
    assert!(partial.contains(&None));
}

#[test]
fn budget_gives_none_and_leaves_the_table_sound() {
    let mut s = Solver::new(BoardConfig::default(), 16).unwrap();
    s.set_techniques(EASY_TO_CUT);
    let p = s.position(&pons("43745416472735")).unwrap();
    assert_eq!(s.solve(&p, Some(3)), None);
    // Within a budget, a column is unknown or exact, never a guess.
    let partial = s.scores(&p, Some(3));
    assert!(partial.contains(&None));
    assert_eq!(s.best_move(&p, Some(3)), None);
    assert_eq!(s.solve(&p, None), Some(-13));
    let full = s.scores(&p, None);
    for (a, b) in partial.iter().zip(&full) {
        assert!(a.is_none() || a == b, "{partial:?} vs {full:?}");
    }
    s.reset_stats();
    assert_eq!(s.solve(&p, Some(1_000_000_000)), Some(-13));
    assert!(s.nodes() > 0);
}

#[test]
fn best_move_wins_fastest_and_prefers_the_centre() {
    let mut s = Solver::new(BoardConfig::default(), 16).unwrap();
    // The second player must block column 3.
    let p = s.position(&[3, 0, 3, 0, 3]).unwrap();
    let (col, score) = s.best_move(&p, None).unwrap();
    assert_eq!(col, 3);
    assert_eq!(Some(score), s.solve(&p, None));
    let p = s.position(&[3, 0, 3, 0, 3, 0]).unwrap(); // first player wins in column 3 now
    assert_eq!(s.best_move(&p, None), Some((3, (42 + 1 - 6) / 2)));
    assert_eq!(describe_score(42, 6, 18), "wins in 1");
}

#[test]
fn positions_are_checked() {
    let s = Solver::new(BoardConfig::default(), 4).unwrap();
    assert!(s.position(&[7]).unwrap_err().to_string().contains("out of range"));
    assert!(s.position(&[0; 7]).unwrap_err().to_string().contains("full"));
    assert!(s
        .position(&[3, 0, 3, 0, 3, 0, 3])
        .unwrap_err()
        .to_string()
        .contains("ends the game"));
    assert!(s.position(&[3, 0, 3, 0, 3, 0, 3, 1]).is_err());
    assert_eq!(s.position(&[3, 3, 2]).unwrap().moves(), 3);
}

#[test]
fn positions_from_a_referee_board_equal_those_from_moves() {
    use crate::game::Board;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for c in [cfg(6, 7, 4), cfg(5, 4, 3), cfg(7, 8, 5)] {
        let s = Solver::new(c, 4).unwrap();
        for _ in 0..50 {
            let moves = random_moves(&s, &mut rng, 0);
            let mut board = Board::new(c);
            for (i, &col) in moves.iter().enumerate() {
                board.drop_piece(col, i % 2).unwrap();
            }
            let from_moves = s.position(&moves).unwrap();
            assert_eq!(s.position_from_board(&board, moves.len() % 2), Ok(from_moves));
            if moves.len() % 2 == 1 {
                // Seat 1 to move has one piece fewer; seat 0 cannot be.
                assert!(s.position_from_board(&board, 0).is_err());
            }
        }
    }
    let s = Solver::new(cfg(6, 7, 4), 4).unwrap();
    let mut board = Board::new(cfg(6, 7, 4));
    for (i, col) in [3, 0, 3, 0, 3, 0, 3].into_iter().enumerate() {
        board.drop_piece(col, i % 2).unwrap();
    }
    assert_eq!(s.position_from_board(&board, 1), Err(SolverError::Over));
    assert!(s.position_from_board(&Board::new(cfg(5, 5, 4)), 0).is_err());
}

#[test]
fn boards_that_do_not_fit_are_refused() {
    assert!(Solver::new(cfg(6, 7, 4), 10).is_ok());
    assert!(Solver::new(cfg(7, 8, 4), 10).is_ok()); // exactly 64 bits
    assert!(Solver::new(cfg(9, 6, 4), 10).is_ok());
    assert!(matches!(
        Solver::new(cfg(8, 8, 4), 10),
        Err(SolverError::TooManyBits(_))
    ));
    assert!(Solver::new(cfg(6, 7, 4), MAX_TABLE_LOG2 + 1).is_err());
}

#[test]
fn a_full_64_bit_board_solves_like_the_brute_force() {
    // 7×8 uses every bit, sentinels included: keys and shifts at the top.
    check_against_brute(cfg(7, 8, 4), 40, 44, 5);
    check_against_brute(cfg(7, 8, 6), 40, 44, 6);
}

#[test]
fn scores_in_words() {
    // 6×7, empty board, centre: score 1 is a win with the first player's 21st piece.
    assert_eq!(describe_score(42, 0, 1), "wins in 21");
    assert_eq!(describe_score(42, 1, -1), "loses in 20");
    assert_eq!(describe_score(42, 5, 0), "draw");
    // Opponent wins with its next move.
    assert_eq!(describe_score(42, 10, -(42 - 10) / 2), "loses in 1");
    assert_eq!(describe_score(42, 11, -(42 - 11) / 2), "loses in 1");
    // Win with one's own next move or the one after.
    assert_eq!(describe_score(42, 11, (43 - 11) / 2), "wins in 1");
    assert_eq!(describe_score(42, 11, (43 - 13) / 2), "wins in 2");
    // Odd cell counts: 5×5, 25 cells.
    assert_eq!(describe_score(25, 0, 13), "wins in 1");
    assert_eq!(describe_score(25, 1, -12), "loses in 1");
    assert_eq!(describe_score(25, 0, 1), "wins in 13");
}

#[test]
fn words_agree_with_the_brute_force_game_length() {
    // On random 4×5 positions, the brute force's best line ends when the
    // words say: replay the best moves and count.
    let c = cfg(4, 5, 3);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut s = Solver::new(c, 10).unwrap();
    for _ in 0..100 {
        let moves = random_moves(&s, &mut rng, 0);
        let mut p = s.position(&moves).unwrap();
        let Some(v) = s.solve(&p, None) else { unreachable!() };
        let Some((wins, k)) = outcome_moves(c.cells(), p.moves(), v) else {
            continue;
        };
        // Both sides play the solver's best moves; count the mover's moves.
        let mut mine = 0;
        let mut my_turn = true;
        loop {
            let (col, _) = s.best_move(&p, None).unwrap();
            if my_turn {
                mine += 1;
            }
            if s.is_winning_move(&p, col) {
                assert_eq!(my_turn, wins, "{moves:?}");
                break;
            }
            p = s.play(&p, col).unwrap();
            my_turn = !my_turn;
        }
        assert_eq!(mine, k, "{moves:?} score {v}");
    }
}

#[test]
fn only_the_game_module_is_imported() {
    // The solver is a pure engine under the rules: its files may name
    // nothing of the crate but `crate::game`.
    for (name, text) in [
        ("mod.rs", include_str!("mod.rs")),
        ("columns.rs", include_str!("columns.rs")),
        ("search.rs", include_str!("search.rs")),
        ("words.rs", include_str!("words.rs")),
        ("position.rs", include_str!("position.rs")),
        ("table.rs", include_str!("table.rs")),
    ] {
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            assert!(
                rest.starts_with("game"),
                "{name} uses crate::{}",
                &rest[..rest.len().min(20)]
            );
        }
    }
}

/// `Geometry::above` fills each column up from a cell to the top, never
/// into the sentinel or the next column, on boards of several heights.
#[test]
fn cells_above_stay_in_their_column() {
    for (rows, cols) in [(6, 7), (7, 6), (4, 5), (9, 6), (3, 12)] {
        let g = super::position::Geometry::new(cfg(rows, cols, 3)).unwrap();
        let h1 = rows as u32 + 1;
        for c in 0..cols as u32 {
            for r in 0..rows as u32 {
                let cell = 1u64 << (c * h1 + r);
                let want: u64 = (r + 1..rows as u32).map(|rr| 1u64 << (c * h1 + rr)).sum();
                assert_eq!(g.above(cell), want, "{rows}x{cols} column {c} row {r}");
                // With a lower cell of the next column too, the fills add up.
                if c + 1 < cols as u32 {
                    let next = 1u64 << ((c + 1) * h1);
                    assert_eq!(g.above(cell | next), want | g.above(next));
                }
            }
        }
    }
}

/// `Geometry::move_bits`'s multiply for 6×7 gives the plain loop's bits for
/// every set of columns and every height of their cells, in both orders.
#[test]
fn move_bits_of_6x7_match_the_loop() {
    let g = super::position::Geometry::new(BoardConfig::default()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for cols in 0..128u32 {
        for _ in 0..20 {
            let moves: u64 = (0..7)
                .filter(|c| cols >> c & 1 == 1)
                .map(|c| 1u64 << (c * 7 + rng.gen_range(0..6)))
                .sum();
            for centre in [false, true] {
                let mut want = 0;
                for i in 0..7 {
                    let col = if centre { g.order[i as usize] as u32 } else { i };
                    want |= ((moves & g.column_mask(col) != 0) as u32) << i;
                }
                assert_eq!(g.move_bits(moves, centre), want, "{moves:#x} {centre}");
            }
        }
    }
}
