//! `c4sim web` and `mode: web`: play against any player kind in a browser,
//! and watch a running tournament (`c4sim run FILE --web ADDR`) or the
//! lobby server's matches (`c4sim serve --web ADDR`) there. See docs/web.md.
//!
//! The page is one embedded HTML/CSS/JS file set talking JSON over a
//! WebSocket ([`proto`]). The browser is one more seat at the one referee
//! ([`play`]); what pages watch comes from the referees' own events
//! ([`watch`]). Pure parts ([`proto`], [`view`], the watch state) are
//! tested beside their code; tests/web.rs and tests/web_browser.rs test the
//! running server over loopback and in headless Chromium.

pub mod analysis;
pub mod frames;
pub mod play;
pub mod progress;
pub mod proto;
pub mod server;
pub mod view;
pub mod watch;

use crate::actors::messages::GameEvent;
use crate::actors::mode::{run_mode, ModeError};
use crate::scenario::Scenario;
use actix::Recipient;
use play::{Opponent, PlayHub};
use std::io::Write;
use std::net::SocketAddr;
use watch::WatchHub;

pub use crate::scenario::web::{DEFAULT_BIND, DEFAULT_PLAYER};

/// Why the page cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("cannot listen on {bind}: {source}")]
    Listen { bind: SocketAddr, source: std::io::Error },
    /// The page's thread could not start.
    #[error("{0}")]
    Thread(#[source] std::io::Error),
    /// The page's thread ended before it said where it listens.
    #[error("the web server did not start")]
    NotStarted,
    /// The server stopped with an error while serving.
    #[error("{0}")]
    Serve(#[source] std::io::Error),
    #[error("the page's opponent cannot be a `human` player: the person is on the page")]
    HumanOpponent,
    #[error("`mode: web` needs one player")]
    NoPlayer,
}

/// The server's player for a scenario: its one player entry, on its board.
pub fn opponent_of(sc: &Scenario) -> Option<Opponent> {
    sc.players.first().map(|spec| Opponent {
        spec: spec.clone(),
        cfg: sc.board,
        seed: sc.seed,
        move_time: sc.limits.move_time,
    })
}

/// The shipped profiles a side can also be given on the page, beside the
/// server's own player: those that load here (a checkout's `players/`) and
/// fit `cfg`, and the solver at each of its levels.
pub fn shipped_players(cfg: crate::game::BoardConfig) -> Vec<crate::players::PlayerSpec> {
    use crate::players::{check_fits, KindSpec};
    let mut out = Vec::new();
    for name in ["alphazero", "solver", "minimax8", "mcts", "random"] {
        let Ok(spec) = crate::scenario::parse_player_spec(name) else {
            continue;
        };
        if check_fits(&spec, cfg).is_err() {
            continue;
        }
        out.push(spec.clone());
        if let KindSpec::Solver(s) = &spec.kind {
            for level in &crate::players::solver::LEVELS[1..] {
                let mut weaker = spec.clone();
                weaker.name = format!("{} ({level})", spec.name);
                weaker.kind = KindSpec::Solver(crate::players::solver::SolverSpec {
                    level: level.to_string(),
                    ..s.clone()
                });
                out.push(weaker);
            }
        }
    }
    out
}

/// Serves the page on `bind` and plays `opponent` there until Ctrl-C, with
/// at most `analysts` analyses at once (default [`play::default_analysts`]).
/// The opponent is built once first, so a missing model or a board it
/// cannot play is said before anything is served.
pub fn serve_play(bind: SocketAddr, opponent: Opponent, analysts: Option<usize>) -> Result<(), ModeError> {
    use crate::players::kinds::RunsAs;
    crate::players::check_fits(&opponent.spec, opponent.cfg).map_err(ModeError::usage)?;
    match opponent.spec.kind.runs_as() {
        RunsAs::Human => return Err(ModeError::usage(WebError::HumanOpponent)),
        RunsAs::Bot => {
            crate::players::build_strategy(&opponent.spec, 0).map_err(ModeError::usage)?;
        }
        RunsAs::External => {}
    }
    let others = shipped_players(opponent.cfg);
    run_mode(
        async move {
            let title = format!("Play {}", opponent.spec.name);
            let s = server::start(
                bind,
                PlayHub::new(Some(opponent))
                    .with_others(others)
                    .with_analysts(analysts.unwrap_or_else(play::default_analysts)),
                WatchHub::new(None, "tournament"),
                title,
            )
            .map_err(|source| ModeError::failed(WebError::Listen { bind, source }))?;
            println!("c4sim web: open http://{}/ in a browser (Ctrl-C stops)", s.addr);
            let _ = std::io::stdout().flush();
            s.server.await.map_err(|e| ModeError::failed(WebError::Serve(e)))
        },
        || "Stopped.".into(),
    )
}

/// `mode: web`.
pub fn run_web(sc: &Scenario) -> Result<(), ModeError> {
    let bind = sc.web.clone().unwrap_or_default().bind;
    let opponent = opponent_of(sc).ok_or_else(|| ModeError::usage(WebError::NoPlayer))?;
    serve_play(bind, opponent, None)
}

/// Starts the page on its own thread (its own actix System), for a run
/// that has its own System (a tournament, the lobby server), and returns
/// where it listens and the sink its referees' events go to. `kind` is
/// `tournament` or `lobby`; `opponent`, when given, can also be played.
pub fn watch_in_thread(
    bind: SocketAddr,
    title: String,
    kind: &'static str,
    opponent: Option<Opponent>,
) -> Result<(SocketAddr, Recipient<GameEvent>), WebError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("c4sim-web".into())
        .spawn(move || {
            let sys = actix::System::new();
            sys.block_on(async move {
                let hub = WatchHub::new(Some(title.clone()), kind);
                match server::start(bind, PlayHub::new(opponent), hub, title) {
                    Ok(s) => {
                        let _ = tx.send(Ok((s.addr, s.watch.recipient())));
                        let _ = s.server.await;
                    }
                    Err(source) => {
                        let _ = tx.send(Err(WebError::Listen { bind, source }));
                    }
                }
            });
        })
        .map_err(WebError::Thread)?;
    rx.recv().map_err(|_| WebError::NotStarted)?
}
