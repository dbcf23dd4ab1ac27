#!/bin/bash
# The single-process run against trainer + 2 workers at equal cores and equal
# wall time, one after the other on the whole machine (docs/distributed.md,
# "Measured"): scenarios/train_connect4.yaml from nothing with `eval.every: 5`,
# each for MINUTES (default 20), then benches/distributed/compare.py.
#   benches/distributed/compare.sh [MINUTES]
set -eu
cd "$(dirname "$0")/../.."
minutes=${1:-20}
dir=${COMPARE_DIR:-/tmp/c4sim-compare}
bin=${C4SIM:-target/release/c4sim}
mkdir -p "$dir"
sed -e "s#out: models/train_connect4#out: $dir/single#" -e 's/eval: { every: 10,/eval: { every: 5,/' \
    scenarios/train_connect4.yaml > "$dir/single.yaml"
sed -e "s#$dir/single#$dir/dist#" "$dir/single.yaml" > "$dir/dist.yaml"
echo "  distributed: { worker_threads: 1 }" >> "$dir/dist.yaml"
s=$((minutes * 60))
timeout "$s" "$bin" run "$dir/single.yaml" --fresh > "$dir/single.log" 2>&1 || true
timeout "$s" "$bin" run "$dir/dist.yaml" --role trainer --fresh > "$dir/trainer.log" 2>&1 &
sleep 1
for w in w1 w2; do
    timeout $((s - 1)) "$bin" run "$dir/dist.yaml" --role selfplay --worker "$w" > "$dir/$w.log" 2>&1 &
done
wait || true
python3 benches/distributed/compare.py "$dir/single" "$dir/dist"
