//! A YAML tree that remembers where every node was written.
//!
//! serde_yaml knows locations only for its own errors; the checks that need
//! the whole scenario (an impossible board, a key that does not apply to a
//! player's kind, an unknown profile) happen after deserialization, when the
//! locations are gone. So scenario parsing walks this small tree instead,
//! built from yaml-rust2's marked events: every error can point at the exact
//! key or value, whichever check finds it. [`locate`] exposes the same
//! lookup to code that validates the raw mode sections (`tournament`,
//! `train`, ...) later.

use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    pub line: usize,
    pub column: usize,
}

impl Loc {
    /// The start of a file: where errors point when nothing better is known.
    pub const START: Loc = Loc { line: 1, column: 1 };

    /// yaml-rust2 markers have 1-based lines but 0-based columns.
    fn of(m: &Marker) -> Loc {
        Loc {
            line: m.line().max(1),
            column: m.col() + 1,
        }
    }
}

/// A YAML node with its position. Scalars keep their text untyped: the
/// reader decides what a scalar must be (number, string, duration), so it
/// can say what it expected instead of what YAML guessed.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// `plain` is false for quoted or tagged scalars: those are always
    /// strings (as in YAML), never numbers, booleans or null.
    Scalar {
        text: String,
        plain: bool,
        pos: Loc,
    },
    Seq {
        items: Vec<Node>,
        pos: Loc,
    },
    Map {
        entries: Vec<(Node, Node)>,
        pos: Loc,
    },
}

impl Node {
    pub fn pos(&self) -> Loc {
        match self {
            Node::Scalar { pos, .. } | Node::Seq { pos, .. } | Node::Map { pos, .. } => *pos,
        }
    }

    fn set_pos(&mut self, p: Loc) {
        match self {
            Node::Scalar { pos, .. } | Node::Seq { pos, .. } | Node::Map { pos, .. } => *pos = p,
        }
    }

    /// YAML 1.2 core-schema null: an empty value, `~` or `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Scalar { text, plain: true, .. }
            if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    pub fn scalar(&self) -> Option<&str> {
        match self {
            Node::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// How a value reads in "..., got X" messages.
    pub fn describe(&self) -> String {
        match self {
            n if n.is_null() => "nothing (an empty value)".into(),
            Node::Scalar { text, plain: true, .. } => format!("`{text}`"),
            Node::Scalar { text, .. } => format!("the quoted string {text:?}"),
            Node::Seq { .. } => "a list".into(),
            Node::Map { .. } => "a mapping".into(),
        }
    }

    /// The node at `path` below this one: for a key, the key node itself (so
    /// an error lands on the key, where a reader looks), for an index, the
    /// item.
    fn locate(&self, path: &[PathSeg]) -> Option<Loc> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self.pos());
        };
        match (self, first) {
            (Node::Map { entries, .. }, PathSeg::Key(k)) => {
                let (key, value) = entries.iter().find(|(key, _)| key.scalar() == Some(k))?;
                if rest.is_empty() {
                    Some(key.pos())
                } else {
                    value.locate(rest)
                }
            }
            (Node::Seq { items, .. }, PathSeg::Index(i)) => items.get(*i)?.locate(rest),
            _ => None,
        }
    }
}

/// One step of a key path such as `["players", 2, "kind"]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> From<&'a str> for PathSeg<'a> {
    fn from(k: &'a str) -> Self {
        PathSeg::Key(k)
    }
}

impl From<usize> for PathSeg<'_> {
    fn from(i: usize) -> Self {
        PathSeg::Index(i)
    }
}

/// Where the node at `path` was written in `src`, as a 1-based (line,
/// column): the key's position for a mapping key, the item's position for a
/// sequence element, the document's for an empty path. `None` when the YAML
/// does not parse or nothing is at that path.
pub fn locate(src: &str, path: &[PathSeg]) -> Option<(usize, usize)> {
    let root = parse(src).ok()?.root?;
    root.locate(path).map(|p| (p.line, p.column))
}

/// The parsed document.
pub(crate) struct Tree {
    /// The first document's root; `None` for an empty file.
    pub root: Option<Node>,
    /// Where a second document starts, if the file holds more than one.
    pub second_doc: Option<Loc>,
}

/// Parses `src`; a syntax error comes back as its position and yaml-rust2's
/// description.
pub(crate) fn parse(src: &str) -> Result<Tree, (Loc, String)> {
    let mut b = Builder::default();
    Parser::new_from_str(src)
        .load(&mut b, true)
        .map_err(|e| (Loc::of(e.marker()), e.info().to_string()))?;
    Ok(Tree {
        root: b.root,
        second_doc: b.second_doc,
    })
}

fn earlier(a: Loc, b: Loc) -> Loc {
    if (b.line, b.column) < (a.line, a.column) {
        b
    } else {
        a
    }
}

enum Frame {
    Seq(Vec<Node>, Loc, usize),
    Map(Vec<(Node, Node)>, Option<Node>, Loc, usize),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    docs: usize,
    root: Option<Node>,
    second_doc: Option<Loc>,
}

impl Builder {
    fn push(&mut self, node: Node, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => {
                if self.docs <= 1 {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq(items, ..)) => items.push(node),
            Some(Frame::Map(entries, pending, ..)) => match pending.take() {
                Some(key) => entries.push((key, node)),
                None => *pending = Some(node),
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let pos = Loc::of(&mark);
        match ev {
            Event::DocumentStart => {
                self.docs += 1;
                if self.docs == 2 {
                    self.second_doc = Some(pos);
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let plain = style == TScalarStyle::Plain && tag.is_none();
                self.push(Node::Scalar { text, plain, pos }, anchor);
            }
            Event::Alias(id) => {
                // An alias reads as a copy of its anchor, located where the
                // alias is written (the place a user would fix).
                let mut node = self.anchors.get(&id).cloned().unwrap_or(Node::Scalar {
                    text: String::new(),
                    plain: true,
                    pos,
                });
                node.set_pos(pos);
                self.push(node, 0);
            }
            Event::SequenceStart(anchor, _) => self.stack.push(Frame::Seq(Vec::new(), pos, anchor)),
            Event::MappingStart(anchor, _) => self.stack.push(Frame::Map(Vec::new(), None, pos, anchor)),
            // yaml-rust2 marks a block collection where it recognised it
            // (for a block mapping, the first key's `:`); where it starts is
            // what a reader wants, so the earlier of that and the first
            // child wins. A flow collection's `{`/`[` comes first anyway.
            Event::SequenceEnd => {
                if let Some(Frame::Seq(items, p, anchor)) = self.stack.pop() {
                    let pos = items.first().map_or(p, |i| earlier(p, i.pos()));
                    self.push(Node::Seq { items, pos }, anchor);
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map(entries, _, p, anchor)) = self.stack.pop() {
                    let pos = entries.first().map_or(p, |(k, _)| earlier(p, k.pos()));
                    self.push(Node::Map { entries, pos }, anchor);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str =
        "name: x\nboard:\n  rows: 4\n  win_length: 5\nplayers:\n  - kind: human\n  - { name: B, kind: minimax }\n";

    #[test]
    fn locates_keys_and_items() {
        assert_eq!(locate(SRC, &["board".into(), "win_length".into()]), Some((4, 3)));
        assert_eq!(locate(SRC, &["players".into(), 0.into()]), Some((6, 5)));
        assert_eq!(locate(SRC, &["players".into(), 1.into()]), Some((7, 5)));
        assert_eq!(locate(SRC, &["players".into(), 1.into(), "kind".into()]), Some((7, 16)));
        assert_eq!(locate(SRC, &["players".into(), 5.into()]), None);
        assert_eq!(locate(SRC, &["nope".into()]), None);
    }

    #[test]
    fn syntax_error_has_position() {
        let Err((pos, _)) = parse("a: [1, 2\nb: 3\n") else {
            panic!("should fail")
        };
        assert!(pos.line >= 1);
    }

    #[test]
    fn aliases_copy_their_anchor() {
        let t = parse("a: &x {k: 1}\nb: *x\n").unwrap();
        let Some(Node::Map { entries, .. }) = t.root else {
            panic!()
        };
        assert!(matches!(&entries[1].1, Node::Map { entries, pos } if entries.len() == 1 && pos.line == 2));
    }

    #[test]
    fn empty_and_multi_documents() {
        assert!(parse("").unwrap().root.is_none());
        assert!(parse("# only a comment\n").unwrap().root.is_none());
        let t = parse("a: 1\n---\nb: 2\n").unwrap();
        assert_eq!(t.second_doc.map(|p| p.line), Some(2));
    }
}
