#!/bin/sh
# Queues the shards as a job array, then the merge once all of them succeed.
# Usage: SCENARIO=scenarios/round_robin.yaml deploy/slurm/submit.sh
set -eu
here=$(dirname "$0")
array=$(sbatch --parsable --export=ALL "$here/tournament-shards.sbatch")
sbatch --dependency=afterok:"$array" --export=ALL "$here/merge.sbatch"
