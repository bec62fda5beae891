//! Offload's conclusions: the device's bytes between steps and at the step's peak with the
//! optimizer on the device and on the host, set beside the byte model; the host's bytes; the
//! bytes copied per step and what the copies cost; the proof; charts and the index row.

use results::keys::offload::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Comparison, ComparisonSpec, Correctness, DeviceKind, Headline,
    MeasuredPoint, Metric, PairedComparison, Phase, PhaseKey, PublishedFigure, Scale, Series, Side,
    Text,
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
        let shape = usual.config.train.shape;
        let optimizer = usual.config.train.optimizer;
        let params = shape.num_params();
        let same_memory = usual.device == DeviceKind::Cpu;

        let saved_between = held_between_steps(usual) - held_between_steps(offloaded);
        let (peak_usual, peak_offloaded) =
            (usual.peak_above_process(), offloaded.peak_above_process());
        let mut findings = vec![Text::said(Key::HeldAndPeak)
            .count("params", params)
            .name("shape", shape.describe())
            .count("batch", usual.config.train.batch)
            .name("optimizer", optimizer.name())
            .number("same_memory", u8::from(same_memory))
            .bytes("held_usual", held_between_steps(usual))
            .bytes("held_offloaded", held_between_steps(offloaded))
            .bytes("peak_usual", peak_usual)
            .name("peak_phase_usual", peak_phase(usual))
            .bytes("peak_offloaded", peak_offloaded)
            .name("peak_phase_offloaded", peak_phase(offloaded))];
        if same_memory {
            findings.push(
                Text::said(Key::NothingToMove).bytes("extra", predict::same_memory_extra(shape)),
            );
        }
        let transfer = offloaded.result.metric(OffloadMetric::TransferBytes);
        let copy_s = phase_s(offloaded, OffloadPhase::ToHost.name())
            + phase_s(offloaded, OffloadPhase::ToDevice.name());
        findings.push(
            Text::said(Key::Copies)
                .bytes("transfer", transfer)
                .count("params", params)
                .seconds("copy", copy_s)
                .seconds("step", offloaded.result.step.median_s)
                .name("optimizer", optimizer.name())
                .seconds(
                    "host_optimizer",
                    phase_s(offloaded, Phase::Optimizer.name()),
                )
                .seconds("usual_optimizer", phase_s(usual, Phase::Optimizer.name()))
                .number("same_memory", u8::from(same_memory)),
        );
        let host_state = offloaded.result.metric(OffloadMetric::HostStateBytes);
        if host_state.is_finite() && !same_memory {
            findings.push(
                Text::said(Key::HostKept)
                    .bytes("host_state", host_state)
                    .name("optimizer", optimizer.name())
                    .bytes("predicted", predict::host_state(shape, optimizer)),
            );
        }
        if let Some(check) = offloaded.result.checks.first() {
            findings.push(
                Text::said(Key::Proof)
                    .count("steps", super::PROOF_STEPS)
                    .number("max_rel_diff", check.max_rel_diff)
                    .number("tolerance", check.tolerance)
                    .number("passed", u8::from(check.passed)),
            );
        }
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );

        let between_steps = if same_memory {
            Comparison::new(
                Text::said(Key::SecondCopy),
                predict::same_memory_extra(shape),
                -saved_between,
                Text::said(Key::SecondCopyNote),
            )
        } else {
            Comparison::new(
                Text::said(Key::SavedBetween),
                predict::device_saved_between_steps(shape, optimizer),
                saved_between,
                Text::said(Key::SavedBetweenNote)
                    .count("values", optimizer.values_per_param())
                    .name("optimizer", optimizer.name()),
            )
        };
        let mut comparisons = vec![
            between_steps,
            Comparison::new(
                Key::LabelBytesCopiedPerStep,
                predict::transfer_per_step(shape),
                transfer,
                Text::said(Key::CopiedNote),
            ),
        ];
        if host_state.is_finite() && !same_memory {
            comparisons.push(Comparison::new(
                Text::said(Key::LabelHostBytesKeptBetweenSteps),
                predict::host_state(shape, optimizer),
                host_state,
                Text::said(Key::HostKeptNote),
            ));
        }

        let categories: Vec<String> = [usual, offloaded]
            .iter()
            .map(|r| r.config.placement.label().to_string())
            .collect();
        let bar = |name: Text, f: &dyn Fn(&R<'_>) -> f64| {
            Series::line(
                name,
                false,
                [usual, offloaded]
                    .iter()
                    .enumerate()
                    .map(|(i, r)| ((i + 1) as f64, f(r)))
                    .collect(),
            )
        };
        let charts = vec![
            Chart {
                id: "device-bytes".into(),
                title: if same_memory {
                    Text::said(Key::LabelProcessBytesTheCpuHostAnd)
                } else {
                    Text::said(Key::LabelDeviceBytesWithTheOptimizerOn)
                },
                x_label: Key::LabelWhereTheOptimizerSteps.into(),
                y_label: Text::said(Key::LabelBytesAboveTheProcessSOwn),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: vec![
                    bar(Key::LabelHeldBetweenSteps.into(), &|r| {
                        held_between_steps(r)
                    }),
                    bar(Key::LabelStepPeak.into(), &|r| r.peak_above_process()),
                ],
            },
            Chart {
                id: "phase-times".into(),
                title: Text::said(Key::LabelTimeOfEachPhaseOfA),
                x_label: Key::LabelWhereTheOptimizerSteps.into(),
                y_label: Key::LabelTime.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Seconds,
                x_scale: Scale::Linear,
                categories,
                series: phases()
                    .iter()
                    .map(|phase| bar(Text::named(*phase), &|r| phase_s(r, phase)))
                    .collect(),
            },
        ];

        let headline = Headline::versus(
            Text::said(Key::Headline)
                .name("optimizer", optimizer.name())
                .count("batch", usual.config.train.batch)
                .number("same_memory", u8::from(same_memory)),
            Side::step(usual.result),
            Side::step(offloaded.result),
            correctness,
            Text::said(CommonKey::WorstCheck),
        )
        .timed_by(HEADLINE);
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline,
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![PublishedFigure {
                source: Text::said(Key::PublishedSource),
                claim: Text::said(Key::PublishedClaim),
                ours: Text::said(Key::PublishedOurs)
                    .number("usual_per_param", held_between_steps(usual) / params as f64)
                    .name("optimizer", optimizer.name())
                    .number(
                        "offloaded_per_param",
                        held_between_steps(offloaded) / params as f64,
                    )
                    .number("same_memory", u8::from(same_memory)),
            }],
        }
    }
}
