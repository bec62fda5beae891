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

status=0
# shellcheck disable=SC2086  # $quick is empty or one flag
# shellcheck disable=SC2086  # a list of ids
"$bin" run ${WORKBENCH_EXPERIMENTS:-all} --device "$device" --out "$out/site" --point-timeout-s 240 $quick || status=$?
echo "device $device, wall $(( $(date +%s) - started )) s, run exit status $status" | tee "$out/timing.txt"
exit "$status"
