#!/bin/bash
# Builds c4sim with CUDA (`--features cuda`) on a Debian 12 machine, then
# checks the binary on this machine's CPU. Not part of CI: the toolkit is
# large (about 2 minutes to install, 13 minutes to build on 2 cores).
#
#   deploy/cuda-build.sh            # → target/cuda/release/c4sim (+ a stripped copy)
#
# Why these choices:
# - Debian's non-free component has nvidia-cuda-toolkit (CUDA 11.8); nothing
#   is downloaded from NVIDIA.
# - CUDA_COMPUTE_CAP=80: candle-kernels asks for sm_90a when told 90, which
#   needs CUDA 12; PTX built for 8.0 is compiled by the driver for newer GPUs
#   (H100, H200) when the binary first runs there.
# - A separate target dir, so the CPU build's artifacts stay as they are.
# - The binary loads libcudart, libcublas, libcublasLt and libcurand 11
#   dynamically: the machine that runs it needs those libraries (ldd shows
#   them) and an NVIDIA driver; without a GPU, `device: auto` uses the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export CUDA_COMPUTE_CAP=${CUDA_COMPUTE_CAP:-80}
target=${CUDA_TARGET_DIR:-target/cuda}

if ! command -v nvcc >/dev/null 2>&1; then
    echo "== installing nvidia-cuda-toolkit (Debian non-free)"
    # The container's sources list Debian main only; add contrib and non-free.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' /etc/apt/sources.list.d/debian.sources
    else
        sed -i 's/ main$/ main contrib non-free non-free-firmware/' /etc/apt/sources.list
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit
fi
nvcc --version | tail -1

echo "== cargo build --release --features cuda (CUDA_COMPUTE_CAP=$CUDA_COMPUTE_CAP)"
t0=$(date +%s)
cargo build --release --features cuda --target-dir "$target"
echo "built in $(($(date +%s) - t0)) s"
bin=$target/release/c4sim
strip -o "$target/release/c4sim-stripped" "$bin"
ls -l "$bin" "$target/release/c4sim-stripped"
echo "== libraries it loads"
ldd "$bin" | grep -Ei 'cuda|cublas|curand|nvrtc' || true

echo "== smoke test on the CPU"
# device: auto on a machine without a GPU: the CPU, and correct play (the
# centre on the empty board, the win with three in a row).
out=$(printf '\n445566\n' | "$bin" analyze --player '{kind: alphazero, model: models/connect4-6x7, simulations: 200, device: auto}')
echo "$out"
echo "$out" | head -1 | grep -q '"column":4' || { echo "FAIL: the empty board's move is not the centre"; exit 1; }
echo "$out" | sed -n 2p | grep -Eq '"column":(3|7)' || { echo "FAIL: the win in one was not played"; exit 1; }
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi >/dev/null 2>&1; then
    # device: cuda without a GPU: one clear line and exit 2, no backtrace.
    set +e
    err=$(printf '\n' | "$bin" analyze --player '{kind: alphazero, model: models/connect4-6x7, device: cuda}' 2>&1 >/dev/null)
    rc=$?
    set -e
    echo "device: cuda without a GPU → exit $rc: $err"
    [ "$rc" -ne 0 ] || { echo "FAIL: device: cuda without a GPU succeeded"; exit 1; }
    [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] || { echo "FAIL: more than one line"; exit 1; }
fi
echo "OK: $bin"
