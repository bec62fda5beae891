//! The Llama-family page's conclusions: the fix table of the block (the GPT-2 table's cells,
//! its code), LoRA against full training, the key/value cache per token against its rule, and
//! fused attention against the written-out scores.

use results::keys::llama_family::Key;
use results::keys::CommonKey;
use results::{
    Analysis, Comparison, Correctness, Fix, FixTable, Headline, MeasuredPoint, Metric,
    PairedComparison, PointCheck, Side, TechniqueId, Text,
};

use super::{LlamaConfig, LlamaFamily, LlamaMetric};
use crate::estimate::kv_cache_bytes_per_token;
use crate::harness::models::LlamaShape;
use crate::technique::{Analyse, Row};
use crate::techniques::gpt2_small::analysis::{fix_checks_on, named_cell_set, set_gradient_checks};
use crate::techniques::gpt2_small::CellConfig;

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

/// The gradient checks between the fix cells.
pub(super) fn derived_checks(rows: &[R<'_>]) -> Vec<PointCheck> {
    let cells = cell_rows(rows);
    set_gradient_checks(&cells.iter().collect::<Vec<_>>())
}

/// A point's step peak above the process's own bytes.
fn peak(r: &R<'_>) -> f64 {
    r.peak_above_process()
}

/// The LoRA cells, with their shapes.
fn loras<'r, 'a>(rows: &'r [R<'a>]) -> Vec<(&'r R<'a>, LlamaShape)> {
    rows.iter()
        .filter_map(|r| match r.config {
            LlamaConfig::Lora(t) => Some((r, t.shape.llama()?)),
            _ => None,
        })
        .collect()
}

fn plain<'r, 'a>(rows: &'r [R<'a>]) -> Option<&'r R<'a>> {
    rows.iter()
        .find(|r| matches!(r.config, LlamaConfig::Cell(c) if c.fix == Fix::Plain))
}

/// The index row: LoRA at its smallest rank against full training of the same block.
fn headline(rows: &[R<'_>]) -> Option<Headline<Text>> {
    let (plain, (lora, shape)) = (plain(rows)?, *loras(rows).first()?);
    Some(Headline::versus(
        Text::said(Key::Headline).count("rank", shape.lora_rank.unwrap_or(0)),
        Side::with_peak(CommonKey::StepPeak, peak(plain)),
        Side::with_peak(CommonKey::StepPeak, peak(lora)),
        Correctness::of_checks(&lora.result.checks).unwrap_or(Correctness::NotApplicable),
        Text::said(CommonKey::PointCheck).name("point", lora.id),
    ))
}

/// What LoRA trains and holds, per rank, against full training.
fn lora_findings(rows: &[R<'_>]) -> Vec<Text> {
    let Some(plain) = plain(rows) else {
        return Vec::new();
    };
    loras(rows)
        .into_iter()
        .map(|(r, shape)| {
            Text::said(Key::LoraFinding)
                .count("rank", shape.lora_rank.unwrap_or(0))
                .count("trainable", shape.trainable_params())
                .count("params", shape.num_params())
                .bytes("peak", peak(r))
                .bytes("plain", peak(plain))
                .bytes("optimizer", r.result.metric(Metric::OptimizerStateBytes))
        })
        .collect()
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

/// The written-out and the fused pass's own bytes, at each sequence measured.
fn attention_findings(rows: &[R<'_>]) -> Vec<Text> {
    let pass = |fused: bool| {
        rows.iter().find_map(|r| match r.config {
            LlamaConfig::Attention(a) if a.shape.fused_attention == fused => Some((r, a.shape.seq)),
            _ => None,
        })
    };
    let (Some((written, seq)), Some((fused, _))) = (pass(false), pass(true)) else {
        return Vec::new();
    };
    vec![Text::said(Key::AttentionFinding)
        .count("seq", seq)
        .bytes("written", written.result.metric(Metric::EvalBytes))
        .bytes("fused", fused.result.metric(Metric::EvalBytes))]
}

impl Analyse for LlamaFamily {
    fn analyse(
        &self,
        rows: Vec<R<'_>>,
        points: &[MeasuredPoint],
        _paired: &[PairedComparison],
    ) -> Analysis<Text> {
        let derived = derived_checks(&rows);
        let correctness = Correctness::with_derived(points, derived.iter().map(|d| &d.check));
        let cells = cell_rows(&rows);
        let refs: Vec<_> = cells.iter().collect();
        let workload = plain(&rows).and_then(|p| match p.config {
            LlamaConfig::Cell(c) => c.train.shape.llama().map(|s| (s, c.train.batch)),
            _ => None,
        });
        let (Some(headline), Some((shape, batch))) = (headline(&rows), workload) else {
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
            .findings(lora_findings(&rows))
            .findings(attention_findings(&rows))
            .comparisons(kv_comparisons(&rows))
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
