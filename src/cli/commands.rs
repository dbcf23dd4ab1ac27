//! What each command does with its flags: `run`, `web`, `report`,
//! `validate`, `analyze`, `serve`, `join` and `book` call into the library;
//! `bench` goes on in [`super::bench`].

use super::args::{BookWhat, Command, RunFlags};
use super::book;
use c4sim::actors::mode::ModeError;
use c4sim::game::BoardConfig;
use c4sim::scenario::{self, Mode};
use std::path::Path;

/// Runs one command; how it ended becomes the exit code in [`super::exit_code`].
pub(super) fn command(command: Command) -> Result<(), ModeError> {
    match command {
        Command::Run { file, flags } => run(&file, flags),
        Command::Web {
            bind,
            player,
            board,
            seed,
            analysts,
        } => web(bind, &player, &board, seed, analysts),
        Command::Report { file, json } => report(&file, json),
        Command::Validate { file, resolved } => validate(&file, resolved),
        Command::Analyze { player, board, seed } => analyze(&player, &board, seed),
        Command::Bench { what } => super::bench::bench(what),
        Command::Book { what } => book_command(what),
        Command::Serve(args) => match args.web {
            None => c4sim::net::cli::serve(&args),
            Some(bind) => c4sim::run::serve_watched(args.config().map_err(usage)?, bind),
        },
        Command::Join(args) => c4sim::net::cli::join(&args),
    }
}

/// A command's bad argument, said as `error: …` (exit code 2).
pub(super) fn usage(e: impl std::fmt::Display) -> ModeError {
    ModeError::Usage(format!("error: {e}").into())
}

/// `c4sim run FILE`: the library's one entry point does the rest.
fn run(file: &Path, flags: RunFlags) -> Result<(), ModeError> {
    let sc = scenario::load(file)?;
    let opts = c4sim::run::RunOptions {
        json: flags.json,
        fresh: flags.fresh,
        out: flags.out,
        role: flags.role,
        worker: flags.worker,
        shard: flags.shard,
        web: flags.web,
    };
    c4sim::run::run_scenario(sc, &opts).map(drop)
}

/// `c4sim report FILE`: a tournament's report from all its shards.
fn report(file: &Path, json: bool) -> Result<(), ModeError> {
    match scenario::load(file)? {
        sc if sc.mode == Mode::Tournament => c4sim::tournament::shard::report_command(&sc, json),
        _ => Err(ModeError::Usage(
            format!("{}: `c4sim report` takes a `mode: tournament` scenario", file.display()).into(),
        )),
    }
}

/// `c4sim validate FILE`: one line, or the resolved scenario as YAML.
fn validate(file: &Path, resolved: bool) -> Result<(), ModeError> {
    let sc = scenario::load(file)?;
    if resolved {
        print!("{}", scenario::resolved::to_yaml(&sc));
    } else {
        println!(
            "{}: ok — {} mode, {} players, board {}",
            file.display(),
            format!("{:?}", sc.mode).to_lowercase(),
            sc.players.len(),
            sc.board
        );
    }
    Ok(())
}

/// `c4sim book build` and `c4sim book scores`: a failed build is a bad
/// argument (exit code 2), as it always was.
fn book_command(what: BookWhat) -> Result<(), ModeError> {
    match what {
        BookWhat::Build {
            plies,
            openings,
            out,
            run,
        } => {
            let o = book::BookBuildOptions {
                plies,
                openings,
                out,
                run,
            };
            book::build_book(&o, &mut std::io::stderr()).map(drop).map_err(usage)
        }
        BookWhat::Scores {
            plies,
            out,
            from,
            check,
            run,
        } => book::build_scores(plies, &out, from.as_deref(), check, run, &mut std::io::stderr())
            .map(drop)
            .map_err(usage),
    }
}

/// `--player SPEC` and `--board RxCxW` of `web` and `analyze`.
fn player_on_board(player: &str, board: &str) -> Result<(c4sim::players::PlayerSpec, BoardConfig), ModeError> {
    let cfg = BoardConfig::parse_compact(board).map_err(|e| ModeError::Usage(format!("--board: {e}").into()))?;
    let spec = scenario::parse_player_spec(player)?;
    Ok((spec, cfg))
}

/// `c4sim web`: the flags make the one player and board of a `mode: web` run.
fn web(
    bind: std::net::SocketAddr,
    player: &str,
    board: &str,
    seed: u64,
    analysts: Option<usize>,
) -> Result<(), ModeError> {
    let (spec, cfg) = player_on_board(player, board)?;
    let opponent = c4sim::web::play::Opponent {
        spec,
        cfg,
        seed,
        move_time: scenario::DEFAULT_MOVE_TIME,
    };
    c4sim::web::serve_play(bind, opponent, analysts)
}

/// `c4sim analyze`: the player's move on each position read from standard input.
fn analyze(player: &str, board: &str, seed: u64) -> Result<(), ModeError> {
    let (spec, cfg) = player_on_board(player, board)?;
    let mut strategy = c4sim::analyze::analyzer(&spec, seed).map_err(usage)?;
    strategy.fits(cfg).map_err(usage)?;
    c4sim::analyze::run(
        strategy.as_mut(),
        cfg,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
    )
    .map_err(|e| ModeError::Failed(e.to_string().into()))
}
