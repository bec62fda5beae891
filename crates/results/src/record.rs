//! The record: everything one experiment's run on one device produced, as one JSON file.
//!
//! A record holds what was measured and nothing derived from it: provenance (git commit, Burn
//! version, backend, CPU, date), the device, the exact configuration of every point, its
//! readings and raw samples, its outcome, the paired comparisons' raw samples and the machine's
//! calibration. Everything a page says about them (findings, charts, headline, the estimator's
//! rows, the page's text) is derived when the guide is rendered ([`Analysed`]), so a change of
//! wording or analysis is a re-render, never a re-run. [`SCHEMA_VERSION`] changes whenever a
//! field changes meaning.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::analysis::{Analysis, Comparison};
use crate::criterion::{CriterionEstimate, EstimateSet};
use crate::device::{DeviceIdentity, DeviceKind};
use crate::error::LoadError;
use crate::memory::ProbeInfo;
use crate::paired::PairedComparison;
use crate::point::{Check, MeasuredPoint, Profile};
use crate::timing::Timing;

/// Version of the record format; records of another version are refused with a clear error.
/// 2: the page's text and guide position are in the record; metrics and traces are typed.
/// 3: paired comparisons (`comparisons`), headlines timed by one of them (`Headline::timed_by`)
/// instead of a difference of two medians.
/// 4: paired comparisons run in builds (fresh processes), their intervals over builds
/// (`PairedTiming::builds`, `Round::build`); a version 3 interval is over one process's rounds.
/// 5: a point's throughput has a unit (`PointResult::unit`: samples, or tokens for the
/// transformer, whose `samples_per_step` counts tokens); a point's model is part of its config.
/// 6: measurements only: the page's text, title, guide position, analysis and estimator rows
/// are no longer stored (they are derived at render time). A version 5 record loads with those
/// fields ignored, and is written back as version 6.
/// 7: a check names what it compared by a key and its figures (`Check::what`, `Check::params`),
/// worded by the guide; a version 5 or 6 record's sentences are read back as keys.
/// 8: a point the device cannot run names the float type it lacks (`Outcome::Unsupported::lacks`)
/// instead of the child's sentence, which an older record's reason is read back into.
/// 9: a point Burn itself refuses (`Outcome::NotInBurn`) says what was tried and Burn's error.
/// 10: a point may carry what held its step's peak, by the code that made it
/// (`PointResult::attribution`).
/// 11: a paired comparison may run its arms as one model taking turns
/// (`Interleaving::OneModel`).
/// 12: a device's identity may say how CubeCL compiled and tuned its kernels
/// (`DeviceIdentity::cubecl`: the autotune level and the caches).
pub const SCHEMA_VERSION: u32 = 12;

/// The oldest version this workbench still reads.
pub const OLDEST_READABLE_VERSION: u32 = 5;

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
    /// The command line of the run (records made before it was kept have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_line: Option<String>,
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
    /// The device as its driver names it (GPU name, driver, total memory).
    #[serde(default)]
    pub identity: Option<DeviceIdentity>,
}

/// The machine's own speed, measured on the device at the start of the run, so that step times
/// from two machines can be set side by side: an f32 matmul's rate and an element-wise copy's
/// bandwidth, each the median of its repeats after a warm-up, in a process of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Side of the square f32 matrices multiplied (`2 n^3` floating-point operations).
    pub matmul_n: usize,
    /// Time of one multiplication.
    pub matmul: Timing,
    /// `2 n^3 / matmul.median_s / 1e9`.
    pub matmul_gflop_s: f64,
    /// Bytes of the f32 tensor an element-wise add reads (and as many written).
    pub copy_bytes: u64,
    /// Time of one element-wise add of a scalar into a new tensor.
    pub copy: Timing,
    /// Bytes read and written per second: `2 copy_bytes / copy.median_s / 1e9`.
    pub copy_gb_s: f64,
    /// Whether each add's output was held until the device had synchronised; `None` in records
    /// made before the workbench said: a backend that fuses element-wise work (CubeCL's) may
    /// have skipped an add whose output was dropped first, and read rates above its memory's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_output_held: Option<bool>,
}

impl Calibration {
    /// The add's bandwidth in GB/s where it measured work that ran: always on the CPU, whose
    /// backend runs each operation as it is called; on a device only where the output was
    /// held ([`Self::copy_output_held`]).
    pub fn copy_gb_s_if_ran(&self, device: DeviceKind) -> Option<f64> {
        (self.copy_output_held == Some(true) || device == DeviceKind::Cpu).then_some(self.copy_gb_s)
    }
}

/// The text of a technique's page (its technique's constants, read at render time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageText {
    /// What the technique does, in two or three sentences.
    pub explanation: String,
    /// What to change to apply the technique, in one imperative sentence (the landing page's
    /// fix).
    pub fix: String,
    /// What the technique, or its measurement, means on wgpu and CUDA.
    pub on_devices: String,
    /// The Burn 0.22 code applying it (compiled in the `experiments` crate).
    pub snippet: String,
}

/// Everything one experiment run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRecord {
    /// [`SCHEMA_VERSION`] at the time of writing.
    pub schema_version: u32,
    /// Experiment id.
    pub experiment: String,
    /// `quick` or `full`.
    pub profile: Profile,
    /// Where and with what.
    pub provenance: Provenance,
    /// The device.
    pub device: DeviceInfo,
    /// The machine's matmul rate and copy bandwidth, measured at the start of the run.
    #[serde(default)]
    pub calibration: Option<Calibration>,
    /// Wall time of the whole experiment, child processes included.
    pub wall_s: f64,
    /// Every point, measured or failed, in the order run.
    pub points: Vec<MeasuredPoint>,
    /// The comparisons the guide states, each timed in pairs.
    #[serde(default)]
    pub comparisons: Vec<PairedComparison>,
    /// Criterion's estimates of the same points' steps (`workbench render --criterion`), where
    /// the benches were run at the same sizes on the same device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criterion: Vec<CriterionEstimate>,
    /// Why the record holds fewer points than planned (the run was interrupted); `None` for a
    /// complete record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Where the record joins runs (`run --resume`): the points and comparisons kept from an
    /// earlier run, and those its journal held that were measured again, and why; `None` for a
    /// record measured in one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed: Option<Resumed>,
}

/// How a resumed run made a record: what it kept from earlier runs' journals, by run, and what
/// it measured again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resumed {
    /// When this run started (RFC 3339, UTC): it measured every point not listed in `kept`.
    pub run_started_at: String,
    /// What was kept, by the run that measured it.
    pub kept: Vec<KeptFromRun>,
    /// Points or comparisons the journal held that were measured again, and why.
    pub measured_again: Vec<MeasuredAgain>,
}

/// Points and comparisons an earlier run measured and a resumed run kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeptFromRun {
    /// When that run started (RFC 3339, UTC).
    pub run_started_at: String,
    /// The git commit of the binary that measured them.
    pub git_commit: String,
    /// The ids of the points kept.
    pub points: Vec<String>,
    /// The comparisons kept, as `baseline vs technique` ids.
    pub comparisons: Vec<String>,
}

/// A point (or comparison) of a journal that a resumed run measured again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredAgain {
    /// The point's id (or `baseline vs technique`).
    pub id: String,
    /// Why the journal's entry was not kept (another configuration, device, profile or
    /// version; or it had failed).
    pub reason: String,
}

impl ExperimentRecord {
    /// Points that failed (not those the device cannot run or that ran out of memory: those
    /// are answers).
    pub fn failed_points(&self) -> usize {
        self.points
            .iter()
            .filter(|p| p.outcome.is_failure())
            .count()
    }

    /// Where the record goes in a guide's `data/` folder: `<id>.json` for the CPU,
    /// `<device>/<id>.json` for a device result set.
    pub fn data_file(&self) -> String {
        let file = format!("{}.json", self.experiment);
        match self.device.kind.subfolder() {
            None => file,
            Some(folder) => format!("{folder}/{file}"),
        }
    }

    /// The record's path in a guide: `data/` and [`Self::data_file`].
    pub fn data_path(&self) -> String {
        format!("data/{}", self.data_file())
    }

    /// The record as pretty JSON, as it is written to disk.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("records serialise") + "\n"
    }

    /// Reads one record, refusing malformed JSON and other schema versions.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        Self::parse(&text, path)
    }

    /// Parses one record's text as [`Self::load`] reads it (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self, LoadError> {
        let mut record: Self = parse_versioned(
            text,
            path,
            OLDEST_READABLE_VERSION..=SCHEMA_VERSION,
            |value, version| {
                if version == 5 {
                    probes_from_v5(value);
                }
                if version <= 6 {
                    checks_from_v6(value);
                }
                if version <= 7 {
                    unsupported_from_v7(value);
                }
            },
        )?;
        // An older record's derived fields are ignored while parsing: what is left is the same
        // measurement in this version's form.
        record.schema_version = SCHEMA_VERSION;
        Ok(record)
    }

    /// Attaches each set of criterion's estimates to the record of the same experiment,
    /// device and profile, replacing the estimates it carried. Returns the sets no record
    /// matched.
    pub fn attach_estimates(records: &mut [Self], sets: Vec<EstimateSet>) -> Vec<EstimateSet> {
        let mut unmatched = Vec::new();
        for set in sets {
            match records.iter_mut().find(|r| {
                r.experiment == set.experiment
                    && r.device.kind == set.device
                    && r.profile == set.profile
            }) {
                Some(record) => record.criterion = set.estimates,
                None => unmatched.push(set),
            }
        }
        unmatched
    }
}

/// Version 5 described each probe in a sentence (`counts`), naming CubeCL's pool in its last
/// brackets (`... (exclusive-pages pool)`); version 6 keeps the pool alone (`pool`) and leaves
/// the words to the guide.
fn probes_from_v5(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(counts)) = map.remove("counts") {
                let pool = counts
                    .strip_suffix(" pool)")
                    .and_then(|c| c.rsplit_once('('))
                    .map(|(_, pool)| pool.to_string());
                if let Some(pool) = pool {
                    map.insert("pool".into(), pool.into());
                }
            }
            map.values_mut().for_each(probes_from_v5);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(probes_from_v5),
        _ => {}
    }
}

/// Version 7 and older kept an unsupported point's reason as the child said it (`... the device
/// has no bf16 (...)`, or `this device does not support BF16 (...)`); version 8 keeps the float
/// type alone. A reason that names no type stays whole.
fn unsupported_from_v7(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if map.get("status").and_then(|s| s.as_str()) == Some("unsupported") {
                if let Some(serde_json::Value::String(reason)) = map.remove("reason") {
                    let lacks = lacks_of_v7(&reason).unwrap_or(reason);
                    map.insert("lacks".into(), lacks.into());
                }
            }
            map.values_mut().for_each(unsupported_from_v7);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(unsupported_from_v7),
        _ => {}
    }
}

/// The float type a version 7 unsupported reason names.
fn lacks_of_v7(reason: &str) -> Option<String> {
    ["the device has no ", "does not support "]
        .iter()
        .find_map(|mark| reason.rsplit_once(mark))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .map(str::to_ascii_lowercase)
}

/// Version 6 and older said what each check compared in a sentence; version 7 keeps a key and
/// the figures it quotes. A sentence this reader does not know stays as it was.
fn checks_from_v6(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if let (Some(serde_json::Value::String(what)), true) =
                (map.get("what"), map.contains_key("max_rel_diff"))
            {
                if let Some((key, params)) = check_key_of_v6(what) {
                    map.insert("what".into(), key.into());
                    if !params.is_empty() {
                        map.insert("params".into(), serde_json::json!(params));
                    }
                }
            }
            map.values_mut().for_each(checks_from_v6);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(checks_from_v6),
        _ => {}
    }
}

/// The key and figures of a version 6 check's sentence.
fn check_key_of_v6(
    what: &str,
) -> Option<(
    &'static str,
    std::collections::BTreeMap<&'static str, String>,
)> {
    let fixed = [
        (
            "output against the same computation on the host (f64)",
            "host-f64-output",
        ),
        (
            "values against the same operation on the host",
            "host-op-values",
        ),
        (
            "outputs of valid() against the autodiff backend",
            "valid-against-autodiff",
        ),
        (
            "parameter gradients with checkpointing against without",
            "gradients-checkpointed",
        ),
        (
            "update of one SGD training step (the gradient), k micro-batches against one batch",
            "sgd-update-micro-batches",
        ),
        (
            "parameters after one Adam training step, k micro-batches against one batch",
            "adam-params-micro-batches",
        ),
    ];
    if let Some((_, key)) = fixed.iter().find(|(text, _)| *text == what) {
        return Some((key, Default::default()));
    }
    let one = |name: &'static str, value: &str| {
        std::collections::BTreeMap::from([(name, value.to_string())])
    };
    if what.starts_with("outputs against f32 weights' on the same input") {
        return Some(("quantized-outputs", Default::default()));
    }
    if let Some(steps) = what
        .strip_prefix("parameters after ")
        .and_then(|r| r.strip_suffix(" steps, the optimizer on the host against on the device"))
    {
        return Some(("offloaded-params", one("steps", steps)));
    }
    if let Some(steps) = what
        .strip_prefix("the ")
        .and_then(|r| r.strip_suffix(" losses of a run from the point's seed are finite"))
    {
        return Some(("finite-losses", one("steps", steps)));
    }
    if let Some(steps) = what
        .strip_prefix("loss after ")
        .and_then(|r| r.strip_suffix(" steps below the first step's (last / first, held below 1)"))
    {
        return Some(("loss-falls", one("steps", steps)));
    }
    let (precision, rest) = what.split_once(" against f32, mean of the last ")?;
    let (last, rest) = rest.split_once(" losses paired by seed over ")?;
    let seeds = rest.strip_suffix(" seeds (tolerance: f32's spread across the seeds)")?;
    Some((
        "seed-study",
        std::collections::BTreeMap::from([
            ("precision", precision.to_string()),
            ("last", last.to_string()),
            ("seeds", seeds.to_string()),
        ]),
    ))
}

/// Loads every `*.json` record of a results folder (see [`load_dirs`]).
pub fn load_dir(dir: &Path) -> Result<Vec<ExperimentRecord>, LoadError> {
    load_dirs(&[dir.to_path_buf()])
}

/// Loads the records of several results folders (each a guide's `data/`, whose subfolders hold
/// device result sets), by experiment id, CPU before the devices (the guide's order is the
/// registry's, applied by [`Analysed::sort_for_guide`]); a record of the same experiment and
/// device met twice is kept once (the first folder wins).
pub fn load_dirs(dirs: &[PathBuf]) -> Result<Vec<ExperimentRecord>, LoadError> {
    let mut records: Vec<ExperimentRecord> = Vec::new();
    for dir in dirs {
        let mut files = Vec::new();
        for path in entries(dir)? {
            if path.is_dir() {
                files.extend(entries(&path)?.into_iter().filter(|p| is_json(p)));
            } else if is_json(&path)
                && path.file_name() != Some(std::ffi::OsStr::new(crate::CAPACITY_FILE))
            {
                files.push(path);
            }
        }
        if files.is_empty() {
            return Err(LoadError::NoRecords(dir.to_path_buf()));
        }
        // (record, file) of this folder, checked for mixed devices and duplicates, folder by
        // folder (the given one, and each subfolder).
        let mut loaded: Vec<(ExperimentRecord, PathBuf)> = Vec::new();
        for file in files {
            let record = ExperimentRecord::load(&file)?;
            let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
            for (other, other_file) in loaded.iter().filter(|(_, f)| f.parent() == Some(&folder)) {
                if other.device.kind != record.device.kind {
                    return Err(LoadError::MixedDevices {
                        first: other_file.clone(),
                        first_device: other.device.kind.name(),
                        other: file,
                        other_device: record.device.kind.name(),
                    });
                }
                if other.experiment == record.experiment {
                    return Err(LoadError::DuplicateRecord {
                        experiment: record.experiment.clone(),
                        device: record.device.kind.name(),
                        first: other_file.clone(),
                        other: file,
                    });
                }
            }
            loaded.push((record, file));
        }
        for (record, _) in loaded {
            let seen = records
                .iter()
                .any(|r| r.experiment == record.experiment && r.device.kind == record.device.kind);
            if !seen {
                records.push(record);
            }
        }
    }
    records.sort_by(|a, b| device_order(a).cmp(&device_order(b)));
    Ok(records)
}

/// A record's experiment, then the CPU before the devices.
fn device_order(r: &ExperimentRecord) -> (&str, bool, &'static str) {
    (
        &r.experiment,
        r.device.kind != DeviceKind::Cpu,
        r.device.kind.name(),
    )
}

/// A record with what the guide derives from it when it renders: its technique's title, page
/// text and place in the guide, the technique's analysis of its points and the estimator's
/// rows. Made by the application (which knows the techniques) and read by the guide (which
/// knows none); it reads as its record for everything measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysed<S = String> {
    /// What was measured.
    pub record: ExperimentRecord,
    /// The technique's page title.
    pub title: String,
    /// The technique's position in the guide (0 first).
    pub guide_position: usize,
    /// The technique's page text.
    pub page: PageText,
    /// What the technique concludes from the record's points and comparisons.
    pub analysis: Analysis<S>,
    /// The estimator (`workbench estimate`) beside every measured training step of the record:
    /// the step peak its rules predict for the point's model, batch and techniques, against
    /// the point's measured peak (a bracket on CubeCL). Empty where no training step is
    /// measured.
    pub estimator: Vec<Comparison<S>>,
    /// Checks that set one point's readings against another's (the same step's gradients
    /// under two fixes), computed when the guide renders: each joins its point's own checks
    /// wherever checks are shown ([`Analysed::checks_of`]), and never the record.
    pub derived_checks: Vec<PointCheck>,
}

/// A check of one point computed from the record's readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointCheck {
    /// The point's id.
    pub point: String,
    /// The check.
    pub check: Check,
}

impl PointCheck {
    /// The checks of `derived` made on the point `id`.
    pub fn on<'a>(derived: &'a [PointCheck], id: &'a str) -> impl Iterator<Item = &'a Check> + 'a {
        derived
            .iter()
            .filter(move |d| d.point == id)
            .map(|d| &d.check)
    }
}

impl<S> std::ops::Deref for Analysed<S> {
    type Target = ExperimentRecord;

    fn deref(&self) -> &ExperimentRecord {
        &self.record
    }
}

impl<S> Analysed<S> {
    /// Every check of the point `id`: those its own run recorded, then those derived from the
    /// record's readings.
    pub fn checks_of<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Check> + 'a {
        let own = self
            .record
            .points
            .iter()
            .filter(move |p| p.point.id == id)
            .filter_map(|p| p.result())
            .flat_map(|r| r.checks.iter());
        own.chain(PointCheck::on(&self.derived_checks, id))
    }

    /// Puts `records` in the guide's order: the technique's position, then the CPU before the
    /// devices.
    pub fn sort_for_guide(records: &mut [Self]) {
        records.sort_by(|a, b| {
            (a.guide_position, device_order(a)).cmp(&(b.guide_position, device_order(b)))
        });
    }
}

/// The entries of a folder, sorted.
fn entries(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LoadError::Unreadable {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    Ok(paths)
}

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "json")
}

/// Parses the text of a versioned JSON file read from `path` (named in errors), `migrate` given
/// the JSON and its version before it is read as `T`: malformed JSON, a missing or other schema
/// version and a field of the wrong type are errors, never a panic.
pub(crate) fn parse_versioned<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &Path,
    versions: std::ops::RangeInclusive<u32>,
    migrate: impl FnOnce(&mut serde_json::Value, u64),
) -> Result<T, LoadError> {
    let malformed = |reason: String| LoadError::MalformedRecord {
        path: path.to_path_buf(),
        reason,
    };
    let mut value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    let (first, last) = (*versions.start(), *versions.end());
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if (first as u64..=last as u64).contains(&v) => migrate(&mut value, v),
        Some(v) => {
            let reads = if first == last {
                first.to_string()
            } else {
                format!("{first} to {last}")
            };
            return Err(malformed(format!(
                "schema version {v}, this workbench reads {reads}"
            )));
        }
        None => {
            return Err(malformed(
                "no schema_version field: not a workbench record".into(),
            ))
        }
    }
    serde_json::from_value(value).map_err(|e| malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::{check_key_of_v6, lacks_of_v7, Calibration};
    use crate::DeviceKind;

    #[test]
    fn a_device_s_add_rate_timed_with_its_output_dropped_is_not_trusted() {
        // A record written before the add's output was held has no such field.
        let old: Calibration = serde_json::from_str(
            r#"{"matmul_n": 2, "matmul": {"samples_s": [1.0], "median_s": 1.0, "min_s": 1.0,
                "max_s": 1.0, "mad_s": 0.0}, "matmul_gflop_s": 1.0, "copy_bytes": 8,
                "copy": {"samples_s": [1.0], "median_s": 1.0, "min_s": 1.0, "max_s": 1.0,
                "mad_s": 0.0}, "copy_gb_s": 425.0}"#,
        )
        .unwrap();
        assert_eq!(old.copy_output_held, None);
        assert_eq!(old.copy_gb_s_if_ran(DeviceKind::Wgpu), None);
        assert_eq!(old.copy_gb_s_if_ran(DeviceKind::Cuda), None);
        // The CPU backend runs each add as it is called: its rate stands.
        assert_eq!(old.copy_gb_s_if_ran(DeviceKind::Cpu), Some(425.0));
        let held = Calibration {
            copy_output_held: Some(true),
            ..old
        };
        assert_eq!(held.copy_gb_s_if_ran(DeviceKind::Cuda), Some(425.0));
    }

    #[test]
    fn a_version_7_unsupported_reason_reads_back_as_the_type_it_lacks() {
        assert_eq!(
            lacks_of_v7(
                "quantization: bf16: not supported on this device: the device has no bf16 \
                 (BF16: its Backend::dtype_usage lacks storage or arithmetic)"
            )
            .as_deref(),
            Some("bf16")
        );
        assert_eq!(
            lacks_of_v7("this device does not support BF16 (Backend::supports_dtype)").as_deref(),
            Some("bf16")
        );
        assert_eq!(lacks_of_v7("it crashed"), None);
    }

    #[test]
    fn a_version_6_check_sentence_reads_back_as_its_key_and_figures() {
        let key = |what: &str| check_key_of_v6(what).map(|(k, p)| (k, p.into_iter().collect()));
        assert_eq!(
            key("values against the same operation on the host"),
            Some(("host-op-values", Vec::new()))
        );
        assert_eq!(
            key("loss after 30 steps below the first step's (last / first, held below 1)"),
            Some(("loss-falls", vec![("steps", "30".to_string())]))
        );
        assert_eq!(
            key(
                "mixed bf16 (f32 master) against f32, mean of the last 20 losses paired by seed \
                 over 5 seeds (tolerance: f32's spread across the seeds)"
            ),
            Some((
                "seed-study",
                vec![
                    ("last", "20".to_string()),
                    ("precision", "mixed bf16 (f32 master)".to_string()),
                    ("seeds", "5".to_string()),
                ]
            ))
        );
        assert_eq!(key("a sentence no version wrote"), None);
    }
}
