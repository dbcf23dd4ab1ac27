# Shared by test-tournament.sh and test-train.sh (sourced, not run): the
# c4sim binary to test, a work dir removed on success (KEEP=1 keeps it), the
# local Slurm stopped however the test ends, and `c4sim` on the PATH that the
# sbatch files' jobs inherit; waiting for jobs. Expects $name, $here and
# $repo; sets $c4sim, $work, $t0 and the functions say, fail, job_records,
# job_states and wait_jobs.

t0=$(date +%s)
say() { echo "$name: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

c4sim=${C4SIM:-$(command -v c4sim || echo "$repo/target/release/c4sim")}
[ -x "$c4sim" ] || c4sim=$(command -v "$c4sim" || true)
[ -n "$c4sim" ] && [ -x "$c4sim" ] || fail "no c4sim binary (set C4SIM or build target/release/c4sim)"
c4sim=$(cd "$(dirname "$c4sim")" && pwd)/$(basename "$c4sim")

work=$(mktemp -d "${TMPDIR:-/tmp}/c4sim-$name.XXXXXX")
cleanup() {
    rc=$?
    "$here/local-slurm.sh" stop || true
    if [ "$rc" = 0 ] && [ "${KEEP:-0}" != 1 ]; then
        rm -rf "$work"
    else
        say "work dir kept: $work"
    fi
    say "elapsed $(($(date +%s) - t0)) s"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The jobs find c4sim by name (the sbatch files run `c4sim`), through the
# PATH that the submit scripts export to them.
mkdir -p "$work/bin"
ln -s "$c4sim" "$work/bin/c4sim"
export PATH=$work/bin:$PATH

# No accounting (no sacct): job states come from scontrol, which keeps
# finished jobs for MinJobAge (300 s in local-slurm.sh's conf). A pending
# array is one record; once started, one per task. $jobs: the ids to watch.
job_records() { for j in $jobs; do scontrol -o show job "$j"; done 2>/dev/null; }
job_states() { job_records | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }

# Waits until every job in $jobs has COMPLETED. Fails, after the test's own
# `dump`, when one failed, when the test's `never_runs` says a job can never
# start (it prints why), or after $timeout_s.
wait_jobs() {
    while :; do
        s=$(job_states | sort | uniq -c | tr -s ' \n' ' ')
        if ! job_states | grep -qvx COMPLETED; then
            [ -n "$(job_states)" ] || { dump; fail "jobs $jobs unknown to scontrol"; }
            return 0
        fi
        if job_states | grep -qE 'FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED'; then
            dump; fail "a job did not succeed: $s"
        fi
        if why=$(never_runs); then
            dump; fail "$why: $s"
        fi
        [ $(($(date +%s) - t0)) -lt "$timeout_s" ] || { dump; fail "jobs not done after ${timeout_s}s: $s"; }
        sleep 1
    done
}
