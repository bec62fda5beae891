#!/usr/bin/env bash
# Builds what a GPU call carries: the stripped CUDA (or wgpu) release binary, gzipped, in gpu/
# (ignored by git; name it in the device tool's `carry`). Its own target folder (target/gpu), so
# the CPU build the README's command uses is not rebuilt.
#
#   scripts/gpu-pack.sh [cuda|wgpu]
#
# Then, on the device machine, in one call:
#   scripts/gpu-run.sh gpu/workbench.gz "$OUT" cuda
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
cargo build --release --features "$device" --target-dir target/gpu
mkdir -p gpu
strip -o gpu/workbench target/gpu/release/workbench
gzip -9 -f gpu/workbench
ls -l gpu/workbench.gz
