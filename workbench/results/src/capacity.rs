//! What fits: the estimator's answers for named models on common cards, and `workbench fit`'s
//! measured answers on this machine, as one record (`data/what-fits.json`).
//!
//! Question: which batch of which model trains on which card, with which techniques, and how
//! far can that answer be trusted?
//! Method: the estimator's byte rules (the experiments' predictions, one source of truth) over
//! presets and cards; `fit` runs the training step under a budget and searches for the largest
//! batch that fits, from the estimator's guess.
//! Answer: the guide's "What fits" page renders this record; the estimator's error over every
//! measured training step is read from the experiments' records beside it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::DeviceKind;
use crate::error::LoadError;
use crate::point::Profile;
use crate::record::Provenance;

/// The record's file name in a guide's `data/` folder.
pub const CAPACITY_FILE: &str = "what-fits.json";

/// The schema version of [`CapacityRecord`].
pub const CAPACITY_SCHEMA_VERSION: u32 = 1;

/// The estimator's tables and `fit`'s measurements of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityRecord {
    /// [`CAPACITY_SCHEMA_VERSION`] at the time of writing.
    pub schema_version: u32,
    /// Where and with what.
    pub provenance: Provenance,
    /// The run's profile.
    pub profile: Profile,
    /// The device `fit` ran on.
    pub device: DeviceKind,
    /// The single cards of the tables, in order.
    pub cards: Vec<CardColumn>,
    /// The multi-card setup (`8 x 96 GB`).
    pub many_cards: CardColumn,
    /// How the multi-card setup shares the step, in the order of
    /// [`CombinationFit::largest_batch_many_cards`].
    pub shardings: Vec<String>,
    /// Where each sharding scheme's rule comes from.
    pub sharding_source: String,
    /// One table per preset.
    pub models: Vec<ModelCapacity>,
    /// Weights for inference at 16, 8 and 4 bits, per preset.
    pub weights: Vec<WeightsRow>,
    /// What to do for a given shortfall, each sentence with the estimator's figures.
    pub decisions: Vec<String>,
    /// `fit`'s searches (none where the run did not measure them: see `fits_note`).
    pub fits: Vec<MeasuredFit>,
    /// How `fit` was run, or why it was not.
    pub fits_note: String,
}

/// A card, or a group of cards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardColumn {
    /// Its name (`80 GB`, `8 x 96 GB`).
    pub name: String,
    /// Memory of one card, in bytes.
    pub bytes: f64,
    /// Cards.
    pub count: usize,
}

/// A preset's table: each combination of techniques, its step peak at one sample per
/// micro-batch, and the largest batch on each card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCapacity {
    /// The preset's id (`llama-7b-like`).
    pub id: String,
    /// What the preset assumes.
    pub assumes: String,
    /// Parameters.
    pub params: u64,
    /// Weights, gradients and Adam state in f32: held whatever the batch.
    pub fixed_bytes: f64,
    /// What the forward pass keeps per sample (sequence) in f32, at its peak.
    pub activation_bytes_per_sample: f64,
    /// Micro-batches of the accumulating combinations.
    pub micro_batches: usize,
    /// One row per combination.
    pub rows: Vec<CombinationFit>,
}

/// One combination of techniques for one preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CombinationFit {
    /// The combination (`accumulation + checkpointing`).
    pub combination: String,
    /// The step's peak at a batch of one micro-batch of one sample, in bytes.
    pub peak_bytes_at_one: f64,
    /// The largest batch on each single card (`None`: not even one sample).
    pub largest_batch_per_card: Vec<Option<u64>>,
    /// The largest batch over the multi-card setup per sharding scheme.
    pub largest_batch_many_cards: Vec<Option<u64>>,
}

/// A preset's weights for inference at a number of bits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightsRow {
    /// The preset.
    pub model: String,
    /// Parameters.
    pub params: u64,
    /// Bits per weight.
    pub bits: u32,
    /// Bytes as CubeCL backends store them (4 and 8 bits packed into u32 words; scales not
    /// counted).
    pub packed_bytes: f64,
    /// Bytes as Flex stores them (every quantized value in a byte).
    pub flex_bytes: f64,
}

/// One `fit` search: the largest batch under a budget, verified, beside the estimator's guess.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredFit {
    /// The model (`mlp 4x256`).
    pub model: String,
    /// The techniques applied (`accumulation+checkpointing`).
    pub technique: String,
    /// The budget, in bytes.
    pub budget_bytes: u64,
    /// The estimator's largest batch: the search's start.
    pub estimated_batch: Option<u64>,
    /// The largest batch that ran under the budget (`None`: not even the smallest).
    pub found_batch: Option<u64>,
    /// The next larger batch tried, which ran out of the budget.
    pub next_fails_at: Option<u64>,
    /// The estimator's guess against the batch found, in percent (positive: the guess was too
    /// large).
    pub estimate_miss_pct: Option<f64>,
    /// Training steps run by the search.
    pub tries: usize,
    /// The search's wall time, in seconds.
    pub wall_s: f64,
}

impl MeasuredFit {
    /// The batch found, in words (`batch 5113`, `does not fit`).
    pub fn found_phrase(&self) -> String {
        self.found_batch
            .map_or("does not fit".into(), |b| format!("batch {b}"))
    }

    /// The verification, in words: the batch found ran under the budget, the next larger did
    /// not.
    pub fn verified_phrase(&self) -> String {
        match (self.found_batch, self.next_fails_at) {
            (Some(b), Some(n)) => format!("{b} ran under the budget, {n} did not"),
            (Some(b), None) => format!("{b} ran under the budget (the search's ceiling)"),
            (None, Some(n)) => format!("{n} did not run under the budget"),
            (None, None) => String::new(),
        }
    }
}

impl CapacityRecord {
    /// The record as pretty JSON, as it is written to disk.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("records serialise") + "\n"
    }

    /// Reads a record, with errors that name the file.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        crate::record::load_versioned(path, CAPACITY_SCHEMA_VERSION..=CAPACITY_SCHEMA_VERSION)
    }

    /// The first record found at the top of `dirs` (a guide's `data/` folders), if any.
    pub fn find(dirs: &[PathBuf]) -> Result<Option<Self>, LoadError> {
        for dir in dirs {
            let path = dir.join(CAPACITY_FILE);
            if path.is_file() {
                return Self::load(&path).map(Some);
            }
        }
        Ok(None)
    }
}
