//! Positions as two 64-bit bitboards with a sentinel row, after Pascal Pons.
//!
//! Bit `col * (rows + 1) + row` is one cell (row 0 at the bottom). The extra
//! top bit of each column (the sentinel) is never a piece, which gives three
//! things for free:
//! - `mask + bottom_of(col)` carries into the lowest empty cell of `col`, so a
//!   move is one addition;
//! - `current + mask` is a unique key (per column it is below `2^(rows+1)`, so
//!   no carry crosses into the next column);
//! - any line that would wrap from one column into the next passes through a
//!   sentinel bit, which is never set, so plain shifts test lines without
//!   per-column masks.
//!
//! A position keeps the pieces of the side to move (`current`) and all pieces
//! (`mask`), plus the same two boards for the left–right mirror image, updated
//! on every move so that the mirrored key (for symmetric table entries) costs
//! one addition instead of a loop over the columns.

use super::SolverError;
use crate::game::BoardConfig;

/// Largest number of columns the geometry holds (the crate's `MAX_SIDE`).
pub(crate) const MAX_COLS: usize = 16;

/// Everything about a board shape that the search needs, computed once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub rows: u32,
    pub cols: u32,
    /// Bits per column: `rows + 1` (the sentinel row).
    pub h1: u32,
    pub cells: u32,
    pub win: u32,
    /// The bottom cell of every column.
    pub bottom: u64,
    /// Every playable cell (all bits but the sentinels).
    pub board: u64,
    /// Line directions as shifts: vertical, horizontal, both diagonals.
    pub dirs: [u32; 4],
    /// Columns from the centre outwards (see [`centre_order`]).
    pub order: [u8; MAX_COLS],
    /// The cells, sentinels included, of the rows with the parity of
    /// `rows`: where the next free cell of every column lies when each
    /// column has an even number of empty cells (see [`Geometry::claimeven`]).
    pub even_tops: u64,
    /// The cells of rows 1, 3, 5, … from the bottom: where the first
    /// player's threats count (Allis' odd threats), the others being the
    /// second player's.
    pub first_rows: u64,
    /// The playable cells of the column of each bit (0 past the last
    /// column): a column from one of its cells without a division.
    column_of: [u64; 64],
}

/// Columns from the centre outwards: by distance `|2c - (cols - 1)|`, and on
/// even widths, where two columns are equally central, the left one first.
/// For 7 columns: 3, 2, 4, 1, 5, 0, 6; for 6: 2, 3, 1, 4, 0, 5.
pub fn centre_order(cols: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cols).collect();
    order.sort_by_key(|&c| ((2 * c as i64 - (cols as i64 - 1)).abs(), c));
    order
}

#[inline]
fn shl(x: u64, n: u32) -> u64 {
    x.checked_shl(n).unwrap_or(0)
}
#[inline]
fn shr(x: u64, n: u32) -> u64 {
    x.checked_shr(n).unwrap_or(0)
}

impl Geometry {
    /// The shape, or why the solver cannot take it.
    pub fn new(cfg: BoardConfig) -> Result<Geometry, SolverError> {
        cfg.validate()?;
        let (rows, cols) = (cfg.rows as u32, cfg.cols as u32);
        let h1 = rows + 1;
        if h1 * cols > 64 {
            return Err(SolverError::TooManyBits(cfg));
        }
        if cols as usize > MAX_COLS {
            return Err(SolverError::TooManyCols(cfg.cols));
        }
        Ok(Geometry::build(rows, cols, cfg.win_length as u32))
    }

    /// The classic board, 6 rows, 7 columns, four in a row, as a constant:
    /// the search's copy for it reads every mask and shift from here, so
    /// the compiler folds them into the code (see `search.rs`'s `Flavor`).
    pub const STANDARD: Geometry = Geometry::build(6, 7, 4);

    /// Whether this is [`Geometry::STANDARD`]'s shape.
    pub fn is_standard(&self) -> bool {
        (self.rows, self.cols, self.win) == (6, 7, 4)
    }

    /// The geometry of a shape that fits (`(rows + 1) × cols ≤ 64`,
    /// `cols ≤ MAX_COLS`; [`Geometry::new`] checks). A `const fn`, so
    /// [`Geometry::STANDARD`] is built at compile time.
    const fn build(rows: u32, cols: u32, win: u32) -> Geometry {
        let h1 = rows + 1;
        let mut bottom = 0u64;
        let mut c = 0;
        while c < cols {
            bottom |= 1u64 << (c * h1);
            c += 1;
        }
        let column = (1u64 << rows) - 1;
        let board = bottom.wrapping_mul(column);
        // Centre order (see [`centre_order`]): by distance from the
        // middle, the left column first.
        let mut order = [0u8; MAX_COLS];
        let (mut i, mut d) = (0, 0);
        while i < cols as usize {
            let mut c = 0;
            while c < cols {
                if (2 * c as i64 - (cols as i64 - 1)).abs() == d {
                    order[i] = c as u8;
                    i += 1;
                }
                c += 1;
            }
            d += 1;
        }
        let mut row = 0u64;
        let mut r = rows % 2;
        while r <= rows {
            row |= 1u64 << r;
            r += 2;
        }
        let mut first = 0u64;
        let mut r = 0;
        while r < rows {
            first |= 1u64 << r;
            r += 2;
        }
        let mut column_of = [0u64; 64];
        let mut bit = 0;
        while bit < h1 * cols {
            column_of[bit as usize] = column << (bit / h1 * h1);
            bit += 1;
        }
        Geometry {
            even_tops: bottom.wrapping_mul(row),
            first_rows: bottom.wrapping_mul(first),
            column_of,
            rows,
            cols,
            h1,
            cells: rows * cols,
            win,
            bottom,
            board,
            dirs: [1, h1, h1 + 1, h1 - 1],
            order,
        }
    }

    #[inline]
    pub fn bottom_of(&self, col: u32) -> u64 {
        1u64 << (col * self.h1)
    }

    #[inline]
    pub fn column_mask(&self, col: u32) -> u64 {
        self.column_of[(col * self.h1) as usize]
    }

    /// The empty cells where one more piece of `p` completes a line.
    /// `mask` is every occupied cell.
    #[inline(always)]
    pub fn winning_cells(&self, p: u64, mask: u64) -> u64 {
        let r = if self.win == 4 && self.h1 == 7 {
            // Six rows, the common case, inline (constant-folded in the
            // search's copy for the standard board).
            winning4_h::<7>(p)
        } else if self.win == 4 {
            self.winning4(p)
        } else {
            self.winning_any(p)
        };
        r & (self.board ^ mask)
    }

    /// The classic four in a row ([`winning4_in`]). The common column
    /// heights get their own copy with constant shifts: the search calls
    /// this several times a node, and the copies cut its instructions by
    /// 7% on a callgrind sample.
    #[inline(never)]
    fn winning4(&self, p: u64) -> u64 {
        match self.h1 {
            7 => winning4_h::<7>(p),
            8 => winning4_h::<8>(p),
            6 => winning4_h::<6>(p),
            5 => winning4_h::<5>(p),
            h1 => winning4_in(p, h1),
        }
    }

    /// Any `win_length` k: a cell completes a line in a direction when `i`
    /// consecutive pieces lie on one side and `k - 1 - i` on the other, for
    /// some i. `before[i]` marks cells whose `i` neighbours at -s, -2s, …
    /// are all pieces; `after[i]` likewise at +s, +2s, ….
    #[inline(never)]
    fn winning_any(&self, p: u64) -> u64 {
        let k = self.win as usize;
        let mut r = 0u64;
        let mut before = [u64::MAX; 17];
        let mut after = [u64::MAX; 17];
        for &s in &self.dirs {
            for i in 1..k {
                before[i] = before[i - 1] & shl(p, i as u32 * s);
                after[i] = after[i - 1] & shr(p, i as u32 * s);
            }
            for i in 0..k {
                r |= before[i] & after[k - 1 - i];
            }
        }
        r
    }

    /// What Allis' *claimeven* proves about a position whose side to move
    /// (pieces `current`, all pieces `mask`) cannot win at once.
    ///
    /// The follower answers each move on top of it, and so takes the upper
    /// cell of each empty pair of a column with an even number of empty
    /// cells. It can keep doing so while the columns with an odd number
    /// (the *odd columns*) are even in number when the leader is to move:
    /// the leader's move either leaves room on top, or fills an odd column
    /// and the follower opens another one. The leader then gets at most
    /// the lower cells of the even columns and every empty cell of the odd
    /// ones; if those and its pieces make no line, it cannot win.
    ///
    /// So with an even number of odd columns the mover draws at best when
    /// that holds for it; with an odd number it draws at least when, after
    /// it plays into an odd column, that holds for the opponent. When the
    /// follower's own pieces and the upper cells of the even columns, which
    /// it gets for sure, hold a line, it wins: the leader loses.
    ///
    /// A follower's threat (a winning cell it cannot play yet) wins too,
    /// Allis' odd threat: leave out its column from the cell below it up,
    /// and play claimeven on the rest. When the rest is full the leader
    /// must play below the threat, and the follower wins on top.
    ///
    /// Only what could narrow the window `(alpha, beta)` is looked for;
    /// `threats` are the opponent's winning cells, if known.
    #[inline(always)]
    pub fn claimeven(&self, pos: &Pos, threats: Option<u64>, alpha: i32, beta: i32) -> Claim {
        let (current, mask) = (pos.current, pos.mask);
        // The odd columns are even in number when the empty cells are.
        let leads = (self.cells - pos.moves) & 1 == 0;
        let tops = mask + self.bottom;
        let odd = tops & !self.even_tops;
        let empty = self.board & !mask;
        let opponent = current ^ mask;
        if beta >= 0 {
            let mut draw = false;
            if leads {
                match self.claimeven_leader(current, opponent, empty, odd) {
                    Some(true) => return Claim::AtMost(-1),
                    Some(false) if alpha >= 0 => return Claim::AtMost(0),
                    Some(false) => draw = true,
                    None => {}
                }
            }
            let threats = threats.unwrap_or_else(|| self.winning_cells(opponent, mask)) & !tops;
            if threats != 0 && self.threat_wins(current, threats, tops, empty, odd) {
                return Claim::AtMost(-1);
            }
            if draw {
                return Claim::AtMost(0);
            }
        }
        if leads || alpha > 0 {
            return Claim::Nothing;
        }
        let mut rest = odd;
        while rest != 0 {
            let cell = rest & rest.wrapping_neg();
            rest ^= cell;
            if let Some(loses) = self.claimeven_leader(opponent, current | cell, empty ^ cell, odd ^ cell) {
                return Claim::AtLeast(loses as i32);
            }
        }
        Claim::Nothing
    }

    /// With the leader's pieces `own`, the follower's `other`, the empty
    /// cells and the lowest empty cell of each odd column: `None` if the
    /// leader may still make a line, else whether the follower surely does.
    #[inline(always)]
    fn claimeven_leader(&self, own: u64, other: u64, empty: u64, odd: u64) -> Option<bool> {
        let (cells, odd_columns) = self.leader_cells(own, empty, odd);
        if self.has_line(cells) {
            return None;
        }
        Some(self.has_line(other | (empty & !self.even_tops & !odd_columns)))
    }

    /// The leader's pieces `own` and every cell claimeven may leave it:
    /// the lower cell of each pair in the even columns and every empty cell
    /// of the odd ones (whose lowest empty cells are `odd`); and those odd
    /// columns' empty cells alone.
    #[inline(always)]
    fn leader_cells(&self, own: u64, empty: u64, odd: u64) -> (u64, u64) {
        // In an odd column the empty cells run from its lowest up to the
        // top, so adding the lowest carries through exactly them.
        let odd_columns = ((empty + odd) ^ empty) & self.board;
        (own | (empty & self.even_tops) | odd_columns, odd_columns)
    }

    /// Whether one of the follower's unplayable winning cells `threats`
    /// wins by claimeven on the board less its column from the cell below
    /// it up: the leader (pieces `own`; `tops` the next free cell of each
    /// column) gets at most its claimeven cells elsewhere, every cell of
    /// that column below the threat, and the cell right below it, the
    /// move that loses.
    #[inline(always)]
    fn threat_wins(&self, own: u64, threats: u64, tops: u64, empty: u64, odd: u64) -> bool {
        let mut rest = threats;
        while rest != 0 {
            // The lowest threat of a column is the one that counts.
            let threat = rest & rest.wrapping_neg();
            let column = self.column_of[threat.trailing_zeros() as usize];
            rest &= !column;
            let below = threat >> 1;
            // The column's cells from its lowest empty one to below `below`.
            let under = below - (tops & column);
            let others_odd = odd & !column;
            if (others_odd.count_ones() + under.count_ones()) & 1 != 0 {
                continue;
            }
            let (cells, _) = self.leader_cells(own, empty & !column, others_odd);
            if !self.has_line(cells | under | below) {
                return true;
            }
        }
        false
    }

    /// The columns of `moves` (at most one cell a column) as one bit each:
    /// bit `i` for the `i`-th column of the centre order if `centre`, else
    /// for column `i`.
    #[inline(always)]
    pub fn move_bits(&self, moves: u64, centre: bool) -> u32 {
        if self.rows == 6 && self.cols == 7 {
            // A cell in a column's six carries the column's 0b111111 into
            // its sentinel; one multiply gathers the seven sentinels (each
            // term lands on its own bit, so nothing carries), and a table
            // puts them in centre order.
            let tops = ((moves + self.board) & !self.board) >> 6;
            const GATHER: u64 = 1 << 36 | 1 << 30 | 1 << 24 | 1 << 18 | 1 << 12 | 1 << 6 | 1;
            let flags = (tops.wrapping_mul(GATHER) >> 36) as usize & 127;
            return if centre { CENTRE7[flags] as u32 } else { flags as u32 };
        }
        let mut bits = 0;
        for i in 0..self.cols {
            let col = if centre { self.order[i as usize] as u32 } else { i };
            bits |= ((moves & self.column_mask(col) != 0) as u32) << i;
        }
        bits
    }

    /// The cells above any of `cells` in the same column: a fill upwards by
    /// doubling shifts, each kept inside the columns by the cells whose
    /// span below lies within the board (the sentinels stop it).
    #[inline]
    pub fn above(&self, cells: u64) -> u64 {
        let mut inside = self.board;
        let mut up = (cells << 1) & inside;
        let mut shift = 1;
        while shift < self.rows {
            up |= inside & (up << shift);
            inside &= inside << shift;
            shift *= 2;
        }
        up
    }

    /// Whether `p` holds a complete line.
    #[inline(always)]
    pub fn has_line(&self, p: u64) -> bool {
        if self.win == 4 {
            // Pairs, then pairs of pairs: two shifts a direction, the four
            // directions tested at once (no branch to mispredict).
            let line = |s: u32| {
                let m = p & (p >> s);
                m & (m >> (2 * s))
            };
            let [a, b, c, d] = self.dirs;
            return line(a) | line(b) | line(c) | line(d) != 0;
        }
        let k = self.win;
        self.dirs.iter().any(|&s| {
            let mut m = p;
            for t in 1..k {
                m &= shr(p, t * s);
            }
            m != 0
        })
    }
}

/// Seven columns' flags (bit `c` for column `c`) in centre order (bit `i`
/// for the `i`-th of 3, 2, 4, 1, 5, 0, 6).
const CENTRE7: [u8; 128] = {
    let order = [3, 2, 4, 1, 5, 0, 6];
    let mut t = [0u8; 128];
    let mut flags = 0;
    while flags < 128 {
        let mut i = 0;
        while i < 7 {
            t[flags] |= ((flags >> order[i] & 1) << i) as u8;
            i += 1;
        }
        flags += 1;
    }
    t
};

/// What [`Geometry::claimeven`] proves of a position's score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    Nothing,
    /// The side to move scores at most this (0 or -1).
    AtMost(i32),
    /// The side to move scores at least this (0 or 1).
    AtLeast(i32),
}

/// [`Geometry::winning4`] for columns of `H1` bits (sentinel included).
#[inline(always)]
fn winning4_h<const H1: u32>(p: u64) -> u64 {
    winning4_in(p, H1)
}

/// Pons' unrolled shifts for columns of `h1` bits: in each direction a
/// cell completes a line when three pieces lie on one side of it, or two
/// on one side and one on the other.
#[inline(always)]
fn winning4_in(p: u64, h1: u32) -> u64 {
    // Vertical: only the three below can count (the cells above are empty).
    let mut r = (p << 1) & (p << 2) & (p << 3);
    for s in [h1, h1 + 1, h1 - 1] {
        let mut p2 = (p << s) & (p << (2 * s));
        r |= p2 & (p << (3 * s));
        r |= p2 & (p >> s);
        p2 = (p >> s) & (p >> (2 * s));
        r |= p2 & (p << s);
        r |= p2 & (p >> (3 * s));
    }
    r
}

/// A two-player position: the side to move's pieces, all pieces, and the
/// same for the mirror image. Build it with
/// [`Solver::position`](super::Solver::position); it belongs to the board
/// shape of the solver that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pos {
    pub(crate) current: u64,
    pub(crate) mask: u64,
    pub(crate) mcurrent: u64,
    pub(crate) mmask: u64,
    pub(crate) moves: u32,
    /// (rows, cols, win_length), to refuse a position from another shape.
    pub(crate) shape: (u8, u8, u8),
}

impl Pos {
    pub(crate) fn empty(g: &Geometry) -> Pos {
        Pos {
            current: 0,
            mask: 0,
            mcurrent: 0,
            mmask: 0,
            moves: 0,
            shape: (g.rows as u8, g.cols as u8, g.win as u8),
        }
    }

    /// Plies played so far.
    pub fn moves(&self) -> usize {
        self.moves as usize
    }

    /// The cells that can be played now (one per non-full column).
    #[inline]
    pub(crate) fn possible(&self, g: &Geometry) -> u64 {
        (self.mask + g.bottom) & g.board
    }

    #[inline]
    pub(crate) fn can_play(&self, g: &Geometry, col: u32) -> bool {
        self.mask & (1u64 << (col * g.h1 + g.rows - 1)) == 0
    }

    /// Plays `col`, which must not be full.
    #[inline]
    pub(crate) fn play(&mut self, g: &Geometry, col: u32) {
        self.current ^= self.mask;
        self.mask |= self.mask + g.bottom_of(col);
        self.mcurrent ^= self.mmask;
        self.mmask |= self.mmask + g.bottom_of(g.cols - 1 - col);
        self.moves += 1;
    }

    /// Whether playing `col` (not full) completes a line for the side to move.
    #[inline]
    pub(crate) fn is_winning_move(&self, g: &Geometry, col: u32) -> bool {
        g.winning_cells(self.current, self.mask) & self.possible(g) & g.column_mask(col) != 0
    }

    #[inline]
    pub(crate) fn can_win_next(&self, g: &Geometry) -> bool {
        g.winning_cells(self.current, self.mask) & self.possible(g) != 0
    }

    /// The unique key of this position (see the module doc).
    #[inline]
    pub(crate) fn key(&self) -> u64 {
        self.current + self.mask
    }

    /// Whether this position is its own mirror image (then each column
    /// scores as its mirror column).
    #[inline]
    pub(crate) fn is_symmetric(&self) -> bool {
        self.key() == self.mcurrent + self.mmask
    }

    /// The key shared by this position and its mirror image.
    #[inline]
    pub(crate) fn symmetric_key(&self) -> u64 {
        self.key().min(self.mcurrent + self.mmask)
    }

    /// The opponent's winning cells (empty cells where one of its pieces
    /// completes a line).
    #[inline]
    pub(crate) fn opponent_winning_cells(&self, g: &Geometry) -> u64 {
        g.winning_cells(self.current ^ self.mask, self.mask)
    }

    /// The moves that do not hand the opponent an immediate win: when the
    /// opponent threatens to win, only the block (none if there are two
    /// threats), and never a cell right below an opponent's winning cell.
    /// Assumes the side to move cannot win at once (the caller checked).
    /// `opponent_win`: the opponent's winning cells ([`Pos::opponent_winning_cells`]).
    #[inline]
    pub(crate) fn non_losing_moves_given(&self, g: &Geometry, opponent_win: u64) -> u64 {
        // Without branches (the CPU mispredicted the test of `forced`).
        let possible = self.possible(g);
        let forced = possible & opponent_win;
        let moves = if forced != 0 { forced } else { possible } & !(opponent_win >> 1);
        if forced & forced.wrapping_sub(1) != 0 {
            0
        } else {
            moves
        }
    }
}
