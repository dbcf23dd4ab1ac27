//! The `c4sim` command line, binary only: clap's definitions ([`args`]),
//! what each command does with them ([`commands`], [`bench`], [`book`]),
//! and the one place that prints how a command ended and picks the exit
//! code ([`exit_code`]). Everything else is the library's.

mod args;
mod bench;
mod book;
mod commands;

use c4sim::actors::mode::ModeError;
use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// Parses the command line, runs the command, and turns how it ended into
/// the process exit code.
pub fn main() -> ExitCode {
    let cli = args::Cli::parse();
    init_logs(cli.verbose);
    let code = exit_code(commands::command(cli.command), cli.verbose);
    c4sim::players::external::kill_all_children();
    let _ = std::io::stdout().flush();
    ExitCode::from(code)
}

fn init_logs(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// The one place that turns how a command ended into the process exit
/// code: 0 done, 1 runtime error, 2 bad scenario or usage, 130
/// interrupted. The error goes to standard error; with `-v`, followed by
/// its causes, a `caused by: …` line each.
fn exit_code(r: Result<(), ModeError>, verbose: u8) -> u8 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprint!("{}", report(&e, verbose > 0));
            match e {
                ModeError::Usage(_) => 2,
                ModeError::Failed(_) => 1,
                ModeError::Interrupted(_) => 130,
            }
        }
    }
}

/// An error as printed: its message, then (when `chain`) each
/// [`std::error::Error::source`] below it. A cause whose whole text the
/// line above already ends with (a [`ModeError`] shows its cause's text, a
/// wrapper often quotes its source) is not printed again: each `caused by:`
/// line says something new.
fn report(e: &dyn std::error::Error, chain: bool) -> String {
    let mut last = e.to_string();
    let mut text = format!("{last}\n");
    let mut cause = e.source();
    while let (true, Some(c)) = (chain, cause) {
        let said = c.to_string();
        if !last.ends_with(&said) {
            text.push_str(&format!("caused by: {said}\n"));
        }
        last = said;
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn the_chain_only_with_verbose() {
        let e = Outer(std::io::Error::other("inner"));
        assert_eq!(report(&e, false), "outer\n");
        assert_eq!(report(&e, true), "outer\ncaused by: inner\n");
        // A mode error says its cause's text: the chain starts below it.
        let m = ModeError::failed(e);
        assert_eq!(report(&m, true), "error: outer\ncaused by: inner\n");
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(Ok(()), 0), 0);
        assert_eq!(exit_code(Err(ModeError::Usage("u".into())), 0), 2);
        assert_eq!(exit_code(Err(ModeError::Failed("f".into())), 1), 1);
        assert_eq!(exit_code(Err(ModeError::Interrupted("i".into())), 0), 130);
    }
}
