//! In-place operations: ownership decides memory.
//!
//! Flex (like Burn's other backends) writes an operation's result into its input's buffer when
//! the input is uniquely owned and contiguous. Code that keeps a clone of a tensor alive while
//! transforming it forces a new buffer at the first write; code that hands the tensor over by
//! value runs in place. The experiment measures the same computation written both ways, for an
//! element-wise chain and for a layer normalisation, and predicts the difference in bytes.

use std::collections::BTreeMap;

use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Tensor};
use serde::{Deserialize, Serialize};

use crate::backend::{self, OnBackend};
use crate::device::DeviceKind;
use crate::experiment::{
    parse_config, worst_check, Analysis, Chart, Check, Comparison, Correctness, Experiment,
    ExperimentError, Headline, MeasuredPoint, Point, PointResult, Profile, Scale, Series, Sizes,
};
use crate::format::{self, mib};
use crate::probe::MemoryProbe;
use crate::single_op::measure_op;
use crate::snippets::in_place::{chain, layer_norm_borrowed, layer_norm_owned};

use crate::batch_size::F32_BYTES;
/// Layer normalisation's epsilon.
const EPS: f64 = 1e-5;
/// The two ways run the same kernels on the same values; the tolerance only allows for a
/// reordered reduction.
const TOLERANCE: f64 = 1e-6;

/// The computation measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// Four element-wise ops: `log(1 + exp(x / 2))`.
    Chain,
    /// Layer normalisation over each row, without affine parameters.
    LayerNorm,
}

/// How the computation gets its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Style {
    /// The caller keeps `x` (a clone goes in): the first write needs a new buffer.
    KeepClone,
    /// `x` is handed over by value: writes land in its buffer.
    Consume,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::Chain => "element-wise chain",
            Case::LayerNorm => "layer norm",
        }
    }

    fn id(self) -> &'static str {
        match self {
            Case::Chain => "chain",
            Case::LayerNorm => "layer-norm",
        }
    }

    /// Predicted bytes the computation adds at its peak above its input, from reading Flex's
    /// rules: an op writes in place when its (left) input is uniquely owned and contiguous;
    /// `square()` is `x * x` and so always allocates; a row reduction allocates one value per row.
    pub fn predicted_added_peak_bytes(self, style: Style, rows: usize, cols: usize) -> u64 {
        let tensor = (rows * cols) as u64 * F32_BYTES;
        let row_values = rows as u64 * F32_BYTES;
        match (self, style) {
            // The first op allocates the result; the three after it run in place on it.
            (Case::Chain, Style::KeepClone) => tensor,
            (Case::Chain, Style::Consume) => 0,
            // centered (new, x is shared) + square + the variance's row values.
            (Case::LayerNorm, Style::KeepClone) => 2 * tensor + row_values,
            // centered is x's buffer; square + the variance's row values.
            (Case::LayerNorm, Style::Consume) => tensor + row_values,
        }
    }
}

impl Style {
    fn name(self) -> &'static str {
        match self {
            Style::KeepClone => "keep a clone",
            Style::Consume => "consume",
        }
    }

    fn id(self) -> &'static str {
        match self {
            Style::KeepClone => "keep-clone",
            Style::Consume => "consume",
        }
    }
}

/// Configuration of one in-place point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InPlaceConfig {
    /// The computation.
    pub case: Case,
    /// How it gets its input.
    pub style: Style,
    /// Rows of the f32 input (the "samples" of the throughput figure).
    pub rows: usize,
    /// Columns of the input.
    pub cols: usize,
    /// Seed of the backend's generator.
    pub seed: u64,
}

impl InPlaceConfig {
    /// Bytes of the input tensor's elements.
    pub fn tensor_bytes(&self) -> u64 {
        (self.rows * self.cols) as u64 * F32_BYTES
    }
}

/// The in-place experiment.
pub struct InPlace;

const COLS: usize = 1024;

fn rows(sizes: Sizes) -> Vec<usize> {
    match sizes {
        Sizes::Quick => vec![256, 1024, 4096],
        Sizes::Full => vec![1024, 4096, 16384],
        Sizes::Gpu => vec![16384, 65536, 262144],
    }
}

impl Experiment for InPlace {
    fn id(&self) -> &'static str {
        "in-place"
    }

    fn title(&self) -> &'static str {
        "In-place operations and ownership"
    }

    fn explanation(&self) -> &'static str {
        "Burn's CPU backend writes an operation's result into its input's buffer when the input is \
         uniquely owned and contiguous, so ownership decides memory: code that keeps a clone of x \
         alive while transforming it pays for a new buffer at the first write, code that hands x \
         over by value does not. The same computation is measured written both ways, for an \
         element-wise chain and a layer normalisation, and the difference is predicted in bytes \
         from the backend's rules."
    }

    fn on_devices(&self) -> &'static str {
        "CubeCL backends also write into a uniquely owned input (burn-cubecl checks that the \
         handle can be mutated), and with fusion (a default feature of burn-wgpu and burn-cuda) a \
         chain of element-wise ops can run as one kernel whose intermediates never reach \
         device memory. The predictions here follow Flex's rules, so on a device the \
         measured bytes are the finding and the predictions only a reference."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/in_place.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let (warmup, repeats) = crate::batch_size::repeats(profile);
        let mut points = Vec::new();
        for case in [Case::Chain, Case::LayerNorm] {
            for rows in rows(Sizes::of(profile, device)) {
                for style in [Style::KeepClone, Style::Consume] {
                    points.push(Point {
                        id: format!("{}-{}-rows-{rows}", case.id(), style.id()),
                        label: format!("{}, {}, {rows} x {COLS}", case.name(), style.name()),
                        warmup,
                        repeats,
                        config: serde_json::to_value(InPlaceConfig {
                            case,
                            style,
                            rows,
                            cols: COLS,
                            seed: 11,
                        })
                        .expect("config serialises"),
                    });
                }
            }
        }
        points
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        let config: InPlaceConfig = parse_config(self.id(), point)?;
        backend::dispatch(
            device,
            InPlacePoint {
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

/// Runs `case` in `style` on `x`. With [`Style::KeepClone`] the input is returned beside the
/// output, so that it stays alive through the measurement as the caller's copy would.
fn compute<B: Backend>(
    case: Case,
    style: Style,
    x: Tensor<B, 2>,
) -> (Tensor<B, 2>, Option<Tensor<B, 2>>) {
    match (case, style) {
        (Case::Chain, Style::KeepClone) => (chain(x.clone()), Some(x)),
        (Case::Chain, Style::Consume) => (chain(x), None),
        (Case::LayerNorm, Style::KeepClone) => (layer_norm_borrowed(&x, EPS), Some(x)),
        (Case::LayerNorm, Style::Consume) => (layer_norm_owned(x, EPS), None),
    }
}

/// Measures one computation written one way.
pub struct InPlacePoint {
    /// What to run.
    pub config: InPlaceConfig,
    /// Untimed repeats first.
    pub warmup: usize,
    /// Measured repeats.
    pub repeats: usize,
}

impl OnBackend for InPlacePoint {
    type Output = PointResult;

    fn run<AB: AutodiffBackend>(self, device: AB::Device, probe: &dyn MemoryProbe) -> PointResult {
        type B<AB> = <AB as AutodiffBackend>::InnerBackend;
        let c = self.config;
        let sync = || backend::sync::<AB>(&device);
        B::<AB>::seed(&device, c.seed);
        let input = || {
            Tensor::<B<AB>, 2>::random([c.rows, c.cols], Distribution::Normal(0.0, 1.0), &device)
        };
        let m = measure_op(
            probe,
            &sync,
            "computation",
            self.warmup,
            self.repeats,
            c.rows,
            input,
            |x| compute(c.case, c.style, x),
        );

        // The check: both ways on the same values.
        let x = input();
        let kept = compute(c.case, Style::KeepClone, x.clone()).0;
        let consumed = compute(c.case, Style::Consume, x).0;
        let values = |t: Tensor<B<AB>, 2>| t.into_data().to_vec::<f32>().unwrap_or_default();
        let check = Check::compare(
            "output when the input is consumed against keeping a clone",
            &values(kept),
            &values(consumed),
            TOLERANCE,
        );

        let metrics = BTreeMap::from([("tensor_bytes".to_string(), c.tensor_bytes() as f64)]);
        m.into_result(probe.info(), "added_peak_bytes", metrics, check)
    }
}

struct Row {
    config: InPlaceConfig,
    result: PointResult,
}

impl Row {
    fn added(&self) -> f64 {
        self.result.metric("added_peak_bytes")
    }

    fn predicted(&self) -> f64 {
        self.config.case.predicted_added_peak_bytes(
            self.config.style,
            self.config.rows,
            self.config.cols,
        ) as f64
    }
}

/// The analysis of the in-place experiment.
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
    rows.sort_by_key(|r| r.config.rows);
    let correctness = Correctness::of(points);
    let of = |case: Case, style: Style| -> Vec<&Row> {
        rows.iter()
            .filter(|r| r.config.case == case && r.config.style == style)
            .collect()
    };
    // The pair at the largest size measured both ways, per case.
    let pair = |case: Case| -> Option<(&Row, &Row)> {
        of(case, Style::KeepClone).into_iter().rev().find_map(|k| {
            of(case, Style::Consume)
                .into_iter()
                .find(|c| c.config.rows == k.config.rows)
                .map(|c| (k, c))
        })
    };
    let Some((norm_kept, norm_consumed)) = pair(Case::LayerNorm).or_else(|| pair(Case::Chain))
    else {
        return Analysis::unmeasured(correctness);
    };

    let mut findings = Vec::new();
    let mut comparisons = Vec::new();
    for case in [Case::Chain, Case::LayerNorm] {
        if let Some((kept, consumed)) = pair(case) {
            let saved = kept.added() - consumed.added();
            findings.push(format!(
                "{} on {} x {} f32 ({}): keeping a clone adds {} at the peak, consuming the \
                 input adds {}; the saving, {}, is {:.4} tensors' worth. Time: {} against {}.",
                format::capitalise(case.name()),
                kept.config.rows,
                kept.config.cols,
                format::bytes(kept.config.tensor_bytes() as f64),
                format::bytes(kept.added()),
                format::bytes(consumed.added()),
                format::bytes(saved),
                saved / kept.config.tensor_bytes() as f64,
                format::seconds(kept.result.step.median_s),
                format::seconds(consumed.result.step.median_s),
            ));
            comparisons.push(Comparison {
                quantity: format!(
                    "{}, {} rows: bytes saved by consuming",
                    case.name(),
                    kept.config.rows
                ),
                predicted_bytes: kept.predicted() - consumed.predicted(),
                measured_bytes: saved,
                note: "one tensor's elements: the buffer the first write into a shared tensor \
                       allocates"
                    .into(),
            });
        }
    }
    for r in &rows {
        if r.config.rows == norm_kept.config.rows {
            comparisons.push(Comparison {
                quantity: format!(
                    "{}, {}, {} rows: peak above the input",
                    r.config.case.name(),
                    r.config.style.name(),
                    r.config.rows
                ),
                predicted_bytes: r.predicted(),
                measured_bytes: r.added(),
                note: prediction_note(r.config.case, r.config.style).into(),
            });
        }
    }

    let mut memory_series = Vec::new();
    let mut time_series = Vec::new();
    for case in [Case::Chain, Case::LayerNorm] {
        for style in [Style::KeepClone, Style::Consume] {
            let rs = of(case, style);
            if rs.is_empty() {
                continue;
            }
            let name = format!("{}, {}", case.name(), style.name());
            let x = |r: &Row| mib(r.config.tensor_bytes() as f64);
            memory_series.push(Series::line(
                &format!("{name} (measured)"),
                false,
                rs.iter().map(|r| (x(r), mib(r.added()))).collect(),
            ));
            memory_series.push(Series::line(
                &format!("{name} (predicted)"),
                true,
                rs.iter().map(|r| (x(r), mib(r.predicted()))).collect(),
            ));
            time_series.push(Series::throughput(
                &format!("{name} (median; bars: fastest and slowest)"),
                rs.iter().map(|r| (x(r), &r.result)),
            ));
        }
    }
    let charts = vec![
        Chart {
            id: "added-peak-vs-size".into(),
            title: "Peak memory the computation adds above its input".into(),
            x_label: "input tensor (MiB)".into(),
            y_label: "peak above the input (MiB)".into(),
            x_scale: Scale::Log2,
            series: memory_series,
        },
        Chart {
            id: "throughput-vs-size".into(),
            title: "Rows processed per second".into(),
            x_label: "input tensor (MiB)".into(),
            y_label: "throughput (rows/s)".into(),
            x_scale: Scale::Log2,
            series: time_series,
        },
    ];

    let (k, c) = (norm_kept, norm_consumed);
    Analysis {
        headline: Headline {
            compared: format!(
                "{} of {} x {} f32: keeping a clone of the input against consuming it (peak \
                 above the input; rows/s)",
                k.config.case.name(),
                k.config.rows,
                k.config.cols
            ),
            memory_saved_bytes: Some(k.added() - c.added()),
            memory_saved_pct: Some((k.added() - c.added()) / k.added() * 100.0),
            throughput_cost_pct: Some(
                (k.result.samples_per_s - c.result.samples_per_s) / k.result.samples_per_s * 100.0,
            ),
            correctness,
            correctness_detail: worst_check(points),
        },
        findings,
        comparisons,
        fits: vec![],
        charts,
        published: vec![],
    }
}

fn prediction_note(case: Case, style: Style) -> &'static str {
    match (case, style) {
        (Case::Chain, Style::KeepClone) => {
            "the first op (x / 2) writes a new tensor since x is shared; exp, + 1 and log run in \
             place on it. The few dozen bytes over are the new tensor's handle"
        }
        (Case::Chain, Style::Consume) => "all four ops write into x's buffer",
        (Case::LayerNorm, Style::KeepClone) => {
            "x - mean needs a new buffer (x is shared), square() is x * x and always allocates, \
             plus one f32 per row for the variance while the square is alive"
        }
        (Case::LayerNorm, Style::Consume) => {
            "x - mean writes into x; square() allocates one tensor, plus one f32 per row for the \
             variance; the division runs in place"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consuming_saves_one_tensor_in_both_cases() {
        for case in [Case::Chain, Case::LayerNorm] {
            let kept = case.predicted_added_peak_bytes(Style::KeepClone, 8, 16);
            let consumed = case.predicted_added_peak_bytes(Style::Consume, 8, 16);
            assert_eq!(kept - consumed, 8 * 16 * 4);
        }
    }
}
