//! The rules, checked against a deliberately simple second implementation:
//! a grid of characters where every move rescans the whole board for a line.
//! Over 100,000 random games on random board sizes, win lengths and seat
//! counts, the referee's game and the search bitboards must agree with it
//! move for move.

use c4sim::game::bitboard::{Geometry, Position, Status, B256};
use c4sim::game::{Answer, BoardConfig, EndReason, Game, Step};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The simple model: `grid[row][col]`, row 0 at the bottom, `0` empty.
struct Simple {
    rows: usize,
    cols: usize,
    need: usize,
    grid: Vec<Vec<u8>>,
}

impl Simple {
    fn new(rows: usize, cols: usize, need: usize) -> Self {
        Simple {
            rows,
            cols,
            need,
            grid: vec![vec![0; cols]; rows],
        }
    }
    /// Drops a piece; `None` if the column is out of range or full.
    fn drop(&mut self, col: i64, who: u8) -> Option<usize> {
        if col < 0 || col as usize >= self.cols {
            return None;
        }
        let c = col as usize;
        let r = (0..self.rows).find(|&r| self.grid[r][c] == 0)?;
        self.grid[r][c] = who;
        Some(r)
    }
    /// Scans every cell and direction for `need` of `who` in a row.
    fn has_line(&self, who: u8) -> bool {
        for r in 0..self.rows as i64 {
            for c in 0..self.cols as i64 {
                for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                    let ok = (0..self.need as i64).all(|k| {
                        let (rr, cc) = (r + dr * k, c + dc * k);
                        rr >= 0
                            && cc >= 0
                            && rr < self.rows as i64
                            && cc < self.cols as i64
                            && self.grid[rr as usize][cc as usize] == who
                    });
                    if ok {
                        return true;
                    }
                }
            }
        }
        false
    }
    fn full(&self) -> bool {
        self.grid.iter().all(|row| row.iter().all(|&x| x != 0))
    }
}

fn next_active(active: &[bool], from: usize) -> usize {
    (1..=active.len())
        .map(|k| (from + k) % active.len())
        .find(|&s| active[s])
        .unwrap()
}

/// Plays one random game in both models; panics on the first disagreement.
fn check_game(rng: &mut ChaCha8Rng) {
    let max_rows = if rng.gen_bool(0.1) { 16 } else { 8 };
    let max_cols = if rng.gen_bool(0.1) { 16 } else { 8 };
    let rows = rng.gen_range(1..=max_rows);
    let cols = rng.gen_range(1..=max_cols);
    let need = rng.gen_range(1..=rows.max(cols).min(6));
    let seats = if rng.gen_bool(0.8) { 2 } else { rng.gen_range(3..=9) };
    let cfg = BoardConfig::new(rows, cols, need).unwrap();
    let mut game = Game::new(cfg, seats, 3);
    let mut simple = Simple::new(rows, cols, need);
    let geo = Geometry::<B256>::new(cfg);
    let mut pos = Position::<B256>::empty();
    let mut to_move = 0usize;
    let mut invalid = 0;
    let mut active = vec![true; seats];
    loop {
        // Mostly legal columns, sometimes out of range or full ones.
        let col: i64 = rng.gen_range(-1..=cols as i64);
        let step = game.submit(Answer::Column(col));
        match simple.drop(col, to_move as u8 + 1) {
            None => {
                invalid += 1;
                assert!(
                    matches!(step, Step::Illegal { .. }),
                    "{cfg:?}: column {col} should be refused"
                );
                if invalid == 3 {
                    // The third refusal puts the seat out; the last one left wins.
                    invalid = 0;
                    active[to_move] = false;
                    let left: Vec<usize> = (0..seats).filter(|&s| active[s]).collect();
                    if left.len() == 1 {
                        let o = game.outcome().expect("one seat left ends the game");
                        assert_eq!((o.winner, o.reason), (Some(left[0]), EndReason::TooManyInvalid));
                        return;
                    }
                    to_move = next_active(&active, to_move);
                    assert_eq!(game.to_move(), Some(to_move));
                }
                assert!(!game.is_over());
            }
            Some(row) => {
                invalid = 0;
                assert_eq!(
                    step,
                    Step::Moved {
                        seat: to_move,
                        col: col as usize,
                        row
                    }
                );
                let won = simple.has_line(to_move as u8 + 1);
                let full = simple.full();
                if seats == 2 {
                    let (next, status) = pos.play(&geo, col as usize);
                    let expect = if won {
                        Status::Won
                    } else if full {
                        Status::Draw
                    } else {
                        Status::Ongoing
                    };
                    assert_eq!(status, expect, "bitboard disagrees on {cfg:?}");
                    pos = next;
                }
                if won {
                    let o = game.outcome().expect("a line ends the game");
                    assert_eq!((o.winner, o.reason), (Some(to_move), EndReason::Win));
                    return;
                }
                if full {
                    let o = game.outcome().expect("a full board ends the game");
                    assert_eq!((o.winner, o.reason), (None, EndReason::Tie));
                    return;
                }
                assert!(!game.is_over());
                to_move = next_active(&active, to_move);
                assert_eq!(game.to_move(), Some(to_move));
            }
        }
    }
}

#[test]
fn a_hundred_thousand_random_games_agree_with_the_simple_rules() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let games = 100_000;
    for _ in 0..games {
        check_game(&mut rng);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    /// The same check with shrinking, seeded by proptest.
    #[test]
    fn random_games_agree(seed in any::<u64>()) {
        check_game(&mut ChaCha8Rng::seed_from_u64(seed));
    }

    /// Board strings round-trip for any reachable board.
    #[test]
    fn board_strings_round_trip(seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cfg = BoardConfig::new(rng.gen_range(1..=16), rng.gen_range(1..=16), 1).unwrap();
        let mut b = c4sim::game::Board::new(cfg);
        for _ in 0..rng.gen_range(0..=cfg.cells()) {
            let c = rng.gen_range(0..cfg.cols);
            let _ = b.drop_piece(c, rng.gen_range(0..9));
        }
        let s = b.to_board_string(&c4sim::game::DEFAULT_LETTERS);
        prop_assert_eq!(c4sim::game::Board::from_board_string(&s, cfg, &c4sim::game::DEFAULT_LETTERS).unwrap(), b);
    }
}
