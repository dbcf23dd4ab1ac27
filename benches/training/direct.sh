#!/bin/sh
# Two networks head to head, the way models/README.md's parts compare arms:
#   sh benches/training/direct.sh TAG A_MODEL B_MODEL GAMES [SPRT]
# A (the candidate) against B at 800 simulations a move each (threads: 1, so
# the search is deterministic), seed 2028, 3-ply openings with both colours,
# two games at a time. SPRT, if given, is a `tournament.sprt` value such as
# "{ elo0: 0, elo1: 20 }": the match then stops at the test's decision.
# The scenario and the report go to target/branch/TAG(.yaml); the console
# output to target/branch/TAG.txt. Score it by opening pair with
#   python3 benches/training/pairs.py target/branch/TAG A
# C4SIM=path runs another binary than target/release/c4sim; A_NAME and
# B_NAME rename the players (A and B by default).
set -e
cd "$(dirname "$0")/../.."
[ $# -ge 4 ] || { echo "usage: direct.sh TAG A_MODEL B_MODEL GAMES [SPRT]" >&2; exit 2; }
tag=$1; a=$2; b=$3; n=$4; bin=${C4SIM:-target/release/c4sim}
an=${A_NAME:-A}; bn=${B_NAME:-B}
mkdir -p target/branch
cat > target/branch/$tag.yaml <<EOT
name: $tag
mode: tournament
seed: 2028
tournament: { schedule: gauntlet, games_per_pair: $n, openings: { plies: 3 }, concurrency: 2 ${5:+, sprt: $5} }
report: { dir: target/branch/$tag, formats: [markdown, json, csv] }
players:
  - { kind: alphazero, name: $an, model: $a, simulations: 800, threads: 1 }
  - { kind: alphazero, name: $bn, model: $b, simulations: 800, threads: 1 }
EOT
"$bin" run target/branch/$tag.yaml --fresh > target/branch/$tag.txt 2>&1
echo "done $tag: target/branch/$tag/report.md"
