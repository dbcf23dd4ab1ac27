#!/usr/bin/env python3
"""Rate your own agent inside c4sim: a short ladder, its Elo with a 95%
interval, and its mistakes against perfect play.

The agent here is a one-ply numpy player: it takes a winning column if it
has one, blocks the opponent's if it must, else plays the open column
nearest the centre. Swap in your own: anything with ``act(observation)``,
``act_batch(observations)``, or a plain function.

    python examples/python/rate_my_agent.py             # ~10 s on 2 cores
    python examples/python/rate_my_agent.py --out reports/mine   # keep the report files
"""

from __future__ import annotations

import argparse

import numpy as np

import c4sim


def wins(planes: np.ndarray, col: int) -> bool:
    """Whether dropping a piece of channel 0 in ``col`` makes four in a row."""
    rows, cols = planes.shape[:2]
    filled = planes[:, col].sum(axis=1)
    row = int(np.flatnonzero(filled == 0)[-1])  # the lowest empty cell (row 0 is the top)
    mine = planes[:, :, 0].copy()
    mine[row, col] = 1
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * dr, col + sign * dc
            while 0 <= r < rows and 0 <= c < cols and mine[r, c]:
                run, r, c = run + 1, r + sign * dr, c + sign * dc
        if run >= 4:
            return True
    return False


class OnePly:
    """Win if it can, block if it must, else the centre-most open column."""

    def act(self, obs: dict) -> int:
        planes, legal = obs["observation"], np.flatnonzero(obs["action_mask"])
        for c in legal:
            if wins(planes, c):
                return int(c)
        theirs = planes[:, :, ::-1]
        for c in legal:
            if wins(theirs, c):
                return int(c)
        centre = (planes.shape[1] - 1) / 2
        return int(legal[np.argmin(abs(legal - centre))])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=40, help="games against each opponent")
    ap.add_argument("--out", help="keep the tournament's files here (it resumes there)")
    args = ap.parse_args()
    ladder = ["random", {"kind": "minimax", "depth": 2, "name": "minimax2"},
              {"kind": "minimax", "depth": 4, "name": "minimax4"}]
    r = c4sim.rate(OnePly(), opponents=ladder, games=args.games, name="one-ply", anchor="minimax4", out=args.out)
    print()
    print(f"{'opponent':<10} {'W':>4} {'D':>4} {'L':>4} {'score':>7}")
    for o in r["opponents"]:
        print(f"{o['name']:<10} {o['wins']:>4} {o['draws']:>4} {o['losses']:>4} {100 * o['score']:>6.1f}%")
    lo, hi = r["elo_interval"]
    bound = {"lower": "at least ", "upper": "at most "}.get(r["elo_bound"] or "", "")
    print(f"Elo {bound}{r['elo']:.0f} (95%: {lo:.0f} to {hi:.0f}), minimax4 = 0")
    a = r["accuracy"]
    rate, se = a["mistake_rate"]
    print(f"W/D/L mistakes against perfect play: {100 * rate:.1f}% ± {100 * se:.1f} of {a['positions']} positions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
