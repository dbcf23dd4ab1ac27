//! `c4sim.VectorEnv`: the engine's batched env (`c4sim::rl::vector`) with
//! numpy arrays in and out. Each step's arrays are new numpy arrays (or,
//! with `copy=False`, the same ones each time) that the engine writes in
//! place with the GIL released; nothing is copied after.

use crate::Int;
use c4sim::rl::vector::{StepOut, VecEnv};
use numpy::{PyArray1, PyArray2, PyArray4, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Mutex;

/// `num_envs` games stepped together; see the stub for the contract.
#[pyclass(module = "c4sim._c4sim")]
pub struct VectorEnv {
    env: Mutex<VecEnv>,
    /// `copy=False`: the arrays every step writes again (made at the first).
    kept: Option<Mutex<Option<Kept>>>,
    n: usize,
    rows: usize,
    cols: usize,
    win_length: usize,
}

/// The arrays a `copy=False` env hands out again and again.
struct Kept {
    obs: Py<PyArray4<i8>>,
    mask: Py<PyArray2<i8>>,
    rewards: Py<PyArray1<f32>>,
    terminated: Py<PyArray1<bool>>,
    truncated: Py<PyArray1<bool>>,
    final_moves: Py<PyArray2<i8>>,
    final_len: Py<PyArray1<i32>>,
}

/// The arrays of one step, made by numpy, written by the engine.
struct Arrays<'py> {
    obs: Bound<'py, PyArray4<i8>>,
    mask: Bound<'py, PyArray2<i8>>,
    rewards: Bound<'py, PyArray1<f32>>,
    terminated: Bound<'py, PyArray1<bool>>,
    final_moves: Bound<'py, PyArray2<i8>>,
    final_len: Bound<'py, PyArray1<i32>>,
    /// Always all false: a game of Connect Four always ends.
    truncated: Bound<'py, PyArray1<bool>>,
}

impl<'py> Arrays<'py> {
    fn new(py: Python<'py>, n: usize, rows: usize, cols: usize) -> Self {
        // Uninitialised: the engine writes every element of every array.
        // SAFETY: numpy allocates them; nothing reads them before the engine
        // has written them, and an error drops them unread.
        unsafe {
            Arrays {
                obs: PyArray4::new(py, [n, rows, cols, 2], false),
                mask: PyArray2::new(py, [n, cols], false),
                rewards: PyArray1::new(py, [n], false),
                terminated: PyArray1::new(py, [n], false),
                final_moves: PyArray2::new(py, [n, rows * cols], false),
                final_len: PyArray1::new(py, [n], false),
                truncated: PyArray1::zeros(py, [n], false),
            }
        }
    }

    /// A `copy=False` env's arrays: the kept ones, made the first time.
    fn kept(py: Python<'py>, kept: &Mutex<Option<Kept>>, n: usize, rows: usize, cols: usize) -> Self {
        let mut k = kept.lock().unwrap_or_else(|e| e.into_inner());
        let k = k.get_or_insert_with(|| {
            let a = Arrays::new(py, n, rows, cols);
            Kept {
                obs: a.obs.unbind(),
                mask: a.mask.unbind(),
                rewards: a.rewards.unbind(),
                terminated: a.terminated.unbind(),
                truncated: a.truncated.unbind(),
                final_moves: a.final_moves.unbind(),
                final_len: a.final_len.unbind(),
            }
        });
        Arrays {
            obs: k.obs.bind(py).clone(),
            mask: k.mask.bind(py).clone(),
            rewards: k.rewards.bind(py).clone(),
            terminated: k.terminated.bind(py).clone(),
            truncated: k.truncated.bind(py).clone(),
            final_moves: k.final_moves.bind(py).clone(),
            final_len: k.final_len.bind(py).clone(),
        }
    }

    /// Runs `f` on the arrays' memory with the GIL released.
    fn fill<T: Send>(&self, py: Python<'py>, f: impl FnOnce(StepOut<'_>) -> T + Send) -> T {
        // SAFETY: the arrays were made just now and are not shared with
        // Python code yet, so these are the only views of their memory; or
        // (`copy=False`) they are the env's kept arrays, which the caller
        // agreed to let each step overwrite: the env's lock serialises the
        // writers, and a reader racing a step reads numbers, never freed memory.
        let out = unsafe {
            StepOut {
                obs: self.obs.as_slice_mut().expect("contiguous"),
                mask: self.mask.as_slice_mut().expect("contiguous"),
                rewards: self.rewards.as_slice_mut().expect("contiguous"),
                terminated: self.terminated.as_slice_mut().expect("contiguous"),
                final_moves: self.final_moves.as_slice_mut().expect("contiguous"),
                final_len: self.final_len.as_slice_mut().expect("contiguous"),
            }
        };
        py.detach(move || f(out))
    }

    /// `({"observation", "action_mask"}, {"final_moves", "final_length"})`.
    fn obs_and_infos(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let obs = PyDict::new(py);
        obs.set_item("observation", &self.obs)?;
        obs.set_item("action_mask", &self.mask)?;
        let infos = PyDict::new(py);
        infos.set_item("final_moves", &self.final_moves)?;
        infos.set_item("final_length", &self.final_len)?;
        Ok((obs, infos))
    }
}

impl VectorEnv {
    /// This step's arrays: new ones, or with `copy=False` the kept ones.
    fn arrays<'py>(&self, py: Python<'py>) -> Arrays<'py> {
        match &self.kept {
            Some(k) => Arrays::kept(py, k, self.n, self.rows, self.cols),
            None => Arrays::new(py, self.n, self.rows, self.cols),
        }
    }

    fn env(&self) -> std::sync::MutexGuard<'_, VecEnv> {
        self.env.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The actions as an int64 vector: any integer array or sequence of the
/// right length; floats, bools and other shapes are refused.
fn actions(obj: &Bound<'_, PyAny>, n: usize, cols: usize) -> PyResult<Vec<i64>> {
    // The common case first, without a numpy call: a contiguous int64 row
    // of the right length (what `random_actions` and `argmax` give).
    if let Ok(arr) = obj.cast::<PyArray1<i64>>() {
        if let Ok(ro) = arr.try_readonly() {
            if let Ok(s) = ro.as_slice() {
                if s.len() == n {
                    return Ok(s.to_vec());
                }
            }
        }
    }
    let py = obj.py();
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (obj,))?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    if kind != "i" && kind != "u" {
        let dtype = arr.getattr("dtype")?.str()?.to_string();
        return Err(PyTypeError::new_err(format!(
            "actions must be integers (a column per env), not dtype {dtype}"
        )));
    }
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    if shape != [n] {
        return Err(PyValueError::new_err(format!(
            "actions must have shape ({n},), one column per env, not {shape:?}"
        )));
    }
    if kind == "u" {
        // Above i64's range a cast would wrap: name the column as given.
        let big = np.call_method1("argmax", (arr.call_method1("__gt__", (i64::MAX as u64,))?,))?;
        let env: usize = big.extract()?;
        let col = arr.get_item(env)?;
        if col.gt(i64::MAX as u64)? {
            return Err(PyValueError::new_err(format!(
                "env {env}: column {col} is out of range (0..{cols})"
            )));
        }
    }
    let arr = arr.call_method1("astype", ("int64",))?;
    let a: PyReadonlyArray1<i64> = arr.extract()?;
    Ok(a.as_array().to_vec())
}

#[pymethods]
impl VectorEnv {
    #[new]
    #[pyo3(signature = (num_envs, rows = Int(6), cols = Int(7), win_length = Int(4), seed = Int(0), opponent = None, threads = Int(0), copy = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        num_envs: Int<usize>,
        rows: Int<usize>,
        cols: Int<usize>,
        win_length: Int<usize>,
        seed: Int<u64>,
        opponent: Option<&Bound<'_, PyAny>>,
        threads: Int<usize>,
        copy: bool,
    ) -> PyResult<Self> {
        let (num_envs, rows, cols, win_length) = (num_envs.0, rows.0, cols.0, win_length.0);
        let (seed, threads) = (seed.0, threads.0);
        let cfg = crate::board(rows, cols, win_length)?;
        let spec = opponent.map(crate::player_spec).transpose()?;
        if let Some(s) = &spec {
            if s.kind.runs_as() != c4sim::players::kinds::RunsAs::Bot {
                return Err(PyValueError::new_err(format!(
                    "an opponent plays in this process: kind `{}` cannot",
                    s.kind.kind().info().name
                )));
            }
        }
        let env = py
            .detach(|| {
                let make = spec.as_ref().map(|s| move || c4sim::players::build_strategy(s, seed));
                VecEnv::new(
                    num_envs,
                    cfg,
                    seed,
                    make.as_ref()
                        .map(|f| f as &dyn Fn() -> Result<_, c4sim::players::BuildError>),
                    threads,
                )
            })
            .map_err(crate::value_error)?;
        Ok(VectorEnv {
            env: Mutex::new(env),
            kept: (!copy).then(|| Mutex::new(None)),
            n: num_envs,
            rows,
            cols,
            win_length,
        })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.n
    }
    #[getter]
    fn rows(&self) -> usize {
        self.rows
    }
    #[getter]
    fn cols(&self) -> usize {
        self.cols
    }
    #[getter]
    fn win_length(&self) -> usize {
        self.win_length
    }
    #[getter]
    fn threads(&self) -> usize {
        self.env().threads()
    }

    #[pyo3(signature = (seed = None))]
    fn reset<'py>(
        &self,
        py: Python<'py>,
        seed: Option<Int<u64>>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let a = self.arrays(py);
        let seed = seed.map(|s| s.0);
        a.fill(py, |out| self.env().reset(seed, out))
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        a.obs_and_infos(py)
    }

    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
    ) -> PyResult<(
        Bound<'py, PyDict>,
        Bound<'py, PyArray1<f32>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyDict>,
    )> {
        let actions = self::actions(actions, self.n, self.cols)?;
        let a = self.arrays(py);
        a.fill(py, |out| self.env().step(&actions, out)).map_err(|e| match e {
            c4sim::rl::vector::StepError::Opponent { .. } => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
            _ => PyValueError::new_err(e.to_string()),
        })?;
        let (obs, infos) = a.obs_and_infos(py)?;
        Ok((obs, a.rewards, a.terminated, a.truncated, infos))
    }

    fn random_actions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let out = PyArray1::<i64>::zeros(py, [self.n], false);
        {
            let mut w = out.readwrite();
            let s = w.as_slice_mut().expect("contiguous");
            py.detach(|| self.env().random_actions(s));
        }
        out
    }

    fn moves(&self, env: Int<usize>) -> PyResult<Vec<usize>> {
        let env = env.0;
        self.env()
            .moves(env)
            .ok_or_else(|| PyValueError::new_err(format!("env {env} is out of range (0..{})", self.n)))
    }

    fn __len__(&self) -> usize {
        self.n
    }

    fn __repr__(&self) -> String {
        format!(
            "VectorEnv(num_envs={}, rows={}, cols={}, win_length={})",
            self.n, self.rows, self.cols, self.win_length
        )
    }
}
