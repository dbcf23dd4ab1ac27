"""Self-play positions per CPU-second and the 300-position accuracy curve of
two training runs, from their newest checkpoints' meta.json (rows hold the
self-play positions and CPU seconds, which metrics.csv of a single-process run
does not show).  Usage: compare.py RUN_DIR [RUN_DIR ...]"""
import glob, json, sys

for out in sys.argv[1:]:
    newest = sorted(glob.glob(f"{out}/checkpoints/iter-*"))[-1]
    rows = json.load(open(f"{newest}/meta.json"))["metrics"]
    pos = sum(r.get("selfplay_positions", 0) for r in rows)
    cpu = sum(r.get("selfplay_cpu_s", 0.0) for r in rows)
    print(f"== {out}: {len(rows)} iterations, {sum(r['games'] for r in rows)} games, {pos} self-play positions, "
          f"self-play CPU {cpu:.0f} s: {pos / max(cpu, 1e-9):.1f} positions per CPU-second")
    minutes = 0.0
    for r in rows:
        minutes += (r["selfplay_s"] + r["train_s"] + r["eval_s"] + r["acc_s"]) / 60
        if r.get("acc_positions"):
            print(f"  iteration {r['iteration']:3d} at {minutes:5.1f} min: alone {100 * r['acc_raw_mistakes']:.1f} ± "
                  f"{100 * r['acc_raw_se']:.1f}%, at 800 simulations {100 * r['acc_mcts_mistakes']:.1f} ± "
                  f"{100 * r['acc_mcts_se']:.1f}%")
    print(f"  {minutes:.1f} min in all; positions dropped as stale {sum(r.get('stale', 0) for r in rows)}, "
          f"mean lag {sum(r.get('mean_lag', 0) for r in rows) / len(rows):.2f}")
