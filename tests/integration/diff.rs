//! `workbench diff OLD NEW`: the committed CPU set against itself, against a copy with one peak
//! raised, bad folders; and the guide's "Changes" page when rendered with `--baseline`.

use std::path::{Path, PathBuf};

use crate::{one_line_error, repo, workbench};

/// The committed CPU result set's records (the top of `site/data`, without the device
/// subfolders), copied into `dir`.
fn cpu_set(dir: &Path) -> PathBuf {
    let set = dir.join("cpu");
    std::fs::create_dir_all(&set).unwrap();
    for entry in std::fs::read_dir(repo().join("site/data")).unwrap() {
        let path = entry.unwrap().path();
        let record = path.extension().is_some_and(|e| e == "json")
            && path
                .file_name()
                .is_some_and(|n| n != results::CAPACITY_FILE);
        if record {
            std::fs::copy(&path, set.join(path.file_name().unwrap())).unwrap();
        }
    }
    set
}

/// `set` with the first measured point of `experiment` holding 10% more at its first phase's
/// peak: its id.
fn raise_one_peak(set: &Path, experiment: &str) -> String {
    let file = set.join(format!("{experiment}.json"));
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let point = record["points"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["outcome"]["status"] == "measured")
        .unwrap();
    let peak = &mut point["outcome"]["result"]["phases"][0]["peak_bytes"];
    *peak = serde_json::json!((peak.as_u64().unwrap() as f64 * 1.1) as u64);
    let id = point["point"]["id"].as_str().unwrap().to_string();
    std::fs::write(&file, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    id
}

fn diff(args: &[&std::ffi::OsStr]) -> std::process::Output {
    workbench().arg("diff").args(args).output().unwrap()
}

#[test]
fn the_committed_set_against_itself_has_no_change_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let set = cpu_set(dir.path());
    let out = diff(&[
        set.as_os_str(),
        set.as_os_str(),
        "--fail-above".as_ref(),
        "0".as_ref(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(text.contains(": 0 changed"), "{text}");
    assert!(text.contains("0 added, 0 removed"), "{text}");
    assert!(text.contains("on the same CPU model"), "{text}");
    // A set of several devices and machines (the 0.21 CPU, wgpu and CUDA sets) against itself
    // is on the same machines too: decided point by point.
    let several = repo().join("baselines/burn-0.21.0");
    let out = diff(&[several.as_os_str(), several.as_os_str()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("on the same CPU model"), "{text}");
    assert!(!text.contains("different machines"), "{text}");
}

#[test]
fn a_peak_raised_by_a_tenth_is_named_and_fails_above_5_percent() {
    let dir = tempfile::tempdir().unwrap();
    let old = cpu_set(dir.path());
    let new = dir.path().join("new");
    std::fs::rename(cpu_set(&dir.path().join("copy")), &new).unwrap();
    let id = raise_one_peak(&new, "batch-size");
    let out = diff(&[
        old.as_os_str(),
        new.as_os_str(),
        "--fail-above".as_ref(),
        "5".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let name = format!("cpu/batch-size/{id}");
    assert!(text.contains(&name) && text.contains("+10.0%"), "{text}");
    // In units, as the Changes page prints it, and counted.
    let line = text.lines().find(|l| l.contains(&name)).unwrap();
    assert!(line.contains("MiB ->") || line.contains("KiB ->"), "{line}");
    assert!(text.contains("1 phase peak(s) rose, 0 fell"), "{text}");
    let error = String::from_utf8(out.stderr).unwrap();
    assert_eq!(error.trim().lines().count(), 1, "{error}");
    assert!(
        error.contains("more than 5% above") && error.contains(&name),
        "{error}"
    );
    // Within the threshold: exit 0; as JSON: github-action-benchmark's entries.
    let json = diff(&[
        old.as_os_str(),
        new.as_os_str(),
        "--json".as_ref(),
        "--fail-above".as_ref(),
        "11".as_ref(),
    ]);
    assert!(json.status.success());
    let entries: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    let raised = entries
        .iter()
        .find(|e| e["name"].as_str().unwrap().starts_with(&name))
        .unwrap();
    assert_eq!(raised["unit"], "bytes");
    assert!(
        raised["extra"].as_str().unwrap().contains("+10.0%"),
        "{raised}"
    );
}

#[test]
fn bad_folders_get_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let set = cpu_set(dir.path());
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let missing = dir.path().join("missing");
    for (old, new) in [(&missing, &set), (&set, &empty)] {
        one_line_error(&diff(&[old.as_os_str(), new.as_os_str()]));
    }
    let negative = ["--fail-above".as_ref(), "-1".as_ref()];
    one_line_error(&diff(&[
        set.as_os_str(),
        set.as_os_str(),
        negative[0],
        negative[1],
    ]));
}

#[test]
fn rendered_with_a_baseline_the_guide_has_its_changes_page() {
    let dir = tempfile::tempdir().unwrap();
    let old = cpu_set(dir.path());
    let new = cpu_set(&dir.path().join("new"));
    let id = raise_one_peak(&new, "no-grad");
    let out = dir.path().join("site");
    let rendered = workbench()
        .args(["render", "--results"])
        .arg(&new)
        .arg("--baseline")
        .arg(&old)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    // minijinja escapes the slashes of the point's name.
    let page = std::fs::read_to_string(out.join("changes.html"))
        .unwrap()
        .replace("&#x2f;", "/");
    assert!(
        page.contains(&format!("cpu/no-grad/{id}")),
        "the raised point is named"
    );
    assert!(page.contains("+10.0%"));
    let runs = std::fs::read_to_string(out.join("runs.html")).unwrap();
    assert!(runs.contains("href=\"changes.html\""));
}
