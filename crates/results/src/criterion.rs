//! Criterion's estimates, read from its output folder (`target/criterion`), to be attached to
//! the records of the same experiment, device and sizes, so that each page can set criterion's
//! statistics beside the workbench's own step times.
//!
//! The benches (`benches/techniques.rs`) time the very step of an experiment's point and write
//! the point beside criterion's results (`workbench-point.json`, a [`Sidecar`]); that file is
//! what marks a criterion folder as one of ours and what lets the configuration be compared.
//! Criterion's own files are read as it writes them: `new/estimates.json` (statistics of the
//! time of one iteration, in nanoseconds) and `new/sample.json` (the raw samples).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::DeviceKind;
use crate::error::LoadError;
use crate::point::{Point, Profile};

/// The file the benches write beside criterion's results of each benchmark.
pub const SIDECAR: &str = "workbench-point.json";

/// Criterion's estimate of one benchmark: the time of one step of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionEstimate {
    /// The benchmark's id (`checkpointing/balanced-depth-32/cpu-full`).
    pub benchmark: String,
    /// The point criterion timed, as the bench built it (its repeats are the bench's own).
    pub point: Point,
    /// Mean time of one step.
    pub mean_s: f64,
    /// Lower bound of the mean's confidence interval.
    pub mean_lower_s: f64,
    /// Upper bound of the mean's confidence interval.
    pub mean_upper_s: f64,
    /// The interval's confidence level (criterion's default: 0.95).
    pub confidence_level: f64,
    /// Median of the samples' per-step times.
    pub median_s: f64,
    /// Standard deviation of the samples' per-step times.
    pub std_dev_s: f64,
    /// Samples criterion took.
    pub samples: usize,
    /// Steps run over all samples.
    pub iterations: u64,
    /// Samples (of the training batch) per step, as declared to criterion.
    pub samples_per_step: u64,
}

impl CriterionEstimate {
    /// Samples processed per second at the mean step time.
    pub fn samples_per_s(&self) -> f64 {
        self.samples_per_step as f64 / self.mean_s
    }
}

/// The [`SIDECAR`] file: which experiment, device and sizes a benchmark belongs to, and the
/// point benchmarked. The benches write it, `load` reads it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Sidecar {
    /// Experiment id.
    pub experiment: String,
    /// The device benchmarked.
    pub device: DeviceKind,
    /// The sizes.
    pub profile: Profile,
    /// The point, as the bench ran it.
    pub point: Point,
}

/// One statistic of criterion's `estimates.json`.
#[derive(Debug, Deserialize)]
struct Estimate {
    confidence_interval: Interval,
    point_estimate: f64,
}

#[derive(Debug, Deserialize)]
struct Interval {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Debug, Deserialize)]
struct Estimates {
    mean: Estimate,
    median: Estimate,
    std_dev: Estimate,
}

#[derive(Debug, Deserialize)]
struct Sample {
    iters: Vec<f64>,
}

#[derive(Debug, Deserialize)]
struct BenchmarkInfo {
    full_id: String,
    throughput: Option<Throughput>,
}

#[derive(Debug, Deserialize)]
enum Throughput {
    Elements(u64),
    #[serde(other)]
    Other,
}

/// Criterion's estimates of one experiment, device and profile, as found in a criterion folder.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateSet {
    /// Experiment id.
    pub experiment: String,
    /// The device the benches ran on.
    pub device: DeviceKind,
    /// The sizes.
    pub profile: Profile,
    /// One estimate per benchmarked point.
    pub estimates: Vec<CriterionEstimate>,
}

/// Reads every benchmark of the workbench's benches under `dir` (criterion's output folder).
pub fn load(dir: &Path) -> Result<Vec<EstimateSet>, LoadError> {
    if !dir.is_dir() {
        return Err(LoadError::Unreadable {
            path: dir.to_path_buf(),
            reason: "not a folder (criterion writes to target/criterion: run `cargo bench` first)"
                .into(),
        });
    }
    let mut sidecars = Vec::new();
    find_sidecars(dir, 0, &mut sidecars)?;
    if sidecars.is_empty() {
        return Err(LoadError::NoEstimates(dir.to_path_buf()));
    }
    sidecars.sort();
    let mut sets: Vec<EstimateSet> = Vec::new();
    for path in sidecars {
        let bench_dir = path.parent().expect("a sidecar is inside a folder");
        let sidecar: Sidecar = read_json(&path)?;
        let estimates: Estimates = read_json(&bench_dir.join("new/estimates.json"))?;
        let sample: Sample = read_json(&bench_dir.join("new/sample.json"))?;
        let info: BenchmarkInfo = read_json(&bench_dir.join("new/benchmark.json"))?;
        let ns = 1e-9;
        let estimate = CriterionEstimate {
            benchmark: info.full_id,
            point: sidecar.point,
            mean_s: estimates.mean.point_estimate * ns,
            mean_lower_s: estimates.mean.confidence_interval.lower_bound * ns,
            mean_upper_s: estimates.mean.confidence_interval.upper_bound * ns,
            confidence_level: estimates.mean.confidence_interval.confidence_level,
            median_s: estimates.median.point_estimate * ns,
            std_dev_s: estimates.std_dev.point_estimate * ns,
            samples: sample.iters.len(),
            iterations: sample.iters.iter().sum::<f64>() as u64,
            samples_per_step: match info.throughput {
                Some(Throughput::Elements(n)) => n,
                _ => 0,
            },
        };
        let key = |s: &EstimateSet| {
            s.experiment == sidecar.experiment
                && s.device == sidecar.device
                && s.profile == sidecar.profile
        };
        match sets.iter_mut().find(|s| key(s)) {
            Some(set) => set.estimates.push(estimate),
            None => sets.push(EstimateSet {
                experiment: sidecar.experiment,
                device: sidecar.device,
                profile: sidecar.profile,
                estimates: vec![estimate],
            }),
        }
    }
    Ok(sets)
}

/// Criterion's layout is `<group>/<function>/<parameter>/`; the sidecar sits in the last.
fn find_sidecars(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LoadError::Unreadable {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() && depth < 3 {
            find_sidecars(&path, depth + 1, out)?;
        } else if path.file_name().is_some_and(|n| n == SIDECAR) {
            out.push(path);
        }
    }
    Ok(())
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| LoadError::MalformedEstimate {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}
