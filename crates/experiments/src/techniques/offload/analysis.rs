//! Offload's conclusions: the device's bytes between steps and at the step's peak with the
//! optimizer on the device and on the host, set beside the byte model; the host's bytes; the
//! bytes copied per step and what the copies cost; the proof; charts and the index row.

use results::{Analysis, Chart, Comparison, ComparisonSpec, Correctness, DeviceKind, Headline, MeasuredPoint, Metric, PairedComparison, Phase, PhaseKey, PublishedFigure, Scale, Series, Side, analysis::worst_check, format::{self, mib}};

use super::OffloadMetric;
use super::{predict, Offload, OffloadConfig, Placement};
use crate::technique::{Analyse, Row};
use super::OffloadPhase;

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
    ) -> Analysis {
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
        let mut findings = vec![format!(
            "The MLP ({} parameters, {}, batch {}), {}: between steps the {} held {} with the \
             optimizer beside the model and {} with it on the host ({} {}); the step's peak \
             went from {} (in its {} phase) to {} (in its {} phase), {}.",
            params,
            shape.describe(),
            usual.config.train.batch,
            optimizer.name(),
            if same_memory { "process" } else { "device" },
            format::bytes(held_between_steps(usual)),
            format::bytes(held_between_steps(offloaded)),
            format::bytes(saved_between.abs()),
            if saved_between >= 0.0 { "less" } else { "more" },
            format::bytes(peak_usual),
            peak_phase(usual),
            format::bytes(peak_offloaded),
            peak_phase(offloaded),
            format::pct((peak_offloaded - peak_usual) / peak_usual * 100.0),
        )];
        if same_memory {
            findings.push(format!(
                "On the CPU backend there is nothing to move: the host is the device. The \
                 offloaded step keeps the optimizer's state in the same memory and adds a second \
                 copy of the weights (the host's), {} by the byte model; what it measures here is \
                 the price of the copies and of that second copy, not a saving. The device \
                 result sets show what moves.",
                format::bytes(predict::same_memory_extra(shape)),
            ));
        }
        let transfer = offloaded.result.metric(OffloadMetric::TransferBytes);
        let copy_s = phase_s(offloaded, OffloadPhase::ToHost.name()) + phase_s(offloaded, OffloadPhase::ToDevice.name());
        findings.push(format!(
            "Each offloaded step copied {} ({:.2} B per parameter: every gradient down, every \
             weight up); the two copies took {} of a {} step (median of the measured steps; \
             {}/s), the host's {} step {} against {} on the {}.",
            format::bytes(transfer),
            transfer / params as f64,
            format::seconds(copy_s),
            format::seconds(offloaded.result.step.median_s),
            format::bytes(transfer / copy_s),
            optimizer.name(),
            format::seconds(phase_s(offloaded, Phase::Optimizer.name())),
            format::seconds(phase_s(usual, Phase::Optimizer.name())),
            if same_memory {
                "CPU in the usual step"
            } else {
                "device"
            },
        ));
        let host_state = offloaded.result.metric(OffloadMetric::HostStateBytes);
        if host_state.is_finite() && !same_memory {
            findings.push(format!(
                "The host kept {} between steps (the master weights and {}'s state; {} by the \
                 byte model), counted by the host's allocator apart from the device's pool. A \
                 read of a wgpu tensor returns the device's mapped staging buffer, which Flex \
                 takes without a copy and the host's allocator does not see: the gradients \
                 cross that way and are freed by the step's end, while the master weights are \
                 copied into the host's heap once, before the first step (the first run on \
                 lavapipe left them in a staging buffer and counted 2.08 MiB of 3.01 MiB: an \
                 explanation found after measuring, not a prediction).",
                format::bytes(host_state),
                optimizer.name(),
                format::bytes(predict::host_state(shape, optimizer)),
            ));
        }
        if let Some(check) = offloaded.result.checks.first() {
            findings.push(format!(
                "The proof: {} steps both ways from the same weights; the parameters' largest \
                 difference is {:.1e} of the largest parameter (tolerance {:.0e}){}.",
                super::PROOF_STEPS,
                check.max_rel_diff,
                check.tolerance,
                if check.passed {
                    ": where the optimizer steps changes where its state lives, not what is \
                     computed"
                } else {
                    ": they DIFFER"
                }
            ));
        }
        findings.extend(paired.iter().map(PairedComparison::finding));

        let between_steps = if same_memory {
            Comparison::new(
                "held between steps, offloaded less usual (a second copy of the weights)",
                predict::same_memory_extra(shape),
                -saved_between,
                "the host's copy of the weights, one f32 (4 B) per parameter",
            )
        } else {
            Comparison::new(
                "device bytes saved between steps (the optimizer's state)",
                predict::device_saved_between_steps(shape, optimizer),
                saved_between,
                format!(
                    "{} value(s) of {} state per parameter, 4 B each",
                    optimizer.values_per_param(),
                    optimizer.name()
                ),
            )
        };
        let mut comparisons = vec![
            between_steps,
            Comparison::new(
                "bytes copied per step",
                predict::transfer_per_step(shape),
                transfer,
                "4 B per parameter each way (gradients down, weights up)",
            ),
        ];
        if host_state.is_finite() && !same_memory {
            comparisons.push(Comparison::new(
                "host bytes kept between steps",
                predict::host_state(shape, optimizer),
                host_state,
                "the master weights and the optimizer's state, 4 B per value",
            ));
        }

        let categories: Vec<String> = [usual, offloaded]
            .iter()
            .map(|r| r.config.placement.label().to_string())
            .collect();
        let bar = |name: &str, f: &dyn Fn(&R<'_>) -> f64| {
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
                    "Process bytes (the CPU: host and device are one memory)".into()
                } else {
                    "Device bytes with the optimizer on the device and on the host".into()
                },
                x_label: "where the optimizer steps".into(),
                y_label: "bytes above the process's own (MiB)".into(),
                x_scale: Scale::Linear,
                categories: categories.clone(),
                series: vec![
                    bar("held between steps", &|r| mib(held_between_steps(r))),
                    bar("step peak", &|r| mib(r.peak_above_process())),
                ],
            },
            Chart {
                id: "phase-times".into(),
                title: "Time of each phase of a step (median)".into(),
                x_label: "where the optimizer steps".into(),
                y_label: "time (ms)".into(),
                x_scale: Scale::Linear,
                categories,
                series: phases()
                    .iter()
                    .map(|phase| bar(phase, &|r| phase_s(r, phase) * 1e3))
                    .collect(),
            },
        ];

        let headline = Headline::versus(
            format!(
                "{} beside the model against on the host, MLP, batch {} ({}; time per sample)",
                optimizer.name(),
                usual.config.train.batch,
                if same_memory {
                    "step peak; the CPU: one memory, nothing to move"
                } else {
                    "the device's step peak"
                }
            ),
            Side::step(usual.result),
            Side::step(offloaded.result),
            correctness,
            worst_check(points),
        )
        .timed_by(HEADLINE);
        Analysis {
            headline,
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![PublishedFigure {
                source: "ZeRO (Rajbhandari et al. 2020); ZeRO-Offload (Ren et al. 2021)".into(),
                claim: "model states of mixed-precision Adam are 2 + 2 + 12 bytes per parameter \
                        on the device; offloading the 12 of the optimizer (master weights, \
                        momentum, variance) leaves the 2 + 2 of the half-precision weights and \
                        gradients"
                    .into(),
                ours: format!(
                    "in f32 the usual step holds {:.2} B per parameter between steps (weights, \
                     {}'s state, the inputs), the offloaded one {:.2} B{}",
                    held_between_steps(usual) / params as f64,
                    optimizer.name(),
                    held_between_steps(offloaded) / params as f64,
                    if same_memory {
                        " in the same memory (the CPU: the host's copy of the weights on top)"
                    } else {
                        " on the device"
                    }
                ),
            }],
        }
    }
}
