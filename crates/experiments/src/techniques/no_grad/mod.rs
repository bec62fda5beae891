//! No-grad evaluation: run the model without building an autodiff graph.
//!
//! Question: what does evaluating on the autodiff backend cost against `model.valid()`, and what
//! do forward passes that are never back-propagated leave behind?
//! Method: evaluation passes of the MLP at three batch sizes both ways, each point in its own
//! process: the peak above the model and inputs, the bytes held after each pass (fitted per
//! pass), and what a later `backward()` releases; the proof compares the outputs of both ways.
//! Answer: on Burn's `Autodiff` backend every forward pass records the tensors backward would
//! need; `valid()` returns the same module on the inner backend, where a pass keeps nothing and
//! the outputs are identical. The graph of a pass that is never back-propagated stays alive
//! until the next `backward()`, so an evaluation loop on the autodiff backend grows pass by pass.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::models::BuildModel;
use results::TechniqueId;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use burn::module::Module;
use results::{
    Check, ComparisonSpec, DeviceKind, LinearFit, Metric, Metrics, Phase, PhaseMemory, PhaseTiming,
    PointResult, Profile, PutMetric, Trace,
};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::models::{
    sweeps_the_small_transformer, training_mlp, training_transformer, Batch, Model, ModelShape,
};
use crate::harness::probe::{
    bracketed_step, delta_spread_bytes, last_repeat, MemoryProbe, PhaseMeter,
};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::tensor::Device;

results::metric_keys! {
    /// What no-grad evaluation measures beyond the shared metrics.
    pub enum NoGradMetric {
        /// Bytes held after backward.
        HeldAfterBackwardBytes = "held_after_backward_bytes",
        /// Bytes held before backward.
        HeldBeforeBackwardBytes = "held_before_backward_bytes",
        /// Bytes each un-back-propagated pass leaves behind (fitted).
        RetainedPerPassBytes = "retained_per_pass_bytes",
    }
}

/// Relative tolerance of the output comparison (of the largest output): both paths run Burn's
/// kernels on the same data, but a long sum may run in another order (GPT-2 small's logits
/// differed by 6e-7 to 1.1e-6 of the largest from one run to the next; the MLP's by none). A
/// reordered f32 sum of `n` terms moves by about `sqrt(n)` units of f32's epsilon, and the
/// output passes through each layer's longest sum: epsilon x sqrt(longest sum x layers), 2.4e-5
/// for GPT-2 small, 1.1e-5 for the 8 x 1,024 MLP. A path that skips or repeats a layer, or
/// reads other weights, moves the outputs by their own size.
fn tolerance(shape: &ModelShape) -> f64 {
    let (longest_sum, layers) = match shape {
        ModelShape::Mlp(s) => (s.width, s.depth),
        // GPT-2's MLP is four times the width; attention sums over the sequence.
        ModelShape::Transformer(s) => ((4 * s.d_model).max(s.seq), s.layers),
        ModelShape::Llama(s) => (s.mlp.max(s.seq).max(s.d_model), s.layers),
    };
    f64::from(f32::EPSILON) * ((longest_sum * (layers + 1)) as f64).sqrt()
}

/// How the evaluation pass is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvalMode {
    /// `model.forward(x)` on the autodiff backend, the output never back-propagated.
    Autodiff,
    /// `model.valid().forward(x.inner())`: the inner backend, no graph.
    Valid,
}

impl EvalMode {
    /// The mode's name in ids and labels.
    pub fn name(self) -> &'static str {
        match self {
            EvalMode::Autodiff => "autodiff",
            EvalMode::Valid => "valid",
        }
    }
}

/// Configuration of one no-grad point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EvalConfig {
    /// The model evaluated.
    pub shape: ModelShape,
    /// Samples per pass.
    pub batch: usize,
    /// Autodiff or `valid()`.
    pub mode: EvalMode,
    /// Seed of the backend's generator.
    pub seed: u64,
}

/// The no-grad experiment.
pub struct NoGrad;

fn batches(sizes: Sizes) -> Vec<usize> {
    match sizes {
        Sizes::Quick => vec![64, 128, 256],
        Sizes::Full => vec![256, 1024, 2048],
        // Each pass that is not back-propagated leaves its graph (480 KiB per sample at this
        // model's GPU size) for all ten passes: 19 GiB at the largest batch.
        Sizes::FullCuda => vec![1024, 2048, 4096],
    }
}

/// The transformer's batches (sequences per pass).
fn transformer_batches(sizes: Sizes) -> Vec<usize> {
    match sizes {
        Sizes::Quick | Sizes::Full => vec![4, 16],
        Sizes::FullCuda => vec![8, 32],
    }
}

impl Technique for NoGrad {
    type Config = EvalConfig;
    const ID: TechniqueId = TechniqueId::NoGrad;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<EvalConfig>> {
        let sizes = Sizes::of(profile, device);
        let mlp = ModelShape::Mlp(training_mlp(sizes));
        let transformer = ModelShape::Transformer(training_transformer(sizes));
        let mut points = Vec::new();
        let transformer_batches = if sweeps_the_small_transformer(sizes) {
            transformer_batches(sizes)
        } else {
            Vec::new()
        };
        for (shape, batches) in [(mlp, batches(sizes)), (transformer, transformer_batches)] {
            let (id, label) = match shape {
                ModelShape::Mlp(_) => ("", ""),
                ModelShape::Transformer(_) => ("transformer-", "transformer, "),
                ModelShape::Llama(_) => ("llama-", "llama, "),
            };
            for batch in batches {
                for mode in [EvalMode::Autodiff, EvalMode::Valid] {
                    points.push(Planned::new(
                        format!("{id}{}-batch-{batch}", mode.name()),
                        format!("{label}{} batch {batch}", mode.name()),
                        profile,
                        EvalConfig {
                            shape,
                            batch,
                            mode,
                            seed: 7,
                        },
                    ));
                }
            }
        }
        points
    }

    fn comparisons(&self, rows: &[Row<'_, EvalConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn run_point(&self, config: &EvalConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        device.dispatch(
            Setup {
                pool: Pool::ExclusivePages,
                ..Setup::default()
            },
            EvalPoint {
                config: *config,
                repeats,
            },
        )
    }
}

/// Measures evaluation passes of one configuration.
pub struct EvalPoint {
    /// What to evaluate, and how.
    pub config: EvalConfig,
    /// Untimed and timed repeats.
    pub repeats: Repeats,
}

/// The model and its input on both paths: the autodiff backend and `valid()`.
struct Eval {
    mode: EvalMode,
    shape: ModelShape,
    model: Model,
    x: Batch,
    inner_model: Model,
    inner_x: Batch,
}

impl Eval {
    /// One evaluation pass, metered into `runs`; its time (the device synchronised) is the
    /// pass alone.
    fn pass(
        &self,
        probe: &dyn MemoryProbe,
        sync: &dyn Fn(),
        runs: &mut Vec<Vec<PhaseMemory>>,
    ) -> Duration {
        let mut meter = PhaseMeter::new(probe, sync);
        let clock = Instant::now();
        match self.mode {
            EvalMode::Autodiff => {
                drop(meter.phase(Phase::Evaluation, || self.model.output(&self.x)))
            }
            EvalMode::Valid => {
                drop(meter.phase(Phase::Evaluation, || self.inner_model.output(&self.inner_x)))
            }
        }
        let elapsed = clock.elapsed();
        runs.push(meter.finish());
        elapsed
    }

    /// A backward through the model (on one row) frees the graphs of earlier passes that no
    /// backward consumed: their parents, the parameters' nodes, are consumed by it.
    fn release(&self, sync: &dyn Fn()) {
        if self.mode == EvalMode::Autodiff {
            drop(self.model.output(&self.x.narrow(0, 1)).sum().backward());
        }
        sync();
    }

    /// The check: the same input through both paths.
    fn check(&self) -> Check {
        let reference = self
            .inner_model
            .output(&self.inner_x)
            .into_data()
            .try_to_vec::<f32>()
            .unwrap_or_default();
        let candidate = self
            .model
            .output(&self.x)
            .into_data()
            .try_to_vec::<f32>()
            .unwrap_or_default();
        Check::compare(
            "valid-against-autodiff",
            &reference,
            &candidate,
            tolerance(&self.shape),
        )
    }
}

/// The leak, on its own: passes whose graphs are never released, and the bytes held above
/// `base` after each.
fn leaking_passes(
    ev: &Eval,
    probe: &dyn MemoryProbe,
    sync: &dyn Fn(),
    repeats: Repeats,
    base: u64,
) -> Vec<f64> {
    let mut leak_runs = Vec::new();
    let mut retained = Vec::new();
    let mut leaking_pass = || {
        ev.pass(probe, sync, &mut leak_runs);
        sync();
        retained.push(probe.read().in_use_bytes.saturating_sub(base) as f64);
    };
    repeats.warm_up(&mut leaking_pass);
    for _ in 0..repeats.repeats.max(1) {
        leaking_pass();
    }
    retained
}

/// Whether a backward() releases the graphs that no backward consumed: the bytes held above
/// `base` before and after one.
fn held_around_backward(
    ev: &Eval,
    probe: &dyn MemoryProbe,
    sync: &dyn Fn(),
    base: u64,
    metrics: &mut Metrics,
) {
    if ev.mode == EvalMode::Autodiff {
        sync();
        let held = probe.read().in_use_bytes.saturating_sub(base);
        ev.release(sync);
        let after = probe.read().in_use_bytes.saturating_sub(base);
        metrics.put(NoGradMetric::HeldBeforeBackwardBytes, held as f64);
        metrics.put(NoGradMetric::HeldAfterBackwardBytes, after as f64);
    }
}

/// The pass's bytes and the leak's slope, into `metrics`.
fn put_metrics(
    metrics: &mut Metrics,
    base: u64,
    runs: &[Vec<PhaseMemory>],
    phases: &[PhaseMemory],
    retained: &[f64],
) {
    let per_pass = LinearFit::fit(
        &retained
            .iter()
            .enumerate()
            .map(|(i, &b)| ((i + 1) as f64, b))
            .collect::<Vec<_>>(),
    );
    metrics.put(Metric::LiveBeforeBytes, base as f64);
    metrics.put(
        Metric::RepeatDeltaSpreadBytes,
        delta_spread_bytes(runs) as f64,
    );
    if let Some(phase) = phases.first() {
        metrics.put(Metric::EvalBytes, phase.delta_bytes() as f64);
    }
    metrics.put(
        NoGradMetric::RetainedPerPassBytes,
        per_pass.map_or(f64::NAN, |f| f.slope),
    );
}

impl OnBackend for EvalPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync(&device);
        device.seed(c.seed);
        let model = c.shape.init(&device);
        crate::harness::models::mlp::materialize(&model);
        let x = c.shape.batch(c.batch, c.seed, &device);
        let ev = Eval {
            mode: c.mode,
            shape: c.shape,
            inner_model: model.valid(),
            inner_x: x.inner(),
            model,
            x,
        };
        // One pass without a graph first, so that the backend's own buffers (matmul workspaces,
        // the thread pool) exist before the baseline is read and are not taken for retention.
        drop(ev.inner_model.output(&ev.inner_x));
        sync();
        let base = probe.read().in_use_bytes;
        let retained = leaking_passes(&ev, probe, &sync, self.repeats, base);
        let mut metrics = BTreeMap::new();
        held_around_backward(&ev, probe, &sync, base, &mut metrics);
        ev.release(&sync);
        // The time: each pass followed, outside the clock, by the release of its graph, so
        // that a pass is not timed while the graphs of earlier ones pile up.
        let mut runs = Vec::new();
        let (unit, units) = c.shape.units(c.batch);
        let timing = timing::repeat_timed(self.repeats.repeats, units, || {
            let elapsed = ev.pass(probe, &sync, &mut runs);
            ev.release(&sync);
            elapsed
        });
        let phases = bracketed_step(probe, |b| {
            ev.pass(probe, &sync, b);
            ev.release(&sync);
        })
        .unwrap_or_else(|| last_repeat(&runs));
        // Read after the measurement so that its own graph is not counted above.
        let check = ev.check();
        put_metrics(&mut metrics, base, &runs, &phases, &retained);
        let mut traces = BTreeMap::new();
        traces.insert(Trace::RetainedBytesByPass, retained);
        PointResult {
            metrics,
            traces,
            checks: vec![check],
            phase_times: PhaseTiming::of_runs(&runs),
            ..PointResult::new(probe.info(), phases, timing, units).in_unit(unit)
        }
    }
}
