//! The `web` section (`mode: web`): where `c4sim web` serves its page.
//!
//! # `web:` keys
//! | key | type | default | why it exists |
//! |---|---|---|---|
//! | `bind` | `IP:PORT` | `127.0.0.1:8080` | loopback unless the operator opens it up on purpose |
//!
//! With `mode: web` the `players` list holds the one player people play
//! against (default: the `alphazero` profile), on the scenario's `board`,
//! with `limits.move_time` per move.

use super::tree::Node;
use super::value::{get, Doc};
use super::ScenarioError;
use std::net::SocketAddr;

/// The default address: loopback, so the page is never reachable from
/// other machines unless its operator says so.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// The profile people play when no player is named: the shipped AlphaZero.
pub const DEFAULT_PLAYER: &str = "alphazero";

/// Typed `web:` settings with their defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct WebSettings {
    pub bind: SocketAddr,
}

impl Default for WebSettings {
    fn default() -> Self {
        WebSettings {
            bind: DEFAULT_BIND.parse().expect("a valid address"),
        }
    }
}

const WEB_KEYS: [&str; 1] = ["bind"];

/// Parses the `web:` mapping (called only when the key is present).
pub(crate) fn parse_web(doc: Doc, v: &Node) -> Result<WebSettings, ScenarioError> {
    let entries = doc.mapping("web", v, "{bind: 127.0.0.1:8080}")?;
    doc.check_keys(entries, &WEB_KEYS, " in `web`")?;
    let mut s = WebSettings::default();
    if let Some((_, v)) = get(entries, "bind") {
        s.bind = doc.bind("bind", v, 8080)?;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use crate::scenario::{parse_str, Mode, PlayerKind};
    use std::path::Path;

    #[test]
    fn web_defaults_and_keys() {
        let sc = parse_str("mode: web\nplayers: [{kind: leftmost}]\n", Path::new("w.yaml")).unwrap();
        assert_eq!(sc.mode, Mode::Web);
        assert_eq!(sc.web, None);
        assert_eq!(sc.players.len(), 1);
        let sc = parse_str(
            "mode: web\nweb: {bind: '127.0.0.1:0'}\nplayers: [{kind: random}]\n",
            Path::new("w.yaml"),
        )
        .unwrap();
        assert_eq!(sc.web.unwrap().bind.port(), 0);
    }

    #[test]
    fn web_plays_the_shipped_alphazero_unless_told() {
        let dir = env!("CARGO_MANIFEST_DIR");
        let sc = parse_str("mode: web\n", &Path::new(dir).join("scenarios/w.yaml")).unwrap();
        assert_eq!(sc.players.len(), 1);
        assert_eq!(sc.players[0].kind.kind(), PlayerKind::Alphazero);
    }

    #[test]
    fn web_resolves_and_reads_back_the_same() {
        let path = Path::new("w.yaml");
        let sc = parse_str(
            "mode: web\nweb: {bind: '127.0.0.1:9000'}\nplayers: [{kind: leftmost}]\n",
            path,
        )
        .unwrap();
        let text = crate::scenario::resolved::to_yaml(&sc);
        assert!(
            text.contains("mode: web") && text.contains("bind: 127.0.0.1:9000"),
            "{text}"
        );
        assert_eq!(parse_str(&text, path).unwrap(), sc);
    }

    #[test]
    fn web_errors_are_located() {
        let e = parse_str("mode: web\nweb: {bind: nowhere}\n", Path::new("w.yaml")).unwrap_err();
        assert!(e.to_string().starts_with("w.yaml:2:13: `bind` must be"), "{e}");
        let e = parse_str("mode: web\nweb: {bnd: x}\n", Path::new("w.yaml")).unwrap_err();
        assert!(e.to_string().contains("bind"), "{e}");
        let e = parse_str(
            "mode: web\nplayers: [{kind: random}, {kind: random}]\n",
            Path::new("w.yaml"),
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("w.yaml:2:1: `mode: web` needs one player"),
            "{e}"
        );
    }
}
