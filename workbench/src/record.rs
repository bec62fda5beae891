//! The results schema: one JSON record per experiment, written as soon as the experiment ends.
//!
//! A record carries everything needed to trust and re-render it: provenance (git commit, Burn
//! version, backend, CPU, date), the exact configuration of every point, raw samples, what the
//! probe counted, and the analysis. `SCHEMA_VERSION` changes whenever a field changes meaning.

use std::path::{Path, PathBuf};

use experiments::experiment::Analysis;
use experiments::probe::ProbeInfo;
use experiments::{DeviceKind, MeasuredPoint, Profile};
use serde::{Deserialize, Serialize};

use crate::error::BadInput;

/// Version of the record format; records of another version are refused with a clear error.
pub const SCHEMA_VERSION: u32 = 1;

/// Where and with what a record was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Git commit the binary was built from (`-dirty` when the tree had changes).
    pub git_commit: String,
    /// Version of the workbench.
    pub workbench_version: String,
    /// Version of the `burn` crate, from Cargo.lock.
    pub burn_version: String,
    /// Compiler that built the binary.
    pub rustc_version: String,
    /// Build profile: `release` or `debug` (timings from a debug build are not comparable).
    pub build_profile: String,
    /// CPU model, from /proc/cpuinfo.
    pub cpu_model: String,
    /// Logical cores available to the process.
    pub cpu_cores: usize,
    /// Operating system and architecture.
    pub os: String,
    /// When the experiment started, RFC 3339, UTC.
    pub started_at: String,
}

impl Provenance {
    /// The provenance of this process, now.
    pub fn current() -> Self {
        Self {
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
        }
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

/// The device a record was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// `cpu`, `wgpu` or `cuda`.
    pub kind: DeviceKind,
    /// The Burn backend.
    pub backend: String,
    /// Float type of the measured tensors.
    pub dtype: String,
    /// What the memory figures count (from the first measured point).
    pub probe: Option<ProbeInfo>,
    /// The device as its driver names it (GPU name, driver, total memory); absent in records
    /// written before it was recorded.
    #[serde(default)]
    pub identity: Option<experiments::driver::DeviceIdentity>,
}

/// Everything one experiment run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRecord {
    /// [`SCHEMA_VERSION`] at the time of writing.
    pub schema_version: u32,
    /// Experiment id.
    pub experiment: String,
    /// Page title.
    pub title: String,
    /// `quick` or `full`.
    pub profile: Profile,
    /// Where and with what.
    pub provenance: Provenance,
    /// The device.
    pub device: DeviceInfo,
    /// Wall time of the whole experiment, child processes included.
    pub wall_s: f64,
    /// Every point, measured or failed, in the order run.
    pub points: Vec<MeasuredPoint>,
    /// What the experiment concluded.
    pub analysis: Analysis,
    /// Criterion's estimates of the same points' steps (`workbench render --criterion`), where
    /// the benches were run at the same sizes on the same device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criterion: Vec<crate::criterion::CriterionEstimate>,
}

impl ExperimentRecord {
    /// Points that failed.
    pub fn failed_points(&self) -> usize {
        self.points.iter().filter(|p| p.result().is_none()).count()
    }

    /// File name of the record inside a results folder.
    pub fn file_name(&self) -> String {
        format!("{}.json", self.experiment)
    }

    /// Where the record goes in a guide's `data/` folder: `<id>.json` for the CPU,
    /// `<device>/<id>.json` for a device result set.
    pub fn data_file(&self) -> String {
        match self.device.kind {
            DeviceKind::Cpu => self.file_name(),
            other => format!("{}/{}", other.name(), self.file_name()),
        }
    }

    /// The record's path in a guide: `data/` and [`Self::data_file`].
    pub fn data_path(&self) -> String {
        format!("data/{}", self.data_file())
    }

    /// Writes the record as pretty JSON.
    /// Device result sets go to a subfolder named after the device, as in a guide's `data/`.
    pub fn save(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join(self.data_file());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&path, json + "\n")?;
        Ok(path)
    }

    /// Reads one record, refusing malformed JSON and other schema versions.
    pub fn load(path: &Path) -> Result<Self, BadInput> {
        let text = std::fs::read_to_string(path).map_err(|e| BadInput::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| BadInput::MalformedRecord {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        if version != Some(SCHEMA_VERSION as u64) {
            return Err(BadInput::MalformedRecord {
                path: path.to_path_buf(),
                reason: match version {
                    Some(v) => format!("schema version {v}, this workbench reads {SCHEMA_VERSION}"),
                    None => "no schema_version field: not a workbench record".into(),
                },
            });
        }
        serde_json::from_value(value).map_err(|e| BadInput::MalformedRecord {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    }
}

/// Loads every `*.json` record of a results folder, in the guide's experiment order.
pub fn load_dir(dir: &Path) -> Result<Vec<ExperimentRecord>, BadInput> {
    load_dirs(&[dir.to_path_buf()])
}

/// Loads the records of several results folders (each a guide's `data/`, whose subfolders hold
/// device result sets), in guide order, CPU before the devices; a record of the same experiment
/// and device met twice is kept once (the first folder wins).
pub fn load_dirs(dirs: &[PathBuf]) -> Result<Vec<ExperimentRecord>, BadInput> {
    let mut records: Vec<ExperimentRecord> = Vec::new();
    for dir in dirs {
        let json_in = |dir: &Path| -> Result<Vec<PathBuf>, BadInput> {
            let entries = std::fs::read_dir(dir).map_err(|e| BadInput::Unreadable {
                path: dir.to_path_buf(),
                reason: e.to_string(),
            })?;
            let mut paths: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            Ok(paths)
        };
        let mut files = Vec::new();
        for path in json_in(dir)? {
            if path.is_dir() {
                files.extend(json_in(&path)?.into_iter().filter(|p| is_json(p)));
            } else if is_json(&path) {
                files.push(path);
            }
        }
        if files.is_empty() {
            return Err(BadInput::NoRecords(dir.to_path_buf()));
        }
        for file in files {
            let record = ExperimentRecord::load(&file)?;
            let seen = records
                .iter()
                .any(|r| r.experiment == record.experiment && r.device.kind == record.device.kind);
            if !seen {
                records.push(record);
            }
        }
    }
    let order = |r: &ExperimentRecord| {
        let experiment = experiments::all()
            .iter()
            .position(|e| e.id() == r.experiment)
            .unwrap_or(usize::MAX);
        (
            experiment,
            r.device.kind != DeviceKind::Cpu,
            r.device.kind.name(),
        )
    };
    records.sort_by_key(|r| order(r));
    Ok(records)
}

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "json")
}
