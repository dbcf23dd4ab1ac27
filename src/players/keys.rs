//! A kind's own keys: their types, their values once read, and how a spec
//! type stores and gives them back. Each kind's module declares its keys
//! with these ([`KindKeys`] and the `*_key!` macros); the registry
//! ([`super::kinds`]) reads them through [`Keyed`] whatever the spec type.

use crate::game::BoardConfig;
use crate::players::alphazero::BoardMismatch;
use crate::players::model::ModelError;
use crate::solver::SolverError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A player entry that a key alone cannot refuse: one the kind cannot go
/// without is missing. Completes "player 2 …".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// `key` is unset and kind `kind` needs it; `hint` says what to give.
    #[error("is `{kind}` but has no `{key}`: {hint}")]
    Missing {
        kind: &'static str,
        key: &'static str,
        hint: &'static str,
    },
}

/// Why a player cannot play on a board, found before any game starts.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// A key it needs (an AlphaZero player's `model`) is missing.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The model's `meta.json` cannot be read.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The model was trained for another board.
    #[error(transparent)]
    Board(#[from] BoardMismatch),
    /// The solver cannot hold the board.
    #[error(transparent)]
    Solver(#[from] SolverError),
}

/// The shape of a key's value, which decides how a scenario reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// A whole number at least this large, at most `u32::MAX`.
    Count(u32),
    /// A whole number at least this large, at most `u64::MAX` (node budgets).
    Count64(u64),
    /// A non-empty string naming a file or directory.
    Path,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A non-empty list of strings: the program, then its arguments.
    Command,
    /// A mapping of environment variable names to strings.
    Env,
}

/// A key's value once read.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyValue {
    Count(u32),
    Count64(u64),
    Path(PathBuf),
    Word(String),
    Command(Vec<String>),
    Env(BTreeMap<String, String>),
}

/// A kind-specific key of spec type `S`: its name, type, and how it is
/// stored in and read back from an `S` (the reading back serves `--resolved`).
pub struct Key<S> {
    pub name: &'static str,
    pub ty: KeyType,
    /// Stores a value of [`Key::ty`] (the parser guarantees the variant).
    pub set: fn(&mut S, KeyValue),
    /// The value in effect, `None` when unset and without a default.
    pub get: fn(&S) -> Option<KeyValue>,
}

/// A kind's own keys, implemented by its spec type in the kind's module.
pub trait KindKeys: Sized + 'static {
    /// The keys beyond `COMMON_KEYS`, in the order messages list them and
    /// `--resolved` writes them.
    const KEYS: &'static [Key<Self>];

    /// Checks what a key cannot check alone (an external player needs a
    /// command); the error completes "player 2 …".
    fn complete(&self) -> Result<(), KeyError> {
        Ok(())
    }

    /// Whether a player of this spec can play on `cfg` at all, before any
    /// game starts (a model's board, the solver's size limit).
    fn fits(&self, _cfg: BoardConfig) -> Result<(), FitError> {
        Ok(())
    }
}

/// A kind's spec seen through its keys, whatever its type.
pub(super) trait Keyed {
    fn keys(&self) -> Vec<(&'static str, KeyType)>;
    fn set(&mut self, name: &str, v: KeyValue);
    fn values(&self) -> Vec<(&'static str, KeyValue)>;
    fn complete(&self) -> Result<(), KeyError>;
    fn fits(&self, cfg: BoardConfig) -> Result<(), FitError>;
}

impl<S: KindKeys> Keyed for S {
    fn keys(&self) -> Vec<(&'static str, KeyType)> {
        S::KEYS.iter().map(|k| (k.name, k.ty)).collect()
    }

    fn set(&mut self, name: &str, v: KeyValue) {
        if let Some(k) = S::KEYS.iter().find(|k| k.name == name) {
            (k.set)(self, v);
        }
    }

    fn values(&self) -> Vec<(&'static str, KeyValue)> {
        S::KEYS
            .iter()
            .filter_map(|k| (k.get)(self).map(|v| (k.name, v)))
            .collect()
    }

    fn complete(&self) -> Result<(), KeyError> {
        KindKeys::complete(self)
    }

    fn fits(&self, cfg: BoardConfig) -> Result<(), FitError> {
        KindKeys::fits(self, cfg)
    }
}

/// A key holding a whole number (`u32`) of at least `$min` in field `$field`.
macro_rules! count_key {
    ($name:literal, $field:ident, $min:literal) => {
        $crate::players::keys::Key {
            name: $name,
            ty: $crate::players::keys::KeyType::Count($min),
            set: |s, v| s.$field = v.count(),
            get: |s| Some($crate::players::keys::KeyValue::Count(s.$field)),
        }
    };
}
pub(crate) use count_key;

/// A key holding a node budget (`u64`) of at least 1 in `Option` field `$field`.
macro_rules! budget_key {
    ($name:literal, $field:ident) => {
        $crate::players::keys::Key {
            name: $name,
            ty: $crate::players::keys::KeyType::Count64(1),
            set: |s, v| s.$field = Some(v.count64()),
            get: |s| s.$field.map($crate::players::keys::KeyValue::Count64),
        }
    };
}
pub(crate) use budget_key;

/// A key naming a file or directory, stored in `Option` field `$field`.
macro_rules! optional_path_key {
    ($name:literal, $field:ident) => {
        $crate::players::keys::Key {
            name: $name,
            ty: $crate::players::keys::KeyType::Path,
            set: |s, v| s.$field = Some(v.path()),
            get: |s| s.$field.clone().map($crate::players::keys::KeyValue::Path),
        }
    };
}
pub(crate) use optional_path_key;

/// `KeyValue::$variant`'s contents; a key's setter is only ever given its
/// own type's variant (the scenario parser reads by [`KeyType`]).
macro_rules! unwrap_as {
    ($($name:ident: $variant:ident => $ty:ty),* $(,)?) => {
        impl KeyValue {
            $(pub fn $name(self) -> $ty {
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
    count64: Count64 => u64,
    path: Path => PathBuf,
    word: Word => String,
    command: Command => Vec<String>,
    env: Env => BTreeMap<String, String>,
}
