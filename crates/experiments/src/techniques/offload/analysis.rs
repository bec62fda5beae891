//! Offload's conclusions: the device's bytes between steps and at the step's peak with the
//! optimizer on the device and on the host, set beside the byte model; the host's bytes; the
//! bytes copied per step and what the copies cost; the proof; charts and the index row.

use results::keys::offload::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, DeviceKind, Headline,
    MeasuredPoint, Metric, PairedComparison, Phase, PhaseKey, PublishedFigure, Series, Side, Text,
};

use super::OffloadMetric;
use super::OffloadPhase;
use super::{predict, Offload, OffloadConfig, Placement};
use crate::technique::{Analyse, Row};

type R<'a> = Row<'a, OffloadConfig>;

/// The id of the headline's paired comparison.
const HEADLINE: &str = "headline";

/// The phases of a step, in the order the offloaded step runs them.
fn phases() -> [&'static str; 5] {
    [
        Phase::Forward.name(),
        Phase::Backward.name(),
        OffloadPhase::ToHost.name(),
        Phase::Optimizer.name(),
        OffloadPhase::ToDevice.name(),
    ]
}

fn of<'r, 'a>(rows: &'r [R<'a>], placement: Placement) -> Option<&'r R<'a>> {
    rows.iter().find(|r| r.config.placement == placement)
}

/// The headline's comparison: the usual step against the offloaded one.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    match (of(rows, Placement::Device), of(rows, Placement::Host)) {
        (Some(on_device), Some(on_host)) => {
            vec![ComparisonSpec::new(HEADLINE, on_device.id, on_host.id)]
        }
        _ => Vec::new(),
    }
}

/// Bytes the point's device held before a step (weights, inputs, what the optimizer keeps
/// there), above the process's own.
fn held_between_steps(r: &R<'_>) -> f64 {
    r.result.metric(Metric::LiveBeforeStepBytes) - r.result.metric(Metric::ProcessBaselineBytes)
}

/// The median time of `phase` in the point's measured steps, in seconds (NaN where absent).
fn phase_s(r: &R<'_>, phase: &str) -> f64 {
    r.result
        .phase_times
        .iter()
        .find(|p| p.phase == phase)
        .map_or(f64::NAN, |p| p.timing.median_s)
}

/// The phase whose peak is the step's.
fn peak_phase<'r>(r: &'r R<'_>) -> &'r str {
    r.result
        .phases
        .iter()
        .max_by_key(|p| p.peak_bytes)
        .map_or("", |p| p.phase.as_ref())
}

/// The two steps, read once: the optimizer on the device and on the host.
struct Pair<'r, 'a> {
    usual: &'r R<'a>,
    offloaded: &'r R<'a>,
}

impl Pair<'_, '_> {
    fn shape(&self) -> crate::harness::models::ModelShape {
        self.usual.config.train.shape
    }

    fn optimizer(&self) -> crate::harness::optim::Optimizer {
        self.usual.config.train.optimizer
    }

    /// The CPU backend's device is the host: there is nothing to move.
    fn same_memory(&self) -> bool {
        self.usual.device == DeviceKind::Cpu
    }

    fn host_state(&self) -> Option<f64> {
        let b = self.offloaded.result.metric(OffloadMetric::HostStateBytes);
        (b.is_finite() && !self.same_memory()).then_some(b)
    }

    fn transfer(&self) -> f64 {
        self.offloaded.result.metric(OffloadMetric::TransferBytes)
    }
}

/// What each step held between steps and at its peak.
fn held_finding(p: &Pair<'_, '_>) -> Text {
    let (usual, offloaded) = (p.usual, p.offloaded);
    Text::said(Key::HeldAndPeak)
        .count("params", p.shape().num_params())
        .name("shape", p.shape().describe())
        .count("batch", usual.config.train.batch)
        .name("optimizer", p.optimizer().name())
        .number("same_memory", u8::from(p.same_memory()))
        .bytes("held_usual", held_between_steps(usual))
        .bytes("held_offloaded", held_between_steps(offloaded))
        .bytes("peak_usual", usual.peak_above_process())
        .name("peak_phase_usual", peak_phase(usual))
        .bytes("peak_offloaded", offloaded.peak_above_process())
        .name("peak_phase_offloaded", peak_phase(offloaded))
}

/// The copies' bytes and time, and the two optimizers' times.
fn copies_finding(p: &Pair<'_, '_>) -> Text {
    let o = p.offloaded;
    let copy_s =
        phase_s(o, OffloadPhase::ToHost.name()) + phase_s(o, OffloadPhase::ToDevice.name());
    Text::said(Key::Copies)
        .bytes("transfer", p.transfer())
        .count("params", p.shape().num_params())
        .seconds("copy", copy_s)
        .seconds("step", o.result.step.median_s)
        .name("optimizer", p.optimizer().name())
        .seconds("host_optimizer", phase_s(o, Phase::Optimizer.name()))
        .seconds("usual_optimizer", phase_s(p.usual, Phase::Optimizer.name()))
        .number("same_memory", u8::from(p.same_memory()))
}

/// What the steps show, in the page's order.
fn findings(p: &Pair<'_, '_>, paired: &[PairedComparison]) -> Vec<Text> {
    let nothing_to_move = p.same_memory().then(|| {
        Text::said(Key::NothingToMove).bytes("extra", predict::same_memory_extra(p.shape()))
    });
    let host_kept = p.host_state().map(|b| {
        Text::said(Key::HostKept)
            .bytes("host_state", b)
            .name("optimizer", p.optimizer().name())
            .bytes("predicted", predict::host_state(p.shape(), p.optimizer()))
    });
    let proof = p.offloaded.result.checks.first().map(|check| {
        Text::said(Key::Proof)
            .count("steps", super::PROOF_STEPS)
            .number("max_rel_diff", check.max_rel_diff)
            .number("tolerance", check.tolerance)
            .number("passed", u8::from(check.passed))
    });
    let paired = paired
        .iter()
        .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id));
    std::iter::once(held_finding(p))
        .chain(nothing_to_move)
        .chain([copies_finding(p)])
        .chain(host_kept)
        .chain(proof)
        .chain(paired)
        .collect()
}

/// The bytes saved between steps, copied per step and kept on the host, beside the rules.
fn predictions(p: &Pair<'_, '_>) -> Vec<Comparison<Text>> {
    let (shape, optimizer) = (p.shape(), p.optimizer());
    let saved_between = held_between_steps(p.usual) - held_between_steps(p.offloaded);
    let between_steps = if p.same_memory() {
        Comparison::new(
            Key::SecondCopy,
            predict::same_memory_extra(shape),
            -saved_between,
            Key::SecondCopyNote,
        )
    } else {
        Comparison::new(
            Key::SavedBetween,
            predict::device_saved_between_steps(shape, optimizer),
            saved_between,
            Text::said(Key::SavedBetweenNote)
                .number("values", optimizer.values_per_param_of(&shape))
                .name("optimizer", optimizer.name()),
        )
    };
    let host = p.host_state().map(|b| {
        Comparison::new(
            Key::LabelHostBytesKeptBetweenSteps,
            predict::host_state(shape, optimizer),
            b,
            Key::HostKeptNote,
        )
    });
    [
        between_steps,
        Comparison::new(
            Key::LabelBytesCopiedPerStep,
            predict::transfer_per_step(shape),
            p.transfer(),
            Key::CopiedNote,
        ),
    ]
    .into_iter()
    .chain(host)
    .collect()
}

/// The device's bytes, and each phase's time, with the optimizer on the device and on the
/// host.
fn charts(p: &Pair<'_, '_>) -> [Chart<Text>; 2] {
    let both = [p.usual, p.offloaded];
    let categories: Vec<String> = both
        .iter()
        .map(|r| r.config.placement.label().to_string())
        .collect();
    let bar = |name: Text, f: &dyn Fn(&R<'_>) -> f64| {
        Series::line(
            name,
            false,
            both.iter()
                .enumerate()
                .map(|(i, r)| ((i + 1) as f64, f(r)))
                .collect(),
        )
    };
    let title = if p.same_memory() {
        Key::LabelProcessBytesTheCpuHostAnd
    } else {
        Key::LabelDeviceBytesWithTheOptimizerOn
    };
    [
        Chart::new(
            "device-bytes",
            title,
            Key::LabelWhereTheOptimizerSteps,
            Key::LabelBytesAboveTheProcessSOwn,
        )
        .y(AxisUnit::Bytes)
        .categories(categories.clone())
        .series([
            bar(Key::LabelHeldBetweenSteps.into(), &held_between_steps),
            bar(Key::LabelStepPeak.into(), &|r| r.peak_above_process()),
        ]),
        Chart::new(
            "phase-times",
            Key::LabelTimeOfEachPhaseOfA,
            Key::LabelWhereTheOptimizerSteps,
            Key::LabelTime,
        )
        .y(AxisUnit::Seconds)
        .categories(categories)
        .series(
            phases()
                .iter()
                .map(|phase| bar(Text::named(*phase), &|r| phase_s(r, phase))),
        ),
    ]
}

/// ZeRO-Offload's bytes per parameter beside ours.
fn published(p: &Pair<'_, '_>) -> PublishedFigure<Text> {
    let params = p.shape().num_params() as f64;
    PublishedFigure {
        source: Text::said(Key::PublishedSource),
        claim: Text::said(Key::PublishedClaim),
        ours: Text::said(Key::PublishedOurs)
            .number("usual_per_param", held_between_steps(p.usual) / params)
            .name("optimizer", p.optimizer().name())
            .number(
                "offloaded_per_param",
                held_between_steps(p.offloaded) / params,
            )
            .number("same_memory", u8::from(p.same_memory())),
    }
}

impl Analyse for Offload {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let correctness = Correctness::of(points);
        let (Some(usual), Some(offloaded)) =
            (of(&rows, Placement::Device), of(&rows, Placement::Host))
        else {
            return Analysis::unmeasured(correctness);
        };
        let p = Pair { usual, offloaded };
        let headline = Headline::versus(
            Text::said(Key::Headline)
                .name("optimizer", p.optimizer().name())
                .count("batch", usual.config.train.batch)
                .number("same_memory", u8::from(p.same_memory())),
            Side::step(usual.result),
            Side::step(offloaded.result),
            correctness,
            CommonKey::WorstCheck,
        )
        .timed_by(HEADLINE);
        Analysis::new(headline)
            .findings(findings(&p, paired))
            .comparisons(predictions(&p))
            .charts(charts(&p))
            .published([published(&p)])
    }
}
