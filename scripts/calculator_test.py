#!/usr/bin/python3
"""The "What fits" page's calculator against `workbench estimate --json`: the same rules must
give the same bytes and the same largest batches.

For SHAPES random transformers (seeded; layers, width, heads, vocabulary, sequence, batch,
micro-batches or none, precision, optimizer, tied head or not; half of them Llama-family
blocks with key/value heads, an MLP width and, for some, a LoRA rank), the page's own function
(`workbenchEstimate`, in headless Chromium, from file://) and the CLI each estimate the step;
every combination's components and peak must agree exactly (the page runs the estimator's own
rules, recorded as programs, so the doubles are the same), and its largest batch on every card. Every fourth shape is also estimated for inference (a context, a
batch of sequences, the cache's bits) by `workbenchInference` and `estimate --inference`: every
card's and weight width's parts, peak and longest context must agree. Then the form once:
choosing the gpt2-124m preset must show GPT-2's parameter count, tinyllama-1.1b TinyLlama's.

Usage: calculator_test.py SITE_DIR WORKBENCH [--shapes N]
Prints one line per disagreement and exits 1 if there is any, 0 otherwise (2 on bad usage).
"""

import json
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_test import driver  # noqa: E402

SHAPES = 200
PRECISIONS = ("f32", "bf16", "mixed-bf16")
OPTIMIZERS = ("sgd", "momentum", "adagrad", "rmsprop", "adam", "adamw", "adan")
COMPONENTS = ("weights", "optimizer", "weight_copies", "inputs", "kept", "loss_transient",
              "backward_transient", "grads", "accumulated")


def random_input(rng: random.Random) -> dict:
    heads = rng.choice((1, 2, 4, 8, 12, 16, 25, 32, 40, 64, 96))
    head_dim = rng.choice((8, 16, 32, 64, 80, 128, 256))
    batch = rng.randint(1, 64)
    divisors = [m for m in range(2, batch + 1) if batch % m == 0]
    llama = rng.random() < 0.5
    kv_heads = rng.choice([k for k in range(1, heads + 1) if heads % k == 0]) if llama else 0
    return {
        "shape": {
            "layers": rng.randint(1, 96),
            "d_model": heads * head_dim,
            "heads": heads,
            "vocab": rng.randint(2, 256_000),
            "seq": rng.choice((16, 64, 128, 256, 512, 1000, 1024, 2048, 4096, 8192)),
            "tied_head": rng.random() < 0.5,
            "kv_heads": kv_heads,
            "mlp": rng.randint(1, 30_000) if llama else 0,
            "lora_rank": rng.choice((0, 4, 8, 16, 64)) if llama else 0,
        },
        "context": rng.choice((1, 100, 2048, 8192, 32768)),
        "kv_bits": rng.choice((16, 8)),
        "batch": batch,
        "micro_batches": rng.choice(divisors) if divisors and rng.random() < 0.6 else None,
        "precision": rng.choice(PRECISIONS),
        "optimizer": rng.choice(OPTIMIZERS),
    }


def cli(workbench: str, i: dict) -> dict:
    s = i["shape"]
    args = [workbench, "estimate", "--layers", str(s["layers"]), "--d-model", str(s["d_model"]),
            "--heads", str(s["heads"]), "--vocab", str(s["vocab"]), "--seq", str(s["seq"]),
            "--batch", str(i["batch"]), "--precision", i["precision"],
            "--optimizer", i["optimizer"], "--json"]
    if s["tied_head"]:
        args.append("--tied-head")
    if i["micro_batches"] is not None:
        args += ["--micro-batches", str(i["micro_batches"])]
    return run(args + llama_args(s))


def llama_args(s: dict) -> list:
    if not s["kv_heads"]:
        return []
    args = ["--kv-heads", str(s["kv_heads"]), "--mlp-width", str(s["mlp"])]
    return args + (["--lora-rank", str(s["lora_rank"])] if s["lora_rank"] else [])


def cli_inference(workbench: str, i: dict) -> dict:
    s = i["shape"]
    args = [workbench, "estimate", "--inference", "--layers", str(s["layers"]), "--d-model",
            str(s["d_model"]), "--heads", str(s["heads"]), "--vocab", str(s["vocab"]), "--seq",
            str(s["seq"]), "--context", str(i["context"]), "--batch", str(i["batch"]),
            "--kv-bits", str(i["kv_bits"]), "--json"]
    if s["tied_head"]:
        args.append("--tied-head")
    return run(args + llama_args(s))


def run(args: list) -> dict:
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def close(a: float, b: float) -> bool:
    # Exact: the page evaluates the estimator's recorded operations in the estimator's order.
    return a == b


def approx(a: float, b: float) -> bool:
    # For sums this script adds itself, in its own order.
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def compare(n: int, i: dict, page: dict, want: dict) -> list:
    problems = []
    name = f"shape {n} {json.dumps(i, sort_keys=True)}"
    if page["params"] != want["params"]:
        problems.append(f"{name}: parameters {page['params']} on the page, {want['params']} "
                        "from the CLI")
    rows = {r["combination"]: r for r in page["rows"]}
    names = [r["combination"]["name"] for r in want["rows"]]
    if sorted(rows) != sorted(names):
        return problems + [f"{name}: combinations {sorted(rows)} on the page, {sorted(names)} "
                           "from the CLI"]
    for w in want["rows"]:
        p = rows[w["combination"]["name"]]
        label = f"{name} {w['combination']['name']}"
        for c in COMPONENTS:
            if not close(p["bytes"][c], w["bytes"][c]):
                problems.append(f"{label}: {c} {p['bytes'][c]} on the page, {w['bytes'][c]} "
                                "from the CLI")
        for c in w["at_peak"]:
            if not close(p["at_peak"][c], w["at_peak"][c]):
                problems.append(f"{label}: {c} at the peak {p['at_peak'][c]} on the page, "
                                f"{w['at_peak'][c]} from the CLI")
        parts = sum(p["at_peak"].values())
        if not approx(parts, p["peak_bytes"]):
            problems.append(f"{label}: the page's parts add up to {parts}, not its peak "
                            f"{p['peak_bytes']}")
        if not close(p["peak_bytes"], w["peak_bytes"]):
            problems.append(f"{label}: peak {p['peak_bytes']} on the page, {w['peak_bytes']} "
                            "from the CLI")
        if p["largest_batch_per_card"] != w["largest_batch_per_card"]:
            problems.append(f"{label}: largest batches {p['largest_batch_per_card']} on the "
                            f"page, {w['largest_batch_per_card']} from the CLI")
    return problems


def compare_inference(n: int, i: dict, page: dict, want: dict) -> list:
    name = f"inference {n} {json.dumps(i, sort_keys=True)}"
    problems = []
    if page["params"] != want["params"]:
        problems.append(f"{name}: parameters {page['params']} on the page, {want['params']}")
    if len(page["rows"]) != len(want["rows"]):
        return problems + [f"{name}: {len(page['rows'])} rows on the page, {len(want['rows'])}"]
    for p, w in zip(page["rows"], want["rows"]):
        label = f"{name} {w['weight_bits']}-bit on {w['card_bytes']}"
        for c in ("weights", "kv_cache", "working_copy", "prefill"):
            if not close(p["bytes"][c], w["bytes"][c]):
                problems.append(f"{label}: {c} {p['bytes'][c]} on the page, {w['bytes'][c]}")
        for c in ("peak_bytes", "usable_bytes"):
            if not close(p[c], w[c]):
                problems.append(f"{label}: {c} {p[c]} on the page, {w[c]}")
        if p["longest_context"] != w["longest_context"] or p["fits"] != w["fits"]:
            problems.append(f"{label}: longest context {p['longest_context']} (fits "
                            f"{p['fits']}) on the page, {w['longest_context']} ({w['fits']})")
    return problems


def main(argv: list) -> int:
    shapes = SHAPES
    if len(argv) == 5 and argv[3] == "--shapes" and argv[4].isdigit():
        shapes = int(argv[4])
    elif len(argv) != 3:
        print("usage: calculator_test.py SITE_DIR WORKBENCH [--shapes N]", file=sys.stderr)
        return 2
    page = Path(argv[1]) / "what-fits.html"
    if not page.is_file():
        print(f"error: {page} does not exist", file=sys.stderr)
        return 2
    rng = random.Random(20261203)
    inputs = [random_input(rng) for _ in range(shapes)]
    problems = []
    d = driver()
    try:
        d.get(page.resolve().as_uri())
        for n, i in enumerate(inputs):
            problems += compare(n, i, d.execute_script(
                "return window.workbenchEstimate(arguments[0]);", i), cli(argv[2], i))
            if n % 4 == 0:
                problems += compare_inference(n, i, d.execute_script(
                    "return window.workbenchInference(arguments[0]);", i),
                    cli_inference(argv[2], i))
        d.execute_script(
            "const s = document.getElementById('calc-preset'); s.value = 'gpt2-124m';"
            "s.dispatchEvent(new Event('change'));")
        summary = d.find_element("id", "calc-summary").text
        if not summary.startswith("124,439,808 parameters"):
            problems.append(f"the form with the gpt2-124m preset says: {summary!r}")
        d.execute_script(
            "const s = document.getElementById('calc-preset'); s.value = 'tinyllama-1.1b';"
            "s.dispatchEvent(new Event('change'));")
        summary = d.find_element("id", "calc-summary").text
        if not summary.startswith("1,100,048,384 parameters"):
            problems.append(f"the form with the tinyllama-1.1b preset says: {summary!r}")
        rows = d.execute_script("return document.querySelectorAll('#calc-cards tbody tr').length")
        if rows < 4:
            problems.append(f"the form shows {rows} rows of largest batches, not 4 or more")
        for entry in d.get_log("browser"):
            if entry.get("level") == "SEVERE":
                problems.append(f"console error: {entry.get('message')}")
    finally:
        d.quit()
    for p in problems[:40]:
        print(p)
    print(f"calculator: {len(inputs)} shapes against `workbench estimate --json`, "
          f"{len(problems)} disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
