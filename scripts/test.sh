#!/usr/bin/env bash
# The tests: every test of the workspace, the wgpu device tests included. Those run on a
# software Vulkan driver (Debian's mesa-vulkan-drivers, lavapipe), installed here when missing.
# Then the criterion benches, each benchmark once at quick sizes (criterion's test mode), and
# their refusal of a device that is not built in.
# Extra arguments go to the first `cargo test` (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."

have_vulkan_driver() {
    # One driver manifest in either folder is enough (an empty folder must not count).
    for manifest in /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json; do
        [ -e "$manifest" ] && return 0
    done
    return 1
}
if ! have_vulkan_driver; then
    echo "== installing mesa-vulkan-drivers (the software Vulkan driver the wgpu tests run on)"
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get install -y -q mesa-vulkan-drivers > /dev/null \
        || { $sudo apt-get update -q > /dev/null && $sudo apt-get install -y -q mesa-vulkan-drivers > /dev/null; }
fi

# CubeCL keeps its autotune cache in the project's target/ folder; when the build goes to
# another folder (CARGO_TARGET_DIR), point target/ there so the cache lasts between runs.
if [ -n "${CARGO_TARGET_DIR:-}" ] && [ ! -e target ]; then
    mkdir -p "$CARGO_TARGET_DIR"
    ln -s "$CARGO_TARGET_DIR" target
fi

cargo test --workspace --features wgpu "$@"

echo "== benches: every benchmark once, quick sizes, CPU (cargo test --benches)"
cargo test --workspace --features wgpu --benches

echo "== benches: a device that is not built in is refused with one line"
if out=$(WORKBENCH_DEVICE=cuda cargo test --workspace --features wgpu --benches 2>&1); then
    echo "the benches ran with WORKBENCH_DEVICE=cuda in a build without CUDA"
    exit 1
fi
expected="error: WORKBENCH_DEVICE=cuda: the cuda backend is not built into this binary"
if ! grep -qF "$expected" <<< "$out"; then
    echo "expected '$expected'; the benches printed:"
    tail -n 20 <<< "$out"
    exit 1
fi
echo "refused: $expected"
