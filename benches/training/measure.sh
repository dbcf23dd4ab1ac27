#!/bin/sh
# One arm's measurements, as models/README.md's parts report them:
#   MODEL=dir TAG=name sh benches/training/measure.sh ARM
# - mistakes on the 600 begin+middle positions (seed 1) alone and at 800
#   simulations, with groups.py's begin / middle split: target/branch/TAG-acc.txt
# - scenarios/az_800.yaml with this model (200 games against minimax depth 8):
#   target/branch/TAG-az800/
# - 200 games against models/connect4-6x7-v3 at 800 simulations a move each,
#   seed 2028: target/branch/TAG-v3/
# MODEL defaults to target/branch/ARM (the arm's newest checkpoint), TAG to
# ARM. C4SIM=path runs another binary than target/release/c4sim.
set -e
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { echo "usage: [MODEL=dir] [TAG=name] measure.sh ARM" >&2; exit 2; }
arm=$1; m=${MODEL:-target/branch/$arm}; tag=${TAG:-$arm}; bin=${C4SIM:-target/release/c4sim}
out=target/branch/$tag
mkdir -p target/branch
"$bin" bench accuracy --seed 1 --only begin-easy,begin-medium,begin-hard,middle-easy,middle-medium,middle-hard \
  --player "{kind: alphazero, model: $m, simulations: 1}" \
  --player "{kind: alphazero, model: $m, simulations: 800}" --json $out-acc.json > $out-acc.txt 2>&1
python3 benches/training/groups.py $out-acc.json >> $out-acc.txt
sed -e "s#model: models/connect4-6x7#model: $m#" -e "s#dir: docs/az-800#dir: $out-az800#" scenarios/az_800.yaml > $out-az800.yaml
"$bin" run $out-az800.yaml --fresh > $out-az800.txt 2>&1
A_NAME=$tag B_NAME=v3 sh benches/training/direct.sh $tag-v3 $m models/connect4-6x7-v3 200 > /dev/null
echo "done $tag: $out-acc.txt, $out-az800/, $out-v3/"
