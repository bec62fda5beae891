//! Bad input: one line naming the problem, exit status 2, no backtrace, nothing half-written.

use std::path::Path;

use predicates::prelude::*;

use crate::{one_line_error, workbench};

/// `workbench render --results RESULTS --out OUT`.
fn render(results: &Path, out: &Path) -> std::process::Output {
    workbench()
        .args(["render", "--results"])
        .arg(results)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// `workbench ARGS... --out OUT`.
fn run_into(args: &[&str], out: &Path) -> std::process::Output {
    workbench()
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn list_names_every_experiment() {
    let out = workbench().arg("list").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    for e in experiments::all() {
        assert!(stdout.contains(e.id()), "{} missing from list", e.id());
    }
}

#[test]
fn unknown_experiment_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_into(
        &["run", "batch-size", "no-such-thing", "--quick"],
        &dir.path().join("site"),
    );
    let err = one_line_error(&out);
    assert!(err.contains("unknown experiment 'no-such-thing'"), "{err}");
    assert!(err.contains("batch-size"), "known ids listed: {err}");
    assert!(!dir.path().join("site").exists());
}

#[test]
fn output_that_is_a_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("site");
    std::fs::write(&file, "not a folder").unwrap();
    let out = run_into(&["run", "no-grad", "--quick"], &file);
    let err = one_line_error(&out);
    assert!(err.contains("is a file"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
}

#[test]
fn foreign_non_empty_folder_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious.txt"), "keep me").unwrap();
    let out = run_into(&["run", "no-grad", "--quick"], dir.path());
    let err = one_line_error(&out);
    assert!(err.contains("refusing to replace"), "{err}");
    assert!(dir.path().join("precious.txt").exists());
}

#[cfg(unix)]
#[test]
fn unwritable_output_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    // root ignores permission bits: only meaningful for other users.
    if std::fs::write(locked.join("probe"), "x").is_ok() {
        return;
    }
    let out = run_into(&["run", "no-grad", "--quick"], &locked.join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("cannot write"), "{err}");
}

#[test]
fn missing_results_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = render(&dir.path().join("nowhere"), &dir.path().join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("cannot read"), "{err}");
    assert!(!dir.path().join("site").exists());
}

#[test]
fn results_folder_without_records_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = render(dir.path(), &dir.path().join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("no result records"), "{err}");
}

#[test]
fn malformed_record_is_refused_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::copy(
        crate::fixtures().join("batch-size.json"),
        results.join("batch-size.json"),
    )
    .unwrap();
    std::fs::write(results.join("no-grad.json"), "{ \"schema_version\": 1, ").unwrap();
    let out = render(&results, &dir.path().join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("malformed result record"), "{err}");
    assert!(err.contains("no-grad.json"), "{err}");
    assert!(!dir.path().join("site").exists(), "nothing half-written");
}

#[test]
fn record_of_another_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.json"), "{\"schema_version\": 999}").unwrap();
    let out = render(dir.path(), &dir.path().join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("schema version 999"), "{err}");
}

#[test]
fn a_schema_2_record_renders_as_it_was_measured() {
    // Made before paired timing: its time is a difference of two medians, and says so.
    let dir = tempfile::tempdir().unwrap();
    let schema2 = crate::fixtures().parent().unwrap().join("schema2");
    let out = render(&schema2, &dir.path().join("site"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = std::fs::read_to_string(dir.path().join("site/index.html")).unwrap();
    assert!(index.contains("two medians, not paired"), "{index}");
    assert!(!index.contains("95% CI -"), "no interval is invented");
}

#[test]
fn a_schema_3_record_renders_its_interval_over_rounds_as_such() {
    // Made before builds: its intervals are over the rounds of one process, and say so.
    let dir = tempfile::tempdir().unwrap();
    let schema3 = crate::fixtures().parent().unwrap().join("schema3");
    let out = render(&schema3, &dir.path().join("site"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("site/views-vs-clones.html")).unwrap();
    assert!(
        page.contains("the interval over rounds: it leaves out how much a fresh build"),
        "{page}"
    );
    assert!(page.contains("(a schema 3 record)"), "{page}");
    assert!(
        !page.contains("builds, each a fresh process"),
        "no builds are invented"
    );
}

#[test]
fn a_schema_4_record_renders_its_throughput_in_samples() {
    // Made before the transformer: no point has a unit, and every throughput is in samples.
    let dir = tempfile::tempdir().unwrap();
    let schema4 = crate::fixtures().parent().unwrap().join("schema4");
    let out = render(&schema4, &dir.path().join("site"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("site/batch-size.html")).unwrap();
    assert!(page.contains(" samples&#x2f;s</td>"), "{page}");
    assert!(
        !page.contains("tokens&#x2f;s</td>"),
        "no tokens are invented"
    );
}

#[test]
fn unknown_device_is_refused_by_the_cli() {
    workbench()
        .args(["run", "all", "--device", "tpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'tpu'"));
}

#[test]
fn device_not_built_in_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_into(
        &["run", "all", "--quick", "--device", "cuda"],
        &dir.path().join("site"),
    );
    let err = one_line_error(&out);
    assert!(err.contains("--device cuda"), "{err}");
    assert!(!dir.path().join("site").exists());
}

#[test]
fn calibrate_measures_the_matmul_rate_and_copy_bandwidth() {
    let out = workbench()
        .args(["calibrate", "--device", "cpu"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: results::Calibration = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c.matmul_n, 1024);
    assert!(c.matmul_gflop_s > 0.1, "{c:?}");
    assert!(c.copy_gb_s > 0.01, "{c:?}");
    assert_eq!(c.matmul.samples_s.len(), c.copy.samples_s.len());
}
