//! The GPT-2-small table's conclusions: each cell's peak on the plain step's base, its fixed
//! part and activations, the estimator beside it, its check, and the same fixes projected onto
//! a 24 GiB card at sequence 1024.

use results::keys::gpt2_small::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Check, Comparison, ComparisonSpec, Correctness, FixCell, FixTable,
    Headline, MeasuredPoint, Metric, PairedComparison, Phase, PointCheck, ProjectedCell,
    Projection, Scale, Series, Side, Text, Trace,
};

use super::{workload, CellConfig, Fix, Gpt2Metric, Gpt2Small};
use crate::capacity::{largest_batch, usable_bytes, Sharding};
use crate::estimate::StepPlan;
use crate::harness::models::ModelShape;
use crate::harness::profile::Sizes;
use crate::technique::{Analyse, Row, Technique};

type R<'a> = Row<'a, CellConfig>;

/// The card the table is projected onto: 24 GiB, the memory of the consumer cards (RTX 3090,
/// 4090) most out-of-memory reports come from.
pub const CARD_BYTES: f64 = 24.0 * 1024.0 * 1024.0 * 1024.0;
/// The sequence of the projection: GPT-2's context.
pub const PROJECTED_SEQ: usize = 1024;
/// The longest step the three headline fixes are timed in pairs at: a comparison runs at
/// least four builds of three arms each, which at a step of several seconds on a CPU is
/// minutes per fix, more than the run's budget holds.
const MAX_PAIRED_STEP_S: f64 = 1.0;
/// The fixes timed against plain, where a step is short enough.
const TIMED: [Fix; 3] = [Fix::Checkpointing, Fix::Accumulation, Fix::MixedBf16];

fn cell<'r, 'a>(rows: &'r [R<'a>], fix: Fix) -> Option<&'r R<'a>> {
    rows.iter().find(|r| r.config.fix == fix)
}

/// The headline fixes against plain, timed in pairs where a plain step takes at most
/// [`MAX_PAIRED_STEP_S`].
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let Some(plain) = cell(rows, Fix::Plain) else {
        return Vec::new();
    };
    if plain.result.step.median_s > MAX_PAIRED_STEP_S {
        return Vec::new();
    }
    // At the quick sizes one comparison checks the machinery; the rest would only add time to
    // a smoke run that has a minute for everything.
    let quick = plain.config.train.shape == workload(Sizes::Quick).0.into();
    TIMED
        .iter()
        .take(if quick { 1 } else { TIMED.len() })
        .filter_map(|&fix| cell(rows, fix))
        .map(|r| ComparisonSpec::new(r.config.fix.id(), plain.id, r.id))
        .collect()
}

/// A cell's peak above what the process held before the model was built (inference points
/// that did not read it: the pass's peak as read).
fn peak(r: &R<'_>) -> f64 {
    let above = r.peak_above_process();
    if above.is_finite() {
        above
    } else {
        r.peak()
    }
}

/// Weights and optimizer state as measured; for inference, the weights (with the inputs and
/// the process's own bytes where the pass did not read them apart).
fn fixed(r: &R<'_>) -> f64 {
    fn m(r: &R<'_>, k: impl results::MetricKey) -> f64 {
        let v = r.result.metric(k);
        if v.is_finite() {
            v
        } else {
            0.0
        }
    }
    if r.config.fix.training() {
        m(r, Metric::ParamBytes) + m(r, Metric::OptimizerStateBytes)
    } else if r
        .result
        .metric(Gpt2Metric::ConvertedWeightBytes)
        .is_finite()
    {
        m(r, Gpt2Metric::ConvertedWeightBytes)
    } else {
        m(r, Metric::LiveBeforeBytes)
    }
}

/// The gradients held at the end of backward, where the cell read them apart (NaN for
/// inference and for accumulation: see [`FixCell::gradient_bytes`]).
fn gradients(r: &R<'_>) -> f64 {
    let g = r.result.metric(Metric::GradBytes);
    if r.config.fix.training() && r.config.train.micro_batches == 1 {
        g
    } else {
        f64::NAN
    }
}

/// What the forward pass keeps for backward; for inference, the pass's own bytes.
fn activations(r: &R<'_>) -> f64 {
    if r.config.fix.training() {
        r.result.metric(Metric::ActivationBytes)
    } else {
        r.result.metric(Metric::EvalBytes)
    }
}

/// The checks set between cells: each cell whose fix should compute the plain step's
/// gradients (or mixed bf16's), its first step's sample against its reference cell's, value
/// by value within the fix's tolerance. A cell whose reference was not measured, or that
/// recorded no sample (a record made before cells sampled their gradients), has none.
pub(super) fn derived_checks(rows: &[R<'_>]) -> Vec<PointCheck> {
    let sample = |r: &R<'_>| -> Vec<f32> {
        r.result
            .trace(Trace::FirstStepGradientSample)
            .iter()
            .map(|&v| v as f32)
            .collect()
    };
    rows.iter()
        .filter_map(|r| {
            let (reference, what, tolerance) = r.config.fix.reference()?;
            let candidate = sample(r);
            let reference = sample(cell(rows, reference)?);
            (!candidate.is_empty() && !reference.is_empty()).then(|| PointCheck {
                point: r.id.to_string(),
                check: Check::compare(what, &reference, &candidate, tolerance)
                    .with("values", candidate.len()),
            })
        })
        .collect()
}

/// A cell's checks: those it recorded, then those set against another cell.
fn checks_of(r: &R<'_>, derived: &[PointCheck]) -> Vec<Check> {
    r.result
        .checks
        .iter()
        .chain(PointCheck::on(derived, r.id))
        .cloned()
        .collect()
}

/// A cell's verdict: its checks', or not applicable where it has none.
fn verdict(checks: &[Check]) -> Correctness {
    Correctness::of_checks(checks).unwrap_or(Correctness::NotApplicable)
}

/// `r`'s step peak against the plain step's, with its check: an index row, said as `text`.
fn against_plain(text: Text, plain: &R<'_>, r: &R<'_>, derived: &[PointCheck]) -> Headline<Text> {
    let checks = checks_of(r, derived);
    Headline::versus(
        text,
        Side::with_peak(CommonKey::StepPeak, peak(plain)),
        Side::with_peak(CommonKey::StepPeak, peak(r)),
        verdict(&checks),
        check_text(r, &checks),
    )
}

/// The words of a cell's check (the first of `checks`, the cell's).
fn check_text(r: &R<'_>, checks: &[Check]) -> Text {
    let Some(check) = checks.first() else {
        return Text::said(Key::CheckNone);
    };
    if check.what == "loss-falls" {
        let losses = r.result.trace(Trace::LossByStep);
        Text::said(Key::CheckLossFalls)
            .number("first", losses.first().copied().unwrap_or(f64::NAN))
            .number("last", losses.last().copied().unwrap_or(f64::NAN))
            .count("steps", losses.len())
    } else {
        Text::said(Key::CheckCompare)
            .name("what", check.what.clone())
            .number("rel", check.max_rel_diff)
            .number("tolerance", check.tolerance)
    }
}

/// What a cell's check compared, in a few words.
fn check_short(checks: &[Check]) -> Text {
    match checks.first() {
        Some(check) => Text::said(Key::CheckShort).name("what", check.what.clone()),
        None => Text::said(Key::CheckNone),
    }
}

/// The fix in a few words.
fn fix_text(fix: Fix) -> Text {
    Text::said(Key::Fix).name("fix", fix.id())
}

/// The same fixes at the card's out-of-memory point: the smallest batch at sequence
/// [`PROJECTED_SEQ`] whose plain step does not fit [`CARD_BYTES`], each fix's estimated peak
/// there and the largest batch it lets fit.
pub fn projection() -> Option<Projection<Text>> {
    let (shape, _) = workload(Sizes::FullCuda);
    let shape = crate::harness::models::TransformerShape {
        seq: PROJECTED_SEQ,
        ..shape
    };
    let plan = |fix: Fix, batch: usize| {
        CellConfig::of(fix, shape, batch)
            .plan()
            .expect("a training cell has a step")
    };
    // Every "fits" answer plans on the card less the CUDA context and the margin for the
    // estimator's error, in the precision of the step it answers for.
    let usable = |p: &StepPlan| usable_bytes(CARD_BYTES, p.precision);
    let base = plan(Fix::Plain, 2);
    let fits_plain = largest_batch(base, usable(&base), Sharding::DataParallel, 1)?;
    // The batch where plain stops fitting, even so that half of it and two micro-batches are
    // whole.
    let batch = (fits_plain as usize + 1).next_multiple_of(2);
    let cells = Fix::ALL
        .into_iter()
        .filter(|f| f.training())
        .map(|fix| {
            let p = plan(fix, batch);
            let bytes = p.bytes();
            // The largest batch with the fix: the half batch is plain's step at half the batch.
            let base = if fix == Fix::HalfBatch {
                plan(Fix::Plain, 2)
            } else {
                p
            };
            ProjectedCell {
                id: fix.id().into(),
                fix: fix_text(fix),
                predicted_bytes: bytes.step_peak(),
                max_batch: largest_batch(base, usable(&base), Sharding::DataParallel, 1)
                    .map_or(0.0, |b| b as f64),
            }
        })
        .collect();
    Some(Projection {
        card_bytes: CARD_BYTES,
        usable_bytes: usable(&plan(Fix::Plain, batch)),
        seq: PROJECTED_SEQ,
        batch: batch as f64,
        cells,
    })
}

impl Analyse for Gpt2Small {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        // The other preset's block is no fix of this step: it joins the estimator's rows and
        // the predictions, not the table.
        let (blocks, rows): (Vec<R<'_>>, Vec<R<'_>>) = rows
            .into_iter()
            .partition(|r| r.config.fix == Fix::PresetBlock);
        let derived = derived_checks(&rows);
        let correctness = Correctness::with_derived(points, derived.iter().map(|d| &d.check));
        let Some(plain) = cell(&rows, Fix::Plain) else {
            return Analysis::unmeasured(correctness);
        };
        let ModelShape::Transformer(shape) = plain.config.train.shape else {
            return Analysis::unmeasured(correctness);
        };
        let cells: Vec<FixCell<Text>> = rows
            .iter()
            .map(|r| (r, checks_of(r, &derived)))
            .map(|(r, checks)| FixCell {
                id: r.id.to_string(),
                fix: fix_text(r.config.fix),
                training: r.config.fix.training(),
                page: r.config.fix.page().map(str::to_string),
                peak_bytes: peak(r),
                fixed_bytes: fixed(r),
                gradient_bytes: gradients(r),
                activation_bytes: activations(r),
                predicted_bytes: self.step_plan(&r.config).map(|p| p.bytes().step_peak()),
                correctness: verdict(&checks),
                check: check_text(r, &checks),
                check_short: check_short(&checks),
            })
            .collect();
        let workload = Text::said(Key::Workload)
            .count("layers", shape.layers)
            .count("d_model", shape.d_model)
            .count("heads", shape.heads)
            .count("vocab", shape.vocab)
            .count("seq", shape.seq)
            .count("batch", plain.config.train.batch)
            .count("params", shape.num_params());
        let table = FixTable {
            workload: workload.clone(),
            base: plain.id.to_string(),
            cells,
            projection: projection(),
        };

        // The headline: the most fixes stacked that the device ran (a device without bf16
        // has no mixed-precision cell).
        let Some(best) = [
            Fix::AccumulationCheckpointingMixed,
            Fix::AccumulationCheckpointing,
            Fix::Checkpointing,
        ]
        .into_iter()
        .find_map(|fix| cell(&rows, fix)) else {
            return Analysis::unmeasured(correctness);
        };
        let headline = against_plain(
            Text::said(Key::Headline)
                .name("fix", best.config.fix.id())
                .count("batch", plain.config.train.batch),
            plain,
            best,
            &derived,
        );

        // The fixes timed in pairs, each a row of the index beside the headline.
        let secondary_headlines = TIMED
            .iter()
            .filter_map(|&fix| {
                let r = cell(&rows, fix)?;
                let timed = paired.iter().any(|c| c.spec.id == fix.id());
                let h = against_plain(
                    Text::said(Key::Secondary).name("fix", fix.id()),
                    plain,
                    r,
                    &derived,
                )
                .variant(fix.id());
                Some(if timed { h.timed_by(fix.id()) } else { h })
            })
            .collect();

        let base = peak(plain);
        let mut findings = vec![
            workload,
            Text::said(Key::FixedShare)
                .bytes("fixed", fixed(plain) + gradients(plain))
                .bytes("activations", activations(plain))
                .bytes("peak", base),
        ];
        if let Some(acc) = cell(&rows, Fix::Accumulation).filter(|a| peak(a) > base) {
            findings.push(
                Text::said(Key::AccumulationCosts)
                    .bytes("plain", base)
                    .bytes("accumulated", peak(acc))
                    .bytes("gradients", gradients(plain))
                    .bytes("spared", activations(plain) - activations(acc)),
            );
        }
        if let Some(mixed) = cell(&rows, Fix::MixedBf16) {
            findings.push(
                Text::said(Key::MixedActivations)
                    .bytes("mixed", activations(mixed))
                    .bytes("f32", activations(plain)),
            );
        }
        if paired.is_empty() {
            findings.push(
                Text::said(Key::NotTimed)
                    .seconds("step", plain.result.step.median_s)
                    .seconds("limit", MAX_PAIRED_STEP_S),
            );
        }
        findings.extend(
            paired
                .iter()
                .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id)),
        );

        let training: Vec<&R<'_>> = rows.iter().filter(|r| r.config.fix.training()).collect();
        let bar = |name: Text, predicted: bool, f: &dyn Fn(&R<'_>) -> f64| {
            Series::line(
                name,
                predicted,
                training
                    .iter()
                    .enumerate()
                    .map(|(i, r)| ((i + 1) as f64, f(r)))
                    .collect(),
            )
        };
        let charts = vec![Chart {
            id: "peak-by-fix".into(),
            title: Text::said(Key::LabelPeakByFix),
            x_label: Text::said(Key::LabelFix),
            y_label: Text::said(Key::LabelStepPeak),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Bytes,
            x_scale: Scale::Linear,
            categories: training
                .iter()
                .map(|r| r.config.fix.short().to_string())
                .collect(),
            series: vec![
                bar(Text::said(Key::LabelMeasuredPeak), false, &peak),
                bar(Text::said(Key::LabelFixedPart), false, &fixed),
                bar(Text::said(Key::LabelActivationsKept), false, &activations),
                bar(Text::said(Key::LabelEstimatedPeak), true, &|r| {
                    self.step_plan(&r.config)
                        .map_or(f64::NAN, |p| p.bytes().step_peak())
                }),
            ],
        }];

        // The estimator at another preset's block: its step peak predicted and measured.
        let comparisons = blocks
            .iter()
            .filter_map(|b| {
                let ModelShape::Transformer(s) = b.config.train.shape else {
                    return None;
                };
                let plan = self.step_plan(&b.config)?;
                // What backward's peak held above the step's start, in the record's own parts:
                // the words set it beside the rule's larger-of-two.
                let mut note = Text::said(Key::PresetBlockNote);
                let live_before = b.result.metric(Metric::LiveBeforeStepBytes);
                if let Some(backward) = b.result.phase(Phase::Backward) {
                    let above = backward.peak_bytes as f64 - live_before;
                    let activations = b.result.metric(Metric::ActivationBytes);
                    let grads = b.result.metric(Metric::GradBytes);
                    if [above, activations, grads].iter().all(|v| v.is_finite()) {
                        note = note
                            .bytes("above", above)
                            .bytes("activations", activations)
                            .bytes("grads", grads)
                            .bytes("rest", above - activations - grads);
                    }
                }
                Some(Comparison {
                    quantity: Text::said(Key::PresetBlock)
                        .count("d_model", s.d_model)
                        .count("heads", s.heads)
                        .count("seq", s.seq)
                        .count("batch", b.config.train.batch)
                        .count("vocab", s.vocab),
                    predicted_bytes: plan.bytes().step_peak(),
                    measured_bytes: peak(b),
                    measured_upper_bytes: None,
                    note,
                })
            })
            .collect();

        Analysis {
            fix_table: Some(table),
            headline,
            secondary_headlines,
            findings,
            comparisons,
            fits: vec![],
            charts,
            published: vec![],
        }
    }
}
