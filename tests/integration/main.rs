//! The workbench's one integration-test binary (as mdBook has): the CLI end to end, bad input,
//! the results schema, the rendered guide (snapshots of `<main>`), and the host memory probe.
//!
//! The binary installs the counting allocator so that the probe can be tested; tests that need
//! exact byte counts re-run themselves in a child process, away from the other test threads.

use experiments::harness::probe::host::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

mod attribution;
mod capacity;
mod checks;
mod cli;
mod consistency;
mod criterion;
#[cfg(feature = "wgpu")]
mod device;
mod diff;
mod keys;
mod monitor;
mod probe;
mod record;
mod resume;
mod run;
mod site;
mod snippets;

use std::path::PathBuf;

/// The `workbench` binary built with this test.
pub fn workbench() -> assert_cmd::Command {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_workbench"))
}

/// The repository's root, read when the test runs: a test binary built in another checkout
/// that shares the target folder (CI's clean clone) must not read that checkout's files.
pub fn repo() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo test sets CARGO_MANIFEST_DIR"))
}

/// The committed fixture records (a real `--quick` run, plus one with a failed point).
pub fn fixtures() -> PathBuf {
    repo().join("tests/fixtures/results")
}

/// Records analysed as `workbench render` analyses them, in the guide's order, before the
/// guide words them.
pub fn analysed(records: Vec<results::ExperimentRecord>) -> Vec<results::Analysed<results::Text>> {
    workbench::analyse::analyse_all(records).expect("every record is of a known experiment")
}

/// Records analysed and worded, as the guide's pages read them.
pub fn worded(records: Vec<results::ExperimentRecord>) -> Vec<results::Analysed> {
    guide::words::all(&analysed(records))
}

/// The fixture records, analysed.
pub fn fixture_analyses() -> Vec<results::Analysed<results::Text>> {
    analysed(results::record::load_dir(&fixtures()).unwrap())
}

/// The fixture records, analysed and worded.
pub fn fixture_pages() -> Vec<results::Analysed> {
    worded(results::record::load_dir(&fixtures()).unwrap())
}

/// The `<main>` element of an HTML page.
pub fn main_element(html: &str) -> &str {
    let start = html.find("<main>").expect("page has <main>");
    let end = html.find("</main>").expect("page has </main>") + "</main>".len();
    &html[start..end]
}

/// The stderr of a run that must fail as bad input: exit status 2, one line, no panic and no
/// backtrace.
pub fn one_line_error(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "a panic: {stderr}");
    assert!(!stderr.contains("backtrace"), "a backtrace: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "not one line: {stderr}");
    stderr
}

/// A page's HTML with the glossary's term links taken out (their words kept), so that a test
/// can look for a sentence whatever terms it holds.
pub fn without_terms(html: &str) -> String {
    regex::Regex::new(r#"<a class="term" href="glossary\.html#[a-z0-9-]+">([^<]*)</a>"#)
        .expect("the pattern parses")
        .replace_all(html, "$1")
        .into_owned()
}
