//! The "What fits" page's view model: the estimator's tables for the presets and common cards,
//! `fit`'s measured searches, and the decision list, formatted from a
//! [`CapacityRecord`]. Templates do no arithmetic.

use results::capacity::{CapacityRecord, MeasuredFit};
use results::format;
use serde::Serialize;

/// The page's file name.
pub const HREF: &str = "what-fits.html";

/// Everything the page shows.
#[derive(Debug, Serialize)]
pub struct WhatFits {
    /// The page's file name.
    pub href: String,
    /// Link to the record.
    pub json_href: String,
    /// Names of the single cards, the tables' columns.
    pub cards: Vec<String>,
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

/// A table cell: the batch, or "does not fit".
#[derive(Debug, Serialize)]
pub struct Cell {
    /// The text.
    pub text: String,
    /// Whether nothing fits.
    pub none: bool,
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

/// Decimal gigabytes, the unit cards are sold in.
fn gb(bytes: f64) -> String {
    if bytes >= 1e9 {
        format!("{:.1} GB", bytes / 1e9)
    } else {
        format::bytes(bytes)
    }
}

fn batch(b: Option<u64>) -> Cell {
    match b {
        Some(b) => Cell {
            text: b.to_string(),
            none: false,
        },
        None => Cell {
            text: "does not fit".into(),
            none: true,
        },
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

fn fit_view(f: &MeasuredFit) -> FitView {
    let found = f.found_phrase();
    let verified = f.verified_phrase();
    FitView {
        model: f.model.clone(),
        technique: f.technique.clone(),
        budget: format::bytes(f.budget_bytes as f64),
        found,
        verified,
        estimated: f
            .estimated_batch
            .map_or("does not fit".into(), |b| format!("batch {b}")),
        miss: f.estimate_miss_pct.map_or("n/a".into(), format::pct),
        off: f.estimate_miss_pct.is_some_and(|p| p.abs() > 10.0),
        cost: format!("{} tries, {}", f.tries, format::seconds(f.wall_s)),
    }
}

impl WhatFits {
    /// The page of `record`.
    pub fn new(record: &CapacityRecord) -> Self {
        let p = &record.provenance;
        Self {
            href: HREF.into(),
            json_href: format!("data/{}", results::CAPACITY_FILE),
            cards: record.cards.iter().map(|c| c.name.clone()).collect(),
            many_cards: record.many_cards.name.clone(),
            shardings: record.shardings.clone(),
            sharding_source: record.sharding_source.clone(),
            models: record
                .models
                .iter()
                .map(|m| ModelTable {
                    id: m.id.clone(),
                    assumes: m.assumes.clone(),
                    params: params(m.params),
                    fixed: gb(m.fixed_bytes),
                    activations: gb(m.activation_bytes_per_sample),
                    micro_batches: m.micro_batches,
                    rows: m
                        .rows
                        .iter()
                        .map(|r| ComboView {
                            combination: r.combination.clone(),
                            peak_at_one: gb(r.peak_bytes_at_one),
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
            weights: record
                .weights
                .iter()
                .map(|w| WeightsView {
                    model: w.model.clone(),
                    bits: w.bits,
                    packed: gb(w.packed_bytes),
                    flex: gb(w.flex_bytes),
                })
                .collect(),
            decisions: record.decisions.clone(),
            fits: record.fits.iter().map(fit_view).collect(),
            fits_note: record.fits_note.clone(),
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
