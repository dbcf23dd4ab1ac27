//! The layering rule of ARCHITECTURE.md, enforced: every top-level module
//! of `src/` may use only modules on lower floors. The floors are read
//! from ARCHITECTURE.md's "Layers" table itself, so the document and the
//! check cannot drift apart; the uses are every `crate::NAME` path in the
//! module's files (imports and inline paths alike).
//!
//! Strictly lower floors also rule out import cycles between top-level
//! modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Floor of each top-level module, from the table rows
/// `| N | \`a\`, \`b\` | ... |` of the "Layers" section.
fn floors(architecture: &str) -> BTreeMap<String, u32> {
    let section = architecture
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .expect("ARCHITECTURE.md has a `## Layers` section");
    let mut floors = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 3 {
            continue;
        }
        let Ok(floor) = cells[1].parse::<u32>() else { continue };
        for name in cells[2].split('`').skip(1).step_by(2) {
            floors.insert(name.to_string(), floor);
        }
    }
    floors
}

/// Top-level module → the other top-level modules it names as `crate::X`.
fn uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    walk(src, &mut files);
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        out.entry(module.clone())
            .or_default()
            .extend(named_modules(&text).into_iter().filter(|m| *m != module));
    }
    out
}

/// The first segment of every `crate::` path, `crate::{a, b::c}` included.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    for (i, _) in text.match_indices("crate::") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `c4sim_crate::` and the like
        }
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(inner.split(',').map(|s| ident(s.trim())).filter(|s| !s.is_empty()));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

/// Every use that does not go to a strictly lower floor, and every module
/// missing from the table.
fn violations(floors: &BTreeMap<String, u32>, uses: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut v = Vec::new();
    for (module, used) in uses {
        let Some(&f) = floors.get(module) else {
            v.push(format!("`{module}` is not in ARCHITECTURE.md's Layers table"));
            continue;
        };
        for u in used {
            match floors.get(u) {
                Some(&g) if g < f => {}
                Some(&g) => v.push(format!("`{module}` (floor {f}) uses `{u}` (floor {g})")),
                None => v.push(format!("`{module}` uses `{u}`, which is not in the Layers table")),
            }
        }
    }
    v
}

#[test]
fn every_module_uses_only_lower_floors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let arch = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let floors = floors(&arch);
    assert!(floors.len() >= 10, "the Layers table lists the modules: {floors:?}");
    assert_eq!(floors.get("util"), Some(&0));
    assert_eq!(floors.get("game"), Some(&1));
    let uses = uses(&root.join("src"));
    assert!(uses.contains_key("search") && uses.contains_key("actors"));
    let v = violations(&floors, &uses);
    assert!(v.is_empty(), "layering violations:\n{}", v.join("\n"));
}

#[test]
fn game_uses_nothing_and_search_only_game_and_util() {
    let uses = uses(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert_eq!(uses["game"], BTreeSet::new());
    assert!(
        uses["search"].iter().all(|m| m == "game" || m == "util"),
        "{:?}",
        uses["search"]
    );
}

/// The check itself fails on a violation: an upward use, a same-floor use
/// (which could close a cycle), and a module the table forgot.
#[test]
fn the_check_reports_upward_and_sideways_uses() {
    let floors = floors("# A\n\n## Layers\n\n| floor | modules |\n|---|---|\n| 0 | `game` |\n| 1 | `search`, `az` |\n| 2 | `players` |\n");
    assert_eq!(floors.len(), 4);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    uses.entry("players".into()).or_default().insert("search".into());
    uses.entry("search".into()).or_default().insert("game".into());
    assert!(violations(&floors, &uses).is_empty());
    uses.entry("search".into()).or_default().insert("players".into());
    uses.entry("az".into()).or_default().insert("search".into());
    uses.entry("net".into()).or_default().insert("game".into());
    let v = violations(&floors, &uses);
    assert_eq!(v.len(), 3, "{v:?}");
    assert!(v[0].contains("`az` (floor 1) uses `search` (floor 1)"), "{v:?}");
    assert!(v[1].contains("`net` is not in"), "{v:?}");
    assert!(v[2].contains("`search` (floor 1) uses `players` (floor 2)"), "{v:?}");
}

#[test]
fn crate_paths_are_found_in_groups_and_inline() {
    let text =
        "use crate::{game::Board, util::seed};\nlet x = crate::search::minimax::Minimax::new(1);\nmy_crate::skip;";
    let found: Vec<String> = named_modules(text).into_iter().collect();
    assert_eq!(found, ["game", "search", "util"]);
}
