//! `workbench estimate` and `workbench fit`: the estimator carried to named models, bad input
//! refused with one line, and a budget enforced in the child without taking down the parent.

use crate::{one_line_error, workbench};

/// `workbench ARGS...`, which must succeed, its JSON output parsed.
fn json_of(args: &[&str]) -> serde_json::Value {
    let out = workbench().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_7b_preset_gives_the_articles_weights_per_parameter_and_training_needs() {
    let e = json_of(&["estimate", "--preset", "llama-2-7b", "--json"]);
    let params = e["params"].as_f64().unwrap();
    // The articles' 14/7/3.5 GB are 2, 1 and 0.5 bytes a parameter of a 7e9 model; Llama 2 7B
    // has 6,738,415,616.
    assert_eq!(params, 6_738_415_616.0);
    let weights = e["inference_weights"].as_array().unwrap();
    let at = |i: usize, j: usize| weights[i][j].as_f64().unwrap();
    assert_eq!(at(0, 1), 2.0 * params);
    assert_eq!(at(1, 1), params);
    assert_eq!(at(2, 1), 0.5 * params, "4-bit packed on CubeCL");
    assert_eq!(at(2, 2), params, "Flex keeps a quantized value in a byte");
    // Training in f32 with Adam: 16 bytes a parameter before any activation.
    let plain = &e["rows"][0];
    assert_eq!(plain["combination"]["name"], "plain");
    let b = &plain["bytes"];
    let fixed = b["weights"].as_f64().unwrap() + b["optimizer"].as_f64().unwrap();
    assert_eq!(fixed, 12.0 * params);
    assert!(plain["peak_bytes"].as_f64().unwrap() > 16.0 * params);
    // Every technique lowers the peak below plain training's at the same batch.
    let peak = plain["peak_bytes"].as_f64().unwrap();
    for row in e["rows"].as_array().unwrap().iter().skip(1) {
        assert!(
            row["peak_bytes"].as_f64().unwrap() < peak,
            "{}",
            row["combination"]
        );
    }
}

#[test]
fn the_table_names_every_card_and_the_sharding_schemes() {
    let out = workbench()
        .args(["estimate", "--preset", "gpt2-124m"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for card in [
        "24 GB",
        "48 GB",
        "80 GB",
        "96 GB",
        "141 GB",
        "8 x 96 GB",
        "ZeRO-3",
    ] {
        assert!(text.contains(card), "{card} missing:\n{text}");
    }
}

#[test]
fn bad_model_descriptions_and_budgets_are_refused_with_one_line() {
    for (args, says) in [
        (
            vec!["estimate", "--preset", "gpt-9"],
            "unknown preset 'gpt-9'",
        ),
        (
            vec!["estimate", "--mlp", "8y1024"],
            "--mlp must be DEPTHxWIDTH",
        ),
        (vec!["estimate", "--layers", "2"], "is missing"),
        (
            vec![
                "estimate",
                "--layers",
                "2",
                "--d-model",
                "100",
                "--heads",
                "3",
                "--vocab",
                "10",
                "--seq",
                "8",
            ],
            "does not divide",
        ),
        (
            vec!["estimate", "--preset", "gpt2-124m", "--batch", "-3"],
            "positive",
        ),
        (vec!["fit", "--budget", "0"], "more than zero"),
        (vec!["fit", "--budget", "-512MiB"], "more than zero"),
        (vec!["fit", "--budget", "12 parsecs"], "unknown unit"),
        (
            vec!["fit", "--budget", "1MiB", "--model", "resnet"],
            "unknown --model",
        ),
    ] {
        let out = workbench().args(&args).output().unwrap();
        let err = one_line_error(&out);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn fit_finds_a_batch_that_runs_under_the_budget_whose_successor_does_not() {
    let results = json_of(&[
        "fit",
        "--budget",
        "12MiB",
        "--quick",
        "--model",
        "mlp",
        "--techniques",
        "plain",
        "--json",
    ]);
    let r = &results[0];
    let found = r["found_batch"].as_u64().expect("a batch fits 12 MiB");
    assert_eq!(r["next_fails_at"].as_u64(), Some(found + 1));
    let tries = r["tries"].as_array().unwrap();
    let tried = |batch: u64| tries.iter().find(|t| t["batch"] == batch).unwrap();
    assert_eq!(tried(found)["outcome"], "fits");
    assert!(tried(found)["peak_bytes"].as_u64().unwrap() <= 12 * 1024 * 1024);
    let failed = tried(found + 1);
    assert_eq!(failed["outcome"], "out-of-memory");
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .starts_with("out of memory: tried to allocate "),
        "{failed}"
    );
    assert!(r["estimated_batch"].as_u64().is_some());
}

#[test]
fn gpt2_124m_is_gpt2_s_count_and_accumulation_only_when_asked() {
    let e = json_of(&[
        "estimate",
        "--preset",
        "gpt2-124m",
        "--batch",
        "1",
        "--json",
    ]);
    // GPT-2 small with its head tied to the token embedding, at its context of 1,024.
    assert_eq!(e["params"].as_u64(), Some(124_439_808));
    let names: Vec<&str> = e["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["combination"]["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("accumulation")),
        "{names:?}"
    );
    let asked = json_of(&[
        "estimate",
        "--preset",
        "gpt2-124m",
        "--batch",
        "8",
        "--micro-batches",
        "4",
        "--json",
    ]);
    // Every combination, accumulation asked: Burn's eight and burn-memory-efficient's three.
    assert_eq!(asked["rows"].as_array().unwrap().len(), 11);
    // The same shape untied: one head of 768 x 50,257 and its bias more.
    let untied = json_of(&[
        "estimate",
        "--layers",
        "12",
        "--d-model",
        "768",
        "--heads",
        "12",
        "--vocab",
        "50257",
        "--seq",
        "1024",
        "--json",
    ]);
    assert_eq!(
        untied["params"].as_u64(),
        Some(124_439_808 + 768 * 50_257 + 50_257)
    );
    // Every "fits" answer leaves the context and a margin: the plain step's largest batch on a
    // card is below what the card's whole memory would hold.
    let plain = &e["rows"][0];
    assert!(e["context_bytes"].as_f64().unwrap() > 1e9);
    let at_24 = plain["largest_batch_per_card"][0].as_u64().unwrap();
    assert!(at_24 > 0);
    let tiny = json_of(&["estimate", "--preset", "tinyllama-1.1b", "--json"]);
    assert!(tiny["assumes"].as_str().unwrap().contains("TinyLlama"));
    assert_eq!(tiny["params"].as_u64(), Some(1_100_048_384));
}

/// `workbench ARGS...`, which must succeed, its text output.
fn text_of(args: &[&str]) -> String {
    let out = workbench().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_fine_tuning_reader_gets_each_way_on_their_card_first() {
    let text = text_of(&[
        "estimate",
        "--preset",
        "tinyllama-1.1b",
        "--lora-rank",
        "16",
        "--precision",
        "bf16",
        "--seq",
        "1024",
        "--card",
        "24GB",
    ]);
    let first: Vec<&str> = text.lines().take(6).collect();
    assert!(
        first[0]
            .starts_with("--card 24GB: the guide's 24 GB card (RTX 4090, RTX 3090), 24,564 MiB"),
        "{text}"
    );
    assert!(
        first[1].starts_with("tinyllama-1.1b + LoRA rank 16 on a 23.99 GiB card"),
        "{text}"
    );
    assert!(first[2].starts_with("  answer: "), "{text}");
    assert!(
        first[3].contains("plain") && first[3].contains("the largest batch is"),
        "{text}"
    );
    // LoRA trains only the adapters: 22 blocks x 16 x (3 x 2048 + 256) parameters.
    let e = json_of(&[
        "estimate",
        "--preset",
        "tinyllama-1.1b",
        "--lora-rank",
        "16",
        "--json",
    ]);
    let plain = &e["rows"][0]["bytes"];
    assert_eq!(plain["grads"].as_f64(), Some(22.0 * 16.0 * 6400.0 * 4.0));
    // Full training in f32 at the preset's 2,048 tokens: one sequence is over the card, and
    // the line says which part is.
    let full = text_of(&["estimate", "--preset", "tinyllama-1.1b", "--card", "24GB"]);
    assert!(full
        .lines()
        .find(|l| l.trim_start().starts_with("plain "))
        .unwrap()
        .contains("does not fit: one sequence peaks at"));
    let err = one_line_error(
        &workbench()
            .args(["estimate", "--preset", "gpt2-124m", "--lora-rank", "8"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains("--lora-rank applies to a Llama-family model"),
        "{err}"
    );
}

#[test]
fn the_inference_reader_gets_7b_at_16_8_and_4_bits_on_a_12_gb_card() {
    let text = text_of(&[
        "estimate",
        "--preset",
        "llama-2-7b",
        "--inference",
        "--card",
        "12GB",
    ]);
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert!(
        lines[0].starts_with("llama-2-7b inference on a 12.00 GiB card"),
        "{text}"
    );
    assert!(
        lines[1].contains("16-bit weights: does not fit: the weights alone"),
        "{text}"
    );
    assert!(lines[2].contains("8-bit weights: fits"), "{text}");
    assert!(lines[3].contains("4-bit weights: fits"), "{text}");
    // A size that is no box's is taken as written, and the first line says so.
    let written = text_of(&[
        "estimate",
        "--preset",
        "llama-2-7b",
        "--inference",
        "--card",
        "11000MiB",
    ]);
    assert!(
        written.starts_with("--card 11000MiB: taken as written"),
        "{written}"
    );
    // The cache: 32 blocks x 2 x 4,096 values x 2 bytes x 2,048 tokens = 1 GiB.
    let a = json_of(&[
        "estimate",
        "--preset",
        "llama-2-7b",
        "--inference",
        "--card",
        "12GB",
        "--json",
    ]);
    assert_eq!(
        a["rows"][0]["bytes"]["kv_cache"].as_f64(),
        Some((1u64 << 30) as f64)
    );
    let longest = |i: usize| a["rows"][i]["longest_context"].as_u64().unwrap();
    assert!(longest(2) > longest(1) && longest(1) >= 2048);
    let err = one_line_error(
        &workbench()
            .args([
                "estimate",
                "--preset",
                "llama-2-7b",
                "--inference",
                "--kv-bits",
                "3",
            ])
            .output()
            .unwrap(),
    );
    assert!(err.contains("--kv-bits must be 16 or 8"), "{err}");
}

#[test]
fn micro_batches_and_fit_s_model_are_refused_naming_the_flag_given() {
    for (args, says) in [
        (
            vec![
                "estimate",
                "--preset",
                "gpt2-124m",
                "--batch",
                "4",
                "--micro-batches",
                "3",
            ],
            "--micro-batches 3 does not divide --batch 4",
        ),
        (
            vec!["fit", "--budget", "1MiB", "--model", "mlp", "--layers", "2"],
            "not both",
        ),
        (
            vec![
                "fit",
                "--budget",
                "1MiB",
                "--model",
                "mlp",
                "--techniques",
                "accumulation",
            ],
            "give --micro-batches",
        ),
        (
            vec!["fit", "--budget", "1MiB", "--precision", "bf16"],
            "fit runs f32 steps",
        ),
        (
            vec!["estimate", "--mlp", "8x1024", "--tied-head"],
            "cannot be used with",
        ),
    ] {
        let out = workbench().args(&args).output().unwrap();
        let err = one_line_error(&out);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn fit_runs_the_reader_s_own_shape() {
    let results = json_of(&[
        "fit",
        "--budget",
        "24MiB",
        "--layers",
        "1",
        "--d-model",
        "32",
        "--heads",
        "2",
        "--vocab",
        "64",
        "--seq",
        "16",
        "--tied-head",
        "--techniques",
        "plain",
        "--json",
    ]);
    let r = &results[0];
    assert_eq!(r["model"]["tied_head"], true, "{r}");
    let found = r["found_batch"].as_u64().expect("a batch fits 24 MiB");
    assert_eq!(r["next_fails_at"].as_u64(), Some(found + 1));
}

/// The README's two reader commands, run as written, print What fits' figures: one card, one
/// usable size, one answer per way (What fits renders `capacity::tables().readers`).
#[test]
fn the_readme_reader_commands_print_what_fits_figures() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    // The README wraps its lines: compare words.
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let command = |text: &str| -> Vec<String> {
        assert!(readme.contains(text), "the README no longer runs `{text}`");
        text.split_whitespace().skip(1).map(String::from).collect()
    };
    let readers = estimator::capacity::tables().readers;

    let mut infer = command("workbench estimate --preset llama-2-7b --inference --card 12GB");
    let first = text_of(&infer.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        first.starts_with("--card 12GB: the guide's 12 GB card"),
        "{first}"
    );
    infer.push("--json".into());
    let a = json_of(&infer.iter().map(String::as_str).collect::<Vec<_>>());
    let rows = a["rows"].as_array().unwrap();
    assert_eq!(rows.len(), readers.inference.len());
    for (cli, page) in rows.iter().zip(&readers.inference) {
        assert_eq!(cli["weight_bits"].as_u64(), Some(page.weight_bits as u64));
        assert_eq!(
            cli["card_bytes"].as_f64(),
            Some(readers.inference_card.bytes())
        );
        assert_eq!(cli["usable_bytes"].as_f64(), Some(page.usable_bytes));
        assert_eq!(cli["peak_bytes"].as_f64(), Some(page.peak_bytes));
        assert_eq!(cli["longest_context"].as_u64(), page.longest_context);
    }

    let tune =
        command("workbench estimate --preset tinyllama-1.1b --lora-rank 16 --batch 1 --card 24GB");
    let text = text_of(&tune.iter().map(String::as_str).collect::<Vec<_>>());
    // The first table's row of both burn-memory-efficient ops in f32 (not the mixed one).
    let both = "memory-efficient attention + chunked loss ";
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(both) && l.contains("fits"))
        .unwrap_or_else(|| panic!("no line of both ops:\n{text}"));
    let page = readers
        .fine_tune
        .iter()
        .find(|r| r.way == "LoRA rank 16, f32, memory-efficient attention + chunked loss")
        .expect("What fits' LoRA row with both ops");
    let batch = page.largest_batch.expect("What fits says it fits");
    assert!(
        line.contains(&format!("the largest batch is {batch} ["))
            && line.ends_with("checks passed]"),
        "CLI `{line}` against What fits' {batch}"
    );
    // The answer is that way: the mixed-bf16 way fits a larger batch, but its check failed.
    let answer = format!("answer: memory-efficient attention + chunked loss, batch {batch} [");
    assert!(text.contains(&answer), "no `{answer}` in:\n{text}");
    // --json carries the same answer and each way's checks.
    let mut json = tune.clone();
    json.push("--json".into());
    let e = json_of(&json.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        e["answer"]["way"], "memory-efficient attention + chunked loss",
        "{e}"
    );
    assert_eq!(e["answer"]["largest_batch"], batch, "{e}");
    let checks = e["checks"].as_array().expect("each way's checks");
    assert_eq!(checks.len(), e["rows"].as_array().map_or(0, Vec::len));
    assert!(
        checks.iter().all(|c| c["checks"]["status"].is_string()),
        "{e}"
    );
    assert!(
        text.contains(&results::format::bytes(page.usable_bytes)),
        "What fits' usable {} not in:\n{text}",
        results::format::bytes(page.usable_bytes)
    );
}
