//! A person at the terminal: lines from standard input, read on their own
//! thread so the actor loop never blocks on a keyboard.

use crate::game::Answer;
use std::io::BufRead;
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, Mutex};

/// Lines of standard input, shared by every human seat of the run. `None`
/// from the receiver means end of input.
pub type StdinLines = Arc<Mutex<mpsc::UnboundedReceiver<String>>>;

/// The process-wide standard-input reader (started on first use).
pub fn stdin_lines() -> StdinLines {
    static LINES: OnceLock<StdinLines> = OnceLock::new();
    LINES
        .get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            std::thread::Builder::new()
                .name("stdin".into())
                .spawn(move || {
                    let stdin = std::io::stdin();
                    for line in stdin.lock().lines() {
                        match line {
                            Ok(l) => {
                                if tx.send(l).is_err() {
                                    break;
                                }
                            }
                            Err(_) => break,
                        }
                    }
                })
                .expect("spawn stdin reader");
            Arc::new(Mutex::new(rx))
        })
        .clone()
}

/// What a typed line means.
#[derive(Debug, PartialEq, Eq)]
pub enum Typed {
    /// An answer for the referee (columns from 0).
    Answer(Answer),
    /// Nothing typed: ask again without counting it as a move.
    Nothing,
    /// The person gave up (`quit`, `resign`).
    Resign,
}

/// Reads a line as people write it: a column from 1.
pub fn parse_line(line: &str, cols: usize) -> Typed {
    let t = line.trim();
    if t.is_empty() {
        return Typed::Nothing;
    }
    if ["q", "quit", "exit", "resign"].contains(&t.to_ascii_lowercase().as_str()) {
        return Typed::Resign;
    }
    match t.parse::<i64>() {
        Ok(n) => Typed::Answer(Answer::Column(n - 1)),
        Err(_) => {
            let shown: String = t.chars().take(40).collect();
            Typed::Answer(Answer::Malformed(format!(
                "`{shown}` is not a column: type a number from 1 to {cols}"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_people_numbering() {
        assert_eq!(parse_line(" 4\n", 7), Typed::Answer(Answer::Column(3)));
        assert_eq!(parse_line("0", 7), Typed::Answer(Answer::Column(-1)));
        assert_eq!(parse_line("", 7), Typed::Nothing);
        assert_eq!(parse_line("Quit", 7), Typed::Resign);
        assert!(matches!(parse_line("abc", 7), Typed::Answer(Answer::Malformed(m)) if m.contains("1 to 7")));
    }
}
