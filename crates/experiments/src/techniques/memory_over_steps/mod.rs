//! Memory over many steps: the training loops whose memory grows from step to step.
//!
//! Question: which patterns of a Burn 0.22 training loop make memory grow between steps (what
//! Burn users report most: "it runs for a while, then runs out of memory"), what grows (bytes
//! in use, or only the pool's reserved bytes), and does the fix stop it?
//! Method: a 4 x Linear(256) MLP trained with Adam, one pattern per process, each step followed
//! by a device sync and a reading of the probe: bytes in use, the step's peak, on CubeCL the
//! pool's reserved bytes, and the process's resident set (where a software device such as
//! lavapipe keeps its memory, and what `nvidia-smi` would count of a process's pools). The
//! render fits a line through each series after the warm-up, with its 95% interval
//! ([`burn_step_monitor::Growth`]).
//! Answer: read from the records by `analysis.rs`; the correct loop (the control) must be flat,
//! a check that fails for a loop that leaks.

mod analysis;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::models::BuildMlp;
use results::TechniqueId;
use std::collections::BTreeMap;
use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Int, Tensor};
use results::{DeviceKind, PointResult, Profile, Timing, Trace};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Setup};
use crate::harness::models::mlp::{self, Mlp, MlpShape};
use crate::harness::probe::{MemoryProbe, Monitored};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::technique::{Measurement, Planned, Row, Technique};
use burn_step_monitor::StepMonitor;

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
fn adam_step(
    model: Mlp,
    optim: &mut ModuleOptimizer,
    x: Tensor<2>,
    y: Tensor<2>,
    read: impl FnOnce(&Tensor<1>),
) -> Mlp {
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

/// What the loop reads after each step, its room made before the first step: on the CPU the
/// probe counts the heap, and the loop's own bookkeeping must not read as growth.
struct Readings {
    in_use: Vec<f64>,
    peak: Vec<f64>,
    reserved: Vec<f64>,
    resident: Vec<f64>,
    all_in_use: Vec<f64>,
    all_reserved: Vec<f64>,
    pools: Vec<f64>,
    driver_used: Vec<f64>,
    step_s: Vec<f64>,
}

impl Readings {
    fn with_capacity(steps: usize) -> Self {
        let v = || Vec::with_capacity(steps);
        Self {
            in_use: v(),
            peak: v(),
            reserved: v(),
            resident: v(),
            all_in_use: v(),
            all_reserved: v(),
            pools: v(),
            driver_used: v(),
            step_s: v(),
        }
    }

    /// The readings after one step: the training thread's stream, then every pool of the
    /// device (every stream's, through Burn), then the resident set.
    fn record(&mut self, probe: &dyn MemoryProbe, step_s: f64) {
        self.step_s.push(step_s);
        let r = probe.read();
        self.in_use.push(r.in_use_bytes as f64);
        self.peak
            .push(r.peak_in_use_bytes.max(r.in_use_bytes) as f64);
        if let Some(b) = r.reserved_bytes {
            self.reserved.push(b as f64);
        }
        if let Some(all) = probe.device_wide() {
            self.all_in_use.push(all.in_use_bytes as f64);
            self.pools.push(all.pools as f64);
            if let Some(b) = all.reserved_bytes {
                self.all_reserved.push(b as f64);
            }
            if let Some(b) = all.driver_used_bytes {
                self.driver_used.push(b as f64);
            }
        }
        if let Some(b) = resident_bytes() {
            self.resident.push(b as f64);
        }
    }

    /// The readings as the point's traces (a series read on no step is left out).
    fn traces(self, losses: Vec<f64>) -> BTreeMap<Trace, Vec<f64>> {
        let mut traces = BTreeMap::new();
        traces.insert(Trace::InUseBytesByStep, self.in_use);
        traces.insert(Trace::PeakBytesByStep, self.peak);
        traces.insert(Trace::LossByStep, losses);
        for (trace, series) in [
            (Trace::ReservedBytesByStep, self.reserved),
            (Trace::ResidentBytesByStep, self.resident),
            (Trace::InUseAllStreamsBytesByStep, self.all_in_use),
            (Trace::ReservedAllStreamsBytesByStep, self.all_reserved),
            (Trace::PoolsByStep, self.pools),
            (Trace::DriverUsedBytesByStep, self.driver_used),
        ] {
            if !series.is_empty() {
                traces.insert(trace, series);
            }
        }
        traces
    }
}

/// A batch of the MLP's inputs and targets.
type Pair = (Tensor<2>, Tensor<2>);

/// A loop's model, optimizer and data, and what its pattern keeps across steps.
struct Loop {
    c: LoopConfig,
    device: Device,
    model: Option<Mlp>,
    optim: ModuleOptimizer,
    x: Tensor<2>,
    y: Tensor<2>,
    eval_x: Tensor<2>,
    dataset: Option<Pair>,
    loader: Option<Pair>,
    kept_losses: Vec<Tensor<1>>,
    kept_outputs: Vec<Tensor<2>>,
    losses: Vec<f64>,
}

impl Loop {
    fn new(c: LoopConfig, device: Device, steps: usize) -> Self {
        device.seed(5);
        let model = c.shape.init(&device);
        mlp::materialize(&model);
        let (x, y) = c.shape.batch(c.batch, &device);
        Self {
            optim: AdamConfig::new().init(),
            eval_x: x.clone().inner(),
            dataset: (c.pattern == Pattern::CloneSelect)
                .then(|| c.shape.batch(c.batch * DATASET_BATCHES, &device)),
            loader: None,
            kept_losses: Vec::with_capacity(steps),
            kept_outputs: Vec::with_capacity(steps),
            losses: Vec::with_capacity(steps),
            model: Some(model),
            x,
            y,
            c,
            device,
        }
    }

    /// A new epoch's batch, made on a thread of its own as Burn's DataLoader does for each
    /// iter(): the thread gets a CubeCL stream (and pool) of its own.
    fn load(&mut self) -> Pair {
        let (shape, batch, d) = (self.c.shape, self.c.batch, self.device.clone());
        std::thread::spawn(move || {
            let b = shape.batch(batch, &d);
            backend::sync(&d);
            b
        })
        .join()
        .expect("the loader thread makes a batch")
    }

    /// Step `step`'s batch, as the pattern makes it.
    fn batch(&mut self, step: usize) -> Pair {
        let c = self.c;
        match c.pattern {
            Pattern::CloneSelect => {
                let (dx, dy) = self.dataset.as_ref().expect("made for this pattern");
                let first = (step % DATASET_BATCHES * c.batch) as i64;
                let rows = Tensor::<1, Int>::arange(first..first + c.batch as i64, &self.device);
                (
                    dx.clone().select(0, rows.clone()),
                    dy.clone().select(0, rows),
                )
            }
            Pattern::LoaderThread | Pattern::LoaderThreadOneStream => {
                if step.is_multiple_of(EPOCH_STEPS) {
                    self.loader = Some(self.load());
                }
                self.loader.clone().expect("made at the epoch's start")
            }
            _ => (self.x.clone(), self.y.clone()),
        }
    }

    /// One Adam step on `(x, y)`, the loss read (and kept, where the pattern keeps it).
    fn train(&mut self, (x, y): Pair) {
        let m = self.model.take().expect("put back after each step");
        let keep = self.c.pattern == Pattern::KeptLoss;
        let (kept, losses) = (&mut self.kept_losses, &mut self.losses);
        self.model = Some(adam_step(m, &mut self.optim, x, y, |loss| {
            if keep {
                kept.push(loss.clone());
            }
            losses.push(loss.clone().into_scalar::<f64>());
        }));
    }

    /// What the pattern does after the step: evaluate (on the autodiff model or `valid()`),
    /// keep the output, or release the pool's cache.
    fn after_step(&mut self, step: usize, sync: &dyn Fn()) {
        let m = self.model.as_ref().expect("put back by the step");
        match self.c.pattern {
            Pattern::KeptEvalOutput => self.kept_outputs.push(m.forward(self.x.clone())),
            Pattern::EvalOnAutodiff => {
                let _ = m.forward(self.x.clone()).mean().into_scalar::<f32>();
            }
            Pattern::CleanupEvery if step % CLEANUP_EVERY == CLEANUP_EVERY - 1 => {
                sync();
                self.device.memory_cleanup();
            }
            _ => drop(m.valid().forward(self.eval_x.clone())),
        }
    }
}

/// A bench or a paired comparison times one training step of the correct loop, with what the
/// pattern adds where its cost is the question: `memory_cleanup()` every [`CLEANUP_EVERY`]
/// steps, or the monitor's readings around the step. The other patterns' question is their
/// memory, not their time.
fn offer_step(lp: &mut Loop, monitor: &mut Option<StepMonitor<'_>>, sync: &dyn Fn()) {
    let mut offered = 0usize;
    timing::offer(lp.c.batch as u64, &mut || {
        let clock = Instant::now();
        monitored(monitor, || {
            let m = lp.model.take().expect("put back after each step");
            let (x, y) = (lp.x.clone(), lp.y.clone());
            lp.model = Some(adam_step(m, &mut lp.optim, x, y, |_| {}));
        });
        offered += 1;
        if lp.c.pattern == Pattern::CleanupEvery && offered.is_multiple_of(CLEANUP_EVERY) {
            sync();
            lp.device.memory_cleanup();
        }
        sync();
        clock.elapsed()
    });
}

impl OnBackend for LoopPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync(&device);
        // A paired comparison's arm (or a bench) times the step offered below, after the
        // loop's warm-up; the point's own run reads every step.
        let steps = if timing::timing_only() {
            c.warmup_steps
        } else {
            c.steps
        };
        let mut lp = Loop::new(c, device.clone(), steps);
        let mut readings = Readings::with_capacity(steps);
        // The monitored loop's monitor is made before the first step, as the readings' room.
        let readings_of = Monitored(probe);
        let mut monitor = (c.pattern == Pattern::Monitored)
            .then(|| StepMonitor::new(&readings_of, sync).warmup(c.warmup_steps));
        for step in 0..steps {
            sync();
            probe.reset_peak();
            let clock = Instant::now();
            let batch = lp.batch(step);
            monitored(&mut monitor, || lp.train(batch));
            lp.after_step(step, &sync);
            sync();
            readings.record(probe, clock.elapsed().as_secs_f64());
        }
        drop((
            std::mem::take(&mut lp.kept_losses),
            std::mem::take(&mut lp.kept_outputs),
        ));
        offer_step(&mut lp, &mut monitor, &sync);
        let losses = std::mem::take(&mut lp.losses);
        let step_s = std::mem::take(&mut readings.step_s);
        PointResult {
            traces: readings.traces(losses),
            ..PointResult::new(
                probe.info(),
                Vec::new(),
                Timing::from_samples(step_s),
                c.batch as u64,
            )
        }
    }
}
