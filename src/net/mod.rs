//! Network play: the lobby protocol codec, the server, and clients.

use crate::scenario::Scenario;

/// `mode: serve`. Returns the process exit code.
pub fn run_serve(sc: &Scenario, _json: bool) -> u8 {
    eprintln!("{}: mode `serve` is not available in this build yet", sc.path.display());
    2
}

/// `mode: join`. Returns the process exit code.
pub fn run_join(sc: &Scenario, _json: bool) -> u8 {
    eprintln!("{}: mode `join` is not available in this build yet", sc.path.display());
    2
}
