//! No-grad evaluation: run the model without building an autodiff graph.
//!
//! On Burn's `Autodiff` backend every forward pass records the tensors backward will need, even
//! when no backward follows; `model.valid()` returns the same module on the inner backend, where
//! a pass keeps nothing. The experiment measures both, checks that their outputs are equal, and
//! measures the trap: graphs of passes that are never back-propagated stay alive.

use std::collections::BTreeMap;

use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use crate::backend::{self, OnBackend};
use crate::device::DeviceKind;
use crate::experiment::{
    parse_config, Analysis, Chart, Check, Comparison, Correctness, Experiment, ExperimentError,
    Headline, MeasuredPoint, Point, PointResult, Profile, ReportedFit, Scale, Series, Sizes,
};
use crate::fit::LinearFit;
use crate::format::{self, mib};
use crate::models::MlpShape;
use crate::probe::{delta_spread_bytes, last_repeat, MemoryProbe, PhaseMeter};
use crate::timing;

use crate::batch_size::F32_BYTES;
/// Relative tolerance of the output comparison: the same kernels run on the same data, so the
/// outputs are expected to be identical; the tolerance only allows for a reordered reduction.
const TOLERANCE: f64 = 1e-6;

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
    fn name(self) -> &'static str {
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
    pub shape: MlpShape,
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
        Sizes::Full => vec![256, 1024, 4096],
        // Each pass that is not back-propagated leaves its graph (480 KiB per sample at this
        // model's GPU size) for all ten passes: 19 GiB at the largest batch.
        Sizes::Gpu => vec![1024, 2048, 4096],
    }
}

impl Experiment for NoGrad {
    fn id(&self) -> &'static str {
        "no-grad"
    }

    fn title(&self) -> &'static str {
        "No-grad evaluation"
    }

    fn explanation(&self) -> &'static str {
        "Evaluating a model on the autodiff backend records, for every operation, what backward \
         would need: the activations of the whole pass stay alive. Calling `model.valid()` gives \
         the same module on the inner backend, where a pass only holds the tensor being computed. \
         In Burn the graph of a forward pass that is never back-propagated is not freed when its \
         output is dropped: it lingers until the next `backward()`, so an evaluation loop on the \
         autodiff backend grows memory pass after pass."
    }

    fn on_devices(&self) -> &'static str {
        "The trap is the same on a device: an autodiff forward pass that is never \
         back-propagated keeps its graph, and the graph holds device buffers. CubeCL's \
         pools then keep those pages reserved after the graph is freed, until \
         memory_cleanup() returns them (see memory-summary)."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/no_grad.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let sizes = Sizes::of(profile, device);
        let (warmup, repeats) = crate::batch_size::repeats(profile);
        let shape = crate::batch_size::shape(sizes);
        let mut points = Vec::new();
        for batch in batches(sizes) {
            for mode in [EvalMode::Autodiff, EvalMode::Valid] {
                points.push(Point {
                    id: format!("{}-batch-{batch}", mode.name()),
                    label: format!("{} batch {batch}", mode.name()),
                    warmup,
                    repeats,
                    config: serde_json::to_value(EvalConfig {
                        shape,
                        batch,
                        mode,
                        seed: 7,
                    })
                    .expect("config serialises"),
                });
            }
        }
        points
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        let config: EvalConfig = parse_config(self.id(), point)?;
        backend::dispatch(
            device,
            EvalPoint {
                config,
                warmup: point.warmup,
                repeats: point.repeats,
            },
        )
    }

    fn analyse(&self, points: &[MeasuredPoint]) -> Analysis {
        analyse(points)
    }
}

/// Measures evaluation passes of one configuration.
pub struct EvalPoint {
    /// What to evaluate, and how.
    pub config: EvalConfig,
    /// Untimed passes first.
    pub warmup: usize,
    /// Measured passes.
    pub repeats: usize,
}

impl OnBackend for EvalPoint {
    type Output = PointResult;

    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync::<B>(&device);
        B::seed(&device, c.seed);
        let model = c.shape.init::<B>(&device);
        crate::models::mlp::materialize(&model);
        let (x, _) = c.shape.batch::<B>(c.batch, &device);
        let inner_model = model.valid();
        let inner_x = x.clone().inner();
        // One pass without a graph first, so that the backend's own buffers (matmul workspaces,
        // the thread pool) exist before the baseline is read and are not taken for retention.
        drop(inner_model.forward(inner_x.clone()));
        sync();
        let base = probe.read().in_use_bytes;

        let mut runs = Vec::new();
        let mut retained = Vec::new();
        let mut pass = |runs: &mut Vec<_>| {
            let mut meter = PhaseMeter::new(probe, &sync);
            match c.mode {
                EvalMode::Autodiff => drop(meter.phase("evaluation", || model.forward(x.clone()))),
                EvalMode::Valid => {
                    drop(meter.phase("evaluation", || inner_model.forward(inner_x.clone())))
                }
            }
            runs.push(meter.finish());
            sync();
            retained.push(probe.read().in_use_bytes.saturating_sub(base) as f64);
        };
        let mut warm_runs = Vec::new();
        for _ in 0..self.warmup {
            pass(&mut warm_runs);
        }
        let timing = timing::repeat(0, self.repeats, c.batch as u64, || pass(&mut runs));
        let phases = last_repeat(&runs);

        // The check: the same input through both paths. Read after the measurement so that its
        // own graph is not counted above.
        let reference = inner_model
            .forward(inner_x.clone())
            .into_data()
            .to_vec::<f32>()
            .unwrap_or_default();
        let candidate = model
            .forward(x.clone())
            .into_data()
            .to_vec::<f32>()
            .unwrap_or_default();
        let check = Check::compare(
            "outputs of valid() against the autodiff backend",
            &reference,
            &candidate,
            TOLERANCE,
        );

        let mut metrics = BTreeMap::new();
        if c.mode == EvalMode::Autodiff {
            // Does a backward() release the graphs that no backward consumed?
            sync();
            let held = probe.read().in_use_bytes.saturating_sub(base);
            drop(model.forward(x.clone()).mean().backward());
            sync();
            let after = probe.read().in_use_bytes.saturating_sub(base);
            metrics.insert("held_before_backward_bytes".into(), held as f64);
            metrics.insert("held_after_backward_bytes".into(), after as f64);
        }

        let per_pass = LinearFit::fit(
            &retained
                .iter()
                .enumerate()
                .map(|(i, &b)| ((i + 1) as f64, b))
                .collect::<Vec<_>>(),
        );
        metrics.insert("live_before_bytes".into(), base as f64);
        metrics.insert(
            "repeat_delta_spread_bytes".into(),
            delta_spread_bytes(&runs) as f64,
        );
        if let Some(phase) = phases.first() {
            metrics.insert("eval_bytes".into(), phase.delta_bytes() as f64);
        }
        metrics.insert(
            "retained_per_pass_bytes".into(),
            per_pass.map_or(f64::NAN, |f| f.slope),
        );
        let mut traces = BTreeMap::new();
        traces.insert("retained_bytes_by_pass".into(), retained);

        PointResult {
            probe: probe.info(),
            phases,
            samples_per_s: timing.per_second(c.batch as f64),
            step: timing,
            samples_per_step: c.batch as u64,
            metrics,
            traces,
            checks: vec![check],
        }
    }
}

struct Row {
    config: EvalConfig,
    result: PointResult,
}

/// The analysis of the no-grad experiment.
pub fn analyse(points: &[MeasuredPoint]) -> Analysis {
    let mut rows: Vec<Row> = points
        .iter()
        .filter_map(|p| {
            Some(Row {
                config: p.config()?,
                result: p.result()?.clone(),
            })
        })
        .collect();
    rows.sort_by_key(|r| r.config.batch);
    let correctness = Correctness::of(points);
    let of =
        |mode: EvalMode| -> Vec<&Row> { rows.iter().filter(|r| r.config.mode == mode).collect() };
    let (autodiff, valid) = (of(EvalMode::Autodiff), of(EvalMode::Valid));
    let largest_pair = autodiff.iter().rev().find_map(|a| {
        valid
            .iter()
            .find(|v| v.config.batch == a.config.batch)
            .map(|v| (*a, *v))
    });
    let Some((ad, va)) = largest_pair else {
        return Analysis::unmeasured(correctness);
    };
    let shape = ad.config.shape;
    let batch = ad.config.batch as f64;

    let eval_points = |rows: &[&Row]| -> Vec<(f64, f64)> {
        rows.iter()
            .map(|r| (r.config.batch as f64, r.result.metric("eval_bytes")))
            .collect()
    };
    let ad_fit = LinearFit::fit(&eval_points(&autodiff));
    let va_fit = LinearFit::fit(&eval_points(&valid));
    let mut fits = Vec::new();
    let mut findings = Vec::new();
    if let (Some(a), Some(v)) = (&ad_fit, &va_fit) {
        findings.push(format!(
            "A forward pass adds {} per sample at its peak on the autodiff backend and {} per \
             sample through valid() (fits over {} batch sizes).",
            format::bytes(a.slope),
            format::bytes(v.slope),
            a.n
        ));
        fits.push(ReportedFit {
            what: "evaluation peak above the model and inputs against batch size, autodiff".into(),
            fit: a.clone(),
        });
        fits.push(ReportedFit {
            what: "evaluation peak above the model and inputs against batch size, valid()".into(),
            fit: v.clone(),
        });
    }
    let ad_eval = ad.result.metric("eval_bytes");
    let va_eval = va.result.metric("eval_bytes");
    let retained_by_pass = |r: &Row| -> Vec<f64> {
        r.result
            .traces
            .get("retained_bytes_by_pass")
            .cloned()
            .unwrap_or_default()
    };
    let (retained, va_retained) = (retained_by_pass(ad), retained_by_pass(va));
    findings.push(format!(
        "The trap: at batch {}, each autodiff pass whose output is dropped without backward \
         leaves {} behind; after {} passes {} were still held. With the check's pass on top, {} \
         were held; a backward() on one more pass brought that to {}. Through valid(), {} passes \
         left {}.",
        ad.config.batch,
        format::bytes(ad.result.metric("retained_per_pass_bytes")),
        retained.len(),
        format::bytes(retained.last().copied().unwrap_or(f64::NAN)),
        format::bytes(ad.result.metric("held_before_backward_bytes")),
        format::bytes(ad.result.metric("held_after_backward_bytes")),
        va_retained.len(),
        format::bytes(va_retained.last().copied().unwrap_or(f64::NAN)),
    ));
    findings.push(format!(
        "Throughput at batch {}: {} samples/s on the autodiff backend, {} through valid().",
        ad.config.batch,
        format::rate(ad.result.samples_per_s),
        format::rate(va.result.samples_per_s)
    ));

    let comparisons = vec![
        Comparison {
            quantity: "valid(): bytes per sample at the pass's peak".into(),
            predicted_bytes: shape.predicted_inference_bytes_per_sample(F32_BYTES) as f64,
            measured_bytes: va_fit.as_ref().map_or(f64::NAN, |f| f.slope),
            note: "a layer's input and its output (width x 4 bytes each), every other op running \
                   in place on a uniquely owned buffer. A measured excess of one width per sample \
                   is a third buffer live at the peak; the matmul's packing of its input is the \
                   likely source (not separated here)"
                .into(),
        },
        Comparison {
            quantity: format!("graph left by one autodiff pass, batch {}", ad.config.batch),
            predicted_bytes: shape.predicted_graph_bytes_per_sample(F32_BYTES) as f64 * batch,
            measured_bytes: ad.result.metric("retained_per_pass_bytes"),
            note: "the Linear and ReLU outputs of every hidden layer, saved for a backward that \
                   never comes; measured as the slope of bytes held against passes"
                .into(),
        },
    ];

    let by_batch = |rows: &[&Row], metric: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .map(|r| (r.config.batch as f64, mib(r.result.metric(metric))))
            .collect()
    };
    let mut retained_series = Vec::new();
    for r in autodiff.iter().chain(valid.iter()) {
        if let Some(trace) = r.result.traces.get("retained_bytes_by_pass") {
            retained_series.push(Series::line(
                &format!("{} batch {}", r.config.mode.name(), r.config.batch),
                false,
                trace
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| ((i + 1) as f64, mib(b)))
                    .collect(),
            ));
        }
    }
    let charts = vec![
        Chart {
            id: "eval-peak-vs-batch".into(),
            title: "Memory an evaluation pass adds above the model and inputs".into(),
            x_label: "batch size (samples)".into(),
            y_label: "peak above live bytes (MiB)".into(),
            x_scale: Scale::Log2,
            series: vec![
                Series::line(
                    "autodiff backend (measured)",
                    false,
                    by_batch(&autodiff, "eval_bytes"),
                ),
                Series::line("valid() (measured)", false, by_batch(&valid, "eval_bytes")),
                Series::line(
                    "valid() (predicted)",
                    true,
                    valid
                        .iter()
                        .map(|r| {
                            let b = r.config.batch as f64;
                            (
                                b,
                                mib(b * shape.predicted_inference_bytes_per_sample(F32_BYTES)
                                    as f64),
                            )
                        })
                        .collect(),
                ),
            ],
        },
        Chart {
            id: "eval-throughput".into(),
            title: "Evaluation throughput".into(),
            x_label: "batch size (samples)".into(),
            y_label: "throughput (samples/s)".into(),
            x_scale: Scale::Log2,
            series: vec![
                Series::throughput(
                    "autodiff backend (median; bars: fastest and slowest)",
                    autodiff.iter().map(|r| (r.config.batch as f64, &r.result)),
                ),
                Series::throughput(
                    "valid() (median; bars: fastest and slowest)",
                    valid.iter().map(|r| (r.config.batch as f64, &r.result)),
                ),
            ],
        },
        Chart {
            id: "retained-by-pass".into(),
            title: "Memory held after each pass whose output was dropped".into(),
            x_label: "pass (warm-up included)".into(),
            y_label: "bytes still held (MiB)".into(),
            x_scale: Scale::Linear,
            series: retained_series,
        },
    ];

    let detail = crate::experiment::worst_check(points);
    Analysis {
        headline: Headline {
            compared: format!(
                "evaluation at batch {}: autodiff backend against valid() (peak above the model \
                 and inputs; samples/s)",
                ad.config.batch
            ),
            memory_saved_bytes: Some(ad_eval - va_eval),
            memory_saved_pct: Some((ad_eval - va_eval) / ad_eval * 100.0),
            throughput_cost_pct: Some(
                (ad.result.samples_per_s - va.result.samples_per_s) / ad.result.samples_per_s
                    * 100.0,
            ),
            correctness,
            correctness_detail: detail,
        },
        findings,
        comparisons,
        fits,
        charts,
        published: vec![],
    }
}
