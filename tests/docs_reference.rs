//! The scenario reference, docs/scenarios.md, names every key the parser
//! accepts, and nothing in the repository sends readers to contracts
//! outside it.
//!
//! The keys are not copied here: they are read from the parser itself. A
//! scenario with an unknown key in a section is refused with a message that
//! ends "allowed: a, b, c", the section's own key list; probing every
//! section that way, starting at the top level and going into every key
//! whose value is a section (a mapping, or a list of mappings), finds every
//! key of every section, including ones added after this test was written.
//! Player entries are also checked against the kind registry
//! (`players::kinds::KINDS`): every kind's name and every key it takes.
//! The rules page, docs/rules.md, names every end reason the referee has.

use c4sim::game::EndReason;
use c4sim::players::kinds::{COMMON_KEYS, KINDS};
use c4sim::scenario::parse_str;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A key no section takes.
const PROBE: &str = "zz_not_a_key";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn reference() -> String {
    let path = root().join("docs/scenarios.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A scenario with `inner` (YAML flow text) as the value at `path`, each
/// step a mapping, or a one-item list of mappings where `lists[i]` is set.
fn nest(path: &[String], lists: &[bool], inner: &str) -> String {
    let mut text = inner.to_string();
    for (key, &list) in path.iter().zip(lists).rev() {
        text = if list {
            format!("{{{key}: [{text}]}}")
        } else {
            format!("{{{key}: {text}}}")
        };
    }
    // The top level is a block mapping; `text` is `{...}` around it.
    let top = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(&text);
    format!("{top}\n")
}

/// The keys the parser allows at `path`, read from its message for an
/// unknown key there; `None` when the value at `path` is not a section.
fn allowed_at(path: &[String], lists: &[bool]) -> Option<Vec<String>> {
    let src = if path.is_empty() {
        format!("{PROBE}: 1\n")
    } else {
        nest(path, lists, &format!("{{{PROBE}: 1}}"))
    };
    let err = parse_str(&src, Path::new("probe.yaml")).err()?;
    if !err.message.contains(&format!("unknown key `{PROBE}`")) {
        return None;
    }
    let (_, list) = err.message.rsplit_once("allowed: ")?;
    Some(list.split(',').map(|k| k.trim().to_string()).collect())
}

/// Every section the parser reads, by dotted path (`""` is the top level),
/// and its keys.
fn sections() -> BTreeMap<String, Vec<String>> {
    let mut found = BTreeMap::new();
    let mut todo: Vec<(Vec<String>, Vec<bool>)> = vec![(Vec::new(), Vec::new())];
    while let Some((path, lists)) = todo.pop() {
        let Some(keys) = allowed_at(&path, &lists) else {
            continue;
        };
        assert!(path.len() < 8, "sections nest implausibly deep at {path:?}");
        for key in &keys {
            let mut p = path.clone();
            p.push(key.clone());
            for list in [false, true] {
                let mut l = lists.clone();
                l.push(list);
                if allowed_at(&p, &l).is_some() {
                    todo.push((p.clone(), l));
                    break;
                }
            }
        }
        found.insert(path.join("."), keys);
    }
    found
}

/// Whether `doc` names `key` of section `path` in backticks: alone
/// (`` `blocks` ``) or as the end of its dotted path (`` `network.blocks` ``,
/// `` `train.network.blocks` ``).
fn documented(doc: &str, path: &str, key: &str) -> bool {
    let mut names = vec![key.to_string()];
    let parts: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('.').collect()
    };
    for i in (0..parts.len()).rev() {
        names.push(format!("{}.{key}", parts[i..].join(".")));
    }
    names.iter().any(|n| doc.contains(&format!("`{n}`")))
}

#[test]
fn the_probe_finds_the_sections_it_must() {
    let found = sections();
    for path in [
        "",
        "board",
        "limits",
        "match",
        "players",
        "tournament",
        "tournament.sprt",
        "report",
        "train",
        "train.eval",
        "train.eval.opponent",
        "train.eval.accuracy",
        "train.optimizer.learning_rate_schedule",
        "server",
        "join",
        "web",
    ] {
        assert!(
            found.contains_key(path),
            "no section `{path}` found: did the \"unknown key ...; allowed: ...\" message change? found: {:?}",
            found.keys().collect::<Vec<_>>()
        );
    }
    assert!(found[""].contains(&"mode".to_string()), "{:?}", found[""]);
    assert!(found["players"].contains(&"use".to_string()), "{:?}", found["players"]);
}

#[test]
fn every_key_the_parser_accepts_is_in_the_scenario_reference() {
    let doc = reference();
    let mut missing = Vec::new();
    for (path, keys) in sections() {
        for key in keys {
            if !documented(&doc, &path, &key) {
                let shown = if path.is_empty() { key } else { format!("{path}.{key}") };
                missing.push(shown);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/scenarios.md does not name these keys (as `key` or `section.key`): {}",
        missing.join(", ")
    );
}

#[test]
fn every_player_kind_and_its_keys_are_in_the_scenario_reference() {
    let doc = reference();
    let mut missing = Vec::new();
    for name in ["use"].into_iter().chain(COMMON_KEYS) {
        if !doc.contains(&format!("`{name}`")) {
            missing.push(format!("key `{name}`"));
        }
    }
    for kind in &KINDS {
        if !doc.contains(&format!("`{}`", kind.name)) {
            missing.push(format!("kind `{}`", kind.name));
        }
        for key in kind.all_keys() {
            if !doc.contains(&format!("`{key}`")) {
                missing.push(format!("key `{key}` of kind `{}`", kind.name));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/scenarios.md does not name: {}",
        missing.join(", ")
    );
}

#[test]
fn the_rules_page_names_every_end_reason() {
    let path = root().join("docs/rules.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let missing: Vec<&str> = EndReason::ALL
        .iter()
        .map(|r| r.as_str())
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/rules.md does not name these end reasons (in backticks): {}",
        missing.join(", ")
    );
}

/// Files users read, and the sources whose comments they may follow.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !name.starts_with('.') && !matches!(name.as_str(), "target" | "node_modules" | "__pycache__") {
                text_files(&p, out);
            }
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("rs" | "md" | "yaml" | "yml" | "py" | "sh" | "toml")
        ) {
            out.push(p);
        }
    }
}

#[test]
fn nothing_points_at_contracts_outside_the_repository() {
    let root = root();
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "Cargo.toml", "pyproject.toml"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    for dir in [
        "src",
        "docs",
        "scenarios",
        "players",
        "models",
        "python",
        "examples",
        "deploy",
        "tests",
    ] {
        text_files(&root.join(dir), &mut files);
    }
    // Spelled in pieces so this file does not match itself.
    let outside = ["../".to_string() + "shared", "shared/".to_string() + "spec"];
    let mut found = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let spec_file = line.match_indices("spec/").any(|(at, _)| {
                let rest = &line[at + 5..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                    .collect();
                !name.is_empty() && rest[name.len()..].starts_with(".md")
            });
            if spec_file || outside.iter().any(|o| line.contains(o.as_str())) {
                let rel = f.strip_prefix(&root).unwrap_or(&f);
                found.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "these lines point at files users do not have; point them at docs/ instead:\n{}",
        found.join("\n")
    );
}
