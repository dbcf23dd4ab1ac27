use super::*;
use crate::game::{Answer, Game};
use crate::search::reference;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn board(cfg: BoardConfig, moves: &[usize]) -> Board {
    let mut b = Board::new(cfg);
    for (i, &c) in moves.iter().enumerate() {
        b.drop_piece(c, i % 2).unwrap();
    }
    b
}

/// A board after up to `plies` random moves that is not over, with the
/// seat to move; `None` if the random game ended first.
fn random_position(rng: &mut ChaCha8Rng, cfg: BoardConfig, plies: usize) -> Option<(Board, usize)> {
    let mut g = Game::new(cfg, 2, 1);
    for _ in 0..plies {
        let legal = g.board().legal_moves();
        let c = legal[rng.gen_range(0..legal.len())];
        g.submit(Answer::Column(c as i64));
        if g.is_over() {
            return None;
        }
    }
    let to_move = g.to_move()?;
    Some((g.board().clone(), to_move))
}

#[test]
fn window_chain_for_short_lines() {
    // Exclusive chain in the table's order: an empty window is
    // "mine = L-1" for L = 1 and "mine = L-2" for L = 2.
    assert_eq!(window_score(0, 0, 1), 5);
    assert_eq!(window_score(0, 0, 2), 2);
    assert_eq!(window_score(0, 1, 2), -50);
    assert_eq!(window_score(1, 0, 2), 5);
    assert_eq!(window_score(0, 0, 3), 0);
    assert_eq!(window_score(0, 0, 4), 0);
    assert_eq!(window_score(2, 0, 4), 2);
    assert_eq!(window_score(0, 2, 4), -2);
    assert_eq!(window_score(0, 3, 4), -50);
    assert_eq!(window_score(1, 1, 4), 0);
    assert_eq!(window_score(4, 0, 4), 1000);
    assert_eq!(window_score(0, 4, 4), -1000);
}

/// Every column's score and the choice equal the plain reference
/// negamax, on random boards of many shapes (all three mask types),
/// win lengths 2 to 5 and depths 1 to 4, with one searcher kept across
/// positions (its table must never leak a value between them).
#[test]
fn equals_plain_negamax_on_random_positions() {
    for view in [LeafView::Mover, LeafView::ToMove] {
        equals_plain_negamax(view, 7);
    }
}

fn equals_plain_negamax(view: LeafView, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut kept: Vec<Minimax> = (0..=4).map(|d| Minimax::with_view(d, view)).collect();
    let mut checked = 0;
    let mut shapes: Vec<(usize, usize, usize, u32)> = Vec::new();
    for _ in 0..160 {
        let (r, c) = (rng.gen_range(1..=8), rng.gen_range(2..=8));
        let w = rng.gen_range(2..=5).min(r.max(c));
        shapes.push((r, c, w, 4));
    }
    // u128 and B256 boards, shallower (the reference is slow there).
    shapes.extend([
        (9, 9, 4, 3),
        (8, 14, 5, 3),
        (11, 11, 3, 2),
        (12, 12, 4, 2),
        (16, 16, 5, 2),
        (10, 12, 2, 2),
    ]);
    for (r, c, w, max_depth) in shapes {
        let cfg = BoardConfig::new(r, c, w).unwrap();
        let plies = rng.gen_range(0..=cfg.cells().min(20));
        let Some((b, to_move)) = random_position(&mut rng, cfg, plies) else {
            continue;
        };
        let depth = rng.gen_range(1..=max_depth);
        let want = reference::scores(&b, to_move, depth, view);
        let got = kept[depth as usize].scores(&b, to_move);
        assert_eq!(
            got,
            want,
            "{view:?} {cfg} depth {depth} board {:?}",
            b.to_board_string(&['R', 'Y'])
        );
        let mut fresh = Minimax::with_view(depth, view);
        assert_eq!(fresh.choose(&b, to_move), want.0, "{cfg} depth {depth} (fresh)");
        assert_eq!(fresh.last_score(), want.1[want.0], "the chosen move's exact score");
        assert_eq!(
            kept[depth as usize].choose(&b, to_move),
            want.0,
            "{cfg} depth {depth} (kept)"
        );
        checked += 1;
    }
    assert!(checked > 100, "only {checked} positions checked");
}

/// Deeper searches on the classic board, where pruning and the table do
/// the most work.
#[test]
fn equals_plain_negamax_deeper_on_6x7() {
    let cfg = BoardConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // (depth, view): odd and even depths, where iterative deepening,
    // the table's shallower best moves and the tie windows all act.
    let runs = [
        (5, LeafView::Mover),
        (6, LeafView::Mover),
        (6, LeafView::Mover),
        (7, LeafView::Mover),
        (5, LeafView::ToMove),
        (6, LeafView::ToMove),
    ];
    let mut kept = [LeafView::Mover, LeafView::ToMove].map(|v| Minimax::with_view(6, v));
    let mut done = 0;
    while done < runs.len() {
        let (depth, view) = runs[done];
        let plies = rng.gen_range(6..=16);
        let Some((b, to_move)) = random_position(&mut rng, cfg, plies) else {
            continue;
        };
        let want = reference::scores(&b, to_move, depth, view);
        let mut mm = Minimax::with_view(depth, view);
        assert_eq!(mm.choose(&b, to_move), want.0, "depth {depth} {view:?}");
        assert_eq!(mm.scores(&b, to_move), want, "depth {depth} {view:?}");
        if depth == 6 {
            // A searcher that has seen other positions agrees as well.
            let k = &mut kept[view as usize];
            assert_eq!(k.choose(&b, to_move), want.0);
            assert_eq!(k.scores(&b, to_move), want);
        }
        done += 1;
    }
}

#[test]
fn depth_4_opens_in_the_centre() {
    let b = Board::new(BoardConfig::default());
    let mut mm = Minimax::new(4);
    assert_eq!(mm.choose(&b, 0), 3);
    assert_eq!(mm.scores(&b, 0).0, 3);
    assert_eq!(Minimax::new(8).choose(&b, 0), 3);
}

#[test]
fn takes_a_win_in_one() {
    let cfg = BoardConfig::default();
    // Red has three stacked in column 0 and Yellow three in column 6.
    let b = board(cfg, &[0, 6, 0, 6, 0, 6]);
    for depth in 1..=8 {
        let mut mm = Minimax::new(depth);
        assert_eq!(mm.choose(&b, 0), 0, "depth {depth}");
        assert_eq!(mm.scores(&b, 0).1[0], Some(WIN));
    }
}

#[test]
fn blocks_a_loss_in_one() {
    let cfg = BoardConfig::default();
    // Yellow has three stacked in column 6; Red must block there.
    let b = board(cfg, &[0, 6, 1, 6, 4, 6]);
    for depth in 1..=8 {
        assert_eq!(Minimax::new(depth).choose(&b, 0), 6, "depth {depth}");
    }
}

#[test]
fn more_seats_lump_the_others_together() {
    let cfg = BoardConfig::default();
    let mut b = Board::new(cfg);
    for (i, c) in [3, 3, 3, 2, 2, 4].iter().enumerate() {
        b.drop_piece(*c, i % 3).unwrap();
    }
    let col = Minimax::new(4).choose(&b, 0);
    assert!(b.is_legal(col));
}

/// docs/alphazero.md: depth 8 beats depth 2 in at least 80% of games. Ten
/// different 2-ply openings, each played with both colours.
#[test]
fn depth_8_beats_depth_2() {
    let cfg = BoardConfig::default();
    let openings: Vec<Vec<usize>> = crate::game::openings::all_openings(cfg, 2)
        .into_iter()
        .step_by(5)
        .take(10)
        .collect();
    assert_eq!(openings.len(), 10);
    let (mut strong, mut weak) = (Minimax::new(8), Minimax::new(2));
    let mut wins = 0;
    for opening in &openings {
        for strong_seat in 0..2 {
            let mut g = Game::with_opening(cfg, 2, 1, opening).unwrap();
            while let Some(seat) = g.to_move() {
                let p = if seat == strong_seat { &mut strong } else { &mut weak };
                let col = p.choose(g.board(), seat);
                g.submit(Answer::Column(col as i64));
            }
            if g.outcome().unwrap().winner == Some(strong_seat) {
                wins += 1;
            }
        }
    }
    assert!(wins >= 16, "depth 8 won only {wins} of 20 games against depth 2");
}
