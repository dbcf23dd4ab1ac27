# Usage (from the repository root): python3 benches/training/summary.py
# Per arm: W/D/L mistakes (raw network, search) at each evaluated iteration,
# and the mean of the last 3 evaluations with its standard error (binomial,
# 300 positions each, the three treated as independent measurements).
import csv, sys, glob, math, os
for d in sorted(glob.glob('target/ab/*')):
    try:
        rows = [r for r in csv.DictReader(open(d + '/metrics.csv')) if r['acc_positions'] not in ('', '0')]
    except FileNotFoundError:
        continue
    if not rows: continue
    last = rows[-3:]
    def mean(k):
        xs = [float(r[k]) for r in last]
        m = sum(xs) / len(xs)
        se = math.sqrt(sum(float(r[k.replace('mistakes', 'se')])**2 for r in last)) / len(last)
        return m * 100, se * 100
    raw, mc = mean('acc_raw_mistakes'), mean('acc_mcts_mistakes')
    its = ' '.join(f"{r['iteration']}:{float(r['acc_raw_mistakes'])*100:.0f}/{float(r['acc_mcts_mistakes'])*100:.0f}" for r in rows)
    hrs = float(rows[-1]['hours'])
    print(f"{os.path.basename(d):14} last3 raw {raw[0]:5.1f}±{raw[1]:.1f}  search {mc[0]:5.1f}±{mc[1]:.1f}  h {hrs:.2f} | {its}")
