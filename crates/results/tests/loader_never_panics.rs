//! The results loader against arbitrary input: malformed, truncated, empty, from a newer schema
//! version, with a field of the wrong type. Whatever it is given, it answers with a record or
//! a `LoadError`, never a panic.

use std::path::Path;

use proptest::prelude::*;
use results::ExperimentRecord;

/// A real record (a `--quick` run's, committed as a fixture).
fn fixture() -> String {
    let path = Path::new(
        &std::env::var("CARGO_MANIFEST_DIR").expect("cargo test sets CARGO_MANIFEST_DIR"),
    )
    .join("../../tests/fixtures/results/batch-size.json");
    std::fs::read_to_string(path).expect("the fixture exists")
}

fn parse(text: &str) -> Result<ExperimentRecord, results::LoadError> {
    ExperimentRecord::parse(text, Path::new("fuzzed.json"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_is_refused_without_a_panic(text in ".{0,400}") {
        let _ = parse(&text);
    }

    #[test]
    fn a_truncated_record_is_refused(cut in 0.0_f64..1.0) {
        // Cut inside the JSON: the file's trailing newline alone is not part of the record.
        let fixture = fixture();
        let full = fixture.trim_end();
        let mut at = (full.len() as f64 * cut) as usize;
        while !full.is_char_boundary(at) {
            at -= 1;
        }
        prop_assert!(parse(&full[..at]).is_err());
    }

    #[test]
    fn a_record_with_one_byte_changed_loads_or_is_refused(at in 0_usize..100_000, byte in any::<u8>()) {
        let mut bytes = fixture().into_bytes();
        let i = at % bytes.len();
        bytes[i] = byte;
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text);
    }

    #[test]
    fn a_field_of_another_type_is_refused(
        field in prop::sample::select(vec!["experiment", "points", "profile", "device", "comparisons", "wall_s"]),
        value in prop_oneof![
            Just(serde_json::json!(null)),
            Just(serde_json::json!(-1)),
            Just(serde_json::json!("text")),
            Just(serde_json::json!([1, 2])),
            Just(serde_json::json!({"x": 1})),
        ],
    ) {
        let mut record: serde_json::Value = serde_json::from_str(&fixture()).unwrap();
        let original = record[field].clone();
        record[field] = value.clone();
        let result = parse(&record.to_string());
        let kind = |v: &serde_json::Value| std::mem::discriminant(v);
        // A value of the field's own JSON type may well be valid ("text" for the id).
        if kind(&value) != kind(&original) {
            prop_assert!(result.is_err(), "{field} = {value}");
        }
    }

    #[test]
    fn any_schema_version_is_read_or_refused(version in any::<i64>()) {
        let mut record: serde_json::Value = serde_json::from_str(&fixture()).unwrap();
        record["schema_version"] = serde_json::json!(version);
        let result = parse(&record.to_string());
        if !(1..=i64::from(results::SCHEMA_VERSION)).contains(&version) {
            prop_assert!(result.is_err());
        }
    }
}

#[test]
fn an_empty_file_and_a_newer_schema_are_refused_with_what_is_wrong() {
    let err = parse("").unwrap_err().to_string();
    assert!(err.contains("fuzzed.json"), "{err}");
    let mut record: serde_json::Value = serde_json::from_str(&fixture()).unwrap();
    record["schema_version"] = serde_json::json!(results::SCHEMA_VERSION + 1);
    let err = parse(&record.to_string()).unwrap_err().to_string();
    assert!(err.contains("schema version"), "{err}");
}
