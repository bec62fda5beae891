//! The transformer section and the memory timeline as the techniques not yet worded by the
//! guide write them: sentences built here, beside [`crate::workloads`], which says them as
//! [`results::Text`]. Goes once every technique's words are the guide's.

use results::{
    format::{self, mib},
    Chart, Comparison, Metric, Phase, PhaseKey, Scale, Series, Trace,
};

use crate::estimate;
use crate::technique::Row;
use crate::workloads::above_process;
pub use crate::workloads::{failed_checks, mlp_rows, split, HasModel};

/// What the transformer adds to a page.
#[derive(Debug, Default)]
pub struct Section {
    /// Findings, each starting "Transformer".
    pub findings: Vec<String>,
    /// Predicted against measured figures, each quantity starting "transformer".
    pub comparisons: Vec<Comparison>,
    /// Its charts.
    pub charts: Vec<Chart>,
}

impl Section {
    /// Appends this section to a page's findings, comparisons and charts.
    pub fn append_to(
        self,
        findings: &mut Vec<String>,
        comparisons: &mut Vec<Comparison>,
        charts: &mut Vec<Chart>,
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
    pub x_label: &'f str,
    /// The varied parameter of a row.
    pub x: &'f dyn Fn(&C) -> f64,
    /// Its scale.
    pub x_scale: Scale,
    /// Where a row belongs to one of several lines (plain and checkpointed), its line's name.
    pub line: &'f dyn Fn(&C) -> String,
    /// The predicted peak of a row's forward pass, from the shared rules
    /// ([`crate::estimate::forward_peak`]).
    pub predicted_forward: &'f dyn Fn(&C) -> f64,
    /// The predicted peak of a row's step ([`crate::estimate::training_step_peak`]).
    pub predicted_step: &'f dyn Fn(&C) -> f64,
    /// How the forward prediction is made and what it leaves out.
    pub note: &'f str,
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
    let mut lines: Vec<String> = Vec::new();
    for r in rows {
        let line = (axis.line)(&r.config);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    let of_line = |line: &str| {
        let mut on: Vec<&Row<'_, C>> = rows
            .iter()
            .filter(|r| (axis.line)(&r.config) == line)
            .collect();
        on.sort_by(|a, b| (axis.x)(&a.config).total_cmp(&(axis.x)(&b.config)));
        on
    };
    let named = |what: &str, line: &str| {
        if line.is_empty() {
            what.to_string()
        } else {
            format!("{what}, {line}")
        }
    };

    let excess: Vec<f64> = rows.iter().filter_map(backward_excess_per_token).collect();
    let (excess_low, excess_high) = excess
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &e| {
            (lo.min(e), hi.max(e))
        });
    let predicted_excess = estimate::backward_transient_bytes_per_sample(shape) / shape.seq as f64;
    let mut comparisons = Vec::new();
    for r in rows {
        comparisons.push(Comparison {
            quantity: format!("{}: forward peak above the process's own bytes", r.label),
            predicted_bytes: (axis.predicted_forward)(&r.config),
            measured_bytes: forward_above_process(r),
            measured_upper_bytes: forward_upper_above_process(r),
            note: axis.note.into(),
        });
        comparisons.push(Comparison {
            quantity: format!("{}: step peak above the process's own bytes", r.label),
            predicted_bytes: (axis.predicted_step)(&r.config),
            measured_bytes: above_process(r),
            measured_upper_bytes: r.peak_upper_above_process(),
            note: format!(
                "model + Adam state + token ids + what the forward pass keeps + the larger of \
                 the loss's transient and backward's (2 x max(4 d^2, d v) f32 values per \
                 sequence: the largest Linear's weight gradient computed per sequence before \
                 the sum, the factor 2 fitted); backward added {} per token above what the \
                 forward pass left",
                backward_excess_per_token(r).map_or("n/a".into(), format::bytes),
            ),
        });
    }

    let mut peak_series = Vec::new();
    let mut throughput_series = Vec::new();
    for line in &lines {
        let on = of_line(line);
        let x = |r: &&Row<'_, C>| (axis.x)(&r.config);
        peak_series.push(Series::line(
            &named("step peak (measured)", line),
            false,
            on.iter().map(|r| (x(r), mib(above_process(r)))).collect(),
        ));
        peak_series.push(Series::line(
            &named("forward peak (measured)", line),
            false,
            on.iter()
                .map(|r| (x(r), mib(forward_above_process(r))))
                .collect(),
        ));
        peak_series.push(Series::line(
            &named("forward peak (predicted)", line),
            true,
            on.iter()
                .map(|r| (x(r), mib((axis.predicted_forward)(&r.config))))
                .collect(),
        ));
        throughput_series.push(Series::throughput(
            &named("tokens/s (median; bars: fastest and slowest repeat)", line),
            on.iter().map(|r| (x(r), r.result)),
        ));
    }
    let charts = vec![
        Chart {
            id: format!("transformer-peak-vs-{}", axis.id),
            title: "Transformer: peaks of a training step above the process's own bytes".into(),
            x_label: axis.x_label.into(),
            y_label: "bytes in use (MiB)".into(),
            x_scale: axis.x_scale,
            categories: Vec::new(),
            series: peak_series,
        },
        Chart {
            id: format!("transformer-throughput-vs-{}", axis.id),
            title: "Transformer: training throughput".into(),
            x_label: axis.x_label.into(),
            y_label: "throughput (tokens/s)".into(),
            x_scale: axis.x_scale,
            categories: Vec::new(),
            series: throughput_series,
        },
    ];

    let worst = |what: &str| {
        comparisons
            .iter()
            .filter(|c| c.quantity.contains(what))
            .map(|c| (c.measured_bytes - c.predicted_bytes) / c.predicted_bytes)
            .max_by(|a, b| a.abs().total_cmp(&b.abs()))
            .unwrap_or(f64::NAN)
    };
    let (low, high) = rows.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
        (
            lo.min(r.result.samples_per_s),
            hi.max(r.result.samples_per_s),
        )
    });
    let findings = vec![
        format!(
            "Transformer ({}, {} parameters), {} points: step peak from {} to {}; throughput \
             from {} to {} tokens/s.",
            first.config.model().describe(),
            first.config.model().num_params(),
            rows.len(),
            format::bytes(rows.iter().map(|r| r.peak()).fold(f64::INFINITY, f64::min)),
            format::bytes(rows.iter().map(|r| r.peak()).fold(0.0, f64::max)),
            format::rate(low),
            format::rate(high),
        ),
        format!(
            "Transformer, against the shared byte rules (above the process's own bytes): the \
             forward pass's peak within {:.1}% at every point (worst {:+.1}%), the step's \
             within {:.1}% (worst {:+.1}%). The step's peak is in backward, which adds {} to {} \
             per token above what the forward pass left, while every activation is still \
             alive: burn-backend's `linear_weight_backward` computes a Linear's weight \
             gradient per sequence, [batch, d_in, d_out], before summing it over the batch, \
             and at the largest Linear (the MLP block's 4 d^2, or the head's d v) the peak \
             holds about two such copies ({} per token here; the factor 2 was fitted after \
             measuring: an explanation, not a prediction). The MLP's Linear layers take 2-D \
             inputs and have no such transient.",
            worst("forward peak").abs() * 100.0,
            worst("forward peak") * 100.0,
            worst("step peak").abs() * 100.0,
            worst("step peak") * 100.0,
            format::bytes(excess_low),
            format::bytes(excess_high),
            format::bytes(predicted_excess),
        ),
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
    title: &str,
    rows: &[&Row<'_, C>],
) -> Option<(Chart, Vec<String>)> {
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
            format!(
                "at allocation event {peak_x:.0} of {total:.0}, in a {phase} phase ({} phases: {})",
                starts.len(),
                starts
                    .iter()
                    .zip(kinds)
                    .map(|(s, k)| format!("{} from event {s:.0}", phase_kind_name(*k)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            let i = (peak_x.floor() as usize).min(r.result.phases.len().saturating_sub(1));
            format!(
                "in its {} phase (read at the phase boundaries and the phase's peak)",
                r.result.phases.get(i).map_or("step", |p| &p.phase)
            )
        };
        findings.push(format!(
            "Memory timeline, {}: the step's peak is {} {where_}.",
            r.label,
            format::bytes(peak_y)
        ));
        series.push(
            Series::line(
                &format!("{} (peak {}, marked)", r.label, format::bytes(peak_y)),
                false,
                points.iter().map(|&(x, y)| (x, mib(y))).collect(),
            )
            .with_marked((peak_x, mib(peak_y))),
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
                "allocation events in one step (each allocation or free)".into()
            } else {
                "phases of one step (boundary, peak, boundary)".into()
            },
            y_label: "bytes in use (MiB)".into(),
            x_scale: Scale::Linear,
            categories: Vec::new(),
            series,
        },
        findings,
    ))
}
