//! Where shipped data is found when a relative path is not: an installed
//! copy of c4sim (the Python package) carries the shipped network, the
//! solver's books and the player profiles in a folder of its own, laid out
//! like the repository (`models/`, `players/`), so a profile's
//! `model: models/connect4-6x7` works from any directory. The current
//! directory always comes first: a user's own `models/` wins.

use std::path::{Path, PathBuf};
use std::sync::RwLock;

static ROOT: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Sets the folder that relative paths fall back to (`None`: no fallback).
pub fn set_root(root: Option<PathBuf>) {
    *ROOT.write().unwrap_or_else(|e| e.into_inner()) = root;
}

/// The fallback folder, if one is set.
pub fn root() -> Option<PathBuf> {
    ROOT.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `path` itself when it exists (or is absolute, or no fallback is set);
/// otherwise the same relative path under the fallback folder when that
/// exists. Errors then name the path as given.
pub fn find(path: &Path) -> PathBuf {
    if path.is_absolute() || path.exists() {
        return path.to_path_buf();
    }
    match root() {
        Some(r) if r.join(path).exists() => r.join(path),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_fall_back_to_the_root_and_the_current_directory_wins() {
        let dir = std::env::temp_dir().join(format!("c4sim-data-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("models")).unwrap();
        std::fs::write(dir.join("models/x.bin"), b"x").unwrap();
        let rel = Path::new("models/x.bin");
        set_root(None);
        assert_eq!(find(rel), rel);
        set_root(Some(dir.clone()));
        assert_eq!(find(rel), dir.join("models/x.bin"));
        // Something that exists here is taken as it is.
        assert_eq!(find(Path::new("Cargo.toml")), Path::new("Cargo.toml"));
        assert_eq!(find(Path::new("models/none.bin")), Path::new("models/none.bin"));
        set_root(None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
