//! Tournaments: schedules, concurrency, ratings, reports, resume.

use crate::scenario::Scenario;

/// `mode: tournament`. Returns the process exit code.
pub fn run_tournament(sc: &Scenario, _json: bool) -> u8 {
    eprintln!("{}: mode `tournament` is not available in this build yet", sc.path.display());
    2
}
