//! The landing page's table: every fix on one workload, on one base, and the order read from
//! it.
//!
//! Question: with an out-of-memory error training a transformer, what to try first, and what
//! does it buy? Method: the first result set (the CPU's where there is one) whose analysis
//! holds a [`FixTable`] gives the measured cells, each saving a share of the plain step's
//! peak, and the same fixes estimated at a card's out-of-memory point; the order of the
//! training fixes is their estimated peak there (the lowest first), by the rules the measured
//! cells checked. Answer: the rows the landing page prints, the order first.

use results::{format, Analysed, Correctness, FixCell, FixTable};
use serde::Serialize;

use crate::index_row::{device_label, verdict};

/// One measured cell, formatted.
#[derive(Debug, Serialize)]
pub struct CellRow {
    /// The fix.
    pub fix: String,
    /// Link to the page that explains it.
    pub href: Option<String>,
    /// Whether this is the base (the plain step).
    pub base: bool,
    /// The peak.
    pub peak: String,
    /// The saving as a share of the base's peak (`-38.1%`; negative saves).
    pub change: String,
    /// Weights and optimizer state (weights only for inference).
    pub fixed: String,
    /// What the forward pass keeps (a pass's own bytes for inference).
    pub activations: String,
    /// The estimator's peak and its error, or "not modelled".
    pub estimate: String,
    /// `passed`, `failed`, `not applicable`.
    pub verdict: String,
    /// Its CSS class.
    pub verdict_class: String,
    /// What the check compared, with its figures.
    pub check: String,
    /// What the check compared, in a few words.
    pub check_short: String,
    /// The time against the plain step, timed in pairs, or why not.
    pub time: String,
}

/// One fix at the card's out-of-memory point, formatted.
#[derive(Debug, Serialize)]
pub struct ProjectedRow {
    /// Its place in the order, from 1 (the plain step has none).
    pub rank: Option<usize>,
    /// The fix.
    pub fix: String,
    /// Link to the page that explains it.
    pub href: Option<String>,
    /// The estimated peak at the projection's batch.
    pub peak: String,
    /// Against plain's estimated peak there.
    pub change: String,
    /// The largest batch that fits the card with the fix.
    pub max_batch: String,
    /// The estimator's error measured on the same fix (the measured table's cell).
    pub measured_error: String,
    /// Whether the fix's own check failed in the measured cell.
    pub failed_check: bool,
}

/// The table and the order, as the landing page prints them.
#[derive(Debug, Serialize)]
pub struct WorkloadTable {
    /// Link to the technique page that measured the table.
    pub href: String,
    /// The device it was measured on.
    pub device: String,
    /// The workload, in words.
    pub workload: String,
    /// The plain step's peak.
    pub base_peak: String,
    /// The plain step's fixed part (weights, gradients, optimizer state) as a share of its
    /// peak.
    pub fixed_share: String,
    /// The training cells.
    pub training: Vec<CellRow>,
    /// The inference cells.
    pub inference: Vec<CellRow>,
    /// The card, in words (`24 GiB`).
    pub card: String,
    /// What a step may plan on there, in words.
    pub usable: String,
    /// Tokens per sequence at the projection.
    pub seq: usize,
    /// The projection's batch.
    pub batch: String,
    /// The largest batch plain training fits at.
    pub plain_max_batch: String,
    /// The projected cells, in the order.
    pub projected: Vec<ProjectedRow>,
    /// The order in a line: the fixes' names, first to last.
    pub order: Vec<String>,
    /// The same cells measured on other devices, one line each.
    pub elsewhere: Vec<String>,
}

fn href(page: &Option<String>) -> Option<String> {
    page.as_ref().map(|p| format!("{p}.html"))
}

fn cell_row(record: &Analysed, table: &FixTable, c: &FixCell) -> CellRow {
    let (verdict, verdict_class) = verdict(c.correctness);
    let base = c.id == table.base;
    CellRow {
        fix: c.fix.clone(),
        href: href(&c.page),
        base,
        peak: format::bytes(c.peak_bytes),
        change: if base {
            "the base".into()
        } else {
            table
                .saving_pct(c)
                .map_or_else(|| "no base".into(), |s| format::pct(-s))
        },
        fixed: format::bytes(c.fixed_bytes),
        activations: format::bytes(c.activation_bytes),
        estimate: match (c.predicted_bytes, c.estimate_error_pct()) {
            (Some(p), Some(e)) => format!("{} ({})", format::bytes(p), format::pct(e)),
            _ => "not modelled".into(),
        },
        verdict: verdict.into(),
        verdict_class: verdict_class.into(),
        check: c.check.clone(),
        check_short: c.check_short.clone(),
        time: results::paired::find(&record.comparisons, &c.id)
            .map_or_else(String::new, crate::words::paired::cost_phrase),
    }
}

impl WorkloadTable {
    /// The table of the first record that holds one (records in guide order, CPU first).
    pub fn new(records: &[Analysed]) -> Option<Self> {
        let (record, table) = records
            .iter()
            .find_map(|r| Some((r, r.analysis.fix_table.as_ref()?)))?;
        let base = table.cells.iter().find(|c| c.id == table.base)?;
        let projection = table.projection.as_ref()?;
        let plain = projection.cells.iter().find(|c| c.id == table.base)?;
        let measured = |id: &str| table.cells.iter().find(|c| c.id == id);
        let mut ranked: Vec<_> = projection
            .cells
            .iter()
            .filter(|c| c.id != table.base)
            .collect();
        // The order: the lowest estimated peak at the card's out-of-memory batch first (one
        // base for every fix); a fix whose own check failed goes last, whatever it saves.
        ranked.sort_by(|a, b| {
            let failed =
                |id: &str| measured(id).is_some_and(|m| m.correctness == Correctness::Failed);
            failed(&a.id)
                .cmp(&failed(&b.id))
                .then(a.predicted_bytes.total_cmp(&b.predicted_bytes))
        });
        let row = |rank: Option<usize>, c: &results::ProjectedCell| {
            let m = measured(&c.id);
            ProjectedRow {
                rank,
                fix: c.fix.clone(),
                href: m.and_then(|m| href(&m.page)),
                peak: format::bytes(c.predicted_bytes),
                change: if rank.is_none() {
                    "the base".into()
                } else {
                    format::pct(
                        (c.predicted_bytes - plain.predicted_bytes) / plain.predicted_bytes * 100.0,
                    )
                },
                max_batch: format::thousands(c.max_batch as u64),
                measured_error: m
                    .and_then(FixCell::estimate_error_pct)
                    .map_or_else(|| "not measured".into(), format::pct),
                failed_check: m.is_some_and(|m| m.correctness == Correctness::Failed),
            }
        };
        let mut projected = vec![row(None, plain)];
        projected.extend(ranked.iter().enumerate().map(|(i, c)| row(Some(i + 1), c)));
        let elsewhere = records
            .iter()
            .filter(|r| r.experiment == record.experiment && r.device.kind != record.device.kind)
            .filter_map(|r| {
                let t = r.analysis.fix_table.as_ref()?;
                let plain = t.cells.iter().find(|c| c.id == t.base)?;
                Some(format!(
                    "{}: plain step {}; {}",
                    r.device.kind.name(),
                    format::bytes(plain.peak_bytes),
                    t.cells
                        .iter()
                        .filter(|c| c.id != t.base && c.training)
                        .map(|c| format!(
                            "{} {}",
                            c.fix,
                            t.saving_pct(c)
                                .map_or_else(String::new, |s| format::pct(-s))
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
            .collect();
        Some(Self {
            href: format!("{}.html", record.experiment),
            device: device_label(record),
            workload: table.workload.clone(),
            base_peak: format::bytes(base.peak_bytes),
            fixed_share: format!(
                "{:.0}%",
                (base.fixed_bytes + base.gradient_bytes) / base.peak_bytes * 100.0
            ),
            training: table
                .cells
                .iter()
                .filter(|c| c.training)
                .map(|c| cell_row(record, table, c))
                .collect(),
            inference: table
                .cells
                .iter()
                .filter(|c| !c.training)
                .map(|c| cell_row(record, table, c))
                .collect(),
            card: format::bytes(projection.card_bytes),
            usable: format::bytes(projection.usable_bytes),
            seq: projection.seq,
            batch: format::thousands(projection.batch as u64),
            plain_max_batch: format::thousands(plain.max_batch as u64),
            order: ranked.iter().map(|c| c.fix.clone()).collect(),
            projected,
            elsewhere,
        })
    }
}
