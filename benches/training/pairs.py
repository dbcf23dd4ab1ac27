#!/usr/bin/env python3
"""Scores by opening pair from a tournament's games.jsonl (models/README.md).

A tournament plays each opening twice, once with each colour; the two games of
an opening are one pair, and pairs are independent where games are not (a
deterministic player often splits an opening by colour). The standard error
from the pairs is therefore the honest one.

  pairs.py DIR PLAYER            PLAYER's score by pair: mean ± standard error
  pairs.py DIR_A PLAYER_A DIR_B PLAYER_B
                                 paired difference A − B over the openings both
                                 played (the same seed and openings against the
                                 same opponent): mean ± standard error

DIR is a report directory (holding games.jsonl) or the games.jsonl itself.
"""
import json
import math
import os
import sys
from collections import defaultdict


def pair_scores(path, player):
    """Mean score of `player` over each opening's games, keyed by opening."""
    if os.path.isdir(path):
        path = os.path.join(path, "games.jsonl")
    by_opening = defaultdict(list)
    with open(path) as f:
        for line in f:
            g = json.loads(line)
            if player not in g["players"]:
                continue
            if g.get("winner") == player:
                s = 1.0
            elif g["result"] == "draw":
                s = 0.5
            else:
                s = 0.0
            by_opening[tuple(g["opening"])].append(s)
    if not by_opening:
        sys.exit(f"no games of '{player}' in {path}")
    return {o: sum(v) / len(v) for o, v in by_opening.items()}


def mean_se(xs):
    n = len(xs)
    m = sum(xs) / n
    var = sum((x - m) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    return m, math.sqrt(var / n)


def main(argv):
    if len(argv) == 3:
        s = pair_scores(argv[1], argv[2])
        m, se = mean_se(list(s.values()))
        print(f"{argv[2]}: {100 * m:.1f} ± {100 * se:.1f}% by opening pair ({len(s)} pairs)")
    elif len(argv) == 5:
        a = pair_scores(argv[1], argv[2])
        b = pair_scores(argv[3], argv[4])
        common = sorted(set(a) & set(b))
        if not common:
            sys.exit("the two tournaments share no opening")
        d = [a[o] - b[o] for o in common]
        m, se = mean_se(d)
        better = sum(1 for x in d if x > 0)
        worse = sum(1 for x in d if x < 0)
        print(f"{argv[2]} − {argv[4]}: {100 * m:+.1f} ± {100 * se:.1f} points by opening pair "
              f"({len(common)} pairs: {better} better, {worse} worse)")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
