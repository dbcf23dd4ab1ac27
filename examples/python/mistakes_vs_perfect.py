#!/usr/bin/env python3
"""How often does a policy throw a result away? Mistakes against perfect play.

A *policy* is what a PettingZoo agent is: a function from an observation
dict to a column (from 0)::

    def policy(obs: dict) -> int:
        obs["observation"]  # (rows, cols, 2) int8, row 0 the top row,
                            # channel 0 the pieces of the side to move
        obs["action_mask"]  # (cols,) int8, 1 where the column has room

so the same function plays ``c4sim.pettingzoo.connect_four_v3`` (or
PettingZoo's own env) unchanged. This script shows the policy a set of 6×7
positions, asks ``c4sim.Solver`` for every column's exact score in all of
them in one batch, and counts two kinds of error. With ``scores`` the legal
columns' exact scores (positive: the side to move wins, the sooner the
larger; 0: a draw; negative: it loses) and ``best`` their maximum:

* **W/D/L mistake**: the chosen column's outcome class, ``sign(score)``
  (win +1 > draw 0 > loss −1), is below ``sign(best)``: a win turned into a
  draw or a loss, or a draw into a loss. Winning more slowly, or losing
  sooner in a lost position, is not one.
* **Not best** (strict): the chosen column's score is below ``best``: any
  column other than the fastest win, else a draw, else the slowest loss.

An illegal answer (a full column, a number off the board, not an int) counts
as both. Every W/D/L mistake is also "not best". These are the definitions of
``c4sim bench accuracy`` (docs/accuracy.md); rates come with the binomial
standard error sqrt(p(1 − p)/n).

Positions (``--positions``):

* default: ``benches/accuracy/sets-v1.jsonl``, found from this file's place
  in the repository (run the script from any directory): 900 solver-labelled
  positions in nine sets, begin/middle/end × easy/medium/hard, each chosen
  so that a W/D/L mistake is possible. ``--count N`` takes N of them, shared
  evenly between the sets and spread from the easiest to the hardest of each:
  the same positions as ``c4sim bench accuracy --positions N``. The file's own
  labels are compared with the solver's answer (``--labels`` uses the labels
  instead of solving: every position in a second).
* ``--positions random``: positions reached by uniformly random play,
  plies 14–36 (earlier plies cost the solver seconds a position), keeping
  those where the columns' outcome classes differ, as the committed sets do.
* ``--positions FILE``: another file in the same format (one JSON object a
  line with ``"moves"``: a move string, columns from 1; a header line without
  ``"moves"`` is skipped).

Built-in policies (``--policy``, repeatable; default: both):

* ``random``: a uniformly random legal column (seeded by ``--seed``).
* ``network``: the shipped AlphaZero network's most likely column, from
  ``c4sim.AlphaZero().policy_value`` (no search): the network alone.

Your own: ``--policy MODULE:FUNCTION`` imports FUNCTION from MODULE (the
current directory is searched first). E.g. ``my_policy.py``::

    import numpy as np

    def centre(obs):
        # The open column nearest the centre.
        open_cols = np.flatnonzero(obs["action_mask"])
        return int(open_cols[np.argmin(abs(open_cols - 3))])

then ``python mistakes_vs_perfect.py --policy my_policy:centre``. Or import
this file and call ``measure(policy, positions, scores)`` yourself.

Examples::

    python examples/python/mistakes_vs_perfect.py                  # 90 positions, ~8 s on 2 cores
    python examples/python/mistakes_vs_perfect.py --labels --count 900
    python examples/python/mistakes_vs_perfect.py --positions random --count 200 --seed 3
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

import c4sim
from c4sim.accuracy import judge, load_labelled, observations, subset, to_columns

# examples/python/ → the repository root; found wherever the script is run from.
REPO = Path(__file__).resolve().parent.parent.parent
DEFAULT_SETS = REPO / "benches" / "accuracy" / "sets-v1.jsonl"

# Random positions: before ply 14 the solver may need seconds a position
# (docs/accuracy.md); the last ply a 6×7 game can leave open is 41.
RANDOM_PLIES = (14, 36)

Policy = Callable[[dict], int]


# ---------------------------------------------------------------- positions


def random_positions(n: int, rng: np.random.Generator) -> list[list[int]]:
    """``n`` positions reached by uniformly random play, each at a ply drawn
    in ``RANDOM_PLIES``; a line whose game ends before that ply is redrawn."""
    out = []
    while len(out) < n:
        target = int(rng.integers(RANDOM_PLIES[0], RANDOM_PLIES[1] + 1))
        game = c4sim.Game()
        while len(game.moves) < target and not game.over:
            game.play(int(rng.choice(np.flatnonzero(game.action_mask()))))
        if not game.over:
            out.append(game.moves)
    return out


# ---------------------------------------------------------------- judging


def has_choice(row: np.ndarray) -> bool:
    """Whether the legal columns' outcome classes differ (a W/D/L mistake is possible)."""
    return len(set(np.sign(row[row != c4sim.Solver.FULL]).tolist())) > 1


def measure(policy: Policy, positions: Sequence[Sequence[int]], scores: np.ndarray) -> dict:
    """Shows ``policy`` every position (0-based columns) and judges its
    column by ``scores`` ((N, cols), the solver's): ``c4sim.accuracy.judge``'s
    counts, rates and standard errors, with the policy's time."""
    started = time.perf_counter()
    columns = [policy(obs) for obs in observations(positions)]
    return {**judge(columns, scores), "seconds": time.perf_counter() - started}


# ---------------------------------------------------------------- policies


def uniform_random(seed: int) -> Policy:
    """A uniformly random legal column, from its own seeded stream."""
    rng = np.random.default_rng(seed)
    return lambda obs: int(rng.choice(np.flatnonzero(obs["action_mask"])))


def network_argmax() -> Policy:
    """The shipped network's most likely column (its policy is already
    masked to the legal columns), without search. ``policy_value`` takes a
    batch, so one observation goes in as a batch of one."""
    net = c4sim.AlphaZero()  # simulations only matter to search(), unused here

    def policy(obs: dict) -> int:
        prior, _value = net.policy_value(obs["observation"][None])
        return int(np.argmax(prior[0]))

    return policy


def load_policy(spec: str, seed: int) -> Policy:
    if spec == "random":
        return uniform_random(seed)
    if spec == "network":
        return network_argmax()
    module, sep, name = spec.partition(":")
    if not sep:
        raise SystemExit(f"--policy {spec!r}: give random, network or MODULE:FUNCTION")
    sys.path.insert(0, os.getcwd())  # a module beside the caller, not beside this script
    return getattr(importlib.import_module(module), name)


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", default=str(DEFAULT_SETS),
                    help="a labelled position file, or 'random' (default: %(default)s)")
    ap.add_argument("--count", type=int, default=90,
                    help="positions to judge on (default %(default)s: 10 from each committed set)")
    ap.add_argument("--seed", type=int, default=1, help="random policy's and random positions' seed")
    ap.add_argument("--policy", action="append",
                    help="random, network or MODULE:FUNCTION; repeatable (default: random and network)")
    ap.add_argument("--labels", action="store_true",
                    help="use the file's labels instead of asking the solver")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    # Policies first, so a bad --policy fails before the solver's work.
    specs = args.policy or ["random", "network"]
    policies = [load_policy(spec, args.seed) for spec in specs]

    labels = None
    if args.positions == str(DEFAULT_SETS) and not DEFAULT_SETS.exists():
        # The script was copied out of the repository: fall back to random play.
        print(f"{DEFAULT_SETS} not found: positions from random play instead")
        args.positions = "random"
    if args.positions == "random":
        if args.labels:
            raise SystemExit("--labels needs a labelled file")
        # Twice as many candidates as asked: about half have no W/D/L choice.
        positions = random_positions(2 * args.count, rng)
        source = f"random play, plies {RANDOM_PLIES[0]}-{RANDOM_PLIES[1]}, seed {args.seed}"
    elif not Path(args.positions).is_file():
        raise SystemExit(f"--positions: no file {args.positions}")
    else:
        records, sets = load_labelled(Path(args.positions))
        chosen = subset(records, sets, args.count)
        positions = [to_columns(r["moves"]) for r in chosen]
        if all("scores" in r for r in chosen):
            labels = np.array([[c4sim.Solver.FULL if s is None else s for s in r["scores"]] for r in chosen],
                              dtype=np.int32)
        shown = Path(args.positions).resolve()
        shown = shown.relative_to(REPO) if REPO in shown.parents else shown
        source = f"{shown}: {len(chosen)} of {len(records)}, from its {len(sets)} sets ({', '.join(sets)})"
    print(f"positions: {source}")

    started = time.perf_counter()
    if args.labels:
        if labels is None:
            raise SystemExit("--labels: the file has no scores")
        scores = labels
        print("scores: the file's labels")
    else:
        # Every column of every position in one call. The solver cuts the
        # batch into one contiguous chunk per thread, and the sets run from
        # easy to hard, so in file order one thread would get all the hard
        # positions: solving them in a shuffled order keeps every core busy
        # (15 s → 8.5 s on 2 cores for the default 90).
        order = np.random.default_rng(0).permutation(len(positions))
        scores = np.empty((len(positions), c4sim.Game().cols), np.int32)
        scores[order] = c4sim.Solver().scores([positions[i] for i in order])
        print(f"scores: c4sim.Solver().scores, {len(positions)} positions in "
              f"{time.perf_counter() - started:.1f} s (one batch)")
        if labels is not None:
            agree = int((scores == labels).all(axis=1).sum())
            print(f"        the same as the file's labels in {agree} of {len(positions)} positions")
            if agree != len(positions):
                print("the solver and the file disagree: stopping")
                return 2
    if labels is None:
        keep = [i for i, row in enumerate(scores) if has_choice(row)][: args.count]
        print(f"        kept {len(keep)} of {len(positions)} with a W/D/L choice")
        positions, scores = [positions[i] for i in keep], scores[keep]

    print()
    w = max(len(s) for s in specs + ["policy"])
    print(f"{'policy':<{w}} {'W/D/L mistakes':>26} {'not best':>26} {'illegal':>8} {'time':>7}")
    for spec, policy in zip(specs, policies):
        r = measure(policy, positions, scores)
        n = r["positions"]
        cells = [
            "{:5.1f}% ± {:4.1f} ({}/{})".format(100 * rate, 100 * se, r[key], n)
            for key, (rate, se) in (("mistakes", r["mistake_rate"]), ("not_best", r["not_best_rate"]))
        ]
        print(f"{spec:<{w}} {cells[0]:>26} {cells[1]:>26} {r['illegal']:>8} {r['seconds']:>6.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
