//! The registry of player kinds and what one player is.
//!
//! A [`PlayerSpec`] is what every player has (its name, its `move_time`) and
//! a [`KindSpec`]: one variant per kind, holding that kind's own spec type,
//! defined in the kind's module with its fields, their defaults
//! ([`Default`]), its keys ([`KindKeys`]) and its builder: `MinimaxSpec` and
//! `MctsSpec` in [`bots`], [`AlphaZeroSpec`], [`SolverSpec`], [`ExternalSpec`]
//! (the `agent` kind has no keys of its own: see [`super::agent`]).
//! What depends on a kind's contents (its defaults, keys, completeness, the
//! bot it builds, whether it fits a board) is a `match` on [`KindSpec`]
//! here, so the compiler names every place a new kind must be handled.
//!
//! [`KINDS`] keeps what is common to every kind: its name (in the order
//! messages list kinds) and how it runs (an in-process bot, a person, a
//! program). Scenario parsing, its error messages ("allowed: …"),
//! `validate --resolved`, `analyze`, the runners and the network client
//! read kinds from here, so adding a kind means its own module (the spec
//! type and its keys), a variant in [`PlayerKind`] and [`KindSpec`], its
//! entry in [`KINDS`], and the arms the compiler then asks for.

use super::agent::AgentError;
use super::alphazero::AlphaZeroError;
use super::alphazero::AlphaZeroSpec;
use super::bots::{self, MctsSpec, MinimaxSpec};
use super::external::ExternalSpec;
use super::keys::{FitError, KeyError, Keyed};
pub use super::keys::{Key, KeyType, KeyValue, KindKeys};
use super::solver::{SolverBotError, SolverSpec};
use super::Strategy;
use crate::game::BoardConfig;
use std::time::Duration;

/// A player kind, the tag of a [`KindSpec`]; [`PlayerKind::info`] is its
/// registry entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerKind {
    Human,
    Leftmost,
    Rightmost,
    Random,
    Invalid,
    Minimax,
    Mcts,
    Alphazero,
    Solver,
    External,
    Agent,
}

/// One player, after `use: NAME` profiles are merged and defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    /// Display name; defaults to the profile name or the kind (made unique
    /// within a scenario by adding " 2", " 3", ...).
    pub name: String,
    /// Overrides `limits.move_time` for this player. Humans default to no limit.
    pub move_time: Option<Duration>,
    /// The kind and its own keys.
    pub kind: KindSpec,
}

/// A player's kind with that kind's keys, each kind's in its own type.
#[derive(Clone, Debug, PartialEq)]
pub enum KindSpec {
    Human,
    Leftmost,
    Rightmost,
    Random,
    Invalid,
    Minimax(MinimaxSpec),
    Mcts(MctsSpec),
    Alphazero(AlphaZeroSpec),
    Solver(SolverSpec),
    External(ExternalSpec),
    /// Plays the agent registered under the player's name ([`agent`]).
    Agent,
}

/// How a kind plays: the player actor wraps each differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunsAs {
    /// A [`Strategy`] inside c4sim.
    Bot,
    /// A person at the terminal.
    Human,
    /// A program speaking docs/external-player.md.
    External,
}

/// Keys every kind takes, besides `use` in scenario entries.
pub const COMMON_KEYS: [&str; 3] = ["name", "kind", "move_time"];

/// A kind's registry entry: what every kind has, whatever its keys.
pub struct KindInfo {
    pub kind: PlayerKind,
    pub name: &'static str,
    pub runs_as: RunsAs,
}

/// Every kind, in the order messages list them.
pub static KINDS: [KindInfo; 11] = [
    KindInfo {
        kind: PlayerKind::Human,
        name: "human",
        runs_as: RunsAs::Human,
    },
    KindInfo {
        kind: PlayerKind::Leftmost,
        name: "leftmost",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::Rightmost,
        name: "rightmost",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::Random,
        name: "random",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::Invalid,
        name: "invalid",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::Minimax,
        name: "minimax",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::Mcts,
        name: "mcts",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::Alphazero,
        name: "alphazero",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::Solver,
        name: "solver",
        runs_as: RunsAs::Bot,
    },
    KindInfo {
        kind: PlayerKind::External,
        name: "external",
        runs_as: RunsAs::External,
    },
    KindInfo {
        kind: PlayerKind::Agent,
        name: "agent",
        runs_as: RunsAs::Bot,
    },
];

impl PlayerKind {
    /// Every kind's name, in the order of [`KINDS`].
    pub fn names() -> Vec<&'static str> {
        KINDS.iter().map(|k| k.name).collect()
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<PlayerKind> {
        KINDS.iter().find(|k| k.name == name).map(|k| k.kind)
    }

    pub fn info(self) -> &'static KindInfo {
        KINDS
            .iter()
            .find(|k| k.kind == self)
            .expect("every kind has a registry entry")
    }

    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    pub fn runs_as(self) -> RunsAs {
        self.info().runs_as
    }
}

impl KindInfo {
    /// This kind's keys beyond [`COMMON_KEYS`] and their types, in order.
    pub fn keys(&self) -> Vec<(&'static str, KeyType)> {
        KindSpec::of(self.kind).keyed().map_or_else(Vec::new, |k| k.keys())
    }

    /// The type of the kind-specific key named `name`.
    pub fn key(&self, name: &str) -> Option<KeyType> {
        self.keys().into_iter().find(|(k, _)| *k == name).map(|(_, ty)| ty)
    }

    /// Every key a player of this kind may have (for messages), in the
    /// order: name, kind, its own keys, move_time.
    pub fn all_keys(&self) -> Vec<&'static str> {
        let mut v = vec!["name", "kind"];
        v.extend(self.keys().into_iter().map(|(k, _)| k));
        v.push("move_time");
        v
    }
}

/// Every key of any kind, common ones first (for the keys a scenario entry
/// may hold at all), without repeats.
pub fn every_key() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = vec!["name", "kind"];
    for (k, _) in KINDS.iter().flat_map(|k| k.keys()) {
        if !v.contains(&k) {
            v.push(k);
        }
    }
    v.push("move_time");
    v
}

/// The kinds that take key `name` (empty for common keys and unknown ones).
pub fn kinds_with_key(name: &str) -> Vec<&'static str> {
    KINDS.iter().filter(|k| k.key(name).is_some()).map(|k| k.name).collect()
}

/// The one `match` from a spec to its kind's keys, for `&` and `&mut` alike.
macro_rules! keyed_arms {
    ($spec:expr) => {
        match $spec {
            KindSpec::Human
            | KindSpec::Leftmost
            | KindSpec::Rightmost
            | KindSpec::Random
            | KindSpec::Invalid
            | KindSpec::Agent => None,
            KindSpec::Minimax(s) => Some(s),
            KindSpec::Mcts(s) => Some(s),
            KindSpec::Alphazero(s) => Some(s),
            KindSpec::Solver(s) => Some(s),
            KindSpec::External(s) => Some(s),
        }
    };
}

impl KindSpec {
    /// A `kind` with every default of its keys.
    pub fn of(kind: PlayerKind) -> KindSpec {
        match kind {
            PlayerKind::Human => KindSpec::Human,
            PlayerKind::Leftmost => KindSpec::Leftmost,
            PlayerKind::Rightmost => KindSpec::Rightmost,
            PlayerKind::Random => KindSpec::Random,
            PlayerKind::Invalid => KindSpec::Invalid,
            PlayerKind::Minimax => KindSpec::Minimax(MinimaxSpec::default()),
            PlayerKind::Mcts => KindSpec::Mcts(MctsSpec::default()),
            PlayerKind::Alphazero => KindSpec::Alphazero(AlphaZeroSpec::default()),
            PlayerKind::Solver => KindSpec::Solver(SolverSpec::default()),
            PlayerKind::External => KindSpec::External(ExternalSpec::default()),
            PlayerKind::Agent => KindSpec::Agent,
        }
    }

    /// The kind, without its keys.
    pub fn kind(&self) -> PlayerKind {
        match self {
            KindSpec::Human => PlayerKind::Human,
            KindSpec::Leftmost => PlayerKind::Leftmost,
            KindSpec::Rightmost => PlayerKind::Rightmost,
            KindSpec::Random => PlayerKind::Random,
            KindSpec::Invalid => PlayerKind::Invalid,
            KindSpec::Minimax(_) => PlayerKind::Minimax,
            KindSpec::Mcts(_) => PlayerKind::Mcts,
            KindSpec::Alphazero(_) => PlayerKind::Alphazero,
            KindSpec::Solver(_) => PlayerKind::Solver,
            KindSpec::External(_) => PlayerKind::External,
            KindSpec::Agent => PlayerKind::Agent,
        }
    }

    /// The kind's name.
    pub fn as_str(&self) -> &'static str {
        self.kind().as_str()
    }

    /// How the kind plays.
    pub fn runs_as(&self) -> RunsAs {
        self.kind().runs_as()
    }

    /// The kind's own keys (`None`: it has none).
    fn keyed(&self) -> Option<&dyn Keyed> {
        keyed_arms!(self)
    }

    fn keyed_mut(&mut self) -> Option<&mut dyn Keyed> {
        keyed_arms!(self)
    }

    /// Stores `v`, of the type [`KindInfo::key`] gives, in key `name`; a
    /// name this kind does not take is ignored.
    pub fn set(&mut self, name: &str, v: KeyValue) {
        if let Some(k) = self.keyed_mut() {
            k.set(name, v);
        }
    }

    /// The kind-specific keys in effect and their values (for `--resolved`).
    pub fn key_values(&self) -> Vec<(&'static str, KeyValue)> {
        self.keyed().map_or_else(Vec::new, |k| k.values())
    }

    /// Checks what a key cannot check alone (an external player needs a
    /// command); the error completes "player 2 …".
    pub fn complete(&self) -> Result<(), KeyError> {
        self.keyed().map_or(Ok(()), |k| k.complete())
    }
}

impl PlayerSpec {
    /// A player of `kind` with every default, named after its kind.
    pub fn of_kind(kind: PlayerKind) -> PlayerSpec {
        PlayerSpec {
            name: kind.as_str().to_string(),
            move_time: None,
            kind: KindSpec::of(kind),
        }
    }

    /// The kind-specific keys in effect and their values (for `--resolved`).
    pub fn key_values(&self) -> Vec<(&'static str, KeyValue)> {
        self.kind.key_values()
    }
}

/// Why a player cannot be built or cannot play on the board.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A kind that does I/O (human, external) has no strategy to build.
    #[error("`{kind}` players are not in-process bots")]
    NotABot { kind: &'static str },
    /// Player `player` (its name) cannot be built or cannot play.
    #[error("player `{player}`: {source}")]
    Player {
        player: String,
        /// Boxed: a `Result` carrying this error stays small on the happy path.
        #[source]
        source: Box<KindError>,
    },
}

/// What went wrong with one player, by the part that failed.
#[derive(Debug, thiserror::Error)]
pub enum KindError {
    /// It cannot play on the board (checked before any game).
    #[error(transparent)]
    Fit(#[from] FitError),
    #[error(transparent)]
    Alphazero(#[from] AlphaZeroError),
    #[error(transparent)]
    Solver(#[from] SolverBotError),
    /// No agent of its name was given.
    #[error(transparent)]
    Agent(#[from] AgentError),
}

/// Builds the strategy of an in-process kind. Kinds that do I/O (human,
/// external) have none, and a model that cannot be loaded says why.
pub fn build_strategy(spec: &PlayerSpec, seed: u64) -> Result<Box<dyn Strategy>, BuildError> {
    let built: Result<Box<dyn Strategy>, KindError> = match &spec.kind {
        KindSpec::Human | KindSpec::External(_) => {
            return Err(BuildError::NotABot {
                kind: spec.kind.as_str(),
            })
        }
        KindSpec::Leftmost => Ok(Box::new(bots::Leftmost)),
        KindSpec::Rightmost => Ok(Box::new(bots::Rightmost)),
        KindSpec::Random => Ok(Box::new(bots::RandomBot::new(seed))),
        KindSpec::Invalid => Ok(Box::new(bots::InvalidBot)),
        KindSpec::Minimax(s) => Ok(Box::new(s.build())),
        KindSpec::Mcts(s) => Ok(Box::new(s.build(seed))),
        KindSpec::Alphazero(s) => s
            .build()
            .map(|b| Box::new(b) as Box<dyn Strategy>)
            .map_err(KindError::from),
        KindSpec::Solver(s) => s
            .build()
            .map(|b| Box::new(b) as Box<dyn Strategy>)
            .map_err(KindError::from),
        KindSpec::Agent => super::agent::AgentPlayer::new(&spec.name)
            .map(|a| Box::new(a) as Box<dyn Strategy>)
            .map_err(KindError::from),
    };
    built.map_err(|source| BuildError::Player {
        player: spec.name.clone(),
        source: Box::new(source),
    })
}

/// Refuses, before any game starts and without building the player, one
/// that cannot play on `cfg` (an AlphaZero model trained for another board
/// size, read from its `meta.json`; a board too large for the solver).
pub fn check_fits(spec: &PlayerSpec, cfg: BoardConfig) -> Result<(), BuildError> {
    let fits = spec.kind.keyed().map_or(Ok(()), |k| k.fits(cfg));
    fits.map_err(|e| BuildError::Player {
        player: spec.name.clone(),
        source: Box::new(e.into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_entry_and_its_own_name() {
        for k in &KINDS {
            assert_eq!(k.kind.info().name, k.name);
            assert_eq!(PlayerKind::from_name(k.name), Some(k.kind));
            assert_eq!(PlayerSpec::of_kind(k.kind).name, k.name);
            assert_eq!(KindSpec::of(k.kind).kind(), k.kind);
        }
        assert_eq!(PlayerKind::from_name("minmax"), None);
    }

    #[test]
    fn keys_per_kind_and_defaults() {
        assert_eq!(PlayerKind::Random.info().all_keys(), ["name", "kind", "move_time"]);
        assert_eq!(
            PlayerKind::External.info().all_keys(),
            ["name", "kind", "command", "cwd", "env", "move_time"]
        );
        assert_eq!(kinds_with_key("simulations"), ["mcts", "alphazero"]);
        assert_eq!(
            KindSpec::of(PlayerKind::Mcts),
            KindSpec::Mcts(MctsSpec { simulations: 1000 })
        );
        let KindSpec::Alphazero(az) = KindSpec::of(PlayerKind::Alphazero) else {
            panic!("an alphazero spec")
        };
        assert_eq!((az.simulations, az.device.as_str()), (800, "auto"));
        assert_eq!(
            PlayerSpec::of_kind(PlayerKind::Minimax).key_values(),
            [("depth", KeyValue::Count(4))]
        );
        assert!(every_key().contains(&"threads"));
    }

    #[test]
    fn node_budgets_are_u64_end_to_end() {
        assert_eq!(PlayerKind::Solver.info().key("nodes"), Some(KeyType::Count64(1)));
        assert_eq!(PlayerKind::Alphazero.info().key("solver"), Some(KeyType::Count64(1)));
        let big = u64::from(u32::MAX) + 1;
        let mut s = KindSpec::of(PlayerKind::Solver);
        s.set("nodes", KeyValue::Count64(big));
        assert!(s.key_values().contains(&("nodes", KeyValue::Count64(big))));
        let mut az = KindSpec::of(PlayerKind::Alphazero);
        az.set("solver", KeyValue::Count64(big));
        assert!(az.key_values().contains(&("solver", KeyValue::Count64(big))));
    }

    #[test]
    fn only_bots_build_and_a_missing_model_is_explained() {
        for k in &KINDS {
            let built = build_strategy(&PlayerSpec::of_kind(k.kind), 0);
            let not_a_bot = built.err().is_some_and(|e| e.to_string().contains("not in-process"));
            assert_eq!(not_a_bot, k.runs_as != RunsAs::Bot, "{}", k.name);
        }
        assert!(build_strategy(&PlayerSpec::of_kind(PlayerKind::Leftmost), 0).is_ok());
        let e = build_strategy(&PlayerSpec::of_kind(PlayerKind::Human), 0)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not in-process"), "{e}");
        let az = PlayerSpec::of_kind(PlayerKind::Alphazero);
        let e = check_fits(&az, BoardConfig::default()).unwrap_err().to_string();
        assert!(e.contains("no `model`"), "{e}");
    }
}
