# Shared by test-tournament.sh and test-train.sh (sourced, not run): the
# c4sim binary to test, a work dir removed on success (KEEP=1 keeps it), the
# local Slurm stopped however the test ends, and `c4sim` on the PATH that the
# sbatch files' jobs inherit. Expects $name, $here and $repo; sets $c4sim,
# $work, $t0 and the functions say and fail.

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
