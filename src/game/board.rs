//! The board every mode agrees on: any size, any number of seats, gravity,
//! win detection through the last piece, and board strings both ways.
//!
//! This is the referee's board. It favours clarity over raw speed (the
//! searches use [`crate::game::bitboard`]), but every operation is still
//! O(win_length) or O(cols), so a referee never becomes the bottleneck.

use std::fmt;

/// Largest supported number of rows or columns.
pub const MAX_SIDE: usize = 16;
/// Seats a game can have.
pub const MIN_SEATS: usize = 2;
pub const MAX_SEATS: usize = 9;

/// Default letters of the seats in board strings, in seating order.
pub const DEFAULT_LETTERS: [char; MAX_SEATS] = ['R', 'Y', 'B', 'G', 'P', 'O', 'N', 'K', 'W'];

/// Colour names in seating order (RED always moves first).
pub const COLOUR_NAMES: [&str; 9] = [
    "Red", "Yellow", "Blue", "Green", "Purple", "Orange", "Brown", "Black", "White",
];

/// The colour name of `seat` (people read colours, the board shows letters).
pub fn colour_name(seat: usize) -> &'static str {
    COLOUR_NAMES[seat % COLOUR_NAMES.len()]
}

/// Shape of a board and the length of a winning line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BoardConfig {
    pub rows: usize,
    pub cols: usize,
    pub win_length: usize,
}

impl Default for BoardConfig {
    fn default() -> Self {
        BoardConfig {
            rows: 6,
            cols: 7,
            win_length: 4,
        }
    }
}

/// Why a board size or a board string is refused, in the words of docs/rules.md.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("rows must be from 1 to {MAX_SIDE}, got {0}")]
    Rows(usize),
    #[error("cols must be from 1 to {MAX_SIDE}, got {0}")]
    Cols(usize),
    #[error("win_length must be at least 1")]
    NoWinLength,
    #[error(
        "win_length {} cannot fit on a {}×{} board (rows × cols): it must be at most max(rows, cols) = {}",
        .0.win_length, .0.rows, .0.cols, .0.rows.max(.0.cols)
    )]
    WinLength(BoardConfig),
    #[error("expected ROWSxCOLS or ROWSxCOLSxWIN (like 6x7x4), got `{0}`")]
    Compact(String),
    #[error("a {}×{} board string has {} characters, got {}", .0.rows, .0.cols, .0.cells(), .1)]
    Length(BoardConfig, usize),
    #[error("unexpected character `{0}` at index {1}")]
    Letter(char, usize),
    #[error("column {0} has a piece above an empty cell")]
    Floating(usize),
    /// A move string's token that is not a column of the board.
    #[error("`{0}` is not a column from 1 to {1}")]
    NotAColumn(String, usize),
    /// Move `n` (from 1) of a move list is not legal (out of range or full).
    #[error("move {0} (column {1}) is not legal")]
    IllegalMove(usize, usize),
    /// The moves go on after the game has ended.
    #[error("the game is already over after move {0}")]
    OverAfter(usize),
    #[error("opening move {0} (column {1}) is illegal")]
    OpeningIllegal(usize, usize),
    #[error("opening move {0} (column {1}) ends the game")]
    OpeningEnds(usize, usize),
}

impl BoardError {
    /// The scenario key (`rows`, `cols`, `win_length`) a size error is about;
    /// its message starts with that key.
    pub fn key(&self) -> Option<&'static str> {
        match self {
            BoardError::Rows(_) => Some("rows"),
            BoardError::Cols(_) => Some("cols"),
            BoardError::NoWinLength | BoardError::WinLength(_) => Some("win_length"),
            _ => None,
        }
    }
}

/// Lets the shells that still speak in messages use `?` on a board error.
impl From<BoardError> for String {
    fn from(e: BoardError) -> String {
        e.to_string()
    }
}

impl BoardConfig {
    pub fn new(rows: usize, cols: usize, win_length: usize) -> Result<Self, BoardError> {
        let c = BoardConfig { rows, cols, win_length };
        c.validate()?;
        Ok(c)
    }

    /// Checks the rules of docs/rules.md; the message says why a board is refused.
    pub fn validate(&self) -> Result<(), BoardError> {
        if self.rows < 1 || self.rows > MAX_SIDE {
            return Err(BoardError::Rows(self.rows));
        }
        if self.cols < 1 || self.cols > MAX_SIDE {
            return Err(BoardError::Cols(self.cols));
        }
        if self.win_length < 1 {
            return Err(BoardError::NoWinLength);
        }
        let side = self.rows.max(self.cols);
        if self.win_length > side {
            return Err(BoardError::WinLength(*self));
        }
        Ok(())
    }

    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// `6x7x4` style (rows x cols x win_length), as `--board` takes it.
    pub fn parse_compact(s: &str) -> Result<Self, BoardError> {
        let parts: Vec<&str> = s.split(['x', 'X', '×']).collect();
        let nums: Result<Vec<usize>, _> = parts.iter().map(|p| p.trim().parse::<usize>()).collect();
        match nums.as_deref() {
            Ok([r, c]) => BoardConfig::new(*r, *c, 4.min((*r).max(*c))),
            Ok([r, c, w]) => BoardConfig::new(*r, *c, *w),
            _ => Err(BoardError::Compact(s.to_string())),
        }
    }
}

impl fmt::Display for BoardConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}×{} (rows × cols), win {}", self.rows, self.cols, self.win_length)
    }
}

/// Why a column cannot be played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IllegalMove {
    OutOfRange { column: i64, cols: usize },
    ColumnFull { column: usize },
}

impl fmt::Display for IllegalMove {
    /// Columns are shown from 0 (machine numbering); person-facing layers
    /// rephrase with their own numbering.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IllegalMove::OutOfRange { column, cols } => {
                write!(f, "column {column} is out of range (0 to {})", cols - 1)
            }
            IllegalMove::ColumnFull { column } => write!(f, "column {column} is full"),
        }
    }
}

/// A board: cells hold 0 for empty or `seat + 1`. Row 0 is the bottom row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    cfg: BoardConfig,
    cells: Vec<u8>,
    heights: Vec<u8>,
    pieces: usize,
}

/// The four line directions: horizontal, vertical, and both diagonals.
const DIRECTIONS: [(isize, isize); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

impl Board {
    pub fn new(cfg: BoardConfig) -> Self {
        Board {
            cfg,
            cells: vec![0; cfg.cells()],
            heights: vec![0; cfg.cols],
            pieces: 0,
        }
    }

    pub fn config(&self) -> BoardConfig {
        self.cfg
    }
    pub fn rows(&self) -> usize {
        self.cfg.rows
    }
    pub fn cols(&self) -> usize {
        self.cfg.cols
    }
    pub fn pieces(&self) -> usize {
        self.pieces
    }
    pub fn height(&self, col: usize) -> usize {
        self.heights[col] as usize
    }

    /// The seat whose piece is at (row from the bottom, col), if any.
    pub fn cell(&self, row: usize, col: usize) -> Option<usize> {
        match self.cells[row * self.cfg.cols + col] {
            0 => None,
            s => Some(s as usize - 1),
        }
    }

    pub fn is_full(&self) -> bool {
        self.pieces == self.cfg.cells()
    }

    /// Checks a column given in machine numbering (from 0) without playing it.
    pub fn check(&self, column: i64) -> Result<usize, IllegalMove> {
        if column < 0 || column >= self.cfg.cols as i64 {
            return Err(IllegalMove::OutOfRange {
                column,
                cols: self.cfg.cols,
            });
        }
        let c = column as usize;
        if self.heights[c] as usize >= self.cfg.rows {
            return Err(IllegalMove::ColumnFull { column: c });
        }
        Ok(c)
    }

    pub fn is_legal(&self, col: usize) -> bool {
        col < self.cfg.cols && (self.heights[col] as usize) < self.cfg.rows
    }

    pub fn legal_moves(&self) -> Vec<usize> {
        (0..self.cfg.cols).filter(|&c| self.is_legal(c)).collect()
    }

    /// Drops `seat`'s piece into `col`; returns the row it lands on.
    pub fn drop_piece(&mut self, col: usize, seat: usize) -> Result<usize, IllegalMove> {
        let col = self.check(col as i64)?;
        let row = self.heights[col] as usize;
        self.cells[row * self.cfg.cols + col] = seat as u8 + 1;
        self.heights[col] += 1;
        self.pieces += 1;
        Ok(row)
    }

    /// Whether the piece at (row, col) is part of a line of `win_length`.
    pub fn wins_at(&self, row: usize, col: usize) -> bool {
        let Some(seat) = self.cell(row, col) else { return false };
        let need = self.cfg.win_length;
        DIRECTIONS
            .iter()
            .any(|&(dr, dc)| 1 + self.run(row, col, dr, dc, seat) + self.run(row, col, -dr, -dc, seat) >= need)
    }

    /// Count of `seat`'s pieces from (row, col), exclusive, in one direction.
    fn run(&self, row: usize, col: usize, dr: isize, dc: isize, seat: usize) -> usize {
        let (mut r, mut c, mut n) = (row as isize + dr, col as isize + dc, 0);
        while r >= 0
            && c >= 0
            && (r as usize) < self.cfg.rows
            && (c as usize) < self.cfg.cols
            && self.cell(r as usize, c as usize) == Some(seat)
        {
            n += 1;
            r += dr;
            c += dc;
        }
        n
    }

    /// docs/rules.md board string: top row first, `.` empty, one letter per seat.
    pub fn to_board_string(&self, letters: &[char]) -> String {
        let mut s = String::with_capacity(self.cfg.cells());
        for row in (0..self.cfg.rows).rev() {
            for col in 0..self.cfg.cols {
                s.push(match self.cell(row, col) {
                    None => '.',
                    Some(seat) => letters[seat],
                });
            }
        }
        s
    }

    /// Parses a board string; checks its length, letters and gravity (no
    /// piece floats over an empty cell).
    pub fn from_board_string(s: &str, cfg: BoardConfig, letters: &[char]) -> Result<Self, BoardError> {
        let chars: Vec<char> = s.chars().collect();
        if chars.len() != cfg.cells() {
            return Err(BoardError::Length(cfg, chars.len()));
        }
        let mut b = Board::new(cfg);
        for (i, ch) in chars.iter().enumerate() {
            let (top_row, col) = (i / cfg.cols, i % cfg.cols);
            let row = cfg.rows - 1 - top_row;
            if *ch == '.' {
                continue;
            }
            let seat = letters.iter().position(|l| l == ch).ok_or(BoardError::Letter(*ch, i))?;
            b.cells[row * cfg.cols + col] = seat as u8 + 1;
            b.pieces += 1;
        }
        for col in 0..cfg.cols {
            let h = (0..cfg.rows).take_while(|&r| b.cell(r, col).is_some()).count();
            if (h..cfg.rows).any(|r| b.cell(r, col).is_some()) {
                return Err(BoardError::Floating(col));
            }
            b.heights[col] = h as u8;
        }
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_validation() {
        assert!(BoardConfig::new(6, 7, 4).is_ok());
        assert!(BoardConfig::new(4, 4, 5)
            .unwrap_err()
            .to_string()
            .contains("cannot fit"));
        assert!(BoardConfig::new(1, 5, 5).is_ok());
        assert!(BoardConfig::new(0, 5, 1).is_err());
        assert!(BoardConfig::new(17, 5, 1).is_err());
        assert!(BoardConfig::new(16, 16, 16).is_ok());
        assert!(BoardConfig::new(3, 3, 0).is_err());
        assert_eq!(BoardConfig::parse_compact("6x7x4").unwrap(), BoardConfig::default());
    }

    #[test]
    fn gravity_and_full_columns() {
        let mut b = Board::new(BoardConfig::new(2, 3, 2).unwrap());
        assert_eq!(b.drop_piece(1, 0), Ok(0));
        assert_eq!(b.drop_piece(1, 1), Ok(1));
        assert_eq!(b.drop_piece(1, 0), Err(IllegalMove::ColumnFull { column: 1 }));
        assert_eq!(b.check(3), Err(IllegalMove::OutOfRange { column: 3, cols: 3 }));
        assert_eq!(b.check(-1), Err(IllegalMove::OutOfRange { column: -1, cols: 3 }));
        assert_eq!(b.legal_moves(), vec![0, 2]);
    }

    #[test]
    fn wins_in_four_directions() {
        let cfg = BoardConfig::default();
        // horizontal
        let mut b = Board::new(cfg);
        for c in 0..4 {
            b.drop_piece(c, 0).unwrap();
        }
        assert!(b.wins_at(0, 3) && b.wins_at(0, 1));
        // vertical
        let mut b = Board::new(cfg);
        for _ in 0..4 {
            b.drop_piece(2, 1).unwrap();
        }
        assert!(b.wins_at(3, 2));
        // diagonal up-right: stairs
        let b = Board::from_board_string(
            ".......\n.......\n...R...\n..RY...\n.RYY...\nRYYR..."
                .replace('\n', "")
                .as_str(),
            cfg,
            &DEFAULT_LETTERS,
        )
        .unwrap();
        assert!(b.wins_at(3, 3) && b.wins_at(0, 0));
        // diagonal down-right
        let b = Board::from_board_string(
            ".......\n.......\nR......\nYR.....\nYYR....\nYYRR..."
                .replace('\n', "")
                .as_str(),
            cfg,
            &DEFAULT_LETTERS,
        )
        .unwrap();
        assert!(b.wins_at(3, 0) && b.wins_at(0, 3));
        assert!(!b.wins_at(0, 0));
    }

    #[test]
    fn board_strings_round_trip() {
        let cfg = BoardConfig::default();
        let mut b = Board::new(cfg);
        for (i, c) in [3, 3, 2, 4, 0].iter().enumerate() {
            b.drop_piece(*c, i % 2).unwrap();
        }
        let s = b.to_board_string(&DEFAULT_LETTERS);
        assert_eq!(s.len(), 42);
        assert_eq!(&s[35..], "R.RRY..");
        assert_eq!(&s[28..35], "...Y...");
        assert_eq!(Board::from_board_string(&s, cfg, &DEFAULT_LETTERS).unwrap(), b);
        assert!(Board::from_board_string("R", cfg, &DEFAULT_LETTERS).is_err());
        let floating = format!("R{}", ".".repeat(41));
        assert!(Board::from_board_string(&floating, cfg, &DEFAULT_LETTERS)
            .unwrap_err()
            .to_string()
            .contains("above an empty"));
    }
}
