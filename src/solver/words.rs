//! Scores in words: "wins in N", "loses in N", "draw".

/// A score in words, for a position with `moves` plies played on a board of
/// `cells` cells: "wins in N" (N of its own moves, the winning one included),
/// "loses in N" (N of its own moves before the opponent's winning move, which
/// is the opponent's N-th), or "draw". See the module doc for the formula.
pub fn describe_score(cells: usize, moves: usize, score: i32) -> String {
    match outcome_moves(cells, moves, score) {
        None => "draw".to_string(),
        Some((true, k)) => format!("wins in {k}"),
        Some((false, k)) => format!("loses in {k}"),
    }
}

/// `None` for a draw, else (whether the side to move wins, N) with N as in
/// [`describe_score`].
pub fn outcome_moves(cells: usize, moves: usize, score: i32) -> Option<(bool, usize)> {
    if score == 0 {
        return None;
    }
    let s = score.unsigned_abs() as usize;
    let (cells, n) = (cells as i64, moves as i64);
    // The plies played before the winning piece: the one of `cells + 1 - 2s`
    // and `cells - 2s` whose parity is the winner's (the mover's for a win).
    let winner_parity = if score > 0 { n & 1 } else { (n + 1) & 1 };
    let mut m = cells + 1 - 2 * s as i64;
    if m & 1 != winner_parity {
        m -= 1;
    }
    let k = if score > 0 { (m - n) / 2 + 1 } else { (m - n + 1) / 2 };
    Some((score > 0, k.max(1) as usize))
}
