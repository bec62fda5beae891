//! The two workloads on one page: a technique's points on the MLP (the simple model that
//! teaches the mechanism) and on the transformer (what people who run out of memory train).
//!
//! Question: does what a technique buys on the MLP carry to a transformer?
//! Method: the same technique's points on both models, the model part of each point's
//! configuration; a page splits its rows by model, analyses the MLP's as before, and adds the
//! transformer's section here: its step peak against the shared byte rules of
//! [`estimator::estimate`] and its throughput in tokens per second.
//! Answer: each page says it, from its own rows.

use results::keys::{TimelineKey, TransformerKey};
use results::{AxisUnit, Chart, Comparison, Metric, Phase, PhaseKey, Scale, Series, Text, Trace};

use crate::harness::models::ModelShape;
use crate::harness::train::TrainConfig;
use crate::technique::Row;
use estimator::estimate;

/// A configuration that names the model it runs.
pub trait HasModel {
    /// The model of the point.
    fn model(&self) -> ModelShape;
}

impl HasModel for TrainConfig {
    fn model(&self) -> ModelShape {
        self.shape
    }
}

/// The rows split by model: the MLP's, then the transformer's, each in the order given.
pub fn split<'a, C: HasModel>(rows: Vec<Row<'a, C>>) -> (Vec<Row<'a, C>>, Vec<Row<'a, C>>) {
    rows.into_iter()
        .partition(|r| !r.config.model().is_transformer())
}

/// The MLP's rows alone, in the order given (the comparisons a page times are the MLP's).
pub fn mlp_rows<'a, C: HasModel + Clone>(rows: &[Row<'a, C>]) -> Vec<Row<'a, C>> {
    rows.iter()
        .filter(|r| !r.config.model().is_transformer())
        .cloned()
        .collect()
}

/// How many checks of `rows` failed.
pub fn failed_checks<C>(rows: &[Row<'_, C>]) -> usize {
    rows.iter()
        .flat_map(|r| &r.result.checks)
        .filter(|c| !c.passed)
        .count()
}

/// What the transformer adds to a page.
#[derive(Debug, Default)]
pub struct Section {
    /// Findings about the transformer.
    pub findings: Vec<Text>,
    /// Predicted against measured figures of the transformer.
    pub comparisons: Vec<Comparison<Text>>,
    /// Its charts.
    pub charts: Vec<Chart<Text>>,
}

impl Section {
    /// Appends this section to a page's findings, comparisons and charts.
    pub fn append_to(
        self,
        findings: &mut Vec<Text>,
        comparisons: &mut Vec<Comparison<Text>>,
        charts: &mut Vec<Chart<Text>>,
    ) {
        findings.extend(self.findings);
        comparisons.extend(self.comparisons);
        charts.extend(self.charts);
    }
}

/// How a technique's transformer rows are drawn and predicted.
pub struct Axis<'f, C> {
    /// Prefix of the charts' ids (`batch`: `transformer-peak-vs-batch`).
    pub id: &'f str,
    /// The varied parameter, with its unit.
    pub x_label: Text,
    /// The varied parameter of a row.
    pub x: &'f dyn Fn(&C) -> f64,
    /// Its scale.
    pub x_scale: Scale,
    /// Where a row belongs to one of several lines (plain and checkpointed), its line's name.
    pub line: &'f dyn Fn(&C) -> Option<Text>,
    /// The predicted peak of a row's forward pass, from the shared rules
    /// ([`estimator::estimate::forward_peak`]).
    pub predicted_forward: &'f dyn Fn(&C) -> f64,
    /// The predicted peak of a row's step ([`estimator::estimate::training_step_peak`]).
    pub predicted_step: &'f dyn Fn(&C) -> f64,
    /// How the forward prediction is made and what it leaves out.
    pub note: Text,
}

/// A row's step peak above what the process held before the model was built (the thread
/// pool and matmul buffers, which no rule predicts and which do not grow with the model).
pub fn above_process<C>(row: &Row<'_, C>) -> f64 {
    row.peak_above_process()
}

/// A row's forward peak above the process's own bytes.
fn forward_above_process<C>(row: &Row<'_, C>) -> f64 {
    row.result
        .phase(Phase::Forward)
        .map_or(f64::NAN, |p| p.peak_bytes as f64)
        - row.result.metric(Metric::ProcessBaselineBytes)
}

/// Where the forward phase was bracketed, its upper bound above the process's own bytes.
fn forward_upper_above_process<C>(row: &Row<'_, C>) -> Option<f64> {
    let b = row.result.phase(Phase::Forward)?.bracket.as_ref()?;
    Some(b.upper_bytes as f64 - row.result.metric(Metric::ProcessBaselineBytes))
}

/// What backward adds above what the forward pass left live, per token: the gradients it
/// makes while the activations are still alive.
fn backward_excess_per_token<C>(row: &Row<'_, C>) -> Option<f64> {
    let forward = row.result.phase(Phase::Forward)?;
    let backward = row.result.phase(Phase::Backward)?;
    let tokens = row.result.samples_per_step.max(1) as f64;
    Some(backward.peak_bytes.saturating_sub(forward.live_after_bytes) as f64 / tokens)
}

/// The transformer's section of a page: the forward and step peaks of each row beside the
/// shared rules, what backward adds above them per token, the peaks and the throughput
/// (tokens/s) against the varied parameter.
pub fn transformer_section<C: HasModel>(rows: &[Row<'_, C>], axis: &Axis<'_, C>) -> Section {
    let Some(first) = rows.first() else {
        return Section::default();
    };
    let Some(shape) = first.config.model().transformer() else {
        return Section::default();
    };
    let mut lines: Vec<Option<Text>> = Vec::new();
    for r in rows {
        let line = (axis.line)(&r.config);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    let of_line = |line: &Option<Text>| {
        let mut on: Vec<&Row<'_, C>> = rows
            .iter()
            .filter(|r| (axis.line)(&r.config) == *line)
            .collect();
        on.sort_by(|a, b| (axis.x)(&a.config).total_cmp(&(axis.x)(&b.config)));
        on
    };
    let named = |key: TransformerKey, line: &Option<Text>| match line {
        Some(line) => Text::said(key).text("line", line.clone()),
        None => Text::said(key),
    };

    let excess: Vec<f64> = rows.iter().filter_map(backward_excess_per_token).collect();
    let (excess_low, excess_high) = excess
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &e| {
            (lo.min(e), hi.max(e))
        });
    let predicted_excess = estimate::backward_transient_bytes_per_sample(shape) / shape.seq as f64;
    let mut comparisons = Vec::new();
    // The largest miss, relative to the prediction, of the forward peaks and of the step peaks.
    let (mut worst_forward, mut worst_step) = (f64::NAN, f64::NAN);
    let worse = |worst: &mut f64, predicted: f64, measured: f64| {
        let miss = (measured - predicted) / predicted;
        if worst.is_nan() || miss.abs() > worst.abs() {
            *worst = miss;
        }
    };
    for r in rows {
        let forward = Comparison {
            quantity: Text::said(TransformerKey::ForwardQuantity).name("point", r.label),
            predicted_bytes: (axis.predicted_forward)(&r.config),
            measured_bytes: forward_above_process(r),
            measured_upper_bytes: forward_upper_above_process(r),
            note: axis.note.clone(),
            regime: None,
        };
        worse(
            &mut worst_forward,
            forward.predicted_bytes,
            forward.measured_bytes,
        );
        comparisons.push(forward);
        let step = Comparison {
            quantity: Text::said(TransformerKey::StepQuantity).name("point", r.label),
            predicted_bytes: (axis.predicted_step)(&r.config),
            measured_bytes: above_process(r),
            measured_upper_bytes: r.peak_upper_above_process(),
            note: Text::said(TransformerKey::StepNote)
                .bytes("excess", backward_excess_per_token(r).unwrap_or(f64::NAN)),
            regime: None,
        };
        worse(&mut worst_step, step.predicted_bytes, step.measured_bytes);
        comparisons.push(step);
    }

    let mut peak_series = Vec::new();
    let mut throughput_series = Vec::new();
    for line in &lines {
        let on = of_line(line);
        let x = |r: &&Row<'_, C>| (axis.x)(&r.config);
        peak_series.push(Series::line(
            named(TransformerKey::StepMeasured, line),
            false,
            on.iter().map(|r| (x(r), above_process(r))).collect(),
        ));
        peak_series.push(Series::line(
            named(TransformerKey::ForwardMeasured, line),
            false,
            on.iter()
                .map(|r| (x(r), forward_above_process(r)))
                .collect(),
        ));
        peak_series.push(Series::line(
            named(TransformerKey::ForwardPredicted, line),
            true,
            on.iter()
                .map(|r| (x(r), (axis.predicted_forward)(&r.config)))
                .collect(),
        ));
        throughput_series.push(Series::throughput(
            named(TransformerKey::TokensPerS, line),
            on.iter().map(|r| (x(r), r.result)),
        ));
    }
    let charts = vec![
        Chart {
            id: format!("transformer-peak-vs-{}", axis.id),
            title: Text::said(TransformerKey::PeaksTitle),
            x_label: axis.x_label.clone(),
            y_label: TransformerKey::BytesInUse.into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Bytes,
            x_scale: axis.x_scale,
            categories: Vec::new(),
            series: peak_series,
        },
        Chart {
            id: format!("transformer-throughput-vs-{}", axis.id),
            title: TransformerKey::ThroughputTitle.into(),
            x_label: axis.x_label.clone(),
            y_label: TransformerKey::ThroughputYLabel.into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Given,
            x_scale: axis.x_scale,
            categories: Vec::new(),
            series: throughput_series,
        },
    ];

    let (low, high) = rows.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
        (
            lo.min(r.result.samples_per_s),
            hi.max(r.result.samples_per_s),
        )
    });
    let findings = vec![
        Text::said(TransformerKey::Summary)
            .name("model", first.config.model().describe())
            .count("params", first.config.model().num_params())
            .count("points", rows.len())
            .bytes(
                "lowest_peak",
                rows.iter().map(|r| r.peak()).fold(f64::INFINITY, f64::min),
            )
            .bytes(
                "highest_peak",
                rows.iter().map(|r| r.peak()).fold(0.0, f64::max),
            )
            .number("lowest_rate", low)
            .number("highest_rate", high),
        Text::said(TransformerKey::AgainstRules)
            .number("worst_forward", worst_forward)
            .number("worst_step", worst_step)
            .bytes("excess_low", excess_low)
            .bytes("excess_high", excess_high)
            .bytes("predicted_excess", predicted_excess),
    ];
    Section {
        findings,
        comparisons,
        charts,
    }
}

/// A phase kind's name, by its code in [`Trace::MemoryTimelinePhaseKind`].
fn phase_kind_name(code: f64) -> &'static str {
    crate::harness::train::TIMELINE_PHASES
        .get(code as usize)
        .map_or("other", |p| p.name())
}

/// One training step's memory over time for each of `rows` (a baseline and its technique), on
/// one chart, with each line's peak marked in its colour, and a finding per row saying where the peak fell.
/// On the CPU the timeline is the counting allocator's (bytes in use after every allocation
/// event of one untimed step); on a device, whose probe sees no events, the readings at the
/// phases' boundaries and each phase's peak (its bracket's lower bound). `None` where no row
/// has either.
pub fn timeline_chart<C>(
    id: &str,
    title: impl Into<Text>,
    rows: &[&Row<'_, C>],
) -> Option<(Chart<Text>, Vec<Text>)> {
    let with_events = rows
        .iter()
        .all(|r| !r.result.trace(Trace::MemoryTimelineEvent).is_empty());
    let mut series = Vec::new();
    let mut findings = Vec::new();
    for r in rows {
        let points: Vec<(f64, f64)> = if with_events {
            r.result
                .trace(Trace::MemoryTimelineEvent)
                .iter()
                .zip(r.result.trace(Trace::MemoryTimelineBytes))
                .map(|(&e, &b)| (e, b))
                .collect()
        } else {
            let mut pts = Vec::new();
            for (i, ph) in r.result.phases.iter().enumerate() {
                let i = i as f64;
                pts.push((i, ph.live_before_bytes as f64));
                pts.push((i + 0.5, ph.peak_bytes as f64));
                pts.push((i + 1.0, ph.live_after_bytes as f64));
            }
            pts
        };
        let Some(&(peak_x, peak_y)) = points.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let where_ = if with_events {
            let starts = r.result.trace(Trace::MemoryTimelinePhaseStart);
            let kinds = r.result.trace(Trace::MemoryTimelinePhaseKind);
            let phase = starts
                .iter()
                .zip(kinds)
                .rfind(|(s, _)| **s <= peak_x)
                .map_or("step", |(_, k)| phase_kind_name(*k));
            let total = r
                .result
                .trace(Trace::MemoryTimelineEvent)
                .last()
                .copied()
                .unwrap_or(0.0)
                + 1.0;
            Text::said(TimelineKey::AtEvent)
                .number("event", peak_x)
                .number("events", total)
                .name("phase", phase)
                .list(
                    "phases",
                    starts
                        .iter()
                        .zip(kinds)
                        .map(|(s, k)| {
                            Text::said(TimelineKey::PhaseStart)
                                .name("phase", phase_kind_name(*k))
                                .number("event", *s)
                        })
                        .collect(),
                )
        } else {
            let i = (peak_x.floor() as usize).min(r.result.phases.len().saturating_sub(1));
            Text::said(TimelineKey::InPhase)
                .name("phase", r.result.phases.get(i).map_or("step", |p| &p.phase))
        };
        findings.push(
            Text::said(TimelineKey::Peak)
                .name("point", r.label)
                .bytes("peak", peak_y)
                .text("where", where_),
        );
        series.push(
            Series::line(
                Text::said(TimelineKey::Series)
                    .name("point", r.label)
                    .bytes("peak", peak_y),
                false,
                points,
            )
            .with_marked((peak_x, peak_y)),
        );
    }
    if series.is_empty() {
        return None;
    }
    Some((
        Chart {
            id: id.into(),
            title: title.into(),
            x_label: if with_events {
                Text::said(TransformerKey::TimelineXLabel)
            } else {
                Text::said(TransformerKey::PhasesXLabel)
            },
            y_label: TransformerKey::BytesInUse.into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Bytes,
            x_scale: Scale::Linear,
            categories: Vec::new(),
            series,
        },
        findings,
    ))
}
