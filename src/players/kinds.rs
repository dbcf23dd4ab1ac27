//! The registry of player kinds: for every kind its name, the keys it takes
//! with their types and defaults, how it runs (an in-process bot, a person,
//! a program) and whether it fits a board. Scenario parsing, its error
//! messages ("allowed: …"), `validate --resolved`, `analyze`, the runner
//! and the network client all read kinds from here, so adding a kind means
//! one entry in [`KINDS`] (plus its fields in [`PlayerSpec`]) and the kind's
//! own module.

use super::{alphazero, bots, solver, Strategy};
use crate::game::BoardConfig;
use crate::players::model;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A player kind; [`PlayerKind::info`] is its registry entry.
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
}

/// One player, after `use: NAME` profiles are merged and defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    /// Display name; defaults to the profile name or the kind (made unique
    /// within a scenario by adding " 2", " 3", ...).
    pub name: String,
    pub kind: PlayerKind,
    /// minimax: search depth in plies.
    pub depth: u32,
    /// mcts / alphazero: simulations per move.
    pub simulations: u32,
    /// alphazero: model path.
    pub model: Option<PathBuf>,
    /// alphazero: auto | cpu | cuda | metal.
    pub device: String,
    /// alphazero on the CPU: threads of its search (`None`: every core).
    pub threads: Option<u32>,
    /// solver: transposition-table entries as a power of two.
    pub table_log2: u32,
    /// solver: node budget per move (`None`: always exact).
    pub nodes: Option<u64>,
    /// solver: an opening book built by `c4sim book build`.
    pub book: Option<PathBuf>,
    /// alphazero: node budget per move of its exact endgame solver (`None`: off).
    pub solver_nodes: Option<u64>,
    /// external: program and arguments.
    pub command: Vec<String>,
    /// external: working directory.
    pub cwd: Option<PathBuf>,
    /// external: extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Overrides `limits.move_time` for this player. Humans default to no limit.
    pub move_time: Option<Duration>,
}

/// How a kind plays: the player actor wraps each differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunsAs {
    /// A [`Strategy`] inside c4sim.
    Bot,
    /// A person at the terminal.
    Human,
    /// A program speaking external-player.md.
    External,
}

/// The shape of a key's value, which decides how a scenario reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// A whole number at least this large.
    Count(u32),
    /// A non-empty string naming a file or directory.
    Path,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A non-empty list of strings: the program, then its arguments.
    Command,
    /// A mapping of environment variable names to strings.
    Env,
    /// A duration (`30s`, `500ms`, `2m`, or seconds).
    Duration,
}

/// A key's value once read.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyValue {
    Count(u32),
    Path(PathBuf),
    Word(String),
    Command(Vec<String>),
    Env(BTreeMap<String, String>),
    Duration(Duration),
}

/// A kind-specific key: its name, type, and how it is stored in and read
/// back from a [`PlayerSpec`] (the reading back serves `--resolved`).
pub struct Key {
    pub name: &'static str,
    pub ty: KeyType,
    /// Stores a value of [`Key::ty`] (the parser guarantees the variant).
    pub set: fn(&mut PlayerSpec, KeyValue),
    /// The value in effect, `None` when unset and without a default.
    pub get: fn(&PlayerSpec) -> Option<KeyValue>,
}

/// Keys every kind takes, besides `use` in scenario entries.
pub const COMMON_KEYS: [&str; 3] = ["name", "kind", "move_time"];

/// The devices of `device:`.
pub const DEVICES: [&str; 4] = ["auto", "cpu", "cuda", "metal"];

/// minimax search depth when none is given.
pub const DEFAULT_DEPTH: u32 = 4;
/// mcts simulations per move when none are given.
pub const DEFAULT_MCTS_SIMULATIONS: u32 = 1000;
/// alphazero simulations per move when none are given.
pub const DEFAULT_ALPHAZERO_SIMULATIONS: u32 = 800;

/// A key holding a whole number of at least `$min` in field `$field`.
macro_rules! count_key {
    ($name:literal, $field:ident, $min:literal) => {
        Key {
            name: $name,
            ty: KeyType::Count($min),
            set: |p, v| p.$field = v.count(),
            get: |p| Some(KeyValue::Count(p.$field)),
        }
    };
}

/// A key naming a file or directory, stored in `Option` field `$field`.
macro_rules! optional_path_key {
    ($name:literal, $field:ident) => {
        Key {
            name: $name,
            ty: KeyType::Path,
            set: |p, v| p.$field = Some(v.path()),
            get: |p| p.$field.clone().map(KeyValue::Path),
        }
    };
}

const DEPTH: Key = count_key!("depth", depth, 1);
const SIMULATIONS: Key = count_key!("simulations", simulations, 1);
const MODEL: Key = optional_path_key!("model", model);
const DEVICE: Key = Key {
    name: "device",
    ty: KeyType::Choice(&DEVICES),
    set: |p, v| p.device = v.word(),
    get: |p| Some(KeyValue::Word(p.device.clone())),
};
const THREADS: Key = Key {
    name: "threads",
    ty: KeyType::Count(1),
    set: |p, v| p.threads = Some(v.count()),
    get: |p| p.threads.map(KeyValue::Count),
};
const COMMAND: Key = Key {
    name: "command",
    ty: KeyType::Command,
    set: |p, v| p.command = v.command(),
    get: |p| Some(KeyValue::Command(p.command.clone())),
};
const CWD: Key = optional_path_key!("cwd", cwd);
const ENV: Key = Key {
    name: "env",
    ty: KeyType::Env,
    set: |p, v| p.env = v.env(),
    get: |p| (!p.env.is_empty()).then(|| KeyValue::Env(p.env.clone())),
};
const TABLE_LOG2: Key = count_key!("table_log2", table_log2, 10);
const BOOK: Key = optional_path_key!("book", book);
/// alphazero's `solver`: the node budget of its exact endgames.
const SOLVER_NODES: Key = Key {
    name: "solver",
    ty: KeyType::Count(1),
    set: |p, v| p.solver_nodes = Some(v.count() as u64),
    get: |p| p.solver_nodes.map(|n| KeyValue::Count(n as u32)),
};
const NODES: Key = Key {
    name: "nodes",
    ty: KeyType::Count(1),
    set: |p, v| p.nodes = Some(v.count() as u64),
    get: |p| p.nodes.map(|n| KeyValue::Count(n as u32)),
};
/// `move_time`, common to every kind.
pub const MOVE_TIME: Key = Key {
    name: "move_time",
    ty: KeyType::Duration,
    set: |p, v| p.move_time = Some(v.duration()),
    get: |p| p.move_time.map(KeyValue::Duration),
};

/// Builds a bot from its entry and its seed.
pub type BuildFn = fn(&PlayerSpec, u64) -> Result<Box<dyn Strategy>, String>;

/// A kind's registry entry.
pub struct KindInfo {
    pub kind: PlayerKind,
    pub name: &'static str,
    pub runs_as: RunsAs,
    /// The keys of this kind beyond [`COMMON_KEYS`].
    pub keys: &'static [Key],
    /// Sets this kind's defaults on a spec of the common defaults.
    pub defaults: fn(&mut PlayerSpec),
    /// Checks what a key cannot check alone (an external player needs a command).
    pub complete: fn(&PlayerSpec) -> Result<(), String>,
    /// Builds the bot (kinds that run as [`RunsAs::Bot`]).
    pub build: Option<BuildFn>,
    /// Whether a player can play on a board, decided before any game
    /// starts and without building it (AlphaZero reads its `meta.json`).
    pub fits: fn(&PlayerSpec, BoardConfig) -> Result<(), String>,
}

fn no_defaults(_: &mut PlayerSpec) {}
fn complete(_: &PlayerSpec) -> Result<(), String> {
    Ok(())
}
fn fits_any(_: &PlayerSpec, _: BoardConfig) -> Result<(), String> {
    Ok(())
}

/// Every kind, in the order messages list them.
pub static KINDS: [KindInfo; 10] = [
    KindInfo {
        kind: PlayerKind::Human,
        name: "human",
        runs_as: RunsAs::Human,
        keys: &[],
        defaults: no_defaults,
        complete,
        build: None,
        fits: fits_any,
    },
    KindInfo {
        kind: PlayerKind::Leftmost,
        name: "leftmost",
        runs_as: RunsAs::Bot,
        keys: &[],
        defaults: no_defaults,
        complete,
        build: Some(|_, _| Ok(Box::new(bots::Leftmost))),
        fits: fits_any,
    },
    KindInfo {
        kind: PlayerKind::Rightmost,
        name: "rightmost",
        runs_as: RunsAs::Bot,
        keys: &[],
        defaults: no_defaults,
        complete,
        build: Some(|_, _| Ok(Box::new(bots::Rightmost))),
        fits: fits_any,
    },
    KindInfo {
        kind: PlayerKind::Random,
        name: "random",
        runs_as: RunsAs::Bot,
        keys: &[],
        defaults: no_defaults,
        complete,
        build: Some(|_, seed| Ok(Box::new(bots::RandomBot::new(seed)))),
        fits: fits_any,
    },
    KindInfo {
        kind: PlayerKind::Invalid,
        name: "invalid",
        runs_as: RunsAs::Bot,
        keys: &[],
        defaults: no_defaults,
        complete,
        build: Some(|_, _| Ok(Box::new(bots::InvalidBot))),
        fits: fits_any,
    },
    KindInfo {
        kind: PlayerKind::Minimax,
        name: "minimax",
        runs_as: RunsAs::Bot,
        keys: &[DEPTH],
        defaults: |p| p.depth = DEFAULT_DEPTH,
        complete,
        build: Some(|p, _| Ok(Box::new(bots::MinimaxBot::new(p.depth)))),
        fits: fits_any,
    },
    KindInfo {
        kind: PlayerKind::Mcts,
        name: "mcts",
        runs_as: RunsAs::Bot,
        keys: &[SIMULATIONS],
        defaults: |p| p.simulations = DEFAULT_MCTS_SIMULATIONS,
        complete,
        build: Some(|p, seed| Ok(Box::new(bots::MctsBot::new(p.simulations, seed)))),
        fits: fits_any,
    },
    KindInfo {
        kind: PlayerKind::Alphazero,
        name: "alphazero",
        runs_as: RunsAs::Bot,
        keys: &[SIMULATIONS, MODEL, DEVICE, THREADS, SOLVER_NODES],
        defaults: |p| p.simulations = DEFAULT_ALPHAZERO_SIMULATIONS,
        complete,
        build: Some(|p, _| Ok(Box::new(alphazero::AlphaZeroBot::from_spec(p)?))),
        fits: alphazero_fits,
    },
    KindInfo {
        kind: PlayerKind::Solver,
        name: "solver",
        runs_as: RunsAs::Bot,
        keys: &[TABLE_LOG2, NODES, BOOK],
        defaults: no_defaults,
        complete,
        build: Some(|p, _| Ok(Box::new(solver::SolverBot::from_spec(p)?))),
        fits: |_, cfg| solver::fits(cfg),
    },
    KindInfo {
        kind: PlayerKind::External,
        name: "external",
        runs_as: RunsAs::External,
        keys: &[COMMAND, CWD, ENV],
        defaults: no_defaults,
        complete: |p| {
            if p.command.is_empty() {
                Err(
                    "is `external` but has no `command`: give the program and its arguments as a list, \
                     like `command: [python3, bot.py]`"
                        .into(),
                )
            } else {
                Ok(())
            }
        },
        build: None,
        fits: fits_any,
    },
];

/// An AlphaZero model fits the board it was trained for, read from its
/// `meta.json` (the weights are loaded only when the player is built).
fn alphazero_fits(p: &PlayerSpec, cfg: BoardConfig) -> Result<(), String> {
    let model = alphazero::model_of(p)?;
    let meta = model::read_meta(&model::resolve_model(model)?)?;
    let source = format!("{} (iteration {})", model.display(), meta.iteration);
    alphazero::board_fits(&source, meta.board, cfg)
}

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
    /// The kind-specific key named `name`.
    pub fn key(&self, name: &str) -> Option<&'static Key> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// Every key a player of this kind may have (for messages), in the
    /// order: name, kind, its own keys, move_time.
    pub fn all_keys(&self) -> Vec<&'static str> {
        let mut v = vec!["name", "kind"];
        v.extend(self.keys.iter().map(|k| k.name));
        v.push("move_time");
        v
    }
}

/// Every key of any kind, common ones first (for the keys a scenario entry
/// may hold at all), without repeats.
pub fn every_key() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = vec!["name", "kind"];
    for k in KINDS.iter().flat_map(|k| k.keys) {
        if !v.contains(&k.name) {
            v.push(k.name);
        }
    }
    v.push("move_time");
    v
}

/// The kinds that take key `name` (empty for common keys and unknown ones).
pub fn kinds_with_key(name: &str) -> Vec<&'static str> {
    KINDS.iter().filter(|k| k.key(name).is_some()).map(|k| k.name).collect()
}

impl PlayerSpec {
    /// A player of `kind` with every default, named after its kind.
    pub fn of_kind(kind: PlayerKind) -> PlayerSpec {
        let mut p = PlayerSpec {
            name: kind.as_str().to_string(),
            kind,
            depth: DEFAULT_DEPTH,
            simulations: DEFAULT_MCTS_SIMULATIONS,
            model: None,
            device: "auto".to_string(),
            threads: None,
            table_log2: solver::DEFAULT_TABLE_LOG2,
            nodes: None,
            book: None,
            solver_nodes: None,
            command: Vec::new(),
            cwd: None,
            env: BTreeMap::new(),
            move_time: None,
        };
        (kind.info().defaults)(&mut p);
        p
    }

    /// The kind-specific keys in effect and their values (for `--resolved`).
    pub fn key_values(&self) -> Vec<(&'static str, KeyValue)> {
        self.kind
            .info()
            .keys
            .iter()
            .filter_map(|k| (k.get)(self).map(|v| (k.name, v)))
            .collect()
    }
}

/// `KeyValue::$variant`'s contents; a key's setter is only ever given its
/// own type's variant (the scenario parser reads by [`KeyType`]).
macro_rules! unwrap_as {
    ($($name:ident: $variant:ident => $ty:ty),* $(,)?) => {
        impl KeyValue {
            $(fn $name(self) -> $ty {
                match self {
                    KeyValue::$variant(x) => x,
                    other => unreachable!("a {} key got {other:?}", stringify!($variant)),
                }
            })*
        }
    };
}
unwrap_as! {
    count: Count => u32,
    path: Path => PathBuf,
    word: Word => String,
    command: Command => Vec<String>,
    env: Env => BTreeMap<String, String>,
    duration: Duration => Duration,
}

/// Builds the strategy of an in-process kind. Kinds that do I/O (human,
/// external) have none, and a model that cannot be loaded says why.
pub fn build_strategy(spec: &PlayerSpec, seed: u64) -> Result<Box<dyn Strategy>, String> {
    match spec.kind.info().build {
        Some(build) => build(spec, seed).map_err(|e| format!("player `{}`: {e}", spec.name)),
        None => Err(format!("`{}` players are not in-process bots", spec.kind.as_str())),
    }
}

/// Refuses, before any game starts, a player that cannot play on `cfg`
/// (an AlphaZero model trained for another board size).
pub fn check_fits(spec: &PlayerSpec, cfg: BoardConfig) -> Result<(), String> {
    (spec.kind.info().fits)(spec, cfg).map_err(|e| format!("player `{}`: {e}", spec.name))
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
        assert_eq!(PlayerSpec::of_kind(PlayerKind::Mcts).simulations, 1000);
        assert_eq!(PlayerSpec::of_kind(PlayerKind::Alphazero).simulations, 800);
        assert_eq!(
            PlayerSpec::of_kind(PlayerKind::Minimax).key_values(),
            [("depth", KeyValue::Count(4))]
        );
        assert!(every_key().contains(&"threads"));
    }

    #[test]
    fn only_bots_build_and_a_missing_model_is_explained() {
        assert!(build_strategy(&PlayerSpec::of_kind(PlayerKind::Leftmost), 0).is_ok());
        let e = build_strategy(&PlayerSpec::of_kind(PlayerKind::Human), 0)
            .err()
            .unwrap();
        assert!(e.contains("not in-process"), "{e}");
        let az = PlayerSpec::of_kind(PlayerKind::Alphazero);
        let e = check_fits(&az, BoardConfig::default()).unwrap_err();
        assert!(e.contains("no `model`"), "{e}");
    }
}
