//! The step monitor in a loop of the reader's own (`examples/memory_monitor.rs`, built by
//! `cargo test`): its one-screen summary on a flat loop, and its warning on a loop that keeps
//! each step's autodiff graph, on the CPU and (with the `wgpu` feature) on wgpu.

use std::path::PathBuf;
use std::process::Command;

/// The example's binary, beside the test binaries in the target folder.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir.join("examples").join("memory_monitor")
}

fn run(args: &[&str]) -> String {
    let out = Command::new(example()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn devices() -> Vec<&'static str> {
    let mut devices = vec!["cpu"];
    if cfg!(feature = "wgpu") {
        devices.push("wgpu");
    }
    devices
}

#[test]
fn a_flat_loop_is_summarised_and_a_leaking_one_is_warned_about() {
    for device in devices() {
        let flat = run(&["--device", device]);
        assert!(flat.starts_with("memory over 60 steps"), "{device}: {flat}");
        assert!(flat.contains("in use, per step:"), "{device}: {flat}");
        assert!(flat.contains("(flat)"), "{device}: {flat}");
        assert!(!flat.contains("warning:"), "{device}: {flat}");
        if device == "wgpu" {
            assert!(flat.contains("reserved, per step:"), "{flat}");
        }

        let leaking = run(&["--device", device, "--leak"]);
        assert!(
            leaking.contains("warning: memory in use grows by +"),
            "{device}: {leaking}"
        );
        assert!(leaking.contains("model.valid()"), "{device}: {leaking}");
    }
}
