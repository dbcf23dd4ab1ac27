//! `c4sim.Solver` and `c4sim.AlphaZero`: the engine's perfect solver and
//! network on batches of positions (`c4sim::rl::oracle`), with the GIL
//! released while they work.

use crate::{value_error, Int};
use c4sim::players::alphazero::AlphaZeroBot;
use c4sim::rl::oracle::{self, SolverOracle};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray4, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Mutex;

/// `AlphaZero.policy_value`'s answer: priors (N, cols) and values (N,).
type PolicyValue<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>);

/// The perfect solver: every column's exact score.
#[pyclass(module = "c4sim._c4sim")]
pub struct Solver {
    oracle: Mutex<SolverOracle>,
    cols: usize,
}

impl Solver {
    /// Every column's score of `positions`, as one (N, cols) vector.
    fn solve(&self, py: Python<'_>, positions: &Bound<'_, PyAny>) -> PyResult<(usize, Vec<i32>)> {
        let pos = crate::positions(positions, self.cols)?;
        let mut out = vec![0i32; pos.len() * self.cols];
        py.detach(|| {
            self.oracle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .scores(&pos, &mut out)
        })
        .map_err(value_error)?;
        Ok((pos.len(), out))
    }
}

#[pymethods]
impl Solver {
    #[classattr]
    const FULL: i32 = oracle::FULL;
    #[classattr]
    const UNKNOWN: i32 = oracle::UNKNOWN;

    #[new]
    #[pyo3(signature = (nodes = None, threads = Int(0), rows = Int(6), cols = Int(7), win_length = Int(4), table_log2 = None))]
    fn new(
        py: Python<'_>,
        nodes: Option<Int<u64>>,
        threads: Int<usize>,
        rows: Int<usize>,
        cols: Int<usize>,
        win_length: Int<usize>,
        table_log2: Option<Int<u32>>,
    ) -> PyResult<Self> {
        let table_log2 = table_log2.map(|t| t.0);
        let (rows, cols, win_length) = (rows.0, cols.0, win_length.0);
        let cfg = crate::board(rows, cols, win_length)?;
        let (nodes, threads) = (nodes.map(|n| n.0), threads.0);
        let oracle = py
            .detach(|| SolverOracle::new(cfg, nodes, threads, table_log2))
            .map_err(crate::value_error)?;
        Ok(Solver {
            oracle: Mutex::new(oracle),
            cols,
        })
    }

    fn scores<'py>(&self, py: Python<'py>, positions: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<i32>>> {
        let (n, out) = self.solve(py, positions)?;
        PyArray1::from_vec(py, out).reshape([n, self.cols])
    }

    fn best_moves<'py>(&self, py: Python<'py>, positions: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let (_, out) = self.solve(py, positions)?;
        let best: Vec<i64> = out
            .chunks(self.cols)
            .map(|row| oracle::best_column(row).map_or(-1, |c| c as i64))
            .collect();
        Ok(PyArray1::from_vec(py, best))
    }

    fn __repr__(&self) -> String {
        let o = self.oracle.lock().unwrap_or_else(|e| e.into_inner());
        let c = o.config();
        format!("Solver(rows={}, cols={}, win_length={})", c.rows, c.cols, c.win_length)
    }
}

/// c4sim's AlphaZero network and its search.
#[pyclass(module = "c4sim._c4sim")]
pub struct AlphaZero {
    bot: Mutex<AlphaZeroBot>,
    rows: usize,
    cols: usize,
}

/// The shipped network, found like every shipped file.
const SHIPPED_MODEL: &str = "models/connect4-6x7";

#[pymethods]
impl AlphaZero {
    #[new]
    #[pyo3(signature = (model = None, simulations = Int(800), threads = Int(0)))]
    fn new(py: Python<'_>, model: Option<PathBuf>, simulations: Int<u32>, threads: Int<u32>) -> PyResult<Self> {
        let (simulations, threads) = (simulations.0, threads.0);
        let model = model.unwrap_or_else(|| PathBuf::from(SHIPPED_MODEL));
        let threads = (threads > 0).then_some(threads);
        let bot = py
            .detach(|| AlphaZeroBot::load(&model, simulations, "cpu", threads))
            .map_err(crate::value_error)?;
        let b = bot.board();
        Ok(AlphaZero {
            bot: Mutex::new(bot),
            rows: b.rows,
            cols: b.cols,
        })
    }

    #[getter]
    fn rows(&self) -> usize {
        self.rows
    }
    #[getter]
    fn cols(&self) -> usize {
        self.cols
    }

    fn policy_value<'py>(&self, py: Python<'py>, observations: &Bound<'py, PyAny>) -> PyResult<PolicyValue<'py>> {
        let obs: PyReadonlyArray4<i8> = observations.extract().map_err(|_| {
            PyTypeError::new_err(
                "observations must be an int8 array of shape (N, rows, cols, 2), as the envs give them",
            )
        })?;
        let shape = obs.shape().to_vec();
        if shape[1..] != [self.rows, self.cols, 2] {
            return Err(PyValueError::new_err(format!(
                "observations must have shape (N, {}, {}, 2) for this network, not {shape:?}",
                self.rows, self.cols
            )));
        }
        let n = shape[0];
        let data: Vec<i8> = match obs.as_slice() {
            Ok(s) => s.to_vec(),
            Err(_) => obs.as_array().iter().copied().collect(),
        };
        if data.iter().any(|&x| x != 0 && x != 1) {
            return Err(PyValueError::new_err("observations hold 0s and 1s"));
        }
        let (policy, value) = py.detach(|| {
            let mut bot = self.bot.lock().unwrap_or_else(|e| e.into_inner());
            oracle::policy_value(&mut bot, &data, n)
        });
        Ok((
            PyArray1::from_vec(py, policy).reshape([n, self.cols])?,
            PyArray1::from_vec(py, value),
        ))
    }

    fn search<'py>(&self, py: Python<'py>, positions: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let pos = crate::positions(positions, self.cols)?;
        let n = pos.len();
        let shares = py.detach(|| {
            let mut bot = self.bot.lock().unwrap_or_else(|e| e.into_inner());
            let mut all = Vec::with_capacity(n * self.cols);
            for (i, p) in pos.iter().enumerate() {
                all.extend(bot.visit_shares(p).map_err(|e| format!("position {i}: {e}"))?);
            }
            Ok::<_, String>(all)
        });
        let shares = shares.map_err(PyValueError::new_err)?;
        PyArray1::from_vec(py, shares).reshape([n, self.cols])
    }
}
