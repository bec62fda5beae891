//! The "Changes" page: this guide's result sets against a baseline (`--baseline DIR`); where the
//! baseline was measured on another Burn, the upgrade page, linked from the landing page.
//!
//! Question: what did the commit, machine or Burn version between the two sets change in
//! memory? Method: [`results::diff::SetDiff`], worded: both sets' provenance side by side, each
//! point whose bytes at a phase's peak moved, with old, new and the change, the largest changes
//! (rises and falls) first, each with its reason where it is known (and where the workbench's
//! own code for the point changed, not Burn, saying so), then the points added and removed.
//! Answer: a page a reader links from a pull request, or reads before upgrading Burn;
//! `workbench diff` prints the same diff.

use crate::words::signed_bytes;
use results::diff::{PhaseChange, PointChange, SetDiff, SetSide};
use results::format;
use serde::Serialize;

/// The page's file.
pub const HREF: &str = "changes.html";

/// One side's provenance, worded.
#[derive(Debug, Serialize)]
pub struct SideWords {
    /// The folder, as given.
    pub dir: String,
    /// Commits.
    pub commits: String,
    /// Burn versions.
    pub burn: String,
    /// Machines.
    pub machines: String,
    /// Devices.
    pub devices: String,
    /// Profiles.
    pub profiles: String,
}

/// One phase of a changed point.
#[derive(Debug, Serialize)]
pub struct ChangeRow {
    /// `cpu/llama-family/plain`.
    pub point: String,
    /// The point's label.
    pub label: String,
    /// The phase, or the statuses where they differ.
    pub phase: String,
    /// Bytes at the phase's peak in the baseline.
    pub old: String,
    /// The same in this guide's set.
    pub new: String,
    /// The change, in bytes and percent.
    pub change: String,
    /// Whether the peak rose.
    pub rose: bool,
    /// Why it changed, where that is known (empty otherwise).
    pub reason: String,
    /// The change's size, for the order: a status change first, then the largest share.
    #[serde(skip)]
    order: f64,
}

/// The page's view model.
#[derive(Debug, Serialize)]
pub struct ChangesPage {
    /// The page's title: the upgrade's versions where the sets ran on two Burns.
    pub title: String,
    /// `Some("0.21.0 to 0.22.1")` where the two sets ran on different Burn versions.
    pub upgrade: Option<String>,
    /// The baseline.
    pub old: SideWords,
    /// This guide's sets.
    pub new: SideWords,
    /// How many points both hold, and how many changed.
    pub summary: String,
    /// Why times are shown or not.
    pub times: String,
    /// Every changed phase.
    pub rows: Vec<ChangeRow>,
    /// Points only this guide's sets hold, by device and experiment (`cpu/llama-family:
    /// qlora-8bit, qlora-4bit`).
    pub added: Vec<String>,
    /// Points only the baseline holds, the same way.
    pub removed: Vec<String>,
}

fn side(s: &SetSide) -> SideWords {
    let join = |v: &[String]| v.join("; ");
    SideWords {
        dir: s.dir.clone(),
        commits: join(&s.commits),
        burn: join(&s.burn_versions),
        machines: join(&s.machines),
        devices: join(&s.devices),
        profiles: join(&s.profiles),
    }
}

/// Why a phase of `p` moved: the point's known reason, else on the CPU the share of the
/// process's start-up bytes (`startup`, their change between the sets) in the phase's change.
fn reason(p: &PointChange, ph: Option<&PhaseChange>, startup: Option<f64>) -> String {
    if let Some(known) = crate::words::upgrade::reason(&p.at) {
        return known;
    }
    match (ph, startup) {
        (Some(ph), Some(startup)) if p.at.device == results::DeviceKind::Cpu && startup != 0.0 => {
            let rest = ph.change_bytes() - startup;
            let tolerance = results::diff::bookkeeping_tolerance_bytes(ph.new_bytes) as f64;
            crate::words::upgrade::startup_share(startup, rest, tolerance)
        }
        _ => String::new(),
    }
}

fn rows(p: &PointChange, upgrade: bool, startup: Option<f64>) -> Vec<ChangeRow> {
    let reason_of = |ph: Option<&PhaseChange>| {
        if upgrade {
            reason(p, ph, startup)
        } else {
            String::new()
        }
    };
    let row = |phase: String, old: String, new: String, change: String, rose: bool| ChangeRow {
        point: p.at.name(),
        label: p.label.clone(),
        phase,
        old,
        new,
        change,
        rose,
        reason: String::new(),
        order: f64::INFINITY,
    };
    let mut rows = Vec::new();
    if p.old_status != p.new_status {
        let status = row(
            "status".into(),
            p.old_status.clone(),
            p.new_status.clone(),
            String::new(),
            false,
        );
        rows.push(ChangeRow {
            reason: reason_of(None),
            ..status
        });
    }
    for ph in p.moved_phases() {
        let change = format!(
            "{} ({})",
            signed_bytes(ph.change_bytes()),
            format::pct(ph.change_pct())
        );
        let (old, new) = (
            format::bytes(ph.old_bytes as f64),
            format::bytes(ph.new_bytes as f64),
        );
        let mut r = row(
            ph.phase.clone(),
            old,
            new,
            change,
            ph.new_bytes > ph.old_bytes,
        );
        r.order = ph.change_pct().abs();
        r.reason = reason_of(Some(ph));
        rows.push(r);
    }
    rows
}

/// The upgrade between the two sides, where each ran on one Burn and the two differ.
fn upgrade(diff: &SetDiff) -> Option<String> {
    match (&diff.old.burn_versions[..], &diff.new.burn_versions[..]) {
        ([old], [new]) if old != new => Some(format!("{old} to {new}")),
        _ => None,
    }
}

/// The change of the CPU process's start-up bytes between the sets, where both measured them.
fn startup_change(diff: &SetDiff) -> Option<f64> {
    diff.cpu_startup_bytes
        .map(|(old, new)| new as f64 - old as f64)
}

/// How many points both sets hold, how many changed, how many are the same; and the CPU
/// process's start-up bytes in each set, where they moved.
pub fn summary(diff: &SetDiff) -> String {
    let startup = match diff.cpu_startup_bytes {
        Some((old, new)) if old != new => format!(
            " The CPU process held {} before any model in the baseline and {} here \
             (process_baseline_bytes, the smallest over the points): every CPU peak counts \
             them, so every CPU point moved by {} before anything of its own.",
            format::bytes(old as f64),
            format::bytes(new as f64),
            signed_bytes(new as f64 - old as f64)
        ),
        _ => String::new(),
    };
    let changed = diff.changed().count();
    let moved = diff.changed().flat_map(PointChange::moved_phases);
    let (rose, fell) = moved.fold((0, 0), |(r, f), ph| {
        if ph.new_bytes > ph.old_bytes {
            (r + 1, f)
        } else {
            (r, f + 1)
        }
    });
    let counts = format!(
        "{} point(s) in both sets: {} changed (a status, or the bytes at a phase's peak by more \
         than the autodiff graph's bookkeeping, {} + {:.1}%; {} phase peak(s) rose, {} fell), \
         {} the same within it ({} of them to the byte); {} added, {} removed.",
        diff.points.len(),
        changed,
        format::bytes(results::diff::BOOKKEEPING_FIXED_BYTES as f64),
        results::diff::BOOKKEEPING_PER_MILLE as f64 / 10.0,
        rose,
        fell,
        diff.points.len() - changed,
        diff.identical(),
        diff.added.len(),
        diff.removed.len()
    );
    counts + &startup
}

/// Points by device and experiment, each group in one line.
pub fn groups(points: &[results::diff::PointRef]) -> Vec<String> {
    results::diff::grouped(points)
        .into_iter()
        .map(|(group, ids)| format!("{group}: {}", ids.join(", ")))
        .collect()
}

/// Times: why they are or are not set side by side, decided point by point.
pub fn times_words(diff: &SetDiff) -> String {
    let apart = "measured apart (minutes or days), not interleaved, so a difference between \
                 them is not a comparison; this page compares bytes only.";
    if diff.same_machine {
        format!(
            "Both sets measured every point they share on the same CPU model, cores, OS and \
             device: their step times are in the records side by side, but {apart}"
        )
    } else if diff.same_machine_points == 0 {
        "The sets come from different machines or devices: their times are not set side by \
         side at all; bytes are (on the CPU they repeat to the byte without an autodiff graph, \
         within its bookkeeping with one)."
            .into()
    } else {
        format!(
            "{} of the {} points both sets hold were measured on the same CPU model, cores, OS \
             and device in both: their step times are side by side, {apart} The other points' \
             times are not set side by side.",
            diff.same_machine_points,
            diff.points.len()
        )
    }
}

/// Where a row goes: status changes first, then rises, then falls.
fn rank(row: &ChangeRow) -> u8 {
    match (row.phase == "status", row.rose) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    }
}

impl ChangesPage {
    /// The page of `diff`.
    pub fn of(diff: &SetDiff) -> Self {
        let upgrade = upgrade(diff);
        let startup = startup_change(diff);
        let mut rows: Vec<ChangeRow> = diff
            .changed()
            .flat_map(|p| rows(p, upgrade.is_some(), startup))
            .collect();
        // A reader deciding to upgrade looks for what rose: status changes, then rises, then
        // falls, each the largest first (a stable sort keeps a point's phases in order).
        rows.sort_by(|a, b| rank(a).cmp(&rank(b)).then(b.order.total_cmp(&a.order)));
        Self {
            title: match &upgrade {
                Some(versions) => format!("What the upgrade from Burn {versions} changed"),
                None => "Changes against a baseline".into(),
            },
            upgrade,
            old: side(&diff.old),
            new: side(&diff.new),
            summary: summary(diff),
            times: times_words(diff),
            rows,
            added: groups(&diff.added),
            removed: groups(&diff.removed),
        }
    }
}
