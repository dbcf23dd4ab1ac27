#!/usr/bin/env python3
"""c4sim's solver side by side with two peers, one thread each, books off.

    python3 benches/solver/peers.py target/release/c4sim --rounds 3

Every solver gets the same 6x7 positions and gives every column's exact
score (Pons' convention), so the work is the same for all three:

- c4sim: `c4sim analyze --player '{kind: solver, table_log2: T, threads: 1}'` (one
  thread, no book), positions on standard input; T is `--table-log2`, 19 by
  default: the table `analyze` uses for positions with fewer than 36 empty
  cells when the player does not set one (2^22 took 10-26% longer on the
  fresh ply-8 positions here, in four runs);
- Pascal Pons' c4solver (`--pons`, built from its public repository outside
  the project): `c4solver -a -b <no file>` (analysis of every column, no
  opening book), positions on standard input;
- bitbully (PyPI) through its core module, `BitBullyCore()` (no opening
  book), `scoreMoves` on each position, timed inside Python (import and
  board set-up not counted).

A group of positions is one process (one solver object) per solver, so
each keeps its transposition table from one position to the next. Times
are wall clock, the median over `--rounds` rounds; every solver's scores
are checked against c4sim's (and the sets' labels). Groups: the labelled
sets (`--per-set` positions of each of the nine sets, spread from easy to
hard within a set) and `--fresh` seeded ply-8 positions (random quiet lines:
no move wins at once, the side to move cannot win at once). The last line
gives the mean time per fresh ply-8 position (every column proven).

A peer that is not found is left out and said so; nothing is installed.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROWS, COLS = 6, 7


def parse_args():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("c4sim", help="path of the c4sim binary (release build)")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--sets", default="benches/accuracy/sets-v1.jsonl")
    a.add_argument("--per-set", type=int, default=10, help="positions from each labelled set")
    a.add_argument("--fresh", type=int, default=10, help="fresh ply-8 positions")
    a.add_argument("--fresh-ply", type=int, default=8)
    a.add_argument("--seed", type=int, default=8)
    a.add_argument(
        "--table-log2",
        type=int,
        default=19,
        help="c4sim's table: 2^T words of 8 bytes (19: analyze's default below 36 empty cells)",
    )
    a.add_argument("--pons", default="/work/peers/pons/c4solver", help="Pons' c4solver binary")
    a.add_argument("--python", default="/work/venvs/py/bin/python", help="a Python with bitbully installed")
    a.add_argument("--only", default="c4sim,bitbully,pons", help="solvers to run, comma-separated")
    return a.parse_args()


class Game:
    """A 6x7 board for drawing quiet lines (columns from 0)."""

    def __init__(self):
        self.cells = [[0] * ROWS for _ in range(COLS)]
        self.h = [0] * COLS
        self.n = 0

    def wins(self, c):
        """Whether the side to move wins by playing column c (not full)."""
        me, r = 1 + self.n % 2, self.h[c]
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            k = 1
            for s in (1, -1):
                cc, rr = c + s * dc, r + s * dr
                while 0 <= cc < COLS and 0 <= rr < ROWS and self.cells[cc][rr] == me:
                    k += 1
                    cc, rr = cc + s * dc, rr + s * dr
            if k >= 4:
                return True
        return False

    def play(self, c):
        self.cells[c][self.h[c]] = 1 + self.n % 2
        self.h[c] += 1
        self.n += 1


def fresh_positions(count, ply, seed):
    """Seeded quiet lines of `ply` moves, Pons' notation (columns from 1)."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < count:
        g, moves = Game(), []
        while len(moves) < ply:
            quiet = [c for c in range(COLS) if g.h[c] < ROWS and not g.wins(c)]
            if not quiet:
                break
            c = rng.choice(quiet)
            g.play(c)
            moves.append(c)
        if len(moves) < ply or any(g.h[c] < ROWS and g.wins(c) for c in range(COLS)):
            continue
        line = "".join(str(c + 1) for c in moves)
        if line not in seen:
            seen.add(line)
            out.append(line)
    return out


def set_positions(path, per_set):
    """`per_set` positions of each set, spread over the file's order (easy
    to hard within a set), with their labelled scores."""
    by_set = {}
    with open(path) as f:
        header = json.loads(f.readline())
        for line in f:
            if line.strip():
                p = json.loads(line)
                by_set.setdefault(p["set"], []).append(p)
    out = []
    for name in header["sets"]:
        ps = by_set.get(name, [])
        k = min(per_set, len(ps))
        out += [ps[i * len(ps) // k] for i in range(k)]
    return [(p["moves"], p["scores"]) for p in out]


def run_c4sim(binary, lines, table_log2):
    spec = "{kind: solver, table_log2: %d, threads: 1}" % table_log2
    t = time.perf_counter()
    r = subprocess.run(
        [binary, "analyze", "--player", spec],
        input="".join(l + "\n" for l in lines),
        capture_output=True,
        text=True,
        check=True,
    )
    secs = time.perf_counter() - t
    scores = [json.loads(l)["scores"] for l in r.stdout.splitlines() if l.strip()]
    return secs, scores


def run_pons(binary, lines):
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        r = subprocess.run(
            [binary, "-a", "-b", os.path.join(d, "no.book")],
            input="".join(l + "\n" for l in lines),
            capture_output=True,
            text=True,
            check=True,
            cwd=d,
        )
        secs = time.perf_counter() - t
    scores = []
    for l in r.stdout.splitlines():
        parts = l.split()
        if len(parts) >= COLS:
            scores.append([None if int(v) <= -100 else int(v) for v in parts[-COLS:]])
    return secs, scores


BITBULLY = r"""
import json, sys, time
import bitbully.bitbully_core as bbc
lines = [l.strip() for l in sys.stdin if l.strip()]
boards = []
for l in lines:
    b = bbc.BoardCore()
    assert b.setBoard([int(ch) - 1 for ch in l]), l
    boards.append(b)
solver = bbc.BitBullyCore()
assert not solver.isBookLoaded()
t = time.perf_counter()
out = [solver.scoreMoves(b) for b in boards]
secs = time.perf_counter() - t
print(json.dumps({"secs": secs, "scores": [[None if v <= -100 else v for v in s] for s in out]}))
"""


def run_bitbully(python, lines):
    r = subprocess.run(
        [python, "-c", BITBULLY],
        input="".join(l + "\n" for l in lines),
        capture_output=True,
        text=True,
        check=True,
    )
    v = json.loads(r.stdout)
    return v["secs"], v["scores"]


def available(args):
    found = {}
    want = set(args.only.split(","))
    if "c4sim" in want:
        found["c4sim"] = lambda lines: run_c4sim(args.c4sim, lines, args.table_log2)
    if "pons" in want:
        if shutil.which(args.pons) or os.access(args.pons, os.X_OK):
            found["pons"] = lambda lines: run_pons(args.pons, lines)
        else:
            print(f"Pons' c4solver not found at {args.pons}: left out")
    if "bitbully" in want:
        ok = subprocess.run([args.python, "-c", "import bitbully.bitbully_core"], capture_output=True).returncode == 0
        if ok:
            found["bitbully"] = lambda lines: run_bitbully(args.python, lines)
        else:
            print(f"bitbully not importable with {args.python}: left out")
    return found


def main():
    args = parse_args()
    solvers = available(args)
    print("solvers:", ", ".join(solvers), f"| rounds {args.rounds} | c4sim table 2^{args.table_log2}")
    labelled = set_positions(args.sets, args.per_set)
    groups = [
        (f"sets ({args.per_set} of each of 9, plies 8-38)", [m for m, _ in labelled], [s for _, s in labelled]),
        (
            f"fresh ply-{args.fresh_ply} ({args.fresh}, seed {args.seed})",
            fresh_positions(args.fresh, args.fresh_ply, args.seed),
            None,
        ),
    ]
    results = {}
    for name, lines, labels in groups:
        times = {s: [] for s in solvers}
        reference = labels
        for _ in range(args.rounds):
            for s, run in solvers.items():
                secs, scores = run(lines)
                times[s].append(secs)
                if reference is None:
                    reference = scores
                bad = [lines[i] for i, (a, b) in enumerate(zip(scores, reference)) if a != b]
                if bad or len(scores) != len(lines):
                    print(f"MISMATCH: {s} on {name}: {bad[:5]}", file=sys.stderr)
                    sys.exit(1)
        results[name] = ({s: statistics.median(t) for s, t in times.items()}, len(lines))
    print()
    print("| positions | n | " + " | ".join(f"{s} s" for s in solvers) + " | c4sim/bitbully | c4sim/Pons |")
    print("|---|---:|" + "---:|" * len(solvers) + "---:|---:|")
    for name, (med, n) in results.items():
        cells = " | ".join(f"{med[s]:.2f}" for s in solvers)
        rb = f"{med['c4sim'] / med['bitbully']:.2f}" if "bitbully" in med and "c4sim" in med else "-"
        rp = f"{med['c4sim'] / med['pons']:.2f}" if "pons" in med and "c4sim" in med else "-"
        print(f"| {name} | {n} | {cells} | {rb} | {rp} |")
    fresh_name = groups[1][0]
    med, n = results[fresh_name]
    per = " ".join(f"{s} {med[s] / n:.2f} s" for s in solvers)
    print(f"\nmean time per fresh ply-{args.fresh_ply} position, every column: {per}")


if __name__ == "__main__":
    main()
