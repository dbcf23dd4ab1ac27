#!/usr/bin/env python3
"""How often the analysis board proves every column within a time, by ply.

    python3 benches/solver/coverage.py target/release/c4sim --per-ply 100

For each ply from `--from` to `--to`, `--per-ply` fresh seeded middle games
(random quiet lines: no move along the way won at once, and the side to
move cannot win at once; the generator of `peers.py`) are analysed one at a
time by one `c4sim analyze` process with the `solver` profile (its opening
and score books, the solver on every core: the solver the page's analysis
uses), with a node cap (`--nodes`) so that a hard position ends. A position
counts as covered when every open column came back exact within
`--seconds` (the issue's "about 2 s"). The process and its table live
through the whole run, as the server's kept solvers do, but the positions
are unrelated games, so the table helps less than it does while a person
steps through one game. Prints, per ply, how many were covered, the
median and the slowest time.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import fresh_positions  # noqa: E402


def parse_args():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("c4sim", help="path of the c4sim binary (release build)")
    a.add_argument("--per-ply", type=int, default=100)
    a.add_argument("--from", dest="first", type=int, default=0)
    a.add_argument("--to", dest="last", type=int, default=30)
    a.add_argument("--seconds", type=float, default=2.0)
    a.add_argument("--nodes", type=int, default=400_000_000, help="node cap per position")
    a.add_argument("--seed", type=int, default=47)
    a.add_argument("--player", default="solver", help="the profile analysed with")
    return a.parse_args()


def main():
    args = parse_args()
    # The profile, with the node cap beside it (keys beside `use`
    # override the profile's).
    spec = "{use: %s, nodes: %d}" % (args.player, args.nodes)
    proc = subprocess.Popen(
        [args.c4sim, "analyze", "--player", spec],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    print(f"| ply | positions | every column within {args.seconds:g} s | covered | median | slowest |")
    print("|---:|---:|---:|---:|---:|---:|")
    worst = 100.0
    for ply in range(args.first, args.last + 1):
        # Early plies have fewer distinct lines than asked for (ply 1: 7),
        # and the generator draws until it has `count` distinct ones.
        count = min(args.per_ply, 7**ply)
        lines = fresh_positions(count, ply, args.seed + ply) if ply else [""]
        times, covered = [], 0
        for line in lines:
            t = time.perf_counter()
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            out = json.loads(proc.stdout.readline())
            secs = time.perf_counter() - t
            heights = [line.count(str(c + 1)) for c in range(7)]
            exact = all(s is not None for c, s in enumerate(out["scores"]) if heights[c] < 6)
            times.append(secs)
            covered += exact and secs <= args.seconds
        share = 100.0 * covered / len(lines)
        worst = min(worst, share)
        print(
            f"| {ply} | {len(lines)} | {covered} | {share:.0f}% | {statistics.median(times):.3f} s | {max(times):.2f} s |",
            flush=True,
        )
    proc.stdin.close()
    proc.wait()
    print(f"\nlowest share over plies {args.first}-{args.last}: {worst:.0f}%")


if __name__ == "__main__":
    main()
