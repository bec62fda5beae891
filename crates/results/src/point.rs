//! Points: one configuration to measure, and what its child process measured.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::memory::{PhaseKey, PhaseMemory, ProbeInfo};
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

/// One configuration to measure, sent to the child process as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Unique within the experiment, kebab-case (`batch-64`, `valid-batch-256`).
    pub id: String,
    /// What a reader sees (`batch 64`): the technique's plan names it; records do not store
    /// it (render takes it from the plan by the point's id).
    #[serde(default, skip_serializing)]
    pub label: String,
    /// Untimed steps before the measured ones.
    pub warmup: usize,
    /// Measured steps.
    pub repeats: usize,
    /// The technique's own configuration of this point (its typed `Config`, as JSON).
    pub config: serde_json::Value,
}

impl Point {
    /// Whether `other` measures the same thing: the same id, warm-up, repeats and
    /// configuration (the label only names it).
    pub fn same_measurement(&self, other: &Point) -> bool {
        self.id == other.id
            && self.warmup == other.warmup
            && self.repeats == other.repeats
            && self.config == other.config
    }
}

/// Outcome of a technique's correctness check on one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was compared: a key the guide words (`host-f64-output`), with `params`.
    pub what: String,
    /// The figures and names the words of `what` quote (`steps`: `5`), by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub params: std::collections::BTreeMap<String, String>,
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
    /// The check with `value` quoted as `name` by its words.
    pub fn with(mut self, name: &str, value: impl std::fmt::Display) -> Self {
        self.params.insert(name.into(), value.to_string());
        self
    }

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
            params: std::collections::BTreeMap::new(),
            max_abs_diff,
            max_rel_diff,
            tolerance,
            passed: max_rel_diff <= tolerance,
        }
    }
}

/// A metric's key in a point's `metrics`: its name, with its unit (`activation_bytes`).
/// [`Metric`] holds the ones the harness and several techniques share; a technique declares its
/// own with [`metric_keys!`](crate::metric_keys) in its folder, so that adding one edits no
/// schema.
pub trait MetricKey: Copy {
    /// The key, in snake case.
    fn key(self) -> &'static str;
}

/// Declares an enum whose variants each name a `&'static str` (`Name = "name"`) and implements
/// `$trait` for it, the name returned by `$trait::$method`: the one shape of
/// [`metric_keys!`](crate::metric_keys) and [`phase_names!`](crate::phase_names).
#[macro_export]
macro_rules! named_variants {
    ($trait:path, $method:ident; $(#[$meta:meta])* $vis:vis enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $key:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $trait for $name {
            fn $method(self) -> &'static str {
                match self {
                    $(Self::$variant => $key,)*
                }
            }
        }
    };
}

/// Declares an enum of metric keys: each variant with its key (`Name = "name_bytes"`).
#[macro_export]
macro_rules! metric_keys {
    ($($declaration:tt)*) => {
        $crate::named_variants! { $crate::point::MetricKey, key; $($declaration)* }
    };
}

/// A point's measured figures, by key ([`MetricKey`]).
pub type Metrics = BTreeMap<String, f64>;

/// Puts a figure into [`Metrics`] under a typed key.
pub trait PutMetric {
    /// Sets `metric` to `value`.
    fn put(&mut self, metric: impl MetricKey, value: f64);
}

impl PutMetric for Metrics {
    fn put(&mut self, metric: impl MetricKey, value: f64) {
        self.insert(metric.key().to_string(), value);
    }
}

metric_keys! {
    /// The measured figures the harness and several techniques share, each named with its
    /// unit.
    pub enum Metric {
        /// Forward pass's peak above what was live before it.
        ActivationBytes = "activation_bytes",
        /// Time of one `memory_cleanup()`.
        CleanupS = "cleanup_s",
        /// Bytes an evaluation pass added at its peak.
        EvalBytes = "eval_bytes",
        /// Bytes backward leaves live: the parameter gradients.
        GradBytes = "grad_bytes",
        /// Bytes the forward pass leaves for backward (the autodiff graph).
        GraphBytes = "graph_bytes",
        /// 1 where the backend has an allocator cache, 0 where not.
        HasCache = "has_cache",
        /// Bytes held after an operation.
        HeldBytes = "held_bytes",
        /// Inputs and targets.
        InputBytes = "input_bytes",
        /// Bytes live before the measured work.
        LiveBeforeBytes = "live_before_bytes",
        /// Bytes live before the first phase of a step.
        LiveBeforeStepBytes = "live_before_step_bytes",
        /// Parameters of the model.
        NumParams = "num_params",
        /// Optimizer state (Adam's moments): what stays live after the first step.
        OptimizerStateBytes = "optimizer_state_bytes",
        /// Parameters, once materialised.
        ParamBytes = "param_bytes",
        /// Parameters right after `init()` (Burn initialises lazily).
        ParamBytesAfterInit = "param_bytes_after_init",
        /// Bytes live in the process before the model was built.
        ProcessBaselineBytes = "process_baseline_bytes",
        /// Largest difference between repeats of a phase's bytes.
        RepeatDeltaSpreadBytes = "repeat_delta_spread_bytes",
        /// Backend buffers allocated by the first pass.
        RuntimeBytes = "runtime_bytes",
        /// Floating-point operations of one step's matrix products (forward and backward).
        StepFlop = "step_flop",
        /// The measured tensor's bytes.
        TensorBytes = "tensor_bytes",
    }
}

/// A sequence measured within a point, one value per pass or step, named with its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trace {
    /// Loss after each training step.
    LossByStep,
    /// Loss scale at each training step.
    LossScaleByStep,
    /// Bytes held after each un-back-propagated pass.
    RetainedBytesByPass,
    /// Per seed: the mean of the last losses of a run in the reference precision (f32).
    SeedReferenceFinalLoss,
    /// Per seed: the same for the candidate precision, from the same initial weights.
    SeedCandidateFinalLoss,
    /// One training step's memory timeline (the CPU's counting allocator): the allocation
    /// event (an allocation or a free, counted from the step's start) of each point kept.
    MemoryTimelineEvent,
    /// The bytes in use after each of those events (each kept point is the highest or lowest
    /// of its stretch of events, so the peak is kept).
    MemoryTimelineBytes,
    /// The event at which each phase of that step began.
    MemoryTimelinePhaseStart,
    /// Each phase's kind, by the same index: 0 forward, 1 backward, 2 optimizer, 3 other.
    MemoryTimelinePhaseKind,
    /// Bytes of live tensors after each allocation of a sequence.
    InUseBytesByAllocation,
    /// Bytes the allocator's pools held after each allocation of a sequence (devices only).
    ReservedBytesByAllocation,
    /// Evenly spaced values of the first step's gradients (from the seeded weights), over
    /// every parameter in module order: what another point's same step is compared with.
    FirstStepGradientSample,
    /// Bytes in use after each step of a training loop (device synced).
    InUseBytesByStep,
    /// Each step's peak of bytes in use (exact on the CPU; the highest reading on CubeCL).
    PeakBytesByStep,
    /// Bytes the pool of the training thread's stream held after each step (CubeCL).
    ReservedBytesByStep,
    /// The process's resident set after each step (`/proc/self/statm`).
    ResidentBytesByStep,
    /// Bytes in use after each step over every pool of the device (CubeCL keeps one per
    /// stream, and a stream per thread); on the CPU, the process's heap (every thread's).
    InUseAllStreamsBytesByStep,
    /// Bytes the device's pools held after each step, every pool (CubeCL).
    ReservedAllStreamsBytesByStep,
    /// The pools read for each step's device-wide reading.
    PoolsByStep,
    /// Bytes the driver says are taken on the whole device after each step (CUDA).
    DriverUsedBytesByStep,
}

/// What a point's throughput counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// Samples (rows of a batch).
    #[default]
    Samples,
    /// Tokens (sequences times their length).
    Tokens,
}

impl Unit {
    /// The unit's plural name (`samples`, `tokens`).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Samples => "samples",
            Unit::Tokens => "tokens",
        }
    }

    /// Whether this is the default unit (left out of records).
    pub fn is_samples(&self) -> bool {
        *self == Unit::Samples
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
    /// Samples processed per step (in `unit`: tokens for a sequence model).
    pub samples_per_step: u64,
    /// `samples_per_step / step.median_s`.
    pub samples_per_s: f64,
    /// What a sample is (records before schema 5: samples).
    #[serde(default, skip_serializing_if = "Unit::is_samples")]
    pub unit: Unit,
    /// Further measured figures (a non-finite figure, such as the loss of a run that
    /// diverged, is written as JSON `null` and read back as NaN).
    #[serde(deserialize_with = "nan_map::metrics")]
    pub metrics: Metrics,
    /// Sequences measured within the point (non-finite values as for `metrics`).
    #[serde(deserialize_with = "nan_map::traces")]
    pub traces: BTreeMap<Trace, Vec<f64>>,
    /// The technique's proofs that it computes the same thing (empty for a sweep).
    pub checks: Vec<Check>,
    /// Time of each phase of the measured step (forward, backward, optimizer), over the same
    /// repeats as `step`; phases that repeat within a step (a forward per micro-batch) summed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase_times: Vec<PhaseTiming>,
    /// What held the step's peak, by the code that made it, where the point recorded it (a
    /// `peak-attribution` point on the CPU; schema 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Box<crate::PeakAttribution>>,
}

/// Time of one phase over a point's measured repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseTiming {
    /// The phase's name.
    pub phase: String,
    /// Its time per repeat, with the raw samples.
    pub timing: Timing,
}

impl PhaseTiming {
    /// The time of each phase over `runs` (one list of phases per measured repeat), phases of
    /// the same name within a run summed, in the order of their first appearance.
    pub fn of_runs(runs: &[Vec<PhaseMemory>]) -> Vec<Self> {
        let mut names: Vec<&str> = Vec::new();
        for phase in runs.iter().flatten() {
            if !names.contains(&phase.phase.as_ref()) {
                names.push(&phase.phase);
            }
        }
        names
            .into_iter()
            .map(|name| Self {
                phase: name.to_string(),
                timing: Timing::from_samples(
                    runs.iter()
                        .map(|run| {
                            run.iter()
                                .filter(|p| p.phase == name)
                                .map(|p| p.elapsed_s)
                                .sum()
                        })
                        .collect(),
                ),
            })
            .collect()
    }
}

impl PointResult {
    /// The result of `phases` and a `step` that processes `samples_per_step` samples, its rate
    /// taken at the step's median time; no metrics, traces or checks yet.
    pub fn new(
        probe: ProbeInfo,
        phases: Vec<PhaseMemory>,
        step: Timing,
        samples_per_step: u64,
    ) -> Self {
        Self {
            probe,
            phases,
            samples_per_s: step.per_second(samples_per_step as f64),
            step,
            samples_per_step,
            unit: Unit::Samples,
            metrics: BTreeMap::new(),
            traces: BTreeMap::new(),
            checks: Vec::new(),
            phase_times: Vec::new(),
            attribution: None,
        }
    }

    /// This result, its throughput counted in `unit`.
    pub fn in_unit(self, unit: Unit) -> Self {
        Self { unit, ..self }
    }

    /// The phase `phase`.
    pub fn phase(&self, phase: impl PhaseKey) -> Option<&PhaseMemory> {
        self.phase_named(phase.name())
    }

    /// The phase stored under `name` (the guide reads phases by the names the records hold).
    pub fn phase_named(&self, name: &str) -> Option<&PhaseMemory> {
        self.phases.iter().find(|p| p.phase == name)
    }

    /// Highest peak over all phases: the step's high-water mark.
    pub fn peak_bytes(&self) -> u64 {
        self.phases.iter().map(|p| p.peak_bytes).max().unwrap_or(0)
    }

    /// Where the phases were bracketed (a device), the most the step can have held at its
    /// peak: the highest upper bound over its phases. `None` where the peak is exact.
    pub fn peak_upper_bytes(&self) -> Option<u64> {
        self.phases
            .iter()
            .filter_map(|p| p.bracket.as_ref())
            .map(|b| b.upper_bytes)
            .max()
    }

    /// A metric, or NaN when the point did not measure it.
    pub fn metric(&self, metric: impl MetricKey) -> f64 {
        self.metrics.get(metric.key()).copied().unwrap_or(f64::NAN)
    }

    /// A trace, or an empty slice when the point did not measure it.
    pub fn trace(&self, trace: Trace) -> &[f64] {
        self.traces.get(&trace).map_or(&[], Vec::as_slice)
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
    /// The device cannot run the point (a float type it lacks): an answer about the device,
    /// not a failure of the run.
    Unsupported {
        /// The float type the device lacks (`bf16`), as the point names it.
        lacks: String,
    },
    /// Burn itself refused the point: a `todo!()` or `unimplemented!()` of the pinned Burn
    /// (quantized weights under autodiff). An answer about Burn, not a failure of the run.
    NotInBurn {
        /// What was tried and what Burn said, in one line.
        what: String,
    },
    /// The point ran out of memory (a host or device allocation failed): where the technique
    /// stops fitting, an outcome of a sweep, not a failure of the run.
    OutOfMemory {
        /// What failed, in one line.
        reason: String,
        /// The bytes the failed allocation asked for, where the backend says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requested_bytes: Option<u64>,
        /// The last lines the child wrote to stderr.
        stderr_tail: String,
    },
}

impl Outcome {
    /// The result, where the point was measured.
    pub fn result(&self) -> Option<&PointResult> {
        match self {
            Outcome::Measured { result, .. } => Some(result),
            _ => None,
        }
    }

    /// What happened, in a word or two, as tables and the CSV say it.
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Measured { .. } => "measured",
            Outcome::Failed { .. } => "failed",
            Outcome::Unsupported { .. } => "not supported on this device",
            Outcome::NotInBurn { .. } => "not in the Burn measured",
            Outcome::OutOfMemory { .. } => "out of memory",
        }
    }

    /// Whether the run failed to measure the point (a crash, a timeout, garbage output); a
    /// point the device cannot run or that ran out of memory is an answer, not a failure.
    pub fn is_failure(&self) -> bool {
        matches!(self, Outcome::Failed { .. })
    }

    /// Why there is no result, as the child said it (empty where there is one, and where the
    /// device lacked a float type: [`Outcome::Unsupported::lacks`] names it).
    pub fn reason(&self) -> &str {
        match self {
            Outcome::Measured { .. } | Outcome::Unsupported { .. } => "",
            Outcome::NotInBurn { what } => what,
            Outcome::Failed { reason, .. } | Outcome::OutOfMemory { reason, .. } => reason,
        }
    }

    /// The child's stderr tail, where one was kept.
    pub fn stderr_tail(&self) -> &str {
        match self {
            Outcome::Failed { stderr_tail, .. } | Outcome::OutOfMemory { stderr_tail, .. } => {
                stderr_tail
            }
            Outcome::Measured { .. } | Outcome::Unsupported { .. } | Outcome::NotInBurn { .. } => {
                ""
            }
        }
    }
}

impl MeasuredPoint {
    /// The result, where the point was measured.
    pub fn result(&self) -> Option<&PointResult> {
        self.outcome.result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_diverged_figure_survives_the_json_round_trip_as_nan() {
        let json = serde_json::json!({
            "metrics": {"activation_bytes": null},
            "traces": {"loss_by_step": [1.0, null]},
        });
        #[derive(Deserialize)]
        struct Part {
            #[serde(deserialize_with = "super::nan_map::metrics")]
            metrics: Metrics,
            #[serde(deserialize_with = "super::nan_map::traces")]
            traces: BTreeMap<Trace, Vec<f64>>,
        }
        let part: Part = serde_json::from_value(json).unwrap();
        assert!(part.metrics[Metric::ActivationBytes.key()].is_nan());
        assert_eq!(part.traces[&Trace::LossByStep][0], 1.0);
        assert!(part.traces[&Trace::LossByStep][1].is_nan());
    }

    #[test]
    fn nan_and_length_mismatch_fail() {
        assert!(!Check::compare("x", &[1.0], &[f32::NAN], 1.0).passed);
        assert!(!Check::compare("x", &[1.0, 2.0], &[1.0], 1.0).passed);
    }

    #[test]
    fn phase_times_sum_repeated_phases_within_a_run() {
        let phase = |name: &'static str, elapsed_s: f64| PhaseMemory {
            phase: name.into(),
            live_before_bytes: 0,
            peak_bytes: 0,
            live_after_bytes: 0,
            reserved_after_bytes: None,
            elapsed_s,
            bracket: None,
        };
        let runs = vec![
            vec![
                phase("forward", 1.0),
                phase("forward", 2.0),
                phase("optimizer", 0.5),
            ],
            vec![
                phase("forward", 2.0),
                phase("forward", 2.0),
                phase("optimizer", 1.5),
            ],
        ];
        let times = PhaseTiming::of_runs(&runs);
        assert_eq!(times.len(), 2);
        assert_eq!(times[0].phase, "forward");
        assert_eq!(times[0].timing.samples_s, vec![3.0, 4.0]);
        assert_eq!(times[1].timing.median_s, 1.0);
        assert!(PhaseTiming::of_runs(&[]).is_empty());
    }

    #[test]
    fn metric_names_are_the_records_keys() {
        assert_eq!(Metric::LiveBeforeStepBytes.key(), "live_before_step_bytes");
        assert_eq!(Metric::CleanupS.key(), "cleanup_s");
        assert_eq!(
            serde_json::to_string(&Trace::RetainedBytesByPass).unwrap(),
            "\"retained_bytes_by_pass\""
        );
    }
}

/// JSON has no NaN or infinity: serde_json writes them as `null`. These read `null` back as
/// NaN, so that a point whose figure is not finite (a diverged loss) is recorded, not lost.
pub(crate) mod nan_map {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer};

    use super::{Metrics, Trace};

    fn finite_or_nan(v: Option<f64>) -> f64 {
        v.unwrap_or(f64::NAN)
    }

    /// One number, `null` read as NaN (a chart's point of a diverged loss).
    pub(crate) fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(finite_or_nan(Option::<f64>::deserialize(d)?))
    }

    pub(super) fn metrics<'de, D: Deserializer<'de>>(d: D) -> Result<Metrics, D::Error> {
        let raw = BTreeMap::<String, Option<f64>>::deserialize(d)?;
        Ok(raw
            .into_iter()
            .map(|(k, v)| (k, finite_or_nan(v)))
            .collect())
    }

    pub(super) fn traces<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<Trace, Vec<f64>>, D::Error> {
        let raw = BTreeMap::<Trace, Vec<Option<f64>>>::deserialize(d)?;
        Ok(raw
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().map(finite_or_nan).collect()))
            .collect())
    }
}
