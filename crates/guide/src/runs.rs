//! The "Runs" page: which run produced each result set of the guide.
//!
//! Question: where, when and with what were these figures measured, and was any result set
//! joined from several runs? Method: the records' provenance, calibration, wall time and resume
//! notes, grouped by run (records of one run share device, profile, build and machine). Answer:
//! one row per run, so a reader can tell two result sets apart without reading a changelog.

use results::{format, Analysed, Calibration, DeviceKind};
use serde::Serialize;

use crate::index_row::device_label;

/// The page's file.
pub const HREF: &str = "runs.html";

/// One run: the records it wrote and where they were measured.
#[derive(Debug, Serialize)]
pub struct RunRow {
    /// Device and backend, with the driver's name.
    pub device: String,
    /// `quick` or `full`.
    pub profile: String,
    /// Git commit of the binary.
    pub commit: String,
    /// Workbench, Burn and rustc versions, and the build profile.
    pub build: String,
    /// CPU model, cores and OS.
    pub machine: String,
    /// The earliest start of its experiments (UTC).
    pub started: String,
    /// The machine's calibration: matmul rate and copy bandwidth.
    pub calibration: String,
    /// Wall time of its experiments, added up.
    pub wall: String,
    /// The experiments it measured.
    pub experiments: String,
    /// Whether records were joined from earlier runs (`--resume`), and from which.
    pub resumed: String,
    /// Records left incomplete by an interruption.
    pub incomplete: String,
    /// The command line as recorded (the binary's path as it was run).
    pub command: String,
    /// The command a reader types to measure the same sets again.
    pub reproduce: String,
}

/// The command that measures `members`' experiments again, as a reader types it.
fn reproduce(members: &[&Analysed]) -> String {
    let first = members[0];
    let ids: Vec<&str> = members.iter().map(|r| r.experiment.as_str()).collect();
    let every = results::TechniqueId::ALL
        .iter()
        .all(|t| ids.contains(&t.id()));
    let mut command = format!(
        "workbench run {}",
        if every {
            "all".to_string()
        } else {
            ids.join(" ")
        }
    );
    if first.profile == results::Profile::Quick {
        command.push_str(" --quick");
    }
    if first.device.kind != DeviceKind::Cpu {
        command.push_str(&format!(" --device {}", first.device.kind.name()));
    }
    command
}

/// One row per run, in the order the records first name it.
pub fn rows(records: &[Analysed]) -> Vec<RunRow> {
    let mut groups: Vec<(String, Vec<&Analysed>)> = Vec::new();
    for r in records {
        let p = &r.provenance;
        let key = format!(
            "{}|{}|{}|{}|{}|{}|{}",
            device_label(r),
            r.profile.name(),
            p.git_commit,
            p.build_profile,
            p.cpu_model,
            p.cpu_cores,
            p.command_line.as_deref().unwrap_or("")
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
        .into_iter()
        .map(|(_, members)| row(&members))
        .collect()
}

fn row(members: &[&Analysed]) -> RunRow {
    let first = members[0];
    let p = &first.provenance;
    let started = members
        .iter()
        .map(|r| r.provenance.started_at.as_str())
        .min()
        .unwrap_or_default();
    let resumed: Vec<String> = members
        .iter()
        .filter_map(|r| {
            let resumed = r.resumed.as_ref()?;
            let from: Vec<String> = resumed
                .kept
                .iter()
                .map(|k| {
                    format!(
                        "{} point(s) from the run of {} started {}",
                        k.points.len(),
                        short(&k.git_commit),
                        k.run_started_at
                    )
                })
                .collect();
            Some(format!(
                "{}: {}",
                r.experiment,
                if from.is_empty() {
                    "nothing kept".to_string()
                } else {
                    from.join("; ")
                }
            ))
        })
        .collect();
    let incomplete: Vec<&str> = members
        .iter()
        .filter(|r| r.incomplete.is_some())
        .map(|r| r.experiment.as_str())
        .collect();
    RunRow {
        device: device_label(first),
        profile: first.profile.name().into(),
        commit: p.git_commit.clone(),
        build: format!(
            "workbench {}, Burn {}, {}, {} build",
            p.workbench_version, p.burn_version, p.rustc_version, p.build_profile
        ),
        machine: format!("{} ({} cores), {}", p.cpu_model, p.cpu_cores, p.os),
        started: started.into(),
        calibration: first.calibration.as_ref().map_or_else(
            || "not measured".into(),
            |c| {
                format!(
                    "f32 matmul {}³: {:.1} GFLOP/s; element-wise add of {}: {}",
                    c.matmul_n,
                    c.matmul_gflop_s,
                    format::bytes(c.copy_bytes as f64),
                    add_rate(c, first.device.kind)
                )
            },
        ),
        wall: format!(
            "{} (its experiments, added up{})",
            minutes(members.iter().map(|r| r.wall_s).sum()),
            if resumed.is_empty() {
                ""
            } else {
                "; a resumed record counts the resumed run alone"
            }
        ),
        experiments: members
            .iter()
            .map(|r| r.experiment.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        resumed: if resumed.is_empty() {
            "no: measured in one run".into()
        } else {
            resumed.join("; ")
        },
        incomplete: if incomplete.is_empty() {
            "none".into()
        } else {
            incomplete.join(", ")
        },
        command: p.command_line.clone().unwrap_or_default(),
        reproduce: reproduce(members),
    }
}

/// A wall time of minutes as minutes and seconds (`19 min 33 s`); under a minute in seconds.
fn minutes(s: f64) -> String {
    if s < 60.0 {
        return format::seconds(s);
    }
    let whole = s.round() as u64;
    format!("{} min {} s", whole / 60, whole % 60)
}

/// A commit's first 10 characters.
fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// The calibration's add bandwidth as a reader sees it: its rate, or why a record's rate is
/// not trusted (an add whose output a fusing backend may have skipped measured nothing).
pub(crate) fn add_rate(c: &Calibration, device: DeviceKind) -> String {
    match c.copy_gb_s_if_ran(device) {
        Some(gb_s) => format!("{gb_s:.1} GB/s"),
        None => format!(
            "not trusted ({:.0} GB/s, timed with the add's output dropped before the sync, \
             which CubeCL's fusion may skip)",
            c.copy_gb_s
        ),
    }
}
