//! What fits: `workbench fit`'s measured answers on this machine, as one record
//! (`data/what-fits.json`), and the estimator's tables for named models on common cards, which
//! are derived when the guide is rendered ([`EstimatorTables`]) and never stored.
//!
//! Question: which batch of which model trains on which card, with which techniques, and how
//! far can that answer be trusted?
//! Method: the estimator's byte rules (the experiments' predictions, one source of truth) over
//! presets and cards; `fit` runs the training step under a budget and searches for the largest
//! batch that fits, from the estimator's guess.
//! Answer: the guide's "What fits" page renders the record beside the tables; the estimator's
//! error over every measured training step is read from the experiments' records.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::DeviceKind;
use crate::error::LoadError;
use crate::point::Profile;
use crate::record::Provenance;

/// The record's file name in a guide's `data/` folder.
pub const CAPACITY_FILE: &str = "what-fits.json";

/// The schema version of [`CapacityRecord`].
/// 2: `fit`'s searches only; the estimator's tables and the decision list are derived at
/// render time. A version 1 record loads with those ignored.
/// 3: a search names its model by its shape ([`FitModel`]) rather than in words, and keeps no
/// estimate error (derived from the estimated and found batches).
pub const CAPACITY_SCHEMA_VERSION: u32 = 3;

/// `fit`'s searches of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityRecord {
    /// [`CAPACITY_SCHEMA_VERSION`] at the time of writing.
    pub schema_version: u32,
    /// Where and with what.
    pub provenance: Provenance,
    /// The run's profile: only the full profile on the CPU runs the searches.
    pub profile: Profile,
    /// The device `fit` ran on.
    pub device: DeviceKind,
    /// The budget the searches run under, in bytes.
    pub fit_budget_bytes: u64,
    /// Micro-batches of the accumulating searches.
    pub fit_micro_batches: usize,
    /// `fit`'s searches (none where the run did not measure them).
    pub fits: Vec<MeasuredFit>,
    /// Why a search could not run (the child's error), where one could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_error: Option<String>,
}

/// The estimator's tables for the presets and common cards: a pure function of the byte rules,
/// computed when the guide is rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimatorTables {
    /// The single cards of the tables, in order.
    pub cards: Vec<CardColumn>,
    /// The multi-card setup (`8 x 96 GB`).
    pub many_cards: CardColumn,
    /// How the multi-card setup shares the step, in the order of
    /// [`CombinationFit::largest_batch_many_cards`].
    pub shardings: Vec<String>,
    /// One table per preset.
    pub models: Vec<ModelCapacity>,
    /// Weights for inference at 16, 8 and 4 bits, per preset.
    pub weights: Vec<WeightsRow>,
    /// The rules' constants, for the page's calculator.
    pub calculator: CalculatorRules,
    /// Per preset, the largest batch per card in each of the common ways to train it.
    pub ways: Vec<PresetWays>,
    /// Bytes per parameter (weights, gradients, optimizer state, weight copies): one row per
    /// precision, one value per optimizer in [`CalculatorRules::optimizers`]' order.
    pub bytes_per_param: Vec<(String, Vec<f64>)>,
    /// The two questions people bring most often, answered from the same rules.
    pub readers: ReaderTables,
}

/// Fine-tuning a small Llama on a consumer card, and running a 7B model for inference on a
/// smaller one: the estimator's answers, derived when the guide renders.
#[derive(Debug, Clone, PartialEq)]
pub struct ReaderTables {
    /// The fine-tuning preset.
    pub fine_tune_model: String,
    /// Its card.
    pub fine_tune_card: crate::cards::Card,
    /// Tokens per sequence of the fine-tuning rows.
    pub fine_tune_seq: usize,
    /// One row per way to fine-tune.
    pub fine_tune: Vec<FineTuneRow>,
    /// The inference preset.
    pub inference_model: String,
    /// Its card.
    pub inference_card: crate::cards::Card,
    /// Tokens of context the rows are asked at.
    pub inference_context: usize,
    /// One row per weight width.
    pub inference: Vec<InferenceRow>,
}

/// One way to fine-tune on the card.
#[derive(Debug, Clone, PartialEq)]
pub struct FineTuneRow {
    /// Its name (`LoRA rank 16, mixed bf16, checkpointing`).
    pub way: String,
    /// The bytes it may use of the card.
    pub usable_bytes: f64,
    /// Weights, gradients, optimizer state and weight copies.
    pub fixed_bytes: f64,
    /// The step peak at one sequence.
    pub one_sequence_bytes: f64,
    /// The largest batch at the rows' sequence.
    pub largest_batch: Option<u64>,
    /// The longest sequence at batch 1.
    pub longest_seq: Option<u64>,
    /// The ranked fixes it applies (bf16 storage, checkpointing, memory-efficient
    /// attention): the guide carries their verdicts beside it.
    pub fixes: Vec<crate::verdict::Fix>,
}

/// One weight width for inference on the card.
#[derive(Debug, Clone, PartialEq)]
pub struct InferenceRow {
    /// Bits per weight.
    pub weight_bits: u32,
    /// The bytes it may use of the card.
    pub usable_bytes: f64,
    /// The weights.
    pub weight_bytes: f64,
    /// The key/value cache at the asked context.
    pub kv_cache_bytes: f64,
    /// The peak at the asked context.
    pub peak_bytes: f64,
    /// The longest context that fits.
    pub longest_context: Option<u64>,
}

/// A preset trained plainly in each of the common ways: f32 Adam, mixed bf16 Adam, pure bf16
/// Adam, f32 SGD with momentum.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetWays {
    /// The preset.
    pub id: String,
    /// Its parameters.
    pub params: u64,
    /// Tokens per sequence (none for the MLP).
    pub seq: Option<usize>,
    /// One row per way.
    pub rows: Vec<WayFit>,
}

/// One way to train a preset.
#[derive(Debug, Clone, PartialEq)]
pub struct WayFit {
    /// Its name (`mixed bf16, Adam`).
    pub way: String,
    /// Bytes per parameter of weights, gradients, optimizer state and weight copies.
    pub bytes_per_param: f64,
    /// Those bytes for the whole model: what no batch size changes.
    pub fixed_bytes: f64,
    /// The largest batch per single card (its usable bytes), in the cards' order.
    pub largest_batch_per_card: Vec<Option<u64>>,
    /// The ranked fixes it applies, whose checks the page sets beside it.
    pub fixes: Vec<crate::verdict::Fix>,
}

/// What the "What fits" page's calculator needs to compute the estimator's rules in the
/// reader's browser: the rules themselves as programs (the estimator's rules run on symbols,
/// every operation recorded: no copy of a rule in the page), and the names and numbers they are
/// run with. A test holds the page's answers to `workbench estimate --json`'s, bit for bit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalculatorRules {
    /// The estimator's programs by name (`training/llama-lora/balanced`, `inference/gpt`,
    /// `usable`): each a list of nodes (a constant, an input, or an operation on earlier nodes)
    /// and its outputs' nodes.
    pub programs: serde_json::Value,
    /// Bytes a CUDA card loses before the first tensor (shown beside the answers).
    pub context_bytes: f64,
    /// The largest batch a search tries.
    pub max_batch: u64,
    /// The share of a card inference leaves free for the estimator's error.
    pub inference_margin: f64,
    /// The longest context an inference search tries.
    pub max_context: u64,
    /// The precisions, in the estimator's order.
    pub precisions: Vec<PrecisionRule>,
    /// The optimizers, in the estimator's order.
    pub optimizers: Vec<OptimizerRule>,
    /// The combinations of techniques, in the estimator's order.
    pub combinations: Vec<CombinationRule>,
    /// The chunks burn-memory-efficient's forms run at, by their programs' input names.
    pub chunks: std::collections::BTreeMap<String, usize>,
    /// The single cards.
    pub cards: Vec<CardColumn>,
    /// Every card the guide defines (8 to 141 GB), the form's "your card" choice.
    pub every_card: Vec<CardColumn>,
    /// The transformer presets, to fill the form.
    pub presets: Vec<PresetShape>,
}

/// One precision's bytes per value and safety margin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrecisionRule {
    /// Its name (`mixed-bf16`).
    pub name: String,
    /// Bytes of a stored parameter, gradient and optimizer value.
    pub param_bytes: f64,
    /// Bytes of a kept activation value.
    pub activation_bytes: f64,
    /// Bytes of the 16-bit weight copy kept for backward.
    pub weight_copy_bytes: f64,
    /// Share of a card (after the context) kept free for the estimator's error.
    pub margin: f64,
}

/// One optimizer's state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptimizerRule {
    /// Its name (`adam`).
    pub name: String,
    /// Values it keeps per parameter.
    pub values_per_param: f64,
}

/// One combination of techniques.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CombinationRule {
    /// Its name (`accumulation + checkpointing`).
    pub name: String,
    /// Whether it accumulates gradients.
    pub accumulation: bool,
    /// Whether it checkpoints.
    pub checkpointing: bool,
    /// Whether it trains in mixed bf16.
    pub mixed: bool,
    /// The suffix of its training programs' names: burn-memory-efficient's form (empty:
    /// Burn's attention and loss).
    pub form: String,
    /// The ranked fixes it applies at each precision's name (a mixed combination at f32 runs
    /// in mixed bf16), whose checks the calculator sets beside it.
    pub fixes_by_precision: std::collections::BTreeMap<String, Vec<crate::verdict::Fix>>,
}

/// A transformer preset's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PresetShape {
    /// Its id (`gpt2-124m`).
    pub id: String,
    /// Blocks.
    pub layers: usize,
    /// Width.
    pub d_model: usize,
    /// Heads.
    pub heads: usize,
    /// Vocabulary.
    pub vocab: usize,
    /// Tokens per sequence.
    pub seq: usize,
    /// Whether the head is tied to the token embedding.
    pub tied_head: bool,
    /// Key/value heads of a Llama-family preset (none: the GPT-style block).
    pub kv_heads: Option<usize>,
    /// The SwiGLU width of a Llama-family preset.
    pub mlp: Option<usize>,
}

/// The "What fits" page's input: the measured searches and the tables beside them.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysedCapacity {
    /// What was measured.
    pub record: CapacityRecord,
    /// What the estimator derives.
    pub tables: EstimatorTables,
}

/// A card, or a group of cards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardColumn {
    /// Its name (`80 GB`, `8 x 96 GB`).
    pub name: String,
    /// The cards whose driver reports its memory (`RTX 4090, RTX 3090`).
    pub models: String,
    /// Memory of one card as its driver reports it, in MiB.
    pub reported_mib: u64,
    /// Memory of one card, in bytes.
    pub bytes: f64,
    /// Cards.
    pub count: usize,
}

/// A preset's table: each combination of techniques, its step peak at one sample per
/// micro-batch, and the largest batch on each card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCapacity {
    /// The preset's id (`llama-2-7b`).
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

/// The model a `fit` search trained, by its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FitModel {
    /// An MLP of `depth` hidden layers of `width`.
    Mlp {
        /// Hidden layers.
        depth: usize,
        /// Their width.
        width: usize,
    },
    /// A decoder-only transformer.
    Transformer {
        /// Blocks.
        layers: usize,
        /// Model width.
        d_model: usize,
        /// Sequence length, in tokens.
        seq: usize,
        /// Vocabulary.
        vocab: usize,
    },
}

/// One `fit` search: the largest batch under a budget, verified, beside the estimator's guess.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredFit {
    /// The model.
    pub model: FitModel,
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
    /// Training steps run by the search.
    pub tries: usize,
    /// The search's wall time, in seconds.
    pub wall_s: f64,
}

impl MeasuredFit {
    /// The estimator's guess against the batch found ([`estimate_miss_pct`]).
    pub fn estimate_miss_pct(&self) -> Option<f64> {
        estimate_miss_pct(self.found_batch, self.estimated_batch)
    }
}

/// The estimator's guess against the batch a search found, in percent (positive: the guess was
/// too large), where both exist.
pub fn estimate_miss_pct(found: Option<u64>, estimated: Option<u64>) -> Option<f64> {
    found
        .zip(estimated)
        .map(|(found, guess)| crate::format::diff_pct(found as f64, guess as f64))
}

impl CapacityRecord {
    /// The record as pretty JSON, as it is written to disk.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("records serialise") + "\n"
    }

    /// Reads a record, with errors that name the file. A version 1 record's tables, decisions
    /// and note are ignored; its searches all ran under one budget, which it names.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let mut record: Self = crate::record::parse_versioned(
            &text,
            path,
            1..=CAPACITY_SCHEMA_VERSION,
            |value, v| {
                if v == 1 {
                    capacity_from_v1(value);
                }
                if v <= 2 {
                    fit_models_from_v2(value);
                }
            },
        )?;
        record.schema_version = CAPACITY_SCHEMA_VERSION;
        Ok(record)
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

/// Version 2 and older named each search's model in words (`mlp 4x256`, `transformer 2x64 (seq
/// 64, vocab 256)`); version 3 keeps its shape. A name this reader does not know fails the load
/// as malformed, naming the field.
fn fit_models_from_v2(value: &mut serde_json::Value) {
    let Some(fits) = value.get_mut("fits").and_then(|f| f.as_array_mut()) else {
        return;
    };
    for fit in fits {
        let Some(map) = fit.as_object_mut() else {
            continue;
        };
        map.remove("estimate_miss_pct");
        if let Some(model) = map
            .get("model")
            .and_then(|m| m.as_str())
            .and_then(fit_model_of_v2)
        {
            map.insert(
                "model".into(),
                serde_json::to_value(model).expect("shapes serialise"),
            );
        }
    }
}

/// The shape a version 2 model name says.
fn fit_model_of_v2(name: &str) -> Option<FitModel> {
    let numbers: Vec<usize> = name
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    match (name.split_whitespace().next()?, numbers.as_slice()) {
        ("mlp", &[depth, width]) => Some(FitModel::Mlp { depth, width }),
        ("transformer", &[layers, d_model, seq, vocab]) => Some(FitModel::Transformer {
            layers,
            d_model,
            seq,
            vocab,
        }),
        _ => None,
    }
}

/// Version 1 stored the estimator's tables and a note in words; version 2 keeps the searches'
/// budget and micro-batches as numbers (every version 1 run searched under 64 MiB over 4
/// micro-batches) and the error of a search that could not run.
fn capacity_from_v1(value: &mut serde_json::Value) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    let budget = map
        .get("fits")
        .and_then(|f| f.get(0))
        .and_then(|f| f.get("budget_bytes"))
        .and_then(|b| b.as_u64())
        .unwrap_or(64 << 20);
    let micro = map
        .get("models")
        .and_then(|m| m.get(0))
        .and_then(|m| m.get("micro_batches"))
        .and_then(|m| m.as_u64())
        .unwrap_or(4);
    let error = map
        .get("fits_note")
        .and_then(|n| n.as_str())
        .and_then(|n| n.split_once("could not run in this run: "))
        .map(|(_, e)| e.to_string());
    map.insert("fit_budget_bytes".into(), budget.into());
    map.insert("fit_micro_batches".into(), micro.into());
    if let Some(error) = error {
        map.insert("fit_error".into(), error.into());
    }
}

#[cfg(test)]
mod tests {
    use super::{fit_model_of_v2, FitModel};

    #[test]
    fn a_version_2_model_name_reads_back_as_its_shape() {
        assert_eq!(
            fit_model_of_v2("mlp 4x256"),
            Some(FitModel::Mlp {
                depth: 4,
                width: 256
            })
        );
        assert_eq!(
            fit_model_of_v2("transformer 2x64 (seq 64, vocab 256)"),
            Some(FitModel::Transformer {
                layers: 2,
                d_model: 64,
                seq: 64,
                vocab: 256
            })
        );
        assert_eq!(fit_model_of_v2("resnet 50"), None);
    }
}
