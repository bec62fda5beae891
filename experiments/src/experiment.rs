//! The `Experiment` trait and the data it exchanges with the runner and the report.
//!
//! An experiment declares its points for a profile, measures one point at a time (the runner
//! calls [`Experiment::run_point`] in a fresh child process), and turns the measured points into
//! an [`Analysis`]: fits, predictions set beside measurements, charts as data, and a headline.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::backend::FloatStorage;
use crate::device::DeviceKind;
use crate::fit::LinearFit;
use crate::probe::{PhaseMemory, ProbeInfo};
use crate::timing::Timing;

/// How large the points are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Small sizes for CI and first looks: seconds per experiment.
    Quick,
    /// The sizes the committed guide is built from.
    Full,
}

impl Profile {
    /// Lower-case name, as in the CLI and the records.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
        }
    }
}

/// The sizes an experiment's points are built at, from the profile and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizes {
    /// The quick profile, on any device.
    Quick,
    /// The full profile on the CPU (and on wgpu).
    Full,
    /// The full profile on CUDA: sizes that fill a large GPU far more, still within minutes.
    Gpu,
}

impl Sizes {
    /// The sizes of `profile` on `device`.
    pub fn of(profile: Profile, device: DeviceKind) -> Self {
        match (profile, device) {
            (Profile::Quick, _) => Sizes::Quick,
            (Profile::Full, DeviceKind::Cuda) => Sizes::Gpu,
            (Profile::Full, _) => Sizes::Full,
        }
    }
}

/// One configuration to measure, sent to the child process as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Unique within the experiment, kebab-case (`batch-64`, `valid-batch-256`).
    pub id: String,
    /// What a reader sees (`batch 64`).
    pub label: String,
    /// Untimed steps before the measured ones.
    pub warmup: usize,
    /// Measured steps.
    pub repeats: usize,
    /// The experiment's own configuration of this point.
    pub config: serde_json::Value,
}

/// Outcome of an experiment's correctness check on one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was compared, in words.
    pub what: String,
    /// Largest absolute difference found.
    pub max_abs_diff: f64,
    /// Largest difference relative to the reference's magnitude.
    pub max_rel_diff: f64,
    /// The tolerance `max_rel_diff` was held to.
    pub tolerance: f64,
    /// Whether `max_rel_diff <= tolerance`.
    pub passed: bool,
}

impl Check {
    /// Compares `candidate` with `reference` element-wise. The relative difference divides by the
    /// largest magnitude in the reference, so that values near zero do not blow it up.
    pub fn compare(what: &str, reference: &[f32], candidate: &[f32], tolerance: f64) -> Self {
        let scale = reference
            .iter()
            .map(|v| v.abs() as f64)
            .fold(0.0_f64, f64::max)
            .max(f64::MIN_POSITIVE);
        let mut max_abs_diff = if reference.len() == candidate.len() {
            0.0_f64
        } else {
            f64::INFINITY
        };
        for (r, c) in reference.iter().zip(candidate) {
            let d = (*r as f64 - *c as f64).abs();
            max_abs_diff = if d.is_nan() {
                f64::INFINITY
            } else {
                max_abs_diff.max(d)
            };
        }
        let max_rel_diff = max_abs_diff / scale;
        Self {
            what: what.to_string(),
            max_abs_diff,
            max_rel_diff,
            tolerance,
            passed: max_rel_diff <= tolerance,
        }
    }
}

/// What one point measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// What the memory figures count.
    pub probe: ProbeInfo,
    /// Per-phase memory of the measured step (the highest over repeats).
    pub phases: Vec<PhaseMemory>,
    /// Time of one measured step (or pass), with raw samples.
    pub step: Timing,
    /// Samples processed per step.
    pub samples_per_step: u64,
    /// `samples_per_step / step.median_s`.
    pub samples_per_s: f64,
    /// Further measured figures, named with their unit (`param_bytes`, `graph_growth_bytes`).
    pub metrics: BTreeMap<String, f64>,
    /// Sequences measured within the point, one value per pass or repeat, named with their unit
    /// (`retained_bytes_by_pass`).
    pub traces: BTreeMap<String, Vec<f64>>,
    /// The technique's proofs that it computes the same thing (empty for a sweep).
    pub checks: Vec<Check>,
}

impl PointResult {
    /// The phase named `name`.
    pub fn phase(&self, name: &str) -> Option<&PhaseMemory> {
        self.phases.iter().find(|p| p.phase == name)
    }

    /// Highest peak over all phases: the step's high-water mark.
    pub fn peak_bytes(&self) -> u64 {
        self.phases.iter().map(|p| p.peak_bytes).max().unwrap_or(0)
    }

    /// A named metric, or NaN when absent.
    pub fn metric(&self, name: &str) -> f64 {
        self.metrics.get(name).copied().unwrap_or(f64::NAN)
    }
}

/// A point together with its result, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredPoint {
    /// The configuration.
    pub point: Point,
    /// The measurement, or the failure of the child process.
    pub outcome: Outcome,
}

/// Result of running one point in a child process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// The child printed a result and exited 0.
    Measured {
        /// What it measured.
        result: Box<PointResult>,
        /// Wall time of the child process, start-up included.
        wall_s: f64,
    },
    /// The child crashed, timed out or printed no valid result.
    Failed {
        /// What went wrong, in one line.
        reason: String,
        /// The last lines the child wrote to stderr.
        stderr_tail: String,
    },
}

impl MeasuredPoint {
    /// The result, where the point was measured.
    pub fn result(&self) -> Option<&PointResult> {
        match &self.outcome {
            Outcome::Measured { result, .. } => Some(result),
            Outcome::Failed { .. } => None,
        }
    }

    /// The point's config deserialised into an experiment's own type.
    pub fn config<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.point.config.clone()).ok()
    }
}

/// The check with the largest relative difference over all measured points, described in one
/// sentence for the headline.
pub fn worst_check(points: &[MeasuredPoint]) -> String {
    let mut by_what: Vec<&Check> = Vec::new();
    for check in points
        .iter()
        .filter_map(|p| p.result())
        .flat_map(|r| r.checks.iter())
    {
        match by_what.iter_mut().find(|c| c.what == check.what) {
            Some(worst) if check.max_rel_diff > worst.max_rel_diff => *worst = check,
            Some(_) => {}
            None => by_what.push(check),
        }
    }
    if by_what.is_empty() {
        return "no check ran".into();
    }
    by_what
        .iter()
        .map(|c| {
            format!(
                "{}: largest difference {:.3e} (relative {:.3e}, tolerance {:.0e}){}",
                c.what,
                c.max_abs_diff,
                c.max_rel_diff,
                c.tolerance,
                if c.passed { "" } else { ", FAILED" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Overall verdict of a technique's correctness checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Correctness {
    /// Every check passed.
    Passed,
    /// At least one check failed: the technique changed the result.
    Failed,
    /// The technique has nothing to compare (a sweep, not a substitute).
    NotApplicable,
    /// No point could be checked (all failed to run).
    Unknown,
}

impl Correctness {
    /// Combines the checks of all measured points.
    pub fn of(points: &[MeasuredPoint]) -> Self {
        let checks: Vec<&Check> = points
            .iter()
            .filter_map(|p| p.result())
            .flat_map(|r| r.checks.iter())
            .collect();
        if checks.is_empty() {
            if points.iter().any(|p| p.result().is_some()) {
                Correctness::NotApplicable
            } else {
                Correctness::Unknown
            }
        } else if checks.iter().all(|c| c.passed) {
            Correctness::Passed
        } else {
            Correctness::Failed
        }
    }
}

/// The one-row summary of a technique for the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    /// Which configurations the two figures below compare, in words.
    pub compared: String,
    /// Peak bytes saved by the technique (baseline minus technique; negative means it costs).
    pub memory_saved_bytes: Option<f64>,
    /// The same as a percentage of the baseline's peak.
    pub memory_saved_pct: Option<f64>,
    /// Throughput lost, as a percentage of the baseline's samples/s (negative: it is faster).
    pub throughput_cost_pct: Option<f64>,
    /// Verdict of the correctness checks.
    pub correctness: Correctness,
    /// One sentence on what the checks found.
    pub correctness_detail: String,
}

/// Axis scale of a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Powers of two evenly spaced (batch sizes, depths).
    Log2,
}

/// One measured value on a chart, with its spread where it has one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartPoint {
    /// Position on the x axis.
    pub x: f64,
    /// Position on the y axis.
    pub y: f64,
    /// Lower end of the spread (e.g. the fastest repeat), drawn as an error bar.
    pub y_low: Option<f64>,
    /// Upper end of the spread.
    pub y_high: Option<f64>,
}

/// A named line on a chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Points in x order.
    pub points: Vec<ChartPoint>,
    /// Drawn dashed without markers: a prediction or a fit rather than a measurement.
    pub predicted: bool,
}

impl Series {
    /// A series of plain `(x, y)` points, without spread.
    pub fn line(name: &str, predicted: bool, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            predicted,
            points: points
                .into_iter()
                .map(|(x, y)| ChartPoint {
                    x,
                    y,
                    y_low: None,
                    y_high: None,
                })
                .collect(),
        }
    }

    /// Throughput of measured points with the fastest and slowest repeat as the spread.
    pub fn throughput<'a>(
        name: &str,
        points: impl IntoIterator<Item = (f64, &'a PointResult)>,
    ) -> Self {
        Self {
            name: name.into(),
            predicted: false,
            points: points
                .into_iter()
                .map(|(x, r)| {
                    let samples = r.samples_per_step as f64;
                    ChartPoint {
                        x,
                        y: r.samples_per_s,
                        y_low: Some(samples / r.step.max_s),
                        y_high: Some(samples / r.step.min_s),
                    }
                })
                .collect(),
        }
    }
}

/// A chart as data; the report turns it into SVG.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// Anchor and file name (`peak-vs-batch`).
    pub id: String,
    /// Title drawn above the chart.
    pub title: String,
    /// x-axis label, with unit.
    pub x_label: String,
    /// y-axis label, with unit.
    pub y_label: String,
    /// x-axis scale.
    pub x_scale: Scale,
    /// The lines.
    pub series: Vec<Series>,
}

/// A figure predicted from shapes and dtypes, beside the measured one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What is compared (`Adam state`, `activations per sample`).
    pub quantity: String,
    /// The prediction, in bytes.
    pub predicted_bytes: f64,
    /// The measurement, in bytes.
    pub measured_bytes: f64,
    /// How the prediction was made, and why it may differ.
    pub note: String,
}

/// A fitted line reported on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportedFit {
    /// What was fitted, with units (`forward activation bytes against batch size`).
    pub what: String,
    /// The fit.
    pub fit: LinearFit,
}

/// A published figure on the same technique, set beside ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedFigure {
    /// Who published it, and where.
    pub source: String,
    /// What they report.
    pub claim: String,
    /// Our figure on the same question, from this run, in words.
    pub ours: String,
}

/// Everything an experiment concludes from its measured points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The index row.
    pub headline: Headline,
    /// Sentences stating what the measurements show, each quoting its figures.
    pub findings: Vec<String>,
    /// Predictions beside measurements.
    pub comparisons: Vec<Comparison>,
    /// Fitted lines.
    pub fits: Vec<ReportedFit>,
    /// Charts, as data.
    pub charts: Vec<Chart>,
    /// Published figures beside ours.
    pub published: Vec<PublishedFigure>,
}

impl Analysis {
    /// The analysis of an experiment none of whose points was measured.
    pub fn unmeasured(correctness: Correctness) -> Self {
        Self {
            headline: Headline {
                compared: "no point was measured".into(),
                memory_saved_bytes: None,
                memory_saved_pct: None,
                throughput_cost_pct: None,
                correctness,
                correctness_detail: "no measurement".into(),
            },
            findings: vec![],
            comparisons: vec![],
            fits: vec![],
            charts: vec![],
            published: vec![],
        }
    }
}

/// Errors of a measurement.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// The point's configuration does not fit the experiment.
    #[error("bad point configuration for {experiment}: {source}")]
    BadConfig {
        /// Experiment id.
        experiment: &'static str,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// The device cannot be used: its backend is not built in, or there is no driver.
    #[error(transparent)]
    Driver(#[from] crate::driver::DriverError),
    /// The probe would read zeros.
    #[error(
        "the counting allocator is not this binary's global allocator: host memory cannot be measured"
    )]
    ProbeNotInstalled,
    /// The backend failed to run the work.
    #[error("backend error: {0}")]
    Backend(String),
}

/// A technique, measured.
pub trait Experiment: Sync {
    /// Kebab-case id, used in the CLI, file names and links.
    fn id(&self) -> &'static str;
    /// Page title.
    fn title(&self) -> &'static str;
    /// What the technique does, in two or three sentences.
    fn explanation(&self) -> &'static str;
    /// What the technique or its measurement means on the device backends (wgpu, CUDA), where
    /// that differs from the CPU: shown on the page beside the explanation.
    fn on_devices(&self) -> &'static str;
    /// Burn 0.21 code applying the technique, as shown on the page (compiled in `snippets`).
    fn snippet(&self) -> &'static str;
    /// The points to measure.
    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point>;
    /// Measures one point. Called in a child process, once per process.
    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError>;
    /// The float type `point` stores tensors in by default. Burn sets it once per device and
    /// process, before the first tensor, so points of different types cannot share a process:
    /// the runner gives every point its own anyway, and callers that run several points in one
    /// process (the criterion benches) group them by this.
    fn float_storage(&self, _point: &Point) -> FloatStorage {
        FloatStorage::F32
    }
    /// Conclusions from all points, failed ones included.
    fn analyse(&self, points: &[MeasuredPoint]) -> Analysis;
}

/// Parses a point's config into the experiment's own type.
pub fn parse_config<T: serde::de::DeserializeOwned>(
    experiment: &'static str,
    point: &Point,
) -> Result<T, ExperimentError> {
    serde_json::from_value(point.config.clone())
        .map_err(|source| ExperimentError::BadConfig { experiment, source })
}

#[cfg(test)]
mod tests {
    use super::Check;

    #[test]
    fn equal_values_pass() {
        let c = Check::compare("x", &[1.0, -2.0, 3.0], &[1.0, -2.0, 3.0], 0.0);
        assert!(c.passed);
        assert_eq!(c.max_abs_diff, 0.0);
    }

    #[test]
    fn a_difference_beyond_tolerance_fails() {
        let c = Check::compare("x", &[1.0, -2.0, 4.0], &[1.0, -2.0, 4.004], 1e-4);
        assert!(!c.passed);
        assert!((c.max_rel_diff - 1e-3).abs() < 1e-6, "{}", c.max_rel_diff);
    }

    #[test]
    fn nan_and_length_mismatch_fail() {
        assert!(!Check::compare("x", &[1.0], &[f32::NAN], 1.0).passed);
        assert!(!Check::compare("x", &[1.0, 2.0], &[1.0], 1.0).passed);
    }
}
