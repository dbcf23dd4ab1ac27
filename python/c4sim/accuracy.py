"""A policy's mistakes against perfect play, on labelled positions.

The measure of ``c4sim bench accuracy`` (docs/accuracy.md): a position is
shown to the policy as the envs show it (``observation`` (rows, cols, 2)
int8 from the side to move, ``action_mask`` (cols,) int8); its column is a
*W/D/L mistake* when the column's outcome class (win, draw, loss) is worse
than the best column's, and *not best* when its exact score is lower. An
illegal or non-integer answer counts as both. Rates come with their
binomial standard errors.

The committed labelled sets (``benches/accuracy/sets-v1.jsonl`` in the
repository, shipped in the package's data folder) hold 900 6×7 positions
in nine sets (begin/middle/end × easy/medium/hard) with every column's
exact score.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ._c4sim import Game, Solver, data_dir

#: The labelled sets that ship with the package.
SETS_FILE = "benches/accuracy/sets-v1.jsonl"


def sets_path() -> Path:
    """Where the shipped labelled sets are."""
    root = data_dir()
    if root is None:
        raise FileNotFoundError("the package's data folder is missing")
    return Path(root) / SETS_FILE


def load_labelled(path: Path | str | None = None) -> tuple[list[dict], list[str]]:
    """The positions of a labelled file (default: the shipped sets) and its
    set names in file order."""
    records, sets = [], []
    with open(path or sets_path(), encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if "moves" not in rec:  # the header
                continue
            rec.setdefault("set", "all")  # a file without sets is one set
            records.append(rec)
            if rec["set"] not in sets:
                sets.append(rec["set"])
    return records, sets


def subset(records: list[dict], sets: Sequence[str], n: int) -> list[dict]:
    """``n`` positions shared evenly between ``sets`` (the first sets get one
    more when ``n`` does not divide), spread evenly over each set's file
    order (easiest to hardest): ``c4sim bench accuracy --positions N``'s
    rule, so both pick the same positions."""
    chosen = []
    for i, name in enumerate(sets):
        of_set = [r for r in records if r["set"] == name]
        want = min(n // len(sets) + (i < n % len(sets)), len(of_set))
        chosen += [of_set[j * len(of_set) // want] for j in range(want)]
    return chosen


def to_columns(moves: str | Sequence[int]) -> list[int]:
    """A move string (columns from 1) or a list of 0-based columns → 0-based."""
    return [int(ch) - 1 for ch in moves] if isinstance(moves, str) else list(moves)


def observations(positions: Sequence[Sequence[int]]) -> list[dict]:
    """What an agent sees in each position (0-based columns): the
    referee's ``Game`` replays the moves, then gives the mover's view and mask."""
    out = []
    for moves in positions:
        game = Game()
        for col in moves:
            game.play(col)
        out.append({"observation": game.observation(game.to_move), "action_mask": game.action_mask()})
    return out


def labels(records: Sequence[dict]) -> np.ndarray:
    """The records' scores as an (N, cols) array (full columns ``Solver.FULL``)."""
    return np.array([[Solver.FULL if s is None else s for s in r["scores"]] for r in records], dtype=np.int64)


def ask_all(agent: Any, obs: list[dict]) -> list[Any]:
    """The agent's column for every observation: one ``act_batch`` call
    when it has one, else ``act`` (or the agent itself) per observation."""
    if hasattr(agent, "act_batch"):
        batch = {
            "observation": np.stack([o["observation"] for o in obs]),
            "action_mask": np.stack([o["action_mask"] for o in obs]),
        }
        return list(agent.act_batch(batch))
    act: Callable[[dict], Any] = agent.act if hasattr(agent, "act") else agent
    return [act(o) for o in obs]


def judge(columns: Sequence[Any], scores: np.ndarray) -> dict:
    """Counts and rates of the columns' mistakes by ``scores`` ((N, cols));
    positions with an unproven column (``Solver.UNKNOWN``) are left out."""
    mistakes = not_best = illegal = n = 0
    for col, row in zip(columns, scores):
        legal = row != Solver.FULL
        if (row[legal] == Solver.UNKNOWN).any():
            continue
        n += 1
        if isinstance(col, (bool, np.bool_)) or not isinstance(col, (int, np.integer)) \
                or not 0 <= col < len(row) or not legal[col]:
            illegal += 1
            mistakes += 1
            not_best += 1
            continue
        best = row[legal].max()
        mistakes += int(np.sign(row[col]) < np.sign(best))
        not_best += int(row[col] < best)

    def rate(k: int) -> tuple[float, float]:
        p = k / n if n else float("nan")
        return p, math.sqrt(p * (1 - p) / n) if n else float("nan")

    return {
        "positions": n,
        "mistakes": mistakes,
        "not_best": not_best,
        "illegal": illegal,
        "mistake_rate": rate(mistakes),
        "not_best_rate": rate(not_best),
    }


def measure(agent: Any, positions: int = 90, path: Path | str | None = None) -> dict:
    """The agent's mistakes on ``positions`` of the labelled sets (shared
    evenly between the nine sets, as ``c4sim bench accuracy --positions N``
    picks them)."""
    records, sets = load_labelled(path)
    chosen = subset(records, sets, positions)
    obs = observations([to_columns(r["moves"]) for r in chosen])
    return judge(ask_all(agent, obs), labels(chosen))
