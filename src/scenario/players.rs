//! Player entries and profiles: `players:` items, `use: NAME` profiles from
//! `players/NAME.yaml`, and `c4sim analyze --player SPEC`.
//!
//! A profile is merged key by key: the profile's keys first, then the
//! entry's keys beside `use` replace them. Each merged key remembers the
//! file it came from, so an error in a profile points into the profile, and
//! an error in an override points into the scenario.

use super::error::{did_you_mean, ScenarioError};
use super::tree::{self, Loc, Node};
use super::value::{get, Doc};
use crate::players::kinds::{every_key, kinds_with_key, KeyType, KeyValue};
use crate::players::{PlayerKind, PlayerSpec};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Keys of a `players` entry: `use` and every key of any kind (from the
/// kind registry); a profile has the same keys except `use`.
pub(crate) fn entry_keys() -> Vec<&'static str> {
    let mut v = vec!["use"];
    v.extend(every_key());
    v
}

/// [`entry_keys`] without `use`: profiles cannot use other profiles.
fn profile_keys() -> Vec<&'static str> {
    every_key()
}

/// The profiles an installed copy ships (`util::data`), if any.
fn installed_profiles() -> Option<PathBuf> {
    crate::util::data::root().map(|r| r.join("players"))
}

/// Where `use: NAME` looks for `NAME.yaml` (then `NAME.yml`), in order.
pub(crate) struct ProfileLookup {
    dirs: Vec<PathBuf>,
}

impl ProfileLookup {
    /// `players/` beside the scenario, `players/` in the scenario's parent
    /// directory (the repository layout has `scenarios/` and `players/` as
    /// siblings), then `./players`.
    pub fn for_scenario(path: &Path) -> Self {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut dirs = vec![
            dir.join("players"),
            dir.join("..").join("players"),
            PathBuf::from("players"),
        ];
        dirs.extend(installed_profiles());
        Self::new(dirs)
    }

    /// `./players`, then the shipped profiles of an installed copy (for `--player`).
    pub fn cwd_only() -> Self {
        let mut dirs = vec![PathBuf::from("players")];
        dirs.extend(installed_profiles());
        Self::new(dirs)
    }

    #[cfg(test)]
    pub fn in_dirs(dirs: Vec<PathBuf>) -> Self {
        Self::new(dirs)
    }

    /// Drops directories that are the same place as an earlier one, so the
    /// "looked in" list of a message has no repeats.
    fn new(dirs: Vec<PathBuf>) -> Self {
        let mut seen = BTreeSet::new();
        let dirs = dirs
            .into_iter()
            .filter(|d| seen.insert(std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())))
            .collect();
        ProfileLookup { dirs }
    }

    fn find(&self, name: &str) -> Option<PathBuf> {
        if name.is_empty() || name.contains(['/', '\\']) {
            return None;
        }
        self.dirs
            .iter()
            .flat_map(|d| [d.join(format!("{name}.yaml")), d.join(format!("{name}.yml"))])
            .find(|p| p.is_file())
    }

    fn available(&self) -> Vec<String> {
        let mut names = BTreeSet::new();
        for d in &self.dirs {
            let Ok(rd) = std::fs::read_dir(d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let yaml = matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml"));
                if yaml && p.is_file() {
                    if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
                        names.insert(stem.to_string());
                    }
                }
            }
        }
        names.into_iter().collect()
    }

    /// "unknown profile `x`; did you mean `y`? available: ... (looked in ...)".
    fn unknown(&self, name: &str) -> String {
        let available = self.available();
        let mut msg = format!("unknown profile `{name}`");
        match did_you_mean(name, available.iter().map(String::as_str)) {
            Some(s) => msg.push_str(&format!("; did you mean `{s}`?")),
            None => msg.push(';'),
        }
        let list = if available.is_empty() {
            "none".to_string()
        } else {
            available.join(", ")
        };
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        msg.push_str(&format!(
            " available: {list} (looked for {name}.yaml in {})",
            dirs.join(", ")
        ));
        msg
    }
}

/// A loaded profile file; `root` is always a mapping with checked keys.
struct Profile {
    name: String,
    file: PathBuf,
    root: Node,
}

fn load_profile(name: &str, file: PathBuf) -> Result<Profile, ScenarioError> {
    let src = std::fs::read_to_string(&file)
        .map_err(|e| ScenarioError::at(&file, Loc::START, format!("cannot read player profile `{name}`: {e}")))?;
    let doc = Doc { file: &file };
    let t = tree::parse(&src).map_err(|(pos, info)| doc.err(pos, format!("invalid YAML: {info}")))?;
    if let Some(p) = t.second_doc {
        return Err(doc.err(
            p,
            "a player profile holds one YAML document, but a second one starts here",
        ));
    }
    let root = match t.root {
        Some(n @ Node::Map { .. }) => n,
        Some(n) if !n.is_null() => {
            let msg = format!(
                "a player profile must be a mapping like `kind: minimax` and `depth: 8` on their own lines, \
                 got {}; allowed keys: {}",
                n.describe(),
                profile_keys().join(", ")
            );
            return Err(doc.err(n.pos(), msg));
        }
        _ => Node::Map {
            entries: Vec::new(),
            pos: Loc::START,
        },
    };
    if let Node::Map { entries, .. } = &root {
        if let Some((k, _)) = entries.iter().find(|(k, _)| k.scalar() == Some("use")) {
            return Err(doc.err(
                k.pos(),
                format!(
                    "a profile cannot `use` another profile (`use` belongs in a scenario's `players` entries); \
                     allowed keys in a profile: {}",
                    profile_keys().join(", ")
                ),
            ));
        }
        doc.check_keys(entries, &profile_keys(), &format!(" in profile `{name}`"))?;
    }
    Ok(Profile {
        name: name.to_string(),
        file,
        root,
    })
}

/// A merged key: its nodes and the file they were written in.
struct Field<'n> {
    key: &'n str,
    file: &'n Path,
    key_node: &'n Node,
    value: &'n Node,
}

impl Field<'_> {
    fn doc(&self) -> Doc<'_> {
        Doc { file: self.file }
    }
}

/// Builds one player from an entry's keys (everything but `use`) over an
/// optional profile. `entry_pos` is where a missing-key error points; `who`
/// names the player in messages ("player 2").
fn build_player(
    entry_doc: Doc,
    entry_pos: Loc,
    entry: &[(Node, Node)],
    profile: Option<&Profile>,
    who: &str,
) -> Result<PlayerSpec, ScenarioError> {
    let fields = merged_fields(entry_doc, entry, profile);
    let field = |key: &str| fields.iter().find(|f| f.key == key);

    let names = PlayerKind::names();
    let kind = match field("kind") {
        Some(f) => {
            let i = f.doc().choice("kind", "player kind", f.value, &names)?;
            PlayerKind::from_name(names[i]).expect("a listed kind")
        }
        None => {
            let nor = match profile {
                Some(p) if !entry.is_empty() => format!(" (nor does its profile `{}`)", p.name),
                _ => String::new(),
            };
            return Err(entry_doc.err(
                entry_pos,
                format!("{who} has no `kind`{nor}; allowed kinds: {}", names.join(", ")),
            ));
        }
    };
    let info = kind.info();
    check_keys_fit(&fields, kind)?;

    let mut p = PlayerSpec::of_kind(kind);
    p.name = profile.map_or_else(|| kind.as_str().to_string(), |pr| pr.name.clone());
    for f in &fields {
        let (d, v) = (f.doc(), f.value);
        match f.key {
            "name" => p.name = d.nonempty_string("name", v)?,
            "move_time" => p.move_time = Some(d.duration("move_time", v)?),
            k => {
                // Keys of another kind were refused above.
                if let Some(ty) = info.key(k) {
                    p.kind.set(k, read_value(d, k, ty, v)?);
                }
            }
        }
    }
    p.kind
        .complete()
        .map_err(|why| entry_doc.err(entry_pos, format!("{who} {why}")))?;
    Ok(p)
}

/// The player's keys: its profile's, then the entry's (everything but
/// `use`), an entry's key replacing the profile's; null values are unset.
fn merged_fields<'a>(entry_doc: Doc<'a>, entry: &'a [(Node, Node)], profile: Option<&'a Profile>) -> Vec<Field<'a>> {
    let mut fields: Vec<Field> = Vec::new();
    if let Some(Profile {
        file,
        root: Node::Map { entries, .. },
        ..
    }) = profile
    {
        for (k, v) in entries {
            if let (Some(key), false) = (k.scalar(), v.is_null()) {
                fields.push(Field {
                    key,
                    file,
                    key_node: k,
                    value: v,
                });
            }
        }
    }
    for (k, v) in entry {
        let Some(key) = k.scalar() else { continue };
        if key == "use" || v.is_null() {
            continue;
        }
        let f = Field {
            key,
            file: entry_doc.file,
            key_node: k,
            value: v,
        };
        match fields.iter_mut().find(|g| g.key == key) {
            Some(slot) => *slot = f,
            None => fields.push(f),
        }
    }
    fields
}

/// Refuses a key that belongs to other kinds than `kind`, saying which
/// kinds take it and which keys this kind takes.
fn check_keys_fit(fields: &[Field], kind: PlayerKind) -> Result<(), ScenarioError> {
    let info = kind.info();
    for f in fields {
        let kinds = kinds_with_key(f.key);
        if !kinds.is_empty() && info.key(f.key).is_none() {
            return Err(f.doc().err(
                f.key_node.pos(),
                format!(
                    "`{}` applies only to {} players, not to `{}`; keys for `{}` players: {}",
                    f.key,
                    kinds.join(" and "),
                    kind.as_str(),
                    kind.as_str(),
                    info.all_keys().join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Reads one key's value by its registry type.
fn read_value(d: Doc, key: &str, ty: KeyType, v: &Node) -> Result<KeyValue, ScenarioError> {
    Ok(match ty {
        KeyType::Count(min) => KeyValue::Count(d.u32_at_least(key, v, min)?),
        KeyType::Count64(min) => KeyValue::Count64(d.uint(key, v, min, u64::MAX)?),
        KeyType::Path => KeyValue::Path(PathBuf::from(d.nonempty_string(key, v)?)),
        KeyType::Choice(words) => KeyValue::Word(words[d.choice(key, key, v, words)?].to_string()),
        KeyType::Command => KeyValue::Command(read_command(d, v)?),
        KeyType::Env => KeyValue::Env(read_env(d, v)?),
    })
}

fn read_command(d: Doc, v: &Node) -> Result<Vec<String>, ScenarioError> {
    const SHAPE: &str = "a list of strings, the program then its arguments, like [python3, bot.py]";
    let Node::Seq { items, .. } = v else {
        return Err(d.err(v.pos(), format!("`command` must be {SHAPE}; got {}", v.describe())));
    };
    if items.is_empty() {
        return Err(d.err(v.pos(), format!("`command` must not be empty: it is {SHAPE}")));
    }
    let cmd = items
        .iter()
        .map(|i| d.string("command", i))
        .collect::<Result<Vec<_>, _>>()?;
    if cmd[0].trim().is_empty() {
        return Err(d.err(
            items[0].pos(),
            "the program (first item of `command`) must not be empty",
        ));
    }
    Ok(cmd)
}

/// An `env` mapping: variable name to value.
type Env = BTreeMap<String, String>;

fn read_env(d: Doc, v: &Node) -> Result<Env, ScenarioError> {
    let entries = d.mapping("env", v, "{RUST_LOG: debug}")?;
    let mut env = BTreeMap::new();
    for (k, val) in entries {
        let name = d.nonempty_string("env", k)?;
        if env.contains_key(&name) {
            return Err(d.err(k.pos(), format!("duplicate variable `{name}` in `env`")));
        }
        let value = if val.is_null() {
            String::new()
        } else {
            d.string(&format!("env.{name}"), val)?
        };
        env.insert(name, value);
    }
    Ok(env)
}

/// Reads a scenario's `players` list (names not yet made unique).
pub(crate) fn parse_list(doc: Doc, v: &Node, lookup: &ProfileLookup) -> Result<Vec<PlayerSpec>, ScenarioError> {
    let Node::Seq { items, .. } = v else {
        return Err(doc.err(
            v.pos(),
            format!(
                "`players` must be a list, like [{{kind: human}}, {{use: minimax8}}]; got {}",
                v.describe()
            ),
        ));
    };
    let mut specs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let who = format!("player {}", i + 1);
        specs.push(parse_entry(
            doc,
            item,
            lookup,
            &who,
            &format!(" in {who} of `players`"),
        )?);
    }
    Ok(specs)
}

/// One entry (a mapping, `use:` allowed).
fn parse_entry(
    doc: Doc,
    item: &Node,
    lookup: &ProfileLookup,
    who: &str,
    context: &str,
) -> Result<PlayerSpec, ScenarioError> {
    let Node::Map { entries, .. } = item else {
        return Err(doc.err(
            item.pos(),
            format!(
                "{who} must be a mapping like {{kind: minimax, depth: 6}} or {{use: PROFILE}}, got {}; allowed keys: {}",
                item.describe(),
                entry_keys().join(", ")
            ),
        ));
    };
    doc.check_keys(entries, &entry_keys(), context)?;
    let profile = match get(entries, "use") {
        Some((_, v)) => {
            let name = doc.nonempty_string("use", v)?;
            let file = lookup
                .find(&name)
                .ok_or_else(|| doc.err(v.pos(), lookup.unknown(&name)))?;
            Some(load_profile(&name, file)?)
        }
        None => None,
    };
    build_player(doc, item.pos(), entries, profile.as_ref(), who)
}

/// One player entry outside `players:` (such as `train.eval.opponent`),
/// with the same keys, profiles and messages as a `players` item; profiles
/// are looked up as for the scenario file of `doc`.
pub(crate) fn parse_one_entry(doc: Doc, item: &Node, who: &str, context: &str) -> Result<PlayerSpec, ScenarioError> {
    parse_entry(doc, item, &ProfileLookup::for_scenario(doc.file), who, context)
}

/// Makes names unique in seating order: the first keeps its name, later
/// ones get " 2", " 3", ... (skipping a suffixed name already taken), so
/// logs and reports can tell two `random` players apart.
pub(crate) fn dedupe_names(players: &mut [PlayerSpec]) {
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut next: BTreeMap<String, u32> = BTreeMap::new();
    // Explicit names are reserved first so "random 2" written by the user
    // is never given to a generated duplicate.
    let mut seen = BTreeSet::new();
    let firsts: Vec<bool> = players.iter().map(|p| seen.insert(p.name.clone())).collect();
    taken.extend(seen);
    for (p, first) in players.iter_mut().zip(firsts) {
        if first {
            continue;
        }
        let n = next.entry(p.name.clone()).or_insert(1);
        let name = loop {
            *n += 1;
            let candidate = format!("{} {}", p.name, n);
            if !taken.contains(&candidate) {
                break candidate;
            }
        };
        taken.insert(name.clone());
        p.name = name;
    }
}

/// The player a profile file describes on its own (no scenario entry).
fn profile_player(name: &str, file: PathBuf) -> Result<PlayerSpec, ScenarioError> {
    let profile = load_profile(name, file)?;
    build_player(
        Doc { file: &profile.file },
        Loc::START,
        &[],
        Some(&profile),
        &format!("profile `{}`", profile.name),
    )
}

/// `c4sim analyze --player SPEC`: a profile name (looked up in
/// `./players`), a path to a profile file (ends in `.yaml`/`.yml` or
/// contains a `/`), or inline YAML such as `{kind: minimax, depth: 8}` with
/// the keys of a `players` entry (`use:` allowed). As a convenience, a bare
/// kind name (`minimax`) that is not a profile means `{kind: minimax}`.
/// Errors in inline YAML are reported against the file name `--player`.
pub fn parse_player_spec(spec: &str) -> Result<PlayerSpec, ScenarioError> {
    parse_player_spec_with(spec, &ProfileLookup::cwd_only())
}

/// [`parse_player_spec`] with the profile directories given (tests use a
/// temporary directory instead of changing the process's directory).
pub(crate) fn parse_player_spec_with(spec: &str, lookup: &ProfileLookup) -> Result<PlayerSpec, ScenarioError> {
    let doc = Doc {
        file: Path::new("--player"),
    };
    let s = spec.trim();
    let inline = s.starts_with('{') || s.contains(": ") || s.contains('\n');
    let is_path = !inline && (s.ends_with(".yaml") || s.ends_with(".yml") || s.contains(['/', '\\']));
    let is_word = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'));

    if is_path {
        // A relative path the current directory lacks may name a shipped
        // profile (`players/solver.yaml` from an installed package).
        let file = crate::util::data::find(Path::new(s));
        let stem = file
            .file_stem()
            .and_then(|x| x.to_str())
            .unwrap_or("player")
            .to_string();
        if !file.is_file() {
            return Err(doc.err(Loc::START, format!("player profile file `{s}` does not exist")));
        }
        return profile_player(&stem, file);
    }
    if !inline && is_word {
        if let Some(file) = lookup.find(s) {
            return profile_player(s, file);
        }
        if let Some(kind) = PlayerKind::from_name(s) {
            let t = tree::parse(&format!("{{kind: {s}}}")).expect("a kind name is valid YAML");
            let root = t.root.expect("one document");
            let Node::Map { entries, .. } = &root else {
                unreachable!("a flow mapping")
            };
            let p = build_player(doc, Loc::START, entries, None, "the --player spec")?;
            debug_assert_eq!(p.kind.kind(), kind);
            return Ok(p);
        }
        let mut msg = lookup.unknown(s);
        msg.push('.');
        if !msg.contains("did you mean") {
            if let Some(k) = did_you_mean(s, PlayerKind::names()) {
                msg.push_str(&format!(" Did you mean the kind `{k}`?"));
            }
        }
        msg.push_str(&format!(
            " --player also takes a kind ({}), a profile file path, or inline YAML like '{{kind: minimax, depth: 8}}'",
            PlayerKind::names().join(", ")
        ));
        return Err(doc.err(Loc::START, msg));
    }
    let t = tree::parse(s).map_err(|(pos, info)| doc.err(pos, format!("invalid YAML: {info}")))?;
    let root = t.root.unwrap_or(Node::Scalar {
        text: String::new(),
        plain: true,
        pos: Loc::START,
    });
    if !matches!(root, Node::Map { .. }) {
        return Err(doc.err(
            root.pos(),
            format!(
                "--player must be a profile name, a profile file path, or inline YAML like '{{kind: minimax, depth: 8}}'; \
                 got {}",
                root.describe()
            ),
        ));
    }
    parse_entry(doc, &root, lookup, "the --player spec", " in --player")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_keys_are_use_then_the_registry_keys() {
        assert_eq!(entry_keys()[0], "use");
        assert_eq!(&entry_keys()[1..], profile_keys());
        assert!(profile_keys().contains(&"depth") && profile_keys().contains(&"env"));
    }
}
