//! `c4sim.Game`: one two-player game under the engine's referee
//! (`c4sim::game::Game`), for the PettingZoo drop-in and anyone who wants
//! one game at a time.

use crate::{value_error, Int};
use c4sim::game::{Answer, BoardConfig, Game as Referee};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use pyo3::prelude::*;

/// One two-player game: legality, turn order and wins are the referee's.
#[pyclass(module = "c4sim._c4sim")]
#[derive(Clone)]
pub struct Game {
    cfg: BoardConfig,
    game: Referee,
}

impl Game {
    /// The seat whose piece is at (`row` from the top, `col`), if any.
    fn seat_at(&self, row: usize, col: usize) -> Option<usize> {
        self.game.board().cell(self.cfg.rows - 1 - row, col)
    }
}

#[pymethods]
impl Game {
    #[new]
    #[pyo3(signature = (rows = Int(6), cols = Int(7), win_length = Int(4)))]
    fn new(rows: Int<usize>, cols: Int<usize>, win_length: Int<usize>) -> PyResult<Self> {
        let cfg = crate::board(rows.0, cols.0, win_length.0)?;
        Ok(Game {
            cfg,
            game: Referee::new(cfg, 2, 1),
        })
    }

    #[getter]
    fn rows(&self) -> usize {
        self.cfg.rows
    }
    #[getter]
    fn cols(&self) -> usize {
        self.cfg.cols
    }
    #[getter]
    fn win_length(&self) -> usize {
        self.cfg.win_length
    }
    #[getter]
    fn to_move(&self) -> usize {
        self.game.moves().len() % 2
    }
    #[getter]
    fn over(&self) -> bool {
        self.game.is_over()
    }
    #[getter]
    fn winner(&self) -> Option<usize> {
        self.game.outcome().and_then(|o| o.winner)
    }
    #[getter]
    fn moves(&self) -> Vec<usize> {
        self.game.moves().to_vec()
    }

    fn reset(&mut self) {
        self.game = Referee::new(self.cfg, 2, 1);
    }

    fn is_legal(&self, column: Int<i64>) -> bool {
        let column = column.0;
        !self.game.is_over() && self.game.board().check(column).is_ok()
    }

    /// 0 the game goes on, 1 the mover made a line, 2 a draw.
    fn play(&mut self, column: Int<i64>) -> PyResult<u8> {
        let column = column.0;
        if self.game.is_over() {
            return Err(value_error("the game is over"));
        }
        // Checked first, so a refused column changes nothing (the referee
        // would count it as an illegal answer).
        self.game.board().check(column).map_err(value_error)?;
        let seat = self.to_move();
        self.game.submit(Answer::Column(column));
        Ok(match self.game.outcome() {
            None => 0,
            Some(o) if o.winner == Some(seat) => 1,
            Some(_) => 2,
        })
    }

    fn open_columns<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i8>> {
        let b = self.game.board();
        let v: Vec<i8> = (0..self.cfg.cols).map(|c| i8::from(b.is_legal(c))).collect();
        PyArray1::from_vec(py, v)
    }

    fn action_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i8>> {
        let open = !self.game.is_over();
        let b = self.game.board();
        let v: Vec<i8> = (0..self.cfg.cols).map(|c| i8::from(open && b.is_legal(c))).collect();
        PyArray1::from_vec(py, v)
    }

    /// (rows, cols): 0 empty, 1 seat 0's piece, 2 seat 1's; row 0 the top row.
    fn board<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i8>> {
        let (rows, cols) = (self.cfg.rows, self.cfg.cols);
        let a = PyArray2::<i8>::zeros(py, [rows, cols], false);
        {
            let mut w = a.readwrite();
            let s = w.as_slice_mut().expect("a new array is contiguous");
            for r in 0..rows {
                for c in 0..cols {
                    if let Some(seat) = self.seat_at(r, c) {
                        s[r * cols + c] = seat as i8 + 1;
                    }
                }
            }
        }
        a
    }

    /// (rows, cols, 2): channel 0 `seat`'s pieces, channel 1 the other's.
    fn observation<'py>(&self, py: Python<'py>, seat: Int<usize>) -> PyResult<Bound<'py, PyArray3<i8>>> {
        let seat = seat.0;
        if seat > 1 {
            return Err(value_error(format!("seat is 0 or 1, not {seat}")));
        }
        let (rows, cols) = (self.cfg.rows, self.cfg.cols);
        let a = PyArray3::<i8>::zeros(py, [rows, cols, 2], false);
        {
            let mut w = a.readwrite();
            let s = w.as_slice_mut().expect("a new array is contiguous");
            for r in 0..rows {
                for c in 0..cols {
                    if let Some(owner) = self.seat_at(r, c) {
                        s[(r * cols + c) * 2 + usize::from(owner != seat)] = 1;
                    }
                }
            }
        }
        Ok(a)
    }

    /// The board in the engine's ascii look, columns numbered from 1.
    fn render(&self) -> String {
        c4sim::render::Painter::new(c4sim::render::RenderStyle::Ascii, 2).board(self.game.board())
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Game(rows={}, cols={}, win_length={}, moves={:?})",
            self.cfg.rows,
            self.cfg.cols,
            self.cfg.win_length,
            self.game.moves()
        )
    }
}
