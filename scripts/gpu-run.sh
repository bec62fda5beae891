#!/usr/bin/env bash
# The GPU run: every experiment on a device backend, with a prebuilt (stripped) binary, results
# and guide written under OUT. Made for the device machine (nothing installed there, no network):
#
#   scripts/gpu-run.sh BINARY OUT [DEVICE] [--quick]
#
# DEVICE is cuda (default) or wgpu; WORKBENCH_EXPERIMENTS (default: all) picks experiments by id.
# It records the device (name, driver, total and free memory)
# and what the probe reads (memory-summary), nvidia-smi where there is one, then runs all
# experiments (the full profile sizes each experiment for the device; --quick for a smoke test)
# and writes OUT/site (the guide, with data/*.json) and OUT/timing.txt.
set -euo pipefail

bin=${1:?usage: scripts/gpu-run.sh BINARY OUT [DEVICE] [--quick]}
out=${2:?usage: scripts/gpu-run.sh BINARY OUT [DEVICE] [--quick]}
device=${3:-cuda}
quick=${4:-}
mkdir -p "$out"
started=$(date +%s)

# Identify the device first: a machine without the driver stops here, with one line, exit 2.
"$bin" memory-summary --device "$device" | tee "$out/memory-summary.txt"
"$bin" memory-summary --device "$device" --json > "$out/memory-summary.json"
if command -v nvidia-smi > /dev/null; then
    nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
fi

# Each point runs in a fresh process, which compiles (NVRTC) and autotunes its kernels during
# its warm-up: on an H200 a GPT-2-small cell spent over 150 s there. CubeCL keeps its autotune
# results on disk by default, and its compiled kernels too with a cubecl.toml in the working
# folder or a parent: a small model's first point took 36 s, the next ones 2 s with both caches
# and 6 s with the autotune cache alone.
if [ ! -e cubecl.toml ] && [ ! -e CubeCL.toml ]; then
    printf '[compilation]\ncache = "target"\n' > cubecl.toml
fi

status=0
# shellcheck disable=SC2086  # $quick is empty or one flag
# shellcheck disable=SC2086  # a list of ids
"$bin" run ${WORKBENCH_EXPERIMENTS:-all} --device "$device" --out "$out/site" --point-timeout-s 600 $quick || status=$?
echo "device $device, wall $(( $(date +%s) - started )) s, run exit status $status" | tee "$out/timing.txt"
exit "$status"
