#!/usr/bin/env bash
# Puts a GPU call's records beside the CPU's and renders the guide, running nothing.
#
#   scripts/gpu-collect.sh ARCHIVE_DIR [DEVICE]
#
# ARCHIVE_DIR holds results.tar.gz from scripts/gpu-run.sh (and criterion.tar.gz where the
# benches ran). Every finished experiment's record replaces site/data/DEVICE/<id>.json (DEVICE:
# cuda by default); an experiment the calls did not finish keeps the committed record. The guide
# is rendered as the README says, with criterion's estimates set beside the records' own; where
# the render refuses (estimates at other sizes than the records'), `git checkout -- site`
# undoes the copy.
set -euo pipefail
dir=${1:?usage: scripts/gpu-collect.sh ARCHIVE_DIR [DEVICE]}
device=${2:-cuda}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$dir/results.tar.gz" -C "$tmp"
mkdir -p "site/data/$device"
for done in "$tmp"/done/*; do
    [ -e "$done" ] || continue
    id=$(basename "$done")
    cp "$tmp/sets/$id/data/$device/$id.json" "site/data/$device/$id.json"
    echo "site/data/$device/$id.json"
done
criterion=()
if [ -f "$dir/criterion.tar.gz" ]; then
    tar -xzf "$dir/criterion.tar.gz" -C "$tmp"
    criterion=(--criterion "$tmp/criterion")
fi
target/release/workbench render --results site/data --baseline baselines/burn-0.21.0 --out site \
    "${criterion[@]}"
