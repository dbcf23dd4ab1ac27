# Two runs' 300-position curves side by side at equal CPU hours: for each
# evaluated iteration of run A, A's mistakes (alone / 800 simulations) beside
# those of B's evaluated iteration nearest in CPU hours. CPU hours sum the
# metrics.csv `cpu_s` column (both cores count), so a run that shared the
# machine with other work is not charged for it the way wall `hours` are.
#
#   python3 benches/training/cpu_curves.py RUN_A RUN_B [EVERY]
#
# RUN_* is a training `out` directory (its metrics.csv); EVERY (default 1)
# prints every EVERY-th evaluated row of A. Each figure is ± about 2.0 points
# alone and 1.0 at 800 simulations (300 positions).
import csv, sys


def curve(out):
    """(iteration, CPU hours, alone %, 800 simulations %) per evaluated row."""
    rows, cpu = [], 0.0
    for r in csv.DictReader(open(out + '/metrics.csv')):
        cpu += float(r['cpu_s'] or 0)
        if r['acc_raw_mistakes']:
            rows.append((int(r['iteration']), cpu / 3600,
                         100 * float(r['acc_raw_mistakes']), 100 * float(r['acc_mcts_mistakes'])))
    return rows


if len(sys.argv) < 3:
    sys.exit('usage: cpu_curves.py RUN_A RUN_B [EVERY]')
a, b = curve(sys.argv[1]), curve(sys.argv[2])
every = int(sys.argv[3]) if len(sys.argv) > 3 else 1
if not b:
    sys.exit(f'{sys.argv[2]}: no evaluated rows')
print(f"{'A it':>5} {'CPU h':>6} {'alone':>6} {'800':>5}   | {'B it':>5} {'CPU h':>6} {'alone':>6} {'800':>5}")
for i, (it, cpu, raw, mc) in enumerate(a):
    if i % every:
        continue
    bit, bcpu, braw, bmc = min(b, key=lambda r: abs(r[1] - cpu))
    print(f"{it:5} {cpu:6.2f} {raw:5.1f}% {mc:4.1f}%   | {bit:5} {bcpu:6.2f} {braw:5.1f}% {bmc:4.1f}%")
