#!/bin/bash
# End-to-end check of the Slurm recipe in this folder on a throwaway one-node
# Slurm (local-slurm.sh): submit.sh's job array of shards plus the merge job,
# whose standings must equal those of the same tournament run unsharded.
#
#   deploy/slurm/test-tournament.sh        # exit 0 = the recipe works
#
# Env: C4SIM (the binary; default `c4sim` on PATH, else target/release/c4sim),
# LOCAL_SLURM_DIR (see local-slurm.sh), TEST_TIMEOUT_S (default 180),
# KEEP=1 keeps the work dir even on success.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
timeout_s=${TEST_TIMEOUT_S:-180}
name=test-tournament
. "$here/test-lib.sh"

# Two identical run dirs. Player profiles (`use: minimax8`) are looked up in
# players/ beside the scenarios/ dir, so both are copied; the report dir in
# the scenario is relative to the directory c4sim runs in.
scenario=scenarios/round_robin.yaml
for d in sharded unsharded; do
    mkdir -p "$work/$d/scenarios"
    cp -r "$repo/players" "$work/$d/players"
    # Fewer games per pair: the point is the plumbing, not the ratings.
    sed 's/^\(  *games_per_pair:\) *[0-9][0-9]*/\1 4/' "$repo/$scenario" >"$work/$d/$scenario"
    grep -q '^  *games_per_pair: 4$' "$work/$d/$scenario" || fail "could not shrink games_per_pair in $scenario"
done
report_dir=$(sed -n 's/^  dir: *\([^ #]*\).*/\1/p' "$work/sharded/$scenario" | head -1)
report_dir=${report_dir:-reports/round_robin}

eval "$("$here/local-slurm.sh" start)"
export SLURM_CONF

cd "$work/sharded"
out=$(SCENARIO=$scenario "$here/submit.sh") || fail "submit.sh failed: $out"
# submit.sh prints only the merge job's id; the array's is in its dependency.
merge=$(echo "$out" | sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p')
[ -n "$merge" ] || fail "could not read the merge job id from submit.sh output: $out"
array=$(scontrol -o show job "$merge" | sed -n 's/.*Dependency=afterok:\([0-9]*\).*/\1/p')
[ -n "$array" ] || fail "merge job $merge has no afterok dependency: $(scontrol -o show job "$merge")"
say "submitted shard array $array and merge job $merge"

jobs="$array $merge"
dump() {
    job_records >&2 || true
    for f in "$work"/sharded/c4sim-*.log; do
        [ -f "$f" ] && { echo "---- $f" >&2; tail -20 "$f" >&2; }
    done
}
never_runs() {
    scontrol -o show job "$merge" | grep -q 'Reason=DependencyNeverSatisfied' && echo "merge can never run (a shard failed)"
}
wait_jobs
say "all jobs completed ($(job_states | wc -l) records)"

merged=$work/sharded/$report_dir
[ -s "$merged/standings.csv" ] || { dump; fail "merge wrote no $merged/standings.csv"; }
ls "$merged"/games.shard-*-of-*.jsonl >/dev/null 2>&1 || fail "no shard records in $merged"

cd "$work/unsharded"
"$c4sim" run "$scenario" >run.log 2>&1 || { tail -20 run.log >&2; fail "unsharded run failed"; }
single=$work/unsharded/$report_dir
[ -s "$single/standings.csv" ] || fail "unsharded run wrote no $single/standings.csv"

# ms_per_move is wall-clock timing and differs between any two runs; every
# other column (Elo, W/D/L, score, LOS) depends only on the games' results.
strip_timing() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ms_per_move") skip[i] = 1 }
        { line = ""; for (i = 1; i <= NF; i++) if (!skip[i]) line = line (line == "" ? "" : ",") $i; print line }' "$1"
}
if ! diff <(strip_timing "$single/standings.csv") <(strip_timing "$merged/standings.csv") >&2; then
    fail "merged standings differ from the unsharded ones (< unsharded, > merged)"
fi
n_sharded=$(cat "$merged"/games.shard-*.jsonl | wc -l)
n_single=$(wc -l <"$single/games.jsonl")
[ "$n_sharded" = "$n_single" ] || fail "shards recorded $n_sharded games, the unsharded run $n_single"

say "OK: $(ls "$merged"/games.shard-*.jsonl | wc -l) shards, $n_single games, merged standings = unsharded standings"
