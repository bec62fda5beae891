#!/usr/bin/env bash
# Builds what a GPU call carries: the stripped CUDA (or wgpu) release binary and the criterion
# bench binary, each gzipped, in gpu/ (ignored by git; name it in the device tool's `carry`). Its own target folder (target/gpu), so
# the CPU build the README's command uses is not rebuilt.
#
#   scripts/gpu-pack.sh [cuda|wgpu]
#
# Then, on the device machine, in one call:
#   WORKBENCH_BENCH=gpu/techniques.gz scripts/gpu-run.sh gpu/workbench.gz "$OUT" cuda
# and in the next, with the archives it brought back copied into gpu/carried/:
#   WORKBENCH_CARRIED=gpu/carried scripts/gpu-run.sh gpu/workbench.gz "$OUT" cuda
set -euo pipefail
device=${1:-cuda}
cd "$(dirname "$0")/.."
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "gpu-pack: the tree has changes; commit first, so the records name a commit" >&2
    exit 2
fi
export CUDARC_CUDA_VERSION=${CUDARC_CUDA_VERSION:-13000}
# Burn 0.22's CUDA backend links LLVM 23.1 (cubecl-llvm): installed from PyPI, nothing from GitHub.
if [ "$device" = cuda ]; then
    scripts/llvm-setup.sh
fi
cargo build --release --features "$device" --target-dir target/gpu
mkdir -p gpu
strip -o gpu/workbench target/gpu/release/workbench
gzip -9 -f gpu/workbench
# The bench binary re-runs itself per benchmark, so it travels alone.
bench=$(cargo bench --no-run --features "$device" --target-dir target/gpu --message-format=json \
    | sed -n 's/.*"executable":"\([^"]*techniques-[^"]*\)".*/\1/p' | tail -n 1)
strip -o gpu/techniques "$bench"
gzip -9 -f gpu/techniques
ls -l gpu/workbench.gz gpu/techniques.gz
