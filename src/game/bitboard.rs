//! Two-player positions as bitboards, for the searches (minimax, MCTS,
//! AlphaZero self-play) that visit millions of positions.
//!
//! A position stores the pieces of the player to move and of the opponent
//! ("canonical" view), so negamax and the network encoding need no colour
//! flips. Bit `row * cols + col` (row 0 at the bottom) is one cell. Lines are
//! tested with precomputed window masks, which works for any `win_length`
//! and any board up to 16 × 16; the mask type is chosen by board size
//! (`u64` for the classic 6 × 7), so the common case runs on one register.

use super::board::{Board, BoardConfig, MAX_SIDE};
use std::ops::{BitAnd, BitOr, BitXor};

/// A set of cells. Implemented for `u64`, `u128` and [`B256`].
pub trait Bits:
    Copy
    + Eq
    + Default
    + Send
    + Sync
    + std::hash::Hash
    + std::fmt::Debug
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
{
    const CAPACITY: usize;
    fn bit(i: usize) -> Self;
    fn count(self) -> u32;
    fn is_empty(self) -> bool {
        self == Self::default()
    }
    fn has(self, i: usize) -> bool {
        !(self & Self::bit(i)).is_empty()
    }
    /// A 64-bit digest, for hash tables and caches.
    fn digest(self) -> u64;
    /// Wraps a value of family `F` at this mask type (see [`ByWidth`]).
    fn by_width<F: PerWidth>(x: F::At<Self>) -> ByWidth<F>;
}

/// `Bits` for a primitive unsigned integer: its width, its variant of
/// [`ByWidth`], and how it folds into a 64-bit digest.
macro_rules! primitive_bits {
    ($t:ty, $variant:ident, |$x:ident| $digest:expr) => {
        impl Bits for $t {
            const CAPACITY: usize = <$t>::BITS as usize;
            fn by_width<F: PerWidth>(x: F::At<Self>) -> ByWidth<F> {
                ByWidth::$variant(x)
            }
            #[inline]
            fn bit(i: usize) -> Self {
                1 << i
            }
            #[inline]
            fn count(self) -> u32 {
                self.count_ones()
            }
            #[inline]
            fn digest(self) -> u64 {
                let $x = self;
                $digest
            }
        }
    };
}
primitive_bits!(u64, W64, |x| x);
primitive_bits!(u128, W128, |x| (x as u64)
    ^ ((x >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));

/// 256 cells: enough for 16 × 16.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct B256(pub [u64; 4]);

macro_rules! b256_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl $tr for B256 {
            type Output = B256;
            #[inline]
            fn $f(self, o: B256) -> B256 {
                B256([self.0[0] $op o.0[0], self.0[1] $op o.0[1], self.0[2] $op o.0[2], self.0[3] $op o.0[3]])
            }
        }
    };
}
b256_op!(BitAnd, bitand, &);
b256_op!(BitOr, bitor, |);
b256_op!(BitXor, bitxor, ^);

impl Bits for B256 {
    const CAPACITY: usize = 256;
    fn by_width<F: PerWidth>(x: F::At<Self>) -> ByWidth<F> {
        ByWidth::W256(x)
    }
    #[inline]
    fn bit(i: usize) -> Self {
        let mut w = [0u64; 4];
        w[i / 64] = 1u64 << (i % 64);
        B256(w)
    }
    #[inline]
    fn count(self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
    fn digest(self) -> u64 {
        self.0
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, w| (h ^ w).wrapping_mul(0x1000_0000_01b3))
    }
}

/// The mask type a board needs: the one width dispatch every search uses.
/// Code generic over [`Bits`] is compiled once per width; [`with_width!`]
/// picks the instance for a board, and [`ByWidth`] keeps a per-board value
/// (an engine, a tree) whose type depends on the width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    W64,
    W128,
    W256,
}

impl Width {
    /// The narrowest mask that holds every cell of `cfg`.
    pub fn of(cfg: BoardConfig) -> Width {
        match cfg.cells() {
            0..=64 => Width::W64,
            65..=128 => Width::W128,
            _ => Width::W256,
        }
    }
}

/// A family of types with one member per mask type, such as
/// `Box<Engine<B>>` or `Geometry<B>`.
pub trait PerWidth {
    type At<B: Bits>;
}

/// The member of family `F` for one board's width.
pub enum ByWidth<F: PerWidth> {
    W64(F::At<u64>),
    W128(F::At<u128>),
    W256(F::At<B256>),
}

/// Evaluates `$body` with the type name `$B` bound to the mask type of
/// `$cfg` (`u64`, `u128` or [`B256`]); the body is compiled once per width.
macro_rules! with_width {
    ($cfg:expr, $B:ident => $body:expr) => {
        match $crate::game::bitboard::Width::of($cfg) {
            $crate::game::bitboard::Width::W64 => {
                type $B = u64;
                $body
            }
            $crate::game::bitboard::Width::W128 => {
                type $B = u128;
                $body
            }
            $crate::game::bitboard::Width::W256 => {
                type $B = $crate::game::bitboard::B256;
                $body
            }
        }
    };
}
pub(crate) use with_width;

/// Evaluates `$body` with `$v` bound to the member inside a [`ByWidth`]
/// (`$x` may be a value or a reference); compiled once per width.
macro_rules! on_width {
    ($x:expr, $v:pat => $body:expr) => {
        match $x {
            $crate::game::bitboard::ByWidth::W64($v) => $body,
            $crate::game::bitboard::ByWidth::W128($v) => $body,
            $crate::game::bitboard::ByWidth::W256($v) => $body,
        }
    };
}
pub(crate) use on_width;

/// Everything about a board shape that searches need, computed once.
#[derive(Clone, Debug)]
pub struct Geometry<B: Bits> {
    pub cfg: BoardConfig,
    /// Every line of `win_length` cells as a mask.
    pub windows: Vec<B>,
    /// For each cell, the indices of the windows through it.
    pub cell_windows: Vec<Vec<u32>>,
    /// The same windows as masks, `per_cell` for each cell in one array
    /// (cell `i`'s at `i * per_cell..`), a cell with fewer repeating its
    /// first: the win check after every move reads a fixed count in one run,
    /// with no indirection and no early exit to mispredict.
    window_masks: Vec<B>,
    per_cell: usize,
    /// The centre column (cols / 2).
    pub center: B,
    /// All cells.
    pub full: B,
}

impl<B: Bits> Geometry<B> {
    pub fn new(cfg: BoardConfig) -> Self {
        assert!(cfg.cells() <= B::CAPACITY, "board too large for this mask type");
        assert!(cfg.rows <= MAX_SIDE && cfg.cols <= MAX_SIDE);
        let (rows, cols, len) = (cfg.rows as isize, cfg.cols as isize, cfg.win_length as isize);
        let mut windows = Vec::new();
        let mut cell_windows = vec![Vec::new(); cfg.cells()];
        // Each line is listed once: in each direction, starting from its first cell.
        for (dr, dc) in [(0isize, 1isize), (1, 0), (1, 1), (1, -1)] {
            if len == 1 && (dr, dc) != (0, 1) {
                continue; // a one-cell window is the same in every direction
            }
            for r in 0..rows {
                for c in 0..cols {
                    let (er, ec) = (r + dr * (len - 1), c + dc * (len - 1));
                    if er < 0 || er >= rows || ec < 0 || ec >= cols {
                        continue;
                    }
                    let mut mask = B::default();
                    for k in 0..len {
                        let i = ((r + dr * k) * cols + c + dc * k) as usize;
                        mask = mask | B::bit(i);
                        cell_windows[i].push(windows.len() as u32);
                    }
                    windows.push(mask);
                }
            }
        }
        let mut center = B::default();
        let mut full = B::default();
        for r in 0..cfg.rows {
            center = center | B::bit(r * cfg.cols + cfg.cols / 2);
            for c in 0..cfg.cols {
                full = full | B::bit(r * cfg.cols + c);
            }
        }
        let per_cell = cell_windows.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut window_masks = Vec::with_capacity(per_cell * cell_windows.len());
        for ws in &cell_windows {
            // A repeat changes nothing; a cell in no window (none exists on
            // a valid board) gets the whole board, which one side never fills.
            let pad = ws.first().map_or(full, |&w| windows[w as usize]);
            window_masks.extend(ws.iter().map(|&w| windows[w as usize]));
            window_masks.extend(std::iter::repeat(pad).take(per_cell - ws.len()));
        }
        Geometry {
            cfg,
            windows,
            cell_windows,
            window_masks,
            per_cell,
            center,
            full,
        }
    }

    #[inline]
    pub fn index(&self, row: usize, col: usize) -> usize {
        row * self.cfg.cols + col
    }

    /// Whether `pieces` has a full window through cell `i`.
    #[inline]
    pub fn wins_through(&self, pieces: B, i: usize) -> bool {
        let span = i * self.per_cell..(i + 1) * self.per_cell;
        self.window_masks[span]
            .iter()
            .fold(false, |won, &m| won | (pieces & m == m))
    }
}

/// The index of the `k`-th set bit (from 0, lowest first) of a 16-bit
/// mask with more than `k` bits set.
#[inline]
fn nth_set_bit(mask: u32, k: u32) -> usize {
    if mask < 256 {
        // Boards of up to 8 columns (most of them): one table read instead
        // of the dependent chain below, a fifth of a random step's time.
        return NTH_SET_BIT[mask as usize][k as usize & 7] as usize;
    }
    nth_set_bit_by_halves(mask, k)
}

/// [`nth_set_bit`] for 8-bit masks: `NTH_SET_BIT[mask][k]`.
static NTH_SET_BIT: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if mask >> bit & 1 == 1 {
                t[mask][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        mask += 1;
    }
    t
};

/// [`nth_set_bit`] by a binary search over halves whose steps are
/// selects, not branches.
#[inline]
fn nth_set_bit_by_halves(mut mask: u32, mut k: u32) -> usize {
    let mut at = 0;
    for width in [8u32, 4, 2, 1] {
        let low = (mask & ((1 << width) - 1)).count_ones();
        let up = k >= low;
        k -= if up { low } else { 0 };
        mask >>= if up { width } else { 0 };
        at += if up { width } else { 0 };
    }
    at as usize
}

/// A two-player position from the view of the player to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position<B: Bits> {
    /// Pieces of the player to move.
    pub mine: B,
    /// Pieces of the other player.
    pub theirs: B,
    pub heights: [u8; MAX_SIDE],
    pub ply: u16,
}

/// The result of playing a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ongoing,
    /// The player who just moved made a line.
    Won,
    /// The board is full with no line.
    Draw,
}

impl<B: Bits> Position<B> {
    pub fn empty() -> Self {
        Position {
            mine: B::default(),
            theirs: B::default(),
            heights: [0; MAX_SIDE],
            ply: 0,
        }
    }

    /// From a referee board with two seats; `to_move` is the seat to move.
    pub fn from_board(board: &Board, to_move: usize) -> Self {
        let mut p = Self::empty();
        let cols = board.cols();
        for col in 0..cols {
            p.heights[col] = board.height(col) as u8;
            for row in 0..board.height(col) {
                let bit = B::bit(row * cols + col);
                if board.cell(row, col) == Some(to_move) {
                    p.mine = p.mine | bit;
                } else {
                    p.theirs = p.theirs | bit;
                }
            }
        }
        p.ply = board.pieces() as u16;
        p
    }

    /// From a move list (columns from 0), checking legality.
    pub fn from_moves(geo: &Geometry<B>, moves: &[usize]) -> Result<Self, super::board::BoardError> {
        let mut p = Self::empty();
        for (i, &c) in moves.iter().enumerate() {
            if !p.is_legal(geo, c) {
                return Err(super::board::BoardError::IllegalMove(i + 1, c));
            }
            let (next, status) = p.play(geo, c);
            if status != Status::Ongoing && i + 1 < moves.len() {
                return Err(super::board::BoardError::OverAfter(i + 1));
            }
            p = next;
        }
        Ok(p)
    }

    #[inline]
    pub fn is_legal(&self, geo: &Geometry<B>, col: usize) -> bool {
        col < geo.cfg.cols && (self.heights[col] as usize) < geo.cfg.rows
    }

    /// Per column, 1 if it is legal and 0 if not (columns past the board's
    /// are 1: callers take the board's columns only): all sixteen heights
    /// compared with the row count at once (bytes in a `u128`).
    #[inline]
    pub fn legal_bytes(&self, geo: &Geometry<B>) -> [u8; MAX_SIDE] {
        const HIGH: u128 = u128::from_le_bytes([0x80; MAX_SIDE]);
        const ONES: u128 = u128::from_le_bytes([1; MAX_SIDE]);
        let h = u128::from_le_bytes(self.heights);
        // Heights and the row count are below 0x80, so `h | 0x80 − rows`
        // never borrows across bytes: a byte keeps its high bit exactly
        // where its height reached the row count (the column is full).
        let full = ((h | HIGH) - ONES * geo.cfg.rows as u128) & HIGH;
        ((!full & HIGH) >> 7).to_le_bytes()
    }

    /// Legal columns as a bit mask over columns: all sixteen heights
    /// compared with the row count at once (bytes in a `u128`), without a
    /// loop over columns.
    #[inline]
    pub fn legal_mask(&self, geo: &Geometry<B>) -> u32 {
        let open = u128::from_le_bytes(self.legal_bytes(geo));
        // One bit per byte into the low byte: the multiply adds byte j's
        // bit at position 56 + j without carries.
        const GATHER: u64 = 0x0102_0408_1020_4080;
        let pack = |x: u64| (x.wrapping_mul(GATHER) >> 56) as u32;
        let bits = pack(open as u64) | pack((open >> 64) as u64) << 8;
        bits & ((1u32 << geo.cfg.cols) - 1)
    }

    /// A legal column drawn uniformly (the position must have one): one
    /// draw of `0..n` for the n legal columns, then the draw-th of them.
    /// The pick halves the mask four times by popcounts, with no
    /// data-dependent branch: a random loop count mispredicts, and batched
    /// envs draw millions a second.
    #[inline]
    pub fn random_legal_column(&self, geo: &Geometry<B>, rng: &mut impl rand::Rng) -> usize {
        let mask = self.legal_mask(geo);
        nth_set_bit(mask, rng.gen_range(0..mask.count_ones()))
    }

    /// Plays a legal column: the returned position is from the opponent's view.
    #[inline]
    pub fn play(&self, geo: &Geometry<B>, col: usize) -> (Self, Status) {
        let row = self.heights[col] as usize;
        let i = geo.index(row, col);
        let mine = self.mine | B::bit(i);
        // One 16-byte add, not a byte store into the copy: a byte store
        // followed by the copy's 16-byte read stalls store forwarding, which
        // cost a batched env's step (rl::vector) a third of its time.
        const _: () = assert!(MAX_SIDE == 16);
        let heights = (u128::from_le_bytes(self.heights) + (1u128 << (8 * col))).to_le_bytes();
        let next = Position {
            mine: self.theirs,
            theirs: mine,
            heights,
            ply: self.ply + 1,
        };
        let status = if geo.wins_through(mine, i) {
            Status::Won
        } else if next.ply as usize == geo.cfg.cells() {
            Status::Draw
        } else {
            Status::Ongoing
        };
        (next, status)
    }

    /// The same position mirrored left–right.
    pub fn mirrored(&self, geo: &Geometry<B>) -> Self {
        let cols = geo.cfg.cols;
        let flip = |b: B| {
            let mut out = B::default();
            for r in 0..geo.cfg.rows {
                for c in 0..cols {
                    if b.has(r * cols + c) {
                        out = out | B::bit(r * cols + cols - 1 - c);
                    }
                }
            }
            out
        };
        let mut heights = [0u8; MAX_SIDE];
        for c in 0..cols {
            heights[cols - 1 - c] = self.heights[c];
        }
        Position {
            mine: flip(self.mine),
            theirs: flip(self.theirs),
            heights,
            ply: self.ply,
        }
    }

    /// A 64-bit key for hash tables (unique for boards of at most 64 cells).
    #[inline]
    pub fn key(&self) -> u64 {
        self.mine.digest().wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.theirs.digest().rotate_left(29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::board::DEFAULT_LETTERS;

    #[test]
    fn window_counts() {
        // 6 × 7, win 4: 24 horizontal + 21 vertical + 12 + 12 diagonal = 69.
        let g = Geometry::<u64>::new(BoardConfig::default());
        assert_eq!(g.windows.len(), 69);
        let g1 = Geometry::<u64>::new(BoardConfig::new(2, 3, 1).unwrap());
        assert_eq!(g1.windows.len(), 6);
        let big = Geometry::<B256>::new(BoardConfig::new(16, 16, 5).unwrap());
        assert_eq!(big.windows.len(), 16 * 12 * 2 + 12 * 12 * 2);
    }

    #[test]
    fn play_detects_wins_and_draws() {
        let g = Geometry::<u64>::new(BoardConfig::default());
        let mut p = Position::<u64>::empty();
        let mut last = Status::Ongoing;
        for c in [0, 6, 0, 6, 0, 6, 0] {
            let (n, s) = p.play(&g, c);
            p = n;
            last = s;
        }
        assert_eq!(last, Status::Won);
        let g = Geometry::<u128>::new(BoardConfig::new(3, 2, 3).unwrap());
        let mut p = Position::<u128>::empty();
        for c in [0, 0, 0, 1, 1, 1] {
            let (n, s) = p.play(&g, c);
            p = n;
            last = s;
        }
        assert_eq!(last, Status::Draw);
    }

    #[test]
    fn from_board_matches_moves() {
        let cfg = BoardConfig::default();
        let g = Geometry::<u64>::new(cfg);
        let mut b = Board::new(cfg);
        let moves = [3, 3, 2, 4, 4];
        for (i, &c) in moves.iter().enumerate() {
            b.drop_piece(c, i % 2).unwrap();
        }
        assert_eq!(
            Position::from_board(&b, 1),
            Position::<u64>::from_moves(&g, &moves).unwrap()
        );
        let s = b.to_board_string(&DEFAULT_LETTERS);
        assert_eq!(s.len(), 42);
    }

    #[test]
    fn mirror_is_an_involution() {
        let g = Geometry::<u64>::new(BoardConfig::default());
        let p = Position::<u64>::from_moves(&g, &[0, 1, 1, 5]).unwrap();
        let m = p.mirrored(&g);
        assert_ne!(m, p);
        assert_eq!(m, Position::from_moves(&g, &[6, 5, 5, 1]).unwrap());
        assert_eq!(m.mirrored(&g), p);
    }

    struct GeoAt;
    impl PerWidth for GeoAt {
        type At<B: Bits> = Geometry<B>;
    }

    #[test]
    fn one_width_dispatch_picks_the_narrowest_mask() {
        for (rows, cols, want, bits) in [
            (6, 7, Width::W64, 64),
            (8, 8, Width::W64, 64),
            (9, 9, Width::W128, 128),
            (16, 16, Width::W256, 256),
        ] {
            let cfg = BoardConfig {
                rows,
                cols,
                win_length: 4,
            };
            assert_eq!(Width::of(cfg), want);
            assert_eq!(with_width!(cfg, B => B::CAPACITY), bits);
            let g = with_width!(cfg, B => B::by_width::<GeoAt>(Geometry::new(cfg)));
            assert_eq!(on_width!(&g, g => (g.cfg, g.full.count() as usize)), (cfg, rows * cols));
        }
    }

    #[test]
    fn nth_set_bit_counts_from_the_lowest() {
        for mask in 1u32..1 << 16 {
            let naive: Vec<usize> = (0..16).filter(|c| mask >> c & 1 == 1).collect();
            for (k, &c) in naive.iter().enumerate() {
                assert_eq!(nth_set_bit(mask, k as u32), c, "mask {mask:#b}, k {k}");
                assert_eq!(nth_set_bit_by_halves(mask, k as u32), c, "mask {mask:#b}, k {k}");
            }
        }
    }

    #[test]
    fn legal_mask_and_random_columns_on_every_shape() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for (rows, cols) in [(6, 7), (4, 4), (1, 16), (16, 3), (7, 9), (3, 3)] {
            with_width!(BoardConfig::new(rows, cols, 3).unwrap(), B => {
                let geo = Geometry::<B>::new(BoardConfig::new(rows, cols, 3).unwrap());
                for _ in 0..300 {
                    let mut pos = Position::<B>::empty();
                    for c in 0..cols {
                        pos.heights[c] = rng.gen_range(0..=rows) as u8;
                    }
                    let naive = (0..cols).filter(|&c| (pos.heights[c] as usize) < rows).fold(0u32, |m, c| m | 1 << c);
                    assert_eq!(pos.legal_mask(&geo), naive, "{rows}x{cols} {:?}", &pos.heights[..cols]);
                    if naive != 0 {
                        let c = pos.random_legal_column(&geo, &mut rng);
                        assert!(naive >> c & 1 == 1);
                    }
                }
            })
        }
    }
}
