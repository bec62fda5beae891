//! Gradient checkpointing: keep fewer activations, recompute them in backward.
//!
//! Burn switches it on in the autodiff backend's type: `Autodiff<B, BalancedCheckpointing>`
//! recomputes the outputs of memory-bound operations (ReLU, additions) during backward from the
//! nearest kept output of a compute-bound one (a Linear), instead of keeping them from the
//! forward pass. The experiment sweeps depth and batch with and without it, checks that the
//! gradients are unchanged, and finds where it starts to lower the step's peak: only once
//! activations, not parameter gradients, set that peak.

use burn::backend::Autodiff;
use burn::optim::GradientsParams;
use burn::tensor::backend::AutodiffBackend;

use crate::backend::Checkpointing;
use crate::batch_size::{ADAM_STATE_PER_PARAM, F32_BYTES};
use crate::device::DeviceKind;
use crate::experiment::{
    worst_check, Analysis, Chart, Check, Comparison, Correctness, Experiment, ExperimentError,
    Headline, MeasuredPoint, Point, PointResult, Profile, PublishedFigure, Scale, Series, Sizes,
};
use crate::format::{self, mib};
use crate::models::{mlp, MlpShape};
use crate::train::{run_train_point, TrainConfig};

/// Recomputation runs the same kernels on the same values: the gradients must be identical up
/// to a reordered reduction.
const TOLERANCE: f64 = 1e-6;

/// The checkpointing experiment.
pub struct GradientCheckpointing;

/// The sweeps of a profile: width, the depths (at a fixed batch), and the batches (at a
/// fixed depth).
struct Sweeps {
    width: usize,
    depths: Vec<usize>,
    depth_sweep_batch: usize,
    batches: Vec<usize>,
    batch_sweep_depth: usize,
}

fn sweeps(sizes: Sizes) -> Sweeps {
    match sizes {
        Sizes::Quick => Sweeps {
            width: 128,
            depths: vec![4, 16, 64],
            depth_sweep_batch: 256,
            batches: vec![16, 64, 256, 1024],
            batch_sweep_depth: 16,
        },
        Sizes::Full => Sweeps {
            width: 512,
            depths: vec![4, 8, 16, 32, 64],
            depth_sweep_batch: 1024,
            batches: vec![64, 128, 256, 512, 1024, 2048, 4096],
            batch_sweep_depth: 16,
        },
        Sizes::Gpu => Sweeps {
            width: 2048,
            depths: vec![4, 8, 16, 32, 64],
            depth_sweep_batch: 4096,
            batches: vec![256, 512, 1024, 2048, 4096, 8192, 16384],
            batch_sweep_depth: 16,
        },
    }
}

fn strategy_name(c: Checkpointing) -> &'static str {
    match c {
        Checkpointing::None => "no checkpointing",
        Checkpointing::Balanced => "balanced checkpointing",
    }
}

impl Experiment for GradientCheckpointing {
    fn id(&self) -> &'static str {
        "checkpointing"
    }

    fn title(&self) -> &'static str {
        "Gradient checkpointing"
    }

    fn explanation(&self) -> &'static str {
        "Backward needs tensors from the forward pass; checkpointing keeps fewer of them and \
         recomputes the rest when backward asks. In Burn it is a property of the autodiff \
         backend: Autodiff<B, BalancedCheckpointing> recomputes the outputs of memory-bound ops \
         (ReLU, additions) from the nearest kept output of a compute-bound op (a Linear), \
         trading a little compute for activation memory. It lowers the step's peak only where \
         activations, not parameter gradients, set it."
    }

    fn on_devices(&self) -> &'static str {
        "Which tensors are kept and which recomputed is decided by Burn's autodiff, above the \
         backend, so the memory rules (and the predictions) are the same on every \
         device. What changes on a GPU is the price of recomputing: memory-bound ops are \
         cheap there relative to matmuls, which is why the balanced strategy recomputes \
         those."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/checkpointing.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let s = sweeps(Sizes::of(profile, device));
        let mut configs: Vec<(usize, usize)> = s
            .depths
            .iter()
            .map(|&d| (d, s.depth_sweep_batch))
            .chain(s.batches.iter().map(|&b| (s.batch_sweep_depth, b)))
            .collect();
        configs.sort_unstable();
        configs.dedup();
        let mut points = Vec::new();
        for (depth, batch) in configs {
            for checkpointing in [Checkpointing::None, Checkpointing::Balanced] {
                let name = match checkpointing {
                    Checkpointing::None => "plain",
                    Checkpointing::Balanced => "balanced",
                };
                points.push(
                    TrainConfig {
                        shape: MlpShape {
                            width: s.width,
                            depth,
                        },
                        batch,
                        lr: 1e-4,
                        seed: 5,
                        micro_batches: 1,
                        checkpointing,
                    }
                    .point(
                        format!("depth-{depth}-batch-{batch}-{name}"),
                        format!("depth {depth}, batch {batch}, {name}"),
                        profile,
                    ),
                );
            }
        }
        points
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        run_train_point(self.id(), point, device)
    }

    fn analyse(&self, points: &[MeasuredPoint]) -> Analysis {
        analyse(points)
    }
}

/// The gradients of one step from fresh weights, computed on `B` (checkpointing as its type
/// says) and on the same inner backend without checkpointing, compared.
pub fn check<B: AutodiffBackend>(config: &TrainConfig, device: &B::Device) -> Check {
    let plain = gradients::<Autodiff<B::InnerBackend>>(config, device);
    let candidate = gradients::<B>(config, device);
    Check::compare(
        "parameter gradients with checkpointing against without",
        &plain,
        &candidate,
        TOLERANCE,
    )
}

/// Every parameter's gradient after one forward and backward from the seeded initial weights,
/// flattened in module order.
fn gradients<B: AutodiffBackend>(config: &TrainConfig, device: &B::Device) -> Vec<f32> {
    B::seed(device, config.seed);
    let model = config.shape.init::<B>(device);
    mlp::materialize(&model);
    let (x, y) = config.shape.batch::<B>(config.batch, device);
    let grads = GradientsParams::from_grads(mlp::loss(&model, x, y).backward(), &model);
    mlp::flatten(&model, Some(&grads))
}

/// Predicted step peak: model, Adam state and inputs, plus the larger of the forward pass's
/// activations and the parameter gradients.
pub fn predicted_step_peak(shape: MlpShape, batch: usize, checkpointing: Checkpointing) -> f64 {
    let p = shape.num_params() as f64;
    let fixed = p * (F32_BYTES + ADAM_STATE_PER_PARAM) as f64;
    let inputs = 2.0 * (batch * shape.width) as f64 * F32_BYTES as f64;
    let activations = batch as f64 * predicted_activation_bytes_per_sample(shape, checkpointing);
    fixed + inputs + activations.max(p * F32_BYTES as f64)
}

fn predicted_activation_bytes_per_sample(shape: MlpShape, checkpointing: Checkpointing) -> f64 {
    (match checkpointing {
        Checkpointing::None => shape.predicted_activation_bytes_per_sample(F32_BYTES),
        Checkpointing::Balanced => {
            shape.predicted_checkpointed_activation_bytes_per_sample(F32_BYTES)
        }
    }) as f64
}

struct Row {
    config: TrainConfig,
    result: PointResult,
}

impl Row {
    fn peak(&self) -> f64 {
        self.result.peak_bytes() as f64
    }

    fn predicted_peak(&self) -> f64 {
        predicted_step_peak(
            self.config.shape,
            self.config.batch,
            self.config.checkpointing,
        )
    }
}

/// Pairs of (plain, balanced) rows with equal depth and batch, in `key` order.
fn pairs(rows: &[Row], keep: impl Fn(&Row) -> bool) -> Vec<(&Row, &Row)> {
    rows.iter()
        .filter(|r| r.config.checkpointing == Checkpointing::None && keep(r))
        .filter_map(|p| {
            rows.iter()
                .find(|b| {
                    b.config.checkpointing == Checkpointing::Balanced
                        && b.config.shape == p.config.shape
                        && b.config.batch == p.config.batch
                })
                .map(|b| (p, b))
        })
        .collect()
}

/// The analysis of the checkpointing experiment.
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
    rows.sort_by_key(|r| (r.config.shape.depth, r.config.batch));
    let correctness = Correctness::of(points);
    // The depth sweep is the only one reaching the largest depth, the batch sweep the only one
    // reaching the largest batch.
    let (Some(max_depth), Some(max_batch)) = (
        rows.iter().map(|r| r.config.shape.depth).max(),
        rows.iter().map(|r| r.config.batch).max(),
    ) else {
        return Analysis::unmeasured(correctness);
    };
    let depth_batch = rows
        .iter()
        .find(|r| r.config.shape.depth == max_depth)
        .map_or(0, |r| r.config.batch);
    let batch_depth = rows
        .iter()
        .find(|r| r.config.batch == max_batch)
        .map_or(0, |r| r.config.shape.depth);
    let by_depth = pairs(&rows, |r| r.config.batch == depth_batch);
    let mut by_batch = pairs(&rows, |r| r.config.shape.depth == batch_depth);
    by_batch.sort_by_key(|(p, _)| p.config.batch);
    let Some(&(deep_plain, deep_bal)) = by_depth.last() else {
        return Analysis::unmeasured(correctness);
    };

    let saved = |p: &Row, b: &Row| p.peak() - b.peak();
    let overhead_pct =
        |p: &Row, b: &Row| (b.result.step.median_s / p.result.step.median_s - 1.0) * 100.0;
    let activation = |r: &Row| r.result.metric("activation_bytes");
    let mut findings = Vec::new();
    findings.push(format!(
        "At depth {} and batch {}: step peak {} without checkpointing, {} with ({}); the forward \
         pass keeps {} against {} ({:.3} of it); a step takes {} against {} ({}; repeats ranged \
         {} to {} and {} to {}: a time cost smaller than that spread is not resolved here).",
        max_depth,
        depth_batch,
        format::bytes(deep_plain.peak()),
        format::bytes(deep_bal.peak()),
        format::pct(-saved(deep_plain, deep_bal) / deep_plain.peak() * 100.0),
        format::bytes(activation(deep_plain)),
        format::bytes(activation(deep_bal)),
        activation(deep_bal) / activation(deep_plain),
        format::seconds(deep_plain.result.step.median_s),
        format::seconds(deep_bal.result.step.median_s),
        format::pct(overhead_pct(deep_plain, deep_bal)),
        format::seconds(deep_plain.result.step.min_s),
        format::seconds(deep_plain.result.step.max_s),
        format::seconds(deep_bal.result.step.min_s),
        format::seconds(deep_bal.result.step.max_s),
    ));
    // Where it starts to pay: the smallest batch at which the balanced peak is lower by more
    // than the repeat-to-repeat spread of the bytes measured (1%, generously).
    let pays = by_batch.iter().find(|(p, b)| saved(p, b) > 0.01 * p.peak());
    let grads = |r: &Row| r.result.metric("grad_bytes");
    if let Some(&(p, _)) = by_batch.first() {
        let shape = p.config.shape;
        let grad_bytes = shape.num_params() as f64 * F32_BYTES as f64;
        let crossover =
            grad_bytes / predicted_activation_bytes_per_sample(shape, Checkpointing::None);
        findings.push(format!(
            "Where it starts to pay (depth {}): the parameter gradients ({} measured) set the \
             step's peak until the forward pass's activations outgrow them, predicted at batch \
             {:.0} without checkpointing. {}",
            shape.depth,
            format::bytes(grads(p)),
            crossover,
            match pays {
                Some((pp, bb)) => format!(
                    "Checkpointing first lowers the measured peak by more than 1% at batch {} \
                     ({} -> {}).",
                    pp.config.batch,
                    format::bytes(pp.peak()),
                    format::bytes(bb.peak())
                ),
                None => "No measured batch showed a saving above 1%.".into(),
            }
        ));
    }

    let mut comparisons = Vec::new();
    for (p, b) in [(deep_plain, deep_bal)]
        .into_iter()
        .chain(by_batch.last().copied())
    {
        for r in [p, b] {
            comparisons.push(Comparison {
                quantity: format!(
                    "forward activations, depth {}, batch {}, {}",
                    r.config.shape.depth,
                    r.config.batch,
                    strategy_name(r.config.checkpointing)
                ),
                predicted_bytes: r.config.batch as f64
                    * predicted_activation_bytes_per_sample(r.config.shape, r.config.checkpointing),
                measured_bytes: activation(r),
                note: match r.config.checkpointing {
                    Checkpointing::None => {
                        "each hidden layer's Linear and ReLU outputs, plus the last output and \
                         the loss's difference"
                    }
                    Checkpointing::Balanced => {
                        "each hidden layer's Linear output only (ReLU recomputed in backward), \
                         plus the last output, the loss's difference and the last ReLU output \
                         still live as the last Linear's input"
                    }
                }
                .into(),
            });
            comparisons.push(Comparison {
                quantity: format!(
                    "step peak, depth {}, batch {}, {}",
                    r.config.shape.depth,
                    r.config.batch,
                    strategy_name(r.config.checkpointing)
                ),
                predicted_bytes: r.predicted_peak(),
                measured_bytes: r.peak(),
                note: "model + Adam state + inputs + the larger of activations and parameter \
                       gradients; the process baseline (thread pool, matmul slabs) and \
                       temporaries inside backward, including recomputed outputs, are not \
                       predicted"
                    .into(),
            });
        }
    }

    // Step peak (measured or predicted) of one strategy along a sweep, against `x`.
    let peak_line = |pairs: &[(&Row, &Row)], x: fn(&Row) -> f64, c: Checkpointing, predicted| {
        pairs
            .iter()
            .map(|(p, b)| {
                let r = if c == Checkpointing::None { p } else { b };
                let y = if predicted {
                    r.predicted_peak()
                } else {
                    r.peak()
                };
                (x(r), mib(y))
            })
            .collect::<Vec<(f64, f64)>>()
    };
    let depth = |r: &Row| r.config.shape.depth as f64;
    let batch = |r: &Row| r.config.batch as f64;
    let depth_line = |c, predicted| peak_line(&by_depth, depth, c, predicted);
    let batch_line = |c, predicted| peak_line(&by_batch, batch, c, predicted);
    let mut peak_by_depth = Vec::new();
    let mut peak_by_batch = Vec::new();
    for c in [Checkpointing::None, Checkpointing::Balanced] {
        let name = strategy_name(c);
        peak_by_depth.push(Series::line(
            &format!("{name} (measured)"),
            false,
            depth_line(c, false),
        ));
        peak_by_depth.push(Series::line(
            &format!("{name} (predicted)"),
            true,
            depth_line(c, true),
        ));
        peak_by_batch.push(Series::line(
            &format!("{name} (measured)"),
            false,
            batch_line(c, false),
        ));
        peak_by_batch.push(Series::line(
            &format!("{name} (predicted)"),
            true,
            batch_line(c, true),
        ));
    }
    let overhead = |pairs: &[(&Row, &Row)], x: fn(&Row) -> f64| -> Vec<(f64, f64)> {
        pairs
            .iter()
            .map(|(p, b)| (x(p), overhead_pct(p, b)))
            .collect()
    };
    let charts = vec![
        Chart {
            id: "peak-vs-depth".into(),
            title: format!("Step peak against depth (batch {depth_batch})"),
            x_label: "depth (Linear layers)".into(),
            y_label: "step peak (MiB)".into(),
            x_scale: Scale::Log2,
            series: peak_by_depth,
        },
        Chart {
            id: "overhead-vs-depth".into(),
            title: "Time cost of checkpointing (median step time, balanced against plain)".into(),
            x_label: "depth (Linear layers)".into(),
            y_label: "extra step time (%)".into(),
            x_scale: Scale::Log2,
            series: vec![Series::line(
                &format!("against depth (batch {depth_batch})"),
                false,
                overhead(&by_depth, depth),
            )],
        },
        Chart {
            id: "peak-vs-batch".into(),
            title: format!("Step peak against batch size (depth {batch_depth}): where it pays"),
            x_label: "batch size (samples)".into(),
            y_label: "step peak (MiB)".into(),
            x_scale: Scale::Log2,
            series: peak_by_batch,
        },
        Chart {
            id: "overhead-vs-batch".into(),
            title: format!("Time cost of checkpointing against batch size (depth {batch_depth})"),
            x_label: "batch size (samples)".into(),
            y_label: "extra step time (%)".into(),
            x_scale: Scale::Log2,
            series: vec![Series::line(
                "balanced against plain (median step time)",
                false,
                overhead(&by_batch, batch),
            )],
        },
    ];

    let published = vec![
        PublishedFigure {
            source: "Chen et al. 2016, \"Training Deep Nets with Sublinear Memory Cost\"".into(),
            claim: "segments of about sqrt(n) layers: O(sqrt(n)) activation memory for one extra \
                    forward pass; a 1000-layer ResNet from 48 GB to 7 GB at about +30% time"
                .into(),
            ours: format!(
                "Burn's balanced strategy is per operation, not per segment: it drops ReLU \
                 outputs and keeps every Linear output, so activations stay linear in depth \
                 ({:.3} of plain at depth {}); step time {}",
                activation(deep_bal) / activation(deep_plain),
                max_depth,
                format::pct(overhead_pct(deep_plain, deep_bal))
            ),
        },
        PublishedFigure {
            source: "Hugging Face Transformers, \"efficient training on a single GPU\" \
                     (bert-large, V100, batch 1 x accumulation 4)"
                .into(),
            claim: "checkpointing costs about 20% of speed (7.75 -> 5.99 samples/s, -23%); \
                    8681 -> 6775 MB (-22%)"
                .into(),
            ours: format!(
                "depth {} batch {}: {} -> {} samples/s ({}); step peak {} -> {} ({})",
                max_depth,
                depth_batch,
                format::rate(deep_plain.result.samples_per_s),
                format::rate(deep_bal.result.samples_per_s),
                format::pct(
                    (deep_bal.result.samples_per_s / deep_plain.result.samples_per_s - 1.0) * 100.0
                ),
                format::bytes(deep_plain.peak()),
                format::bytes(deep_bal.peak()),
                format::pct(-saved(deep_plain, deep_bal) / deep_plain.peak() * 100.0),
            ),
        },
    ];

    Analysis {
        headline: Headline {
            compared: format!(
                "depth {max_depth}, batch {depth_batch}: NoCheckpointing against \
                 BalancedCheckpointing (step peak; samples/s)"
            ),
            memory_saved_bytes: Some(saved(deep_plain, deep_bal)),
            memory_saved_pct: Some(saved(deep_plain, deep_bal) / deep_plain.peak() * 100.0),
            throughput_cost_pct: Some(
                (deep_plain.result.samples_per_s - deep_bal.result.samples_per_s)
                    / deep_plain.result.samples_per_s
                    * 100.0,
            ),
            correctness,
            correctness_detail: worst_check(points),
        },
        findings,
        comparisons,
        fits: vec![],
        charts,
        published,
    }
}
