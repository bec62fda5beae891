//! The index's row of a headline: what a technique saves on one device, what it costs in
//! time and what its checks found, as the landing page and the fix order print it.

use results::{format, Analysed, DeviceKind, Headline};
use serde::Serialize;

use crate::verdicts::SiteVerdicts;

/// A row of the index table.
#[derive(Debug, Serialize)]
pub struct IndexRow {
    /// Experiment id.
    pub id: String,
    /// Page title.
    pub title: String,
    /// Link to the page.
    pub href: String,
    /// Device and backend, e.g. `cpu (Flex)`.
    pub device: String,
    /// What the figures compare.
    pub compared: String,
    /// Memory saved, bytes and percent.
    pub memory_saved: String,
    /// Time per sample against the baseline, timed in pairs: the estimate with its 95%
    /// interval, "no difference resolved (±x%)", or why there is none.
    pub time_cost: String,
    /// CSS class of the time cost: `resolved`, `unresolved` or `na`.
    pub time_class: String,
    /// The A/A control's interval: the resolution of the time cost.
    pub resolution: String,
    /// `passed`, `failed`, `not applicable`, `unknown`.
    pub verdict: String,
    /// CSS class of the verdict.
    pub verdict_class: String,
    /// The verdict's claim key, where it is a ranked fix's (empty elsewhere).
    pub verdict_claim: String,
    /// What the checks found.
    pub verdict_detail: String,
    /// Points that failed, if any.
    pub failed_points: usize,
    /// Whether the record is incomplete (an interrupted run).
    pub incomplete: bool,
}

/// The index row of headline `h` of `record`.
pub fn headline_row(record: &Analysed, h: &Headline, verdicts: &SiteVerdicts) -> IndexRow {
    let device = record.device.kind;
    let view = verdicts.of_headline(record, h);
    let timed = h
        .timed_by
        .as_deref()
        .and_then(|id| results::paired::find(&record.comparisons, id));
    let (time_cost, time_class, resolution) = match timed {
        Some(c) => match c.timing() {
            // A control that excludes 0 is a bias of the set-up as large as its interval: said
            // beside the cost, not hidden in the tooltip.
            Some(t) if t.control.resolved() => (
                format!(
                    "{}; but the A/A control was {}, so read it with that bias in mind",
                    crate::words::paired::interval(&t.cost),
                    crate::words::paired::interval(&t.control)
                ),
                "unresolved",
                format!(
                    "A/A control: {}",
                    crate::words::paired::interval(&t.control)
                ),
            ),
            Some(t) => (
                crate::words::paired::interval(&t.cost),
                if t.cost.resolved() {
                    "resolved"
                } else {
                    "unresolved"
                },
                format!(
                    "A/A control: {}",
                    crate::words::paired::interval(&t.control)
                ),
            ),
            None => (crate::words::paired::cost_phrase(c), "na", String::new()),
        },
        None if software(record) => (
            "not timed: a software driver's times (on the CPU) are not a GPU's".into(),
            "na",
            String::new(),
        ),
        None => ("not timed".into(), "na", String::new()),
    };
    IndexRow {
        id: record.experiment.clone(),
        title: match &h.variant {
            Some(variant) => format!("{}: {variant}", record.title),
            None => record.title.clone(),
        },
        href: match device.subfolder() {
            None => format!("{}.html", record.experiment),
            Some(anchor) => format!("{}.html#{anchor}", record.experiment),
        },
        device: device_label(record),
        compared: h.compared.clone(),
        memory_saved: memory_change(h),
        time_cost,
        time_class: time_class.into(),
        resolution,
        verdict_detail: if view.checks.is_empty() {
            h.correctness_detail.clone()
        } else {
            view.detail.clone()
        },
        verdict: view.verdict,
        verdict_class: view.class,
        verdict_claim: view.claim,
        failed_points: record.failed_points(),
        incomplete: record.incomplete.is_some(),
    }
}

/// What the technique does to the baseline's peak, as a change of the named peak: a saving is
/// a reduction (`-45.6% of the step peak (-115.80 MiB)`), a cost an increase.
pub fn memory_change(h: &Headline) -> String {
    let signed_bytes = |b: f64| {
        if b > 0.0 {
            format!("+{}", format::bytes(b))
        } else {
            format::bytes(b)
        }
    };
    match (h.memory_saved_bytes, h.memory_saved_pct, &h.peak) {
        (Some(b), Some(p), Some(peak)) => {
            format!("{} of the {} ({})", format::pct(-p), peak, signed_bytes(-b))
        }
        (Some(b), Some(p), None) => format!("{} ({})", format::bytes(b), format::pct(p)),
        (Some(b), None, Some(peak)) => format!("{} {}", signed_bytes(-b), peak),
        _ => "n/a".into(),
    }
}

/// The device of a record in a few words: kind, backend, and the name its driver gave.
pub fn device_label(record: &Analysed) -> String {
    let d = &record.device;
    match d.identity.as_ref().filter(|_| d.kind != DeviceKind::Cpu) {
        Some(id) if id.software => format!(
            "{}: {} ({}; software driver)",
            d.kind.name(),
            id.name,
            d.backend
        ),
        Some(id) => format!("{}: {} ({})", d.kind.name(), id.name, d.backend),
        None => format!("{} ({})", d.kind.name(), d.backend),
    }
}

/// The device of a record in a word or two, for a phone's line: the kind, and whether its
/// driver is software (`cpu`, `wgpu, software`, `cuda`); the full identity is
/// [`device_label`]'s.
pub fn device_short(record: &Analysed) -> String {
    if software(record) {
        format!("{}, software", record.device.kind.name())
    } else {
        record.device.kind.name().to_string()
    }
}

/// Whether the record was measured on a software driver (lavapipe), whose times are not a GPU's.
pub fn software(record: &Analysed) -> bool {
    record
        .device
        .identity
        .as_ref()
        .is_some_and(|id| id.software)
}
