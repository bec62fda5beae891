//! The GPT-2-small table's conclusions: each cell's peak on the plain step's base, split into
//! parts that add up to it, the estimator beside it, the checks that judge each fix, and the
//! same fixes projected onto a 24 GB card at sequence 1024, each rule checked in the measured
//! set nearest that regime.

use results::cards::CONSUMER;
use results::keys::gpt2_small::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, CellSet, Chart, Check, Comparison, ComparisonSpec, Contradiction,
    Correctness, Fix, FixCell, FixCheck, FixTable, Headline, MeasuredPoint, Metric,
    PairedComparison, PeakParts, Phase, PointCheck, ProjectedCell, Projection, RuleCheck, Scale,
    Series, Side, TechniqueId, Text, Trace,
};

use super::{workload, Cell, CellConfig, Gpt2Metric, Gpt2Small, Workload};
use crate::harness::models::{ModelShape, TransformerShape};
use crate::harness::profile::Sizes;
use crate::technique::{Analyse, Row, Technique};
use estimator::capacity::{largest_batch, usable_bytes, Sharding};
use estimator::estimate::{Precision, StepPlan};

type R<'a> = Row<'a, CellConfig>;

/// The sequence of the projection: GPT-2's context.
pub const PROJECTED_SEQ: usize = 1024;
/// The longest step the three headline fixes are timed in pairs at: a comparison runs at
/// least four builds of three arms each, which at a step of several seconds on a CPU is
/// minutes per fix, more than the run's budget holds.
const MAX_PAIRED_STEP_S: f64 = 1.0;
/// The fixes timed against plain, where a step is short enough.
const TIMED: [Fix; 3] = [Fix::Checkpointing, Fix::Accumulation, Fix::MixedBf16];

/// The cells of one workload.
fn of<'r, 'a>(rows: &'r [R<'a>], workload: Workload) -> Vec<&'r R<'a>> {
    rows.iter()
        .filter(|r| r.config.workload == workload && r.config.fix != Fix::PresetBlock)
        .collect()
}

fn cell<'r, 'a>(rows: &[&'r R<'a>], fix: Fix) -> Option<&'r R<'a>> {
    rows.iter().find(|r| r.config.fix == fix).copied()
}

/// The headline fixes against plain, on the table's model, timed in pairs where a plain step
/// takes at most [`MAX_PAIRED_STEP_S`].
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let table = of(rows, Workload::Table);
    let Some(plain) = cell(&table, Fix::Plain) else {
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
        .filter_map(|&fix| cell(&table, fix))
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

/// A metric, 0 where the point did not read it.
fn metric_or_zero(r: &R<'_>, k: impl results::MetricKey) -> f64 {
    let v = r.result.metric(k);
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// Weights and optimizer state as measured; for inference, the weights (with the inputs and
/// the process's own bytes where the pass did not read them apart).
fn fixed(r: &R<'_>) -> f64 {
    if r.config.fix.training() {
        metric_or_zero(r, Metric::ParamBytes) + metric_or_zero(r, Metric::OptimizerStateBytes)
    } else if r
        .result
        .metric(Gpt2Metric::ConvertedWeightBytes)
        .is_finite()
    {
        metric_or_zero(r, Gpt2Metric::ConvertedWeightBytes)
    } else {
        metric_or_zero(r, Metric::LiveBeforeBytes)
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

/// The peak in parts that add up to it, read from the phases: what was live before the step
/// (weights and state, the rest), what the phases before the peak's left alive, what the
/// peak's phase added.
fn parts(r: &R<'_>) -> PeakParts {
    let phases = &r.result.phases;
    let Some(top) = phases.iter().max_by_key(|p| p.peak_bytes) else {
        return PeakParts {
            weights_and_state_bytes: fixed(r),
            other_before_bytes: 0.0,
            carried_bytes: 0.0,
            added_bytes: peak(r) - fixed(r),
        };
    };
    // The process's own bytes, which `peak` leaves out.
    let process = top.peak_bytes as f64 - peak(r);
    let before = phases[0].live_before_bytes as f64 - process;
    PeakParts {
        weights_and_state_bytes: fixed(r),
        other_before_bytes: before - fixed(r),
        carried_bytes: (top.live_before_bytes - phases[0].live_before_bytes) as f64,
        added_bytes: (top.peak_bytes - top.live_before_bytes) as f64,
    }
}

/// The cell of one measured point.
fn fix_cell(r: &R<'_>) -> FixCell {
    FixCell {
        fix: r.config.fix,
        point: r.id.to_string(),
        peak_bytes: peak(r),
        parts: parts(r),
        activation_bytes: activations(r),
        gradient_bytes: gradients(r),
        predicted_bytes: r
            .config
            .plan()
            .map(|p| p.bytes_on(r.allocator()).step_peak()),
    }
}

/// The set of one workload's cells, where its plain step was measured.
fn cell_set(rows: &[&R<'_>]) -> Option<CellSet<Text>> {
    let plain = cell(rows, Fix::Plain)?;
    let ModelShape::Transformer(shape) = plain.config.train.shape else {
        return None;
    };
    named_cell_set(
        rows,
        workload_text(shape, plain.config.train.batch, plain.config.workload),
    )
}

/// The set of `rows`' cells, its model said as `workload`, where its plain step (a decoder's)
/// was measured: the table of every fix, for any decoder.
pub(crate) fn named_cell_set(rows: &[&R<'_>], workload: Text) -> Option<CellSet<Text>> {
    let plain = cell(rows, Fix::Plain)?;
    Some(CellSet {
        workload,
        seq: plain.config.train.shape.seq()?,
        batch: plain.config.train.batch,
        cells: rows.iter().map(|r| fix_cell(r)).collect(),
    })
}

/// The model of a set, in words.
fn workload_text(shape: TransformerShape, batch: usize, workload: Workload) -> Text {
    Text::said(match workload {
        Workload::Table | Workload::Long => Key::Workload,
        Workload::Regime => Key::RegimeWorkload,
    })
    .count("layers", shape.layers)
    .count("d_model", shape.d_model)
    .count("heads", shape.heads)
    .count("vocab", shape.vocab)
    .count("seq", shape.seq)
    .count("batch", batch)
    .count("params", shape.num_params())
}

/// The checks set between cells of one workload: each cell whose fix should compute the
/// plain step's gradients (or mixed bf16's), its first step's sample against its reference
/// cell's, value by value within the fix's tolerance. A cell whose reference was not
/// measured, or that recorded no sample, has none.
pub(super) fn derived_checks(rows: &[R<'_>]) -> Vec<PointCheck> {
    [Workload::Table, Workload::Regime]
        .into_iter()
        .flat_map(|w| {
            let set = of(rows, w);
            set.iter()
                .filter_map(|r| gradient_check(r, &set))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The gradient checks between the cells of one set (every cell's against its reference's).
pub(crate) fn set_gradient_checks(set: &[&R<'_>]) -> Vec<PointCheck> {
    set.iter().filter_map(|r| gradient_check(r, set)).collect()
}

/// A point's sample of its first step's gradients, as the checks compare it (empty where the
/// point kept none).
pub(crate) fn gradient_sample(result: &results::PointResult) -> Vec<f32> {
    let trace = result.trace(Trace::FirstStepGradientSample);
    trace.iter().map(|&v| v as f32).collect()
}

/// `r`'s first step's gradient sample against its reference cell's in `set`.
fn gradient_check(r: &R<'_>, set: &[&R<'_>]) -> Option<PointCheck> {
    let (reference, what, tolerance) = r.config.fix.reference()?;
    let candidate = gradient_sample(r.result);
    let reference = gradient_sample(cell(set, reference)?.result);
    (!candidate.is_empty() && !reference.is_empty()).then(|| PointCheck {
        point: r.id.to_string(),
        check: Check::compare(what, &reference, &candidate, tolerance)
            .with("values", candidate.len()),
    })
}

/// Every check of every cell, as a check of its fix (the guide's one source of its verdict).
fn fix_checks(rows: &[R<'_>], derived: &[PointCheck]) -> Vec<FixCheck> {
    fix_checks_on(rows, derived, TechniqueId::Gpt2Small)
}

/// [`fix_checks`] of cells measured by `technique`.
pub(crate) fn fix_checks_on(
    rows: &[R<'_>],
    derived: &[PointCheck],
    technique: TechniqueId,
) -> Vec<FixCheck> {
    rows.iter()
        .filter(|r| r.config.fix != Fix::PresetBlock)
        .flat_map(|r| {
            r.checks_with(derived)
                .into_iter()
                .map(move |check| FixCheck::new(r.config.fix, technique, r.id, check))
        })
        .collect()
}

/// `r`'s step peak against the plain step's: an index row of the fix, said as `text`.
fn against_plain(text: Text, plain: &R<'_>, r: &R<'_>, derived: &[PointCheck]) -> Headline<Text> {
    let checks = r.checks_with(derived);
    Headline::versus(
        text,
        Side::with_peak(CommonKey::StepPeak, peak(plain)),
        Side::with_peak(CommonKey::StepPeak, peak(r)),
        Correctness::of_checks(&checks).unwrap_or(Correctness::NotApplicable),
        Text::said(CommonKey::PointCheck).name("point", r.id),
    )
    .of_fix(r.config.fix)
}

/// The index rows: the most fixes stacked that the device ran (a device without bf16 has no
/// mixed-precision cell), then each fix timed in pairs.
fn headlines(
    table: &[&R<'_>],
    derived: &[PointCheck],
    paired: &[PairedComparison],
) -> Option<(Headline<Text>, Vec<Headline<Text>>)> {
    let plain = cell(table, Fix::Plain)?;
    let best = [
        Fix::AccumulationCheckpointingMixed,
        Fix::AccumulationCheckpointing,
        Fix::Checkpointing,
    ]
    .into_iter()
    .find_map(|fix| cell(table, fix))?;
    let headline = against_plain(
        Text::said(Key::Headline)
            .name("fix", best.config.fix.id())
            .count("batch", plain.config.train.batch),
        plain,
        best,
        derived,
    );
    let secondary = TIMED
        .iter()
        .filter_map(|&fix| {
            let r = cell(table, fix)?;
            let h = against_plain(
                Text::said(Key::Secondary).name("fix", fix.id()),
                plain,
                r,
                derived,
            )
            .variant(fix.id());
            let timed = paired.iter().any(|c| c.spec.id == fix.id());
            Some(if timed { h.timed_by(fix.id()) } else { h })
        })
        .collect();
    Some((headline, secondary))
}

/// What the table shows, in sentences: the base's parts, where accumulation costs, what mixed
/// bf16 kept, the regime's share, and why nothing was timed in pairs.
fn findings(table: &[&R<'_>], regime: &[&R<'_>], paired: &[PairedComparison]) -> Vec<Text> {
    let Some(plain) = cell(table, Fix::Plain) else {
        return Vec::new();
    };
    let base = peak(plain);
    let mut findings = vec![Text::said(Key::FixedShare)
        .bytes("fixed", fixed(plain))
        .bytes("gradients", gradients(plain))
        .bytes("activations", activations(plain))
        .bytes("peak", base)];
    if let Some(acc) = cell(table, Fix::Accumulation).filter(|a| peak(a) > base) {
        findings.push(
            Text::said(Key::AccumulationCosts)
                .bytes("plain", base)
                .bytes("accumulated", peak(acc))
                .bytes("gradients", gradients(plain))
                .bytes("spared", activations(plain) - activations(acc)),
        );
    }
    for set in [table, regime] {
        findings.extend(mixed_activations(set));
    }
    if let Some(p) = cell(regime, Fix::Plain) {
        findings.push(
            Text::said(Key::RegimeShare)
                .bytes("activations", activations(p))
                .bytes("peak", peak(p))
                .number("required", RuleCheck::REGIME_SHARE_PCT),
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
    findings
}

/// What mixed bf16 kept for backward against f32, in one set.
fn mixed_activations(set: &[&R<'_>]) -> Option<Text> {
    let (plain, mixed) = (cell(set, Fix::Plain)?, cell(set, Fix::MixedBf16)?);
    Some(
        Text::said(Key::MixedActivations)
            .bytes("mixed", activations(mixed))
            .bytes("f32", activations(plain))
            .count("seq", plain.config.train.shape.transformer()?.seq)
            .number(
                "matmul_via_f32",
                u8::from(plain.allocator().bf16_matmul_via_f32()),
            ),
    )
}

/// The chart of the table's training cells: peak, its parts and the estimate, per fix.
fn peak_chart(table: &[&R<'_>]) -> Chart<Text> {
    let training: Vec<&R<'_>> = table
        .iter()
        .copied()
        .filter(|r| r.config.fix.training())
        .collect();
    let bar = |name: Key, predicted: bool, f: &dyn Fn(&R<'_>) -> f64| {
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
    Chart::new(
        "peak-by-fix",
        Key::LabelPeakByFix,
        Key::LabelFix,
        Key::LabelStepPeak,
    )
    .y(AxisUnit::Bytes)
    .x(AxisUnit::Given, Scale::Linear)
    .categories(
        training
            .iter()
            .map(|r| r.config.fix.short().to_string())
            .collect(),
    )
    .series([
        bar(Key::LabelMeasuredPeak, false, &peak),
        bar(Key::LabelFixedPart, false, &fixed),
        bar(Key::LabelActivationsKept, false, &activations),
        bar(Key::LabelEstimatedPeak, true, &|r| {
            r.config.plan().map_or(f64::NAN, |p| p.bytes().step_peak())
        }),
    ])
}

/// The estimator at another preset's block: its step peak predicted and measured, with what
/// backward's peak held in the record's own parts.
fn preset_block(b: &R<'_>) -> Option<Comparison<Text>> {
    let ModelShape::Transformer(s) = b.config.train.shape else {
        return None;
    };
    let plan = Gpt2Small.step_plan(&b.config)?;
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
    let quantity = Text::said(Key::PresetBlock)
        .count("d_model", s.d_model)
        .count("heads", s.heads)
        .count("seq", s.seq)
        .count("batch", b.config.train.batch)
        .count("vocab", s.vocab);
    Some(Comparison::new(
        quantity,
        plan.bytes().step_peak(),
        peak(b),
        note,
    ))
}

/// The preset the order is projected on: GPT-2 small, as What fits and `workbench estimate`
/// name it.
const PROJECTED_PRESET: &str = "gpt2-124m";

/// The fix's step at `batch` sequences of GPT-2 small (the `gpt2-124m` preset What fits and
/// `workbench estimate` use: its head tied, as GPT-2's) at [`PROJECTED_SEQ`].
fn projected_plan(fix: Fix, batch: usize) -> StepPlan {
    let ModelShape::Transformer(shape) = estimator::capacity::preset(PROJECTED_PRESET)
        .expect("the preset exists")
        .shape
    else {
        unreachable!("gpt2-124m is a transformer")
    };
    let shape = TransformerShape {
        seq: PROJECTED_SEQ,
        ..shape
    };
    CellConfig::of(fix, shape, batch)
        .plan()
        .expect("a training cell has a step")
}

/// What a step may plan on at the consumer card, in the precision of the step it answers for.
fn usable(plan: &StepPlan) -> f64 {
    usable_bytes(CONSUMER.bytes(), plan.precision)
}

/// The largest batch the fix trains at on the consumer card (the half batch is plain's step
/// at half the batch).
fn max_batch(fix: Fix) -> f64 {
    let base = projected_plan(
        if fix == Fix::HalfBatch {
            Fix::Plain
        } else {
            fix
        },
        2,
    );
    largest_batch(base, usable(&base), Sharding::DataParallel, 1).map_or(0.0, |b| b as f64)
}

/// The same fixes at the consumer card's out-of-memory point: the smallest even batch at
/// sequence [`PROJECTED_SEQ`] whose plain step does not fit, each fix's estimated peak there
/// and the largest batch it lets fit; each rule checked in `verify`, the measured set nearest
/// that regime, where there is one.
pub fn projection(
    verify: Option<&Verifier<'_>>,
    outside: Option<&Verifier<'_>>,
) -> Option<Projection> {
    let base = projected_plan(Fix::Plain, 2);
    let fits_plain = largest_batch(base, usable(&base), Sharding::DataParallel, 1)?;
    // Even, so that half of it and two micro-batches are whole.
    let batch = (fits_plain as usize + 1).next_multiple_of(2);
    let plain = projected_plan(Fix::Plain, batch).bytes();
    let cells = Fix::ALL
        .into_iter()
        .filter(|f| f.training())
        .map(|fix| ProjectedCell {
            fix,
            way: estimator::capacity::way_of(&projected_plan(fix, 2)).map(Into::into),
            predicted_bytes: projected_plan(fix, batch).bytes().step_peak(),
            max_batch: max_batch(fix),
            rule: verify
                .filter(|_| fix != Fix::Plain)
                .and_then(|v| v.check(fix)),
            contradicted_outside: outside
                .filter(|_| fix != Fix::Plain)
                .and_then(|v| v.check(fix))
                .filter(|r| r.contradiction.is_some()),
        })
        .collect();
    Some(Projection {
        preset: PROJECTED_PRESET.into(),
        card_bytes: CONSUMER.bytes(),
        usable_bytes: usable(&projected_plan(Fix::Plain, batch)),
        seq: PROJECTED_SEQ,
        batch: batch as f64,
        activation_share_pct: plain.activations_at_peak() / plain.step_peak() * 100.0,
        cells,
    })
}

/// The measured set a projection's rules are checked in, with the device it ran on.
pub struct Verifier<'a> {
    set: &'a CellSet<Text>,
    regime_set: bool,
    device: results::DeviceKind,
    matmul_via_f32: bool,
}

impl<'a> Verifier<'a> {
    /// A set outside the regime, whose checks are kept only where they contradict a rule.
    fn outside(set: &'a CellSet<Text>, plain: &R<'_>) -> Self {
        Self {
            set,
            regime_set: false,
            device: plain.device,
            matmul_via_f32: plain.allocator().bf16_matmul_via_f32(),
        }
    }

    /// The rule of `fix` checked in the set: the change it predicts against the change
    /// measured, and whether the measurement contradicts it.
    fn check(&self, fix: Fix) -> Option<RuleCheck> {
        let plain = self.set.cell(Fix::Plain)?;
        let c = self.set.cell(fix)?;
        let predicted = |c: &FixCell| c.predicted_bytes;
        let predicted_change_pct = (predicted(c)? - predicted(plain)?) / predicted(plain)? * 100.0;
        let measured_change_pct = self.set.change_pct(c)?;
        let contradiction = RuleCheck::contradicts(predicted_change_pct, measured_change_pct)
            .then_some(
                if self.matmul_via_f32 && fix.precision() != Precision::F32 {
                    Contradiction::Bf16MatmulViaF32
                } else {
                    Contradiction::Unexplained
                },
            );
        Some(RuleCheck {
            device: self.device,
            regime_set: self.regime_set,
            activation_share_pct: self.set.activation_share_pct()?,
            seq: self.set.seq,
            batch: self.set.batch,
            predicted_change_pct,
            measured_change_pct,
            error_pct: c.estimate_error_pct()?,
            contradiction,
        })
    }
}

/// The set that checks the order's rules: the regime's where measured, else the table's if
/// its activations reach [`RuleCheck::REGIME_SHARE_PCT`] of its peak.
fn verifier<'a>(
    table: &'a CellSet<Text>,
    regime: Option<&'a CellSet<Text>>,
    plain: &R<'_>,
) -> Option<Verifier<'a>> {
    let (set, regime_set) = match regime {
        Some(r) => (r, true),
        None => (table, false),
    };
    (regime_set || set.activation_share_pct()? >= RuleCheck::REGIME_SHARE_PCT).then(|| Verifier {
        set,
        regime_set,
        device: plain.device,
        matmul_via_f32: plain.allocator().bf16_matmul_via_f32(),
    })
}

/// The table, the regime's set and the projection checked against one of them.
fn fix_table(table: &[&R<'_>], regime: &[&R<'_>]) -> Option<FixTable<Text>> {
    let plain = cell(table, Fix::Plain)?;
    let table_set = cell_set(table)?;
    let regime_set = cell_set(regime);
    // Where the regime was measured apart, the table is a measurement outside it.
    let outside = regime_set
        .as_ref()
        .map(|_| Verifier::outside(&table_set, plain));
    let projection = projection(
        verifier(&table_set, regime_set.as_ref(), plain).as_ref(),
        outside.as_ref(),
    );
    Some(FixTable {
        table: table_set,
        regime: regime_set,
        projection,
    })
}

impl Analyse for Gpt2Small {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let derived = derived_checks(&rows);
        let correctness = Correctness::with_derived(points, derived.iter().map(|d| &d.check));
        let (table, regime) = (of(&rows, Workload::Table), of(&rows, Workload::Regime));
        let (Some(fixes), Some((headline, secondary))) = (
            fix_table(&table, &regime),
            headlines(&table, &derived, paired),
        ) else {
            return Analysis::unmeasured(correctness);
        };
        let blocks = rows.iter().filter(|r| r.config.fix == Fix::PresetBlock);
        Analysis::new(headline)
            .secondary(secondary)
            .findings(findings(&table, &regime, paired))
            .comparisons(blocks.filter_map(preset_block))
            .charts([peak_chart(&table)])
            .fix_table(fixes)
            .fix_checks(fix_checks(&rows, &derived))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A measured set in the order's regime: plain, mixed bf16 and checkpointing, with their
    /// measured peaks, the estimator's at `predicted`.
    fn regime(mixed_peak: f64, checkpointing_peak: f64) -> CellSet<Text> {
        let cell = |fix: Fix, peak: f64, predicted: f64| FixCell {
            fix,
            point: fix.id().into(),
            peak_bytes: peak,
            parts: results::PeakParts {
                weights_and_state_bytes: 100.0,
                other_before_bytes: 0.0,
                carried_bytes: peak - 100.0,
                added_bytes: 0.0,
            },
            activation_bytes: peak - 200.0,
            gradient_bytes: f64::NAN,
            predicted_bytes: Some(predicted),
        };
        CellSet {
            workload: Key::RegimeWorkload.into(),
            seq: 1024,
            batch: 2,
            cells: vec![
                cell(Fix::Plain, 1000.0, 1000.0),
                cell(Fix::MixedBf16, mixed_peak, 550.0),
                cell(Fix::Checkpointing, checkpointing_peak, 700.0),
            ],
        }
    }

    fn verify(set: &CellSet<Text>, matmul_via_f32: bool) -> Verifier<'_> {
        Verifier {
            set,
            regime_set: true,
            device: results::DeviceKind::Cpu,
            matmul_via_f32,
        }
    }

    #[test]
    fn a_saving_the_regime_does_not_show_contradicts_the_rule_and_says_why() {
        // Mixed bf16 predicted -45%, measured +0.5% on Flex; checkpointing -30%, -25%.
        let set = regime(1005.0, 750.0);
        let flex = verify(&set, true);
        let mixed = flex.check(Fix::MixedBf16).expect("both measured");
        assert_eq!(mixed.contradiction, Some(Contradiction::Bf16MatmulViaF32));
        assert!((mixed.predicted_change_pct + 45.0).abs() < 1e-9);
        assert!((mixed.measured_change_pct - 0.5).abs() < 1e-9);
        assert_eq!(mixed.activation_share_pct, 80.0);
        let checkpointing = flex.check(Fix::Checkpointing).expect("both measured");
        assert_eq!(checkpointing.contradiction, None);
        // A backend whose kernels work in 16 bits, missing the same saving: unexplained.
        let device = verify(&set, false);
        let mixed = device.check(Fix::MixedBf16).expect("both measured");
        assert_eq!(mixed.contradiction, Some(Contradiction::Unexplained));
        // Where the saving is measured, nothing is contradicted.
        let holds = regime(560.0, 750.0);
        assert_eq!(
            verify(&holds, true)
                .check(Fix::MixedBf16)
                .unwrap()
                .contradiction,
            None
        );
        assert!(verify(&holds, true).check(Fix::Momentum).is_none());
    }

    #[test]
    fn the_projection_carries_each_rule_checked_in_the_measured_set() {
        let set = regime(1005.0, 750.0);
        let p = projection(Some(&verify(&set, true)), None).expect("plain fits at batch 1");
        let mixed = p.cell(Fix::MixedBf16).unwrap();
        assert_eq!(
            mixed.rule.and_then(|r| r.contradiction),
            Some(Contradiction::Bf16MatmulViaF32)
        );
        assert!(
            p.cell(Fix::HalfBatch).unwrap().rule.is_none(),
            "not measured in this set"
        );
        assert!(p.activation_share_pct > RuleCheck::REGIME_SHARE_PCT);
    }

    #[test]
    fn a_rule_contradicted_outside_the_regime_is_kept_beside_the_regime_s_check() {
        // In the regime mixed bf16 saves what its rule says; outside it (the table's shorter
        // sequence) it saves nothing: the projection keeps that contradiction.
        let (regime_set, table_set) = (regime(560.0, 750.0), regime(1005.0, 750.0));
        let outside = Verifier {
            regime_set: false,
            ..verify(&table_set, true)
        };
        let p = projection(Some(&verify(&regime_set, true)), Some(&outside)).unwrap();
        let mixed = p.cell(Fix::MixedBf16).unwrap();
        assert_eq!(mixed.rule.and_then(|r| r.contradiction), None);
        assert!(
            mixed.contradiction().is_none(),
            "only the regime's check labels"
        );
        let elsewhere = mixed
            .contradicted_outside
            .as_ref()
            .expect("the table contradicts it");
        assert!(!elsewhere.regime_set);
        assert_eq!(
            elsewhere.contradiction,
            Some(Contradiction::Bf16MatmulViaF32)
        );
        let checkpointing = p.cell(Fix::Checkpointing).unwrap();
        assert!(
            checkpointing.contradicted_outside.is_none(),
            "kept only where contradicted"
        );
    }
}
