//! View models: records turned into the formatted strings the templates print. Templates do no
//! arithmetic; every figure here comes from a record, formatted by `results::format`.

use results::timing::median;
use results::{
    format, Analysed, AnalysedCapacity, AxisUnit, Calibration, Chart, Comparison, DeviceKind,
    ErrorSummary, ExperimentRecord, Metric, Outcome, PairedComparison, PairedTiming, PhaseMemory,
    PointResult, Scale, Series,
};
use serde::Serialize;

use crate::index_row::{device_label, headline_row, software, IndexRow};
use crate::verdicts::SiteVerdicts;

/// Everything the templates see.
#[derive(Debug, Serialize)]
pub struct SiteContext {
    /// One row per technique, in guide order.
    pub rows: Vec<IndexRow>,
    /// One page per experiment.
    pub pages: Vec<ExperimentPage>,
    /// The estimator's error per experiment and device, where it was set beside training steps.
    pub estimator: Vec<EstimatorRow>,
    /// The estimator's worst error over every set, in a sentence (empty: no set has one).
    pub estimator_worst: String,
    /// The "What fits" page, where the results hold its record.
    pub what_fits: Option<crate::what_fits::WhatFits>,
    /// The landing page's fix order (none without records).
    pub fix_order: Option<crate::fix_order::FixOrder>,
    /// Every fix on one workload, and the order read from it (none without its record).
    pub workload: Option<crate::workload_table::WorkloadTable>,
    /// Which machine, device and commit produced each result set, one line each.
    pub provenance: Vec<String>,
    /// The landing page's first lines: what was measured, and what is projected.
    pub lede: String,
    /// The runs that produced the result sets, for the "Runs" page.
    pub runs: Vec<crate::runs::RunRow>,
    /// This guide's sets against a baseline, where rendered with one.
    pub changes: Option<crate::changes::ChangesPage>,
}

/// The estimator's error over one result set's training steps.
#[derive(Debug, Serialize)]
pub struct EstimatorRow {
    /// The experiment's title.
    pub title: String,
    /// Link to the set on its page.
    pub href: String,
    /// The device.
    pub device: String,
    /// Training steps compared.
    pub points: usize,
    /// Of them, within 10% or inside their bracket.
    pub within: usize,
    /// The median absolute error.
    pub median: String,
    /// The worst error, signed.
    pub worst: String,
    /// What the worst was of.
    pub worst_quantity: String,
    /// Whether the worst error passes 10%.
    pub off: bool,
}

/// The estimator's error in a sentence.
pub fn error_sentence(e: &ErrorSummary) -> String {
    format!(
        "Over {} training steps the estimator's step peak is {} within {:.0}% of the measured \
         peak (or inside its bracket); median error {}, worst {} ({}). Positive: the estimate \
         is too high.",
        e.count,
        if e.within == e.count {
            "every time".to_string()
        } else {
            format!("{} times of {}", e.within, e.count)
        },
        ErrorSummary::WITHIN_PCT,
        format::pct(e.median_abs_pct).trim_start_matches('+'),
        format::pct(e.worst_pct),
        e.worst_quantity
    )
}

/// One experiment's page: the technique, then one result set per device it was measured on.
#[derive(Debug, Serialize)]
pub struct ExperimentPage {
    /// Experiment id.
    pub id: String,
    /// File name of the page.
    pub href: String,
    /// Title.
    pub title: String,
    /// What to change to apply it.
    pub fix: String,
    /// What the technique does.
    pub explanation: String,
    /// What it, or its measurement, means on the device backends.
    pub on_devices: String,
    /// Burn code.
    pub snippet: String,
    /// The result sets, CPU first.
    pub sets: Vec<ResultSet>,
}

/// A stacked bar of bytes by what holds them, and its table.
#[derive(Debug, Serialize)]
pub struct BreakdownView {
    /// Anchor.
    pub id: String,
    /// Title.
    pub title: String,
    /// The sentence under it.
    pub note: String,
    /// The parts, in order.
    pub rows: Vec<BreakdownRowView>,
}

/// One part of a [`BreakdownView`].
#[derive(Debug, Serialize)]
pub struct BreakdownRowView {
    /// What holds it.
    pub label: String,
    /// Its bytes, in words.
    pub bytes: String,
    /// Its share of the whole, in percent with one decimal.
    pub share: String,
    /// Its width in the bar, a CSS percentage.
    pub width_pct: String,
    /// Its colour's number (0 to 8; the rest grey).
    pub colour: usize,
    /// Blocks it holds, where counted.
    pub blocks: String,
}

impl BreakdownView {
    fn of(b: &results::Breakdown) -> Self {
        let total = b.total_bytes.max(1.0);
        // The unnamed parts (under the threshold, the process's own) are grey.
        let named = |r: &results::BreakdownRow| {
            matches!(
                r.part,
                results::BreakdownPart::Named(_) | results::BreakdownPart::Others(_)
            )
        };
        Self {
            id: b.id.clone(),
            title: b.title.clone(),
            note: b.note.clone(),
            rows: b
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| BreakdownRowView {
                    label: crate::words::breakdown_part(&r.part),
                    bytes: results::format::bytes(r.bytes),
                    share: format!("{:.1}%", 100.0 * r.bytes / total),
                    width_pct: format!("{:.2}", 100.0 * r.bytes / total),
                    colour: if named(r) { i.min(8) } else { 9 },
                    blocks: if r.blocks == 0 {
                        String::new()
                    } else {
                        r.blocks.to_string()
                    },
                })
                .collect(),
        }
    }
}

/// What one run on one device measured for an experiment.
#[derive(Debug, Serialize)]
pub struct ResultSet {
    /// Anchor of the set on the page: the device kind (`cpu`, `cuda`).
    pub anchor: String,
    /// Link to its points as CSV.
    pub csv_href: String,
    /// The command that measures this set again.
    pub reproduce: String,
    /// Which device and what its probe counts, in a few words (`cpu (Flex ...)`).
    pub device_label: String,
    /// The device in a word or two (`cpu`, `wgpu, software`).
    pub device_short: String,
    /// The device's own name where its driver gave one (`NVIDIA H200`).
    pub device_name: String,
    /// The index row of this set, repeated as its summary.
    pub headline: IndexRow,
    /// Its table of fixes on one step, where it measured one; then the same fixes in the
    /// order's regime, where measured apart.
    pub fix_tables: Vec<crate::workload_table::SetView>,
    /// Findings, as sentences.
    pub findings: Vec<String>,
    /// Charts with their file names.
    pub charts: Vec<ChartView>,
    /// Bytes held at one moment by what holds them, as stacked bars.
    pub breakdowns: Vec<BreakdownView>,
    /// Predicted against measured.
    pub comparisons: Vec<ComparisonRow>,
    /// The estimator's step peak beside each training step of the set.
    pub estimator: Vec<ComparisonRow>,
    /// The estimator's error over them, in a sentence (empty where there is none).
    pub estimator_summary: String,
    /// Fitted lines.
    pub fits: Vec<FitRow>,
    /// Published figures beside ours.
    pub published: Vec<PublishedRow>,
    /// Names of the phases, the columns of the points table.
    pub phase_names: Vec<String>,
    /// The measured points.
    pub points: Vec<PointRow>,
    /// Names of the timed phases, the columns of the phase-time table.
    pub phase_time_names: Vec<String>,
    /// Time per phase of each point that timed its phases.
    pub phase_times: Vec<PhaseTimeRow>,
    /// Points that failed, with the child's stderr.
    pub failures: Vec<FailureRow>,
    /// Why the set holds fewer points than planned (an interrupted run); `None` when complete.
    pub incomplete: Option<String>,
    /// Where the sweep ran out of memory on this device, in a sentence (empty where it did
    /// not).
    pub stops_fitting: String,
    /// Which points came from which run, where a resumed run joined runs (one sentence each).
    pub resumed: Vec<String>,
    /// Criterion's estimates of the same steps beside the workbench's timings, where attached.
    pub criterion: Vec<CriterionRow>,
    /// The comparisons timed in pairs.
    pub paired: Vec<PairedRow>,
    /// Further index rows of this set (a second variant of the technique).
    pub secondary_headlines: Vec<IndexRow>,
    /// What the memory figures count.
    pub probe: String,
    /// Provenance, as label/value pairs.
    pub environment: Vec<(String, String)>,
    /// Link to the raw JSON.
    pub json_href: String,
}

/// A chart on a page.
#[derive(Debug, Serialize)]
pub struct ChartView {
    /// SVG file, relative to the page.
    pub src: String,
    /// Title, used as alt text.
    pub title: String,
    /// The SVG's height in pixels (its width is [`crate::charts::SIZE`]'s).
    pub height: u32,
    /// What the series' values are, with their unit: the y axis's label.
    pub y_label: String,
    /// The chart's numbers: the x label, then one column per series.
    pub header: Vec<String>,
    /// One row per x value.
    pub rows: Vec<Vec<String>>,
    /// The same chart drawn for a phone's width (its own file), with its height.
    pub narrow_src: String,
    /// Its height in pixels (its width is [`crate::charts::NARROW`]'s).
    pub narrow_height: u32,
    /// Its width in pixels.
    pub narrow_width: u32,
}

impl ChartView {
    /// The view of `chart`, drawn to `src` (and, for a phone, to `narrow_src`).
    pub fn of(chart: &Chart, src: String, narrow_src: String) -> Self {
        let mut xs: Vec<f64> = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x))
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let x_text = |x: f64| match chart.categories.get((x.round() as usize).wrapping_sub(1)) {
            Some(name) if x.fract() == 0.0 => name.clone(),
            _ => crate::charts::trim(x),
        };
        let rows = xs
            .iter()
            .map(|&x| {
                std::iter::once(x_text(x))
                    .chain(chart.series.iter().map(|s| {
                        s.points
                            .iter()
                            .find(|p| p.x == x)
                            .map_or(String::new(), |p| match (p.y_low, p.y_high) {
                                (Some(lo), Some(hi)) => format!(
                                    "{} ({} to {})",
                                    crate::charts::trim(p.y),
                                    crate::charts::trim(lo),
                                    crate::charts::trim(hi)
                                ),
                                _ => crate::charts::trim(p.y),
                            })
                    }))
                    .collect()
            })
            .collect();
        Self {
            src,
            title: chart.title.clone(),
            height: crate::charts::height(chart),
            y_label: chart.y_label.clone(),
            header: std::iter::once(chart.x_label.clone())
                .chain(chart.series.iter().map(|s| s.name.clone()))
                .collect(),
            rows,
            narrow_src,
            narrow_height: crate::charts::height_in(chart, &crate::charts::NARROW),
            narrow_width: crate::charts::NARROW.width,
        }
    }
}

/// A prediction beside a measurement.
#[derive(Debug, Serialize)]
pub struct ComparisonRow {
    /// What is compared.
    pub quantity: String,
    /// Predicted, formatted.
    pub predicted: String,
    /// Measured, formatted.
    pub measured: String,
    /// Measured minus predicted, formatted.
    pub diff: String,
    /// The prediction's error relative to the measurement (positive: too high).
    pub diff_pct: String,
    /// Whether the prediction misses by more than 10%.
    pub off: bool,
    /// How the prediction was made.
    pub note: String,
    /// Exact bytes, for the tooltip.
    pub exact: String,
}

/// A fitted line.
#[derive(Debug, Serialize)]
pub struct FitRow {
    /// What was fitted.
    pub what: String,
    /// Slope, formatted as bytes.
    pub slope: String,
    /// Intercept, formatted as bytes.
    pub intercept: String,
    /// R squared.
    pub r_squared: String,
    /// Points fitted.
    pub n: usize,
}

/// A published figure.
#[derive(Debug, Serialize)]
pub struct PublishedRow {
    /// Source.
    pub source: String,
    /// Their figure.
    pub claim: String,
    /// Ours.
    pub ours: String,
}

/// A measured point.
#[derive(Debug, Serialize)]
pub struct PointRow {
    /// Label.
    pub label: String,
    /// Peak of each phase (absolute bytes in use), in `phase_names` order.
    pub phase_peaks: Vec<CellBytes>,
    /// Bytes live before the first phase.
    pub live_before: CellBytes,
    /// Median step time.
    pub step_median: String,
    /// Fastest to slowest repeat.
    pub step_spread: String,
    /// Repeats measured.
    pub repeats: usize,
    /// Samples (or tokens) per second, with the unit.
    pub samples_per_s: String,
    /// Check outcome, if any.
    pub check: String,
    /// Whether the check failed.
    pub check_failed: bool,
}

/// A point's time per phase.
#[derive(Debug, Serialize)]
pub struct PhaseTimeRow {
    /// The point's label.
    pub label: String,
    /// Median time of each phase and its share of the step, in `phase_time_names` order.
    pub cells: Vec<String>,
    /// The step's median.
    pub step: String,
    /// The rate of the step's matrix work, and its share of the machine's matmul rate, where
    /// the point counted its operations.
    pub matmul_rate: String,
}

/// Bytes formatted for a table cell, with the exact count for the tooltip.
#[derive(Debug, Serialize)]
pub struct CellBytes {
    /// Formatted in binary units.
    pub text: String,
    /// Exact byte count.
    pub exact: String,
}

impl CellBytes {
    /// A phase's peak; on a backend with a caching allocator, with the bytes it held at the
    /// phase's end (the upper bound of the peak) after it.
    fn phase_peak(phase: Option<&PhaseMemory>) -> Self {
        let mut cell = Self::new(phase.map(|ph| ph.peak_bytes));
        if let Some(b) = phase.and_then(|ph| ph.bracket.as_ref()) {
            // A bracketed peak: both bounds, the method of each in the cell's title.
            cell.text = format!(
                "{} to {}",
                format::bytes(b.lower_bytes() as f64),
                format::bytes(b.upper_bytes as f64)
            );
            cell.exact = format!(
                "lower bound {} bytes (boundary readings {}, {} in-phase samples about {} apart: \
                 {}); upper bound {} bytes (reserved right after the phase, the {} pool emptied \
                 right before it)",
                b.lower_bytes(),
                b.boundary_peak_bytes,
                b.samples,
                format::seconds(b.sample_interval_s),
                b.sampled_peak_bytes,
                b.upper_bytes,
                b.pool
            );
        } else if let Some(reserved) = phase.and_then(|ph| ph.reserved_after_bytes) {
            cell.text = format!(
                "{} (reserved {})",
                cell.text,
                format::bytes(reserved as f64)
            );
            cell.exact = format!(
                "{}; reserved at the phase's end: {reserved} bytes",
                cell.exact
            );
        }
        cell
    }

    fn new(bytes: Option<u64>) -> Self {
        match bytes {
            Some(b) => Self {
                text: format::bytes(b as f64),
                exact: format!("{b} bytes"),
            },
            None => Self {
                text: "n/a".into(),
                exact: String::new(),
            },
        }
    }
}

/// One point's step time as the workbench measured it and as criterion estimated it.
#[derive(Debug, Serialize)]
pub struct CriterionRow {
    /// The point's label.
    pub label: String,
    /// Criterion's benchmark id.
    pub benchmark: String,
    /// The workbench's median step time.
    pub workbench_median: String,
    /// The workbench's fastest to slowest repeat, and how many.
    pub workbench_spread: String,
    /// Criterion's mean step time.
    pub criterion_mean: String,
    /// Its confidence interval.
    pub criterion_interval: String,
    /// Criterion's samples and steps.
    pub criterion_samples: String,
    /// Criterion's mean against the workbench's median, in percent.
    pub diff_pct: String,
    /// Samples per second by each: `workbench / criterion`.
    pub samples_per_s: String,
    /// `agree`, `differ` or why they were not compared.
    pub verdict: String,
    /// CSS class of the verdict.
    pub verdict_class: String,
}

/// A comparison timed in pairs.
#[derive(Debug, Serialize)]
pub struct PairedRow {
    /// The technique's point against the baseline's.
    pub compared: String,
    /// Where the arms ran, how many rounds of how many steps, and why they stopped.
    pub how: String,
    /// The technique's time per sample against the baseline's, with its interval.
    pub cost: String,
    /// `resolved`, `unresolved` or `na`.
    pub cost_class: String,
    /// The A/A control's interval.
    pub control: String,
    /// Whether the control's interval holds 0, as it must.
    pub control_ok: bool,
    /// Criterion's estimates of the two points, as the same ratio, and whether it falls in
    /// the paired interval.
    pub criterion: String,
}

/// A failed point.
#[derive(Debug, Serialize)]
pub struct FailureRow {
    /// What happened: failed, not supported on this device, out of memory.
    pub status: String,
    /// Label.
    pub label: String,
    /// Why.
    pub reason: String,
    /// The child's stderr tail.
    pub stderr_tail: String,
}

/// Bytes a prediction of zero may miss by before it is marked: a tensor handle's bookkeeping
/// (tens to a few hundred bytes) is not predicted.
const ZERO_PREDICTION_SLACK_BYTES: f64 = 1024.0;

/// Whether a measurement misses its prediction by more than 10% (more than
/// [`ZERO_PREDICTION_SLACK_BYTES`] where the prediction is zero).
fn misses(predicted: f64, measured: f64) -> bool {
    if predicted == 0.0 {
        measured.abs() > ZERO_PREDICTION_SLACK_BYTES
    } else {
        let pct = format::diff_pct(predicted, measured);
        pct.is_nan() || pct.abs() > 10.0
    }
}

/// File name of a chart's SVG; charts of a device result set carry the device's name.
pub fn chart_file(record: &ExperimentRecord, chart: &str) -> String {
    match record.device.kind.subfolder() {
        None => format!("charts/{}--{chart}.svg", record.experiment),
        Some(device) => format!("charts/{}--{device}--{chart}.svg", record.experiment),
    }
}

/// File name of a chart's narrow SVG, drawn for a phone's width.
pub fn narrow_chart_file(record: &ExperimentRecord, chart: &str) -> String {
    chart_file(record, chart).replace(".svg", "--narrow.svg")
}

/// The charts of a record: its analysis's, then one per headline comparison timed in pairs
/// (each round's ratio, the A/A control's, and the cost's 95% interval).
pub fn record_charts(record: &Analysed) -> Vec<Chart> {
    // A chart with nothing measured to draw (a time cost where no comparison was timed, as on
    // a software driver) is left out, not drawn empty.
    let mut charts: Vec<Chart> = record
        .analysis
        .charts
        .iter()
        .filter(|c| {
            c.series
                .iter()
                .flat_map(|s| &s.points)
                .any(|p| p.x.is_finite() && p.y.is_finite())
        })
        .map(crate::charts::in_readable_units)
        .collect();
    for c in record.comparisons.iter().filter(|c| !c.spec.supporting) {
        if let Some(t) = c.timing() {
            charts.push(rounds_chart(c, t));
        }
    }
    charts
}

/// A comparison's rounds: what each round measured, and the interval they give.
fn rounds_chart(c: &PairedComparison, t: &PairedTiming) -> Chart {
    let per_sample =
        t.baseline_samples_per_step.max(1) as f64 / t.technique_samples_per_step.max(1) as f64;
    let pct = |f: &dyn Fn(&results::Round) -> f64| -> Vec<(f64, f64)> {
        t.rounds
            .iter()
            .enumerate()
            .map(|(i, r)| ((i + 1) as f64, (f(r) - 1.0) * 100.0))
            .collect()
    };
    let cost = Series::line(
        "technique against baseline, each round (time per sample)",
        false,
        pct(&|r| r.technique_s / r.baseline_s * per_sample),
    );
    Chart {
        id: format!("paired-{}", c.spec.id),
        title: format!(
            "Timed in pairs: {} against {}",
            c.technique_label, c.baseline_label
        ),
        x_label: if t.builds >= 2 {
            format!(
                "round ({} builds of {} rounds, in order)",
                t.builds,
                t.rounds.len() / t.builds
            )
        } else {
            "round".into()
        },
        y_label: "difference from the baseline (%)".into(),
        x_unit: AxisUnit::Given,
        y_unit: AxisUnit::Given,
        x_scale: Scale::Counted,
        categories: Vec::new(),
        series: vec![
            cost,
            Series::line(
                "A/A control (baseline again), each round",
                false,
                pct(&|r| r.control_s / r.baseline_s),
            ),
            Series::band(
                format!(
                    "cost, mean over {} ({}), and its 95% interval ({} to {})",
                    if t.builds >= 2 { "builds" } else { "rounds" },
                    format::pct(t.cost.estimate_pct),
                    format::pct(t.cost.low_pct),
                    format::pct(t.cost.high_pct)
                ),
                [1.0, t.rounds.len().max(1) as f64]
                    .into_iter()
                    .map(|x| (x, t.cost.estimate_pct, t.cost.low_pct, t.cost.high_pct))
                    .collect(),
            ),
        ],
    }
}

/// How a comparison's rounds ran, in a few words.
fn how(t: &PairedTiming) -> String {
    format!(
        "{}; {}",
        crate::words::paired::method(t),
        crate::words::paired::stop_phrase(t)
    )
}

/// Criterion's estimates of a comparison's two points, as the paired ratio, set beside the
/// paired interval.
fn criterion_ratio(record: &Analysed, c: &PairedComparison, t: &PairedTiming) -> String {
    let estimate = |id: &str| record.criterion.iter().find(|e| e.point.id == id);
    match (estimate(&c.spec.baseline), estimate(&c.spec.technique)) {
        (Some(b), Some(x)) => {
            let ratio = (x.mean_s / x.samples_per_step.max(1) as f64)
                / (b.mean_s / b.samples_per_step.max(1) as f64);
            let pct = (ratio - 1.0) * 100.0;
            if (t.cost.low_pct..=t.cost.high_pct).contains(&pct) {
                format!("{}: inside the paired interval", format::pct(pct))
            } else {
                format!(
                    "{}: outside the paired interval. Criterion timed each point in a \
                     process of its own, minutes apart, so the machine's drift between \
                     the two is in its ratio; the paired figure interleaves them",
                    format::pct(pct)
                )
            }
        }
        _ => "not benchmarked".into(),
    }
}

/// A comparison's row on the page.
fn paired_row(record: &Analysed, c: &PairedComparison) -> PairedRow {
    let compared = format!("{} against {}", c.technique_label, c.baseline_label);
    match c.timing() {
        Some(t) => PairedRow {
            compared,
            how: how(t),
            cost: crate::words::paired::interval(&t.cost),
            cost_class: if t.cost.resolved() {
                "resolved"
            } else {
                "unresolved"
            }
            .into(),
            control: crate::words::paired::interval(&t.control),
            control_ok: !t.control.resolved(),
            criterion: criterion_ratio(record, c, t),
        },
        None => PairedRow {
            compared,
            how: "not measured".into(),
            cost: crate::words::paired::cost_phrase(c),
            cost_class: "na".into(),
            control: "n/a".into(),
            control_ok: true,
            criterion: "n/a".into(),
        },
    }
}

/// The index rows of a record: its headline, then its secondary headlines.
fn index_rows(record: &Analysed, verdicts: &SiteVerdicts) -> Vec<IndexRow> {
    std::iter::once(&record.analysis.headline)
        .chain(&record.analysis.secondary_headlines)
        .map(|h| headline_row(record, h, verdicts))
        .collect()
}

fn result_set(record: &Analysed, verdicts: &SiteVerdicts) -> ResultSet {
    let a = &record.analysis;
    let results = || record.points.iter().filter_map(|p| p.result());
    let phase_names = first_seen(results().flat_map(|r| r.phases.iter().map(|p| &*p.phase)));
    let points = point_rows(record, &phase_names);
    let phase_time_names =
        first_seen(results().flat_map(|r| r.phase_times.iter().map(|t| t.phase.as_str())));
    let phase_times = phase_time_rows(record, &phase_time_names);
    let comparisons = a.comparisons.iter().map(comparison_row).collect();
    ResultSet {
        criterion: criterion_rows(record),
        anchor: record.device.kind.name().into(),
        csv_href: csv_path(record),
        reproduce: reproduce_command(record),
        device_label: device_label(record),
        device_short: crate::index_row::device_short(record),
        device_name: record
            .device
            .identity
            .as_ref()
            .map_or_else(String::new, |id| id.name.clone()),
        headline: headline_row(record, &record.analysis.headline, verdicts),
        fix_tables: record
            .analysis
            .fix_table
            .iter()
            .flat_map(|t| std::iter::once(&t.table).chain(&t.regime))
            .map(|set| crate::workload_table::set_view(set, record.device.kind, verdicts))
            .collect(),
        secondary_headlines: index_rows(record, verdicts).into_iter().skip(1).collect(),
        paired: record
            .comparisons
            .iter()
            .map(|c| paired_row(record, c))
            .collect(),
        findings: a.findings.clone(),
        breakdowns: a.breakdowns.iter().map(BreakdownView::of).collect(),
        charts: record_charts(record)
            .iter()
            .map(|c| {
                ChartView::of(
                    c,
                    chart_file(record, &c.id),
                    narrow_chart_file(record, &c.id),
                )
            })
            .collect(),
        comparisons,
        estimator: record.estimator.iter().map(comparison_row).collect(),
        estimator_summary: ErrorSummary::of(&record.estimator)
            .map_or_else(String::new, |e| error_sentence(&e)),
        fits: a
            .fits
            .iter()
            .map(|f| FitRow {
                what: f.what.clone(),
                slope: format::bytes(f.fit.slope),
                intercept: format::bytes(f.fit.intercept),
                r_squared: format!("{:.6}", f.fit.r_squared),
                n: f.fit.n,
            })
            .collect(),
        published: a
            .published
            .iter()
            .map(|f| PublishedRow {
                source: f.source.clone(),
                claim: f.claim.clone(),
                ours: f.ours.clone(),
            })
            .collect(),
        phase_names,
        points,
        phase_time_names,
        phase_times,
        failures: failure_rows(record),
        incomplete: record.incomplete.clone(),
        stops_fitting: stops_fitting(record),
        resumed: resumed_lines(record),
        probe: probe_line(record),
        environment: environment(record),
        json_href: record.data_path(),
    }
}

/// A row per measured point: its phases' peaks, time, rate and checks.
fn point_rows(record: &Analysed, phase_names: &[String]) -> Vec<PointRow> {
    record
        .points
        .iter()
        .filter_map(|p| Some((p, p.result()?)))
        .map(|(p, r)| PointRow {
            label: p.point.label.clone(),
            phase_peaks: phase_names
                .iter()
                .map(|n| CellBytes::phase_peak(r.phase_named(n)))
                .collect(),
            live_before: CellBytes::new(r.phases.first().map(|ph| ph.live_before_bytes)),
            step_median: format::seconds(r.step.median_s),
            step_spread: format!(
                "{} to {}",
                format::seconds(r.step.min_s),
                format::seconds(r.step.max_s)
            ),
            repeats: r.step.samples_s.len(),
            samples_per_s: format!("{} {}/s", format::rate(r.samples_per_s), r.unit.name()),
            check: if record.checks_of(&p.point.id).next().is_none() {
                "none".into()
            } else {
                record
                    .checks_of(&p.point.id)
                    .map(|c| {
                        format!(
                            "{}: {} |diff| {:.3e} (rel. {:.3e} <= {:.0e})",
                            crate::words::describe_check(c),
                            if c.passed { "equal," } else { "DIFFERENT," },
                            c.max_abs_diff,
                            c.max_rel_diff,
                            c.tolerance
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            },
            check_failed: record.checks_of(&p.point.id).any(|c| !c.passed),
        })
        .collect()
}

/// A row per point whose phases were timed: each phase's median and share of the step.
fn phase_time_rows(record: &Analysed, phase_time_names: &[String]) -> Vec<PhaseTimeRow> {
    record
        .points
        .iter()
        .filter_map(|p| Some((p, p.result()?)))
        .filter(|(_, r)| !r.phase_times.is_empty())
        .map(|(p, r)| PhaseTimeRow {
            label: p.point.label.clone(),
            cells: phase_time_names
                .iter()
                .map(|name| {
                    r.phase_times.iter().find(|t| t.phase == *name).map_or_else(
                        || "n/a".into(),
                        |t| {
                            format!(
                                "{} ({:.0}%)",
                                format::seconds(t.timing.median_s),
                                t.timing.median_s / r.step.median_s * 100.0
                            )
                        },
                    )
                })
                .collect(),
            step: format::seconds(r.step.median_s),
            matmul_rate: matmul_rate(r, record.calibration.as_ref()),
        })
        .collect()
}

/// A row per point that was not measured: its outcome, the reason and stderr's tail.
fn failure_rows(record: &Analysed) -> Vec<FailureRow> {
    record
        .points
        .iter()
        .filter_map(|p| {
            let outcome = &p.outcome;
            if let Outcome::Measured { .. } = outcome {
                return None;
            }
            // Out of memory: the bytes asked for, unless the reason already says them.
            let asked = match outcome {
                Outcome::OutOfMemory {
                    requested_bytes: Some(b),
                    ..
                } => Some(format::bytes(*b as f64)),
                _ => None,
            };
            let reason = crate::words::outcome_reason(outcome);
            let reason = match asked {
                Some(bytes) if !reason.contains(&bytes) => format!("{reason} (asked for {bytes})"),
                _ => reason,
            };
            Some(FailureRow {
                label: p.point.label.clone(),
                status: outcome.status().into(),
                reason,
                stderr_tail: outcome.stderr_tail().into(),
            })
        })
        .collect()
}

/// Where and with what the set was measured, a line each.
fn environment(record: &Analysed) -> Vec<(String, String)> {
    let p = &record.provenance;
    let mut rows = vec![
        ("device".into(), record.device.kind.name().to_string()),
        ("backend".into(), record.device.backend.clone()),
        ("dtype".into(), record.device.dtype.clone()),
        ("profile".into(), record.profile.name().to_string()),
        (
            "CPU".into(),
            format!("{} ({} cores)", p.cpu_model, p.cpu_cores),
        ),
        ("OS".into(), p.os.clone()),
        ("burn".into(), p.burn_version.clone()),
        (
            "workbench".into(),
            format!("{} at {}", p.workbench_version, p.git_commit),
        ),
        (
            "build".into(),
            format!("{}, {}", p.build_profile, p.rustc_version),
        ),
        (
            "calibration".into(),
            record.calibration.as_ref().map_or_else(
                || "not measured".into(),
                |c| {
                    format!(
                        "f32 matmul {n} x {n} at {:.1} GFLOP/s; element-wise add of {} at {} \
                         (read and written, into a fresh buffer: its page faults \
                         included); medians of {} runs at the run's start",
                        c.matmul_gflop_s,
                        format::bytes(c.copy_bytes as f64),
                        crate::runs::add_rate(c, record.device.kind),
                        c.matmul.samples_s.len(),
                        n = c.matmul_n,
                    )
                },
            ),
        ),
        ("started".into(), p.started_at.clone()),
        ("wall time".into(), wall_time(record)),
    ];
    let cubecl = record
        .device
        .identity
        .as_ref()
        .and_then(|i| i.cubecl.as_ref());
    if let Some(c) = cubecl {
        rows.insert(4, ("CubeCL".into(), cubecl_line(c)));
    }
    rows
}

/// CubeCL's settings as the run read them: what a point's warm-up spent compiling and tuning
/// kernels depends on them.
fn cubecl_line(c: &results::CubeclSettings) -> String {
    let kernels = c.kernel_cache.as_ref().map_or_else(
        || "compiled kernels not kept: each process compiles its own".to_string(),
        |dir| format!("compiled kernels kept in {dir}"),
    );
    format!(
        "autotune level {}, its results kept in {}; {kernels} (each point's warm-up absorbs \
         the compiling and tuning)",
        c.autotune_level, c.autotune_cache
    )
}

/// What the set's memory figures count, and how its peaks were read.
fn probe_line(record: &Analysed) -> String {
    record.device.probe.as_ref().map_or_else(
        || "no point was measured".into(),
        |p| {
            format!(
                "{}: {}{}{}",
                p.kind,
                crate::probe::counts(p),
                bracket_resolution(record),
                if software(record) {
                    ". The driver is a software one, on the CPU: these bytes are the memory \
                     manager's own, its times are not a GPU's and are compared with nothing"
                } else {
                    ""
                }
            )
        },
    )
}

/// How the record's bracketed peaks were read, where it has any: how many phases, the sampling
/// thread's readings per phase and their spacing (the lower bound's resolution), the pool.
fn bracket_resolution(record: &Analysed) -> String {
    let brackets: Vec<&results::PeakBracket> = record
        .points
        .iter()
        .filter_map(|p| p.result())
        .flat_map(|r| r.phases.iter())
        .filter_map(|ph| ph.bracket.as_ref())
        .collect();
    if brackets.is_empty() {
        return String::new();
    }
    let samples = median(
        &brackets
            .iter()
            .map(|b| b.samples as f64)
            .collect::<Vec<_>>(),
    );
    let interval = median(
        &brackets
            .iter()
            .map(|b| b.sample_interval_s)
            .collect::<Vec<_>>(),
    );
    let mut pools: Vec<&str> = brackets.iter().map(|b| b.pool.as_str()).collect();
    pools.dedup();
    format!(
        ". Here: {} phases bracketed, each in one step measured for its memory after the timed \
         ones (not timed itself); the sampling thread took a median of {samples:.0} readings per \
         phase, a median {} apart: a transient shorter than that can fall between two readings, \
         which is why the lower bound is only a bound; the upper bound was read from the {} \
         pool. Peak cells show lower to upper bound (hover for the method of each)",
        brackets.len(),
        format::seconds(interval),
        pools.join(" / ")
    )
}

/// The rate of a step's matrix products (`step_flop` over the median step time) and its share
/// of the machine's measured matmul rate; `n/a` where the point did not count its operations.
fn matmul_rate(result: &PointResult, calibration: Option<&Calibration>) -> String {
    let flop = result.metric(Metric::StepFlop);
    if !flop.is_finite() {
        return "n/a".into();
    }
    let gflop_s = flop / result.step.median_s / 1e9;
    match calibration {
        Some(c) => format!(
            "{gflop_s:.1} GFLOP/s ({:.0}% of matmul)",
            gflop_s / c.matmul_gflop_s * 100.0
        ),
        None => format!("{gflop_s:.1} GFLOP/s"),
    }
}

/// The distinct names, in the order they first appear.
fn first_seen<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for name in names {
        if !seen.iter().any(|n| n == name) {
            seen.push(name.to_string());
        }
    }
    seen
}

/// Criterion's estimates joined with the record's points. They agree when criterion's
/// confidence interval of the mean overlaps the workbench's fastest-to-slowest range; they are
/// compared only where the benchmarked point has the record's configuration.
fn criterion_rows(record: &Analysed) -> Vec<CriterionRow> {
    // In the record's point order; estimates of points the record lacks last.
    let position = |id: &str| {
        record
            .points
            .iter()
            .position(|p| p.point.id == id)
            .unwrap_or(usize::MAX)
    };
    let mut estimates: Vec<_> = record.criterion.iter().collect();
    estimates.sort_by_key(|e| position(&e.point.id));
    estimates
        .into_iter()
        .map(|e| {
            let measured = record.points.iter().find(|p| p.point.id == e.point.id);
            let same_config = measured.is_some_and(|p| {
                p.point.config == e.point.config && p.point.warmup == e.point.warmup
            });
            let result = measured.and_then(|p| p.result());
            let (verdict, class) = match (measured, result) {
                (None, _) => ("no such point in this run".to_string(), "na"),
                (Some(_), None) => ("the point failed in this run".to_string(), "na"),
                (Some(_), Some(_)) if !same_config => (
                    "not compared: the bench ran another configuration".to_string(),
                    "na",
                ),
                (Some(_), Some(r)) => {
                    if e.mean_lower_s <= r.step.max_s && r.step.min_s <= e.mean_upper_s {
                        ("agree".to_string(), "ok")
                    } else {
                        ("differ".to_string(), "bad")
                    }
                }
            };
            let seconds = |s: f64| format::seconds(s);
            CriterionRow {
                label: measured.map_or_else(|| e.point.label.clone(), |p| p.point.label.clone()),
                benchmark: e.benchmark.clone(),
                workbench_median: result.map_or("n/a".into(), |r| seconds(r.step.median_s)),
                workbench_spread: result.map_or("n/a".into(), |r| {
                    format!(
                        "{} to {} ({} repeats)",
                        seconds(r.step.min_s),
                        seconds(r.step.max_s),
                        r.step.samples_s.len()
                    )
                }),
                criterion_mean: seconds(e.mean_s),
                criterion_interval: format!(
                    "{} to {} ({:.0}%)",
                    seconds(e.mean_lower_s),
                    seconds(e.mean_upper_s),
                    e.confidence_level * 100.0
                ),
                criterion_samples: format!("{} samples, {} steps", e.samples, e.iterations),
                diff_pct: result.map_or("n/a".into(), |r| {
                    format::pct(format::diff_pct(r.step.median_s, e.mean_s))
                }),
                samples_per_s: format!(
                    "{} / {}",
                    result.map_or("n/a".into(), |r| format::rate(r.samples_per_s)),
                    format::rate(e.samples_per_s())
                ),
                verdict,
                verdict_class: class.into(),
            }
        })
        .collect()
}

/// Where a record's points are written as CSV, beside its JSON.
pub fn csv_path(record: &ExperimentRecord) -> String {
    let json = record.data_path();
    format!("{}.csv", json.strip_suffix(".json").unwrap_or(&json))
}

/// The command that measures a record's set again (on the same kind of device and profile).
fn reproduce_command(record: &Analysed) -> String {
    let mut cmd = format!("workbench run {}", record.experiment);
    if record.profile == results::Profile::Quick {
        cmd.push_str(" --quick");
    }
    if record.device.kind != DeviceKind::Cpu {
        cmd.push_str(&format!(" --device {}", record.device.kind.name()));
    }
    cmd.push_str(" --out site");
    cmd
}

/// A prediction beside its measurement, formatted: the difference is to the nearer bound of a
/// bracket, none inside it.
fn comparison_row(c: &Comparison) -> ComparisonRow {
    let nearest = c.nearest_measured_bytes();
    let (measured, exact) = match c.measured_upper_bytes {
        Some(upper) => (
            format!(
                "{} to {}",
                format::bytes(c.measured_bytes),
                format::bytes(upper)
            ),
            format!(
                "predicted {:.0} bytes, measured between {:.0} and {:.0} bytes (a \
                     bracket: the difference is to its nearer bound, none inside it)",
                c.predicted_bytes, c.measured_bytes, upper
            ),
        ),
        None => (
            format::bytes(c.measured_bytes),
            format!(
                "predicted {:.0} bytes, measured {:.0} bytes",
                c.predicted_bytes, c.measured_bytes
            ),
        ),
    };
    ComparisonRow {
        quantity: c.quantity.clone(),
        predicted: format::bytes(c.predicted_bytes),
        measured,
        // The prediction's error, as every other place reads an estimate: the prediction less
        // the measurement, relative to the measurement (positive: too high).
        diff: if c.inside_bracket() {
            "inside".into()
        } else {
            format::bytes(c.predicted_bytes - nearest)
        },
        diff_pct: if c.inside_bracket() {
            String::new()
        } else {
            format::pct(c.error_pct())
        },
        off: misses(c.predicted_bytes, nearest),
        note: c.note.clone(),
        exact,
    }
}

impl SiteContext {
    /// The view of a set of records: one page per experiment, one result set per record of it
    /// (records in guide order, CPU first, as `record::load_dirs` returns them), and the "What
    /// fits" page where `capacity` is given.
    pub fn new(records: &[Analysed], capacity: Option<&AnalysedCapacity>) -> Self {
        let verdicts = SiteVerdicts::new(records);
        let mut pages: Vec<ExperimentPage> = Vec::new();
        for record in records {
            let set = result_set(record, &verdicts);
            match pages.iter_mut().find(|p| p.id == record.experiment) {
                Some(page) => page.sets.push(set),
                None => pages.push(ExperimentPage {
                    id: record.experiment.clone(),
                    href: format!("{}.html", record.experiment),
                    title: record.title.clone(),
                    fix: record.page.fix.clone(),
                    explanation: record.page.explanation.clone(),
                    on_devices: record.page.on_devices.clone(),
                    snippet: record.page.snippet.trim_end().into(),
                    sets: vec![set],
                }),
            }
        }
        let summaries: Vec<(&Analysed, ErrorSummary)> = records
            .iter()
            .filter_map(|r| Some((r, ErrorSummary::of(&r.estimator)?)))
            .collect();
        let estimator_worst = summaries
            .iter()
            .max_by(|a, b| a.1.worst_pct.abs().total_cmp(&b.1.worst_pct.abs()))
            .map_or_else(String::new, |(r, e)| {
                let count: usize = summaries.iter().map(|(_, e)| e.count).sum();
                let within: usize = summaries.iter().map(|(_, e)| e.within).sum();
                let under: usize = summaries.iter().map(|(_, e)| e.under).sum();
                format!(
                    "The estimator's step peak, set beside {count} measured training steps: \
                     {within} within {:.0}% (or inside their bracket); {under} of the {count} \
                     below the measurement, the way that makes a \"fits\" answer run out (hence \
                     the safety margin); the worst miss is {} on {} ({}, {}).",
                    ErrorSummary::WITHIN_PCT,
                    format::pct(e.worst_pct),
                    r.title,
                    r.device.kind.name(),
                    e.worst_quantity
                )
            });
        Self {
            rows: records
                .iter()
                .flat_map(|r| index_rows(r, &verdicts))
                .collect(),
            estimator: summaries
                .iter()
                .map(|(r, e)| EstimatorRow {
                    title: r.title.clone(),
                    href: format!("{}.html#{}", r.experiment, r.device.kind.name()),
                    device: r.device.kind.name().into(),
                    points: e.count,
                    within: e.within,
                    median: format::pct(e.median_abs_pct).trim_start_matches('+').into(),
                    worst: format::pct(e.worst_pct),
                    worst_quantity: e.worst_quantity.clone(),
                    off: e.worst_pct.abs() > ErrorSummary::WITHIN_PCT,
                })
                .collect(),
            estimator_worst,
            what_fits: capacity.map(|c| crate::what_fits::WhatFits::new(c, &verdicts, records)),
            fix_order: crate::fix_order::FixOrder::new(records, &verdicts),
            workload: crate::workload_table::WorkloadTable::new(records, &verdicts),
            provenance: crate::fix_order::provenance_lines(records),
            lede: crate::words::landing::lede(records),
            runs: crate::runs::rows(records),
            changes: None,
            pages,
        }
    }
}

/// Which points and comparisons of `record` came from which run, one sentence each, where a
/// resumed run (`run --resume`) kept some from an earlier run's journal or measured some again.
fn resumed_lines(record: &Analysed) -> Vec<String> {
    let Some(resumed) = &record.resumed else {
        return Vec::new();
    };
    let short = |commit: &str| commit.chars().take(7).collect::<String>();
    let mut lines = Vec::new();
    let mut kept_points = 0;
    let mut kept_comparisons = 0;
    for run in &resumed.kept {
        kept_points += run.points.len();
        kept_comparisons += run.comparisons.len();
        let mut what = Vec::new();
        if !run.points.is_empty() {
            what.push(format!(
                "{} point(s) ({})",
                run.points.len(),
                run.points.join(", ")
            ));
        }
        if !run.comparisons.is_empty() {
            what.push(format!(
                "{} comparison(s) ({})",
                run.comparisons.len(),
                run.comparisons.join("; ")
            ));
        }
        lines.push(format!(
            "Kept from the earlier run started {} (commit {}): {}.",
            run.run_started_at,
            short(&run.git_commit),
            what.join(" and ")
        ));
    }
    if !resumed.kept.is_empty() {
        let points = record.points.len().saturating_sub(kept_points);
        let comparisons = record.comparisons.len().saturating_sub(kept_comparisons);
        lines.push(if points + comparisons == 0 {
            format!(
                "The resumed run started {} measured nothing more here: all of it was kept.",
                resumed.run_started_at
            )
        } else {
            format!(
                "Measured by the resumed run started {}: the other {points} point(s) and \
                 {comparisons} comparison(s).",
                resumed.run_started_at
            )
        });
    }
    for again in &resumed.measured_again {
        lines.push(format!(
            "Measured again, not kept from the journal: {} ({}).",
            again.id, again.reason
        ));
    }
    lines
}

/// The experiment's wall time, saying where a resumed run timed only what it measured itself.
fn wall_time(record: &Analysed) -> String {
    match &record.resumed {
        Some(resumed) if !resumed.kept.is_empty() => format!(
            "{:.1} s in the resumed run; what it kept took its time in the earlier run",
            record.wall_s
        ),
        _ => format!("{:.1} s", record.wall_s),
    }
}

/// Where `record`'s sweep ran out of memory: how many points did, the first of them (in the
/// order run) with the bytes it asked for, and the last point before it that ran; empty where
/// none did.
fn stops_fitting(record: &Analysed) -> String {
    let out: Vec<usize> = record
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p.outcome, Outcome::OutOfMemory { .. }))
        .map(|(i, _)| i)
        .collect();
    let Some(&first) = out.first() else {
        return String::new();
    };
    let asked = match &record.points[first].outcome {
        Outcome::OutOfMemory {
            requested_bytes: Some(bytes),
            ..
        } => format!(
            " (the first in the order run, asking for {})",
            format::bytes(*bytes as f64)
        ),
        _ => " (the first in the order run)".into(),
    };
    let before = record.points[..first]
        .iter()
        .rev()
        .find(|p| p.result().is_some())
        .map_or(String::new(), |p| {
            format!("; the last point before it that ran: {}", p.point.label)
        });
    format!(
        "Out of memory at {} of {} points: the technique stops fitting on this device at {}\
         {asked}{before}.",
        out.len(),
        record.points.len(),
        record.points[first].point.label
    )
}
