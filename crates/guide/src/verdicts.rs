//! Each ranked fix's verdict, read from every record of one device: the one source every page
//! states it from.
//!
//! Question: a fix is checked on several pages (bf16 storage: its loss falls on the GPT-2
//! table, its loss curve drifts from f32's on the mixed-precision page); what is its verdict?
//! Method: every analysis lists the checks it makes of a ranked fix ([`results::FixCheck`]);
//! here they are gathered per device, and a fix fails when any check of it (or of a fix it
//! combines) failed. Answer: [`SiteVerdicts::of`], which the landing page, the technique pages,
//! the index rows and the order all read, with every check listed beside the verdict.

use std::collections::BTreeMap;

use results::{Analysed, Correctness, DeviceKind, Fix, FixCheck, Headline, TechniqueId, Verdicts};
use serde::Serialize;

use crate::words::{check_sentence, check_short};

/// A verdict in words, with its CSS class.
pub fn verdict(correctness: Correctness) -> (&'static str, &'static str) {
    match correctness {
        Correctness::Passed => ("passed", "ok"),
        Correctness::Failed => ("failed", "bad"),
        Correctness::NotApplicable => ("not applicable", "na"),
        Correctness::Unknown => ("unknown", "na"),
    }
}

/// Every fix check of the site, per device.
#[derive(Debug, Default)]
pub struct SiteVerdicts {
    by_device: BTreeMap<DeviceKind, Verdicts>,
}

/// One check of a fix, as a page lists it.
#[derive(Debug, Clone, Serialize)]
pub struct CheckLine {
    /// What it checks, in a few words.
    pub short: String,
    /// The check in one sentence, with its figures.
    pub sentence: String,
    /// The page that made it.
    pub page: String,
    /// Link to that page.
    pub href: String,
    /// The point it is of (`mlp-mixed-bf16`).
    pub point: String,
    /// Whether it passed.
    pub passed: bool,
}

/// A fix's verdict on one device, with every check that made it.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictView {
    /// `passed`, `failed`, ...
    pub verdict: String,
    /// Its CSS class.
    pub class: String,
    /// Whether any check failed.
    pub failed: bool,
    /// The checks, each with what it checks and where it was made.
    pub checks: Vec<CheckLine>,
    /// Every check in one line (a tooltip's text).
    pub detail: String,
    /// In a few words: the failed checks, or how many passed.
    pub summary: String,
    /// Its claim key, where it is a ranked fix's ([`crate::claims::verdict`]; empty where it
    /// is a headline's own checks').
    pub claim: String,
}

impl VerdictView {
    /// The failed checks' short names, each once (empty where none failed).
    pub fn failed_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.short.as_str())
            .collect();
        names.dedup();
        names
    }

    fn new(verdict: &str, class: &str, failed: bool, checks: Vec<CheckLine>) -> Self {
        let detail = Self::join(checks.iter());
        // In a table's cell, each failed check once by what it checks (its pages and points
        // are in the detail, the cell's tooltip).
        let mut failed_checks: Vec<&str> = Vec::new();
        for c in checks.iter().filter(|c| !c.passed) {
            if !failed_checks.contains(&c.short.as_str()) {
                failed_checks.push(&c.short);
            }
        }
        let failures = failed_checks.join("; ");
        let summary = match checks.len() {
            0 => String::new(),
            _ if !failures.is_empty() => failures,
            1 => checks[0].short.clone(),
            n => format!("{n} checks"),
        };
        Self {
            verdict: verdict.into(),
            class: class.into(),
            failed,
            checks,
            detail,
            summary,
            claim: String::new(),
        }
    }

    /// The failed checks in one line.
    pub fn failures(&self) -> String {
        Self::join(self.checks.iter().filter(|c| !c.passed))
    }

    fn join<'a>(checks: impl Iterator<Item = &'a CheckLine>) -> String {
        checks
            .map(|c| {
                format!(
                    "{} ({}, {}): {}",
                    c.short,
                    c.page,
                    c.point.replace('-', " "),
                    if c.passed { "passed" } else { "FAILED" }
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn line(c: &FixCheck) -> CheckLine {
    CheckLine {
        short: check_short(&c.check).into(),
        sentence: check_sentence(&c.check),
        page: crate::words::pages::page(c.technique).title.into(),
        href: format!("{}.html", c.technique.id()),
        point: c.point.clone(),
        passed: c.check.passed,
    }
}

/// The lines, each said once: a combination inherits the same check from several cells.
fn dedup(lines: impl Iterator<Item = CheckLine>) -> Vec<CheckLine> {
    let mut out: Vec<CheckLine> = Vec::new();
    for l in lines {
        if !out
            .iter()
            .any(|o| o.short == l.short && o.page == l.page && o.point == l.point)
        {
            out.push(l);
        }
    }
    out
}

impl SiteVerdicts {
    /// The checks every record of `records` makes, gathered per device.
    pub fn new(records: &[Analysed]) -> Self {
        let mut checks: BTreeMap<DeviceKind, Vec<FixCheck>> = BTreeMap::new();
        for r in records {
            checks
                .entry(r.device.kind)
                .or_default()
                .extend(r.analysis.fix_checks.iter().cloned());
        }
        Self {
            by_device: checks
                .into_iter()
                .map(|(d, c)| (d, Verdicts::new(c)))
                .collect(),
        }
    }

    /// The verdict on `fix` on `device`, where any check of it was made there.
    pub fn of(&self, fix: Fix, device: DeviceKind) -> Option<VerdictView> {
        let verdicts = self.by_device.get(&device)?;
        let correctness = verdicts.of(fix)?;
        let (word, class) = verdict(correctness);
        Some(VerdictView {
            claim: crate::claims::verdict(fix, device),
            ..VerdictView::new(
                word,
                class,
                correctness == Correctness::Failed,
                dedup(verdicts.checks(fix).into_iter().map(line)),
            )
        })
    }

    /// The verdict a headline shows: its fix's, where it measures a ranked fix with checks on
    /// its device; else its own checks'.
    pub fn of_headline(&self, record: &Analysed, h: &Headline) -> VerdictView {
        if let Some(v) = h.fix.and_then(|f| self.of(f, record.device.kind)) {
            return v;
        }
        let (word, class) = verdict(h.correctness);
        VerdictView::new(
            word,
            class,
            h.correctness == Correctness::Failed,
            Vec::new(),
        )
    }

    /// "its check failed on cpu: loss curve within f32's drift", over every device where a
    /// check of `fix` failed: the words a recommendation of `fix` carries beside it.
    pub fn failure(&self, fix: Fix) -> Option<String> {
        let each: Vec<String> = self
            .by_device
            .keys()
            .filter_map(|&d| {
                let v = self.of(fix, d).filter(|v| v.failed)?;
                Some(format!("on {}: {}", d.name(), v.failed_names().join("; ")))
            })
            .collect();
        (!each.is_empty()).then(|| format!("its check failed {}", each.join("; ")))
    }

    /// How many checks of `fixes` were made, over every device.
    pub fn check_count(&self, fixes: &[Fix]) -> usize {
        fixes
            .iter()
            .flat_map(|&f| self.by_device.values().map(move |v| v.checks(f).len()))
            .sum()
    }

    /// Whether `technique`'s page made any check of `fix` (a test's guard).
    pub fn made_by(&self, fix: Fix, device: DeviceKind, technique: TechniqueId) -> bool {
        self.by_device
            .get(&device)
            .is_some_and(|v| v.checks(fix).iter().any(|c| c.technique == technique))
    }
}
