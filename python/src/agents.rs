//! Python objects as c4sim players (`{kind: agent}`): each is registered
//! with the engine (`c4sim::players::agent`) for the length of one run.
//! This module only converts: observations to numpy, answers to columns.

use c4sim::game::Answer;
use c4sim::players::agent::{self, Agent, AgentError, Observation, Registration};
use numpy::{PyArray1, PyArray2, PyArray3, PyArray4, PyArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::Arc;

/// How a Python agent is called.
enum Call {
    /// `act_batch(observations) -> columns`, every waiting game at once.
    Batch,
    /// `act(observation) -> column`.
    Act,
    /// `agent(observation) -> column` (a plain function).
    Callable,
}

struct PyAgent {
    obj: Py<PyAny>,
    call: Call,
}

/// A Python exception in words: `ValueError: bad input`.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let name = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "exception".into());
    format!("{name}: {}", e.value(py))
}

/// A column from what the agent returned; anything but an integer is
/// refused as a move (and re-asked) rather than guessed.
fn column(v: &Bound<'_, PyAny>) -> Answer {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Answer::Malformed(format!("not a column: {v}"));
    }
    match v.call_method0("__index__").and_then(|i| i.extract::<i64>()) {
        Ok(c) => Answer::Column(c),
        Err(_) => Answer::Malformed(format!(
            "not a column: {}",
            v.repr().map(|r| r.to_string()).unwrap_or_default()
        )),
    }
}

impl PyAgent {
    fn one<'py>(py: Python<'py>, o: &Observation) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let planes = PyArray1::from_slice(py, &o.planes).reshape([o.rows, o.cols, 2])?;
        let planes: Bound<'py, PyArray3<i8>> = planes;
        d.set_item("observation", planes)?;
        d.set_item("action_mask", PyArray1::from_slice(py, &o.mask))?;
        Ok(d)
    }

    fn batch<'py>(py: Python<'py>, obs: &[Observation]) -> PyResult<Bound<'py, PyDict>> {
        let (rows, cols) = (obs[0].rows, obs[0].cols);
        let planes: Vec<i8> = obs.iter().flat_map(|o| o.planes.iter().copied()).collect();
        let mask: Vec<i8> = obs.iter().flat_map(|o| o.mask.iter().copied()).collect();
        let d = PyDict::new(py);
        let p: Bound<'py, PyArray4<i8>> = PyArray1::from_vec(py, planes).reshape([obs.len(), rows, cols, 2])?;
        let m: Bound<'py, PyArray2<i8>> = PyArray1::from_vec(py, mask).reshape([obs.len(), cols])?;
        d.set_item("observation", p)?;
        d.set_item("action_mask", m)?;
        Ok(d)
    }
}

impl Agent for PyAgent {
    fn act(&self, obs: &[Observation]) -> Vec<Result<Answer, AgentError>> {
        Python::attach(|py| {
            let obj = self.obj.bind(py);
            match self.call {
                Call::Batch => {
                    let answers = Self::batch(py, obs).and_then(|d| obj.call_method1("act_batch", (d,)));
                    let cols: PyResult<Vec<Bound<'_, PyAny>>> =
                        answers.and_then(|a| a.try_iter()?.collect::<PyResult<Vec<_>>>());
                    match cols {
                        Ok(cols) if cols.len() == obs.len() => cols.iter().map(|c| Ok(column(c))).collect(),
                        Ok(cols) => {
                            let why = format!(
                                "act_batch returned {} columns for {} observations",
                                cols.len(),
                                obs.len()
                            );
                            obs.iter().map(|_| Err(AgentError::Raised(why.clone()))).collect()
                        }
                        Err(e) => {
                            let why = describe(py, &e);
                            obs.iter().map(|_| Err(AgentError::Raised(why.clone()))).collect()
                        }
                    }
                }
                Call::Act | Call::Callable => obs
                    .iter()
                    .map(|o| {
                        let d = Self::one(py, o).map_err(|e| AgentError::Raised(describe(py, &e)))?;
                        let r = match self.call {
                            Call::Act => obj.call_method1("act", (d,)),
                            _ => obj.call1((d,)),
                        };
                        r.map(|c| column(&c)).map_err(|e| AgentError::Raised(describe(py, &e)))
                    })
                    .collect(),
            }
        })
    }
}

/// Registers every agent of `agents` (a dict of name → agent); the
/// registrations last as long as the returned guards.
pub fn register_all(agents: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<Registration>> {
    let mut regs = Vec::new();
    let Some(agents) = agents else { return Ok(regs) };
    for (name, obj) in agents.iter() {
        let name: String = name
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("agents: the keys are the players' names (strings)"))?
            .to_cow()?
            .into_owned();
        let call = if obj.hasattr("act_batch")? {
            Call::Batch
        } else if obj.hasattr("act")? {
            Call::Act
        } else if obj.is_callable() {
            Call::Callable
        } else {
            return Err(PyTypeError::new_err(format!(
                "agent `{name}` has neither act(observation) nor act_batch(observations) and is not callable"
            )));
        };
        let a = PyAgent {
            obj: obj.unbind(),
            call,
        };
        regs.push(agent::register(&name, Arc::new(a)).map_err(crate::value_error)?);
    }
    Ok(regs)
}
