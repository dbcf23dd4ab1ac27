"""The native part of c4sim: the engine's rules, solver, network and scenarios.

Every class converts and delegates to the Rust engine; the engine releases the
GIL while it works. Columns count from 0 in every array and action; a move
string (``"4453"``) counts columns from 1, as on the command line.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

Position = Union[str, Sequence[int], npt.NDArray[np.integer]]
"""A position: a move string with columns from 1 (``"4453"``; ``""`` is the
empty board) or a sequence (or numpy array) of 0-based columns
(``[3, 3, 4, 2]``), where trailing −1s are padding (an env's
``infos["final_moves"]`` row is a position)."""

PlayerSpec = Union[str, Mapping[str, Any]]
"""A player in the scenario files' syntax: a dict (``{"kind": "minimax",
"depth": 4}``), a flow-mapping string (``"{kind: minimax, depth: 4}"``), a
profile name (``"solver"``, ``"alphazero"``) or a profile file path."""

def data_dir() -> str:
    """Where the package's shipped network, solver books and player profiles
    live (``models/``, ``players/``); relative paths in player specs that are
    not found in the current directory are looked up here."""

class Game:
    """One two-player game under the engine's referee: legality, turn order
    and wins are decided by ``c4sim``'s ``game::Game``, as in every mode."""

    def __init__(self, rows: int = 6, cols: int = 7, win_length: int = 4) -> None: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def win_length(self) -> int: ...
    @property
    def to_move(self) -> int:
        """The seat to move: 0 (moved first) or 1; after the end, the seat
        that would have moved next."""
    @property
    def over(self) -> bool: ...
    @property
    def winner(self) -> int | None:
        """0 or 1 once someone has made a line; None while going on or after a draw."""
    @property
    def moves(self) -> list[int]:
        """Every column played so far (from 0)."""
    def reset(self) -> None: ...
    def is_legal(self, column: int) -> bool:
        """Whether ``column`` can be played now (False once the game is over)."""
    def play(self, column: int) -> int:
        """Plays ``column`` for the seat to move and returns the status:
        0 the game goes on, 1 the mover made a line, 2 the board is full (draw).
        Raises ValueError for a full column, one out of range, or a game that is over."""
    def open_columns(self) -> npt.NDArray[np.int8]:
        """(cols,) int8: 1 where the column has room, whether or not the game is over."""
    def action_mask(self) -> npt.NDArray[np.int8]:
        """(cols,) int8: 1 where ``play`` would accept the column (all 0 once over)."""
    def board(self) -> npt.NDArray[np.int8]:
        """(rows, cols) int8, row 0 the top row: 0 empty, 1 seat 0's piece, 2 seat 1's."""
    def observation(self, seat: int) -> npt.NDArray[np.int8]:
        """(rows, cols, 2) int8, row 0 the top row: channel 0 ``seat``'s pieces,
        channel 1 the other seat's."""
    def render(self) -> str:
        """The board as text (the engine's ascii look), columns numbered from 1."""
    def copy(self) -> Game: ...

class VectorEnv:
    """``num_envs`` games stepped together (see docs/python.md).

    ``reset`` → ``(obs, infos)``; ``step(actions)`` → ``(obs, rewards,
    terminations, truncations, infos)``. ``obs["observation"]`` is
    (N, rows, cols, 2) int8 from the view of the side to move (channel 0 its
    pieces, row 0 the top row) and ``obs["action_mask"]`` (N, cols) int8.
    Rewards (float32) are for the side that just moved: +1 win, −1 loss (only
    with an opponent), 0 otherwise. An env whose game ended restarts in the
    same step: its returned observation is the new game's first, and
    ``infos["final_moves"]`` (N, rows·cols) int8 holds the ended game's
    columns, padded with −1 (all −1 where no game ended), with
    ``infos["final_length"]`` (N,) int32 its number of plies (0 where none).

    With an ``opponent`` (a player spec), each step is the agent's move and
    the opponent's reply; rewards are the agent's, observations the agent's
    view. The agent moves first in an env's even-numbered games (0, 2, …) and
    second in the others (the opponent's first move is made at reset).
    ``threads`` splits the batch over cores (0: one per core where it pays:
    from 32 envs a thread with an opponent, from 16,384 without).

    ``copy=False`` hands out the same arrays at every step and reset,
    overwritten in place (as Gymnasium's vector envs' ``copy=False``): no
    allocation per step; copy what you keep (``obs["observation"].copy()``).
    Truncations are always all False (a game always ends)."""

    def __init__(
        self,
        num_envs: int,
        rows: int = 6,
        cols: int = 7,
        win_length: int = 4,
        seed: int = 0,
        opponent: PlayerSpec | None = None,
        threads: int = 0,
        copy: bool = True,
    ) -> None: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def win_length(self) -> int: ...
    @property
    def threads(self) -> int: ...
    def reset(self, seed: int | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]: ...
    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]: ...
    def random_actions(self) -> npt.NDArray[np.int64]:
        """(N,) int64: a uniformly drawn legal column in each env, from the
        env's own seeded stream (random masked play without numpy's cost)."""
    def moves(self, env: int) -> list[int]:
        """The columns played so far in env ``env``'s current game."""

class Solver:
    """The perfect solver (exact scores), with the shipped score book on 6×7.

    Scores are the command line's: positive when the side to move wins (the
    sooner, the larger), 0 a draw, negative when it loses. A full column is
    ``Solver.FULL``; a column not proven within ``nodes`` is ``Solver.UNKNOWN``
    (never a guess)."""

    FULL: int
    UNKNOWN: int
    def __init__(
        self,
        nodes: int | None = None,
        threads: int = 0,
        rows: int = 6,
        cols: int = 7,
        win_length: int = 4,
        table_log2: int | None = None,
    ) -> None:
        """``threads`` solvers (0: one per core) take the positions one at a
        time; ``table_log2`` sizes each one's transposition table (2**n
        entries of 8 bytes; None: 19, as ``c4sim analyze`` uses; at most 30)."""
    def scores(self, positions: Sequence[Position]) -> npt.NDArray[np.int32]:
        """(N, cols) int32: every column's exact score in each position."""
    def best_moves(self, positions: Sequence[Position]) -> npt.NDArray[np.int64]:
        """(N,) int64: a best column (0-based) of each position (ties go to the
        centre-most); −1 where a column is not proven within ``nodes`` (an
        unproven column might be the best: never a guess) or none is open."""

class AlphaZero:
    """c4sim's AlphaZero network (``model=None``: the shipped 6×7 network)."""

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        simulations: int = 800,
        threads: int = 0,
    ) -> None: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    def policy_value(
        self, observations: npt.NDArray[np.int8]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Observations as the envs give them, (N, rows, cols, 2) int8 from the
        mover's view → (policy (N, cols) over the legal columns, value (N,)
        in [−1, 1] for the mover), straight from the network."""
    def search(self, positions: Sequence[Position]) -> npt.NDArray[np.float32]:
        """(N, cols) float32: each column's share of the root's visits after
        ``simulations`` of MCTS."""

def run(
    scenario: str | os.PathLike[str] | Mapping[str, Any],
    *,
    agents: Mapping[str, Any] | None = None,
    fresh: bool = False,
    out: str | os.PathLike[str] | None = None,
    json: bool = False,
) -> dict[str, Any]:
    """Runs a scenario (a file, or a dict with the file's keys) in this process,
    as ``c4sim run`` does, and returns ``{"mode": …}`` with the mode's result:
    ``games`` (a match's game records), ``report`` (a tournament's report.json
    as a dict) and ``dir``, or ``out`` (a training run). Ctrl-C stops it as on
    the command line (KeyboardInterrupt; a tournament resumes where it stopped).

    ``agents`` maps names to your agents (objects with ``act(observation)``
    or ``act_batch(observations)``, or functions): a ``{kind: agent, name:
    NAME}`` player plays the agent named NAME. A name the scenario uses but
    ``agents`` lacks is a ValueError before anything starts."""
