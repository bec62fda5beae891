//! What holds the peak, concluded: for each recorded step, the bytes live at its peak by the
//! code that made them (a stacked bar), each phase's largest holder, the step's timeline, and
//! the recording's cost on a short GPT-2-small step (timed in pairs; its memory, none).

use results::attribution::Moment;
use results::keys::peak_attribution::Key;
use results::{
    Analysis, Breakdown, BreakdownPart, BreakdownRow, Check, Correctness, Headline, MeasuredPoint,
    PairedComparison, PeakAttribution as Recorded, PointCheck, Side, Text,
};

use super::{AttributionConfig, PeakAttribution, Workload};
use crate::technique::{Analyse, Row};
use crate::workloads;

type R<'a> = Row<'a, AttributionConfig>;

/// Sites a bar shows before the rest of the traced blocks are one row.
const BAR_ROWS: usize = 8;

/// The recorded rows, with what they recorded.
fn recorded<'a>(rows: &'a [R<'a>]) -> impl Iterator<Item = (&'a R<'a>, &'a Recorded)> {
    rows.iter()
        .filter_map(|r| r.result.attribution.as_deref().map(|a| (r, a)))
}

/// The checks a recorded step makes of itself: the traced and untraced bytes add up to the
/// probe's peak (the timeline caught the peak the probe read), and the traced blocks hold at
/// least 95% of it.
pub(super) fn self_checks(a: &Recorded) -> Vec<Check> {
    let off = a.peak.in_use_bytes.abs_diff(a.probe_peak_bytes) as f64;
    let sum = (a.peak.traced_bytes() + a.peak.untraced_bytes) as f64;
    let adds_up = Check {
        what: "attribution-adds-up".into(),
        params: Default::default(),
        max_abs_diff: off.max((sum - a.probe_peak_bytes as f64).abs()),
        max_rel_diff: off / a.probe_peak_bytes.max(1) as f64,
        tolerance: 0.0,
        passed: off == 0.0 && sum == a.probe_peak_bytes as f64,
    };
    let untraced_share = 1.0 - a.traced_share_of_step();
    let covers = Check {
        what: "attribution-covers-peak".into(),
        params: Default::default(),
        max_abs_diff: a.peak_above_recording_bytes() as f64 - a.peak.traced_bytes() as f64,
        max_rel_diff: untraced_share,
        tolerance: 0.05,
        passed: untraced_share <= 0.05,
    };
    vec![adds_up, covers]
}

/// The step unrecorded and the same step recorded: the pair that times the recording (the
/// short GPT-2-small step; in records made before it, the page's GPT-2-small step).
pub(super) fn timed_pair<'a>(rows: &'a [R<'a>]) -> Option<(&'a R<'a>, &'a R<'a>)> {
    let plain = rows.iter().find(|r| !r.config.recorded)?;
    let workload = plain.config.workload;
    let recorded = rows
        .iter()
        .find(|r| r.config.recorded && r.config.workload == workload)?;
    Some((plain, recorded))
}

/// The recorded short step's peak against the same step unrecorded, each in its own process:
/// the recorder keeps its buffers outside the heap, so the two must agree (within the
/// autodiff graph's bookkeeping, which varies between processes).
pub(super) fn derived_checks(rows: &[R<'_>]) -> Vec<PointCheck> {
    let Some((plain, rec)) = timed_pair(rows) else {
        return Vec::new();
    };
    let diff = (rec.peak() - plain.peak()).abs();
    let tolerance = results::diff::bookkeeping_tolerance_bytes(plain.peak() as u64) as f64;
    vec![PointCheck {
        point: rec.id.to_string(),
        check: Check {
            what: "recording-leaves-peak".into(),
            params: Default::default(),
            max_abs_diff: diff,
            max_rel_diff: diff / plain.peak(),
            tolerance: tolerance / plain.peak(),
            passed: diff <= tolerance,
        },
    }]
}

/// The bar of what is live at `m`: the largest sites, the rest of the traced blocks, and the
/// untraced bytes.
/// Where a site's blocks were made, as the recorder named it: `code · op (phase)`.
fn label(s: &results::attribution::SiteBytes) -> String {
    let op = if s.op.is_empty() {
        String::new()
    } else {
        format!(" · {}", s.op)
    };
    format!("{}{op} ({})", s.code, s.made_in)
}

fn breakdown(id: &str, workload: Workload, a: &Recorded, m: &Moment) -> Breakdown<Text> {
    let mut rows: Vec<BreakdownRow> = m
        .sites
        .iter()
        .take(BAR_ROWS)
        .map(|s| BreakdownRow {
            part: BreakdownPart::Named(label(s)),
            bytes: s.bytes as f64,
            blocks: s.blocks,
        })
        .collect();
    let rest = &m.sites[BAR_ROWS.min(m.sites.len())..];
    if !rest.is_empty() {
        rows.push(BreakdownRow {
            part: BreakdownPart::Others(rest.len() as u64),
            bytes: rest.iter().map(|s| s.bytes as f64).sum(),
            blocks: rest.iter().map(|s| s.blocks).sum(),
        });
    }
    let own = a.before_recording_bytes.min(m.untraced_bytes);
    rows.push(BreakdownRow {
        part: BreakdownPart::UnderThreshold,
        bytes: (m.untraced_bytes - own) as f64,
        blocks: 0,
    });
    rows.push(BreakdownRow {
        part: BreakdownPart::BeforeRecording,
        bytes: own as f64,
        blocks: 0,
    });
    Breakdown {
        id: id.into(),
        title: Text::said(Key::BreakdownTitle).name("workload", workload.id()),
        note: Text::said(Key::BreakdownNote)
            .bytes("peak", m.in_use_bytes as f64)
            .bytes("threshold", a.threshold_bytes as f64)
            .count("events", a.events),
        total_bytes: m.in_use_bytes as f64,
        rows,
    }
}

/// Where the step peaked, what held it and each phase's largest holder.
fn findings(workload: Workload, a: &Recorded) -> Vec<Text> {
    fn top(m: &Moment, i: usize) -> Option<&results::attribution::SiteBytes> {
        m.sites.get(i)
    }
    let mut peak = Text::said(Key::PeakFinding)
        .name("workload", workload.id())
        .bytes("peak", a.peak.in_use_bytes as f64)
        .bytes("threshold", a.threshold_bytes as f64)
        .number("share", 100.0 * a.traced_share_of_step())
        .bytes("own", a.before_recording_bytes as f64)
        .count("blocks", a.peak.sites.iter().map(|s| s.blocks).sum::<u64>());
    for (i, (site, bytes)) in [
        ("site0", "bytes0"),
        ("site1", "bytes1"),
        ("site2", "bytes2"),
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(s) = top(&a.peak, i) {
            peak = peak.name(site, label(s)).bytes(bytes, s.bytes as f64);
        }
    }
    let mut phases = Text::said(Key::PhaseFinding).name("workload", workload.id());
    for (name, m) in &a.phases {
        let keys = match name.as_str() {
            "forward" => ("forward_peak", "forward_site", "forward_bytes"),
            "backward" => ("backward_peak", "backward_site", "backward_bytes"),
            "optimizer" => ("optimizer_peak", "optimizer_site", "optimizer_bytes"),
            _ => continue,
        };
        if let Some(s) = top(m, 0) {
            phases = phases
                .bytes(keys.0, m.in_use_bytes as f64)
                .name(keys.1, label(s))
                .bytes(keys.2, s.bytes as f64);
        }
    }
    vec![peak, phases, largest(workload, a)]
}

/// The largest blocks live at the peak, each with the events that made and freed it: the
/// timeline's largest blocks, labelled by where they came from.
fn largest(workload: Workload, a: &Recorded) -> Text {
    let blocks = a
        .largest
        .iter()
        .take(LARGEST_NAMED)
        .map(|s| {
            let block = Text::said(Key::LargestBlock)
                .name("site", label(&s.site))
                .bytes("bytes", s.site.bytes as f64)
                .number("made", s.made_event as f64);
            match s.freed_event {
                Some(freed) => block.number("freed", freed as f64),
                None => block,
            }
        })
        .collect();
    Text::said(Key::LargestBlocks)
        .name("workload", workload.id())
        .count("peak_event", a.peak.event)
        .count("events", a.events)
        .list("blocks", blocks)
}

/// Blocks [`largest`] names.
const LARGEST_NAMED: usize = 5;

/// The index row: recording the short GPT-2-small step against the same step unrecorded, in
/// memory (none) and in time (the pairs).
fn headline(rows: &[R<'_>], correctness: Correctness) -> Option<Headline<Text>> {
    let (plain, rec) = timed_pair(rows)?;
    Some(
        Headline::versus(
            Text::said(Key::Headline)
                .bytes("threshold", rec.config.threshold_bytes as f64)
                .count("tokens", tokens(rec)),
            Side::step(plain.result),
            Side::step(rec.result),
            correctness,
            Key::Correctness,
        )
        .timed_by("recording"),
    )
}

/// Tokens (samples, for the MLP) of a row's step.
fn tokens(r: &R<'_>) -> u64 {
    r.config.train.shape.units(r.config.train.batch).1
}

/// The recording's cost: the pairs' ratio on the timed step and, where that is the short
/// step, the page's step beside it; the symbolising after the page's step.
fn cost(rows: &[R<'_>], paired: &[PairedComparison]) -> Option<Text> {
    let (_, timed) = timed_pair(rows)?;
    let timed_a = timed.result.attribution.as_deref()?;
    let page = rows
        .iter()
        .find(|r| r.config.workload == Workload::Gpt2Small && r.config.recorded)?;
    let a = page.result.attribution.as_deref()?;
    paired.iter().find(|p| p.spec.id == "recording")?;
    let cost = Text::said(Key::CostFinding)
        .paired("recording", "recording")
        .count("timed_tokens", tokens(timed))
        .count("timed_events", timed_a.events)
        .seconds("symbolise", a.symbolise_s);
    Some(if timed.id == page.id {
        cost
    } else {
        cost.count("tokens", tokens(page)).count("events", a.events)
    })
}

impl Analyse for PeakAttribution {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let derived = derived_checks(&rows);
        let correctness = Correctness::with_derived(points, derived.iter().map(|d| &d.check));
        let Some(headline) = headline(&rows, correctness) else {
            return Analysis::unmeasured(correctness);
        };
        let mut findings = Vec::new();
        let mut charts = Vec::new();
        let mut bars = Vec::new();
        for (row, a) in recorded(&rows).filter(|(r, _)| r.config.workload.shown()) {
            let w = row.config.workload;
            findings.extend(self::findings(w, a));
            bars.push(breakdown(&format!("peak-{}", w.id()), w, a, &a.peak));
            let title = Text::said(Key::TimelineTitle).name("workload", w.id());
            if let Some((chart, _)) =
                workloads::timeline_chart(&format!("timeline-{}", w.id()), title, &[row])
            {
                charts.push(chart);
            }
        }
        findings.extend(cost(&rows, paired));
        findings.push(Text::said(Key::CpuNote));
        Analysis::new(headline)
            .findings(findings)
            .charts(charts)
            .breakdowns(bars)
    }
}
