#!/usr/bin/env python3
"""Positions from a training run's own self-play, labelled by the solver, as a
sets file that `c4sim bench accuracy --sets` reads.

Why: the test sets' positions come from lines of half random, half minimax
depth 4 moves. A network that errs on them may still play its own positions
well; comparing the two rates tells whether the network lacks knowledge or
only has not seen positions like the test's.

    python3 benches/training/replay_positions.py REPLAY.bin OUT.jsonl \
        [--plies 15-26] [--n 600] [--seed 1] [--c4sim target/release/c4sim]

Takes the replay buffer's positions in the ply range where the side to move
has no immediate win, draws --n of them (seeded), finds a move order for each
(pieces peeled off top-down, alternating colours), asks `c4sim analyze
--player solver` for every column's exact score, and keeps those whose
columns' win/draw/loss classes differ, like the test sets (set name
`middle-easy` for plies 15-26, `begin-easy` for 8-14: one set, no terciles).
"""
import argparse, json, random, struct, subprocess, sys

ROWS, COLS = 6, 7


def read_replay(path):
    with open(path, "rb") as f:
        data = f.read()
    # Version 2 adds 16 reply-target floats after each sample's value.
    sizes = {b"C4RPLY01": 8 * 8 + 16 * 4 + 4, b"C4RPLY02": 8 * 8 + 16 * 4 + 4 + 16 * 4}
    assert data[:8] in sizes, "not a c4sim replay buffer"
    (n,) = struct.unpack_from("<Q", data, 8)
    off, size = 16, sizes[data[:8]]
    assert len(data) == off + n * size, "a replay buffer of another length than its count says"
    for i in range(n):
        words = struct.unpack_from("<8Q", data, off + i * size)
        yield words[0], words[4]  # 6x7 fits the first word of each set


def grid(mine, theirs):
    g = [[None] * COLS for _ in range(ROWS)]
    for r in range(ROWS):
        for c in range(COLS):
            b = 1 << (r * COLS + c)
            g[r][c] = 0 if mine & b else 1 if theirs & b else None
    return g


def wins_at(g, r, c, who):
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        n = 1
        for s in (1, -1):
            rr, cc = r + s * dr, c + s * dc
            while 0 <= rr < ROWS and 0 <= cc < COLS and g[rr][cc] == who:
                n += 1
                rr, cc = rr + s * dr, cc + s * dc
        if n >= 4:
            return True
    return False


def height(g, c):
    return sum(1 for r in range(ROWS) if g[r][c] is not None)


def immediate_win(g):
    for c in range(COLS):
        h = height(g, c)
        if h < ROWS:
            g[h][c] = 0
            w = wins_at(g, h, c, 0)
            g[h][c] = None
            if w:
                return True
    return False


def move_order(g, ply):
    """Columns (from 0) that build the position, or None. The side to move
    is 0; the last mover is 1. Peel the top pieces alternately."""
    tops = [height(g, c) for c in range(COLS)]
    order = []

    def peel(who, left):
        if left == 0:
            return True
        for c in range(COLS):
            h = tops[c]
            if h and g[h - 1][c] == who:
                tops[c] -= 1
                order.append(c)
                if peel(1 - who, left - 1):
                    return True
                order.pop()
                tops[c] += 1
        return False

    return list(reversed(order)) if peel(1, ply) else None


def main():
    a = argparse.ArgumentParser()
    a.add_argument("replay")
    a.add_argument("out")
    a.add_argument("--plies", default="15-26")
    a.add_argument("--n", type=int, default=600)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--c4sim", default="target/release/c4sim")
    args = a.parse_args()
    lo, hi = map(int, args.plies.split("-"))
    cands, seen = [], set()
    for mine, theirs in read_replay(args.replay):
        ply = bin(mine).count("1") + bin(theirs).count("1")
        if lo <= ply <= hi and (mine, theirs) not in seen:
            seen.add((mine, theirs))
            if not immediate_win(grid(mine, theirs)):
                cands.append((mine, theirs))
    random.Random(args.seed).shuffle(cands)
    picked = []
    for mine, theirs in cands[: 3 * args.n]:
        ply = bin(mine).count("1") + bin(theirs).count("1")
        order = move_order(grid(mine, theirs), ply)
        if order is not None:
            picked.append((ply, "".join(str(c + 1) for c in order)))
    text = "".join(m + "\n" for _, m in picked)
    res = subprocess.run([args.c4sim, "analyze", "--player", "solver"], input=text, capture_output=True, text=True, check=True)
    set_name = "middle-easy" if lo >= 15 else "begin-easy"
    kept = []
    for (ply, moves), line in zip(picked, res.stdout.splitlines()):
        scores = json.loads(line)["scores"]
        classes = {(s > 0) - (s < 0) for s in scores if s is not None}
        if len(classes) > 1:
            kept.append({"set": set_name, "moves": moves, "ply": ply, "nodes": 0, "scores": scores})
        if len(kept) == args.n:
            break
    header = {"format": "c4sim-accuracy-sets", "version": 1, "board": "6x7x4", "seed": args.seed,
              "generator": f"positions of plies {lo}-{hi} from the self-play replay buffer {args.replay}, "
                           "no immediate win, columns' classes differ; labelled by c4sim analyze --player solver"}
    with open(args.out, "w") as f:
        f.write(json.dumps(header) + "\n")
        for k in kept:
            f.write(json.dumps(k, separators=(",", ":")) + "\n")
    print(f"{args.out}: {len(kept)} positions of {len(cands)} candidates", file=sys.stderr)


if __name__ == "__main__":
    main()
