//! The "What fits" page's view model: the estimator's tables for the presets and common cards,
//! `fit`'s measured searches, and the decision list, worded here from an [`AnalysedCapacity`].
//! Templates do no arithmetic.

use results::capacity::{AnalysedCapacity, EstimatorTables, FitModel, MeasuredFit, PrecisionRule};
use results::format;
use results::Fix;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::recommend::{recommend, Recommendation, WayStatus};
use crate::verdicts::SiteVerdicts;

/// The page's file name.
pub const HREF: &str = "what-fits.html";

/// Everything the page shows.
#[derive(Debug, Serialize)]
pub struct WhatFits {
    /// The page's file name.
    pub href: String,
    /// Link to the record.
    pub json_href: String,
    /// The single cards, the tables' columns.
    pub cards: Vec<CardHead>,
    /// Where each card's figure comes from.
    pub card_source: String,
    /// The multi-card setup's name.
    pub many_cards: String,
    /// Sharding schemes over it, further columns.
    pub shardings: Vec<String>,
    /// Where the sharding rules come from.
    pub sharding_source: String,
    /// One table per preset.
    pub models: Vec<ModelTable>,
    /// Inference weights per preset and bits.
    pub weights: Vec<WeightsView>,
    /// The decision list.
    pub decisions: Vec<String>,
    /// `fit`'s searches.
    pub fits: Vec<FitView>,
    /// How `fit` was run, or why not.
    pub fits_note: String,
    /// Which run made the record, in one line.
    pub made_by: String,
    /// Bytes per parameter, precision by optimizer.
    pub per_param: PerParam,
    /// Per preset, the largest batch per card in each common way to train it.
    pub ways: Vec<WaysView>,
    /// When only a bigger card (or several) helps, with the cards' sizes.
    pub bigger_card: String,
    /// The calculator's rules, as JSON for the page's script (`</` escaped).
    pub calculator_json: String,
    /// The failed checks of each calculator combination's fixes, by combination and precision
    /// name, as JSON (`</` escaped): the calculator shows them beside the way.
    pub calculator_checks_json: String,
    /// The CUDA context every "fits" answer leaves out, in words.
    pub context: String,
    /// The safety margins, each beside the worst under-estimate measured in its precision, in
    /// a few words.
    pub margins: String,
    /// Where each precision's worst under-estimate was measured, in words.
    pub margin_sources: String,
    /// Whether a margin is smaller than an under-estimate the guide's sets measured.
    pub margin_short: bool,
    /// The two questions people bring most often, answered.
    pub readers: ReadersView,
}

/// The two readers' answers, worded.
#[derive(Debug, Serialize)]
pub struct ReadersView {
    /// The fine-tuning question.
    pub fine_tune_question: String,
    /// Its rows.
    pub fine_tune: Vec<ReaderRow>,
    /// The fine-tuning answer: the way with the largest batch whose checks passed
    /// ([`crate::recommend::recommend`]), in words.
    pub fine_tune_answer: String,
    /// The inference question.
    pub inference_question: String,
    /// Its rows.
    pub inference: Vec<ReaderRow>,
    /// The inference answer: the widest weights that fit whose checks passed, in words.
    pub inference_answer: String,
}

/// One answer: the way, its verdict in a few words, and the figures it rests on.
#[derive(Debug, Serialize)]
pub struct ReaderRow {
    /// The way (`LoRA rank 16, f32`).
    pub way: String,
    /// Fits or not, and at what.
    pub answer: String,
    /// Whether it fits as asked.
    pub fits: bool,
    /// The figures: what it holds against what it may use.
    pub why: String,
    /// How far it stretches (the longest sequence or context).
    pub stretch: String,
    /// The failed check of the technique it rests on, where one failed (bf16 storage, 8- or
    /// 4-bit weights), carried where the answer recommends it.
    pub warning: String,
}

/// The fix whose checks measure weights stored at `bits` (What fits' rows and the CLI's
/// `--inference` lines carry its checks).
pub fn weights_fix(bits: u32) -> Option<Fix> {
    match bits {
        8 => Some(Fix::InferInt8),
        4 => Some(Fix::InferInt4),
        _ => None,
    }
}

fn tokens(n: Option<u64>) -> String {
    n.map_or_else(
        || "not one token".into(),
        |n| format!("{} tokens", format::thousands(n)),
    )
}

/// One way to fine-tune, worded, with the failed check of each ranked fix it applies.
fn fine_tune_row(f: &results::capacity::FineTuneRow, verdicts: &SiteVerdicts) -> ReaderRow {
    ReaderRow {
        way: f.way.clone(),
        answer: match f.largest_batch {
            Some(b) => format!("batch {}", format::thousands(b)),
            None => "no".into(),
        },
        fits: f.largest_batch.is_some(),
        why: if f.fixed_bytes > f.usable_bytes {
            format!(
                "fixed part {} alone over {}",
                format::bytes(f.fixed_bytes),
                format::bytes(f.usable_bytes)
            )
        } else {
            format!(
                "one sequence {} of {} (fixed {})",
                format::bytes(f.one_sequence_bytes),
                format::bytes(f.usable_bytes),
                format::bytes(f.fixed_bytes)
            )
        },
        stretch: tokens(f.longest_seq),
        warning: verdicts
            .way_status(&f.fixes)
            .into_failures()
            .unwrap_or_default(),
    }
}

/// One weight width for inference, worded, with its weights' failed check where one failed.
fn inference_row(
    i: &results::capacity::InferenceRow,
    context: usize,
    verdicts: &SiteVerdicts,
) -> ReaderRow {
    let context = format::thousands(context as u64);
    ReaderRow {
        way: format!("{}-bit weights", i.weight_bits),
        answer: if i.peak_bytes <= i.usable_bytes {
            format!("fits at {context} tokens")
        } else if i.weight_bytes > i.usable_bytes {
            "no: the weights alone".into()
        } else {
            format!("does not fit at {context} tokens")
        },
        fits: i.peak_bytes <= i.usable_bytes,
        why: format!(
            "{} of {} (weights {}, cache {})",
            format::bytes(i.peak_bytes),
            format::bytes(i.usable_bytes),
            format::bytes(i.weight_bytes),
            format::bytes(i.kv_cache_bytes)
        ),
        stretch: tokens(i.longest_context),
        warning: weights_fix(i.weight_bits)
            .and_then(|fix| verdicts.failure(fix))
            .map(|f| format!("{}-bit weights: {f}", i.weight_bits))
            .unwrap_or_default(),
    }
}

/// The readers' rows from the estimator's tables.
fn readers(r: &results::capacity::ReaderTables, verdicts: &SiteVerdicts) -> ReadersView {
    ReadersView {
        fine_tune_question: format!(
            "Fine-tuning {} on a {} card, sequence {}:",
            r.fine_tune_model,
            r.fine_tune_card.class,
            format::thousands(r.fine_tune_seq as u64)
        ),
        fine_tune: r
            .fine_tune
            .iter()
            .map(|f| fine_tune_row(f, verdicts))
            .collect(),
        inference_question: format!(
            "Running {} on a {} card ({}), {} tokens:",
            r.inference_model,
            r.inference_card.class,
            r.inference_card.models,
            format::thousands(r.inference_context as u64)
        ),
        inference: r
            .inference
            .iter()
            .map(|i| inference_row(i, r.inference_context, verdicts))
            .collect(),
        fine_tune_answer: answer_words(recommend(r.fine_tune.iter().map(|f| {
            let status = verdicts.way_status(&f.fixes);
            (f.way.clone(), f.largest_batch, status)
        }))),
        inference_answer: answer_words(recommend(r.inference.iter().map(|i| {
            let status = verdicts.way_status(&Vec::from_iter(weights_fix(i.weight_bits)));
            let fits = (i.peak_bytes <= i.usable_bytes).then_some(1);
            (format!("{}-bit weights", i.weight_bits), fits, status)
        }))),
    }
}

/// An answer in words: the way, and its checks where it has any.
fn answer_words(r: Option<Recommendation>) -> String {
    let Some(r) = r else {
        return "Answer: no way fits.".into();
    };
    match r.checks() {
        WayStatus::NothingToCheck => format!("Answer: {}.", r.way()),
        status => format!("Answer: {} ({}).", r.way(), status.words()),
    }
}

/// Bytes per parameter, precision by optimizer.
#[derive(Debug, Serialize)]
pub struct PerParam {
    /// The optimizers, the columns.
    pub optimizers: Vec<String>,
    /// One row per precision: its name and the bytes under each optimizer.
    pub rows: Vec<(String, Vec<String>)>,
}

/// A preset in the common ways to train it.
#[derive(Debug, Serialize)]
pub struct WaysView {
    /// The preset.
    pub id: String,
    /// Parameters and sequence, in words.
    pub about: String,
    /// One row per way.
    pub rows: Vec<WayView>,
}

/// One way to train a preset.
#[derive(Debug, Serialize)]
pub struct WayView {
    /// The way (`mixed bf16, Adam`).
    pub way: String,
    /// What no batch changes: weights, gradients, optimizer state, copies.
    pub fixed: String,
    /// The largest batch per card.
    pub cells: Vec<Cell>,
    /// The failed checks of the fixes it applies (empty where none failed), the cell's tooltip.
    pub warning: String,
    /// The same in a few words, shown beside the way: which fix's check failed.
    pub warning_short: String,
}

/// A preset's table.
#[derive(Debug, Serialize)]
pub struct ModelTable {
    /// The preset.
    pub id: String,
    /// What it assumes.
    pub assumes: String,
    /// Parameters, in words.
    pub params: String,
    /// Weights, gradients and Adam state in f32.
    pub fixed: String,
    /// Activations per sample at their peak, in f32.
    pub activations: String,
    /// Micro-batches of the accumulating rows.
    pub micro_batches: usize,
    /// One row per combination.
    pub rows: Vec<ComboView>,
}

/// One combination's row.
#[derive(Debug, Serialize)]
pub struct ComboView {
    /// The combination.
    pub combination: String,
    /// The step's peak at its smallest batch.
    pub peak_at_one: String,
    /// The largest batch per single card, then per sharding scheme over the multi-card setup.
    pub cells: Vec<Cell>,
}

/// A card as a column's head.
#[derive(Debug, Serialize)]
pub struct CardHead {
    /// Its class (`24 GB`).
    pub name: String,
    /// Its memory as the driver reports it, in MiB (`24,564`).
    pub mib: String,
    /// The claim key of its memory ([`crate::claims::card`]).
    pub claim: String,
}

/// A table cell: the batch, or "–" where not even one sample fits.
#[derive(Debug, Serialize)]
pub struct Cell {
    /// The text.
    pub text: String,
    /// Whether nothing fits.
    pub none: bool,
    /// The claim key of the figure, where other pages print it too (empty where none does).
    pub claim: String,
}

/// Inference weights of a preset at a number of bits.
#[derive(Debug, Serialize)]
pub struct WeightsView {
    /// The preset.
    pub model: String,
    /// Bits per weight.
    pub bits: u32,
    /// Packed, as on CubeCL.
    pub packed: String,
    /// As Flex stores it.
    pub flex: String,
}

/// One `fit` search.
#[derive(Debug, Serialize)]
pub struct FitView {
    /// The model.
    pub model: String,
    /// The techniques.
    pub technique: String,
    /// The budget.
    pub budget: String,
    /// The batch found.
    pub found: String,
    /// The verification: the batch found ran, the next larger did not.
    pub verified: String,
    /// The estimator's guess.
    pub estimated: String,
    /// The guess against the batch found.
    pub miss: String,
    /// Whether the guess missed by more than 10%.
    pub off: bool,
    /// Tries and wall time.
    pub cost: String,
}

fn batch(b: Option<u64>) -> Cell {
    match b {
        Some(b) => Cell {
            text: format::thousands(b),
            none: false,
            claim: String::new(),
        },
        // A dash, its meaning said once above the table: a table of large models is mostly
        // cells where nothing fits.
        None => Cell {
            text: "–".into(),
            none: true,
            claim: String::new(),
        },
    }
}

/// The largest batch of `preset` trained `way` on `card`, tagged with its claim.
fn claimed_batch(b: Option<u64>, card: &str, preset: &str, way: &str) -> Cell {
    Cell {
        claim: crate::claims::largest_batch(card, preset, way),
        ..batch(b)
    }
}

fn params(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{:.2} billion", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1} million", n / 1e6)
    } else {
        format!("{n:.0}")
    }
}

/// Where each sharding scheme's rule comes from, and which of Burn's strategies each column
/// stands for (burn-train 0.22.1, `ExecutionStrategy`): said under every table that uses them,
/// the CLI's among them.
pub const SHARDING_SOURCE: &str =
    "data parallel and ZeRO stages 1 to 3: formulas from the ZeRO paper (Rajbhandari et al., \
     2020), each card taking 1/8 of the batch, not measured here. In burn-train 0.22.1, data \
     parallel is ExecutionStrategy::DistributedDataParallel (or MultiDevice with \
     MultiDeviceOptim::OptimMainDevice); MultiDeviceOptim::OptimSharded shards the optimizer's \
     step, and with it its state, over the devices, the ZeRO-1 column; Burn has no ZeRO-2 or \
     ZeRO-3";

/// "bf16 storage: check failed" for the fixes of `fixes` whose check failed (empty where none
/// did): a table's cell, its full failures in the tooltip.
fn failed_short(fixes: &[Fix], verdicts: &SiteVerdicts) -> String {
    let failed: Vec<&str> = fixes
        .iter()
        .filter(|&&f| verdicts.failure(f).is_some())
        .map(|&f| crate::words::fix_name(f))
        .collect();
    match failed.len() {
        0 => String::new(),
        _ => format!("{}: check failed", failed.join(", ")),
    }
}

/// Each calculator combination's failed checks by precision, as the page's JSON.
fn calculator_checks(
    rules: &results::capacity::CalculatorRules,
    verdicts: &SiteVerdicts,
) -> String {
    let failed: BTreeMap<&str, BTreeMap<&str, String>> = rules
        .combinations
        .iter()
        .map(|c| {
            let by_precision = c
                .fixes_by_precision
                .iter()
                .filter_map(|(p, fixes)| {
                    Some((p.as_str(), verdicts.way_status(fixes).into_failures()?))
                })
                .collect();
            (c.name.as_str(), by_precision)
        })
        .collect();
    serde_json::to_string(&failed)
        .expect("names and words serialise")
        .replace("</", "<\\/")
}

/// A batch in words (`batch 5113`), or `does not fit` where not even one sample fits.
fn batch_words(b: Option<u64>) -> String {
    b.map_or("does not fit".into(), |b| format!("batch {b}"))
}

/// A searched model's short name: `mlp 4x256`, `transformer 2x64 (seq 64, vocab 256)`.
pub fn model_name(model: &FitModel) -> String {
    match *model {
        FitModel::Mlp { depth, width } => format!("mlp {depth}x{width}"),
        FitModel::Transformer {
            layers,
            d_model,
            seq,
            vocab,
        } => format!("transformer {layers}x{d_model} (seq {seq}, vocab {vocab})"),
    }
}

/// The batch a search found, in words (`batch 5113`, `does not fit`).
pub fn found(f: &MeasuredFit) -> String {
    batch_words(f.found_batch)
}

/// The verification of a search, in words: the batch found ran under the budget, the next
/// larger did not.
pub fn verified(f: &MeasuredFit) -> String {
    match (f.found_batch, f.next_fails_at) {
        (Some(b), Some(n)) => format!("{b} ran under the budget, {n} did not"),
        (Some(b), None) => format!("{b} ran under the budget (the search's ceiling)"),
        (None, Some(n)) => format!("{n} did not run under the budget"),
        (None, None) => String::new(),
    }
}

/// How `fit` was run in the record's run, or why it was not.
fn fits_note(capacity: &AnalysedCapacity) -> String {
    let r = &capacity.record;
    let command = format!(
        "workbench fit --budget {} --quick",
        format::bytes(r.fit_budget_bytes as f64).replace(' ', "")
    );
    if let Some(error) = &r.fit_error {
        return format!("`{command}` could not run in this run: {error}");
    }
    if r.fits.is_empty() {
        return format!(
            "Not measured in this run ({} on {}): the full CPU run measures them, in about a \
             minute; `{command}` measures them on any machine",
            r.profile.name(),
            r.device.name()
        );
    }
    format!(
        "measured by `{command}` in this run: both models at the quick profile's sizes, \
         accumulating over {} micro-batches; each try is one training step in its own process, \
         the budget enforced by the counting allocator",
        r.fit_micro_batches
    )
}

fn fit_view(f: &MeasuredFit) -> FitView {
    let found = found(f);
    let verified = verified(f);
    FitView {
        model: model_name(&f.model),
        technique: f.technique.clone(),
        budget: format::bytes(f.budget_bytes as f64),
        found,
        verified,
        estimated: batch_words(f.estimated_batch),
        miss: f.estimate_miss_pct().map_or("n/a".into(), format::pct),
        off: f.estimate_miss_pct().is_some_and(|p| p.abs() > 10.0),
        cost: format!("{} tries, {}", f.tries, format::seconds(f.wall_s)),
    }
}

impl WhatFits {
    /// The page of `capacity`; `verdicts` for the failed checks its answers carry, `records`
    /// for the estimator's errors its margins are set beside.
    pub fn new(
        capacity: &AnalysedCapacity,
        verdicts: &SiteVerdicts,
        records: &[results::Analysed],
    ) -> Self {
        let (record, tables) = (&capacity.record, &capacity.tables);
        let p = &record.provenance;
        Self {
            href: HREF.into(),
            json_href: format!("data/{}", results::CAPACITY_FILE),
            cards: tables
                .cards
                .iter()
                .map(|c| CardHead {
                    name: c.name.clone(),
                    mib: format::thousands(c.reported_mib),
                    claim: crate::claims::card(&c.name),
                })
                .collect(),
            card_source: card_source(),
            many_cards: tables.many_cards.name.clone(),
            shardings: tables.shardings.clone(),
            sharding_source: SHARDING_SOURCE.into(),
            models: tables
                .models
                .iter()
                .map(|m| ModelTable {
                    id: m.id.clone(),
                    assumes: m.assumes.clone(),
                    params: params(m.params),
                    fixed: format::bytes(m.fixed_bytes),
                    activations: format::bytes(m.activation_bytes_per_sample),
                    micro_batches: m.micro_batches,
                    rows: m
                        .rows
                        .iter()
                        .map(|r| ComboView {
                            combination: r.combination.clone(),
                            peak_at_one: format::bytes(r.peak_bytes_at_one),
                            cells: r
                                .largest_batch_per_card
                                .iter()
                                .chain(&r.largest_batch_many_cards)
                                .map(|b| batch(*b))
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
            weights: tables
                .weights
                .iter()
                .map(|w| WeightsView {
                    model: w.model.clone(),
                    bits: w.bits,
                    packed: format::bytes(w.packed_bytes),
                    flex: format::bytes(w.flex_bytes),
                })
                .collect(),
            decisions: decisions(tables),
            readers: readers(&tables.readers, verdicts),
            fits: record.fits.iter().map(fit_view).collect(),
            fits_note: fits_note(capacity),
            per_param: PerParam {
                optimizers: tables
                    .calculator
                    .optimizers
                    .iter()
                    .map(|o| o.name.clone())
                    .collect(),
                rows: tables
                    .bytes_per_param
                    .iter()
                    .map(|(p, bytes)| {
                        (
                            p.clone(),
                            bytes.iter().map(|b| format!("{b:.0} B")).collect(),
                        )
                    })
                    .collect(),
            },
            ways: tables
                .ways
                .iter()
                .map(|w| WaysView {
                    id: w.id.clone(),
                    about: match w.seq {
                        Some(seq) => format!(
                            "{} parameters, sequence {}",
                            format::thousands(w.params),
                            format::thousands(seq as u64)
                        ),
                        None => format!("{} parameters", format::thousands(w.params)),
                    },
                    rows: w
                        .rows
                        .iter()
                        .map(|r| WayView {
                            warning: verdicts
                                .way_status(&r.fixes)
                                .into_failures()
                                .unwrap_or_default(),
                            warning_short: failed_short(&r.fixes, verdicts),
                            way: r.way.clone(),
                            fixed: format::bytes(r.fixed_bytes),
                            cells: r
                                .largest_batch_per_card
                                .iter()
                                .zip(&tables.cards)
                                .map(|(b, c)| claimed_batch(*b, &c.name, &w.id, &r.way))
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
            bigger_card: bigger_card(tables),
            calculator_json: serde_json::to_string(&tables.calculator)
                .expect("the rules serialise")
                .replace("</", "<\\/"),
            calculator_checks_json: calculator_checks(&tables.calculator, verdicts),
            context: format::bytes(tables.calculator.context_bytes),
            margins: tables
                .calculator
                .precisions
                .iter()
                .map(|p| margin_words(p, worst_under(records, &p.name).as_ref()))
                .collect::<Vec<_>>()
                .join(", "),
            margin_sources: tables
                .calculator
                .precisions
                .iter()
                .filter_map(|p| worst_under(records, &p.name).map(|w| margin_source(p, w)))
                .collect::<Vec<_>>()
                .join("; "),
            margin_short: tables.calculator.precisions.iter().any(|p| {
                worst_under(records, &p.name).is_some_and(|w| -w.error_pct > 100.0 * p.margin)
            }),
            made_by: format!(
                "workbench {} at {}, {} profile, fit on {}, {} ({} cores), {}",
                p.workbench_version,
                p.git_commit,
                record.profile.name(),
                record.device.name(),
                p.cpu_model,
                p.cpu_cores,
                p.started_at
            ),
        }
    }
}

/// The step the guide's sets under-estimated most in the estimator's precision `regime`: its
/// error (negative), its name and its page's title and device; none where no step of that
/// regime ran above its estimate.
pub struct WorstUnder {
    /// The estimate's error, in percent of the measurement.
    pub error_pct: f64,
    /// What was estimated (`step peak, regime, bf16 storage`).
    pub quantity: String,
    /// The page's title.
    pub page: String,
    /// The device measured.
    pub device: String,
}

/// The worst under-estimate of the steps in `regime` over `records`.
pub fn worst_under(records: &[results::Analysed], regime: &str) -> Option<WorstUnder> {
    records
        .iter()
        .flat_map(|r| r.estimator.iter().map(move |c| (r, c)))
        .filter(|(_, c)| c.regime.as_deref() == Some(regime) && c.error_pct() < 0.0)
        .min_by(|a, b| a.1.error_pct().total_cmp(&b.1.error_pct()))
        .map(|(r, c)| WorstUnder {
            error_pct: c.error_pct(),
            quantity: c.quantity.clone(),
            page: r.title.clone(),
            device: r.device.kind.name().into(),
        })
}

/// A precision's margin beside the worst under-estimate measured in it (`15% in bf16 (worst
/// measured -11.8%)`), said to be smaller where it is.
fn margin_words(p: &PrecisionRule, worst: Option<&WorstUnder>) -> String {
    let margin = format!("{:.0}% in {}", 100.0 * p.margin, p.name);
    match worst {
        None => format!("{margin} (none measured under)"),
        Some(w) if -w.error_pct > 100.0 * p.margin => {
            format!("{margin} (worst {}: may not fit)", format::pct(w.error_pct))
        }
        Some(w) => format!("{margin} (worst {})", format::pct(w.error_pct)),
    }
}

/// Where a precision's worst under-estimate was measured.
fn margin_source(p: &PrecisionRule, w: WorstUnder) -> String {
    format!(
        "{} in {}: {} on {} ({})",
        format::pct(w.error_pct),
        p.name,
        w.quantity,
        w.page,
        w.device
    )
}

/// Where each card's figure comes from, in a sentence.
fn card_source() -> String {
    format!(
        "Each card is the memory its driver reports (nvidia-smi's memory.total, as public logs \
         of each card print it; where cards of one size differ, the smaller): {}. `workbench \
         estimate --card` reads a size printed on the box (12GB) as that card, and any other \
         size as written.",
        results::cards::ALL
            .iter()
            .map(|c| format!(
                "{} ({}), {} MiB ({})",
                c.class,
                c.models,
                format::thousands(c.reported_mib),
                format::bytes(c.bytes())
            ))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// When a bigger card is the fix: the fixed part alone over the card's usable bytes, or over
/// them less one micro-batch's activations; with the cards' sizes.
fn bigger_card(tables: &EstimatorTables) -> String {
    let sizes: Vec<String> = tables.cards.iter().map(|c| c.name.clone()).collect();
    let many = &tables.many_cards;
    format!(
        "Move to a bigger card when the fixed part alone (weights, gradients and optimizer \
         state: the table's \"fixed\" column) is over the card's usable bytes, or over them \
         less one micro-batch's activations: no technique that saves activations changes it. \
         The cards here: {}; then {} ({} in all), where sharding splits the fixed part (the \
         folds below).",
        sizes.join(", "),
        many.name,
        format::bytes(many.bytes * many.count as f64)
    )
}

/// The decision list: which technique to add for which shortfall, and when only a larger card
/// or several help, each step stated with the estimator's figures for a preset it decides.
fn decisions(tables: &EstimatorTables) -> Vec<String> {
    let models = &tables.models;
    let mut out = Vec::new();
    let find = |id: &str| models.iter().find(|m| m.id == id);
    out.push(
        "Measure first: the step's peak is the fixed part (weights, gradients and optimizer \
         state, whatever the batch) plus the activations of one micro-batch. Which of the two is \
         over the card decides what helps."
            .to_string(),
    );
    if let Some(m) = find("gpt2-1.5b") {
        let on = |i: usize| -> Vec<String> {
            m.rows
                .iter()
                .map(|r| {
                    format!(
                        "{}: {}",
                        r.combination,
                        batch_words(r.largest_batch_per_card[i])
                    )
                })
                .collect()
        };
        let card = tables
            .cards
            .iter()
            .position(|c| c.name == "24 GB")
            .unwrap_or(0);
        out.push(format!(
            "The activations are over the card (the fixed part fits): lower the batch, or keep \
             the effective batch and accumulate over micro-batches (it divides the activations by \
             k and adds one set of gradients); checkpoint (it keeps a fraction of each block's \
             activations and recomputes the rest in backward); mixed bf16 (it halves the \
             activations and adds a 16-bit copy of the weights). Which first: the order below, \
             the landing page's. For {} ({} parameters, {} fixed in f32 with Adam, {} of \
             activations per sequence) on a {} card: {}.",
            m.id,
            m.params,
            format::bytes(m.fixed_bytes),
            format::bytes(m.activation_bytes_per_sample),
            tables.cards[card].name,
            on(card).join("; ")
        ));
    }
    for m in models {
        let best_on = |i: usize| {
            m.rows
                .iter()
                .filter_map(|r| r.largest_batch_per_card[i].map(|b| (r.combination.clone(), b)))
                .max_by_key(|(_, b)| *b)
        };
        let plain = m.rows.first().and_then(|r| {
            tables
                .cards
                .iter()
                .zip(&r.largest_batch_per_card)
                .find_map(|(c, b)| b.map(|b| (c.name.as_str(), b)))
        });
        let any = tables
            .cards
            .iter()
            .enumerate()
            .find_map(|(i, c)| best_on(i).map(|(name, b)| (c.name.as_str(), name, b)));
        let text = match (plain, any) {
            (Some((card, b)), _) => format!(
                "{}: plain training fits from the {card} card (batch {b}); its fixed part is {}.",
                m.id,
                format::bytes(m.fixed_bytes)
            ),
            (None, Some((card, combination, b))) => format!(
                "{}: no single card trains it plainly; {combination} fits from the {card} card \
                 (batch {b}).",
                m.id
            ),
            (None, None) => {
                let sharded = tables.shardings.iter().enumerate().find_map(|(i, s)| {
                    m.rows
                        .iter()
                        .filter_map(|r| {
                            r.largest_batch_many_cards[i].map(|b| (r.combination.clone(), b))
                        })
                        .max_by_key(|(_, b)| *b)
                        .map(|(c, b)| (s.as_str(), c, b))
                });
                match sharded {
                    Some((scheme, combination, b)) => format!(
                        "{}: its fixed part ({}) is over every single card, and no technique \
                         that saves activations changes it: only sharding helps. The first \
                         scheme that trains it on {} is {scheme}, with {combination} (batch {b}).",
                        m.id,
                        format::bytes(m.fixed_bytes),
                        tables.many_cards.name
                    ),
                    None => format!(
                        "{}: its fixed part ({}) is over every card here and over {} whatever \
                         the sharding: more cards, or less state per parameter (bf16 storage, \
                         a lighter optimizer).",
                        m.id,
                        format::bytes(m.fixed_bytes),
                        tables.many_cards.name
                    ),
                }
            }
        };
        out.push(text);
    }
    out
}
