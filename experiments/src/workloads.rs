//! The two workloads on one page: a technique's points on the MLP (the simple model that
//! teaches the mechanism) and on the transformer (what people who run out of memory train).
//!
//! Question: does what a technique buys on the MLP carry to a transformer?
//! Method: the same technique's points on both models, the model part of each point's
//! configuration; a page splits its rows by model, analyses the MLP's as before, and adds the
//! transformer's section here: its step peak against the shared byte rules of
//! [`crate::estimate`] and its throughput in tokens per second.
//! Answer: each page says it, from its own rows.

use results::format::{self, mib};
use results::{Chart, Comparison, Metric, Scale, Series};

use crate::harness::models::ModelShape;
use crate::harness::train::TrainConfig;
use crate::technique::Row;

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
    /// The predicted step peak of a row, from the shared rules, if predicted.
    pub predicted_peak: &'f dyn Fn(&C) -> Option<f64>,
    /// How the prediction is made and what it leaves out.
    pub note: &'f str,
}

/// A row's step peak above what the process held before the model was built (the thread
/// pool and matmul buffers, which no rule predicts and which do not grow with the model).
pub fn above_process<C>(row: &Row<'_, C>) -> f64 {
    row.peak() - row.result.metric(Metric::ProcessBaselineBytes)
}

/// The transformer's section of a page: the step peak of each row beside its prediction, the
/// peak and the throughput (tokens/s) against the varied parameter.
pub fn transformer_section<C: HasModel>(rows: &[Row<'_, C>], axis: &Axis<'_, C>) -> Section {
    let Some(first) = rows.first() else {
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

    let comparisons: Vec<Comparison> = rows
        .iter()
        .filter_map(|r| {
            Some(Comparison {
                quantity: format!("{}: step peak above the process's own bytes", r.label),
                predicted_bytes: (axis.predicted_peak)(&r.config)?,
                measured_bytes: above_process(r),
                note: axis.note.into(),
            })
        })
        .collect();

    let mut peak_series = Vec::new();
    let mut throughput_series = Vec::new();
    for line in &lines {
        let on = of_line(line);
        peak_series.push(Series::line(
            &named("step peak above the process's own bytes (measured)", line),
            false,
            on.iter()
                .map(|r| ((axis.x)(&r.config), mib(above_process(r))))
                .collect(),
        ));
        let predicted: Vec<(f64, f64)> = on
            .iter()
            .filter_map(|r| Some(((axis.x)(&r.config), mib((axis.predicted_peak)(&r.config)?))))
            .collect();
        if !predicted.is_empty() {
            peak_series.push(Series::line(
                &named("step peak (predicted)", line),
                true,
                predicted,
            ));
        }
        throughput_series.push(Series::throughput(
            &named("tokens/s (median; bars: fastest and slowest repeat)", line),
            on.iter().map(|r| ((axis.x)(&r.config), r.result)),
        ));
    }
    let charts = vec![
        Chart {
            id: format!("transformer-peak-vs-{}", axis.id),
            title: "Transformer: peak memory of a training step above the process's own bytes"
                .into(),
            x_label: axis.x_label.into(),
            y_label: "bytes in use (MiB)".into(),
            x_scale: axis.x_scale,
            series: peak_series,
        },
        Chart {
            id: format!("transformer-throughput-vs-{}", axis.id),
            title: "Transformer: training throughput".into(),
            x_label: axis.x_label.into(),
            y_label: "throughput (tokens/s)".into(),
            x_scale: axis.x_scale,
            series: throughput_series,
        },
    ];

    let worst = comparisons
        .iter()
        .map(|c| (c.measured_bytes - c.predicted_bytes) / c.predicted_bytes)
        .max_by(|a, b| a.abs().total_cmp(&b.abs()));
    let (low, high) = rows.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
        (
            lo.min(r.result.samples_per_s),
            hi.max(r.result.samples_per_s),
        )
    });
    let mut findings = vec![format!(
        "Transformer ({}, {} parameters), {} points: step peak from {} to {}; throughput from \
         {} to {} tokens/s{}.",
        first.config.model().describe(),
        first.config.model().num_params(),
        rows.len(),
        format::bytes(rows.iter().map(|r| r.peak()).fold(f64::INFINITY, f64::min)),
        format::bytes(rows.iter().map(|r| r.peak()).fold(0.0, f64::max)),
        format::rate(low),
        format::rate(high),
        worst.map_or(String::new(), |w| format!(
            "; the shared byte rules predict every step peak within {:.1}% (worst: {:+.1}%)",
            w.abs() * 100.0,
            w * 100.0
        ))
    )];
    findings.retain(|f| !f.is_empty());
    Section {
        findings,
        comparisons,
        charts,
    }
}
