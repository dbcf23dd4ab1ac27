//! The Python package's own tests (pytest, `python/tests/`), run from the
//! README's one test command.
//!
//! The test makes a virtual environment in `target/python-venv` (once; kept
//! between runs), installs what the tests need from PyPI (maturin, numpy,
//! pettingzoo and pygame, pytest), builds the extension into it with
//! `maturin develop --release` (sharing this workspace's `target/`, so the
//! engine is not compiled twice), then runs pytest on the package's tests.
//! Where Python 3 or its `venv` module is missing it says SKIPPED and passes;
//! `.ci/run` sets `C4SIM_REQUIRE_PYTHON=1`, where that fails instead.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What pytest needs, from PyPI: pyproject.toml's build requirement and
/// its `test` extra.
const REQUIREMENTS: &[&str] = &[
    "maturin>=1.9.4,<2",
    "numpy>=1.21",
    "pettingzoo>=1.25",
    "pygame>=2.1",
    "pytest>=7",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `cmd`, panicking with its output when it fails.
fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The venv's interpreter, made (and its requirements installed) if needed;
/// `None` where this machine cannot make one.
fn venv() -> Option<PathBuf> {
    let dir = root().join("target/python-venv");
    let python = dir.join("bin/python");
    let stamp = dir.join("c4sim-requirements.txt");
    let wanted = REQUIREMENTS.join("\n");
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Some(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&dir)
        .output()
        .is_ok_and(|o| o.status.success());
    if !made {
        return None;
    }
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(REQUIREMENTS);
    run(&mut pip, "pip install (the Python tests' requirements)");
    std::fs::write(&stamp, wanted).expect("write the venv's stamp");
    Some(python)
}

/// Builds the extension into the venv (editable: `python/c4sim` is the package).
fn build_extension(python: &Path) {
    let bin = python.parent().expect("the venv's bin");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut maturin = Command::new(bin.join("maturin"));
    maturin
        .args(["develop", "--release", "--quiet"])
        .current_dir(root())
        .env("VIRTUAL_ENV", python.parent().and_then(Path::parent).expect("the venv"))
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", root().join("target"));
    run(&mut maturin, "maturin develop --release");
}

#[test]
fn the_python_package_passes_its_pytest_suite() {
    let required = std::env::var("C4SIM_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
    let Some(python) = venv() else {
        assert!(
            !required,
            "C4SIM_REQUIRE_PYTHON=1 but `python3 -m venv` does not work here"
        );
        eprintln!("SKIPPED: no `python3 -m venv` (apt-get install -y python3-venv)");
        return;
    };
    build_extension(&python);
    // From another directory, so the tests import the installed package
    // and find its shipped files as a user's program would.
    let tmp = std::env::temp_dir();
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root().join("python/tests"))
        .current_dir(&tmp)
        .output()
        .expect("start pytest");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", text.lines().rev().take(3).collect::<Vec<_>>().join("\n"));
    assert!(out.status.success(), "pytest failed:\n{text}");
}
