//! The technique trait: what every memory-saving technique declares, and the one blanket
//! implementation that turns it into an [`Experiment`] the runner can drive.
//!
//! A technique is typed: it declares its `Config` (serialisable), plans its points for a
//! profile and device, measures one point from its typed config (the runner calls this in a
//! fresh child process), and analyses its measured points as typed [`Row`]s. The
//! JSON of a point's config, the dispatch from a point to the typed call, the building of rows
//! and the timing of a comparison in one process (three arms, each the point's own code) are
//! written once, here, in `impl<T: Analyse> Experiment for T`; [`Analyse`], the
//! conclusions, is implemented in each technique's `analysis.rs`. What a profile means
//! ([`Sizes`](crate::harness::profile::Sizes), [`Repeats`]) is the harness's.

use results::keys::CommonKey;
use results::{
    Analysis, Build, BuildPlan, Check, Comparison, ComparisonSpec, DeviceKind, Fix, FixCheck,
    FloatStorage, MeasuredPoint, Metric, PairSettings, PairedComparison, Point, PointCheck,
    PointResult, Profile, TechniqueId, Text,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::ExperimentError;
use crate::harness::paired::{self, ArmRun};
use crate::harness::profile::Repeats;
use estimator::estimate::{Allocator, StepBytes, StepPlan};

/// What measuring one point gives: its result, or why it has none.
pub type Measurement = Measured<PointResult>;

/// What a measurement gives: its result, or why it has none.
pub type Measured<T> = Result<T, ExperimentError>;

/// A point a technique plans, with its typed configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned<C> {
    /// Unique within the technique, kebab-case (`batch-64`).
    pub id: String,
    /// What a reader sees (`batch 64`).
    pub label: String,
    /// Warm-up and measured repeats.
    pub repeats: Repeats,
    /// The technique's configuration of this point.
    pub config: C,
}

impl<C> Planned<C> {
    /// A point with the repeats of `profile`.
    pub fn new(id: String, label: String, profile: Profile, config: C) -> Self {
        Self {
            id,
            label,
            repeats: Repeats::of(profile),
            config,
        }
    }
}

/// A measured point of a technique, as its analysis reads it.
#[derive(Debug, Clone)]
pub struct Row<'a, C> {
    /// The point's id.
    pub id: &'a str,
    /// The point's configuration.
    pub config: C,
    /// The point's label.
    pub label: &'a str,
    /// What it measured.
    pub result: &'a PointResult,
    /// The device it was measured on.
    pub device: DeviceKind,
}

impl<C> Row<'_, C> {
    /// Whose allocation rules the point's bytes follow.
    pub fn allocator(&self) -> Allocator {
        Allocator::of(self.device)
    }

    /// The step's peak (the highest phase peak), in bytes.
    pub fn peak(&self) -> f64 {
        self.result.peak_bytes() as f64
    }

    /// The step's peak above what the process held before the model was built (the thread
    /// pool, the allocator's and the runtime's own bytes, which no byte rule predicts and which
    /// do not grow with the model). NaN where the point did not read that baseline.
    pub fn peak_above_process(&self) -> f64 {
        self.peak() - self.result.metric(Metric::ProcessBaselineBytes)
    }

    /// Where the phases were bracketed, the most the step can have held at its peak (the upper
    /// end of a comparison whose measured figure is [`Row::peak`]). `None` on an exact probe.
    pub fn peak_upper(&self) -> Option<f64> {
        self.result.peak_upper_bytes().map(|b| b as f64)
    }

    /// The point's checks: those it recorded, then those the page set against another point.
    pub fn checks_with(&self, derived: &[PointCheck]) -> Vec<Check> {
        self.result
            .checks
            .iter()
            .chain(PointCheck::on(derived, self.id))
            .cloned()
            .collect()
    }

    /// Where the phases were bracketed, the upper bound of [`Row::peak_above_process`].
    pub fn peak_upper_above_process(&self) -> Option<f64> {
        self.peak_upper()
            .map(|u| u - self.result.metric(Metric::ProcessBaselineBytes))
    }
}

/// Every check `rows` recorded, as a check of the ranked fix `fix` made on `technique`'s page:
/// the guide reads them beside every other page's checks of the same fix.
pub fn checks_of_fix<C>(rows: &[Row<'_, C>], fix: Fix, technique: TechniqueId) -> Vec<FixCheck> {
    rows.iter()
        .flat_map(|r| {
            r.result
                .checks
                .iter()
                .map(|c| FixCheck::new(fix, technique, r.id, c.clone()))
        })
        .collect()
}

/// A memory-saving technique, measured.
pub trait Technique: Sync {
    /// The configuration of one point.
    type Config: Serialize + DeserializeOwned + Clone + Send;
    /// Which technique this is: its id (the CLI's, the record's, the page's file name) and its
    /// place in the guide. Its page's words are the guide's (`guide::words::pages`).
    const ID: TechniqueId;
    /// Burn 0.22 code applying the technique, as shown on the page (its `snippet.rs`, compiled).
    const SNIPPET: &'static str;

    /// The points to measure.
    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<Self::Config>>;
    /// Measures one point. Called in a child process, once per process.
    fn run_point(&self, config: &Self::Config, repeats: Repeats, device: DeviceKind)
        -> Measurement;
    /// The float type a point stores tensors in by default (see [`Experiment::float_storage`]).
    fn float_storage(&self, _config: &Self::Config) -> FloatStorage {
        FloatStorage::F32
    }
    /// The comparisons the guide states, chosen from the measured points: each is timed in
    /// pairs (baseline, technique and an A/A control interleaved) after the points. The
    /// headline names the one that times it ([`results::Headline::timed_by`]).
    fn comparisons(&self, _rows: &[Row<'_, Self::Config>]) -> Vec<ComparisonSpec> {
        Vec::new()
    }
    /// A build of a comparison whose technique one model switches on and off between steps
    /// (the allocation recorder): one model taking the three arms' turns
    /// ([`paired::time_one_model`]), one set-up instead of three. `None`, the default: each
    /// arm runs its own point.
    fn one_model_build(
        &self,
        _baseline: &Self::Config,
        _technique: &Self::Config,
        _settings: &PairSettings,
        _plan: BuildPlan,
        _device: DeviceKind,
    ) -> Option<Measured<Build>> {
        None
    }
    /// The training step a point runs, as the estimator sees it (none: the point is not a
    /// training step, or one the estimator does not model). Every point that has one is set
    /// beside the estimator's step peak ([`Experiment::estimator`]).
    fn step_plan(&self, _config: &Self::Config) -> Option<StepPlan> {
        None
    }
    /// Checks that set one point's readings against another point's (the same step's
    /// gradients under two fixes, each measured in its own process), computed when the guide
    /// renders from what the points recorded: no point re-runs another's step to prove itself.
    fn derived_checks(&self, _rows: &[Row<'_, Self::Config>]) -> Vec<PointCheck> {
        Vec::new()
    }
}

/// What a technique concludes from its points: implemented in the technique's `analysis.rs`,
/// apart from what it measures.
pub trait Analyse: Technique {
    /// Conclusions from the measured points (`rows`, in the order run), all points (failed
    /// ones included) and the paired comparisons.
    fn analyse(
        &self,
        rows: Vec<Row<'_, Self::Config>>,
        points: &[MeasuredPoint],
        comparisons: &[PairedComparison],
    ) -> Analysis<Text>;
}

/// A technique as the runner drives it: points as JSON, one measured per child process.
pub trait Experiment: Sync {
    /// Which technique this is.
    fn technique(&self) -> TechniqueId;
    /// Kebab-case id.
    fn id(&self) -> &'static str {
        self.technique().id()
    }
    /// The Burn code the page shows (its words are the guide's).
    fn snippet(&self) -> &'static str;
    /// The points to measure.
    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point>;
    /// Measures one point. Called in a child process, once per process.
    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError>;
    /// The float type `point` stores tensors in by default. Burn sets it once per device and
    /// process, before the first tensor, so points of different types cannot share a process.
    fn float_storage(&self, point: &Point) -> FloatStorage;
    /// The comparisons to time in pairs, chosen from the points measured on `device`.
    fn comparisons(&self, points: &[MeasuredPoint], device: DeviceKind) -> Vec<ComparisonSpec>;
    /// Runs build `plan` of a paired comparison in this process: builds `technique`,
    /// `baseline` and a second copy of `baseline` (the control) and times them interleaved,
    /// as `settings` says. The two must store floats in the same type (otherwise the runner
    /// alternates child processes).
    fn time_pair(
        &self,
        baseline: &Point,
        technique: &Point,
        settings: &PairSettings,
        plan: BuildPlan,
        device: DeviceKind,
    ) -> Result<Build, ExperimentError>;
    /// The checks derived from the points measured on `device` ([`Technique::derived_checks`]).
    fn derived_checks(&self, points: &[MeasuredPoint], device: DeviceKind) -> Vec<PointCheck>;
    /// Conclusions from all points measured on `device`, failed ones included, and the paired
    /// comparisons.
    fn analyse(
        &self,
        points: &[MeasuredPoint],
        comparisons: &[PairedComparison],
        device: DeviceKind,
    ) -> Analysis<Text>;
    /// The estimator's step peak beside the measured peak of every training step measured on
    /// `device`, both above the process's own bytes (the point's bracket on CubeCL): how far
    /// `workbench estimate` can be trusted, point by point.
    fn estimator(&self, points: &[MeasuredPoint], device: DeviceKind) -> Vec<Comparison<Text>>;
    /// The estimator's step peak of `point` in bytes, before it runs (none where the point is
    /// not a training step the estimator models): the runner refuses a point whose estimate
    /// exceeds the device's memory instead of running it out of memory.
    fn estimated_peak_bytes(&self, point: &Point) -> Option<f64>;
}

impl<T: Analyse> Experiment for T {
    fn technique(&self) -> TechniqueId {
        T::ID
    }

    fn snippet(&self) -> &'static str {
        T::SNIPPET
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        Technique::points(self, profile, device)
            .into_iter()
            .map(|p| Point {
                id: p.id,
                label: p.label,
                warmup: p.repeats.warmup,
                repeats: p.repeats.repeats,
                config: serde_json::to_value(&p.config).expect("a config serialises"),
            })
            .collect()
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        let repeats = Repeats::on(point.warmup, point.repeats, device);
        Technique::run_point(self, &config::<T>(point)?, repeats, device)
    }

    fn float_storage(&self, point: &Point) -> FloatStorage {
        config::<T>(point).map_or(FloatStorage::F32, |c| Technique::float_storage(self, &c))
    }

    fn estimated_peak_bytes(&self, point: &Point) -> Option<f64> {
        let plan = Technique::step_plan(self, &config::<T>(point).ok()?)?;
        Some(plan.bytes().step_peak())
    }

    fn comparisons(&self, points: &[MeasuredPoint], device: DeviceKind) -> Vec<ComparisonSpec> {
        Technique::comparisons(self, &rows::<T>(points, device))
    }

    fn time_pair(
        &self,
        baseline: &Point,
        technique: &Point,
        settings: &PairSettings,
        plan: BuildPlan,
        device: DeviceKind,
    ) -> Result<Build, ExperimentError> {
        let (base, tech) = (config::<T>(baseline)?, config::<T>(technique)?);
        if let Some(build) = Technique::one_model_build(self, &base, &tech, settings, plan, device)
        {
            return build;
        }
        // Each arm runs its point as planned, without its own warm-up (the rounds warm up)
        // and with one repeat after the rounds (the rounds are served from inside the point's
        // own measured loop); its checks are skipped (the point's own run recorded them).
        let arm = |config: T::Config| -> ArmRun<'_> {
            let repeats = Repeats::on(0, 1, device);
            Box::new(move || Technique::run_point(self, &config, repeats, device))
        };
        // The rounds warm up as long as a point on this device does.
        let min_warmup = Repeats::on(0, 0, device).min_warmup;
        paired::time_in_one_process(
            [arm(base.clone()), arm(tech), arm(base)],
            settings,
            plan,
            min_warmup,
        )
    }

    fn derived_checks(&self, points: &[MeasuredPoint], device: DeviceKind) -> Vec<PointCheck> {
        Technique::derived_checks(self, &rows::<T>(points, device))
    }

    fn analyse(
        &self,
        points: &[MeasuredPoint],
        comparisons: &[PairedComparison],
        device: DeviceKind,
    ) -> Analysis<Text> {
        Analyse::analyse(self, rows::<T>(points, device), points, comparisons)
    }

    fn estimator(&self, points: &[MeasuredPoint], device: DeviceKind) -> Vec<Comparison<Text>> {
        rows::<T>(points, device)
            .iter()
            .filter_map(|row| {
                let plan = Technique::step_plan(self, &row.config)?;
                let bytes = plan.bytes_on(row.allocator());
                let measured = row.peak_above_process();
                measured.is_finite().then(|| {
                    Comparison::new(
                        Text::said(CommonKey::EstimatorQuantity).name("point", row.label),
                        bytes.step_peak(),
                        measured,
                        estimator_note(&plan, &bytes, row.result, measured),
                    )
                    .bracketed(row.peak_upper_above_process())
                    .in_regime(plan.precision.name())
                })
            })
            .collect()
    }
}

/// What the estimator was asked, and where its step peak and the measured one part, as the
/// estimate's error (the estimate less the measurement, as every table reads it): the weights
/// and optimizer state and the inputs, each the rule against what the point measured, and the
/// rest (what the step holds at its peak above them: activations, gradients and transients).
/// The guide words it, with what the technique knows the estimator leaves out.
fn estimator_note(plan: &StepPlan, bytes: &StepBytes, result: &PointResult, measured: f64) -> Text {
    let fixed = bytes.fixed()
        - (result.metric(Metric::ParamBytes) + result.metric(Metric::OptimizerStateBytes));
    let inputs = bytes.inputs - result.metric(Metric::InputBytes);
    let total = bytes.step_peak() - measured;
    let note = Text::said(CommonKey::EstimatorNote)
        .number("batch", plan.batch)
        .count("micro_batches", plan.micro_batches)
        .variant("checkpointing", plan.checkpointing)
        .name("precision", plan.precision.name())
        .name("optimizer", plan.optimizer.name());
    if fixed.is_finite() && inputs.is_finite() {
        note.bytes("total", total)
            .bytes("fixed", fixed)
            .bytes("inputs", inputs)
    } else {
        note
    }
}

/// The measured points as typed rows, in the order run.
fn rows<T: Technique>(points: &[MeasuredPoint], device: DeviceKind) -> Vec<Row<'_, T::Config>> {
    points
        .iter()
        .filter_map(|p| {
            Some(Row {
                id: &p.point.id,
                config: config::<T>(&p.point).ok()?,
                label: &p.point.label,
                result: p.result()?,
                device,
            })
        })
        .collect()
}

/// A point's config parsed into the technique's own type.
fn config<T: Technique>(point: &Point) -> Result<T::Config, ExperimentError> {
    serde_json::from_value(point.config.clone()).map_err(|source| ExperimentError::BadConfig {
        experiment: T::ID.id(),
        source,
    })
}
