"""Shared fixtures of the c4sim test suite: the repository root and a
referee that replays a list of columns in ``c4sim.Game``."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import pytest

import c4sim

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository root (scenarios/, players/, benches/ live there)."""
    return REPO


def _replay(moves: Sequence[int], rows: int = 6, cols: int = 7, win_length: int = 4) -> c4sim.Game:
    """A ``c4sim.Game`` with ``moves`` (0-based columns) played; the referee
    raises ValueError on any illegal move, including one after the end."""
    g = c4sim.Game(rows, cols, win_length)
    for c in moves:
        g.play(int(c))
    return g


@pytest.fixture(scope="session")
def replay() -> Callable[..., c4sim.Game]:
    """``replay(moves, rows=6, cols=7, win_length=4)`` → the referee's Game."""
    return _replay
