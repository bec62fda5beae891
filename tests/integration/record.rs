//! The results schema round-trips, and loads in guide order.

use results::record::load_dir;
use results::{ExperimentRecord, SCHEMA_VERSION};

#[test]
fn fixture_records_round_trip() {
    for record in load_dir(&crate::fixtures()).unwrap() {
        assert_eq!(record.schema_version, SCHEMA_VERSION);
        let json = serde_json::to_string(&record).unwrap();
        let back: ExperimentRecord = serde_json::from_str(&json).unwrap();
        // Compared as JSON: a figure that is NaN (a phase one point does not have, drawn as a
        // gap) is written as null and read back as NaN, which is never equal to itself.
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&record).unwrap()
        );
    }
}

#[test]
fn records_are_analysed_in_guide_order() {
    let ids: Vec<String> = crate::fixture_pages()
        .into_iter()
        .map(|r| r.record.experiment)
        .collect();
    let order: Vec<&str> = experiments::all().iter().map(|e| e.id()).collect();
    let mut expected: Vec<&str> = order
        .iter()
        .copied()
        .filter(|id| ids.iter().any(|i| i == id))
        .collect();
    expected.dedup();
    assert_eq!(ids, expected);
}

#[test]
fn records_carry_provenance_and_raw_samples() {
    for record in load_dir(&crate::fixtures()).unwrap() {
        let p = &record.provenance;
        assert!(!p.git_commit.is_empty() && !p.cpu_model.is_empty() && p.cpu_cores > 0);
        assert!(!p.started_at.is_empty());
        for point in &record.points {
            if let Some(result) = point.result() {
                assert_eq!(result.step.samples_s.len(), point.point.repeats);
            }
        }
    }
}

#[test]
fn the_what_fits_record_loads_beside_the_experiments_and_refuses_another_schema() {
    // load_dir leaves the capacity record to CapacityRecord::find.
    let records = load_dir(&crate::fixtures()).unwrap();
    assert!(records.iter().all(|r| r.experiment != "what-fits"));
    let found = results::CapacityRecord::find(&[crate::fixtures()])
        .unwrap()
        .expect("the fixtures hold what-fits.json");
    // A quick run's record: the searches' budget, and no search (only the full CPU run runs
    // them); the estimator's tables are not stored.
    assert_eq!(found.fit_budget_bytes, workbench::fit::RUN_FIT_BUDGET_BYTES);
    assert!(found.fits.is_empty());
    assert!(!found.to_json().contains("\"models\""));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(results::CAPACITY_FILE);
    let mut value: serde_json::Value = serde_json::from_str(&found.to_json()).unwrap();
    value["schema_version"] = 99.into();
    std::fs::write(&path, value.to_string()).unwrap();
    let err = results::CapacityRecord::load(&path)
        .unwrap_err()
        .to_string();
    assert!(err.contains("schema version 99"), "{err}");
}

#[test]
fn a_version_1_what_fits_record_loads_its_searches_and_drops_its_tables() {
    let found = results::CapacityRecord::find(&[crate::fixtures()])
        .unwrap()
        .unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&found.to_json()).unwrap();
    let map = value.as_object_mut().unwrap();
    for key in ["fit_budget_bytes", "fit_micro_batches"] {
        map.remove(key);
    }
    map.insert("schema_version".into(), 1.into());
    map.insert(
        "models".into(),
        serde_json::json!([{ "id": "gpt2-124m", "micro_batches": 8 }]),
    );
    map.insert(
        "fits_note".into(),
        "`workbench fit --budget 64MiB --quick` could not run in this run: no child".into(),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(results::CAPACITY_FILE);
    std::fs::write(&path, value.to_string()).unwrap();
    let loaded = results::CapacityRecord::load(&path).unwrap();
    assert_eq!(
        loaded.schema_version,
        results::capacity::CAPACITY_SCHEMA_VERSION
    );
    assert_eq!(loaded.fit_budget_bytes, 64 << 20);
    assert_eq!(loaded.fit_micro_batches, 8);
    assert_eq!(loaded.fit_error.as_deref(), Some("no child"));
    assert!(!loaded.to_json().contains("models"));
}

#[test]
fn a_version_7_unsupported_point_and_a_version_2_search_load_by_their_shapes() {
    let record = load_dir(&crate::fixtures()).unwrap().remove(0);
    let mut value = serde_json::to_value(&record).unwrap();
    value["schema_version"] = 7.into();
    value["points"][0]["outcome"] = serde_json::json!({
        "status": "unsupported",
        "reason": "quantization: bf16: not supported on this device: the device has no bf16 \
                   (BF16: its Backend::dtype_usage lacks storage or arithmetic)"
    });
    let loaded = ExperimentRecord::parse(&value.to_string(), "old.json".as_ref()).unwrap();
    assert_eq!(
        loaded.points[0].outcome,
        results::Outcome::Unsupported {
            lacks: "bf16".into()
        }
    );

    let mut fits = results::CapacityRecord::find(&[crate::fixtures()])
        .unwrap()
        .unwrap();
    fits.fits = Vec::new();
    let mut value: serde_json::Value = serde_json::from_str(&fits.to_json()).unwrap();
    value["schema_version"] = 2.into();
    value["fits"] = serde_json::json!([{
        "model": "transformer 2x64 (seq 64, vocab 256)", "technique": "plain",
        "budget_bytes": 67108864, "estimated_batch": 110, "found_batch": 100,
        "next_fails_at": 101, "estimate_miss_pct": 10.0, "tries": 5, "wall_s": 1.0
    }]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(results::CAPACITY_FILE);
    std::fs::write(&path, value.to_string()).unwrap();
    let loaded = results::CapacityRecord::load(&path).unwrap();
    assert_eq!(
        loaded.fits[0].model,
        results::FitModel::Transformer {
            layers: 2,
            d_model: 64,
            seq: 64,
            vocab: 256
        }
    );
    assert_eq!(loaded.fits[0].estimate_miss_pct(), Some(10.0));
}
