//! The actor shell: referee, players, sinks, the match runner and the
//! mode runner every mode runs in,
//! exchanging the typed messages of [`messages`].

pub mod messages;
pub mod mode;
pub mod player;
pub mod referee;
pub mod runner;
pub mod sinks;
