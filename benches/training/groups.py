# Usage: python3 benches/training/groups.py ACCURACY.json ... (files of `c4sim bench accuracy --json`)
# begin / middle / end W/D/L mistake rates (300 positions each) from bench accuracy JSON files.
import json, sys, math
for f in sys.argv[1:]:
    d = json.load(open(f))
    for p in d['players']:
        out = []
        for g in ['begin', 'middle', 'end']:
            m = sum(p['sets'][f'{g}-{k}']['mistakes'] for k in ['easy', 'medium', 'hard'])
            n = sum(p['sets'][f'{g}-{k}']['positions'] for k in ['easy', 'medium', 'hard'])
            r = m / n
            out.append(f"{g} {100*r:4.1f}±{100*math.sqrt(r*(1-r)/n):.1f}")
        print(f"{f.split('/')[-1]:28} {'  '.join(out)}")
