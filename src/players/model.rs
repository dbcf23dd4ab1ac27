//! Reading trained models from disk: a `model:` path (a training output
//! directory, a checkpoint directory, or its weights file) resolved to its
//! newest complete checkpoint, its `meta.json` checked, its network loaded.
//! The checkpoint layout it reads is written by `train::checkpoint`.

use crate::az::meta::{Meta, FORMAT, META_FILE, MODEL_FILE, VERSION};
use std::path::{Path, PathBuf};

/// Complete checkpoints under `out/checkpoints`, oldest first.
pub fn list(out: &Path) -> Vec<(u32, PathBuf)> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(out.join("checkpoints")) else {
        return v;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_prefix("iter-").and_then(|s| s.parse::<u32>().ok()) {
            if e.path().join(META_FILE).is_file() {
                v.push((n, e.path()));
            }
        }
    }
    v.sort();
    v
}

/// The newest complete checkpoint in a training output directory.
pub fn latest(out: &Path) -> Option<PathBuf> {
    list(out).pop().map(|(_, p)| p)
}

/// Why a `model:` path gives no network.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{} is not a c4sim checkpoint: {source}", path.display())]
    NotMeta { path: PathBuf, source: serde_json::Error },
    #[error(
        "{} is format `{}` version {}; this c4sim reads `{FORMAT}` up to version {VERSION}",
        path.display(), meta.format, meta.version
    )]
    Version { path: PathBuf, meta: Box<Meta> },
    #[error("cannot load {}: {source}", path.display())]
    Weights { path: PathBuf, source: candle_core::Error },
    #[error("{} has no complete checkpoint yet", path.display())]
    NoCheckpoint { path: PathBuf },
    #[error("model `{}` does not exist (expected a training `out` directory or a checkpoint directory)", path.display())]
    Missing { path: PathBuf },
    #[error(
        "`{}` is not a c4sim model: expected a training `out` directory (with checkpoints/), \
         a checkpoint directory (with {META_FILE}), or its {MODEL_FILE}",
        path.display()
    )]
    NotAModel { path: PathBuf },
}

/// Lets the shells that still speak in messages use `?` on a model error.
impl From<ModelError> for String {
    fn from(e: ModelError) -> String {
        e.to_string()
    }
}

/// A checkpoint's `meta.json`, refused when it is another format or newer.
pub fn read_meta(dir: &Path) -> Result<Meta, ModelError> {
    let path = dir.join(META_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| ModelError::Read {
        path: path.clone(),
        source,
    })?;
    let meta: Meta = serde_json::from_str(&text).map_err(|source| ModelError::NotMeta {
        path: path.clone(),
        source,
    })?;
    if meta.format != FORMAT || meta.version > VERSION {
        return Err(ModelError::Version {
            path,
            meta: Box::new(meta),
        });
    }
    Ok(meta)
}

/// Loads the network a `model:` path names (see [`resolve_model`]) onto
/// `device`, with its metadata.
pub fn load_model(
    model: &Path,
    device: &candle_core::Device,
) -> Result<(Meta, crate::az::network::PolicyValueNet), ModelError> {
    let dir = resolve_model(model)?;
    let meta = read_meta(&dir)?;
    let file = dir.join(MODEL_FILE);
    let net = crate::az::network::PolicyValueNet::load(meta.network, &file, device).map_err(|source| {
        ModelError::Weights {
            path: file.clone(),
            source,
        }
    })?;
    Ok((meta, net))
}

/// Resolves a `model:` path: a checkpoint directory (with `meta.json`), a
/// training output directory (its latest checkpoint), or a file inside a
/// checkpoint directory (`model.safetensors`).
pub fn resolve_model(path: &Path) -> Result<PathBuf, ModelError> {
    let found = crate::util::data::find(path);
    let path = found.as_path();
    if path.join(META_FILE).is_file() {
        return Ok(path.to_path_buf());
    }
    if path.is_file() {
        if let Some(dir) = path.parent().filter(|d| d.join(META_FILE).is_file()) {
            return Ok(dir.to_path_buf());
        }
    }
    if path.join("checkpoints").is_dir() {
        return latest(path).ok_or_else(|| ModelError::NoCheckpoint {
            path: path.to_path_buf(),
        });
    }
    if !path.exists() {
        return Err(ModelError::Missing {
            path: path.to_path_buf(),
        });
    }
    Err(ModelError::NotAModel {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_meta_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(META_FILE), "{\"format\": 3}").unwrap();
        assert!(matches!(read_meta(dir.path()), Err(ModelError::NotMeta { .. })));
    }

    #[test]
    fn a_path_that_is_no_model_says_what_was_expected() {
        let dir = tempfile::tempdir().unwrap();
        assert!(resolve_model(&dir.path().join("nope"))
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        assert!(matches!(resolve_model(dir.path()), Err(ModelError::NotAModel { .. })));
    }
}
