# Usage: python3 benches/training/groups.py ACCURACY.json ... (files of `c4sim bench accuracy --json`)
# begin / middle / end W/D/L mistake rates (± binomial standard error) from bench accuracy JSON
# files, and begin+middle together; a group whose sets were not measured (--only) is left out.
import json, sys, math

def rate(m, n):
    r = m / n
    return f"{100*r:4.1f}±{100*math.sqrt(r*(1-r)/n):.1f}"

for f in sys.argv[1:]:
    d = json.load(open(f))
    for p in d['players']:
        out, bm = [], [0, 0]
        for g in ['begin', 'middle', 'end']:
            sets = [p['sets'][f'{g}-{k}'] for k in ['easy', 'medium', 'hard'] if f'{g}-{k}' in p['sets']]
            if not sets:
                continue
            m, n = sum(s['mistakes'] for s in sets), sum(s['positions'] for s in sets)
            out.append(f"{g} {rate(m, n)}")
            if g != 'end':
                bm[0] += m
                bm[1] += n
        if bm[1]:
            out.append(f"begin+middle {rate(*bm)}")
        print(f"{f.split('/')[-1]:28} {'  '.join(out)}")
