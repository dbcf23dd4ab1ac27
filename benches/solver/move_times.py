# Usage: python3 benches/solver/move_times.py target/release/c4sim benches/solver/vs_random.yaml Solver
# Per-move wall time of one player in `c4sim run FILE --json`: each move
# event's arrival minus the previous event's.
import json, subprocess, sys, time, statistics
binary, scenario, who = sys.argv[1], sys.argv[2], sys.argv[3]
p = subprocess.Popen([binary, "run", scenario, "--json", "--fresh"], stdout=subprocess.PIPE, text=True)
last = time.monotonic()
times, by_ply, results = [], {}, []
ply = 0
for line in p.stdout:
    now = time.monotonic()
    e = json.loads(line)
    if e.get("event") == "game_start":
        ply = len(e.get("opening", []))
    if e.get("event") == "move":
        if e["player"] == who:
            times.append(now - last)
            by_ply.setdefault(ply, []).append(now - last)
        ply += 1
    if e.get("event") == "game_over":
        results.append((e.get("winner"), e.get("reason")))
    last = now
p.wait()
print(f"{len(times)} moves of {who}: mean {statistics.mean(times):.3f} s, median {statistics.median(times):.3f} s, max {max(times):.2f} s")
for k in sorted(by_ply):
    v = by_ply[k]
    print(f"ply {k:2}: n={len(v):3} mean {statistics.mean(v):.3f} s max {max(v):.2f} s")
print(results)
