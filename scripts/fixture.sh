#!/usr/bin/env bash
# A technique's fixture record: one `--quick` run of it on the CPU, its record copied into
# tests/fixtures/results/, where the page snapshots and the site tests read it.
# Usage: scripts/fixture.sh ID   (then accept its snapshots: INSTA_UPDATE=always scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
    echo "usage: scripts/fixture.sh ID (one experiment id; see \`workbench list\`)" >&2
    exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo run --release --quiet -- run "$1" --quick --out "$out/site"
cp "$out/site/data/$1.json" "tests/fixtures/results/$1.json"
echo "wrote tests/fixtures/results/$1.json"
