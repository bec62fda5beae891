//! What holds the memory at the peak: every large allocation of a training step traced to the
//! code that made it, on the CPU.
//!
//! Question: of a step's peak, which bytes are the weights, Adam's state, the gradients, and
//! which activations (attention's scores, the logits, the MLP's projections)?
//! Method: `burn-step-monitor`'s recorder, started before the model is built: the counting
//! allocator notes every allocation of 64 KiB or more with the raw return addresses of its
//! stack (into static buffers: the step allocates nothing more), and after the step the stacks
//! are symbolised and each block named by the model's code, the tensor operation, or the
//! backward node or optimizer that made it. The live blocks are summed at the step's peak and
//! at each phase's, for the MLP, GPT-2 small and the Llama-family block at the sizes of their
//! own pages. The recording's cost: a short GPT-2-small step (one sequence of a sixteenth of the
//! page's tokens) timed in pairs with and without it, each build one model whose steps take
//! the arms' turns.
//! Answer: the traced blocks hold all but a sliver of each peak, and the bytes add up to the
//! probe's peak exactly; what they are made of is on the page.

mod analysis;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::optim::BuildOptimizer;

use burn_step_monitor::attribution::{self, Recorder, Report};
use results::{
    attribution as schema, Build, BuildPlan, ComparisonSpec, DeviceKind, PairSettings,
    PeakAttribution as Recorded, PhaseMemory, PhaseTiming, PointCheck, PointResult, Profile,
    TechniqueId,
};
use serde::{Deserialize, Serialize};

use crate::error::ExperimentError;
use crate::harness::backend::{self, Backends, OnBackend, Setup};
use crate::harness::models::{self, training_mlp, Batch, Model, TransformerShape};
use crate::harness::optim::UseOptimizer;
use crate::harness::probe::{MemoryProbe, PhaseMeter};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::harness::train::{set_up, timeline_traces, Readings, SetUp, TrainConfig};
use crate::harness::turns::{TakingTurns, Turn};
use crate::technique::{Measured, Measurement, Planned, Row, Technique};
use crate::techniques::{gpt2_small, llama_family};
use burn::optim::ModuleOptimizer;
use burn::tensor::Device;
use estimator::estimate::StepPlan;

/// The models whose steps are recorded: each at its own page's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// The MLP of the batch-size page, at its smallest batch.
    Mlp,
    /// The GPT-2-small table's plain step.
    Gpt2Small,
    /// The Llama-family page's plain step (one TinyLlama-width block).
    LlamaBlock,
    /// GPT-2 small on one sequence of a sixteenth of its step's tokens (a quarter quick): the
    /// recording's cost, timed in pairs (four builds of twelve steps each, minutes at the
    /// page's step; 125 s of the full run at a quarter of its tokens). The recorder's cost is per allocation and the
    /// step's per token: the shorter step is the larger share, an upper bound for the page's.
    Gpt2SmallShort,
}

impl Workload {
    /// Kebab-case id.
    pub fn id(self) -> &'static str {
        match self {
            Workload::Mlp => "mlp",
            Workload::Gpt2Small => "gpt2-small",
            Workload::LlamaBlock => "llama-block",
            Workload::Gpt2SmallShort => "gpt2-small-short",
        }
    }

    fn train(self, sizes: Sizes) -> TrainConfig {
        let seeded = |c: TrainConfig| TrainConfig { seed: 11, ..c };
        match self {
            Workload::Mlp => TrainConfig::adam(training_mlp(sizes), 64),
            Workload::Gpt2Small => {
                let (shape, batch) = gpt2_small::workload(sizes);
                seeded(TrainConfig::adam(shape, batch))
            }
            Workload::LlamaBlock => seeded(TrainConfig::adam(
                llama_family::block(sizes),
                llama_family::BATCH,
            )),
            Workload::Gpt2SmallShort => {
                let (shape, batch) = gpt2_small::workload(sizes);
                // The quick run's model is small: at a sixteenth its step's tensors fall under
                // the recorder's threshold (the traced blocks held 91% of its peak).
                let share = if sizes == Sizes::Quick { 4 } else { 16 };
                let tokens = (shape.seq * batch / share).max(1);
                seeded(TrainConfig::adam(
                    TransformerShape {
                        seq: tokens,
                        ..shape
                    },
                    1,
                ))
            }
        }
    }

    /// Whether the page shows what the step holds (the short step only times the recording).
    pub fn shown(self) -> bool {
        self != Workload::Gpt2SmallShort
    }
}

/// One point: a workload's step, recorded or not.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AttributionConfig {
    /// Which model.
    pub workload: Workload,
    /// Its step.
    pub train: TrainConfig,
    /// Whether the recorder runs: the attributed step, and every timed step recorded (the
    /// recording's cost); otherwise the same steps plain (the cost's baseline).
    pub recorded: bool,
    /// Allocations of at least this many bytes are traced: 64 KiB, the recorder's default, at
    /// the full sizes; 16 KiB for the quick run's small models, whose tensors are mostly under
    /// 64 KiB.
    pub threshold_bytes: u64,
}

/// The page.
pub struct PeakAttribution;

impl Technique for PeakAttribution {
    type Config = AttributionConfig;
    const ID: TechniqueId = TechniqueId::PeakAttribution;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<AttributionConfig>> {
        // Only the CPU's probe sees each allocation; a device's pool does not say who asked.
        if device != DeviceKind::Cpu {
            return Vec::new();
        }
        let sizes = Sizes::of(profile, device);
        // GPT-2 small first: the page's answer is its bar; then the short step's pair.
        let recorded = [Workload::Gpt2Small, Workload::LlamaBlock, Workload::Mlp]
            .into_iter()
            .map(|w| (w, true));
        recorded
            .chain([
                (Workload::Gpt2SmallShort, true),
                (Workload::Gpt2SmallShort, false),
            ])
            .map(|(workload, recorded)| {
                // Quick models' tensors are small: on Burn 0.22 blocks under 16 KiB held 5.1%
                // of the short GPT-2 step's peak, past the page's 5% check; 8 KiB traces them.
                let threshold_bytes = match sizes {
                    Sizes::Quick => 8 * 1024,
                    _ => attribution::THRESHOLD_BYTES,
                };
                let config = AttributionConfig {
                    workload,
                    train: workload.train(sizes),
                    recorded,
                    threshold_bytes,
                };
                let (id, label) = if recorded {
                    (
                        workload.id().to_string(),
                        format!("{}, recorded", workload.id()),
                    )
                } else {
                    (
                        format!("{}-unrecorded", workload.id()),
                        format!("{}, not recorded", workload.id()),
                    )
                };
                let mut planned = Planned::new(id, label, profile, config);
                if sizes == Sizes::Full && workload != Workload::Mlp {
                    // A step of these takes seconds on 2 cores, and the point's memory is
                    // read from its first steps: its time is the pairs'.
                    planned.repeats.warmup = 0;
                    planned.repeats.repeats = 1;
                }
                planned
            })
            .collect()
    }

    fn run_point(
        &self,
        config: &AttributionConfig,
        repeats: Repeats,
        device: DeviceKind,
    ) -> Measurement {
        if device != DeviceKind::Cpu {
            // A device's pool does not say who asked for a block: the recorder is the heap's.
            return Err(ExperimentError::Backend(
                "the allocation recorder reads the CPU's heap only".into(),
            ));
        }
        device.dispatch(
            Setup::default(),
            AttributionPoint {
                config: *config,
                repeats,
            },
        )
    }

    fn step_plan(&self, config: &AttributionConfig) -> Option<StepPlan> {
        Some(config.train.step_plan())
    }

    fn one_model_build(
        &self,
        baseline: &AttributionConfig,
        technique: &AttributionConfig,
        settings: &PairSettings,
        plan: BuildPlan,
        device: DeviceKind,
    ) -> Option<Measured<Build>> {
        // The arms differ in the recorder alone, which one model switches between its steps.
        let same_step = AttributionConfig {
            recorded: baseline.recorded,
            ..*technique
        } == *baseline;
        (same_step && device == DeviceKind::Cpu).then(|| {
            let turns = TakingTurns {
                train: technique.train,
                turn: RecordedTurn {
                    threshold_bytes: technique.threshold_bytes,
                },
                settings: *settings,
                plan,
            };
            device
                .dispatch(Setup::default(), turns)
                .and_then(|build| build)
        })
    }

    fn derived_checks(&self, rows: &[Row<'_, AttributionConfig>]) -> Vec<PointCheck> {
        analysis::derived_checks(rows)
    }

    fn comparisons(&self, rows: &[Row<'_, AttributionConfig>]) -> Vec<ComparisonSpec> {
        match analysis::timed_pair(rows) {
            Some((plain, recorded)) => {
                vec![ComparisonSpec::new("recording", plain.id, recorded.id)]
            }
            None => Vec::new(),
        }
    }
}

/// One point's run on the CPU backend.
struct AttributionPoint {
    config: AttributionConfig,
    repeats: Repeats,
}

impl OnBackend for AttributionPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        // Before the model is built, so that its weights are traced to the code that drew them.
        let threshold = self.config.threshold_bytes;
        // A run with a timer installed (a criterion bench) only serves its timed steps (each
        // recorded where the point records): the point's own run attributed the step.
        let recorder = (self.config.recorded && !timing::timing_only())
            .then(|| Recorder::with_threshold(threshold));
        let SetUp {
            model,
            batch,
            readings,
        } = set_up(&self.config.train, &device, probe);
        self.config.train.optimizer.with(Steps {
            point: self,
            device: &device,
            probe,
            model,
            batch: &batch,
            readings,
            recorder,
        })
    }
}

/// The point's steps, its optimizer built.
struct Steps<'a> {
    point: AttributionPoint,
    device: &'a Device,
    probe: &'a dyn MemoryProbe,
    model: Model,
    batch: &'a Batch,
    readings: Readings,
    recorder: Option<Recorder>,
}

impl UseOptimizer for Steps<'_> {
    type Output = PointResult;

    fn with(self, mut optim: ModuleOptimizer) -> PointResult {
        let Steps {
            point,
            device,
            probe,
            model,
            batch,
            mut readings,
            recorder,
        } = self;
        let c = point.config.train;
        let sync = || backend::sync(device);
        let mut model = Some(model);
        let mut step = || train_once(probe, &sync, &mut model, &mut optim, &c, batch);
        // The first step makes Adam's state (traced, where recorded, to the optimizer).
        step();
        sync();
        readings.optimizer_state_bytes = probe
            .read()
            .in_use_bytes
            .saturating_sub(readings.after_runtime);
        let (phases, attribution) = match recorder {
            // A timed run goes straight to its timed steps: the point's own run measured the
            // step.
            None if timing::timing_only() => (Vec::new(), None),
            Some(mut recorder) => {
                recorder.begin_step();
                let phases = step();
                let names: Vec<String> = phases.iter().map(|p| p.phase.to_string()).collect();
                let peak = phases.iter().map(|p| p.peak_bytes).max().unwrap_or(0);
                let report = recorder.end_step_of(&names, peak);
                (phases, Some(report))
            }
            None => (step(), None),
        };
        // The timed steps: each recorded from scratch where the point records (what a
        // recorded step costs), plain otherwise.
        let (recorded, threshold) = (point.config.recorded, point.config.threshold_bytes);
        let (_, units) = c.shape.units(c.batch);
        let mut runs = Vec::new();
        let timing = timing::repeat(point.repeats.warmup, point.repeats.repeats, units, || {
            runs.push(recorded_if(recorded, threshold, &mut step));
        });
        let metrics = readings.metrics(
            &phases,
            &runs,
            c.shape.num_params(),
            c.shape.step_matmul_flop(c.batch),
        );
        let (unit, _) = c.shape.units(c.batch);
        let mut result =
            PointResult::new(probe.info(), phases.clone(), timing, units).in_unit(unit);
        result.metrics = metrics;
        result.phase_times = PhaseTiming::of_runs(&runs);
        if let Some(report) = attribution {
            let recorded = record_of(&report);
            result.traces = timeline_traces(&report.timeline, &phases);
            result.checks = analysis::self_checks(&recorded);
            result.attribution = Some(Box::new(recorded));
        }
        result
    }
}

/// Runs `step`, recorded from scratch where `recorded` and the report discarded: what a timed
/// recorded step costs.
fn recorded_if<T>(recorded: bool, threshold: u64, step: impl FnOnce() -> T) -> T {
    let recording = recorded.then(|| {
        let mut r = Recorder::with_threshold(threshold);
        r.begin_step();
        r
    });
    let out = step();
    if let Some(r) = recording {
        r.discard();
    }
    out
}

/// One step of the point's model, its phases metered (the model is taken and put back).
fn train_once(
    probe: &dyn MemoryProbe,
    sync: &dyn Fn(),
    model: &mut Option<Model>,
    optim: &mut ModuleOptimizer,
    c: &TrainConfig,
    batch: &Batch,
) -> Vec<PhaseMemory> {
    let mut meter = PhaseMeter::with_capacity(probe, sync, 4);
    let m = model.take().expect("the model is put back after each step");
    let reads = models::StepReads::default();
    *model = Some(models::train_step(
        &mut meter, m, optim, c.lr, batch, 1, None, reads,
    ));
    meter.finish()
}

/// The recording's arms on the shared model: the technique's steps recorded from scratch (as
/// each timed step of a recorded point is), the baseline's and the control's not. The recorder
/// is all that differs between the arms, so one set-up serves the three: a build of GPT-2
/// small's short step took a minute with three.
struct RecordedTurn {
    threshold_bytes: u64,
}

impl Turn for RecordedTurn {
    fn take(&self, arm: usize, model: Model, step: &mut dyn FnMut(Model) -> Model) -> Model {
        recorded_if(arm == 1, self.threshold_bytes, || step(model))
    }
}

/// The recorder's report as the record keeps it (the timeline goes to the point's traces).
fn record_of(r: &Report) -> Recorded {
    Recorded {
        threshold_bytes: r.threshold_bytes,
        probe_peak_bytes: r.probe_peak_bytes,
        events: r.timeline.bytes.len() as u64,
        peak: moment(&r.peak),
        phases: r
            .phases
            .iter()
            .map(|(n, m)| (n.clone(), moment(m)))
            .collect(),
        largest: r
            .largest
            .iter()
            .map(|s| schema::Span {
                site: site(&s.site, s.bytes, 1),
                made_event: s.made_event,
                freed_event: s.freed_event,
            })
            .collect(),
        untraced_blocks: r.untraced_blocks,
        symbolise_s: r.symbolise_s,
        before_recording_bytes: r.before_recording_bytes,
    }
}

fn site(s: &attribution::Site, bytes: u64, blocks: u64) -> schema::SiteBytes {
    schema::SiteBytes {
        code: s.code.clone(),
        op: s.op.clone(),
        made_in: s.made_in.clone(),
        bytes,
        blocks,
    }
}

fn moment(m: &attribution::Moment) -> schema::Moment {
    schema::Moment {
        event: m.event,
        in_use_bytes: m.in_use_bytes,
        sites: m
            .sites
            .iter()
            .map(|s| site(&s.site, s.bytes, s.blocks))
            .collect(),
        untraced_bytes: m.untraced_bytes,
    }
}
