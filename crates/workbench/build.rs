//! Records the provenance every result carries: the git commit built, and the versions of Burn
//! and rustc, so that a record says exactly what produced it.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn locked_version(lock: &str, name: &str) -> Option<String> {
    let needle = format!("name = \"{name}\"\nversion = \"");
    let start = lock.find(&needle)? + needle.len();
    let end = lock[start..].find('"')?;
    Some(lock[start..start + end].to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|s| !s.is_empty())
        .unwrap_or(false);
    println!(
        "cargo:rustc-env=WORKBENCH_GIT_COMMIT={commit}{}",
        if dirty { "-dirty" } else { "" }
    );

    // Read where cargo runs the script, not where it was compiled: a build script compiled in
    // one checkout is reused by another that shares the target folder.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let lock_path = Path::new(&manifest_dir).join("../../Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path).unwrap_or_default();
    let burn = locked_version(&lock, "burn").unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=WORKBENCH_BURN_VERSION={burn}");

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=WORKBENCH_RUSTC_VERSION={rustc_version}");

    println!("cargo:rerun-if-changed={}", lock_path.display());
    if let Some(git_dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={git_dir}/HEAD");
        println!("cargo:rerun-if-changed={git_dir}/index");
    }
}
