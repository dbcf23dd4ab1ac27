//! `c4sim._c4sim`: the Python package's native module. It converts Python
//! values to the engine's types and back and delegates everything else to
//! the `c4sim` library (rules, solver, search, network, scenarios), with the
//! GIL released while the engine works. Errors become Python exceptions:
//! bad input `ValueError` / `TypeError`, a failure `RuntimeError`, Ctrl-C
//! `KeyboardInterrupt`; never a panic.

mod agents;
mod game;
mod oracles;
mod run;
mod vector;

use c4sim::game::BoardConfig;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// Any displayable error as `ValueError`.
pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// An integer argument whose out-of-range values are `ValueError`s saying
/// what is allowed (pyo3 alone raises `OverflowError` for `-1` where Rust
/// wants a `usize`); pyo3 adds the argument's name as a note.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Int<T>(pub T);

/// The range an [`Int`] accepts, for its message.
pub(crate) trait Range {
    const MIN: i128;
    const MAX: u128;
}
macro_rules! range {
    ($($t:ty),*) => {$(impl Range for $t {
        const MIN: i128 = <$t>::MIN as i128;
        const MAX: u128 = <$t>::MAX as u128;
    })*};
}
range!(usize, u64, u32, i64);

impl<'a, 'py, T> FromPyObject<'a, 'py> for Int<T>
where
    T: FromPyObject<'a, 'py> + Range,
    T::Error: Into<PyErr>,
{
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<T>() {
            Ok(v) => Ok(Int(v)),
            Err(e) => {
                let e: PyErr = e.into();
                if e.is_instance_of::<PyOverflowError>(obj.py()) {
                    let text = obj.str().map(|t| t.to_string()).unwrap_or_default();
                    Err(PyValueError::new_err(format!(
                        "{text} is out of range: a whole number from {} to {} is allowed",
                        T::MIN,
                        T::MAX
                    )))
                } else {
                    Err(e)
                }
            }
        }
    }
}

/// A board from the `rows`, `cols`, `win_length` keywords.
pub(crate) fn board(rows: usize, cols: usize, win_length: usize) -> PyResult<BoardConfig> {
    BoardConfig::new(rows, cols, win_length).map_err(value_error)
}

/// One position: a move string (columns from 1, as on the command line) or
/// a sequence of 0-based columns. Only the columns' range is checked here;
/// the engine checks the rest.
pub(crate) fn position(obj: &Bound<'_, PyAny>, cols: usize) -> PyResult<Vec<usize>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return c4sim::game::openings::parse_move_string(&s.to_cow()?, cols).map_err(value_error);
    }
    // Any iterable of ints: a list, a tuple, a numpy row (a replayed
    // `final_moves` row, say).
    let items = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "a position is a move string like \"4453\" or a sequence of 0-based columns, not {}",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    let mut moves = Vec::new();
    let mut padded = false;
    for item in items {
        let c: i64 = item?
            .extract()
            .map_err(|_| PyTypeError::new_err("a column is an int"))?;
        // Trailing −1s are padding, as in the envs' `final_moves` rows.
        if c == -1 {
            padded = true;
            continue;
        }
        if padded {
            return Err(PyValueError::new_err("a column follows the −1 padding"));
        }
        if c < 0 || c >= cols as i64 {
            return Err(PyValueError::new_err(format!("column {c} is out of range (0..{cols})")));
        }
        moves.push(c as usize);
    }
    Ok(moves)
}

/// Many positions (a list of what [`position`] takes); a lone string is
/// refused, so `"4453"` is not read as four one-move positions.
pub(crate) fn positions(obj: &Bound<'_, PyAny>, cols: usize) -> PyResult<Vec<Vec<usize>>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "positions is a list of positions: write [\"4453\"] for one",
        ));
    }
    obj.try_iter()
        .map_err(|_| PyTypeError::new_err("positions is a list of move strings or of column sequences"))?
        .enumerate()
        .map(|(i, p)| position(&p?, cols).map_err(|e| prefix(e, &format!("position {i}: "))))
        .collect()
}

/// The same exception with `what` in front of its message.
fn prefix(e: PyErr, what: &str) -> PyErr {
    Python::attach(|py| {
        let msg = format!("{what}{}", e.value(py));
        if e.is_instance_of::<PyTypeError>(py) {
            PyTypeError::new_err(msg)
        } else {
            PyValueError::new_err(msg)
        }
    })
}

/// A player spec from Python: a dict (as JSON, which YAML reads), an
/// inline YAML mapping, a profile name or a profile file.
pub(crate) fn player_spec(obj: &Bound<'_, PyAny>) -> PyResult<c4sim::players::PlayerSpec> {
    let text = if let Ok(s) = obj.cast::<PyString>() {
        s.to_cow()?.into_owned()
    } else {
        to_json(obj)?
    };
    c4sim::scenario::parse_player_spec(&text).map_err(value_error)
}

/// A Python value (dict, list, str, numbers, …) as JSON text, through the
/// standard library's `json` (paths become strings).
pub(crate) fn to_json(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = obj.py();
    let json = py.import("json")?;
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("default", py.import("builtins")?.getattr("str")?)?;
    json.call_method("dumps", (obj,), Some(&kwargs))?.extract()
}

/// Where the installed package's data is (shipped network, books, profiles).
#[pyfunction]
fn data_dir() -> Option<String> {
    c4sim::util::data::root().map(|p| p.display().to_string())
}

/// Tells the engine where the package's data folder is.
#[pyfunction]
fn _set_data_dir(path: std::path::PathBuf) {
    c4sim::util::data::set_root(Some(path));
}

#[pymodule]
fn _c4sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(data_dir, m)?)?;
    m.add_function(wrap_pyfunction!(_set_data_dir, m)?)?;
    m.add_class::<game::Game>()?;
    m.add_class::<vector::VectorEnv>()?;
    m.add_class::<oracles::Solver>()?;
    m.add_class::<oracles::AlphaZero>()?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    Ok(())
}
