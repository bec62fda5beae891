//! The provenance of this process: the git commit built, the versions of the workbench, Burn
//! and rustc (set by `build.rs`), the build profile, the CPU and the date.

use results::Provenance;

/// The provenance of this process, now.
pub fn current() -> Provenance {
    Provenance {
        git_commit: env!("WORKBENCH_GIT_COMMIT").into(),
        workbench_version: env!("CARGO_PKG_VERSION").into(),
        burn_version: env!("WORKBENCH_BURN_VERSION").into(),
        rustc_version: env!("WORKBENCH_RUSTC_VERSION").into(),
        build_profile: if cfg!(debug_assertions) {
            "debug".into()
        } else {
            "release".into()
        },
        cpu_model: cpu_model(),
        cpu_cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        command_line: Some(std::env::args().collect::<Vec<_>>().join(" ")),
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
