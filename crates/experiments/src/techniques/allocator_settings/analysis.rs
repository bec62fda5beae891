//! Allocator settings' conclusions: reserved against in-use bytes under each pool setting, for
//! the growing sequence and the training step, the in-use bytes against their rule, the losses
//! compared across settings, charts and the index row.

use results::keys::allocator_settings::Key;
use results::{
    Analysis, AxisUnit, Chart, Check, Comparison, Correctness, Headline, MeasuredPoint, Metric,
    PairedComparison, Scale, Series, Side, Text, Trace,
};

use super::AllocatorMetric;
use super::{predict, AllocConfig, AllocatorSettings, Workload, KEEP};
use crate::technique::{Analyse, Row};

type R<'a> = Row<'a, AllocConfig>;

/// What the index row's peak is.
const PEAK: Key = Key::LabelBytesReservedAtTheSequenceS;

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
            Check::compare("losses-across-pools", &reference, &candidate, TOLERANCE)
        })
        .max_by(|a, b| a.max_rel_diff.total_cmp(&b.max_rel_diff))
}

impl Analyse for AllocatorSettings {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        _paired: &[PairedComparison],
    ) -> Analysis<Text> {
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

        let mut findings = vec![Text::said(Key::Sequence)
            .count("count", count)
            .bytes("first", base_bytes as f64)
            .bytes("last", (n * base_bytes) as f64)
            .count("keep", KEEP)
            .bytes("in_use", predict::in_use_after(n, base_bytes))
            .bytes("allocated", predict::never_reused_after(n, base_bytes))];
        for r in &growing {
            let held = r.result.metric(Metric::HeldBytes);
            if has_pool {
                let peak = r.result.metric(AllocatorMetric::ReservedPeakBytes);
                findings.push(
                    Text::said(Key::Pooled)
                        .name("setting", r.config.setting())
                        .bytes("held", held)
                        .bytes("peak", peak)
                        .bytes(
                            "dropped",
                            r.result.metric(AllocatorMetric::ReservedDroppedBytes),
                        )
                        .seconds("cleanup", r.result.metric(Metric::CleanupS))
                        .bytes(
                            "released",
                            r.result.metric(AllocatorMetric::ReservedReleasedBytes),
                        ),
                );
            } else {
                findings.push(
                    Text::said(Key::NoPool)
                        .bytes("held", held)
                        .bytes("predicted", predict::in_use_after(n, base_bytes)),
                );
            }
        }
        for r in &steps {
            let peak = r.peak_above_process();
            match (step_reserved(r), r.peak_upper()) {
                (Some(reserved), upper) => {
                    let mut t = Text::said(Key::StepPooled)
                        .name("setting", r.config.setting())
                        .bytes("peak", peak)
                        .bytes("reserved", reserved);
                    if let Some(u) = upper {
                        t = t.bytes("upper", u - r.result.metric(Metric::ProcessBaselineBytes));
                    }
                    findings.push(t);
                }
                (None, _) => findings.push(Text::said(Key::StepNoPool).bytes("peak", peak)),
            }
        }
        let proof = losses_agree(&steps);
        if let Some(check) = &proof {
            findings.push(
                Text::said(Key::Proof)
                    .count("steps", super::PROOF_STEPS)
                    .number("max_rel_diff", check.max_rel_diff)
                    .number("tolerance", TOLERANCE)
                    .number("passed", u8::from(check.passed)),
            );
        }
        findings.push(Text::said(Key::CustomPools));
        findings.push(Text::said(Key::NotTimed));

        let comparisons: Vec<Comparison<Text>> = growing
            .iter()
            .map(|r| {
                Comparison::new(
                    Text::said(Key::InUseQuantity).name("setting", r.config.setting()),
                    predict::in_use_after(n, base_bytes),
                    r.result.metric(Metric::HeldBytes),
                    Text::said(Key::InUseNote)
                        .count("keep", KEEP)
                        .bytes("step", base_bytes as f64),
                )
            })
            .collect();

        let by_allocation = |values: &[f64]| -> Vec<(f64, f64)> {
            values
                .iter()
                .enumerate()
                .map(|(i, &b)| ((i + 1) as f64, b))
                .collect()
        };
        let mut series = vec![
            Series::line(
                Key::LabelInUseMeasured,
                false,
                by_allocation(first.result.trace(Trace::InUseBytesByAllocation)),
            ),
            Series::line(
                Key::LabelInUsePredicted,
                true,
                (1..=n)
                    .map(|i| (i as f64, predict::in_use_after(i, base_bytes)))
                    .collect(),
            ),
        ];
        if has_pool {
            series.extend(growing.iter().map(|r| {
                Series::line(
                    Text::said(Key::ReservedSeries).name("setting", r.config.setting()),
                    false,
                    by_allocation(r.result.trace(Trace::ReservedBytesByAllocation)),
                )
            }));
            series.push(Series::line(
                Text::said(Key::LabelEveryTensorSoFarNoPage),
                true,
                (1..=n)
                    .map(|i| (i as f64, predict::never_reused_after(i, base_bytes)))
                    .collect(),
            ));
        }
        let mut charts = vec![Chart {
            id: "growing-tensors".into(),
            title: Text::said(Key::LabelTensorsOfGrowingSizeInUse),
            x_label: Key::LabelAllocation.into(),
            y_label: Key::LabelBytes.into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Bytes,
            x_scale: Scale::Linear,
            categories: Vec::new(),
            series,
        }];
        if has_pool && !steps.is_empty() {
            let categories: Vec<String> = steps
                .iter()
                .map(|r| r.config.setting().to_string())
                .collect();
            let bar = |name: Text, f: &dyn Fn(&R<'_>) -> f64| {
                Series::line(
                    name,
                    false,
                    steps
                        .iter()
                        .enumerate()
                        .map(|(i, r)| ((i + 1) as f64, f(r)))
                        .collect(),
                )
            };
            charts.push(Chart {
                id: "training-step".into(),
                title: Text::said(Key::LabelATrainingStepUnderEachSetting),
                x_label: Key::LabelPoolSetting.into(),
                y_label: Key::LabelBytes.into(),
                x_unit: AxisUnit::Given,
                y_unit: AxisUnit::Bytes,
                x_scale: Scale::Linear,
                categories,
                series: vec![
                    bar(Text::from(Key::LabelPeakInUse), &|r| r.peak()),
                    bar(Text::said(Key::LabelMostReservedAfterAPhase), &|r| {
                        step_reserved(r).unwrap_or(f64::NAN)
                    }),
                ],
            });
        }

        let correctness = match (&proof, Correctness::of(points)) {
            (Some(check), Correctness::Passed) if !check.passed => Correctness::Failed,
            (_, c) => c,
        };
        let detail = match &proof {
            Some(c) => Text::said(Key::ProofCheck)
                .count("steps", super::PROOF_STEPS)
                .name("setting", first.config.setting())
                .number("max_abs_diff", c.max_abs_diff)
                .number("max_rel_diff", c.max_rel_diff)
                .number("tolerance", c.tolerance)
                .number("passed", u8::from(c.passed)),
            None => Text::said(Key::NoProof),
        };
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
                Text::said(Key::Headline)
                    .name("default", first.config.setting())
                    .name("best", best.config.setting()),
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
                compared: Text::said(Key::HeadlineAlone)
                    .name("default", first.config.setting())
                    .number("has_pool", u8::from(has_pool)),
                memory_saved_bytes: None,
                memory_saved_pct: None,
                timed_by: None,
                correctness,
                correctness_detail: detail,
                peak: Some(PEAK.into()),
                variant: None,
                fix: None,
            },
        };
        Analysis {
            fix_table: None,
            fix_checks: Vec::new(),
            headline,
            secondary_headlines: vec![],
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![results::PublishedFigure {
                source: Text::said(Key::PublishedSource),
                claim: Text::said(Key::PublishedClaim),
                ours: if has_pool {
                    Text::said(Key::PublishedOurs)
                        .bytes(
                            "least",
                            growing
                                .iter()
                                .map(|r| r.result.metric(AllocatorMetric::ReservedPeakBytes))
                                .fold(f64::INFINITY, f64::min),
                        )
                        .bytes(
                            "most",
                            growing
                                .iter()
                                .map(|r| r.result.metric(AllocatorMetric::ReservedPeakBytes))
                                .fold(f64::NEG_INFINITY, f64::max),
                        )
                        .bytes("in_use", first.result.metric(Metric::HeldBytes))
                } else {
                    Text::said(Key::PublishedOursNoPool)
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
