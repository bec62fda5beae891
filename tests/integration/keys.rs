//! Every word key is said: a key declared in `results::keys` that no analysis says is a
//! sentence the guide keeps for nothing. (A key said without words does not compile: the
//! guide words each section with an exhaustive `match`.)

use std::path::Path;

use results::keys::{self, BracketKey, CommonKey, TimelineKey, TransformerKey};

/// The Rust sources under `dir`, test modules included (a key said only in a test is said).
fn sources(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            text.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    text
}

/// The variants of `all` (by their names) that `text` never writes as `Enum::Variant`.
fn unsaid<K: std::fmt::Debug>(all: &[K], enum_name: &str, text: &str) -> Vec<String> {
    all.iter()
        .map(|k| format!("{k:?}"))
        .filter(|v| {
            let said = format!("{enum_name}::{v}");
            !text.match_indices(&said).any(|(i, _)| {
                // `Key::Label` must not count as `Key::LabelBlocks` said.
                !text[i + said.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        })
        .collect()
}

#[test]
fn every_key_is_said_by_an_analysis() {
    let root = crate::repo().join("crates/experiments/src");
    let everything = sources(&root);
    let mut missing = Vec::new();
    let shared: [(&str, Vec<String>); 4] = [
        (
            "CommonKey",
            unsaid(CommonKey::ALL, "CommonKey", &everything),
        ),
        (
            "TransformerKey",
            unsaid(TransformerKey::ALL, "TransformerKey", &everything),
        ),
        (
            "TimelineKey",
            unsaid(TimelineKey::ALL, "TimelineKey", &everything),
        ),
        (
            "BracketKey",
            unsaid(BracketKey::ALL, "BracketKey", &everything),
        ),
    ];
    for (name, unsaid) in shared {
        // Said in `results` itself (a headline's step peak, a measured name, an empty analysis).
        let said_in_results = ["StepPeak", "Name", "NoPointMeasured", "NoMeasurement"];
        missing.extend(
            unsaid
                .into_iter()
                .filter(|v| !(name == "CommonKey" && said_in_results.contains(&v.as_str())))
                .map(|v| format!("{name}::{v}")),
        );
    }
    let technique = |folder: &str| sources(&root.join("techniques").join(folder));
    let per_technique: [(&str, Vec<String>); 15] = [
        (
            "gpt2_small",
            unsaid(keys::gpt2_small::Key::ALL, "Key", &technique("gpt2_small")),
        ),
        (
            "batch_size",
            unsaid(keys::batch_size::Key::ALL, "Key", &technique("batch_size")),
        ),
        (
            "accumulation",
            unsaid(
                keys::accumulation::Key::ALL,
                "Key",
                &technique("accumulation"),
            ),
        ),
        (
            "mixed_precision",
            unsaid(
                keys::mixed_precision::Key::ALL,
                "Key",
                &technique("mixed_precision"),
            ),
        ),
        (
            "checkpointing",
            unsaid(
                keys::checkpointing::Key::ALL,
                "Key",
                &technique("checkpointing"),
            ),
        ),
        (
            "sequence_length",
            unsaid(
                keys::sequence_length::Key::ALL,
                "Key",
                &technique("sequence_length"),
            ),
        ),
        (
            "in_place",
            unsaid(keys::in_place::Key::ALL, "Key", &technique("in_place")),
        ),
        (
            "views",
            unsaid(keys::views::Key::ALL, "Key", &technique("views")),
        ),
        (
            "no_grad",
            unsaid(keys::no_grad::Key::ALL, "Key", &technique("no_grad")),
        ),
        (
            "cache_release",
            unsaid(
                keys::cache_release::Key::ALL,
                "Key",
                &technique("cache_release"),
            ),
        ),
        (
            "optimizer_state",
            unsaid(
                keys::optimizer_state::Key::ALL,
                "Key",
                &technique("optimizer_state"),
            ),
        ),
        (
            "quantization",
            unsaid(
                keys::quantization::Key::ALL,
                "Key",
                &technique("quantization"),
            ),
        ),
        (
            "offload",
            unsaid(keys::offload::Key::ALL, "Key", &technique("offload")),
        ),
        (
            "allocator_settings",
            unsaid(
                keys::allocator_settings::Key::ALL,
                "Key",
                &technique("allocator_settings"),
            ),
        ),
        (
            "memory_over_steps",
            unsaid(
                keys::memory_over_steps::Key::ALL,
                "Key",
                &technique("memory_over_steps"),
            ),
        ),
    ];
    for (folder, unsaid) in per_technique {
        missing.extend(unsaid.into_iter().map(|v| format!("{folder}::Key::{v}")));
    }
    assert!(
        missing.is_empty(),
        "keys declared in results::keys that no analysis says: {missing:?}"
    );
}
