//! The landing page's table: every fix on one workload, on one base, and the order read from
//! it.
//!
//! Question: with an out-of-memory error training a transformer, what to try first, and what
//! does it buy? Method: the first result set (the CPU's where there is one) whose analysis
//! holds a [`FixTable`] gives the measured cells, each change a share of the plain step's
//! peak and each peak split into parts that add up to it, and the same fixes estimated at a
//! card's out-of-memory point, each rule checked in the measured set nearest that regime. The
//! order of the training fixes: a fix whose check failed last, then a fix whose rule a
//! measurement contradicts on any device, then the lowest estimated peak first. Answer: the
//! rows the landing page prints, the order first.

use results::cards::CONSUMER;
use results::{
    format, Analysed, CellSet, Contradiction, DeviceKind, Fix, FixCell, FixTable, ProjectedCell,
    Projection, RuleCheck,
};
use serde::Serialize;

use crate::index_row::device_label;
use crate::verdicts::{SiteVerdicts, VerdictView};
use crate::words::fix_name;

/// One measured cell, formatted: its peak and the parts that add up to it.
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
    /// The change as a share of the base's peak (`-38.1%`; negative saves).
    pub change: String,
    /// Everything live before the step: weights, optimizer state, inputs.
    pub before: String,
    /// Of it, weights and optimizer state (weights only for inference).
    pub weights_and_state: String,
    /// What earlier phases left for the peak's phase (the activations kept, on a step).
    pub carried: String,
    /// What the peak's phase added at its peak.
    pub added: String,
    /// The estimator's peak and its error, or "not modelled".
    pub estimate: String,
    /// The verdict over every check of the fix on this device.
    pub verdict: Option<VerdictView>,
}

/// One set of measured cells.
#[derive(Debug, Serialize)]
pub struct SetView {
    /// The model, in words.
    pub workload: String,
    /// The plain step's peak.
    pub base_peak: String,
    /// The plain step's activations as a share of its peak.
    pub activation_share: String,
    /// The plain step's weights and optimizer state as a share of its peak.
    pub fixed_share: String,
    /// Those bytes, as the plain row prints them.
    pub fixed_bytes: String,
    /// The training cells.
    pub training: Vec<CellRow>,
    /// The inference cells.
    pub inference: Vec<CellRow>,
}

/// One fix at the card's out-of-memory point, formatted.
#[derive(Debug, Serialize)]
pub struct ProjectedRow {
    /// Its place in the order, from 1 (the plain step has none).
    pub rank: Option<usize>,
    /// The fix.
    pub fix: String,
    /// Its id (`mixed-bf16`), for a test to find its row.
    pub fix_id: String,
    /// Link to the page that explains it.
    pub href: Option<String>,
    /// The estimated peak at the projection's batch.
    pub peak: String,
    /// Against plain's estimated peak there.
    pub change: String,
    /// The largest batch that fits the card with the fix.
    pub max_batch: String,
    /// The rule measured in the regime: predicted and measured change, on which backend.
    pub measured: String,
    /// The estimator's error there.
    pub error: String,
    /// Why the row is not to be trusted, where it is not: a failed check, a contradicted
    /// rule (empty where neither).
    pub warning: String,
    /// Whether the row is labelled (failed or contradicted).
    pub off: bool,
    /// The fix's verdict on the order's device (empty where no check of it was made).
    pub verdict: String,
    /// Its claim key.
    pub verdict_claim: String,
    /// The claim key of the largest batch, where What fits prints it too (empty elsewhere).
    pub batch_claim: String,
}

/// The table and the order, as the landing page prints them.
#[derive(Debug, Serialize)]
pub struct WorkloadTable {
    /// Link to the technique page that measured the table.
    pub href: String,
    /// The device it was measured on.
    pub device: String,
    /// The training fixes measured in the order's regime where they were (the regime set),
    /// else the table's.
    pub table: SetView,
    /// The table's inference rows, its plain training step first as their base (the same
    /// weights; the GPT-2 page has the table's other training rows).
    pub inference: SetView,
    /// The table's own workload, where the training rows are the regime set's (the inference
    /// rows' model); empty where they are the table's.
    pub inference_workload: String,
    /// The card the order is at.
    pub card: CardWords,
    /// What a step may plan on there, in words.
    pub usable: String,
    /// Tokens per sequence at the projection.
    pub seq: usize,
    /// The projection's batch.
    pub batch: String,
    /// The largest batch plain training fits at.
    pub plain_max_batch: String,
    /// Activations as a share of the plain step's estimated peak at the projection.
    pub projected_share: String,
    /// Where the rules were checked: each device's measured set, its sequence, batch and
    /// activation share (empty where none was measured in the regime).
    pub checked_in: String,
    /// "in the regime" where every set that checked the rules reached the regime's share of
    /// activations, else "nearest the regime": the order's sentence and its column say which.
    pub regime_words: String,
    /// The projected cells, in the order.
    pub projected: Vec<ProjectedRow>,
    /// The order in a line: the fixes' names, first to last.
    pub order: Vec<String>,
    /// The same cells measured on other devices, one line each.
    pub elsewhere: Vec<String>,
    /// What the triage sends a reader to when the fixed part alone is over the card, each
    /// fix with its failed check where it has one.
    pub fixed_part_fixes: String,
}

fn href(fix: Fix) -> Option<String> {
    fix.page().map(|p| format!("{}.html", p.id()))
}

/// The card the projection is at: its class, its cards and its driver's figure.
#[derive(Debug, Serialize)]
pub struct CardWords {
    /// The class it is sold as (`24 GB`).
    pub class: String,
    /// The cards of that class (`RTX 4090, RTX 3090`).
    pub models: String,
    /// Its memory as the driver reports it, in MiB (`24,564`).
    pub mib: String,
    /// The same in the guide's unit (`23.99 GiB`).
    pub bytes: String,
    /// The claim key of its memory ([`crate::claims::card`]).
    pub claim: String,
}

impl CardWords {
    fn of(card: &results::cards::Card) -> Self {
        Self {
            class: card.class.into(),
            models: card.models.into(),
            mib: format::thousands(card.reported_mib),
            bytes: format::bytes(card.bytes()),
            claim: crate::claims::card(card.class),
        }
    }
}

fn cell_row(set: &CellSet, c: &FixCell, verdict: Option<VerdictView>) -> CellRow {
    let base = c.fix == Fix::Plain;
    CellRow {
        fix: fix_name(c.fix).into(),
        href: href(c.fix),
        base,
        peak: format::bytes(c.peak_bytes),
        change: if base {
            "the base".into()
        } else {
            set.change_pct(c)
                .map_or_else(|| "no base".into(), format::pct)
        },
        before: format::bytes(c.parts.weights_and_state_bytes + c.parts.other_before_bytes),
        weights_and_state: format::bytes(c.parts.weights_and_state_bytes),
        carried: format::bytes(c.parts.carried_bytes),
        added: format::bytes(c.parts.added_bytes),
        estimate: match (c.predicted_bytes, c.estimate_error_pct()) {
            (Some(p), Some(e)) => format!("{} ({})", format::bytes(p), format::pct(e)),
            // What fits and `estimate --inference` estimate generation (the weights and the
            // cache); no rule is written for one forward pass over a batch.
            _ if !c.fix.training() => "no rule for one forward pass".into(),
            _ => "not modelled".into(),
        },
        verdict,
    }
}

/// A measured set of fixes, as its table prints it.
pub fn set_view(set: &CellSet, device: DeviceKind, verdicts: &SiteVerdicts) -> SetView {
    let rows = |training: bool| {
        set.cells
            .iter()
            .filter(|c| c.fix.training() == training)
            .map(|c| cell_row(set, c, verdicts.of(c.fix, device)))
            .collect()
    };
    SetView {
        workload: set.workload.clone(),
        base_peak: set
            .base_peak_bytes()
            .map_or_else(String::new, format::bytes),
        activation_share: set
            .activation_share_pct()
            .map_or_else(String::new, |s| format!("{s:.0}%")),
        fixed_share: set.cell(Fix::Plain).map_or_else(String::new, |c| {
            crate::words::share(c.parts.weights_and_state_bytes, c.peak_bytes)
        }),
        fixed_bytes: set.cell(Fix::Plain).map_or_else(String::new, |c| {
            format::bytes(c.parts.weights_and_state_bytes)
        }),
        training: rows(true),
        inference: rows(false),
    }
}

/// A set's inference rows with its plain step alone above them, the base their changes are
/// shares of.
fn inference_view(set: SetView) -> SetView {
    SetView {
        training: set.training.into_iter().filter(|r| r.base).collect(),
        ..set
    }
}

/// The tolerance [`RuleCheck::contradicts`] decides by, in words for the row it labels.
const TOLERANCE_WORDS: &str = "less than half the rule's saving measured";

fn cause_words(c: Contradiction) -> &'static str {
    match c {
        Contradiction::Bf16MatmulViaF32 => "Flex multiplies bf16 in f32 buffers",
        Contradiction::Unexplained => "no cause traced",
    }
}

/// Why a contradiction holds, in a clause, with the tolerance that decides it; `gpu` says
/// whether a GPU's set checked the rule.
fn contradiction_words(c: Contradiction, rule: &RuleCheck, projected: &str, gpu: bool) -> String {
    let cause = cause_words(c);
    format!(
        "contradicted ({}) on {} at sequence {}, batch {} (activations {:.0}%): rule {}, \
         measured {} ({cause}); projected for a GPU: {projected}, {}",
        TOLERANCE_WORDS,
        rule.device.name(),
        rule.seq,
        rule.batch,
        rule.activation_share_pct,
        format::pct(rule.predicted_change_pct),
        format::pct(rule.measured_change_pct),
        if gpu {
            "measured beside"
        } else {
            "not measured"
        }
    )
}

/// A rule contradicted outside the regime, said beside the regime's figures without labelling
/// the row: the measurement, its regime and the cause.
fn outside_words(rule: &RuleCheck) -> String {
    format!(
        "outside the regime ({}, sequence {}): {} against the rule's {} ({})",
        rule.device.name(),
        rule.seq,
        format::pct(rule.measured_change_pct),
        format::pct(rule.predicted_change_pct),
        rule.contradiction.map_or("", cause_words)
    )
}

/// What the measurements say of a projected fix's rule, device by device: the change
/// measured against the rule's, where and in which regime; and the estimator's error there.
fn measured_words(rules: &[&RuleCheck]) -> (String, String) {
    if rules.is_empty() {
        return (
            "not measured in this regime".into(),
            "projected only".into(),
        );
    }
    let each = |f: &dyn Fn(&RuleCheck) -> String| {
        rules
            .iter()
            .map(|r| format!("{}: {}", r.device.name(), f(r)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    (
        each(&|r| {
            format!(
                "{} (rule {})",
                format::pct(r.measured_change_pct),
                format::pct(r.predicted_change_pct),
            )
        }),
        each(&|r| format::pct(r.error_pct)),
    )
}

/// The rules of `fix` checked on every device whose table holds it.
fn rules<'a>(tables: &'a [(&'a Analysed, &'a FixTable)], fix: Fix) -> Vec<&'a RuleCheck> {
    tables
        .iter()
        .filter_map(|(_, t)| t.projection.as_ref()?.cell(fix)?.rule.as_ref())
        .collect()
}

/// "check failed: ..." with the failed checks' names alone, where `v` failed (their page and
/// point are in the measured table's verdict and the row's tooltip).
fn failed_words(v: &VerdictView) -> Option<String> {
    v.failed
        .then(|| format!("check failed: {}", v.failed_names().join("; ")))
}

/// The fixes for a fixed part over the card, the triage's second answer: bf16 storage carries
/// its failed check where it has one, so that no page recommends it without the failure.
fn fixed_part_fixes(verdicts: &SiteVerdicts) -> String {
    let bf16 = fix_name(Fix::Bf16Storage);
    let bf16 = match verdicts.failure(Fix::Bf16Storage) {
        Some(failed) => format!("{bf16} ({failed})"),
        None => bf16.to_string(),
    };
    format!("a lighter optimizer, more cards, or {bf16}")
}

/// The row's labels, then a rule contradicted outside the regime, said under the fix as a
/// caution that neither labels the row nor moves it.
fn with_outside_note(labels: Vec<String>, c: &ProjectedCell) -> String {
    let outside = c
        .contradicted_outside
        .as_ref()
        .filter(|_| c.contradiction().is_none())
        .map(outside_words);
    labels
        .into_iter()
        .chain(outside)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The order's rows: plain first (unranked), then every fix, ranked.
fn projected_rows(
    projection: &Projection,
    tables: &[(&Analysed, &FixTable)],
    verdicts: &SiteVerdicts,
    device: DeviceKind,
) -> Vec<ProjectedRow> {
    let plain = projection.cell(Fix::Plain);
    let failed = |c: &ProjectedCell| verdicts.of(c.fix, device).is_some_and(|v| v.failed);
    let contradicted = |c: &ProjectedCell| {
        tables
            .iter()
            .filter_map(|(_, t)| t.projection.as_ref()?.cell(c.fix)?.contradiction())
            .next()
    };
    let mut ranked: Vec<&ProjectedCell> = projection
        .cells
        .iter()
        .filter(|c| c.fix != Fix::Plain)
        .collect();
    ranked.sort_by(|a, b| {
        failed(a)
            .cmp(&failed(b))
            .then(contradicted(a).is_some().cmp(&contradicted(b).is_some()))
            .then(a.predicted_bytes.total_cmp(&b.predicted_bytes))
    });
    let batch_claim = |c: &ProjectedCell| {
        c.way.as_deref().map_or_else(String::new, |way| {
            crate::claims::largest_batch(CONSUMER.class, &projection.preset, way)
        })
    };
    let row = |rank: Option<usize>, c: &ProjectedCell| {
        let all = rules(tables, c.fix);
        let (measured, error) = measured_words(&all);
        let change = match (rank, plain) {
            (Some(_), Some(p)) => {
                format::pct((c.predicted_bytes - p.predicted_bytes) / p.predicted_bytes * 100.0)
            }
            _ => "the base".into(),
        };
        let gpu = all.iter().any(|r| r.device == DeviceKind::Cuda);
        let mut warnings = Vec::new();
        let verdict = verdicts.of(c.fix, device);
        if let Some(failed) = verdict.as_ref().and_then(failed_words) {
            warnings.push(failed);
        }
        if let Some(r) = contradicted(c) {
            let cause = r.contradiction.expect("a contradicted rule has a cause");
            warnings.push(contradiction_words(cause, r, &change, gpu));
        }
        ProjectedRow {
            rank,
            fix: fix_name(c.fix).into(),
            fix_id: c.fix.id().into(),
            href: href(c.fix),
            peak: format::bytes(c.predicted_bytes),
            change,
            max_batch: format::thousands(c.max_batch as u64),
            measured,
            error,
            off: !warnings.is_empty(),
            warning: with_outside_note(warnings, c),
            verdict: verdict.map_or_else(String::new, |v| v.verdict),
            verdict_claim: crate::claims::verdict(c.fix, device),
            batch_claim: batch_claim(c),
        }
    };
    plain
        .map(|p| row(None, p))
        .into_iter()
        .chain(ranked.iter().enumerate().map(|(i, c)| row(Some(i + 1), c)))
        .collect()
}

/// Each device's set that checked the rules, with one of its checks (they share the set's
/// sequence, batch and activation share).
fn rule_sets<'a>(
    tables: &'a [(&'a Analysed, &'a FixTable)],
) -> impl Iterator<Item = (&'a Analysed, RuleCheck)> + 'a {
    tables.iter().filter_map(|(r, t)| {
        let rule = t.projection.as_ref()?.cells.iter().find_map(|c| c.rule)?;
        Some((*r, rule))
    })
}

/// Whether the rules were checked in the regime: every set at the regime's share of
/// activations or above.
fn regime_words(tables: &[(&Analysed, &FixTable)]) -> &'static str {
    let share = |(_, rule): (&Analysed, RuleCheck)| rule.activation_share_pct;
    if rule_sets(tables)
        .map(share)
        .all(|s| s >= RuleCheck::REGIME_SHARE_PCT)
    {
        "in the regime"
    } else {
        "nearest the regime"
    }
}

/// Where each device's rules were checked, in one clause.
fn checked_in(tables: &[(&Analysed, &FixTable)]) -> String {
    rule_sets(tables)
        .map(|(r, rule)| {
            let short = rule.activation_share_pct < RuleCheck::REGIME_SHARE_PCT;
            format!(
                "on {} at sequence {}, batch {} ({}, activations {:.0}% of its peak{})",
                r.device.kind.name(),
                rule.seq,
                rule.batch,
                if rule.regime_set {
                    "regime model"
                } else {
                    "table model"
                },
                rule.activation_share_pct,
                if short {
                    format!(", under the regime's {:.0}%", RuleCheck::REGIME_SHARE_PCT)
                } else {
                    String::new()
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The same cells on the other devices, one line each.
fn elsewhere(tables: &[(&Analysed, &FixTable)], basis: DeviceKind) -> Vec<String> {
    tables
        .iter()
        .filter(|(r, _)| r.device.kind != basis)
        .filter_map(|(r, t)| {
            let plain = t.table.cell(Fix::Plain)?;
            Some(format!(
                "{}: plain step {}; {}",
                r.device.kind.name(),
                format::bytes(plain.peak_bytes),
                t.table
                    .cells
                    .iter()
                    .filter(|c| c.fix != Fix::Plain && c.fix.training())
                    .map(|c| format!(
                        "{} {}",
                        fix_name(c.fix),
                        t.table.change_pct(c).map_or_else(String::new, format::pct)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
        .collect()
}

impl WorkloadTable {
    /// The table of the first record that holds one (records in guide order, CPU first), the
    /// other devices' tables beside it.
    pub fn new(records: &[Analysed], verdicts: &SiteVerdicts) -> Option<Self> {
        // The GPT-2-small table's records alone: the order is projected from its cells (the
        // Llama family's table is on its own page).
        let tables: Vec<(&Analysed, &FixTable)> = records
            .iter()
            .filter(|r| r.experiment == results::TechniqueId::Gpt2Small.id())
            .filter_map(|r| Some((r, r.analysis.fix_table.as_ref()?)))
            .collect();
        let (record, table) = *tables.first()?;
        let device = record.device.kind;
        let projection = table.projection.as_ref()?;
        let projected = projected_rows(projection, &tables, verdicts, device);
        Some(Self {
            href: format!("{}.html", record.experiment),
            device: device_label(record),
            table: set_view(
                table.regime.as_ref().unwrap_or(&table.table),
                device,
                verdicts,
            ),
            inference: inference_view(set_view(&table.table, device, verdicts)),
            inference_workload: match table.regime {
                Some(_) => table.table.workload.clone(),
                None => String::new(),
            },
            card: CardWords::of(&CONSUMER),
            usable: format::bytes(projection.usable_bytes),
            seq: projection.seq,
            batch: format::thousands(projection.batch as u64),
            plain_max_batch: projection
                .cell(Fix::Plain)
                .map_or_else(String::new, |p| format::thousands(p.max_batch as u64)),
            projected_share: format!("{:.0}%", projection.activation_share_pct),
            checked_in: checked_in(&tables),
            regime_words: regime_words(&tables).into(),
            order: projected
                .iter()
                .filter(|r| r.rank.is_some())
                .map(|r| r.fix.clone())
                .collect(),
            projected,
            elsewhere: elsewhere(&tables, device),
            fixed_part_fixes: fixed_part_fixes(verdicts),
        })
    }
}
