//! `workbench diff OLD NEW`: two result sets compared, point by point, in memory.
//!
//! Question: did a commit, a machine or a Burn version move any point's memory? Method:
//! [`results::diff::SetDiff`] of the two folders' records (subfolders hold other devices'
//! sets): bytes at each phase's peak, exactly; points added and removed; both sets'
//! provenance. Answer: printed, one line per changed phase; `--fail-above PCT` exits 1 when a
//! peak rose by more than PCT percent (for CI); `--json` prints github-action-benchmark's
//! `customSmallerIsBetter` input instead.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use results::diff::{SetDiff, SetSide};
use results::{format, record, ExperimentRecord};

use crate::error::BadInput;

/// What `workbench diff` reads.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The baseline: a folder of `*.json` records (a guide's `data/`, or a copy of it).
    pub old: PathBuf,
    /// The set compared with it.
    pub new: PathBuf,
    /// Exit 1 when a phase's peak rose by more than this percent (0 or more).
    #[arg(long, value_parser = percent, allow_hyphen_values = true)]
    pub fail_above: Option<f64>,
    /// Print github-action-benchmark's `customSmallerIsBetter` JSON (the new set's peaks, the
    /// old bytes in each entry's `extra`) instead of the text.
    #[arg(long)]
    pub json: bool,
}

fn percent(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{text}' is not a percent of 0 or more")),
    }
}

/// Peaks rose past `--fail-above`: the points, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{count} point(s) with a peak more than {pct}% above the baseline's: {names}")]
pub struct Regression {
    /// How many points.
    pub count: usize,
    /// The threshold.
    pub pct: f64,
    /// The points, with their worst rise.
    pub names: String,
}

/// The records of one result set's folder (its device subfolders included): what `diff` and
/// `--baseline` read; bad input where it holds none.
pub fn load_set(dir: &Path) -> Result<Vec<ExperimentRecord>, BadInput> {
    Ok(record::load_dirs(&[dir.to_path_buf()])?)
}

/// Runs `workbench diff`.
pub fn diff(args: &DiffArgs) -> anyhow::Result<()> {
    let (old, new) = (load_set(&args.old)?, load_set(&args.new)?);
    let diff = SetDiff::of(
        &args.old.display().to_string(),
        &old,
        &args.new.display().to_string(),
        &new,
    );
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&diff.benchmark_entries())?
        );
    } else {
        print!("{}", text(&diff));
    }
    if let Some(pct) = args.fail_above {
        let risen = diff.regressions(pct);
        if !risen.is_empty() {
            let names: Vec<String> = risen
                .iter()
                .map(|p| format!("{} ({})", p.at.name(), format::pct(p.worst_rise_pct())))
                .collect();
            return Err(Regression {
                count: risen.len(),
                pct,
                names: names.join(", "),
            }
            .into());
        }
    }
    Ok(())
}

fn side(out: &mut String, name: &str, s: &SetSide) {
    let _ = writeln!(
        out,
        "{name}: {} (commit {}; Burn {}; {}; {}; {} profile)",
        s.dir,
        s.commits.join(", "),
        s.burn_versions.join(", "),
        s.devices.join(", "),
        s.machines.join("; "),
        s.profiles.join(", ")
    );
}

/// The diff as text: both sides, the summary, each changed phase, the points added and removed.
pub fn text(diff: &SetDiff) -> String {
    let mut out = String::new();
    side(&mut out, "old", &diff.old);
    side(&mut out, "new", &diff.new);
    let _ = writeln!(out, "{}", guide::changes::summary(diff));
    let _ = writeln!(out, "{}", guide::changes::times_words(diff));
    // The page's rows, in the page's order and units: one table, read by both.
    for r in guide::changes::ChangesPage::of(diff).rows {
        let _ = writeln!(
            out,
            "  {} {}: {} -> {} {}",
            r.point, r.phase, r.old, r.new, r.change
        );
        if !r.reason.is_empty() {
            let _ = writeln!(out, "    why: {}", r.reason);
        }
    }
    for p in diff.changed() {
        if let Some((old_s, new_s)) = p.step_s {
            let _ = writeln!(
                out,
                "  {} step (unpaired, measured apart): {} -> {}",
                p.at.name(),
                format::seconds(old_s),
                format::seconds(new_s)
            );
        }
    }
    for (word, list) in [("added", &diff.added), ("removed", &diff.removed)] {
        for group in guide::changes::groups(list) {
            let _ = writeln!(out, "  {word}: {group}");
        }
    }
    out
}
