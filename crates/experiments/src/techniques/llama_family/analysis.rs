//! The Llama-family page's conclusions: the fix table of the block (the GPT-2 table's cells,
//! its code), LoRA against full training in both forms (the workbench's adapters on the
//! activation path, Burn's `apply_lora` composing the weight) and on quantized bases, the key/value
//! cache per token and the prompt's pass against their rules, and fused attention against the
//! written-out scores, in inference and in training, by sequence.

use results::keys::llama_family::Key;
use results::keys::CommonKey;
use results::{
    Analysis, AxisUnit, Chart, Check, Comparison, ComparisonSpec, Correctness, Fix, FixTable,
    Headline, MeasuredPoint, Metric, PairedComparison, PointCheck, Scale, Series, Side,
    TechniqueId, Text,
};

use super::{LlamaConfig, LlamaFamily, LlamaMetric};
use crate::harness::models::{LlamaShape, LoraForm};
use crate::technique::{Analyse, Row};
use crate::techniques::gpt2_small::analysis::{
    fix_checks_on, gradient_sample, named_cell_set, set_gradient_checks,
};
use crate::techniques::gpt2_small::{CellConfig, SAME_GRADIENTS};
use estimator::estimate::{kv_cache_bytes_per_token, llama_prefill_bytes};

type R<'a> = Row<'a, LlamaConfig>;

/// The fix cells as the GPT-2 table's rows, so that its code builds their table and checks.
fn cell_rows<'a>(rows: &[R<'a>]) -> Vec<Row<'a, CellConfig>> {
    rows.iter()
        .filter_map(|r| match r.config {
            LlamaConfig::Cell(c) => Some(Row {
                id: r.id,
                config: c,
                label: r.label,
                result: r.result,
                device: r.device,
            }),
            _ => None,
        })
        .collect()
}

/// The gradient checks between the fix cells, and each fused training step's against the
/// written-out one at its sequence.
pub(super) fn derived_checks(rows: &[R<'_>]) -> Vec<PointCheck> {
    let cells = cell_rows(rows);
    let mut checks = set_gradient_checks(&cells.iter().collect::<Vec<_>>());
    checks.extend(
        attention_steps(rows)
            .into_iter()
            .filter_map(|(seq, written, fused)| {
                let (written, fused) = (written?, fused?);
                let (reference, candidate) = (
                    gradient_sample(written.result),
                    gradient_sample(fused.result),
                );
                let what = "gradients-fused-as-written-out-attention";
                (!reference.is_empty()).then(|| PointCheck {
                    point: fused.id.to_string(),
                    check: Check::compare(what, &reference, &candidate, SAME_GRADIENTS)
                        .with("values", candidate.len())
                        .with("seq", seq),
                })
            }),
    );
    checks
}

/// The sequences of one kind of attention point, each with its written-out and fused rows.
type AttentionPair<'r, 'a> = (usize, Option<&'r R<'a>>, Option<&'r R<'a>>);

/// Attention's points by sequence, `seq_of` picking those of one kind (inference passes or
/// training steps) and giving their shape's sequence and whether it is fused.
fn attention_pairs<'r, 'a>(
    rows: &'r [R<'a>],
    seq_of: impl Fn(&LlamaConfig) -> Option<(usize, bool)>,
) -> Vec<AttentionPair<'r, 'a>> {
    let mut seqs: Vec<usize> = rows
        .iter()
        .filter_map(|r| seq_of(&r.config))
        .map(|s| s.0)
        .collect();
    seqs.sort_unstable();
    seqs.dedup();
    let find = |seq: usize, fused: bool| {
        rows.iter()
            .find(|r| seq_of(&r.config) == Some((seq, fused)))
    };
    seqs.into_iter()
        .map(|seq| (seq, find(seq, false), find(seq, true)))
        .collect()
}

fn attention_passes<'r, 'a>(rows: &'r [R<'a>]) -> Vec<AttentionPair<'r, 'a>> {
    attention_pairs(rows, |c| match c {
        LlamaConfig::Attention(a) => Some((a.shape.seq, a.shape.fused_attention)),
        _ => None,
    })
}

fn attention_steps<'r, 'a>(rows: &'r [R<'a>]) -> Vec<AttentionPair<'r, 'a>> {
    attention_pairs(rows, |c| match c {
        LlamaConfig::AttentionStep(t) => t.shape.llama().map(|s| (s.seq, s.fused_attention)),
        _ => None,
    })
}

/// A point's step peak above the process's own bytes.
fn peak(r: &R<'_>) -> f64 {
    r.peak_above_process()
}

/// The LoRA steps (every form, base and size), with their shapes, in the order measured: the
/// first is the workbench's adapters at the smallest rank on an f32 base.
fn loras<'r, 'a>(rows: &'r [R<'a>]) -> Vec<(&'r R<'a>, LlamaShape)> {
    rows.iter()
        .filter_map(|r| match r.config {
            LlamaConfig::Lora(t) => Some((r, t.shape.llama()?)),
            _ => None,
        })
        .collect()
}

/// The full-training step of the same model and tokens as a LoRA step of `shape`: the block's
/// plain cell, or the reader's-scale full step.
fn full_twin<'r, 'a>(rows: &'r [R<'a>], shape: &LlamaShape, units: u64) -> Option<&'r R<'a>> {
    rows.iter().find(|r| {
        let model = match r.config {
            LlamaConfig::Cell(c) if c.fix == Fix::Plain => c.train.shape.llama(),
            LlamaConfig::Reader(t) => t.shape.llama(),
            _ => None,
        };
        model.is_some_and(|m| (m.layers, m.vocab) == (shape.layers, shape.vocab))
            && r.result.samples_per_step == units
    })
}

fn plain<'r, 'a>(rows: &'r [R<'a>]) -> Option<&'r R<'a>> {
    rows.iter()
        .find(|r| matches!(r.config, LlamaConfig::Cell(c) if c.fix == Fix::Plain))
}

/// The index row: LoRA at its smallest rank against full training of the same block.
fn headline(rows: &[R<'_>], paired: &[PairedComparison]) -> Option<Headline<Text>> {
    let (plain, (lora, shape)) = (plain(rows)?, *loras(rows).first()?);
    let headline = Headline::versus(
        Text::said(Key::Headline).count("rank", shape.lora_rank.unwrap_or(0)),
        Side::with_peak(CommonKey::StepPeak, peak(plain)),
        Side::with_peak(CommonKey::StepPeak, peak(lora)),
        Correctness::of_checks(&lora.result.checks).unwrap_or(Correctness::NotApplicable),
        Text::said(CommonKey::PointCheck).name("point", lora.id),
    );
    Some(if paired.iter().any(|p| p.spec.id == LORA_TIMING) {
        headline.timed_by(LORA_TIMING)
    } else {
        headline
    })
}

/// Burn's QLoRA at the largest model it ran on (the reader's scale where measured), with the
/// steps it is set against: full training of the same model and tokens, the workbench's
/// adapters and Burn's apply_lora on the f32 base (same rank, tokens and blocks).
struct QloraCell<'r, 'a> {
    qlora: &'r R<'a>,
    shape: LlamaShape,
    full: Option<&'r R<'a>>,
    path: Option<&'r R<'a>>,
    burn_lora: Option<&'r R<'a>>,
}

fn qlora_cell<'r, 'a>(rows: &'r [R<'a>]) -> Option<QloraCell<'r, 'a>> {
    let all = loras(rows);
    let (qlora, shape) = all
        .iter()
        .filter(|(_, s)| s.lora_form == LoraForm::Composed && s.base_bits.is_some())
        .max_by_key(|(r, s)| (s.vocab, s.layers, r.result.samples_per_step))
        .copied()?;
    let units = qlora.result.samples_per_step;
    let f32_base = |form: LoraForm| {
        all.iter()
            .find(|(r, s)| {
                s.lora_form == form
                    && s.base_bits.is_none()
                    && (s.lora_rank, s.layers, s.vocab)
                        == (shape.lora_rank, shape.layers, shape.vocab)
                    && r.result.samples_per_step == units
            })
            .map(|(r, _)| *r)
    };
    Some(QloraCell {
        qlora,
        shape,
        full: full_twin(rows, &shape, units),
        path: f32_base(LoraForm::ActivationPath),
        burn_lora: f32_base(LoraForm::Composed),
    })
}

/// The QLoRA rows of the page's answer: Burn's apply_qlora against full training and against
/// the workbench's adapters on the f32 base.
fn qlora_headlines(rows: &[R<'_>]) -> Vec<Headline<Text>> {
    let Some(c) = qlora_cell(rows) else {
        return Vec::new();
    };
    let said = |against: &str| {
        Text::said(Key::HeadlineQlora)
            .count("rank", c.shape.lora_rank.unwrap_or(0))
            .count("bits", c.shape.base_bits.map_or(32, u64::from))
            .count("tokens", c.qlora.result.samples_per_step)
            .count("blocks", c.shape.layers)
            .count("vocab", c.shape.vocab)
            .name("against", against)
    };
    let against = |base: &R<'_>, name: &str| {
        Headline::versus(
            said(name),
            Side::with_peak(CommonKey::StepPeak, peak(base)),
            Side::with_peak(CommonKey::StepPeak, peak(c.qlora)),
            Correctness::of_checks(&c.qlora.result.checks).unwrap_or(Correctness::NotApplicable),
            Text::said(CommonKey::PointCheck).name("point", c.qlora.id),
        )
        .variant(&format!("QLoRA against {}", name.replace('-', " ")))
    };
    [(c.full, "full-training"), (c.path, "adapters")]
        .into_iter()
        .filter_map(|(base, name)| Some(against(base?, name)))
        .collect()
}

/// Which LoRA form to use with a quantized base: Burn's QLoRA's step peak beside full
/// training's and the two forms' on the f32 base, as measured.
fn qlora_choice(rows: &[R<'_>]) -> Option<Text> {
    let c = qlora_cell(rows)?;
    let (full, path, burn_lora) = (c.full?, c.path?, c.burn_lora?);
    Some(
        Text::said(Key::QloraChoice)
            .count("rank", c.shape.lora_rank.unwrap_or(0))
            .count("bits", c.shape.base_bits.map_or(32, u64::from))
            .count("tokens", c.qlora.result.samples_per_step)
            .count("blocks", c.shape.layers)
            .count("vocab", c.shape.vocab)
            .bytes("qlora", peak(c.qlora))
            .bytes("full", peak(full))
            .bytes("path", peak(path))
            .bytes("burn_lora", peak(burn_lora))
            .bytes("qlora_weights", c.qlora.result.metric(Metric::ParamBytes))
            .bytes("path_weights", path.result.metric(Metric::ParamBytes)),
    )
}

/// What a LoRA step trains and holds, per form, rank, base and size, against full training
/// of the same block: the step's peak and its parts as the point measured them (the weights
/// held, the base's and the adapters' share of them, the adapters' gradients, Adam's state,
/// what the forward pass kept, and the peak phase's transients).
fn lora_findings(rows: &[R<'_>]) -> Vec<Text> {
    loras(rows)
        .into_iter()
        .map(|(r, shape)| {
            let metric = |m: Metric| r.result.metric(m);
            let adapters = shape.adapter_params() as f64 * 4.0;
            let (parts, phase) = measured_parts(r);
            let same_step = full_twin(rows, &shape, r.result.samples_per_step);
            let text = Text::said(Key::LoraFinding)
                .name("form", form_name(shape.lora_form))
                .count("rank", shape.lora_rank.unwrap_or(0))
                .count("bits", shape.base_bits.map_or(32, u64::from))
                .count("tokens", r.result.samples_per_step)
                .count("trainable", shape.trainable_params())
                .count("params", shape.num_params())
                .bytes("peak", peak(r))
                .bytes("weights", metric(Metric::ParamBytes))
                .bytes("base", metric(Metric::ParamBytes) - adapters)
                .bytes("adapters", adapters)
                .bytes("grads", metric(Metric::GradBytes))
                .bytes("optimizer", metric(Metric::OptimizerStateBytes))
                .bytes("activations", metric(Metric::ActivationBytes))
                .bytes("rest", peak(r) - parts)
                .name("phase", phase);
            match same_step {
                Some(p) => text.bytes("plain", peak(p)),
                None => text,
            }
        })
        .collect()
}

/// Each full step at the reader's scale, split into its parts as the point measured them.
fn reader_findings(rows: &[R<'_>]) -> Vec<Text> {
    rows.iter()
        .filter_map(|r| match r.config {
            LlamaConfig::Reader(t) => Some((r, t.shape.llama()?)),
            _ => None,
        })
        .map(|(r, shape)| {
            let metric = |m: Metric| r.result.metric(m);
            let (parts, phase) = measured_parts(r);
            let head = if shape.tied_head { 1 } else { 2 };
            Text::said(Key::ReaderFinding)
                .count("blocks", shape.layers)
                .count("vocab", shape.vocab)
                .count("params", shape.num_params())
                .number("vocab_params", (head * shape.vocab * shape.d_model) as f64)
                .count("tokens", r.result.samples_per_step)
                .bytes("peak", peak(r))
                .name("phase", phase)
                .bytes("weights", metric(Metric::ParamBytes))
                .bytes("grads", metric(Metric::GradBytes))
                .bytes("optimizer", metric(Metric::OptimizerStateBytes))
                .bytes("activations", metric(Metric::ActivationBytes))
                .bytes("rest", peak(r) - parts)
        })
        .collect()
}

/// A training point's parts as it measured them (weights, gradients, optimizer state, what the
/// forward pass kept), summed, and the phase its peak fell in.
fn measured_parts(r: &R<'_>) -> (f64, String) {
    let metric = |m: Metric| r.result.metric(m);
    let parts = metric(Metric::ParamBytes)
        + metric(Metric::GradBytes)
        + metric(Metric::OptimizerStateBytes)
        + metric(Metric::ActivationBytes);
    let peak_phase = r.result.phases.iter().max_by_key(|p| p.peak_bytes);
    (parts, peak_phase.map_or("", |p| &p.phase).to_string())
}

/// `form` as the page names it.
fn form_name(form: LoraForm) -> String {
    match form {
        LoraForm::ActivationPath => "the workbench's adapters".into(),
        LoraForm::Composed => "Burn's apply_lora".into(),
    }
}

/// Each step of Burn's form against the workbench's at the same rank, base, blocks and size:
/// what the forward pass kept more, against the rule read from Burn's autodiff (`float_matmul`
/// keeps its right operand only where its left one is tracked, its left one only where the
/// right one is): Burn's form keeps each composed weight (`base + scale * (a @ b)`, `d_in x
/// d_out` in f32) where the layer's input needs a gradient, every block's but the first; the
/// workbench's keeps `x @ a`, rank values a token per adapted weight. Then which form to use.
fn lora_form_findings(rows: &[R<'_>]) -> Vec<Text> {
    let all = loras(rows);
    let twin = |shape: &LlamaShape, units: u64| {
        all.iter().find(|(r, s)| {
            s.lora_form == LoraForm::ActivationPath
                && (s.lora_rank, s.base_bits, s.seq, s.layers)
                    == (shape.lora_rank, shape.base_bits, shape.seq, shape.layers)
                && r.result.samples_per_step == units
        })
    };
    let pairs: Vec<Text> = all
        .iter()
        .filter(|(_, s)| s.lora_form == LoraForm::Composed)
        .filter_map(|(burn, shape)| {
            let (path, _) = twin(shape, burn.result.samples_per_step)?;
            Some(form_finding(burn, path, shape))
        })
        .collect();
    let choice = all
        .iter()
        .find(|(_, s)| s.lora_form == LoraForm::Composed && s.layers > 1)
        .map(|(_, shape)| form_choice(shape));
    pairs.into_iter().chain(choice).collect()
}

/// Burn's form `burn` against the workbench's `path` on `shape`: what the forward pass kept
/// more (the rule and the measurement), the backward peak's difference and the two peaks.
fn form_finding(burn: &R<'_>, path: &R<'_>, shape: &LlamaShape) -> Text {
    let backward = |r: &R<'_>| {
        r.result
            .phase(results::Phase::Backward)
            .map_or(f64::NAN, |p| p.peak_bytes as f64)
    };
    let kept = |r: &R<'_>| r.result.metric(Metric::ActivationBytes);
    let kept_more = kept(burn) - kept(path);
    let tolerance = results::diff::bookkeeping_tolerance_bytes(peak(burn) as u64) as f64;
    let tracked = tracked_blocks(shape);
    let tokens = burn.result.samples_per_step;
    let x_a = tokens as f64 * shape.lora_rank.unwrap_or(0) as f64 * 4.0 * 2.0 * shape.layers as f64;
    let composed = composed_weight_bytes(&tracked);
    Text::said(Key::LoraComposedCost)
        .count("rank", shape.lora_rank.unwrap_or(0))
        .count("bits", shape.base_bits.map_or(32, u64::from))
        .count("tokens", tokens)
        .count("blocks", shape.layers)
        .count("tracked", 2 * tracked.layers)
        .count("adapted", 2 * shape.layers)
        .bytes("composed", composed)
        .bytes("x_a", x_a)
        .bytes("predicted", composed - x_a)
        .bytes("kept", kept_more)
        .number("direction", direction(kept_more, tolerance))
        .bytes("tolerance", tolerance)
        .bytes("backward", backward(burn) - backward(path))
        .bytes("burn_peak", peak(burn))
        .bytes("path_peak", peak(path))
}

/// -1, 0 or 1: `bytes` below, within or above `tolerance` of nothing.
fn direction(bytes: f64, tolerance: f64) -> f64 {
    if bytes.abs() <= tolerance {
        0.0
    } else {
        bytes.signum()
    }
}

/// The blocks whose adapted layers take an input that needs a gradient: every block but the
/// first, whose input comes from the frozen embedding and norm.
fn tracked_blocks(shape: &LlamaShape) -> LlamaShape {
    LlamaShape {
        layers: shape.layers.saturating_sub(1),
        ..*shape
    }
}

/// Which form to use at `shape`'s width and rank: per adapted weight whose input needs a
/// gradient, Burn's form keeps the composed weight, the workbench's `x @ a` per token; the
/// workbench's is the lighter below `d_in x d_out / rank` tokens a step (the value
/// projection's, the smaller).
fn form_choice(shape: &LlamaShape) -> Text {
    let (d, k) = (shape.d_model as f64, shape.kv_width() as f64);
    let rank = shape.lora_rank.unwrap_or(1).max(1) as f64;
    Text::said(Key::LoraFormChoice)
        .count("rank", rank as u64)
        .count("d_model", shape.d_model)
        .bytes("query", d * d * 4.0)
        .bytes("value", d * k * 4.0)
        .bytes("per_token", rank * 4.0)
        .count("crossover", (d * k / rank) as u64)
}

/// Bytes of the adapted weights composed dense in f32: per block the query's `d x d` and the
/// value's `d x kv_width`.
fn composed_weight_bytes(shape: &LlamaShape) -> f64 {
    let (d, k) = (shape.d_model as f64, shape.kv_width() as f64);
    shape.layers as f64 * (d * d + d * k) * 4.0
}

/// Each generation loop's bytes per token against the cache's rule.
fn kv_comparisons(rows: &[R<'_>]) -> Vec<Comparison<Text>> {
    rows.iter()
        .filter_map(|r| match r.config {
            LlamaConfig::Generate(g) => Some(Comparison::new(
                Text::said(Key::KvQuantity).count("kv_heads", g.shape.kv_heads),
                kv_cache_bytes_per_token(&g.shape, 4.0),
                r.result.metric(LlamaMetric::KvBytesPerToken),
                Text::said(Key::KvNote)
                    .count("layers", g.shape.layers)
                    .count("kv_heads", g.shape.kv_heads)
                    .count("head_dim", g.shape.head_dim()),
            )),
            _ => None,
        })
        .collect()
}

/// The inference pass at the longest sequence where both ways were measured, and each training
/// step's peak, written out against fused: the same within [`SAME_STEP`] is Burn's autodiff
/// writing the fused kernel out.
fn attention_findings(rows: &[R<'_>]) -> Vec<Text> {
    let longest = attention_passes(rows)
        .into_iter()
        .rev()
        .find_map(|(seq, w, f)| {
            let (w, f) = (w?, f?);
            let (written, fused) = (
                w.result.metric(Metric::EvalBytes),
                f.result.metric(Metric::EvalBytes),
            );
            // What the fused kernel saves is measured, not assumed: on lavapipe it held more.
            let key = if fused < written {
                Key::AttentionFinding
            } else {
                Key::AttentionFusedHeldMore
            };
            Some(
                Text::said(key)
                    .count("seq", seq)
                    .bytes("written", written)
                    .bytes("fused", fused),
            )
        });
    let steps = attention_steps(rows).into_iter().filter_map(|(seq, w, f)| {
        let (written, fused) = (peak(w?), peak(f?));
        let same = ((fused - written) / written).abs() < SAME_STEP;
        let key = if same {
            Key::AttentionStepSame
        } else {
            Key::AttentionStepDiffers
        };
        Some(
            Text::said(key)
                .count("seq", seq)
                .bytes("written", written)
                .bytes("fused", fused),
        )
    });
    longest.into_iter().chain(steps).collect()
}

/// Two training steps' peaks within this fraction of each other hold the same tensors (the
/// probe counts bytes exactly; a few percent is the optimizer's and the loss's order).
const SAME_STEP: f64 = 0.02;

/// Bytes by sequence: the inference pass's (above the weights) and the training step's peak,
/// each written out and fused.
fn attention_chart(rows: &[R<'_>]) -> Option<Chart<Text>> {
    let series =
        |key: Key, pairs: &[AttentionPair<'_, '_>], fused: bool, bytes: &dyn Fn(&R<'_>) -> f64| {
            let points: Vec<(f64, f64)> = pairs
                .iter()
                .filter_map(|&(seq, w, f)| Some((seq as f64, bytes(if fused { f? } else { w? }))))
                .collect();
            (!points.is_empty()).then(|| Series::line(key, false, points))
        };
    let (passes, steps) = (attention_passes(rows), attention_steps(rows));
    let eval = |r: &R<'_>| r.result.metric(Metric::EvalBytes);
    let lines: Vec<Series<Text>> = [
        series(Key::SeriesPassWritten, &passes, false, &eval),
        series(Key::SeriesPassFused, &passes, true, &eval),
        series(Key::SeriesStepWritten, &steps, false, &peak),
        series(Key::SeriesStepFused, &steps, true, &peak),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!lines.is_empty()).then(|| {
        Chart::new(
            "attention-by-sequence",
            Key::ChartAttention,
            Key::LabelSequence,
            Key::LabelBytes,
        )
        .x(AxisUnit::Given, Scale::Log2)
        .y(AxisUnit::Bytes)
        .series(lines)
    })
}

/// Each generation loop's prompt pass against its rule: the prompt's cache and one block's
/// largest moment (or the logits), in f32.
fn prefill_comparisons(rows: &[R<'_>]) -> Vec<Comparison<Text>> {
    rows.iter()
        .filter_map(|r| {
            let LlamaConfig::Generate(g) = r.config else {
                return None;
            };
            let phase = r.result.phase(super::GenerationPhase::Prefill)?;
            // A device's pass without a bracket was read only at its ends: no peak to hold the
            // rule to (the CPU's probe sees every allocation).
            if r.result.probe.kind != results::ProbeInfo::HOST && phase.bracket.is_none() {
                return None;
            }
            let prompt = g.shape.seq;
            let rule = prompt as f64 * kv_cache_bytes_per_token(&g.shape, 4.0)
                + llama_prefill_bytes(&g.shape, 1, prompt, 4.0);
            // On a device the pass's peak is bracketed: the rule is held to the bracket.
            let upper = phase
                .bracket
                .as_ref()
                .map(|b| b.upper_bytes.saturating_sub(phase.live_before_bytes) as f64);
            Some(
                Comparison::new(
                    Text::said(Key::PrefillQuantity)
                        .count("kv_heads", g.shape.kv_heads)
                        .count("prompt", prompt),
                    rule,
                    phase.delta_bytes() as f64,
                    Text::said(Key::PrefillNote),
                )
                .bracketed(upper),
            )
        })
        .collect()
}

/// The paired comparisons: LoRA's step against full training's, and the fused inference pass
/// against the written-out one at the shortest sequence measured. Both in four builds at
/// least: in two, LoRA's A/A control spanned -40% to +48% (Student's t with one degree of
/// freedom), which no reader can trust beside a saving of 40%.
pub(super) fn comparisons(rows: &[R<'_>]) -> Vec<ComparisonSpec> {
    let lora = plain(rows)
        .zip(loras(rows).first().map(|(r, _)| *r))
        .map(|(p, l)| ComparisonSpec::new(LORA_TIMING, p.id, l.id));
    let passes = attention_passes(rows);
    let fused = passes
        .first()
        .and_then(|&(_, w, f)| Some(ComparisonSpec::new(FUSED_TIMING, w?.id, f?.id)));
    lora.into_iter().chain(fused).collect()
}

/// The paired comparison of LoRA's step against full training's.
const LORA_TIMING: &str = "lora";
/// The paired comparison of the fused inference pass against the written-out one.
const FUSED_TIMING: &str = "fused-attention";

impl Analyse for LlamaFamily {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let derived = derived_checks(&rows);
        let correctness = Correctness::with_derived(points, derived.iter().map(|d| &d.check));
        let cells = cell_rows(&rows);
        let refs: Vec<_> = cells.iter().collect();
        let workload = plain(&rows).and_then(|p| match p.config {
            LlamaConfig::Cell(c) => c.train.shape.llama().map(|s| (s, c.train.batch)),
            _ => None,
        });
        let (Some(headline), Some((shape, batch))) = (headline(&rows, paired), workload) else {
            return Analysis::unmeasured(correctness);
        };
        let text = Text::said(Key::Workload)
            .count("layers", shape.layers)
            .count("d_model", shape.d_model)
            .count("heads", shape.heads)
            .count("kv_heads", shape.kv_heads)
            .count("mlp", shape.mlp)
            .count("vocab", shape.vocab)
            .count("seq", shape.seq)
            .count("batch", batch)
            .count("params", shape.num_params());
        let mut analysis = Analysis::new(headline)
            .secondary(qlora_headlines(&rows))
            .findings(qlora_choice(&rows))
            .findings(reader_findings(&rows))
            .findings(lora_findings(&rows))
            .findings(lora_form_findings(&rows))
            .findings(attention_findings(&rows))
            .comparisons(kv_comparisons(&rows))
            .comparisons(prefill_comparisons(&rows))
            .charts(attention_chart(&rows))
            .fix_checks(fix_checks_on(&cells, &derived, TechniqueId::LlamaFamily));
        if let Some(set) = named_cell_set(&refs, text) {
            analysis = analysis.fix_table(FixTable {
                table: set,
                regime: None,
                projection: None,
            });
        }
        analysis
    }
}
