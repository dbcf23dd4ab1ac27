//! The `train` section (mode: train): AlphaZero self-play settings.
//! Owned by the AlphaZero engine; see spec/scenarios.md and spec/alphazero.md.

use super::tree::Node;
use super::value::Doc;
use super::ScenarioError;

/// Typed `train:` settings with their defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainSettings {
    /// Until the engine types every key, the section as written.
    pub raw: Option<serde_yaml::Value>,
}

/// Parses the `train:` mapping (called only when the key is present).
pub(crate) fn parse_train(doc: Doc, v: &Node) -> Result<TrainSettings, ScenarioError> {
    doc.mapping("train", v, "`train:` followed by indented keys")?;
    Ok(TrainSettings::default())
}
