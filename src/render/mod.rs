//! The three terminal looks of docs/rules.md as pure functions from game state to
//! text. The renderer actor only decides when to print.

use crate::game::{colour_name, Board, EndReason, Outcome, Refusal};

/// `render:` — the terminal look of docs/rules.md (`none`: results only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderStyle {
    Emoji,
    Fullwidth,
    Ascii,
    None,
}

/// `color: auto | always | never` — whether emoji/colour are used when the
/// output is not a terminal or NO_COLOR is set (`auto` respects both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

const EMOJI: [&str; 9] = ["🔴", "🟡", "🔵", "🟢", "🟣", "🟠", "🟤", "⚫", "⬜"];
const EMOJI_EMPTY: &str = "⚪";
const ASCII_TWO: [char; 2] = ['X', 'O'];
const ASCII_MANY: [char; 9] = ['X', 'O', 'B', 'G', 'P', 'A', 'N', 'K', 'W'];

/// The look actually used: emoji falls back to ascii where the output is
/// not a terminal or NO_COLOR is set, unless `color: always`.
pub fn resolve(style: RenderStyle, color: ColorChoice, is_terminal: bool, no_color: bool) -> RenderStyle {
    match (style, color) {
        (RenderStyle::Emoji, ColorChoice::Never) => RenderStyle::Ascii,
        (RenderStyle::Emoji, ColorChoice::Auto) if !is_terminal || no_color => RenderStyle::Ascii,
        (s, _) => s,
    }
}

/// Draws boards and game messages in one style.
#[derive(Clone, Copy, Debug)]
pub struct Painter {
    pub style: RenderStyle,
    pub seats: usize,
}

impl Painter {
    pub fn new(style: RenderStyle, seats: usize) -> Self {
        Painter { style, seats }
    }

    /// The piece of a seat as this look draws it.
    pub fn piece(&self, seat: usize) -> String {
        match self.style {
            RenderStyle::Emoji => EMOJI[seat].to_string(),
            RenderStyle::Fullwidth => fullwidth(self.ascii_piece(seat)).to_string(),
            _ => self.ascii_piece(seat).to_string(),
        }
    }

    fn ascii_piece(&self, seat: usize) -> char {
        if self.seats <= 2 {
            ASCII_TWO[seat]
        } else {
            ASCII_MANY[seat]
        }
    }

    /// "🔴 Red (Deep)" — colour, then the player's name.
    pub fn seat_label(&self, seat: usize, name: &str) -> String {
        format!("{} {} ({name})", self.piece(seat), colour_name(seat))
    }

    /// The board with column labels above it that match what a person types.
    pub fn board(&self, board: &Board) -> String {
        let (rows, cols) = (board.rows(), board.cols());
        let mut s = String::new();
        match self.style {
            RenderStyle::Emoji => {
                s.push_str("  ");
                for c in 1..=cols {
                    s.push_str(&format!("{c:<3}"));
                }
                s.push('\n');
                let bar = "━".repeat(cols * 3 + 1);
                s.push_str(&format!("┏{bar}┓\n"));
                for r in (0..rows).rev() {
                    s.push_str("┃ ");
                    for c in 0..cols {
                        s.push_str(match board.cell(r, c) {
                            None => EMOJI_EMPTY,
                            Some(seat) => EMOJI[seat],
                        });
                        s.push(' ');
                    }
                    s.push_str("┃\n");
                }
                s.push_str(&format!("┗{bar}┛\n"));
            }
            RenderStyle::Fullwidth => {
                s.push('　');
                for c in 1..=cols {
                    s.push_str(&fullwidth_number(c));
                    s.push('　');
                }
                s.push('\n');
                let sep: String = format!("＋{}\n", "－＋".repeat(cols));
                s.push_str(&sep);
                for r in (0..rows).rev() {
                    s.push('｜');
                    for c in 0..cols {
                        match board.cell(r, c) {
                            None => s.push('　'),
                            Some(seat) => s.push(fullwidth(self.ascii_piece(seat))),
                        }
                        s.push('｜');
                    }
                    s.push('\n');
                    s.push_str(&sep);
                }
            }
            _ => {
                for c in 1..=cols {
                    s.push_str(&format!("  {c:<2}"));
                }
                s.push('\n');
                for r in (0..rows).rev() {
                    s.push('|');
                    for c in 0..cols {
                        let ch = board.cell(r, c).map_or('.', |seat| self.ascii_piece(seat));
                        s.push_str(&format!(" {ch} |"));
                    }
                    s.push('\n');
                }
                s.push('+');
                s.push_str(&"---+".repeat(cols));
                s.push('\n');
            }
        }
        s
    }

    pub fn game_intro(&self, game: u64, games: u64, names: &[String], opening: &[usize]) -> String {
        let mut s = if games > 1 {
            format!("Game {game} of {games}: ")
        } else {
            String::new()
        };
        let seats: Vec<String> = names.iter().enumerate().map(|(i, n)| self.seat_label(i, n)).collect();
        s.push_str(&seats.join(" vs "));
        s.push('\n');
        if !opening.is_empty() {
            let cols: Vec<String> = opening.iter().map(|c| (c + 1).to_string()).collect();
            s.push_str(&format!("Opening: {}\n", cols.join(" ")));
        }
        s.push_str(&format!("Game started! {} goes first\n", colour_name(0)));
        s
    }

    pub fn move_line(&self, number: usize, seat: usize, name: &str, col: usize) -> String {
        format!(
            "Move {number} — {} played column {}",
            self.seat_label(seat, name),
            col + 1
        )
    }

    /// The mark before a player's note on its move.
    pub fn thought_mark(&self) -> &'static str {
        if self.style == RenderStyle::Emoji {
            "💭"
        } else {
            "~"
        }
    }

    pub fn next_line(&self, seat: usize, name: &str) -> String {
        format!("Next: {}'s turn", self.seat_label(seat, name))
    }

    pub fn illegal_line(&self, seat: usize, name: &str, why: &Refusal, tries_left: u32) -> String {
        let left = match tries_left {
            0 => "no tries left".to_string(),
            1 => "1 try left".to_string(),
            n => format!("{n} tries left"),
        };
        format!("✗ {}: {} — {left}", self.seat_label(seat, name), why.describe(1))
    }

    pub fn out_line(&self, seat: usize, name: &str, reason: EndReason, resigned: bool) -> String {
        format!(
            "{} is out: {}",
            self.seat_label(seat, name),
            out_words(reason, resigned)
        )
    }

    pub fn game_over(&self, outcome: &Outcome, names: &[String], moves: usize) -> String {
        match outcome.winner {
            None => "Game over! It's a draw — the board is full!".to_string(),
            Some(w) if outcome.reason == EndReason::Win => {
                format!("Game over! {} wins in {moves} moves!", self.seat_label(w, &names[w]))
            }
            Some(w) => {
                let loser = outcome.eliminated.last().map(|(s, _)| *s).unwrap_or(w);
                format!(
                    "Game over! {} wins — {} {} ({})",
                    self.seat_label(w, &names[w]),
                    self.seat_label(loser, &names[loser]),
                    out_words(outcome.reason, outcome.resigned.contains(&loser)),
                    outcome.reason
                )
            }
        }
    }
}

/// Why a seat went out, in words: a resignation says so (its reason is
/// FORFEIT, which otherwise means the player could not move).
pub fn out_words(r: EndReason, resigned: bool) -> &'static str {
    if resigned {
        "resigned"
    } else {
        reason_words(r)
    }
}

/// What an end reason means, in words.
pub fn reason_words(r: EndReason) -> &'static str {
    match r {
        EndReason::Win => "made a line",
        EndReason::Tie => "filled the board",
        EndReason::TooManyInvalid => "made too many illegal moves",
        EndReason::Timeout => "ran out of time",
        EndReason::Forfeit => "could not move (gone)",
    }
}

fn fullwidth(c: char) -> char {
    if c.is_ascii_graphic() {
        char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c)
    } else {
        c
    }
}

/// One full-width cell for a column label: a full-width digit below 10,
/// two ASCII digits (the same width) from 10.
fn fullwidth_number(n: usize) -> String {
    if n < 10 {
        fullwidth(char::from_digit(n as u32, 10).unwrap_or('?')).to_string()
    } else {
        format!("{n:<2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::BoardConfig;

    fn sample() -> Board {
        let mut b = Board::new(BoardConfig::default());
        b.drop_piece(3, 0).unwrap();
        b.drop_piece(3, 1).unwrap();
        b
    }

    #[test]
    fn ascii_board() {
        let s = Painter::new(RenderStyle::Ascii, 2).board(&sample());
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "  1   2   3   4   5   6   7 ");
        assert_eq!(lines[5], "| . | . | . | O | . | . | . |");
        assert_eq!(lines[6], "| . | . | . | X | . | . | . |");
        assert_eq!(lines[7], "+---+---+---+---+---+---+---+");
    }

    #[test]
    fn emoji_and_fullwidth_boards() {
        let s = Painter::new(RenderStyle::Emoji, 2).board(&sample());
        assert!(s.starts_with("  1  2  3  4  5  6  7"));
        assert!(s.contains("┃ ⚪ ⚪ ⚪ 🔴 ⚪ ⚪ ⚪ ┃"));
        let f = Painter::new(RenderStyle::Fullwidth, 2).board(&sample());
        assert!(f.starts_with("　１　２　３"));
        assert!(f.contains("｜　｜　｜　｜Ｘ｜"));
        assert!(f.contains("＋－＋－＋"));
    }

    #[test]
    fn fallback_rules() {
        use ColorChoice::*;
        assert_eq!(resolve(RenderStyle::Emoji, Auto, false, false), RenderStyle::Ascii);
        assert_eq!(resolve(RenderStyle::Emoji, Auto, true, true), RenderStyle::Ascii);
        assert_eq!(resolve(RenderStyle::Emoji, Auto, true, false), RenderStyle::Emoji);
        assert_eq!(resolve(RenderStyle::Emoji, Always, false, true), RenderStyle::Emoji);
        assert_eq!(
            resolve(RenderStyle::Fullwidth, Auto, false, false),
            RenderStyle::Fullwidth
        );
    }

    #[test]
    fn messages() {
        let look = Painter::new(RenderStyle::Emoji, 2);
        let names = vec!["A".to_string(), "B".to_string()];
        assert_eq!(look.move_line(4, 0, "A", 3), "Move 4 — 🔴 Red (A) played column 4");
        assert_eq!(look.next_line(1, "B"), "Next: 🟡 Yellow (B)'s turn");
        let win = Outcome {
            winner: Some(0),
            reason: EndReason::Win,
            eliminated: vec![],
            resigned: vec![],
        };
        assert_eq!(
            look.game_over(&win, &names, 7),
            "Game over! 🔴 Red (A) wins in 7 moves!"
        );
        let resigned = Outcome {
            winner: Some(1),
            reason: EndReason::Forfeit,
            eliminated: vec![(0, EndReason::Forfeit)],
            resigned: vec![0],
        };
        assert_eq!(
            look.game_over(&resigned, &names, 3),
            "Game over! 🟡 Yellow (B) wins — 🔴 Red (A) resigned (FORFEIT)"
        );
        let crashed = Outcome {
            resigned: vec![],
            ..resigned
        };
        assert_eq!(
            look.game_over(&crashed, &names, 3),
            "Game over! 🟡 Yellow (B) wins — 🔴 Red (A) could not move (gone) (FORFEIT)"
        );
        assert_eq!(
            look.out_line(2, "C", EndReason::Forfeit, true),
            "🔵 Blue (C) is out: resigned"
        );
        let tie = Outcome {
            winner: None,
            reason: EndReason::Tie,
            eliminated: vec![],
            resigned: vec![],
        };
        assert_eq!(
            look.game_over(&tie, &names, 42),
            "Game over! It's a draw — the board is full!"
        );
        assert!(look
            .game_intro(1, 1, &names, &[])
            .contains("Game started! Red goes first"));
    }
}
