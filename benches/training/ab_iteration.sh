#!/bin/bash
# Times one iteration of the recipe with two c4sim binaries in turn (A B A B
# …), each from a fresh copy of the committed run's checkpoint, and prints
# each run's self-play and training speed from its metrics.csv. For a change
# to self-play or training speed: build the old binary, copy it aside, build
# the new one (models/README.md, Part six, has a use).
#
#   benches/training/ab_iteration.sh OLD_BINARY NEW_BINARY [PAIRS]
#
# Output: label, selfplay_games_per_s, simulations_per_s, train_steps_per_s,
# selfplay_s, train_s. Work in target/ab-iteration/. Run on a quiet machine.
set -e
[ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 OLD_BINARY NEW_BINARY [PAIRS]" >&2; exit 2; }
ck=$(ls -d models/train_connect4/checkpoints/iter-* | tail -n 1)
next=$(( 10#$(basename "$ck" | sed 's/iter-//') + 1 ))
echo "label,selfplay_games_per_s,simulations_per_s,train_steps_per_s,selfplay_s,train_s (iteration $next from $ck)"
mkdir -p target/ab-iteration
for r in $(seq 1 "${3:-2}"); do
  for b in A B; do
    bin=$1; [ $b = B ] && bin=$2
    d=target/ab-iteration/$b$r
    rm -rf "$d"
    # The recipe unchanged (branch.sh's `cont` arm), one iteration, in $d.
    BRANCH_DIR=$d C4SIM=$bin benches/training/branch.sh cont "$ck" "$next" > "$d.log" 2>&1
    echo "$b$r,$(tail -n 1 "$d/metrics.csv" | cut -d, -f8,9,12,18,19)"
  done
done
