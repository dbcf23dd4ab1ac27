#!/bin/bash
# End-to-end check of the distributed-training recipe in this folder on a
# throwaway one-node Slurm (local-slurm.sh): submit-train.sh's trainer job and
# its array of 2 self-play workers train scenarios/train_tiny.yaml from
# nothing, meeting only through the files in one OUT directory. Checks that
# every job succeeded, the trainer printed every iteration and wrote OUT/DONE,
# metrics.csv has one row per iteration with the distributed columns, and the
# trainer took batch files from both workers (OUT/intake.json).
#
#   deploy/slurm/test-train.sh        # exit 0 = the recipe works
#
# Env: C4SIM (the binary; default `c4sim` on PATH, else target/release/c4sim),
# LOCAL_SLURM_DIR (see local-slurm.sh), TEST_TIMEOUT_S (default 180),
# KEEP=1 keeps the work dir even on success.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
timeout_s=${TEST_TIMEOUT_S:-180}
workers_n=2
name=test-train
. "$here/test-lib.sh"

# The tiny scenario with its output in the (new, empty) work dir, so the run
# starts from nothing without --fresh, and workers of one thread in batches of
# 10 games (4 files an iteration of 40 games). A worker plays a batch in
# ~0.05 s and the stock 100 steps train in ~0.1 s: the whole run would be
# over in about a second. 1000 steps an iteration and 6 iterations make it
# last several seconds. A worker joins at most about a second after the
# trainer starts (it looks for run.json at least once a second), and the
# trainer takes the oldest files first, so a later joiner's files go into
# iteration 2 or 3. Which worker's files make up an iteration is up to
# timing (each keeps 4 waiting, exactly one iteration's worth), so the check
# is on the run's intake, not on any one iteration.
scenario=scenarios/train_tiny.yaml
iterations=6
mkdir -p "$work/scenarios"
sed -e 's/^\(  out:\).*/\1 run/' \
    -e 's/\(steps_per_iteration:\) *[0-9][0-9]*/\1 1000/' \
    -e 's/^train:$/&\n  distributed: { games_per_batch: 10, worker_threads: 1 }/' \
    -e "s/^\\(  iterations:\\) *[0-9][0-9]*/\\1 $iterations/" \
    "$repo/$scenario" >"$work/$scenario"
grep -q '^  out: run$' "$work/$scenario" || fail "could not set train.out in $scenario"
grep -q 'steps_per_iteration: 1000,' "$work/$scenario" || fail "could not set steps_per_iteration in $scenario"
grep -q '^  distributed: ' "$work/$scenario" || fail "could not add train.distributed to $scenario"
grep -q "^  iterations: $iterations\$" "$work/$scenario" || fail "could not set train.iterations in $scenario"
out=$work/run

eval "$("$here/local-slurm.sh" start)"
export SLURM_CONF

# The trainer (2 CPUs) and 2 workers (1 CPU each) must run at the same time:
# a worker queued behind the trainer would start after DONE and play nothing,
# and a trainer queued behind the workers would leave them waiting for
# run.json. This node may have fewer CPUs (2 on the test VM), so its partition
# is made to share CPUs with jobs that ask for it (OverSubscribe=YES, up to 4
# jobs a CPU) and both jobs are submitted with --oversubscribe. Jobs that do
# not ask (test-tournament.sh's) still get CPUs of their own; local-slurm.sh
# rewrites the partition on its next start.
partition=$(sinfo -h -o '%R' | head -1)
scontrol update PartitionName="$partition" OverSubscribe=YES || fail "cannot set OverSubscribe=YES on partition $partition"

cd "$work"
submitted=$(date +%s)
# Both jobs are submitted held, so the test decides who starts first. Left to
# Slurm, a worker task may start only after the few seconds this run lasts
# (it then plays nothing, and the check below cannot tell whether two workers
# share a run): CI saw exactly that. So the workers start first, and the
# trainer once both are up and polling for its run.json (with waits of a few
# seconds at most by then).
ids=$(SCENARIO=$scenario WORKERS=$workers_n "$here/submit-train.sh" --oversubscribe --hold) || fail "submit-train.sh failed: $ids"
trainer=$(echo "$ids" | sed -n 's/^trainer job \([0-9]*\)$/\1/p')
array=$(echo "$ids" | sed -n 's/^workers job \([0-9]*\)$/\1/p')
[ -n "$trainer" ] && [ -n "$array" ] || fail "could not read the job ids from submit-train.sh output: $ids"
say "submitted trainer job $trainer and worker array $array (held)"

jobs="$trainer $array"
dump() {
    job_records >&2 || true
    for f in "$work"/c4sim-*.log; do
        [ -f "$f" ] && { echo "---- $f" >&2; tail -20 "$f" >&2; }
    done
    ls -R "$out" 2>/dev/null | head -60 >&2 || true
}
never_runs() { false; }

scontrol release "$array" || { dump; fail "cannot release worker array $array"; }
for k in $(seq "$workers_n"); do
    until grep -q "^worker w$k: waiting: " "c4sim-worker-$k.log" 2>/dev/null; do
        [ $(($(date +%s) - t0)) -lt "$timeout_s" ] || { dump; fail "worker w$k not waiting for the run after ${timeout_s}s"; }
        sleep 0.2
    done
done
say "both workers poll for the run $(($(date +%s) - submitted)) s after submission: releasing the trainer"
scontrol release "$trainer" || { dump; fail "cannot release trainer job $trainer"; }
wait_jobs
say "all jobs completed ($(job_states | wc -l) records) $(($(date +%s) - submitted)) s after submission"

# Every job: COMPLETED with exit code 0:0, the trainer once and each worker task.
scontrol -o show job "$trainer" | grep -q 'JobState=COMPLETED .*ExitCode=0:0' || { dump; fail "trainer job $trainer did not exit 0"; }
for k in $(seq "$workers_n"); do
    scontrol -o show job "$array" | grep "ArrayTaskId=$k " | grep -q 'JobState=COMPLETED .*ExitCode=0:0' \
        || { dump; fail "worker task ${array}_$k did not exit 0"; }
    grep -q "^worker w$k: the run is done$" "c4sim-worker-$k.log" || { dump; fail "worker w$k did not say the run is done"; }
done

# The trainer printed every iteration and the end.
log=c4sim-trainer.log
for i in $(seq "$iterations"); do
    grep -q "^iteration $i/$iterations: " "$log" || { dump; fail "trainer printed no iteration $i/$iterations"; }
done
grep -q "^done: $iterations iterations" "$log" || { dump; fail "trainer did not print done"; }
[ -f "$out/DONE" ] || { dump; fail "no $out/DONE"; }

# metrics.csv: one row per iteration, numbered 1..N, with the distributed
# columns last.
metrics=$out/metrics.csv
[ -s "$metrics" ] || fail "no $metrics"
header=$(head -1 "$metrics")
case $header in
    iteration,*,workers,files,stale,rejected,mean_lag,worker_s,worker_cpu_s,selfplay_positions) ;;
    *) fail "metrics.csv header lacks the distributed columns at its end: $header" ;;
esac
rows=$(tail -n +2 "$metrics" | awk -F, '{ printf "%s ", $1 }')
[ "$rows" = "$(seq -s ' ' "$iterations") " ] || fail "metrics.csv iterations are [$rows], expected 1..$iterations"
col=$(echo "$header" | tr ',' '\n' | grep -nx workers | cut -d: -f1)
per_row=$(tail -n +2 "$metrics" | cut -d, -f"$col" | tr '\n' ' ')

# The trainer took files from every worker: intake.json names the highest
# batch it took of each ({"taken":{"w1":N,"w2":M}}).
for k in $(seq "$workers_n"); do
    took=$(grep -o "\"w$k\":[0-9]*" "$out/intake.json" | cut -d: -f2)
    [ "${took:-0}" -gt 0 ] || { dump; fail "the trainer took no file from worker w$k (intake.json: $(cat "$out/intake.json"); workers column: $per_row)"; }
    say "the trainer took worker w$k's batches up to $took"
done

# Both workers' folders hold batch files.
for k in $(seq "$workers_n"); do
    n=$(find "$out/selfplay/w$k" -name 'batch-*.c4games' | wc -l)
    [ "$n" -gt 0 ] || { dump; fail "no batch files in $out/selfplay/w$k"; }
    say "worker w$k wrote $n batch files"
done

say "OK: $iterations iterations, workers per iteration [$per_row], DONE written, all $((workers_n + 1)) jobs exited 0"
