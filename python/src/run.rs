//! `c4sim.run`: any scenario, in this process, through the library's one
//! entry point (`c4sim::run::run_scenario`), as `c4sim run` runs it.

use c4sim::actors::mode::ModeError;
use c4sim::run::{run_scenario, RunOptions, RunOutcome};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::path::{Path, PathBuf};

/// A JSON value as the Python value `json.loads` makes of it.
fn to_python<'py>(py: Python<'py>, v: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

#[pyfunction]
#[pyo3(signature = (scenario, *, agents = None, fresh = false, out = None, json = false))]
pub fn run<'py>(
    py: Python<'py>,
    scenario: &Bound<'py, PyAny>,
    agents: Option<&Bound<'py, PyDict>>,
    fresh: bool,
    out: Option<PathBuf>,
    json: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = if scenario.is_instance_of::<PyDict>() {
        // A dict is the file's keys; JSON is YAML, so the scenario parser reads
        // it (named `scenario.yaml` in messages and default report folders).
        let text = crate::to_json(scenario)?;
        c4sim::scenario::parse_str(&text, Path::new("scenario.yaml"))
    } else {
        let path: PathBuf = if let Ok(s) = scenario.cast::<PyString>() {
            PathBuf::from(s.to_cow()?.as_ref())
        } else {
            scenario.extract()?
        };
        c4sim::scenario::load(&path)
    }
    .map_err(crate::value_error)?;
    // Kept until the run ends: `{kind: agent, name: N}` players play these.
    let registrations = crate::agents::register_all(agents)?;
    let opts = RunOptions {
        json,
        fresh,
        out,
        ..Default::default()
    };
    let outcome = py
        .detach(|| {
            let outcome = run_scenario(sc, &opts);
            // Ended here, without the GIL: ending waits for an agent call
            // in flight, which needs the GIL to finish; none starts after,
            // so nothing calls into Python once `run` has returned.
            drop(registrations);
            outcome
        })
        .map_err(|e| match e {
            ModeError::Usage(m) => PyValueError::new_err(m.to_string()),
            ModeError::Failed(m) => PyRuntimeError::new_err(m.to_string()),
            ModeError::Interrupted(m) => {
                // The Ctrl-C also reached Python's own handler; consume that
                // pending interrupt, so the caller sees one KeyboardInterrupt.
                let _ = py.check_signals();
                PyKeyboardInterrupt::new_err(m.trim().to_string())
            }
        })?;
    let d = PyDict::new(py);
    match outcome {
        RunOutcome::Match { games } => {
            d.set_item("mode", "match")?;
            d.set_item("games", to_python(py, &games)?)?;
        }
        RunOutcome::Tournament { dir, report } => {
            d.set_item("mode", "tournament")?;
            d.set_item("dir", dir.display().to_string())?;
            d.set_item("report", to_python(py, &report)?)?;
        }
        RunOutcome::Train { out } => {
            d.set_item("mode", "train")?;
            d.set_item("out", out.display().to_string())?;
        }
        RunOutcome::Served => {
            d.set_item("mode", "served")?;
        }
    }
    Ok(d)
}
