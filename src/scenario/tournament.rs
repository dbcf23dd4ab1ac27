//! The `tournament` and `report` sections (mode: tournament).

use super::tree::Node;
use super::value::Doc;
use super::ScenarioError;

/// Typed `tournament:` settings with their defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TournamentSettings {}

/// Typed `report:` settings with their defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportSettings {}

pub(crate) fn parse_tournament(doc: Doc, v: &Node) -> Result<TournamentSettings, ScenarioError> {
    doc.mapping("tournament", v, "`tournament:` followed by indented keys")?;
    Ok(TournamentSettings::default())
}

pub(crate) fn parse_report(doc: Doc, v: &Node) -> Result<ReportSettings, ScenarioError> {
    doc.mapping("report", v, "`report:` followed by indented keys")?;
    Ok(ReportSettings::default())
}
