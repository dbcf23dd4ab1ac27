#!/usr/bin/env bash
# Behaviour checks: this checkout's release binary against an older one:
# validate --resolved of every shipped scenario and profile, the round-robin
# replayed against docs/round-robin, train_tiny's metrics rows.
set -u
cd "$(dirname "$0")/../.."
NEW=target/release/c4sim; OLD=${1:?usage: benches/code/same_behaviour.sh OLD_C4SIM_BINARY}
T=$(mktemp -d)
echo "== validate --resolved"
n=0; d=0
for f in scenarios/*.yaml players/*.yaml; do
  $OLD validate --resolved "$f" > $T/old.txt 2>&1; a=$?
  $NEW validate --resolved "$f" > $T/new.txt 2>&1; b=$?
  n=$((n+1))
  if ! cmp -s $T/old.txt $T/new.txt || [ $a != $b ]; then d=$((d+1)); echo "DIFF $f ($a/$b)"; diff $T/old.txt $T/new.txt | head -5; fi
done
echo "validate: $n files, $d differ"
echo "== round_robin replay"
$NEW run scenarios/round_robin.yaml --out $T/rr --fresh > /dev/null 2>&1; echo "exit $?"
python3 - $T/rr/games.jsonl docs/round-robin/games.jsonl <<'P'
import json,sys
strip=lambda l:{k:v for k,v in json.loads(l).items() if k not in ('duration_ms','think_ms','turns')}
a=sorted((strip(l) for l in open(sys.argv[1])),key=lambda g:g['game'])
b=sorted((strip(l) for l in open(sys.argv[2])),key=lambda g:g['game'])
print("round_robin: %d vs %d games, identical apart from timing: %s" % (len(a),len(b),a==b))
P
echo "== train_tiny metrics"
sed "s#out: models/train_tiny#out: $T/tiny-new#" scenarios/train_tiny.yaml > $T/tiny-new.yaml
sed "s#out: models/train_tiny#out: $T/tiny-old#" scenarios/train_tiny.yaml > $T/tiny-old.yaml
$NEW run $T/tiny-new.yaml > /dev/null 2>&1; echo "new exit $?"
$OLD run $T/tiny-old.yaml > /dev/null 2>&1; echo "old exit $?"
python3 - $T/tiny-new/metrics.csv $T/tiny-old/metrics.csv <<'P'
import csv,sys
keep=lambda r:{k:v for k,v in r.items() if not any(t in k for t in ('_s','per_s','hours','_per_','mean_batch','cache'))}
a=[keep(r) for r in csv.DictReader(open(sys.argv[1]))]
b=[keep(r) for r in csv.DictReader(open(sys.argv[2]))]
print("train_tiny: %d rows vs %d, identical apart from timing: %s" % (len(a),len(b),a==b))
if a!=b:
  for x,y in zip(a,b):
    print({k:(x[k],y[k]) for k in x if x[k]!=y.get(k)})
P
