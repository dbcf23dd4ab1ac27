#!/usr/bin/env python3
"""A Python agent inside c4sim's tournaments: games per second, side by side.

One run, the same tournament three times (one pair, ``--games`` games,
colours swapped, random 2-ply openings, ``--concurrency`` games at once):

- ``builtin``: c4sim's ``leftmost`` against ``minimax`` depth 2 (no Python
  in the games at all: the baseline);
- ``batched``: a trivial Python agent with ``act_batch`` (first legal
  column, numpy) against minimax depth 2 — concurrent games' questions
  reach it as one batch;
- ``act``: the same agent with ``act`` only, one call per move.

It prints each one's games/s (median of ``--repeat`` runs), the ratio to
the builtin tournament and the batched agent's mean batch size. Installs
nothing: needs the package built (``pip install .`` or ``maturin develop``).

    python benches/python/agents.py                 # 400 games, concurrency 2, 3 repeats
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import c4sim


class FirstBatched:
    def __init__(self):
        self.sizes: list[int] = []

    def act_batch(self, obs):
        self.sizes.append(len(obs["action_mask"]))
        return np.argmax(obs["action_mask"], axis=1)


class FirstOne:
    def act(self, obs):
        return int(np.argmax(obs["action_mask"]))


def tournament(first: dict, games: int, concurrency: int, agents: dict) -> float:
    """Games per second of one tournament of ``first`` against minimax 2."""
    with tempfile.TemporaryDirectory() as tmp:
        sc = {"mode": "tournament", "render": "none", "seed": 1,
              "tournament": {"games_per_pair": games, "concurrency": concurrency, "openings": {"plies": 2}},
              "report": {"dir": tmp, "formats": ["json"]},
              "players": [first, {"kind": "minimax", "depth": 2, "name": "minimax2"}]}
        started = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            # The report's text goes to stdout: keep the table readable.
            saved = os.dup(1)
            os.dup2(devnull.fileno(), 1)
            try:
                r = c4sim.run(sc, agents=agents, fresh=True)
            finally:
                os.dup2(saved, 1)
                os.close(saved)
        seconds = time.perf_counter() - started
        assert r["report"]["finished_games"] == games
        return games / seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    batched = FirstBatched()
    contestants = {
        "builtin": ({"kind": "leftmost", "name": "first"}, {}),
        "batched": ({"kind": "agent", "name": "first"}, {"first": batched}),
        "act": ({"kind": "agent", "name": "first"}, {"first": FirstOne()}),
    }
    rates: dict[str, list[float]] = {k: [] for k in contestants}
    for _ in range(args.repeat):  # interleaved, so drift hits every contestant alike
        for name, (first, agents) in contestants.items():
            rates[name].append(tournament(first, args.games, args.concurrency, agents))
    base = statistics.median(rates["builtin"])
    print(f"{args.games} games against minimax depth 2, concurrency {args.concurrency}, "
          f"median of {args.repeat} (c4sim {c4sim.__version__})")
    print(f"{'contestant':<10} {'games/s':>9} {'vs builtin':>11}")
    for name, r in rates.items():
        m = statistics.median(r)
        print(f"{name:<10} {m:>9.0f} {m / base:>10.2f}x")
    if batched.sizes:
        print(f"batched agent: {len(batched.sizes)} calls, mean batch {np.mean(batched.sizes):.2f}, "
              f"largest {max(batched.sizes)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
