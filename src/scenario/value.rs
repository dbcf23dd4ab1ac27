//! Typed reads of located YAML nodes, each failing with a located message
//! that names the key and the expected type ("`games` must be a whole
//! number of at least 1, got `ten`").
//!
//! One rule holds for every optional key: an empty (null) value is the same
//! as leaving the key out, so `board:` with nothing after it means the
//! default board. [`get`] implements it.

use super::duration::parse_duration;
use super::error::{unknown_message, ScenarioError};
use super::tree::{Loc, Node};
use std::path::Path;
use std::time::Duration;

/// The file a node came from, for errors.
#[derive(Clone, Copy)]
pub(crate) struct Doc<'a> {
    pub file: &'a Path,
}

/// The entry for `key`, unless it is absent or null.
pub(crate) fn get<'n>(entries: &'n [(Node, Node)], key: &str) -> Option<(&'n Node, &'n Node)> {
    entries
        .iter()
        .find(|(k, v)| k.scalar() == Some(key) && !v.is_null())
        .map(|(k, v)| (k, v))
}

impl<'a> Doc<'a> {
    pub fn err(&self, pos: Loc, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.file, pos, message)
    }

    /// Checks that every key of a mapping is known and given once. `context`
    /// completes "unknown key `x`..." (e.g. " in `match`").
    pub fn check_keys(&self, entries: &[(Node, Node)], allowed: &[&str], context: &str) -> Result<(), ScenarioError> {
        for (i, (k, _)) in entries.iter().enumerate() {
            let Some(name) = k.scalar() else {
                return Err(self.err(
                    k.pos(),
                    format!(
                        "keys must be plain names{context}, got {}; allowed: {}",
                        k.describe(),
                        allowed.join(", ")
                    ),
                ));
            };
            if !allowed.contains(&name) {
                return Err(self.err(k.pos(), unknown_message("key", name, context, allowed)));
            }
            if let Some((first, _)) = entries[..i].iter().find(|(f, _)| f.scalar() == Some(name)) {
                return Err(self.err(
                    k.pos(),
                    format!(
                        "duplicate key `{name}`{context}: it was already given on line {}",
                        first.pos().line
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The entries of a mapping value; `shape` shows what one looks like.
    pub fn mapping<'n>(&self, key: &str, v: &'n Node, shape: &str) -> Result<&'n [(Node, Node)], ScenarioError> {
        match v {
            Node::Map { entries, .. } => Ok(entries),
            other => Err(self.err(
                other.pos(),
                format!("`{key}` must be a mapping, like {shape}; got {}", other.describe()),
            )),
        }
    }

    /// Any scalar reads as a string (`name: 42` is the name "42").
    pub fn string(&self, key: &str, v: &Node) -> Result<String, ScenarioError> {
        match v {
            Node::Scalar { text, .. } if !v.is_null() => Ok(text.clone()),
            other => Err(self.err(
                other.pos(),
                format!("`{key}` must be a string, got {}", other.describe()),
            )),
        }
    }

    /// A listening address, like `127.0.0.1:PORT` (`port` is the example's).
    pub fn bind(&self, key: &str, v: &Node, port: u16) -> Result<std::net::SocketAddr, ScenarioError> {
        let text = self.string(key, v)?;
        text.trim().parse().map_err(|_| {
            self.err(
                v.pos(),
                format!("`{key}` must be an IP address and port like 127.0.0.1:{port} or [::1]:{port}, got `{text}`"),
            )
        })
    }

    /// A string that must not be empty or blank.
    pub fn nonempty_string(&self, key: &str, v: &Node) -> Result<String, ScenarioError> {
        let s = self.string(key, v)?;
        if s.trim().is_empty() {
            return Err(self.err(v.pos(), format!("`{key}` must not be empty")));
        }
        Ok(s)
    }

    /// A whole number from `min` to `max`, written plainly (a quoted "5" is a
    /// string, as in YAML).
    pub fn uint(&self, key: &str, v: &Node, min: u64, max: u64) -> Result<u64, ScenarioError> {
        let digits = match v {
            Node::Scalar { text, plain: true, .. } => {
                let t = text.strip_prefix('+').unwrap_or(text);
                Some(t).filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            }
            _ => None,
        };
        let Some(digits) = digits else {
            return Err(self.err(
                v.pos(),
                format!("`{key}` must be a whole number of at least {min}, got {}", v.describe()),
            ));
        };
        match digits.parse::<u64>() {
            Ok(n) if n < min => Err(self.err(v.pos(), format!("`{key}` must be at least {min}, got {n}"))),
            Ok(n) if n <= max => Ok(n),
            _ => Err(self.err(v.pos(), format!("`{key}` must be at most {max}, got {digits}"))),
        }
    }

    pub fn u32_at_least(&self, key: &str, v: &Node, min: u32) -> Result<u32, ScenarioError> {
        Ok(self.uint(key, v, min.into(), u32::MAX.into())? as u32)
    }

    pub fn bool(&self, key: &str, v: &Node) -> Result<bool, ScenarioError> {
        match v {
            Node::Scalar { text, plain: true, .. } if matches!(text.as_str(), "true" | "True" | "TRUE") => Ok(true),
            Node::Scalar { text, plain: true, .. } if matches!(text.as_str(), "false" | "False" | "FALSE") => Ok(false),
            other => Err(self.err(
                other.pos(),
                format!("`{key}` must be true or false, got {}", other.describe()),
            )),
        }
    }

    /// One of `allowed`, returned as its index. `what` names the choice in
    /// the message ("unknown player kind `minmax`; did you mean ...").
    pub fn choice(&self, key: &str, what: &str, v: &Node, allowed: &[&str]) -> Result<usize, ScenarioError> {
        match v {
            Node::Scalar { text, .. } => allowed
                .iter()
                .position(|a| a == text)
                .ok_or_else(|| self.err(v.pos(), unknown_message(what, text, "", allowed))),
            other => Err(self.err(
                other.pos(),
                format!(
                    "`{key}` must be one of: {}; got {}",
                    allowed.join(", "),
                    other.describe()
                ),
            )),
        }
    }

    /// A duration (`30s`, `500ms`, `2m`, `1h`, or bare seconds).
    pub fn duration(&self, key: &str, v: &Node) -> Result<Duration, ScenarioError> {
        match v {
            Node::Scalar { text, .. } => parse_duration(text).map_err(|e| self.err(v.pos(), format!("`{key}`: {e}"))),
            other => Err(self.err(
                other.pos(),
                format!(
                    "`{key}` must be a duration like 30s, 500ms, 2m or 1h, got {}",
                    other.describe()
                ),
            )),
        }
    }
}
