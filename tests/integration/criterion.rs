//! `workbench render --criterion`: criterion's estimates (a real `cargo bench` of in-place and
//! cache-release at quick sizes, `tests/fixtures/criterion`) set beside the fixture records'
//! step times, kept in the records, and refused with one line where they cannot be used.

use std::path::{Path, PathBuf};

use guide::context::SiteContext;
use guide::HtmlRenderer;
use results::record::load_dir;
use results::ExperimentRecord;

use crate::{fixtures, main_element, one_line_error, workbench};

fn criterion_fixtures() -> PathBuf {
    crate::repo().join("tests/fixtures/criterion")
}

fn render(criterion: &Path, out: &Path) -> std::process::Output {
    workbench()
        .args(["render", "--results"])
        .arg(fixtures())
        .arg("--criterion")
        .arg(criterion)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn estimates_sit_beside_the_workbench_timings_and_stay_in_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let out = render(&criterion_fixtures(), &site);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let page = std::fs::read_to_string(site.join("in-place.html")).unwrap();
    assert!(page.contains("Step time: the workbench and criterion"));
    assert!(page.contains("chain-consume-rows-1024"));
    // Every row is compared: the fixture's configurations are the bench's.
    assert!(!page.contains("not compared"), "a configuration differs");
    let verdicts = page.matches(">agree<").count() + page.matches(">differ<").count();
    assert_eq!(verdicts, 12, "one verdict per in-place point");
    // Experiments the benches did not run show no such section.
    let batch = std::fs::read_to_string(site.join("batch-size.html")).unwrap();
    assert!(!batch.contains("Step time: the workbench and criterion"));

    // The estimates travel in the records: rendering the guide's own data keeps them.
    let again = dir.path().join("again");
    workbench()
        .args(["render", "--results"])
        .arg(site.join("data"))
        .arg("--out")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(again.join("in-place.html")).unwrap(),
        page
    );
}

#[test]
fn criterion_table_snapshot() {
    let mut records = load_dir(&fixtures()).unwrap();
    let sets = results::criterion::load(&criterion_fixtures()).unwrap();
    assert_eq!(sets.len(), 2, "in-place and cache-release");
    let unmatched = ExperimentRecord::attach_estimates(&mut records, sets);
    assert!(unmatched.is_empty());
    let records = crate::worded(records);
    let context = SiteContext::new(&records, None);
    let index = context
        .pages
        .iter()
        .position(|p| p.id == "cache-release")
        .unwrap();
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, index).unwrap());
    let main = main_element(&html);
    let start = main
        .find("<h2>Step time: the workbench and criterion</h2>")
        .unwrap();
    let end = start + main[start..].find("</section>").unwrap();
    insta::assert_snapshot!("criterion_table_cache_release", &main[start..end]);
}

#[test]
fn a_folder_without_estimates_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = render(&dir.path().join("no-such-folder"), &dir.path().join("site"));
    let err = one_line_error(&out);
    assert!(err.contains("run `cargo bench` first"), "{err}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = one_line_error(&render(&empty, &dir.path().join("site")));
    assert!(
        err.contains("no estimates of the workbench's benches"),
        "{err}"
    );
    assert!(!dir.path().join("site").exists(), "nothing written");
}

/// Copies the fixture folder so that a test can spoil it.
fn spoilable_copy(into: &Path) -> PathBuf {
    let copy = into.join("criterion");
    for entry in walk(&criterion_fixtures()) {
        let target = copy.join(entry.strip_prefix(criterion_fixtures()).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &target).unwrap();
    }
    copy
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_malformed_estimate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let copy = spoilable_copy(dir.path());
    std::fs::write(
        copy.join("in-place/chain-consume-rows-256/cpu-quick/new/estimates.json"),
        "{ not json",
    )
    .unwrap();
    let err = one_line_error(&render(&copy, &dir.path().join("site")));
    assert!(err.contains("malformed criterion result"), "{err}");
    assert!(err.contains("estimates.json"), "{err}");
}

#[test]
fn estimates_of_other_sizes_match_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let copy = spoilable_copy(dir.path());
    for sidecar in walk(&copy)
        .into_iter()
        .filter(|p| p.ends_with("workbench-point.json"))
    {
        let text = std::fs::read_to_string(&sidecar).unwrap();
        std::fs::write(&sidecar, text.replace("\"quick\"", "\"full\"")).unwrap();
    }
    let out = render(&copy, &dir.path().join("site"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("match no record"),
        "says what is left out: {stderr}"
    );
    assert!(
        stderr.lines().last().unwrap().contains("matches a record"),
        "{stderr}"
    );
}
