#!/bin/sh
# Queues a distributed training: the trainer job and the workers' job array,
# at once (not one after the other: they run together and meet through the
# files in OUT). Prints both job ids.
# Usage: SCENARIO=scenarios/train_connect4.yaml [OUT=runs/c4] [WORKERS=8] \
#            deploy/slurm/submit-train.sh [sbatch options for both jobs]
# OUT defaults to the scenario's `train.out`; WORKERS (default: the array in
# train-workers.sbatch) is the number of worker tasks, w1..wN.
set -eu
here=$(dirname "$0")
trainer=$(sbatch --parsable --export=ALL "$@" "$here/train-trainer.sbatch")
trainer=${trainer%%;*}
# Without workers the trainer would wait forever: cancel it if they cannot be queued.
workers=$(sbatch --parsable --export=ALL ${WORKERS:+--array=1-"$WORKERS"} "$@" "$here/train-workers.sbatch") \
    || { scancel "$trainer"; exit 1; }
workers=${workers%%;*}
echo "trainer job $trainer"
echo "workers job $workers"
