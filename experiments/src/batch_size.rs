//! Batch size: the first knob to turn on an OOM, and what it trades.
//!
//! The step's peak is the model, its Adam state and the inputs, plus the larger of two things:
//! the activations the forward pass keeps for backward (linear in batch size) and the parameter
//! gradients (fixed). Below the crossover a smaller batch saves almost nothing; above it memory
//! grows by a fixed number of bytes per sample, while throughput falls as batches shrink.

use crate::backend::Checkpointing;
use crate::device::DeviceKind;
use crate::experiment::{
    Analysis, Chart, Comparison, Correctness, Experiment, ExperimentError, Headline, MeasuredPoint,
    Point, PointResult, Profile, PublishedFigure, ReportedFit, Scale, Series, Sizes,
};
use crate::fit::LinearFit;
use crate::format::{self, mib};
use crate::models::MlpShape;
use crate::train::{run_train_point, TrainConfig};

/// Bytes of one f32.
pub const F32_BYTES: u64 = 4;
/// Adam keeps two moments per parameter.
pub const ADAM_STATE_PER_PARAM: u64 = 2 * F32_BYTES;

/// The batch-size sweep.
pub struct BatchSize;

/// The model at each size.
pub fn shape(sizes: Sizes) -> MlpShape {
    match sizes {
        Sizes::Quick => MlpShape {
            width: 256,
            depth: 4,
        },
        Sizes::Full => MlpShape {
            width: 1024,
            depth: 8,
        },
        Sizes::Gpu => MlpShape {
            width: 4096,
            depth: 16,
        },
    }
}

/// The batch sizes: a 32x range in quick, 128x in full, 256x on a GPU.
pub fn batches(sizes: Sizes) -> Vec<usize> {
    match sizes {
        Sizes::Quick => vec![8, 16, 32, 64, 128, 256],
        Sizes::Full => vec![16, 32, 64, 128, 256, 512, 1024, 2048],
        Sizes::Gpu => vec![64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
    }
}

/// Repeats of a profile: (warm-up, measured).
pub fn repeats(profile: Profile) -> (usize, usize) {
    match profile {
        Profile::Quick => (1, 3),
        Profile::Full => (2, 7),
    }
}

impl Experiment for BatchSize {
    fn id(&self) -> &'static str {
        "batch-size"
    }

    fn title(&self) -> &'static str {
        "Batch size"
    }

    fn explanation(&self) -> &'static str {
        "A training step holds the model, its optimizer state and the batch, plus the larger of \
         two things: the activations the forward pass keeps for backward, which grow linearly \
         with the batch, and the parameter gradients, which do not. Shrinking the batch saves \
         activation memory only; once gradients set the peak, a smaller batch buys nothing and \
         costs throughput. The sweep measures where that crossover lies."
    }

    fn on_devices(&self) -> &'static str {
        "On wgpu and CUDA the probe is CubeCL's memory manager, read at phase boundaries after a \
         device sync: parameters, Adam state and the bytes the forward pass leaves for \
         backward are exact, but a peak inside a phase (the loss's temporaries) is not \
         seen, so the activation slope is a lower bound; the pool pages reserved at each \
         phase's end bound the peak from above. On a GPU it is reserved bytes that run \
         out, so read both columns."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/batch_size.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let sizes = Sizes::of(profile, device);
        batches(sizes)
            .into_iter()
            .map(|batch| {
                TrainConfig {
                    shape: shape(sizes),
                    batch,
                    lr: 1e-4,
                    seed: 42,
                    micro_batches: 1,
                    checkpointing: Checkpointing::None,
                }
                .point(format!("batch-{batch}"), format!("batch {batch}"), profile)
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

/// One measured batch size, unpacked for the analysis.
struct Row {
    batch: f64,
    result: PointResult,
    shape: MlpShape,
}

fn rows(points: &[MeasuredPoint]) -> Vec<Row> {
    let mut rows: Vec<Row> = points
        .iter()
        .filter_map(|p| {
            let config: TrainConfig = p.config()?;
            Some(Row {
                batch: config.batch as f64,
                result: p.result()?.clone(),
                shape: config.shape,
            })
        })
        .collect();
    rows.sort_by(|a, b| a.batch.total_cmp(&b.batch));
    rows
}

/// Predicted step peak: model, Adam state and inputs, plus the larger of one micro-batch's
/// activations and the parameter gradients (backward frees activations as it produces
/// gradients), plus, when accumulating, the accumulated gradients held across micro-batches.
pub fn predicted_step_peak(shape: MlpShape, batch: f64, micro_batches: usize) -> f64 {
    let p = shape.num_params() as f64;
    let fixed = p * (F32_BYTES + ADAM_STATE_PER_PARAM) as f64;
    let inputs = 2.0 * batch * shape.width as f64 * F32_BYTES as f64;
    let micro = batch / micro_batches.max(1) as f64;
    let activations = micro * shape.predicted_activation_bytes_per_sample(F32_BYTES) as f64;
    let grads = p * F32_BYTES as f64;
    let accumulated = if micro_batches > 1 { grads } else { 0.0 };
    fixed + inputs + activations.max(grads) + accumulated
}

/// The analysis of a batch-size sweep.
pub fn analyse(points: &[MeasuredPoint]) -> Analysis {
    let rows = rows(points);
    let correctness = Correctness::of(points);
    let (Some(small), Some(large)) = (rows.first(), rows.last()) else {
        return Analysis::unmeasured(correctness);
    };
    let shape = large.shape;

    let activation_pts: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r.batch, r.result.metric("activation_bytes")))
        .collect();
    let fit = LinearFit::fit(&activation_pts);
    let grad_bytes = large.result.metric("grad_bytes");

    let mut findings = Vec::new();
    let mut fits = Vec::new();
    if let Some(fit) = &fit {
        findings.push(format!(
            "The forward pass keeps {} per sample for backward (least-squares fit over {} batch \
             sizes, R\u{b2} = {:.6}), on top of a fixed {}.",
            format::bytes(fit.slope),
            fit.n,
            fit.r_squared,
            format::bytes(fit.intercept)
        ));
        fits.push(ReportedFit {
            what: "bytes kept by the forward pass against batch size".into(),
            fit: fit.clone(),
        });
        if let Some(crossover) = fit.solve(grad_bytes) {
            let above: Vec<String> = rows
                .iter()
                .filter(|r| r.batch > crossover)
                .map(|r| format!("{}", r.batch))
                .collect();
            findings.push(format!(
                "Parameter gradients take {}; activations outgrow them at batch {:.0}. Below that \
                 the step peak is set by the gradients and a smaller batch saves little; above \
                 it (measured here: {}) the peak grows with the batch.",
                format::bytes(grad_bytes),
                crossover,
                if above.is_empty() {
                    "none".to_string()
                } else {
                    above.join(", ")
                }
            ));
        }
    }
    findings.push(format!(
        "Burn initialises parameters lazily: right after `init()` {} were live; the {} \
         parameters ({}) are allocated when first read.",
        format::bytes(large.result.metric("param_bytes_after_init")),
        shape.num_params(),
        format::bytes(large.result.metric("param_bytes")),
    ));
    let peak_small = small.result.peak_bytes() as f64;
    let peak_large = large.result.peak_bytes() as f64;
    findings.push(format!(
        "From batch {} to batch {} ({}x the samples) the step peak goes from {} to {} ({:.2}x) \
         and throughput from {} to {} samples/s.",
        small.batch,
        large.batch,
        large.batch / small.batch,
        format::bytes(peak_small),
        format::bytes(peak_large),
        peak_large / peak_small,
        format::rate(small.result.samples_per_s),
        format::rate(large.result.samples_per_s),
    ));

    let p = shape.num_params() as f64;
    let comparisons = vec![
        Comparison {
            quantity: "parameters".into(),
            predicted_bytes: p * F32_BYTES as f64,
            measured_bytes: large.result.metric("param_bytes"),
            note: format!("{} parameters x 4 bytes (f32)", shape.num_params()),
        },
        Comparison {
            quantity: "Adam state (two moments)".into(),
            predicted_bytes: p * ADAM_STATE_PER_PARAM as f64,
            measured_bytes: large.result.metric("optimizer_state_bytes"),
            note: "8 bytes per parameter; measured as what stays live after the first step".into(),
        },
        Comparison {
            quantity: "parameter gradients".into(),
            predicted_bytes: p * F32_BYTES as f64,
            measured_bytes: grad_bytes,
            note: "4 bytes per parameter; measured as what backward leaves live".into(),
        },
        Comparison {
            quantity: "activations per sample".into(),
            predicted_bytes: shape.predicted_activation_bytes_per_sample(F32_BYTES) as f64,
            measured_bytes: fit.as_ref().map_or(f64::NAN, |f| f.slope),
            note: "forward peak: each hidden layer's Linear and ReLU outputs, the last Linear \
                   output and the loss's difference (x 4 bytes); measured as the slope of the fit"
                .into(),
        },
        Comparison {
            quantity: format!("step peak at batch {}", large.batch),
            predicted_bytes: predicted_step_peak(shape, large.batch, 1),
            measured_bytes: peak_large,
            note: format!(
                "model + Adam state + inputs + max(activations, gradients). Not predicted: {} \
                 live in the process before the model was built (thread pool, matmul slabs), \
                 {} of backend buffers allocated by the first pass, and temporaries inside \
                 backward",
                format::bytes(large.result.metric("process_baseline_bytes")),
                format::bytes(large.result.metric("runtime_bytes"))
            ),
        },
    ];

    let throughput = Series::throughput(
        "samples/s (median; bars: fastest and slowest repeat)",
        rows.iter().map(|r| (r.batch, &r.result)),
    );
    let peak_of = |phase: &str| -> Vec<(f64, f64)> {
        rows.iter()
            .map(|r| {
                (
                    r.batch,
                    mib(r
                        .result
                        .phase(phase)
                        .map_or(f64::NAN, |p| p.peak_bytes as f64)),
                )
            })
            .collect()
    };
    let charts = vec![
        Chart {
            id: "peak-vs-batch".into(),
            title: "Peak memory of a training step against batch size".into(),
            x_label: "batch size (samples)".into(),
            y_label: "bytes in use (MiB)".into(),
            x_scale: Scale::Log2,
            series: vec![
                Series::line(
                    "step peak (measured)",
                    false,
                    rows.iter()
                        .map(|r| (r.batch, mib(r.result.peak_bytes() as f64)))
                        .collect(),
                ),
                Series::line("forward peak (measured)", false, peak_of("forward")),
                Series::line("backward peak (measured)", false, peak_of("backward")),
                Series::line(
                    "live before the step: model, Adam state, inputs",
                    false,
                    rows.iter()
                        .map(|r| (r.batch, mib(r.result.metric("live_before_step_bytes"))))
                        .collect(),
                ),
                Series::line(
                    "step peak (predicted)",
                    true,
                    rows.iter()
                        .map(|r| (r.batch, mib(predicted_step_peak(r.shape, r.batch, 1))))
                        .collect(),
                ),
            ],
        },
        Chart {
            id: "components-vs-batch".into(),
            title: "Where the bytes of a step go, component by component".into(),
            x_label: "batch size (samples)".into(),
            y_label: "bytes (MiB)".into(),
            x_scale: Scale::Log2,
            series: [
                ("parameters", "param_bytes"),
                ("Adam state", "optimizer_state_bytes"),
                ("inputs and targets", "input_bytes"),
                (
                    "process before the model (thread pool, matmul slabs)",
                    "process_baseline_bytes",
                ),
                (
                    "backend buffers allocated by the first pass",
                    "runtime_bytes",
                ),
                ("activations (forward peak above live)", "activation_bytes"),
                ("parameter gradients", "grad_bytes"),
            ]
            .into_iter()
            .map(|(name, metric)| {
                Series::line(
                    name,
                    false,
                    rows.iter()
                        .map(|r| (r.batch, mib(r.result.metric(metric))))
                        .collect(),
                )
            })
            .collect(),
        },
        Chart {
            id: "activations-vs-gradients".into(),
            title: "What sets the peak: activations against parameter gradients".into(),
            x_label: "batch size (samples)".into(),
            y_label: "bytes (MiB)".into(),
            x_scale: Scale::Log2,
            series: {
                let mut s = vec![
                    Series::line(
                        "activations kept by forward (measured)",
                        false,
                        activation_pts.iter().map(|&(b, v)| (b, mib(v))).collect(),
                    ),
                    Series::line(
                        "parameter gradients (measured)",
                        false,
                        rows.iter()
                            .map(|r| (r.batch, mib(r.result.metric("grad_bytes"))))
                            .collect(),
                    ),
                ];
                if let Some(fit) = &fit {
                    s.push(Series::line(
                        "activations, fitted line",
                        true,
                        rows.iter()
                            .map(|r| (r.batch, mib(fit.predict(r.batch))))
                            .collect(),
                    ));
                }
                s
            },
        },
        Chart {
            id: "throughput-vs-batch".into(),
            title: "Training throughput against batch size".into(),
            x_label: "batch size (samples)".into(),
            y_label: "throughput (samples/s)".into(),
            x_scale: Scale::Log2,
            series: vec![throughput],
        },
    ];

    let state_bytes = large.result.metric("param_bytes")
        + grad_bytes
        + large.result.metric("optimizer_state_bytes");
    let published = vec![PublishedFigure {
        source: "accelerate `estimate-memory`; ZeRO (Rajbhandari et al. 2020)".into(),
        claim: "Adam in f32 needs 16 bytes per parameter for weights, gradients and optimizer \
                state (before activations)."
            .into(),
        ours: format!(
            "{:.2} bytes per parameter measured (weights + gradients + Adam state = {} for {} \
             parameters)",
            state_bytes / p,
            format::bytes(state_bytes),
            shape.num_params()
        ),
    }];

    Analysis {
        headline: Headline {
            compared: format!(
                "batch {} against batch {} (step peak; samples/s)",
                small.batch, large.batch
            ),
            memory_saved_bytes: Some(peak_large - peak_small),
            memory_saved_pct: Some((peak_large - peak_small) / peak_large * 100.0),
            throughput_cost_pct: Some(
                (large.result.samples_per_s - small.result.samples_per_s)
                    / large.result.samples_per_s
                    * 100.0,
            ),
            correctness,
            correctness_detail: "a sweep, not a substitute: each batch size computes a \
                                 different step, so there is nothing to compare"
                .into(),
        },
        findings,
        comparisons,
        fits,
        charts,
        published,
    }
}
