#!/usr/bin/env bash
# The GPU run, made for a lent machine: no network, nothing installed, each call under a limit,
# only a few files brought back. One experiment at a time, in the order the guide needs them,
# each into a result set of its own; after each one, what has finished (records, the journals
# of the unfinished, and CubeCL's caches) is archived under OUT, so that the next call, given
# those archives back, resumes where this one stopped and compiles nothing twice.
#
#   scripts/gpu-run.sh BINARY OUT [cuda|wgpu] [--quick]
#
# BINARY: the workbench, or a gzip of it (scripts/gpu-pack.sh makes one). OUT gets results.tar.gz
# (every experiment's set and the journals), caches.tar.gz (compiled kernels and autotune
# results), memory-summary.txt/.json, nvidia-smi.txt and timing.txt (seconds per experiment).
# Environment:
#   WORKBENCH_EXPERIMENTS  ids in order (default: below)
#   WORKBENCH_DEADLINE_S   seconds this call may spend (default 540: under a 600 s call, with
#                          time left to archive); an experiment is stopped at the deadline and
#                          resumed, from its journal, by the next call
#   WORKBENCH_CARRIED      a folder holding the last call's results.tar.gz and caches.tar.gz
#   WORKBENCH_AUTOTUNE     CubeCL's autotune level (minimal, balanced, ...; default balanced);
#                          every record says which level ran
#   WORKBENCH_BENCH        the criterion bench binary (or its gzip): once every experiment has
#                          finished, the benches of WORKBENCH_BENCH_FILTER (default: GPT-2
#                          small's points) run with the time left; OUT gets criterion.tar.gz
# Exit status: 0 when every experiment finished, 3 when the deadline left some for the next call,
# else the last failing run's. Back here: scripts/gpu-collect.sh ARCHIVE_DIR [DEVICE] puts the
# records beside the CPU's and renders the guide.
set -euo pipefail

usage="usage: scripts/gpu-run.sh BINARY OUT [cuda|wgpu] [--quick]"
bin=${1:?$usage}
out=${2:?$usage}
device=${3:-cuda}
quick=${4:-}
# The issue's order: the landing page's GPT-2-small table first, then the loader loops' device-
# wide reading, the Llama family, the rest at GPU sizes as far as time goes. peak-attribution is
# the CPU's alone (its recorder is the counting allocator) and is not run.
order="gpt2-small memory-over-steps llama-family mixed-precision checkpointing accumulation \
batch-size sequence-length no-grad optimizer-state quantization offload cache-release \
allocator-settings in-place views-vs-clones"
experiments=${WORKBENCH_EXPERIMENTS:-$order}
deadline=$(( $(date +%s) + ${WORKBENCH_DEADLINE_S:-540} ))
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=${WORKBENCH_WORK:-/tmp/workbench-gpu}
mkdir -p "$work/sets" "$work/done" "$work/cubecl-cache"

# The binary, unpacked once per machine.
if [[ $bin == *.gz ]]; then
    [ -x "$work/workbench" ] || { gzip -dc "$bin" > "$work/workbench"; chmod +x "$work/workbench"; }
    bin=$work/workbench
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
bench=${WORKBENCH_BENCH:-}
if [ -n "$bench" ]; then bench=$(cd "$(dirname "$bench")" && pwd)/$(basename "$bench"); fi

# The last call's archives: finished sets, the unfinished ones' journals, the caches.
if [ -n "${WORKBENCH_CARRIED:-}" ]; then
    for a in results caches; do
        if [ -f "$WORKBENCH_CARRIED/$a.tar.gz" ]; then tar -xzf "$WORKBENCH_CARRIED/$a.tar.gz" -C "$work"; fi
    done
fi

# CubeCL reads cubecl.toml from the working folder: kernels and autotune results kept on disk,
# in one folder that travels between calls. A fresh process otherwise compiles (NVRTC) and
# autotunes every kernel in its warm-up: on an H200 a GPT-2-small cell spent over 150 s there.
cat > "$work/cubecl.toml" <<EOF
[compilation]
cache = { file = "$work/cubecl-cache" }

[autotune]
level = "${WORKBENCH_AUTOTUNE:-balanced}"
cache = { file = "$work/cubecl-cache" }
EOF
cd "$work"

archive() {
    tar -czf "$out/results.tar.gz.part" sets done && mv "$out/results.tar.gz.part" "$out/results.tar.gz"
    tar -czf "$out/caches.tar.gz.part" cubecl-cache && mv "$out/caches.tar.gz.part" "$out/caches.tar.gz"
}

# Identify the device first: a machine without the driver stops here, with one line, exit 2.
"$bin" memory-summary --device "$device" | tee "$out/memory-summary.txt"
"$bin" memory-summary --device "$device" --json > "$out/memory-summary.json"
if command -v nvidia-smi > /dev/null; then
    nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
fi

status=0
for id in $experiments; do
    if [ -e "done/$id" ]; then
        echo "$id: finished in an earlier call" | tee -a "$out/timing.txt"
        continue
    fi
    left=$(( deadline - $(date +%s) ))
    if [ "$left" -lt 30 ]; then
        echo "$id: not started, ${left} s left" | tee -a "$out/timing.txt"
        [ "$status" -ne 0 ] || status=3
        continue
    fi
    started=$(date +%s)
    rc=0
    # --resume keeps what an earlier call's journal holds; timeout stops the whole process
    # group (the run and its point's child) at the deadline.
    # shellcheck disable=SC2086  # $quick is empty or one flag
    timeout --kill-after=10 "$left" "$bin" run "$id" --device "$device" --out "sets/$id" \
        --resume --point-timeout-s 600 $quick || rc=$?
    case $rc in
        0) touch "done/$id" ;;
        124 | 137) status=3 ;; # stopped at the deadline: the next call resumes it
        *) status=$rc ;;
    esac
    echo "$id: $(( $(date +%s) - started )) s, exit status $rc" | tee -a "$out/timing.txt"
    archive
done

# The benches on the headline points, once the experiments are done, with the time left.
left=$(( deadline - $(date +%s) ))
if [ -n "$bench" ] && [ "$status" -eq 0 ] && [ "$left" -ge 60 ]; then
    if [[ $bench == *.gz ]]; then
        [ -x techniques ] || { gzip -dc "$bench" > techniques; chmod +x techniques; }
        bench=$work/techniques
    fi
    started=$(date +%s)
    rc=0
    WORKBENCH_DEVICE=$device CRITERION_HOME=$work/criterion timeout --kill-after=10 "$left" \
        "$bench" --bench "${WORKBENCH_BENCH_FILTER:-^gpt2-small/}" || rc=$?
    echo "benches: $(( $(date +%s) - started )) s, exit status $rc" | tee -a "$out/timing.txt"
    if [ -d criterion ]; then tar -czf "$out/criterion.tar.gz" criterion; fi
fi
echo "device $device, autotune ${WORKBENCH_AUTOTUNE:-balanced}, exit status $status" | tee -a "$out/timing.txt"
exit "$status"
