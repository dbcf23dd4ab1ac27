//! The `server` and `join` sections (mode: serve / join): the lobby server
//! and c4sim players joining one. See spec/lobby-protocol.md.

use super::tree::Node;
use super::value::Doc;
use super::ScenarioError;

/// Typed `server:` settings with their defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerSettings {}

/// Typed `join:` settings with their defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JoinSettings {}

/// Parses the `server:` mapping (called only when the key is present).
pub(crate) fn parse_server(doc: Doc, v: &Node) -> Result<ServerSettings, ScenarioError> {
    doc.mapping("server", v, "`server:` followed by indented keys")?;
    Ok(ServerSettings::default())
}

/// Parses the `join:` mapping (called only when the key is present).
pub(crate) fn parse_join(doc: Doc, v: &Node) -> Result<JoinSettings, ScenarioError> {
    doc.mapping("join", v, "`join:` followed by indented keys")?;
    Ok(JoinSettings::default())
}
