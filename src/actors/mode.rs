//! The one mode runner: every mode (match, tournament, train, serve, join)
//! runs its work in a fresh actix System until it finishes or Ctrl-C
//! arrives, and says how it ended as a `Result`. Only `main` turns that
//! into an exit code, so library code never exits the process.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

/// How a mode (or any command) ended when it did not simply finish; its
/// `Display` is what a person reads on standard error, and
/// [`Error::source`] is the typed error of the layer that failed (none when
/// only a message is known), so `-v` can print the chain and a caller can
/// downcast it.
///
/// `Display` and `source` are written out rather than derived: the derive
/// would make the [`Cause`] wrapper itself the source, which shows the same
/// text again and hides the real error's type from a downcast.
#[derive(Debug, Clone)]
pub enum ModeError {
    /// A bad scenario, usage or input found before anything ran (exit 2).
    Usage(Cause),
    /// A failure while running (exit 1).
    Failed(Cause),
    /// Ctrl-C (exit 130); the message says what was kept.
    Interrupted(String),
}

impl ModeError {
    /// Bad usage caused by `e` (exit 2), said as `e` says it.
    pub fn usage(e: impl Error + Send + Sync + 'static) -> ModeError {
        ModeError::Usage(Cause::new(e))
    }

    /// A failure caused by `e` (exit 1), said as `error: ` and `e`.
    pub fn failed(e: impl Error + Send + Sync + 'static) -> ModeError {
        ModeError::Failed(Cause::new(e))
    }
}

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModeError::Usage(c) => write!(f, "{c}"),
            ModeError::Failed(c) => write!(f, "error: {c}"),
            ModeError::Interrupted(m) => write!(f, "\n{m}"),
        }
    }
}

impl Error for ModeError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            ModeError::Usage(c) | ModeError::Failed(c) => c.error(),
            ModeError::Interrupted(_) => None,
        }
    }
}

/// Two mode errors are equal when they end the same way with the same words
/// (the causes' types are not compared).
impl PartialEq for ModeError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other) && self.to_string() == other.to_string()
    }
}

impl Eq for ModeError {}

impl From<String> for ModeError {
    fn from(m: String) -> Self {
        ModeError::Failed(m.into())
    }
}

/// A scenario that does not load is bad usage, said with its location.
impl From<crate::scenario::ScenarioError> for ModeError {
    fn from(e: crate::scenario::ScenarioError) -> Self {
        ModeError::usage(e)
    }
}

/// What made a mode fail: the typed error of the layer that failed, or only
/// a message where the code that failed has none (shell code). Shared, so a
/// [`ModeError`] stays `Clone`.
#[derive(Debug, Clone)]
pub struct Cause(Inner);

#[derive(Debug, Clone)]
enum Inner {
    Error(Arc<dyn Error + Send + Sync + 'static>),
    Message(String),
}

impl Cause {
    /// The cause `e`.
    pub fn new(e: impl Error + Send + Sync + 'static) -> Cause {
        Cause(Inner::Error(Arc::new(e)))
    }

    /// The typed error, if the cause is one (to walk its chain or downcast it).
    pub fn error(&self) -> Option<&(dyn Error + 'static)> {
        match &self.0 {
            Inner::Error(e) => Some(e.as_ref()),
            Inner::Message(_) => None,
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Inner::Error(e) => write!(f, "{e}"),
            Inner::Message(m) => f.write_str(m),
        }
    }
}

impl From<String> for Cause {
    fn from(m: String) -> Self {
        Cause(Inner::Message(m))
    }
}

impl From<&str> for Cause {
    fn from(m: &str) -> Self {
        Cause(Inner::Message(m.to_string()))
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
    fn the_cause_is_the_source_and_keeps_its_type() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = ModeError::failed(io());
        assert_eq!(e.to_string(), "error: gone");
        let source = e.source().expect("a typed cause");
        assert!(source.downcast_ref::<std::io::Error>().is_some());
        assert_eq!(ModeError::usage(io()).to_string(), "gone");
        assert!(ModeError::Failed("only words".into()).source().is_none());
        assert_ne!(ModeError::usage(io()), ModeError::failed(io()));
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
