//! What the forms measured: the reader's answer (LoRA at the longest sequence), how each
//! form's peak grows with the sequence, each form at one sequence, full training and GPT-2
//! small, what the forward pass keeps, the proof against the written-out step, the pairs'
//! times, charts and the published figure.

use results::keys::efficient_attention::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Check, ComparisonSpec, Correctness, Fix, FixCheck, Headline,
    MeasuredPoint, Metric, PairedComparison, PointCheck, PublishedFigure, Scale, Series, Side,
    TechniqueId, Text, Trace,
};

use super::{EfficientAttention, Form, FormConfig, Workload};
use crate::technique::{Analyse, Row};
use crate::techniques::gpt2_small::SAME_GRADIENTS;

type R<'a> = Row<'a, FormConfig>;

/// Losses of the same step computed in another order: each within a hundred-thousandth of the
/// written-out step's (f32 sums over 32,000 logits and 2,048 tokens reordered move a loss of
/// about 10 by 1e-6).
const SAME_LOSSES: f64 = 1e-5;

/// The forms timed in pairs against the written-out step, each by the comparison of its id.
const TIMED: [Form; 2] = [Form::Both, Form::Efficient];

/// The point of `form` on the same step as `like` (same model, training and sequence).
fn sibling<'r, 'a>(rows: &'r [R<'a>], like: &FormConfig, form: Form) -> Option<&'r R<'a>> {
    rows.iter()
        .find(|r| r.config.form == form && r.config.same_step(like))
}

/// The reader's LoRA points of `form`, shortest sequence first.
fn lora<'r, 'a>(rows: &'r [R<'a>], form: Form) -> Vec<&'r R<'a>> {
    let mut found: Vec<&R<'_>> = rows
        .iter()
        .filter(|r| {
            r.config.workload == Workload::Reader
                && r.config.form == form
                && r.config.training() != "full"
        })
        .collect();
    found.sort_by_key(|r| r.config.seq());
    found
}

/// The written-out reader's LoRA point at the shortest sequence: the pairs' step.
fn timed_step<'r, 'a>(rows: &'r [R<'a>]) -> Option<&'r R<'a>> {
    lora(rows, Form::WrittenOut).into_iter().next()
}

/// The pairs: each chunked form against the written-out step at the shortest LoRA sequence.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let Some(written) = timed_step(rows) else {
        return Vec::new();
    };
    TIMED
        .into_iter()
        .filter_map(|form| sibling(rows, &written.config, form))
        .map(|r| ComparisonSpec::new(r.config.form.id(), written.id, r.id))
        .collect()
}

/// Each form's first-step gradients and its losses against the written-out step's.
pub(super) fn derived_checks(rows: &[R<'_>]) -> Vec<PointCheck> {
    rows.iter()
        .filter(|r| r.config.form != Form::WrittenOut)
        .filter_map(|r| Some((r, sibling(rows, &r.config, Form::WrittenOut)?)))
        .flat_map(|(r, written)| {
            let trace = |row: &R<'_>, t: Trace| -> Vec<f32> {
                row.result.trace(t).iter().map(|&v| v as f32).collect()
            };
            let check = |what: &'static str, t: Trace, tolerance: f64| {
                let (mut reference, mut candidate) = (trace(written, t), trace(r, t));
                // The same seeded steps, as many as both ran: on wgpu and CUDA the warm-up is
                // timed (at least a second), so two points run different numbers of steps.
                // An empty candidate still fails against a reference that has values.
                let steps = reference.len().min(candidate.len().max(1));
                reference.truncate(steps);
                candidate.truncate(steps);
                (!reference.is_empty()).then(|| PointCheck {
                    point: r.id.to_string(),
                    check: Check::compare(what, &reference, &candidate, tolerance)
                        .with("values", candidate.len())
                        .with("seq", r.config.seq()),
                })
            };
            [
                check(
                    "gradients-as-written-out",
                    Trace::FirstStepGradientSample,
                    SAME_GRADIENTS,
                ),
                check("losses-as-written-out", Trace::LossByStep, SAME_LOSSES),
            ]
            .into_iter()
            .flatten()
        })
        .collect()
}

/// The ranked fix a form's checks judge: burn-memory-efficient's attention, the pair of ops
/// (the chunked loss alone is part of it), Burn's checkpointing.
fn fix_of(form: Form) -> Option<Fix> {
    match form {
        Form::Efficient => Some(Fix::EfficientAttention),
        Form::ChunkedLoss | Form::Both | Form::BothCheckpointing => {
            Some(Fix::EfficientAttentionLoss)
        }
        Form::Checkpointing => Some(Fix::Checkpointing),
        Form::WrittenOut | Form::Fused => None,
    }
}

/// Every check of a form's point, as a check of the fix the form is (the guide's one source of
/// its verdict).
fn fix_checks(rows: &[R<'_>], derived: &[PointCheck]) -> Vec<FixCheck> {
    rows.iter()
        .filter_map(|r| Some((r, fix_of(r.config.form)?)))
        .flat_map(|(r, fix)| {
            r.checks_with(derived)
                .into_iter()
                .map(move |c| FixCheck::new(fix, TechniqueId::EfficientAttention, r.id, c))
        })
        .collect()
}

/// Bytes the forward pass left for backward (the autodiff graph's), above what was live
/// before the step.
fn kept(r: &R<'_>) -> f64 {
    r.result.metric(Metric::GraphBytes)
}

/// What is live through the whole step: weights, optimizer state, inputs.
fn fixed(r: &R<'_>) -> f64 {
    r.result.metric(Metric::LiveBeforeStepBytes) - r.result.metric(Metric::ProcessBaselineBytes)
}

/// `form`'s step peak against the written-out step's, said as `text`, its fix's verdict.
fn against_written(
    text: Text,
    written: &R<'_>,
    r: &R<'_>,
    derived: &[PointCheck],
) -> Headline<Text> {
    let checks = r.checks_with(derived);
    let headline = Headline::versus(
        text,
        Side::step(written.result),
        Side::step(r.result),
        Correctness::of_checks(&checks).unwrap_or(Correctness::NotApplicable),
        Text::said(CommonKey::PointCheck).name("point", r.id),
    );
    match fix_of(r.config.form) {
        Some(fix) => headline.of_fix(fix),
        None => headline,
    }
}

/// The index rows: both ops at the reader's longest LoRA sequence (timed at the shortest where
/// `timed`), then the attention alone where measured, each against the written-out step.
fn headlines(
    rows: &[R<'_>],
    derived: &[PointCheck],
    timed: bool,
) -> Option<(Headline<Text>, Vec<Headline<Text>>)> {
    let written = *lora(rows, Form::WrittenOut).last()?;
    let both = sibling(rows, &written.config, Form::Both)?;
    // 0 where nothing was timed in pairs (a device whose times are not compared).
    let timed_seq = timed_step(rows)
        .filter(|_| timed)
        .map_or(0, |r| r.config.seq());
    let said = |key: Key, r: &R<'_>| {
        Text::said(key)
            .count("seq", r.config.seq())
            .count("timed_seq", timed_seq)
            .name("training", r.config.training())
    };
    let main = against_written(said(Key::Headline, both), written, both, derived)
        .timed_by(Form::Both.id());
    let efficient = lora(rows, Form::Efficient)
        .into_iter()
        .last()
        .and_then(|e| {
            let w = sibling(rows, &e.config, Form::WrittenOut)?;
            Some(
                against_written(said(Key::HeadlineAttention, e), w, e, derived)
                    .variant("attention alone")
                    .timed_by(Form::Efficient.id()),
            )
        });
    Some((main, efficient.into_iter().collect()))
}

/// The reader's answer: LoRA at the longest sequence, written out and with both ops.
fn answer(rows: &[R<'_>]) -> Option<Text> {
    let written = *lora(rows, Form::WrittenOut).last()?;
    let both = sibling(rows, &written.config, Form::Both)?;
    Some(
        Text::said(Key::Answer)
            .count("seq", written.config.seq())
            .name("training", written.config.training())
            .bytes("written", written.peak())
            .bytes("both", both.peak())
            .bytes("fixed", fixed(both))
            .bytes("kept_written", kept(written))
            .bytes("kept_both", kept(both)),
    )
}

/// How the written-out step's peak and both ops' grow over the LoRA sequences.
fn by_sequence(rows: &[R<'_>]) -> Option<Text> {
    let (written, both) = (lora(rows, Form::WrittenOut), lora(rows, Form::Both));
    let (w0, w1) = (written.first()?, written.last()?);
    let (b0, b1) = (both.first()?, both.last()?);
    Some(
        Text::said(Key::BySequence)
            .count("from", w0.config.seq())
            .count("to", w1.config.seq())
            .bytes("written_from", w0.peak() - fixed(w0))
            .bytes("written_to", w1.peak() - fixed(w1))
            .bytes("both_from", b0.peak() - fixed(b0))
            .bytes("both_to", b1.peak() - fixed(b1)),
    )
}

/// The LoRA points of every form at the sequence where Burn's fused call was measured (every
/// form was), in [`Form::ALL`]'s order.
fn every_form<'r, 'a>(rows: &'r [R<'a>]) -> Option<Vec<&'r R<'a>>> {
    let seq = lora(rows, Form::Fused).first()?.config.seq();
    Form::ALL
        .iter()
        .map(|&f| lora(rows, f).into_iter().find(|r| r.config.seq() == seq))
        .collect()
}

/// Every form at the one sequence where all were measured.
fn forms(rows: &[R<'_>]) -> Option<Text> {
    let all = every_form(rows)?;
    let items = all
        .iter()
        .map(|r| {
            Text::said(Key::FormPeak)
                .name("form", r.config.form.id())
                .bytes("peak", r.peak())
                .bytes("kept", kept(r))
        })
        .collect();
    Some(
        Text::said(Key::Forms)
            .count("seq", all[0].config.seq())
            .list("forms", items)
            .bytes("written", all[0].peak())
            .bytes("fused", all[1].peak()),
    )
}

/// Written out against both ops on another step: the reader's full training, or GPT-2 small.
fn other_step(rows: &[R<'_>], workload: Workload, training: &str, key: Key) -> Option<Text> {
    let written = rows.iter().find(|r| {
        r.config.workload == workload
            && r.config.form == Form::WrittenOut
            && r.config.training() == training
    })?;
    let both = sibling(rows, &written.config, Form::Both)?;
    let shape = written.config.train.shape;
    Some(
        Text::said(key)
            .count("seq", written.config.seq())
            .count("params", shape.num_params())
            .bytes("written", written.peak())
            .bytes("both", both.peak())
            .bytes("fixed", fixed(both))
            .bytes("kept_written", kept(written))
            .bytes("kept_both", kept(both)),
    )
}

/// The proof: how many checks ran against the written-out step and the worst of each kind.
fn proof(derived: &[PointCheck]) -> Text {
    let worst = |what: &str| {
        derived
            .iter()
            .filter(|c| c.check.what == what)
            .map(|c| c.check.max_rel_diff)
            .fold(0.0f64, f64::max)
    };
    Text::said(Key::Proof)
        .count("checks", derived.len())
        .count("failed", derived.iter().filter(|c| !c.check.passed).count())
        .number("worst_gradients", worst("gradients-as-written-out"))
        .number("worst_losses", worst("losses-as-written-out"))
        .number("gradient_tolerance", SAME_GRADIENTS)
        .number("loss_tolerance", SAME_LOSSES)
}

fn findings(rows: &[R<'_>], derived: &[PointCheck], paired: &[PairedComparison]) -> Vec<Text> {
    let paired = paired
        .iter()
        .map(|c| Text::said(CommonKey::PairedFinding).paired("comparison", &c.spec.id));
    [
        answer(rows),
        by_sequence(rows),
        forms(rows),
        other_step(rows, Workload::Reader, "full", Key::Full),
        other_step(rows, Workload::Gpt2, "full", Key::Gpt2),
        Some(proof(derived)),
    ]
    .into_iter()
    .flatten()
    .chain(paired)
    .collect()
}

/// The LoRA step's peak above the fixed part over the sequence, written out and with both
/// ops.
fn by_sequence_chart(rows: &[R<'_>]) -> Chart<Text> {
    let line = |form: Form, name: Key| {
        Series::line(
            name,
            false,
            lora(rows, form)
                .iter()
                .map(|r| (r.config.seq() as f64, r.peak() - fixed(r)))
                .collect(),
        )
    };
    Chart::new(
        "peak-by-sequence",
        Key::LabelPeakBySequence,
        Key::LabelSequence,
        Key::LabelAboveFixed,
    )
    .x(AxisUnit::Given, Scale::Log2)
    .y(AxisUnit::Bytes)
    .series([
        line(Form::WrittenOut, Key::LabelWrittenOut),
        line(Form::Both, Key::LabelBoth),
    ])
}

/// Every form at the sequence where all were measured: its step peak, what the forward pass
/// kept and the fixed part.
fn by_form_chart(rows: &[R<'_>]) -> Option<Chart<Text>> {
    let at = every_form(rows)?;
    let bar = |name: Key, f: &dyn Fn(&R<'_>) -> f64| {
        Series::line(
            name,
            false,
            at.iter()
                .enumerate()
                .map(|(i, r)| ((i + 1) as f64, f(r)))
                .collect(),
        )
    };
    Some(
        Chart::new(
            "peak-by-form",
            Text::said(Key::LabelPeakByForm).count("seq", at[0].config.seq()),
            Key::LabelForm,
            Key::LabelStepPeak,
        )
        .y(AxisUnit::Bytes)
        .categories(at.iter().map(|r| r.config.form.id().to_string()).collect())
        .series([
            bar(Key::LabelStepPeak, &|r| r.peak()),
            bar(Key::LabelKept, &kept),
            bar(Key::LabelFixed, &fixed),
        ]),
    )
}

/// Korthikanti et al.'s attention activations, `5 a s^2 b` bytes of a layer's `11 s b h + 5
/// a s^2 b` in 16 bits, beside what the written-out and the efficient step kept here.
fn published(rows: &[R<'_>]) -> Option<PublishedFigure<Text>> {
    let written = *lora(rows, Form::WrittenOut).last()?;
    let efficient = sibling(rows, &written.config, Form::Both)?;
    let shape = written.config.train.shape.llama()?;
    Some(PublishedFigure {
        source: Text::said(Key::PublishedSource),
        claim: Text::said(Key::PublishedClaim),
        ours: Text::said(Key::PublishedOurs)
            .count("seq", shape.seq)
            .count("heads", shape.heads)
            .count("layers", shape.layers)
            .bytes("kept_written", kept(written))
            .bytes("kept_both", kept(efficient)),
    })
}

impl Analyse for EfficientAttention {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let derived = derived_checks(&rows);
        let Some((headline, secondary)) = headlines(&rows, &derived, !paired.is_empty()) else {
            return Analysis::unmeasured(Correctness::of(points));
        };
        Analysis::new(headline)
            .secondary(secondary)
            .findings(findings(&rows, &derived, paired))
            .charts(std::iter::once(by_sequence_chart(&rows)).chain(by_form_chart(&rows)))
            .published(published(&rows))
            .fix_checks(fix_checks(&rows, &derived))
    }
}
