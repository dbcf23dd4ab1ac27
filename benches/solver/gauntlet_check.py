# For each game of the solver gauntlet: the exact value (for the solver) of
# the position at the solver's first move, against the result it got.
# Usage: gauntlet_check.py BINARY GAMES_JSONL
import json, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
games = [json.loads(l) for l in open(path)]
todo = {}
for g in games:
    seat = g["players"].index("Solver")
    first = len(g["opening"]) + ((seat - len(g["opening"])) % 2)
    todo[g["game"]] = ''.join(str(c + 1) for c in g["moves"][:first])
def result(g):
    return 0 if g["result"] == "draw" else (1 if g["winner"] == "Solver" else -1)
# A win cannot be worse than the position: only the other games need the
# position's exact value.
positions = sorted({todo[g["game"]] for g in games if result(g) < 1})
out = subprocess.run([binary, "analyze", "--player", "{kind: solver, table_log2: 26, book: models/solver-book-6x7.bin}"],
                     input="".join(p + "\n" for p in positions), capture_output=True, text=True, check=True).stdout
value = {}
for line in out.splitlines():
    e = json.loads(line)
    best = max(s for s in e["scores"] if s is not None)
    value[e["position"]] = (best > 0) - (best < 0)
rows = {}
bad = []
for g in games:
    opp = [p for p in g["players"] if p != "Solver"][0]
    r = result(g)
    v = value.get(todo[g["game"]], None)
    if v is None:
        v = "won game"
        rows.setdefault(opp, {}).setdefault(("-", r), 0)
        rows[opp][("-", r)] += 1
        continue
    rows.setdefault(opp, {}).setdefault((v, r), 0)
    rows[opp][(v, r)] += 1
    if r < v:
        bad.append(g["game"])
names = {1: "win", 0: "draw", -1: "loss"}
for opp, t in rows.items():
    print(f"against {opp}:")
    for (v, r), n in sorted(t.items(), key=str, reverse=True):
        print(f"  position {names.get(v, '(not solved: a win)'):4} for the solver -> it got a {names[r]}: {n}")
print("games where the solver did worse than its position allowed:", bad or "none")
