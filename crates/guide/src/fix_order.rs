//! The landing page's fix order: every technique's headline, ordered by what it measured.
//!
//! Question: with an out-of-memory error, what to try first, second, third, and what does each
//! cost?
//! Method: the headlines of the first device's result sets (the CPU's where there is one) are
//! sorted into tiers by their own figures: saves memory and passes its own check with no
//! slowdown resolved (largest saving first); saves and costs time, resolved (most saved per percent of
//! time first); saves but not timed in pairs; saves but its check failed; does not lower the
//! peak here. Other devices' figures for the same headline stand beside each row.
//! Answer: the ordered list the landing page shows; the rule is printed with it.

use results::{format, Analysed, Headline, PairedComparison};
use serde::Serialize;

use crate::index_row::{device_label, headline_row, memory_change};
use crate::verdicts::SiteVerdicts;

/// Where a headline falls in the order, by its measured figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    /// Saves memory, passes its own check, and no slowdown is resolved.
    Free,
    /// Saves memory, passes its own check, and costs time (resolved).
    Costs,
    /// Saves memory; its time was not compared in pairs.
    Untimed,
    /// Saves memory, but its correctness check failed.
    ChangesResult,
    /// Does not lower its peak on this device.
    NoSaving,
}

impl Tier {
    fn why(self) -> &'static str {
        match self {
            Self::Free => "saves memory, passes its own check, no slowdown resolved",
            Self::Costs => "saves memory and passes its own check, at a measured cost in time",
            Self::Untimed => "saves memory; its time was not compared in pairs",
            Self::ChangesResult => "saves memory, but its correctness check failed",
            Self::NoSaving => "does not lower this peak on this device",
        }
    }
}

/// One fix in the order.
#[derive(Debug, Serialize)]
pub struct FixRow {
    /// Its place, from 1.
    pub rank: usize,
    /// The technique (and variant).
    pub title: String,
    /// Link to its page.
    pub href: String,
    /// What to change.
    pub change: String,
    /// What the figures compare.
    pub compared: String,
    /// The memory change, as a share of a named peak and in bytes.
    pub memory: String,
    /// The time cost with its interval, or why there is none.
    pub time: String,
    /// CSS class of the time.
    pub time_class: String,
    /// The correctness verdict.
    pub verdict: String,
    /// Its CSS class.
    pub verdict_class: String,
    /// What the checks found.
    pub verdict_detail: String,
    /// Why it stands here.
    pub why: String,
    /// The same headline on the other devices, one line each.
    pub elsewhere: Vec<String>,
}

/// The order and what it was read from.
#[derive(Debug, Serialize)]
pub struct FixOrder {
    /// The device whose figures order the list.
    pub device: String,
    /// The fixes, in order.
    pub rows: Vec<FixRow>,
}

/// A headline's time: the paired cost's interval, if it was timed.
fn timing<'a>(record: &'a Analysed, h: &Headline) -> Option<&'a results::paired::PairedTiming> {
    h.timed_by
        .as_deref()
        .and_then(|id| results::paired::find(&record.comparisons, id))
        .and_then(PairedComparison::timing)
}

fn tier(record: &Analysed, h: &Headline, verdicts: &SiteVerdicts) -> Tier {
    let saves = h.memory_saved_pct.is_some_and(|p| p > 0.5);
    if !saves {
        return Tier::NoSaving;
    }
    if verdicts.of_headline(record, h).failed {
        return Tier::ChangesResult;
    }
    match timing(record, h) {
        None => Tier::Untimed,
        Some(t) if t.cost.resolved() && t.cost.estimate_pct > 0.0 => Tier::Costs,
        Some(_) => Tier::Free,
    }
}

/// The sort key within a tier: the saving, or the saving per percent of time.
fn merit(record: &Analysed, h: &Headline, tier: Tier) -> f64 {
    let saved = h.memory_saved_pct.unwrap_or(0.0);
    match (tier, timing(record, h)) {
        (Tier::Costs, Some(t)) => saved / t.cost.estimate_pct.max(1e-9),
        _ => saved,
    }
}

fn headlines(record: &Analysed) -> impl Iterator<Item = &Headline> {
    std::iter::once(&record.analysis.headline).chain(&record.analysis.secondary_headlines)
}

/// What to change: the technique's fix, with the headline's variant.
fn change(record: &Analysed, h: &Headline) -> String {
    let fix = record.page.fix.clone();
    match &h.variant {
        Some(v) => format!("{fix} Here: {v}."),
        None => fix,
    }
}

impl FixOrder {
    /// The order over `records` (guide order, CPU first, as `record::load_dirs` returns them);
    /// `None` where there is none.
    pub fn new(records: &[Analysed], verdicts: &SiteVerdicts) -> Option<Self> {
        let basis = records.first()?.device.kind;
        let mut rows: Vec<(Tier, f64, FixRow)> = Vec::new();
        for record in records.iter().filter(|r| r.device.kind == basis) {
            for (i, h) in headlines(record).enumerate() {
                let t = tier(record, h, verdicts);
                let row = headline_row(record, h, verdicts);
                let elsewhere = records
                    .iter()
                    .filter(|o| o.experiment == record.experiment && o.device.kind != basis)
                    .filter_map(|o| {
                        let oh = headlines(o).nth(i)?;
                        Some(format!(
                            "{}: {}, {}",
                            o.device.kind.name(),
                            oh.compared,
                            memory_change(oh)
                        ))
                    })
                    .collect();
                rows.push((
                    t,
                    merit(record, h, t),
                    FixRow {
                        rank: 0,
                        title: row.title,
                        href: row.href,
                        change: change(record, h),
                        compared: h.compared.clone(),
                        memory: row.memory_saved,
                        time: row.time_cost,
                        time_class: row.time_class,
                        verdict: row.verdict,
                        verdict_class: row.verdict_class,
                        verdict_detail: row.verdict_detail,
                        why: t.why().into(),
                        elsewhere,
                    },
                ));
            }
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let basis_record = records.first()?;
        Some(Self {
            device: device_label(basis_record),
            rows: rows
                .into_iter()
                .enumerate()
                .map(|(i, (_, _, mut row))| {
                    row.rank = i + 1;
                    row
                })
                .collect(),
        })
    }
}

/// One line per result set: which machine, device and commit produced it (records of one run
/// share it all but their start: one line, with the experiments it measured and its first
/// start).
pub fn provenance_lines(records: &[Analysed]) -> Vec<String> {
    let mut runs: Vec<(String, Vec<&str>, &str)> = Vec::new();
    for r in records {
        let p = &r.provenance;
        let key = format!(
            "{}, {} profile: workbench {} at commit {}, Burn {}, {} build, {} ({} cores), {}",
            device_label(r),
            r.profile.name(),
            p.workbench_version,
            p.git_commit,
            p.burn_version,
            p.build_profile,
            p.cpu_model,
            p.cpu_cores,
            p.os,
        );
        match runs.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, ids, first)) => {
                ids.push(&r.experiment);
                if p.started_at.as_str() < *first {
                    *first = &p.started_at;
                }
            }
            None => runs.push((key, vec![&r.experiment], &p.started_at)),
        }
    }
    runs.into_iter()
        .map(|(key, ids, first)| {
            format::capitalise(&format!("{key}; started {first}; {}", ids.join(", ")))
        })
        .collect()
}
