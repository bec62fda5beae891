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
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let out = render(&results, &dir.path().join("site"));
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
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::write(results.join("x.json"), "{\"schema_version\": 999}").unwrap();
    let out = render(&results, &dir.path().join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("schema version 999"), "{err}");
}

#[test]
fn a_version_5_record_loads_without_its_derived_fields_and_is_written_in_the_current_version() {
    // Version 5 stored the page's text and the analysis; they are ignored on load and derived
    // again at render time, and the record is written back with measurements only. Versions 5
    // and 6 said what a check compared in a sentence; it is read back as the check's key.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::fixtures().join("no-grad.json")).unwrap(),
    )
    .unwrap();
    value["schema_version"] = 5.into();
    value["title"] = "an old title".into();
    value["analysis"] = serde_json::json!({ "findings": ["An old sentence of six words."] });
    for p in value["points"].as_array_mut().unwrap() {
        if let Some(checks) = p["outcome"]["result"]["checks"].as_array_mut() {
            for c in checks {
                c["what"] = "outputs of valid() against the autodiff backend".into();
            }
        }
    }
    std::fs::write(results.join("no-grad.json"), value.to_string()).unwrap();
    let out = render(&results, &dir.path().join("site"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(dir.path().join("site/data/no-grad.json")).unwrap();
    assert!(
        written.contains(&format!("\"schema_version\": {}", results::SCHEMA_VERSION)),
        "{written}"
    );
    assert!(written.contains("\"what\": \"valid-against-autodiff\""));
    assert!(!written.contains("outputs of valid() against"), "{written}");
    assert!(!written.contains("An old sentence"), "{written}");
    assert!(!written.contains("an old title"), "{written}");
    let page = crate::without_terms(
        &std::fs::read_to_string(dir.path().join("site/no-grad.html")).unwrap(),
    );
    assert!(!page.contains("An old sentence"), "the analysis is today's");
}

#[test]
fn a_record_of_an_unknown_experiment_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let text = std::fs::read_to_string(crate::fixtures().join("no-grad.json"))
        .unwrap()
        .replace(
            "\"experiment\": \"no-grad\"",
            "\"experiment\": \"teleport\"",
        );
    std::fs::write(results.join("teleport.json"), text).unwrap();
    let out = render(&results, &dir.path().join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("experiment 'teleport'"), "{err}");
    assert!(!dir.path().join("site").exists(), "nothing half-written");
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

/// Every bad input tried: one line naming it, exit 2, no backtrace, nothing written. (The
/// README's table of bad inputs is this list.)
#[test]
fn every_bad_input_gets_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let fixtures = crate::fixtures();
    let inside = fixtures.join("site");
    let fresh_out = dir.path().join("site").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["memory-summary", "--tensor-mib", "0"],
            "0 is not in 1..",
        ),
        (vec!["memory-summary", "--tensor-mib", "-5"], "'-5'"),
        (
            vec!["memory-summary", "--tensor-mib", "abc"],
            "invalid digit",
        ),
        (
            vec!["memory-summary", "--tensor-mib", "99999999999"],
            "is not in 1..",
        ),
        (
            vec!["memory-summary", "--tensor-mib", "1000000000"],
            "does not fit in",
        ),
        (
            vec!["run", "batch-size", "--point-timeout-s", "0"],
            "0 is not in 1..",
        ),
        (vec!["run", "batch-size", "--point-timeout-s", "-1"], "'-1'"),
        (
            vec!["run", "batch-size", "--point-timeout-s", "soon"],
            "invalid digit",
        ),
        (vec!["run", "nope"], "unknown experiment 'nope'"),
        (vec!["run", "all", "--device", "tpu"], "invalid value 'tpu'"),
        (vec!["run"], "required arguments"),
        (vec!["frobnicate"], "unrecognized subcommand"),
        (
            vec!["run", "all", "--out", file.to_str().unwrap()],
            "is a file",
        ),
        (vec!["run", "all", "--out", "/"], "refusing to replace /"),
        (
            vec![
                "render",
                "--results",
                fixtures.to_str().unwrap(),
                "--out",
                inside.to_str().unwrap(),
            ],
            "inside the results folder",
        ),
        (
            vec![
                "render",
                "--results",
                fixtures.to_str().unwrap(),
                "--out",
                fixtures.to_str().unwrap(),
            ],
            "inside the results folder",
        ),
        // The same, relative (the tests run in the package's root).
        (
            vec![
                "render",
                "--results",
                "tests/fixtures/results",
                "--out",
                "tests/fixtures/results/new-site",
            ],
            "inside the results folder",
        ),
        (
            vec!["estimate", "--preset", "nope"],
            "unknown preset 'nope'",
        ),
        (
            vec![
                "estimate",
                "--preset",
                "gpt2-124m",
                "--results",
                "no-such-folder",
            ],
            "no-such-folder",
        ),
        (
            vec!["diff", "no-such-folder", fixtures.to_str().unwrap()],
            "no-such-folder",
        ),
        (
            vec![
                "diff",
                fixtures.to_str().unwrap(),
                fixtures.to_str().unwrap(),
                "--fail-above",
                "-1",
            ],
            "not a percent of 0 or more",
        ),
        (
            vec![
                "run",
                "batch-size",
                "--baseline",
                "no-such-folder",
                "--out",
                &fresh_out,
            ],
            "no-such-folder",
        ),
    ];
    for (args, expected) in cases {
        let out = workbench().args(&args).output().unwrap();
        let err = one_line_error(&out);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(!inside.exists(), "nothing was written inside the results");
    // Nor beside the refused outputs (`--out /` would put its lock and journal in the current
    // folder, `--out a-file` beside the file): the output is checked before anything is written.
    for left in [
        ".site.journal",
        ".site.lock",
        ".a-file.journal",
        ".a-file.lock",
    ] {
        assert!(!Path::new(left).exists(), "{left} was written");
        assert!(!dir.path().join(left).exists(), "{left} was written");
    }
}

/// A results folder mixing devices, or holding two records of one experiment and device, is
/// refused with one line: which record the guide should show is not for the workbench to guess.
#[test]
fn results_mixing_devices_or_doubling_a_record_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("data");
    std::fs::create_dir_all(&results).unwrap();
    let text = std::fs::read_to_string(crate::fixtures().join("batch-size.json")).unwrap();
    std::fs::write(results.join("batch-size.json"), &text).unwrap();
    let mut wgpu: serde_json::Value = serde_json::from_str(&text).unwrap();
    wgpu["device"]["kind"] = "wgpu".into();
    wgpu["experiment"] = "no-grad".into();
    std::fs::write(results.join("no-grad.json"), wgpu.to_string()).unwrap();
    let out = dir.path().join("site");
    let err = one_line_error(&render(&results, &out));
    assert!(err.contains("mixes devices"), "{err}");
    assert!(!out.exists());

    std::fs::remove_file(results.join("no-grad.json")).unwrap();
    std::fs::write(results.join("batch-size-again.json"), &text).unwrap();
    let err = one_line_error(&render(&results, &out));
    assert!(err.contains("two records of batch-size on cpu"), "{err}");
    assert!(!out.exists());

    // Each device in a folder of its own is how a run writes them: accepted.
    std::fs::remove_file(results.join("batch-size-again.json")).unwrap();
    std::fs::create_dir_all(results.join("wgpu")).unwrap();
    std::fs::write(results.join("wgpu/no-grad.json"), wgpu.to_string()).unwrap();
    let done = render(&results, &out);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
}

/// The lock beside an output folder: a live holder refuses a second run with one line; a dead
/// one's lock is taken over.
#[cfg(unix)]
#[test]
fn a_second_run_into_the_same_folder_is_refused_and_a_dead_lock_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let lock = dir.path().join(".site.lock");
    // This test's own process is alive.
    std::fs::write(&lock, format!("{}\n", std::process::id())).unwrap();
    let err = one_line_error(&render(&crate::fixtures(), &out));
    assert!(err.contains("another workbench run"), "{err}");
    assert!(!out.exists());
    // A process id no process has (above Linux's largest).
    std::fs::write(&lock, "4194305\n").unwrap();
    let done = render(&crate::fixtures(), &out);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(out.join("index.html").exists());
    assert!(!lock.exists(), "the lock is given back");
}

/// SIGINT and SIGTERM: the running child is stopped, the finished points are kept and
/// rendered (the unfinished experiment marked incomplete), one line says what was kept, and the
/// exit status is 128 + the signal.
#[cfg(unix)]
#[test]
fn an_interrupted_run_keeps_its_finished_points_and_exits_128_plus_the_signal() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args(["run", "batch-size", "accumulation", "--quick", "--out"])
            .arg(&out)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until batch-size's record is written (in the staging folder), then signal.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let staged = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .any(|e| e.path().join("data/batch-size.json").exists());
            if staged || std::time::Instant::now() > deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].contains(&format!("interrupted by SIG{signal}")),
            "{stderr}"
        );
        assert!(
            lines[0].contains("run the same command with --resume"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        let records = results::record::load_dir(&out.join("data")).unwrap();
        let batch = records
            .iter()
            .find(|r| r.experiment == "batch-size")
            .unwrap();
        assert!(batch.incomplete.is_none());
        assert_eq!(batch.failed_points(), 0);
        if let Some(acc) = records.iter().find(|r| r.experiment == "accumulation") {
            assert!(acc.incomplete.is_some());
            assert!(acc.comparisons.is_empty());
        }
        assert!(out.join("index.html").exists());
        assert!(!dir.path().join(".site.lock").exists());
    }
}

/// `run --from-record FILE --point ID` measures a stored point again and prints both side by
/// side; a point the record does not hold is bad input.
#[test]
fn a_stored_point_is_measured_again_beside_the_record() {
    let file = crate::fixtures().join("cache-release.json");
    let out = workbench()
        .args(["run", "--from-record"])
        .arg(&file)
        .args(["--point", "cached-4-mib"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("stored: commit"), "{stdout}");
    assert!(stdout.contains("step peak (bytes)"), "{stdout}");
    assert!(stdout.contains("in_use_alive_bytes"), "{stdout}");
    let err = one_line_error(
        &workbench()
            .args(["run", "--from-record"])
            .arg(&file)
            .args(["--point", "nope"])
            .output()
            .unwrap(),
    );
    assert!(err.contains("has no such point"), "{err}");
    let err = one_line_error(
        &workbench()
            .args([
                "run",
                "--from-record",
                "/no/such/record.json",
                "--point",
                "x",
            ])
            .output()
            .unwrap(),
    );
    assert!(err.contains("record.json"), "{err}");
}
