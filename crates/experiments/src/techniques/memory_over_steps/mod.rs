//! Memory over many steps: the training loops whose memory grows from step to step.
//!
//! Question: which patterns of a Burn 0.21 training loop make memory grow between steps (what
//! Burn users report most: "it runs for a while, then runs out of memory"), what grows (bytes
//! in use, or only the pool's reserved bytes), and does the fix stop it?
//! Method: a 4 x Linear(256) MLP trained with Adam, one pattern per process, each step followed
//! by a device sync and a reading of the probe: bytes in use, the step's peak, on CubeCL the
//! pool's reserved bytes, and the process's resident set (where a software device such as
//! lavapipe keeps its memory, and what `nvidia-smi` would count of a process's pools). The
//! render fits a line through each series after the warm-up, with its 95% interval
//! ([`crate::monitor::Growth`]).
//! Answer: read from the records by `analysis.rs`; the correct loop (the control) must be flat,
//! a check that fails for a loop that leaks.

mod analysis;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::TechniqueId;
use std::collections::BTreeMap;
use std::time::Instant;

use burn::module::AutodiffModule;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{ElementConversion, Int, Tensor};
use results::{DeviceKind, PointResult, Profile, Timing, Trace};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Setup};
use crate::harness::models::mlp::{self, Mlp, MlpShape};
use crate::harness::probe::MemoryProbe;
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::monitor::StepMonitor;
use crate::technique::{Measurement, Planned, Row, Technique};

/// A training loop's pattern, each one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// The correct loop: the loss read as a number, nothing kept (the control).
    Control,
    /// Each step's loss kept as a tensor for logging, instead of `into_scalar()`.
    KeptLoss,
    /// An evaluation pass on the autodiff model each step, its output kept for later.
    KeptEvalOutput,
    /// An evaluation pass on the autodiff model each step, read as a number and dropped.
    EvalOnAutodiff,
    /// Each minibatch cut with `.clone().select(...)` from a dataset tensor that stays alive.
    CloneSelect,
    /// Each epoch's batches made on a new thread, as a data loader iterated per epoch does.
    LoaderThread,
    /// The same, with CubeCL's `[streaming] max_streams = 1`.
    LoaderThreadOneStream,
    /// The correct loop with `memory_cleanup()` every [`CLEANUP_EVERY`] steps.
    CleanupEvery,
    /// The correct loop with the workbench's [`StepMonitor`] around each step: what the
    /// reader's own loop pays for watching its memory.
    Monitored,
}

impl Pattern {
    /// Every pattern, the control first.
    pub const ALL: [Pattern; 9] = [
        Pattern::Control,
        Pattern::KeptLoss,
        Pattern::KeptEvalOutput,
        Pattern::EvalOnAutodiff,
        Pattern::CloneSelect,
        Pattern::LoaderThread,
        Pattern::LoaderThreadOneStream,
        Pattern::CleanupEvery,
        Pattern::Monitored,
    ];

    /// Kebab-case id.
    pub fn id(self) -> &'static str {
        match self {
            Pattern::Control => "control",
            Pattern::KeptLoss => "kept-loss",
            Pattern::KeptEvalOutput => "kept-eval-output",
            Pattern::EvalOnAutodiff => "eval-on-autodiff",
            Pattern::CloneSelect => "clone-select",
            Pattern::LoaderThread => "loader-thread",
            Pattern::LoaderThreadOneStream => "loader-thread-one-stream",
            Pattern::CleanupEvery => "cleanup-every",
            Pattern::Monitored => "monitored",
        }
    }
}

/// Steps between two `memory_cleanup()` calls, and between two epochs of the loader patterns.
pub const CLEANUP_EVERY: usize = 10;
/// Steps per epoch of the loader patterns.
pub const EPOCH_STEPS: usize = 10;
/// Minibatches in the dataset tensor the clone-select pattern cuts from.
const DATASET_BATCHES: usize = 8;

/// Configuration of one loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoopConfig {
    /// The pattern.
    pub pattern: Pattern,
    /// The model.
    pub shape: MlpShape,
    /// Samples per step.
    pub batch: usize,
    /// Steps run.
    pub steps: usize,
    /// Steps left out of the fits.
    pub warmup_steps: usize,
}

/// The experiment.
pub struct MemoryOverSteps;

/// 150 steps (20 of warm-up) on every device: a step of this MLP takes a few milliseconds, so
/// the whole experiment is seconds; 40 quick.
fn config(sizes: Sizes, pattern: Pattern) -> LoopConfig {
    let (steps, warmup_steps) = match sizes {
        Sizes::Quick => (40, 10),
        Sizes::Full | Sizes::FullCuda => (150, 20),
    };
    LoopConfig {
        pattern,
        shape: MlpShape {
            width: 256,
            depth: 4,
        },
        batch: 64,
        steps,
        warmup_steps,
    }
}

impl Technique for MemoryOverSteps {
    type Config = LoopConfig;
    const ID: TechniqueId = TechniqueId::MemoryOverSteps;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<LoopConfig>> {
        let sizes = Sizes::of(profile, device);
        Pattern::ALL
            .into_iter()
            .map(|pattern| {
                let config = config(sizes, pattern);
                Planned {
                    // Every step is timed and read; the fits leave out the warm-up.
                    repeats: Repeats {
                        warmup: 0,
                        repeats: config.steps,
                        ..Repeats::of(profile)
                    },
                    ..Planned::new(
                        pattern.id().into(),
                        pattern.id().replace('-', " "),
                        profile,
                        config,
                    )
                }
            })
            .collect()
    }

    /// The loop's steps are its configuration's (its warm-up and its length), not `Repeats`.
    fn run_point(&self, config: &LoopConfig, _: Repeats, device: DeviceKind) -> Measurement {
        if config.pattern == Pattern::LoaderThreadOneStream {
            one_stream(device);
        }
        device.dispatch(Setup::default(), LoopPoint { config: *config })
    }

    fn derived_checks(&self, rows: &[Row<'_, LoopConfig>]) -> Vec<results::PointCheck> {
        analysis::derived_checks(rows)
    }

    fn comparisons(&self, rows: &[Row<'_, LoopConfig>]) -> Vec<results::ComparisonSpec> {
        analysis::comparisons(rows)
    }
}

/// Sets CubeCL's `[streaming] max_streams = 1` for this process (its configuration is read
/// once, when the device's first client is made: this runs before). Nothing on the CPU.
fn one_stream(device: DeviceKind) {
    #[cfg(any(feature = "wgpu", feature = "cuda"))]
    if device != DeviceKind::Cpu {
        use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};
        let mut config = CubeClRuntimeConfig::default();
        config.streaming.max_streams = 1;
        CubeClRuntimeConfig::set(config);
    }
    #[cfg(not(any(feature = "wgpu", feature = "cuda")))]
    let _ = device;
}

/// Bytes the process holds resident (`/proc/self/statm`), where the system says.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// One Adam step of `model` on `(x, y)`; `read` sees the loss before backward consumes its
/// graph (a loop that keeps it keeps the graph: the pattern measured).
fn adam_step<B: AutodiffBackend, O: Optimizer<Mlp<B>, B>>(
    model: Mlp<B>,
    optim: &mut O,
    x: Tensor<B, 2>,
    y: Tensor<B, 2>,
    read: impl FnOnce(&Tensor<B, 1>),
) -> Mlp<B> {
    let loss = mlp::loss(&model, x, y);
    read(&loss);
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    optim.step(1e-3, model, grads)
}

/// Runs `train` inside the monitor's readings where the loop is monitored, as in the reader's
/// loop.
fn monitored(monitor: &mut Option<StepMonitor<'_>>, train: impl FnOnce()) {
    match monitor.as_mut() {
        Some(monitor) => monitor.step(train),
        None => train(),
    }
}

/// One loop measured.
struct LoopPoint {
    config: LoopConfig,
}

impl OnBackend for LoopPoint {
    type Output = PointResult;

    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync::<B>(&device);
        B::seed(&device, 5);
        let mut model = Some(c.shape.init::<B>(&device));
        mlp::materialize(model.as_ref().expect("made above"));
        let mut optim = AdamConfig::new().init();
        let (x, y) = c.shape.batch::<B>(c.batch, &device);
        let eval_x = x.clone().inner();
        let dataset = (c.pattern == Pattern::CloneSelect)
            .then(|| c.shape.batch::<B>(c.batch * DATASET_BATCHES, &device));
        let mut loader: Option<(Tensor<B, 2>, Tensor<B, 2>)> = None;
        // A paired comparison's arm (or a bench) times the step offered below, after the
        // loop's warm-up; the point's own run reads every step.
        let steps = if timing::timing_only() {
            c.warmup_steps
        } else {
            c.steps
        };

        // Every reading's room made before the first step: on the CPU the probe counts the
        // heap, and the loop's own bookkeeping must not read as growth. The monitored loop's
        // monitor is made here for the same reason.
        let mut in_use = Vec::with_capacity(steps);
        let mut peak = Vec::with_capacity(steps);
        let mut reserved = Vec::with_capacity(steps);
        let mut resident = Vec::with_capacity(steps);
        let mut step_s = Vec::with_capacity(steps);
        let mut kept_losses: Vec<Tensor<B, 1>> = Vec::with_capacity(steps);
        let mut kept_outputs: Vec<Tensor<B, 2>> = Vec::with_capacity(steps);
        let mut losses = Vec::with_capacity(steps);
        let mut monitor = (c.pattern == Pattern::Monitored)
            .then(|| StepMonitor::new(probe, sync).warmup(c.warmup_steps));

        for step in 0..steps {
            sync();
            probe.reset_peak();
            let clock = Instant::now();
            let (xb, yb) = match c.pattern {
                Pattern::CloneSelect => {
                    let (dx, dy) = dataset.as_ref().expect("made for this pattern");
                    let first = (step % DATASET_BATCHES * c.batch) as i64;
                    let rows = Tensor::<B, 1, Int>::arange(first..first + c.batch as i64, &device);
                    (
                        dx.clone().select(0, rows.clone()),
                        dy.clone().select(0, rows),
                    )
                }
                Pattern::LoaderThread | Pattern::LoaderThreadOneStream => {
                    if step % EPOCH_STEPS == 0 {
                        // A new epoch: its batch made on a thread of its own, as Burn 0.21's
                        // DataLoader does for each iter().
                        let (shape, batch, d) = (c.shape, c.batch, device.clone());
                        loader = Some(
                            std::thread::spawn(move || {
                                let b = shape.batch::<B>(batch, &d);
                                backend::sync::<B>(&d);
                                b
                            })
                            .join()
                            .expect("the loader thread makes a batch"),
                        );
                    }
                    loader.clone().expect("made at the epoch's start")
                }
                _ => (x.clone(), y.clone()),
            };
            monitored(&mut monitor, || {
                let m = model.take().expect("put back after each step");
                model = Some(adam_step(m, &mut optim, xb, yb, |loss| {
                    if c.pattern == Pattern::KeptLoss {
                        kept_losses.push(loss.clone());
                    }
                    losses.push(loss.clone().into_scalar().elem::<f64>());
                }));
            });
            let m = model.as_ref().expect("put back by the step");
            match c.pattern {
                Pattern::KeptEvalOutput => kept_outputs.push(m.forward(x.clone())),
                Pattern::EvalOnAutodiff => {
                    let _ = m.forward(x.clone()).mean().into_scalar();
                }
                Pattern::CleanupEvery if step % CLEANUP_EVERY == CLEANUP_EVERY - 1 => {
                    sync();
                    B::memory_cleanup(&device);
                }
                _ => drop(m.valid().forward(eval_x.clone())),
            }
            sync();
            step_s.push(clock.elapsed().as_secs_f64());
            let r = probe.read();
            in_use.push(r.in_use_bytes as f64);
            peak.push(r.peak_in_use_bytes.max(r.in_use_bytes) as f64);
            if let Some(b) = r.reserved_bytes {
                reserved.push(b as f64);
            }
            if let Some(b) = resident_bytes() {
                resident.push(b as f64);
            }
        }
        drop((kept_losses, kept_outputs));
        // A bench or a paired comparison times one training step of the correct loop, with
        // what the pattern adds where its cost is the question: `memory_cleanup()` every
        // [`CLEANUP_EVERY`] steps, or the monitor's readings around the step. The other
        // patterns' question is their memory, not their time.
        let mut offered = 0usize;
        timing::offer(c.batch as u64, &mut || {
            let clock = Instant::now();
            monitored(&mut monitor, || {
                let m = model.take().expect("put back after each step");
                model = Some(adam_step(m, &mut optim, x.clone(), y.clone(), |_| {}));
            });
            offered += 1;
            if c.pattern == Pattern::CleanupEvery && offered.is_multiple_of(CLEANUP_EVERY) {
                sync();
                B::memory_cleanup(&device);
            }
            sync();
            clock.elapsed()
        });
        let mut traces = BTreeMap::new();
        traces.insert(Trace::InUseBytesByStep, in_use);
        traces.insert(Trace::PeakBytesByStep, peak);
        traces.insert(Trace::LossByStep, losses);
        if !reserved.is_empty() {
            traces.insert(Trace::ReservedBytesByStep, reserved);
        }
        if !resident.is_empty() {
            traces.insert(Trace::ResidentBytesByStep, resident);
        }
        PointResult {
            traces,
            ..PointResult::new(
                probe.info(),
                Vec::new(),
                Timing::from_samples(step_s),
                c.batch as u64,
            )
        }
    }
}
