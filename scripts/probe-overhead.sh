#!/usr/bin/env bash
# What the counting allocator costs: the same training step timed by two release binaries, one
# with the counting global allocator (the normal build) and one without it (feature
# `uncounted-allocator`), in alternating pairs so that drift of the machine hits both alike.
#
#   scripts/probe-overhead.sh [PAIRS] [BATCH]
#
# Prints each pair's median step times and the median of the paired slowdowns.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-9}
batch=${2:-256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet --features uncounted-allocator
cp target/release/workbench "$work/uncounted"
cargo build --release --quiet
cp target/release/workbench "$work/counted"

point=$(cat <<JSON
{"id":"overhead","label":"overhead","warmup":2,"repeats":15,
 "config":{"shape":{"width":1024,"depth":8},"batch":$batch,"lr":0.0001,"seed":42}}
JSON
)
median_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["step"]["median_s"])'; }

ratios=()
for i in $(seq "$pairs"); do
  c=$(echo "$point" | "$work/counted" point --experiment batch-size --device cpu | median_of)
  u=$(echo "$point" | WORKBENCH_ALLOW_UNCOUNTED=1 "$work/uncounted" point --experiment batch-size --device cpu | median_of)
  r=$(python3 -c "print($c / $u)")
  ratios+=("$r")
  printf 'pair %2d: counted %.4f s, uncounted %.4f s, ratio %.4f\n' "$i" "$c" "$u" "$r"
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
r = [float(x) for x in sys.argv[1:]]
print(f"median slowdown with the counting allocator: {100 * (statistics.median(r) - 1):+.2f}% "
      f"(pairs {len(r)}, min {100 * (min(r) - 1):+.2f}%, max {100 * (max(r) - 1):+.2f}%)")
PY
