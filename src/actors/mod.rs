//! The actor shell: referee, players, sinks and the match runner,
//! exchanging the typed messages of [`messages`].

pub mod messages;
pub mod player;
pub mod referee;
pub mod runner;
pub mod sinks;
