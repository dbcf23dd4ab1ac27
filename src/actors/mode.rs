//! The one mode runner: every mode (match, tournament, train, serve, join)
//! runs its work in a fresh actix System until it finishes or Ctrl-C
//! arrives, and says how it ended as a `Result`. Only `main` turns that
//! into an exit code, so library code never exits the process.

use std::future::Future;

/// How a mode (or any command) ended when it did not simply finish; its
/// `Display` is what a person reads on standard error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    /// A bad scenario, usage or input found before anything ran (exit 2).
    #[error("{0}")]
    Usage(String),
    /// A failure while running (exit 1).
    #[error("error: {0}")]
    Failed(String),
    /// Ctrl-C (exit 130); the message says what was kept.
    #[error("\n{0}")]
    Interrupted(String),
}

impl From<String> for ModeError {
    fn from(m: String) -> Self {
        ModeError::Failed(m)
    }
}

/// A scenario that does not load is bad usage, said with its location.
impl From<crate::scenario::ScenarioError> for ModeError {
    fn from(e: crate::scenario::ScenarioError) -> Self {
        ModeError::Usage(e.to_string())
    }
}

/// Runs `work` on a new actix System until it returns or Ctrl-C arrives.
/// On Ctrl-C the result is [`ModeError::Interrupted`] with the message
/// `interrupted` gives (called after the work stopped); the System is then
/// left behind instead of being shut down, since shutting it down waits for
/// busy worker threads (self-play, searches) that the process exit ends anyway.
pub fn run_mode<T>(
    work: impl Future<Output = Result<T, ModeError>>,
    interrupted: impl FnOnce() -> String,
) -> Result<T, ModeError> {
    let sys = actix::System::new();
    let r = sys.block_on(async {
        tokio::select! {
            r = work => Some(r),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    match r {
        Some(r) => r,
        None => {
            std::mem::forget(sys);
            crate::players::external::kill_all_children();
            Err(ModeError::Interrupted(interrupted()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_result_comes_back_unchanged() {
        assert_eq!(run_mode(async { Ok::<_, ModeError>(7) }, String::new), Ok(7));
        let e = run_mode(async { Err::<(), _>(ModeError::Usage("bad".into())) }, String::new);
        assert_eq!(e, Err(ModeError::Usage("bad".into())));
        assert_eq!(ModeError::from("x".to_string()).to_string(), "error: x");
    }

    #[test]
    fn the_work_runs_inside_an_actix_system() {
        let r = run_mode(
            async { Ok::<_, ModeError>(actix::System::try_current().is_some()) },
            String::new,
        );
        assert_eq!(r, Ok(true));
    }
}
