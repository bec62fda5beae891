//! Allocator settings' conclusions: reserved against in-use bytes under each pool setting, for
//! the growing sequence and the training step, the in-use bytes against their rule, the losses
//! compared across settings, charts and the index row.

use results::{Analysis, Chart, Check, Comparison, Correctness, Headline, MeasuredPoint, Metric, PairedComparison, Scale, Series, Side, Trace, format::{self, mib}};

use super::AllocatorMetric;
use super::{predict, AllocConfig, AllocatorSettings, Workload, KEEP};
use crate::technique::{Analyse, Row};

type R<'a> = Row<'a, AllocConfig>;

/// What the index row's peak is.
const PEAK: &str = "bytes reserved at the sequence's peak";

/// Relative tolerance of the losses' comparison across settings: the same kernels on the same
/// data, so identical is expected; autotune may pick another kernel in another process.
pub const TOLERANCE: f64 = 1e-5;

/// The most the pools held during a training point's phases (reserved after each).
fn step_reserved(r: &R<'_>) -> Option<f64> {
    r.result
        .phases
        .iter()
        .filter_map(|p| p.reserved_after_bytes)
        .max()
        .map(|b| b as f64)
}

/// The proof across settings: each training point's losses from the point's seed against the
/// first setting's (the device's default). `None` where fewer than two settings ran.
pub fn losses_agree(steps: &[&R<'_>]) -> Option<Check> {
    let (first, rest) = steps.split_first()?;
    if rest.is_empty() {
        return None;
    }
    // The losses as recorded (f64 in the trace), back in the f32 the steps computed them in.
    let losses = |r: &R<'_>| -> Vec<f32> {
        r.result
            .trace(Trace::LossByStep)
            .iter()
            .map(|&l| l as f32)
            .collect()
    };
    let reference = losses(first);
    rest.iter()
        .map(|r| {
            let candidate = losses(r);
            Check::compare(
                &format!(
                    "losses of {} steps from the same seed under each pool setting against {}",
                    super::PROOF_STEPS,
                    first.config.setting()
                ),
                &reference,
                &candidate,
                TOLERANCE,
            )
        })
        .max_by(|a, b| a.max_rel_diff.total_cmp(&b.max_rel_diff))
}

impl Analyse for AllocatorSettings {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        _paired: &[PairedComparison],
    ) -> Analysis {
        let growing: Vec<&R<'_>> = rows
            .iter()
            .filter(|r| matches!(r.config.workload, Workload::GrowingTensors { .. }))
            .collect();
        let steps: Vec<&R<'_>> = rows
            .iter()
            .filter(|r| matches!(r.config.workload, Workload::TrainingStep { .. }))
            .collect();
        let Some(first) = growing.first() else {
            return Analysis::unmeasured(Correctness::of(points));
        };
        let Workload::GrowingTensors { base_bytes, count } = first.config.workload else {
            return Analysis::unmeasured(Correctness::of(points));
        };
        let has_pool = first.result.metric(Metric::HasCache) > 0.0;
        let n = count as u64;

        let mut findings = vec![format!(
            "The sequence: {count} f32 tensors of {} to {} ({} more each), the last {KEEP} kept \
             alive, so {} is live after the last allocation and {} was allocated in all.",
            format::bytes(base_bytes as f64),
            format::bytes((n * base_bytes) as f64),
            format::bytes(base_bytes as f64),
            format::bytes(predict::in_use_after(n, base_bytes)),
            format::bytes(predict::never_reused_after(n, base_bytes)),
        )];
        for r in &growing {
            let held = r.result.metric(Metric::HeldBytes);
            if has_pool {
                let peak = r.result.metric(AllocatorMetric::ReservedPeakBytes);
                findings.push(format!(
                    "{}: after the last allocation {} in use and, at the sequence's peak, {} \
                     reserved ({:.1}x); once every tensor was dropped {} stayed reserved, and \
                     memory_cleanup() ({}) left {}.",
                    r.config.setting(),
                    format::bytes(held),
                    format::bytes(peak),
                    peak / held,
                    format::bytes(r.result.metric(AllocatorMetric::ReservedDroppedBytes)),
                    format::seconds(r.result.metric(Metric::CleanupS)),
                    format::bytes(r.result.metric(AllocatorMetric::ReservedReleasedBytes)),
                ));
            } else {
                findings.push(format!(
                    "No pool on this device: every freed buffer went back to the process's heap. \
                     After the last allocation {} was in use, as the rule says ({}); nothing is \
                     reserved beyond it, so there is no setting to choose.",
                    format::bytes(held),
                    format::bytes(predict::in_use_after(n, base_bytes)),
                ));
            }
        }
        for r in &steps {
            let peak = r.peak_above_process();
            match (step_reserved(r), r.peak_upper()) {
                (Some(reserved), upper) => findings.push(format!(
                    "Training step, {}: peak in use {} above the process's own bytes{}; the \
                     pools held at most {} after a phase.",
                    r.config.setting(),
                    format::bytes(peak),
                    upper.map_or(String::new(), |u| format!(
                        " (bracket up to {})",
                        format::bytes(u - r.result.metric(Metric::ProcessBaselineBytes))
                    )),
                    format::bytes(reserved),
                )),
                (None, _) => findings.push(format!(
                    "Training step: peak in use {} above the process's own bytes; no pool, \
                     nothing reserved beyond the live buffers.",
                    format::bytes(peak),
                )),
            }
        }
        let proof = losses_agree(&steps);
        if let Some(check) = &proof {
            findings.push(format!(
                "The losses of {} steps from the same seed under every setting: largest \
                 relative difference {:.1e} (tolerance {TOLERANCE:.0e}){}.",
                super::PROOF_STEPS,
                check.max_rel_diff,
                if check.passed {
                    ": the setting changes where tensors live, not what is computed"
                } else {
                    ": they DIFFER"
                }
            ));
        }
        findings.push(
            "Custom pools (MemoryConfiguration::Custom) are not among the points: a custom pool \
             of exclusive pages must have a largest size that is a multiple of the device's \
             alignment (cubecl-runtime asserts it; u64::MAX failed here) and starts its running \
             average of page sizes at half that size (ExclusiveMemoryPool::new), so one pool for \
             every size makes pages of half its maximum from the first tensor on. The presets \
             build their per-size pools from the device's properties, which a user does not see \
             before the device exists."
                .into(),
        );
        findings.push(
            "Not timed in pairs: a pool is chosen once per process before the device's first \
             use, so two settings cannot be interleaved in one process, and the workbench \
             alternates processes only for different float types. Each point's own time is in \
             its table; on a software driver (lavapipe) it is the CPU's, not a GPU's."
                .into(),
        );

        let comparisons: Vec<Comparison> = growing
            .iter()
            .map(|r| {
                Comparison::new(
                    format!("in use after the last allocation, {}", r.config.setting()),
                    predict::in_use_after(n, base_bytes),
                    r.result.metric(Metric::HeldBytes),
                    format!(
                        "the last {KEEP} tensors of the sequence, i x {} each",
                        format::bytes(base_bytes as f64)
                    ),
                )
            })
            .collect();

        let by_allocation = |values: &[f64]| -> Vec<(f64, f64)> {
            values
                .iter()
                .enumerate()
                .map(|(i, &b)| ((i + 1) as f64, mib(b)))
                .collect()
        };
        let mut series = vec![
            Series::line(
                "in use (measured)",
                false,
                by_allocation(first.result.trace(Trace::InUseBytesByAllocation)),
            ),
            Series::line(
                "in use (predicted)",
                true,
                (1..=n)
                    .map(|i| (i as f64, mib(predict::in_use_after(i, base_bytes))))
                    .collect(),
            ),
        ];
        if has_pool {
            series.extend(growing.iter().map(|r| {
                Series::line(
                    &format!("reserved, {}", r.config.setting()),
                    false,
                    by_allocation(r.result.trace(Trace::ReservedBytesByAllocation)),
                )
            }));
            series.push(Series::line(
                "every tensor so far (no page reused, none freed)",
                true,
                (1..=n)
                    .map(|i| (i as f64, mib(predict::never_reused_after(i, base_bytes))))
                    .collect(),
            ));
        }
        let mut charts = vec![Chart {
            id: "growing-tensors".into(),
            title: "Tensors of growing size: in use and reserved after each allocation".into(),
            x_label: "allocation".into(),
            y_label: "bytes (MiB)".into(),
            x_scale: Scale::Linear,
            categories: Vec::new(),
            series,
        }];
        if has_pool && !steps.is_empty() {
            let categories: Vec<String> = steps
                .iter()
                .map(|r| r.config.setting().to_string())
                .collect();
            let bar = |name: &str, f: &dyn Fn(&R<'_>) -> f64| {
                Series::line(
                    name,
                    false,
                    steps
                        .iter()
                        .enumerate()
                        .map(|(i, r)| ((i + 1) as f64, mib(f(r))))
                        .collect(),
                )
            };
            charts.push(Chart {
                id: "training-step".into(),
                title: "A training step under each setting".into(),
                x_label: "pool setting".into(),
                y_label: "bytes (MiB)".into(),
                x_scale: Scale::Linear,
                categories,
                series: vec![
                    bar("peak in use", &|r| r.peak()),
                    bar("most reserved after a phase", &|r| {
                        step_reserved(r).unwrap_or(f64::NAN)
                    }),
                ],
            });
        }

        let correctness = match (&proof, Correctness::of(points)) {
            (Some(check), Correctness::Passed) if !check.passed => Correctness::Failed,
            (_, c) => c,
        };
        let detail = proof.as_ref().map_or_else(
            || "the losses' finiteness (one setting: nothing to compare)".to_string(),
            Check::sentence,
        );
        // The headline: the default against the setting that reserved least at the sequence's
        // peak, where there is a pool and more than one setting.
        let least = growing
            .iter()
            .skip(1)
            .min_by(|a, b| {
                a.result
                    .metric(AllocatorMetric::ReservedPeakBytes)
                    .total_cmp(&b.result.metric(AllocatorMetric::ReservedPeakBytes))
            })
            .filter(|_| has_pool);
        let headline = match least {
            Some(best) => Headline::versus(
                format!(
                    "tensors of growing size: {} against {} ({PEAK}; not timed)",
                    first.config.setting(),
                    best.config.setting()
                ),
                Side::with_peak(
                    PEAK,
                    first.result.metric(AllocatorMetric::ReservedPeakBytes),
                ),
                Side::with_peak(PEAK, best.result.metric(AllocatorMetric::ReservedPeakBytes)),
                correctness,
                detail,
            )
            .variant(best.config.setting()),
            None => Headline {
                compared: format!(
                    "tensors of growing size under {} ({})",
                    first.config.setting(),
                    if has_pool {
                        "one setting measured: nothing to compare"
                    } else {
                        "no pool on this device: nothing to set"
                    }
                ),
                memory_saved_bytes: None,
                memory_saved_pct: None,
                timed_by: None,
                correctness,
                correctness_detail: detail,
                peak: PEAK.into(),
                variant: None,
            },
        };
        Analysis {
            headline,
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![results::PublishedFigure {
                source: "torchtune issue 1185 (Llama3-8B QLoRA, A100 80 GB)".into(),
                claim: "peak 16.39 GiB at 21.6 s/it without, 10.83 GiB at 20.56 s/it with \
                        PyTorch's expandable_segments:True"
                    .into(),
                ours: if has_pool {
                    format!(
                        "on this device the growing sequence's reserved peak ranged from {} to {} \
                         across the settings measured, for {} in use; CubeCL has no expandable \
                         segments, and the settings it has are measured here",
                        format::bytes(
                            growing
                                .iter()
                                .map(|r| r.result.metric(AllocatorMetric::ReservedPeakBytes))
                                .fold(f64::INFINITY, f64::min)
                        ),
                        format::bytes(
                            growing
                                .iter()
                                .map(|r| r.result.metric(AllocatorMetric::ReservedPeakBytes))
                                .fold(f64::NEG_INFINITY, f64::max)
                        ),
                        format::bytes(first.result.metric(Metric::HeldBytes)),
                    )
                } else {
                    "no pool on this device (the CPU backend): nothing is reserved beyond the \
                     live buffers; see the device result sets"
                        .into()
                },
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::backend::Pool;
    use results::{DeviceKind, PointResult, ProbeInfo, Timing};

    fn result(losses: &[f64]) -> PointResult {
        let mut r = PointResult::new(
            ProbeInfo::of("test"),
            Vec::new(),
            Timing::from_samples(vec![1.0]),
            1,
        );
        r.traces.insert(Trace::LossByStep, losses.to_vec());
        r
    }

    fn row<'a>(pool: Pool, result: &'a PointResult) -> R<'a> {
        Row {
            id: pool.name(),
            config: AllocConfig {
                pool: Some(pool),
                workload: Workload::TrainingStep {
                    shape: crate::harness::models::MlpShape { width: 4, depth: 2 },
                    batch: 1,
                },
            },
            label: pool.name(),
            result,
            device: DeviceKind::Wgpu,
        }
    }

    #[test]
    fn the_proof_fails_when_a_setting_changes_the_losses() {
        let (same, other, moved) = (
            result(&[2.0, 1.5, 1.0]),
            result(&[2.0, 1.5, 1.0]),
            result(&[2.0, 1.5, 1.01]),
        );
        let (a, b, c) = (
            row(Pool::SubSlices, &same),
            row(Pool::ExclusivePages, &other),
            row(Pool::ExclusivePages, &moved),
        );
        assert!(losses_agree(&[&a, &b]).unwrap().passed);
        assert!(!losses_agree(&[&a, &b, &c]).unwrap().passed);
        assert!(
            losses_agree(&[&a]).is_none(),
            "one setting: nothing to compare"
        );
    }
}
