//! Gradient accumulation: the gradient of a big batch from several small ones.
//!
//! Instead of one step on B samples, run k micro-batches of B/k, scale each loss by 1/k, add
//! their gradients (`GradientsAccumulator`) and take one optimizer step. Only one micro-batch's
//! activations are alive at a time, at the price of holding the accumulated gradients and of k
//! smaller, less efficient passes. The result is the same step: the experiment checks it.

use burn::optim::{AdamConfig, GradientsAccumulator, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::Tensor;

use crate::backend::Checkpointing;
use crate::batch_size::{predicted_step_peak, shape};
use crate::device::DeviceKind;
use crate::experiment::{
    worst_check, Analysis, Chart, Check, Comparison, Correctness, Experiment, ExperimentError,
    Headline, MeasuredPoint, Point, PointResult, Profile, PublishedFigure, Scale, Series, Sizes,
};
use crate::format::{self, mib};
use crate::models::mlp::{self, Mlp};
use crate::train::{run_train_point, TrainConfig};

/// Relative tolerance of the gradient and parameter comparisons: the same sums in another order
/// in f32 (measured differences are about 1e-7).
const TOLERANCE: f64 = 1e-5;

/// The gradient-accumulation experiment.
pub struct Accumulation;

/// The effective batch at each size: large enough that activations dominate the peak.
fn effective_batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 512,
        Sizes::Full => 2048,
        Sizes::Gpu => 16384,
    }
}

impl Experiment for Accumulation {
    fn id(&self) -> &'static str {
        "accumulation"
    }

    fn title(&self) -> &'static str {
        "Gradient accumulation"
    }

    fn explanation(&self) -> &'static str {
        "Gradient accumulation splits a batch of B samples into k micro-batches of B/k, \
         back-propagates each with its loss scaled by 1/k, adds up the gradients, and takes one \
         optimizer step: the same step as the big batch, with the activations of only one \
         micro-batch alive at a time. It costs the accumulated gradients (one more copy of the \
         parameter gradients) and the speed of k smaller passes."
    }

    fn on_devices(&self) -> &'static str {
        "On the device backends the accumulated gradients and each micro-batch's activations \
         are device memory, read from CubeCL's memory manager at phase boundaries, and each \
         phase also shows the bytes the pools had reserved at its end: what a GPU runs out of \
         is reserved memory, which the pools do not return until memory_cleanup()."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/accumulation.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let sizes = Sizes::of(profile, device);
        let batch = effective_batch(sizes);
        [1usize, 2, 4, 8, 16]
            .into_iter()
            .map(|k| {
                TrainConfig {
                    shape: shape(sizes),
                    batch,
                    lr: 1e-4,
                    seed: 42,
                    micro_batches: k,
                    checkpointing: Checkpointing::None,
                }
                .point(
                    format!("micro-{k}"),
                    format!("{k} x {}", batch / k),
                    profile,
                )
            })
            .collect()
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        run_train_point(self.id(), point, device)
    }

    fn analyse(&self, points: &[MeasuredPoint]) -> Analysis {
        analyse(points)
    }
}

/// The proof: gradients accumulated over `k` micro-batches against the whole batch's, and the
/// parameters after one Adam step from each (fresh optimizers, same starting model).
pub fn checks<B: AutodiffBackend>(
    config: &TrainConfig,
    x: &Tensor<B, 2>,
    y: &Tensor<B, 2>,
    model: Mlp<B>,
) -> Vec<Check> {
    checks_with_loss_scale(config, x, y, model, 1.0 / config.micro_batches as f64)
}

/// [`checks`] with each micro-batch's loss multiplied by `loss_scale` (1/k is right; anything
/// else changes the step, which the checks must catch).
pub fn checks_with_loss_scale<B: AutodiffBackend>(
    config: &TrainConfig,
    x: &Tensor<B, 2>,
    y: &Tensor<B, 2>,
    model: Mlp<B>,
    loss_scale: f64,
) -> Vec<Check> {
    let k = config.micro_batches;
    let reference =
        GradientsParams::from_grads(mlp::loss(&model, x.clone(), y.clone()).backward(), &model);
    let mut accumulator = GradientsAccumulator::<Mlp<B>>::new();
    for (xi, yi) in mlp::micro_batch_slices(x, y, k) {
        let loss = mlp::loss(&model, xi, yi).mul_scalar(loss_scale);
        accumulator.accumulate(&model, GradientsParams::from_grads(loss.backward(), &model));
    }
    let accumulated = accumulator.grads();
    let grads_check = Check::compare(
        "accumulated gradients against the whole batch's",
        &mlp::flatten(&model, Some(&reference)),
        &mlp::flatten(&model, Some(&accumulated)),
        TOLERANCE,
    );
    let step = |grads: GradientsParams| {
        let mut optim = AdamConfig::new().init::<B, Mlp<B>>();
        mlp::flatten(&optim.step(config.lr, model.clone(), grads), None)
    };
    let params_check = Check::compare(
        "parameters after one Adam step",
        &step(reference),
        &step(accumulated),
        TOLERANCE,
    );
    vec![grads_check, params_check]
}

struct Row {
    k: usize,
    config: TrainConfig,
    result: PointResult,
}

/// The analysis of the accumulation experiment.
pub fn analyse(points: &[MeasuredPoint]) -> Analysis {
    let mut rows: Vec<Row> = points
        .iter()
        .filter_map(|p| {
            let config: TrainConfig = p.config()?;
            Some(Row {
                k: config.micro_batches,
                config,
                result: p.result()?.clone(),
            })
        })
        .collect();
    rows.sort_by_key(|r| r.k);
    let correctness = Correctness::of(points);
    let (Some(base), Some(most)) = (rows.iter().find(|r| r.k == 1), rows.last()) else {
        return Analysis::unmeasured(correctness);
    };
    let batch = base.config.batch as f64;
    let shape = base.config.shape;
    let peak = |r: &Row| r.result.peak_bytes() as f64;

    let mut findings = vec![format!(
        "One step on {} samples peaks at {}; as {} micro-batches of {} it peaks at {} ({} \
         against the plain step), at {} samples/s against {}.",
        base.config.batch,
        format::bytes(peak(base)),
        most.k,
        base.config.batch / most.k,
        format::bytes(peak(most)),
        format::pct((peak(most) - peak(base)) / peak(base) * 100.0),
        format::rate(most.result.samples_per_s),
        format::rate(base.result.samples_per_s),
    )];
    let floor = rows
        .iter()
        .map(|r| r.result.metric("grad_bytes"))
        .fold(f64::NAN, f64::max);
    findings.push(format!(
        "The saving stops where activations of a micro-batch fall below the gradients: every \
         step still holds the parameter gradients ({}) and, when accumulating, the accumulated \
         ones (as much again).",
        format::bytes(floor)
    ));

    let comparisons = rows
        .iter()
        .map(|r| Comparison {
            quantity: format!("step peak, {} micro-batches", r.k),
            predicted_bytes: predicted_step_peak(shape, batch, r.k),
            measured_bytes: peak(r),
            note: format!(
                "model + Adam state + inputs + max(activations of B/k, gradients) + accumulated \
                 gradients when k > 1. Not predicted: {} live in the process before the model \
                 was built (thread pool, matmul slabs), {} of backend buffers allocated by the \
                 first pass, and temporaries inside backward",
                format::bytes(r.result.metric("process_baseline_bytes")),
                format::bytes(r.result.metric("runtime_bytes"))
            ),
        })
        .collect();

    let series_of = |name: &str, f: &dyn Fn(&Row) -> f64| {
        Series::line(
            name,
            false,
            rows.iter().map(|r| (r.k as f64, mib(f(r)))).collect(),
        )
    };
    let phase_peak = |phase: &'static str| {
        move |r: &Row| {
            r.result
                .phase(phase)
                .map_or(f64::NAN, |p| p.peak_bytes as f64)
        }
    };
    let charts = vec![
        Chart {
            id: "peak-vs-micro-batches".into(),
            title: format!("Peak memory of one step on {} samples", base.config.batch),
            x_label: "micro-batches k (batch B/k each)".into(),
            y_label: "bytes in use (MiB)".into(),
            x_scale: Scale::Log2,
            series: vec![
                series_of("step peak (measured)", &peak),
                series_of("forward peak (measured)", &phase_peak("forward")),
                series_of("backward peak (measured)", &phase_peak("backward")),
                Series::line(
                    "step peak (predicted)",
                    true,
                    rows.iter()
                        .map(|r| (r.k as f64, mib(predicted_step_peak(shape, batch, r.k))))
                        .collect(),
                ),
            ],
        },
        Chart {
            id: "throughput-vs-micro-batches".into(),
            title: "Training throughput with accumulation".into(),
            x_label: "micro-batches k (batch B/k each)".into(),
            y_label: "throughput (samples/s)".into(),
            x_scale: Scale::Log2,
            series: vec![Series::throughput(
                "samples/s (median; bars: fastest and slowest repeat)",
                rows.iter().map(|r| (r.k as f64, &r.result)),
            )],
        },
    ];

    let four = rows.iter().find(|r| r.k == 4);
    let published = vec![PublishedFigure {
        source: "Hugging Face Transformers, \"efficient training on a single GPU\" (bert-large, \
                 V100 16 GB, NVML)"
            .into(),
        claim: "batch 4 -> batch 1 + accumulation 4: 14949 -> 8681 MB (-41.9%), 8.86 -> 7.75 \
                samples/s (-12.5%)"
            .into(),
        ours: match four {
            Some(r) => format!(
                "1 x {} -> 4 x {}: {} -> {} ({}), {} -> {} samples/s ({})",
                base.config.batch,
                base.config.batch / 4,
                format::bytes(peak(base)),
                format::bytes(peak(r)),
                format::pct((peak(r) - peak(base)) / peak(base) * 100.0),
                format::rate(base.result.samples_per_s),
                format::rate(r.result.samples_per_s),
                format::pct(
                    (r.result.samples_per_s - base.result.samples_per_s)
                        / base.result.samples_per_s
                        * 100.0
                ),
            ),
            None => "k = 4 was not measured".into(),
        },
    }];

    Analysis {
        headline: Headline {
            compared: format!(
                "one batch of {} against {} micro-batches of {} (step peak; samples/s)",
                base.config.batch,
                most.k,
                base.config.batch / most.k
            ),
            memory_saved_bytes: Some(peak(base) - peak(most)),
            memory_saved_pct: Some((peak(base) - peak(most)) / peak(base) * 100.0),
            throughput_cost_pct: Some(
                (base.result.samples_per_s - most.result.samples_per_s) / base.result.samples_per_s
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
