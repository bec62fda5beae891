//! Memory over many steps, concluded: each loop's growth per step after the warm-up (a fitted
//! line with its 95% interval) for the bytes in use, the pool's reserved bytes and the
//! resident set; its verdict; the control's flatness as a check; the chart of every loop.

use results::keys::memory_over_steps::Key;
use results::{
    Analysis, AxisUnit, Chart, Check, Comparison, ComparisonSpec, Correctness, Headline,
    MeasuredPoint, PairedComparison, PointCheck, Series, Side, Text, Trace,
};

use super::{LoopConfig, MemoryOverSteps, Pattern};
use crate::technique::{Analyse, Row};
use burn_step_monitor::Growth;

type R<'a> = Row<'a, LoopConfig>;

/// How a series moves after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No growth resolved.
    Flat,
    /// Grows over the whole run.
    Grows,
    /// Grew in the first half of the run, not in the second.
    Levels,
}

impl Verdict {
    fn id(self) -> &'static str {
        match self {
            Verdict::Flat => "flat",
            Verdict::Grows => "grows",
            Verdict::Levels => "levels",
        }
    }
}

/// A series after the warm-up, as fitted.
pub struct Fitted {
    /// The fit over every step after the warm-up.
    pub growth: Growth,
    /// The verdict.
    pub verdict: Verdict,
}

/// `series` after `warmup` values: its slope, and the verdict (a second-half fit tells growth
/// that levels from growth that does not).
pub fn fit(series: &[f64], warmup: usize) -> Option<Fitted> {
    let after = series.get(warmup..)?;
    let growth = Growth::of(after)?;
    let second = Growth::of(&after[after.len() / 2..]);
    let verdict = if !growth.rises() {
        Verdict::Flat
    } else if second.is_some_and(|g| !g.rises()) {
        Verdict::Levels
    } else {
        Verdict::Grows
    };
    Some(Fitted { growth, verdict })
}

/// The check of a loop that must not grow: its bytes in use after the warm-up fitted, passed
/// when no growth is resolved ([`Growth::grows`]). `max_abs_diff` is the slope in bytes per
/// step, `max_rel_diff` the lower end of its interval.
pub fn flat_check(series: &[f64], warmup: usize) -> Check {
    let growth = fit(series, warmup).map(|f| f.growth);
    let check = Check {
        what: "in-use-flat".into(),
        params: Default::default(),
        max_abs_diff: growth.as_ref().map_or(f64::NAN, |g| g.bytes_per_step),
        max_rel_diff: growth.as_ref().map_or(f64::NAN, |g| g.low_bytes_per_step),
        tolerance: burn_step_monitor::NEGLIGIBLE_BYTES_PER_STEP,
        // No fit (too few steps after warm-up) proves nothing flat.
        passed: growth.as_ref().is_some_and(|g| !g.rises()),
    };
    match growth {
        Some(g) => check.with("steps", g.steps),
        None => check,
    }
}

/// The control's check, computed from its recorded readings when the guide renders.
pub(super) fn derived_checks(rows: &[R<'_>]) -> Vec<PointCheck> {
    rows.iter()
        .filter(|r| r.config.pattern == Pattern::Control)
        .map(|r| PointCheck {
            point: r.id.to_string(),
            check: flat_check(in_use(r), r.config.warmup_steps),
        })
        .collect()
}

/// The loops whose cost on the step is the question, each timed in pairs against the control:
/// `memory_cleanup()` every few steps, and the monitor a reader puts around their own step.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let Some(control) = rows.iter().find(|r| r.config.pattern == Pattern::Control) else {
        return Vec::new();
    };
    rows.iter()
        .filter_map(|r| {
            let id = match r.config.pattern {
                Pattern::CleanupEvery => "memory-cleanup",
                Pattern::Monitored => "monitor",
                _ => return None,
            };
            Some(ComparisonSpec::new(id, control.id, r.id))
        })
        .collect()
}

/// Bytes in use after each step over every pool of the device where the loop read them, else
/// on the training thread's stream (a record made before the device-wide reading).
fn in_use<'r>(r: &'r R<'_>) -> &'r [f64] {
    let all = r.result.trace(Trace::InUseAllStreamsBytesByStep);
    if all.is_empty() {
        r.result.trace(Trace::InUseBytesByStep)
    } else {
        all
    }
}

/// Whether a series, after the warm-up, grows (none where it was not read).
fn grows(r: &R<'_>, trace: Trace) -> Option<bool> {
    fit(r.result.trace(trace), r.config.warmup_steps).map(|f| f.verdict != Verdict::Flat)
}

/// Whether a loop leaves memory behind on the whole device: bytes in use over every pool, or
/// the pools' reserved bytes (a finished thread's pool), grow.
fn leaks_device_wide(r: &R<'_>) -> Option<bool> {
    let in_use = grows(r, Trace::InUseAllStreamsBytesByStep)?;
    Some(in_use || grows(r, Trace::ReservedAllStreamsBytesByStep).unwrap_or(false))
}

/// What the device-wide readings say of the loader's reported workaround, `max_streams = 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoaderFinding {
    /// The per-thread loader leaves memory behind and the one-stream loader does not.
    WorkaroundHolds,
    /// Neither leaves memory behind: there is nothing to fix on this backend.
    NothingToFix,
    /// Both leave memory behind: the workaround does not fix it here.
    NeitherFixes,
    /// Only the one-stream loader leaves memory behind.
    WorkaroundWorse,
}

impl LoaderFinding {
    fn id(self) -> &'static str {
        match self {
            LoaderFinding::WorkaroundHolds => "workaround-holds",
            LoaderFinding::NothingToFix => "nothing-to-fix",
            LoaderFinding::NeitherFixes => "neither-fixes",
            LoaderFinding::WorkaroundWorse => "workaround-worse",
        }
    }
}

/// The two loader loops set side by side by their device-wide readings: what this backend
/// supports recommending (none where either loop, or its device-wide reading, is missing).
fn loader_finding(rows: &[R<'_>]) -> Option<Text> {
    let of = |p: Pattern| rows.iter().find(|r| r.config.pattern == p);
    let (per_thread, one) = (
        of(Pattern::LoaderThread)?,
        of(Pattern::LoaderThreadOneStream)?,
    );
    let (Some(a), Some(b)) = (leaks_device_wide(per_thread), leaks_device_wide(one)) else {
        // A record made before the device-wide reading: one stream was read.
        return Some(Text::said(Key::LoaderOneStreamRead));
    };
    let finding = match (a, b) {
        (true, false) => LoaderFinding::WorkaroundHolds,
        (false, false) => LoaderFinding::NothingToFix,
        (true, true) => LoaderFinding::NeitherFixes,
        (false, true) => LoaderFinding::WorkaroundWorse,
    };
    let pools = |r: &R<'_>| last(r.result.trace(Trace::PoolsByStep));
    let slope = |r: &R<'_>, t: Trace| {
        fit(r.result.trace(t), r.config.warmup_steps).map_or(f64::NAN, |f| f.growth.bytes_per_step)
    };
    Some(
        Text::said(Key::LoaderFinding)
            .name("finding", finding.id())
            .number("pools_per_thread", pools(per_thread))
            .number("pools_one", pools(one))
            .bytes(
                "in_use_per_thread",
                slope(per_thread, Trace::InUseAllStreamsBytesByStep),
            )
            .bytes("in_use_one", slope(one, Trace::InUseAllStreamsBytesByStep))
            .bytes(
                "reserved_per_thread",
                slope(per_thread, Trace::ReservedAllStreamsBytesByStep),
            )
            .bytes(
                "reserved_one",
                slope(one, Trace::ReservedAllStreamsBytesByStep),
            ),
    )
}

fn last(series: &[f64]) -> f64 {
    series.last().copied().unwrap_or(f64::NAN)
}

/// One loop's finding: its slope, interval and verdict for each series it read.
fn finding(r: &R<'_>) -> Text {
    let w = r.config.warmup_steps;
    let mut t = Text::said(Key::Pattern)
        .name("pattern", r.config.pattern.id())
        .count("steps", r.config.steps)
        .count("warmup", w);
    let series = [
        (
            Trace::InUseBytesByStep,
            [
                "in_use_slope",
                "in_use_low",
                "in_use_high",
                "in_use_verdict",
            ],
        ),
        (
            Trace::ReservedBytesByStep,
            [
                "reserved_slope",
                "reserved_low",
                "reserved_high",
                "reserved_verdict",
            ],
        ),
        (
            Trace::ResidentBytesByStep,
            [
                "resident_slope",
                "resident_low",
                "resident_high",
                "resident_verdict",
            ],
        ),
        (
            Trace::InUseAllStreamsBytesByStep,
            ["all_slope", "all_low", "all_high", "all_verdict"],
        ),
        (
            Trace::ReservedAllStreamsBytesByStep,
            [
                "all_reserved_slope",
                "all_reserved_low",
                "all_reserved_high",
                "all_reserved_verdict",
            ],
        ),
        (
            Trace::DriverUsedBytesByStep,
            [
                "driver_slope",
                "driver_low",
                "driver_high",
                "driver_verdict",
            ],
        ),
    ];
    for (trace, [slope, low, high, verdict]) in series {
        if let Some(f) = fit(r.result.trace(trace), w) {
            t = t
                .bytes(slope, f.growth.bytes_per_step)
                .bytes(low, f.growth.low_bytes_per_step)
                .bytes(high, f.growth.high_bytes_per_step)
                .name(verdict, f.verdict.id());
        }
    }
    let pools = last(r.result.trace(Trace::PoolsByStep));
    if pools.is_finite() {
        t = t.number("pools", pools);
    }
    t.bytes("in_use_last", last(r.result.trace(Trace::InUseBytesByStep)))
}

/// The index row: the loop that grew most against the control, both read after the last step.
fn headline(rows: &[R<'_>], control: &R<'_>, correctness: Correctness) -> Option<Headline<Text>> {
    let slope = |r: &R<'_>| {
        fit(in_use(r), r.config.warmup_steps).map_or(f64::NAN, |f| f.growth.bytes_per_step)
    };
    let worst = rows
        .iter()
        .filter(|r| r.config.pattern != Pattern::Control)
        .max_by(|a, b| slope(a).total_cmp(&slope(b)))?;
    Some(Headline::versus(
        Text::said(Key::Headline)
            .name("pattern", worst.config.pattern.id())
            .count("steps", worst.config.steps),
        Side::with_peak(Key::LabelBytesInUseAfterTheLast, last(in_use(worst))),
        Side::with_peak(Key::LabelBytesInUseAfterTheLast, last(in_use(control))),
        correctness,
        Key::ControlCheck,
    ))
}

/// Predicted growth: nothing for the correct loop; for a kept evaluation output, what its
/// graph holds: the step's weights (the optimizer has replaced them, the graph keeps the old
/// ones for the matrix products' backward), the activations the MLP's rule says an
/// un-back-propagated pass records, and the output itself.
fn growth_prediction(r: &R<'_>) -> Option<Comparison<Text>> {
    let c = r.config;
    let (predicted, note) = match c.pattern {
        Pattern::Control => (0.0, Text::said(Key::GrowthNoteControl)),
        Pattern::KeptEvalOutput => {
            let w = c.shape.width as f64;
            let weights = c.shape.depth as f64 * w * w * 4.0;
            let graph =
                (c.shape.predicted_graph_bytes_per_sample(4) as f64 + w * 4.0) * c.batch as f64;
            let note = Text::said(Key::GrowthNoteKeptOutput)
                .bytes("weights", weights)
                .bytes("graph", graph);
            (weights + graph, note)
        }
        _ => return None,
    };
    let measured = fit(in_use(r), c.warmup_steps)?.growth.bytes_per_step;
    Some(Comparison::new(
        Text::said(Key::Growth).name("pattern", c.pattern.id()),
        predicted,
        measured,
        note,
    ))
}

/// Every loop's bytes in use by step, above its value at the end of the warm-up.
fn chart(rows: &[R<'_>]) -> Chart<Text> {
    let line = |r: &R<'_>| {
        let base = in_use(r)
            .get(r.config.warmup_steps)
            .copied()
            .unwrap_or(f64::NAN);
        Series::line(
            Text::said(Key::LabelPattern).name("pattern", r.config.pattern.id()),
            false,
            in_use(r)
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64, v - base))
                .collect(),
        )
    };
    Chart::new(
        "in-use-by-step",
        Key::LabelInUseByStep,
        Key::LabelStep,
        Key::LabelAboveWarmUp,
    )
    .y(AxisUnit::Bytes)
    .series(rows.iter().map(line))
}

impl Analyse for MemoryOverSteps {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        _paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let derived = derived_checks(&rows);
        let correctness = Correctness::with_derived(points, derived.iter().map(|d| &d.check));
        let headline = rows
            .iter()
            .find(|r| r.config.pattern == Pattern::Control)
            .and_then(|control| headline(&rows, control, correctness));
        let Some(headline) = headline else {
            return Analysis::unmeasured(correctness);
        };
        Analysis::new(headline)
            .findings(rows.iter().map(finding).chain(loader_finding(&rows)))
            .comparisons(rows.iter().filter_map(growth_prediction))
            .charts([chart(&rows)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_loop_passes_the_check_and_a_leaking_one_fails_it() {
        // A flat loop with allocator noise of a few hundred bytes either way.
        let flat: Vec<f64> = (0..150)
            .map(|i| 1e6 + if i % 3 == 0 { 300.0 } else { -150.0 })
            .collect();
        assert!(flat_check(&flat, 20).passed);
        // A loop that keeps 64 KiB a step.
        let leak: Vec<f64> = (0..150).map(|i| 1e6 + 65536.0 * i as f64).collect();
        let check = flat_check(&leak, 20);
        assert!(!check.passed, "{check:?}");
        assert_eq!(fit(&leak, 20).unwrap().verdict, Verdict::Grows);
        // Growth that stops half-way.
        let levels: Vec<f64> = (0..150)
            .map(|i| 1e6 + 65536.0 * (i.min(70)) as f64)
            .collect();
        assert_eq!(fit(&levels, 20).unwrap().verdict, Verdict::Levels);
    }
}
