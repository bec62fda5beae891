//! Resume: a run killed with SIGKILL at a random moment inside an experiment, then run again
//! with `--resume`, ends with the records an uninterrupted run writes (every byte count equal),
//! and no file is ever torn; SIGINT's journal is resumed the same way.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use results::record::load_dir;
use results::ExperimentRecord;

/// The experiment killed and resumed: 39 points on the plain backend (byte counts exact from
/// run to run) and one comparison, in a few seconds.
const EXPERIMENT: &str = "views-vs-clones";

/// `workbench run EXPERIMENT --quick --out OUT [--resume]`, not yet waited for.
fn start(out: &Path, resume: bool) -> std::process::Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_workbench"));
    command
        .args(["run", EXPERIMENT, "--quick", "--out"])
        .arg(out);
    if resume {
        command.arg("--resume");
    }
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Every phase's bytes (live before, peak) of every point, or the point's status where it has
/// no result.
fn byte_counts(record: &ExperimentRecord) -> BTreeMap<String, String> {
    record
        .points
        .iter()
        .map(|p| {
            let counts = match p.result() {
                Some(r) => r
                    .phases
                    .iter()
                    .map(|ph| format!("{} {} {}", ph.phase, ph.live_before_bytes, ph.peak_bytes))
                    .collect::<Vec<_>>()
                    .join("; "),
                None => p.outcome.status().to_string(),
            };
            (p.point.id.clone(), counts)
        })
        .collect()
}

/// The JSON files under `dir`, hidden folders (the journal, a staging folder) included.
fn json_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        let path = entry.path();
        if path.is_dir() {
            files.extend(json_files(&path));
        } else if path.extension().is_some_and(|x| x == "json") {
            files.push(path);
        }
    }
    files
}

/// A random number from the standard library's per-process random keys.
fn random_u64() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(Instant::now().elapsed().as_nanos() as u64);
    hasher.finish()
}

/// Waits until `path` exists (or a minute passes).
fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// SIGKILL at a random moment after the experiment's first point, then `--resume`: the same
/// points and byte counts as an uninterrupted run, no torn file, nothing left beside the
/// guide. `WORKBENCH_RESUME_KILLS` sets how many kills (1 by default; 20 were run once, see
/// the README).
#[cfg(unix)]
#[test]
fn a_run_killed_at_a_random_moment_resumes_to_the_same_byte_counts() {
    let kills: usize = std::env::var("WORKBENCH_RESUME_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let reference_dir = tempfile::tempdir().unwrap();
    let reference_out = reference_dir.path().join("site");
    let reference_run = start(&reference_out, false);
    wait_for(&reference_dir.path().join(".site.journal").join(EXPERIMENT));
    // From the first journaled point to the end.
    let started = Instant::now();
    let done = reference_run.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let run_s = started.elapsed().as_secs_f64();
    let reference = byte_counts(&load_dir(&reference_out.join("data")).unwrap()[0]);
    assert!(
        !Path::new(&format!("{}/.site.journal", reference_dir.path().display())).exists(),
        "a complete run leaves no journal"
    );

    let mut outcomes = Vec::new();
    for kill in 0..kills {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        // Anywhere from the first point to the end of the run (points or the comparison); a
        // run that ends first (these machines' speed drifts) is started again with a shorter
        // delay.
        let mut window = 0.9;
        let delay_s = loop {
            let mut child = start(&out, false);
            wait_for(&dir.path().join(".site.journal").join(EXPERIMENT));
            let delay_s = (random_u64() % 1000) as f64 / 1000.0 * run_s * window;
            std::thread::sleep(Duration::from_secs_f64(delay_s));
            let finished = child.try_wait().unwrap().is_some();
            child.kill().unwrap();
            child.wait().unwrap();
            if !finished {
                break delay_s;
            }
            window /= 2.0;
        };
        let journaled = json_files(&dir.path().join(".site.journal"))
            .iter()
            .filter(|p| p.to_string_lossy().contains("point-"))
            .count();
        for file in json_files(dir.path()) {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                "kill {kill} after {delay_s:.2} s: {} is torn",
                file.display()
            );
        }

        let resumed = start(&out, true).wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&resumed.stdout);
        assert!(
            resumed.status.success(),
            "kill {kill} after {delay_s:.2} s: {stdout}{}",
            String::from_utf8_lossy(&resumed.stderr)
        );
        let records = load_dir(&out.join("data")).unwrap();
        assert_eq!(
            byte_counts(&records[0]),
            reference,
            "kill {kill} after {delay_s:.2} s"
        );
        let kept: usize = records[0]
            .resumed
            .as_ref()
            .map_or(0, |r| r.kept.iter().map(|k| k.points.len()).sum());
        assert_eq!(
            kept, journaled,
            "kill {kill}: every journaled point is kept"
        );
        if journaled > 0 {
            let page = crate::without_terms(
                &std::fs::read_to_string(out.join(format!("{EXPERIMENT}.html"))).unwrap(),
            );
            assert!(page.contains("Resumed run"), "kill {kill}");
            assert!(
                page.contains("Kept from the earlier run started"),
                "kill {kill}"
            );
        }
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name != "site")
            .collect();
        assert!(
            left.is_empty(),
            "kill {kill}: left beside the guide: {left:?}"
        );
        outcomes.push(format!(
            "kill {kill}: {delay_s:.2} s after the first point (of {run_s:.2} s), {journaled} of \
             {} points journaled and kept",
            reference.len()
        ));
    }
    // Shown with --nocapture: the loop's outcome, for the README.
    println!("{}", outcomes.join("\n"));
}

/// SIGINT keeps the journal; `--resume` keeps its points and finishes the run.
#[cfg(unix)]
#[test]
fn an_interrupted_run_is_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let child = start(&out, false);
    // After ten points.
    let journal = dir.path().join(".site.journal").join(EXPERIMENT);
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_dir(&journal).map_or(0, |d| d.count()) < 10 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let signalled = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("with --resume"), "{stderr}");
    let journaled = json_files(&journal).len();
    assert!(journaled >= 10, "{journaled}");

    let resumed = start(&out, true).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(resumed.status.success(), "{stdout}");
    assert!(stdout.contains("--resume:"), "{stdout}");
    let records = load_dir(&out.join("data")).unwrap();
    assert!(records[0].incomplete.is_none());
    let resumed = records[0]
        .resumed
        .as_ref()
        .expect("the record says it was resumed");
    let kept: usize = resumed.kept.iter().map(|k| k.points.len()).sum();
    assert!(kept >= 10 && kept <= journaled, "{kept} of {journaled}");
    assert!(!dir.path().join(".site.journal").exists());
}

/// A run without `--resume` discards an earlier run's journal and says so; staging folders
/// left by dead runs are removed.
#[cfg(unix)]
#[test]
fn a_fresh_run_discards_the_journal_and_stale_staging() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let stale = dir.path().join(".site.partial-AbC123");
    std::fs::create_dir_all(stale.join("data")).unwrap();
    let journal = dir.path().join(".site.journal").join(EXPERIMENT);
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::write(journal.join("point-x.json"), "{}").unwrap();
    let done = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(["run", "cache-release", "--quick", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success(), "{stdout}");
    assert!(stdout.contains("discarded the journal"), "{stdout}");
    assert!(
        stdout.contains("left by a run that did not finish"),
        "{stdout}"
    );
    assert!(!stale.exists());
    assert!(!dir.path().join(".site.journal").exists());
    let records = load_dir(&out.join("data")).unwrap();
    assert!(records[0].resumed.is_none());
}
