//! What fits on the reader's card: the byte rules of [`crate::estimate`] carried to named
//! models, common cards and several cards.
//!
//! Question: for a model, a precision, an optimizer and a batch, how many bytes does a training
//! step need at its peak, with each technique and combination, and which cards hold it?
//! Method: the same [`StepPlan`] rules every technique's page checks against its measurements
//! (one source of truth: a prediction the guide checks is a check of this estimator); the
//! largest batch that fits by bisection on those rules (the peak never falls as the batch
//! grows); data parallelism and ZeRO-style sharding from the ZeRO paper's formulas
//! (Rajbhandari et al., 2020: stage 1 shards optimizer state, stage 2 also gradients, stage 3
//! also weights), not measured here (burn-train 0.22.1's `OptimSharded` shards the optimizer's
//! step, stage 1's column; Burn has no stage 2 or 3); quantized weights for inference at their packed
//! size on CubeCL (Flex stores each quantized value in a byte).
//! Answer: `workbench estimate` prints it; the "What fits" page tabulates it for the presets.

use results::capacity::{
    CalculatorRules, CardColumn, CombinationFit, CombinationRule, EstimatorTables, ModelCapacity,
    OptimizerRule, PrecisionRule, PresetShape, PresetWays, WayFit, WeightsRow,
};
use results::Fix;
use serde::{Deserialize, Serialize};

use crate::checkpointing::Checkpointing;
use crate::decoder::{self, Decoder, Generation};
use crate::estimate::{Optimizer, PeakSplit, Precision, StepBytes, StepPlan};
use crate::shapes::{Chunked, LlamaShape, LoraForm, MlpShape, ModelShape, TransformerShape};

/// A named model the estimator knows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Preset {
    /// The name given on the command line.
    pub id: &'static str,
    /// The model's shape.
    pub shape: ModelShape,
    /// What the preset assumes, said on every output.
    pub assumes: &'static str,
    /// The model it stands for, beside which the shape's own count is shown.
    pub published: &'static str,
    /// The model's published parameter count, which the shape's own equals (none for the
    /// workbench's own MLP).
    pub published_params: Option<u64>,
}

/// The block every transformer preset assumes.
pub const GPT_BLOCK: &str = "the measured GPT-style block (LayerNorm, multi-head attention as \
                             Burn 0.22 computes it, its scores materialised, or \
                             burn-memory-efficient's where a row says; a GELU MLP of 4 d, \
                             learned positions)";

/// The block every Llama-family preset assumes: the measured Llama-family block.
pub const LLAMA_BLOCK: &str = "the measured Llama-family block (RMSNorm, rotary positions, \
                               grouped-query attention, a SwiGLU MLP, no biases, an untied \
                               head; attention as Burn 0.22 computes it, its scores \
                               materialised in training, or burn-memory-efficient's where a \
                               row says)";

/// A transformer preset's shape; `tied`: the head reuses the token embedding.
fn transformer(
    layers: usize,
    d_model: usize,
    heads: usize,
    vocab: usize,
    seq: usize,
    tied: bool,
) -> ModelShape {
    ModelShape::Transformer(TransformerShape {
        chunked: Default::default(),
        vocab,
        d_model,
        layers,
        heads,
        seq,
        tied_head: tied,
    })
}

/// A Llama-family preset's shape (untied head), at `seq` tokens.
fn llama(
    layers: usize,
    d_model: usize,
    (heads, kv_heads): (usize, usize),
    mlp: usize,
    vocab: usize,
    seq: usize,
) -> ModelShape {
    ModelShape::Llama(LlamaShape {
        chunked: Default::default(),
        vocab,
        d_model,
        layers,
        heads,
        kv_heads,
        mlp,
        seq,
        tied_head: false,
        lora_rank: None,
        fused_attention: false,
        lora_form: LoraForm::ActivationPath,
        base_bits: None,
    })
}

/// The presets, smallest first. Each transformer's shape counts its model's published
/// parameters exactly (a test holds them to it); the sequence is 2,048 tokens for every
/// decoder but GPT-2's 1,024 (`--seq` changes it).
pub fn presets() -> Vec<Preset> {
    vec![
        Preset {
            id: "mlp-8x1024",
            shape: ModelShape::Mlp(MlpShape {
                depth: 8,
                width: 1024,
            }),
            assumes: "the measured MLP: Linear and ReLU layers of one width, an MSE loss",
            published: "the MLP the mechanism pages measure",
            published_params: None,
        },
        Preset {
            id: "gpt2-124m",
            shape: transformer(12, 768, 12, 50257, 1024, true),
            assumes: GPT_BLOCK,
            published: "GPT-2 small, head tied to the token embedding",
            published_params: Some(124_439_808),
        },
        Preset {
            id: "tinyllama-1.1b",
            shape: llama(22, 2048, (32, 4), 5632, 32000, 2048),
            assumes: LLAMA_BLOCK,
            published: "TinyLlama 1.1B (22 blocks, 32 heads, 4 key/value heads, SwiGLU of 5,632)",
            published_params: Some(1_100_048_384),
        },
        Preset {
            id: "gpt2-1.5b",
            shape: transformer(48, 1600, 25, 50257, 1024, true),
            assumes: GPT_BLOCK,
            published: "GPT-2 XL, head tied to the token embedding",
            published_params: Some(1_557_611_200),
        },
        Preset {
            id: "llama-2-7b",
            shape: llama(32, 4096, (32, 32), 11008, 32000, 2048),
            assumes: LLAMA_BLOCK,
            published: "Llama 2 7B (32 blocks, 32 heads, no grouped-query attention, SwiGLU of \
                        11,008)",
            published_params: Some(6_738_415_616),
        },
        Preset {
            id: "mistral-7b",
            shape: llama(32, 4096, (32, 8), 14336, 32000, 2048),
            assumes: LLAMA_BLOCK,
            published: "Mistral 7B v0.1 (32 blocks, 32 heads, 8 key/value heads, SwiGLU of \
                        14,336; its sliding window is not modelled)",
            published_params: Some(7_241_732_096),
        },
        Preset {
            id: "llama-3-8b",
            shape: llama(32, 4096, (32, 8), 14336, 128256, 2048),
            assumes: LLAMA_BLOCK,
            published: "Llama 3 8B (32 blocks, 32 heads, 8 key/value heads, SwiGLU of 14,336, \
                        vocabulary 128,256)",
            published_params: Some(8_030_261_248),
        },
        Preset {
            id: "llama-2-70b",
            shape: llama(80, 8192, (64, 8), 28672, 32000, 2048),
            assumes: LLAMA_BLOCK,
            published: "Llama 2 70B (80 blocks, 64 heads, 8 key/value heads, SwiGLU of 28,672)",
            published_params: Some(68_976_648_192),
        },
    ]
}

/// The preset named `id`.
pub fn preset(id: &str) -> Option<Preset> {
    presets().into_iter().find(|p| p.id == id)
}

/// A card, or several of one kind: one of [`results::cards::CARDS`], defined by the memory
/// its driver reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Card {
    /// The card.
    pub card: results::cards::Card,
    /// Cards (1 unless data parallel).
    pub count: usize,
}

impl Card {
    /// Memory of one card, in bytes.
    pub fn bytes(&self) -> f64 {
        self.card.bytes()
    }

    /// What it is called in tables (`24 GB`, `8 x 96 GB`).
    pub fn name(&self) -> String {
        match self.count {
            1 => self.card.class.to_string(),
            n => format!("{n} x {}", self.card.class),
        }
    }
}

/// The cards of the tables, one of each, smallest first.
pub const CARDS: [Card; 5] = {
    const fn one(card: results::cards::Card) -> Card {
        Card { card, count: 1 }
    }
    let c = results::cards::CARDS;
    [one(c[0]), one(c[1]), one(c[2]), one(c[3]), one(c[4])]
};

/// Eight 96 GB cards, for data parallelism and sharding.
pub const EIGHT_CARDS: Card = Card {
    card: results::cards::CARDS[3],
    count: 8,
};

pub use crate::decoder::CUDA_CONTEXT_BYTES;

/// The share of a card (after [`CUDA_CONTEXT_BYTES`]) left free for the estimator's own error,
/// by the precision the step stores and computes in: at least the worst under-estimate the
/// guide measures in that precision, at most 15%. On the CPU run of Burn 0.22.1 the worst
/// under-estimates were 9.8% in f32 (an MLP of depth 4 at batch 1,024 under checkpointing),
/// 8.3% in mixed bf16 and 11.8% in bf16 storage (the mixed-precision page's small models,
/// where Flex's bf16 matmuls run through f32 copies). The "What fits" page sets each margin
/// beside the worst under-estimate of the run it renders and says where one is larger.
/// Lightning's batch-size finder keeps 5%.
pub fn safety_margin(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => 0.10,
        Precision::MixedBf16 => 0.15,
        Precision::Bf16 => 0.15,
    }
}

/// The bytes of a card of `card_bytes` a step in `precision` may plan on: the card less the
/// CUDA context, less the safety margin.
pub fn usable_bytes(card_bytes: f64, precision: Precision) -> f64 {
    decoder::usable_bytes(card_bytes, safety_margin(precision))
}

/// How state is spread over several cards (formulas from the ZeRO paper; which of burn-train's
/// strategies each stands for: `guide::what_fits::SHARDING_SOURCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharding {
    /// Data parallel: every card holds the whole model, its gradients and optimizer state; the
    /// batch is split.
    DataParallel,
    /// ZeRO stage 1: optimizer state split over the cards.
    Zero1,
    /// ZeRO stage 2: optimizer state and gradients split.
    Zero2,
    /// ZeRO stage 3: optimizer state, gradients and weights split (each layer's weights
    /// gathered while it runs, a transient the formula leaves out).
    Zero3,
}

impl Sharding {
    /// Every scheme, in the order of what they split.
    pub const ALL: [Sharding; 4] = [Self::DataParallel, Self::Zero1, Self::Zero2, Self::Zero3];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::DataParallel => "data parallel",
            Self::Zero1 => "ZeRO-1 (optimizer state)",
            Self::Zero2 => "ZeRO-2 (+ gradients)",
            Self::Zero3 => "ZeRO-3 (+ weights)",
        }
    }

    /// One card's share of a step's bytes, over `cards` cards, the batch already split (its
    /// activations and inputs are one card's): the sharded components divided by `cards`.
    pub fn per_card(self, b: &StepBytes, cards: usize) -> StepBytes {
        let n = cards.max(1) as f64;
        let (opt, grads, weights) = match self {
            Self::DataParallel => (1.0, 1.0, 1.0),
            Self::Zero1 => (n, 1.0, 1.0),
            Self::Zero2 => (n, n, 1.0),
            Self::Zero3 => (n, n, n),
        };
        StepBytes {
            weights: b.weights / weights,
            optimizer: b.optimizer / opt,
            grads: b.grads / grads,
            accumulated: b.accumulated / grads,
            ..*b
        }
    }
}

/// A technique or combination of them, applied to a step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Combination {
    /// Its name in tables.
    pub name: &'static str,
    /// Whether it accumulates gradients over micro-batches.
    pub accumulation: bool,
    /// Whether it checkpoints (Burn's balanced strategy).
    pub checkpointing: bool,
    /// Whether it trains in mixed bf16.
    pub mixed: bool,
    /// What burn-memory-efficient runs in a decoder (none: Burn's attention and loss).
    pub chunked: Chunked,
}

/// Plain training, each technique alone, every combination of Burn's, and
/// burn-memory-efficient's attention, with its chunked loss, and both with mixed bf16 (a
/// decoder's: the MLP has neither).
pub const COMBINATIONS: [Combination; 11] = {
    const NONE: Chunked = Chunked {
        attention: None,
        loss: None,
    };
    const ATTENTION: Chunked = Chunked {
        attention: Some(Chunked::ATTENTION_ROWS),
        loss: None,
    };
    const BOTH: Chunked = Chunked {
        attention: Some(Chunked::ATTENTION_ROWS),
        loss: Some(Chunked::LOSS_TOKENS),
    };
    const fn c(
        name: &'static str,
        accumulation: bool,
        checkpointing: bool,
        mixed: bool,
        chunked: Chunked,
    ) -> Combination {
        Combination {
            name,
            accumulation,
            checkpointing,
            mixed,
            chunked,
        }
    }
    [
        c("plain", false, false, false, NONE),
        c("accumulation", true, false, false, NONE),
        c("checkpointing", false, true, false, NONE),
        c("mixed bf16", false, false, true, NONE),
        c("accumulation + checkpointing", true, true, false, NONE),
        c("accumulation + mixed bf16", true, false, true, NONE),
        c("checkpointing + mixed bf16", false, true, true, NONE),
        c("all three", true, true, true, NONE),
        c("memory-efficient attention", false, false, false, ATTENTION),
        c(
            "memory-efficient attention + chunked loss",
            false,
            false,
            false,
            BOTH,
        ),
        c(
            "memory-efficient attention + chunked loss + mixed bf16",
            false,
            false,
            true,
            BOTH,
        ),
    ]
};

impl Combination {
    /// The combination applied to `base`: accumulation over `micro_batches`, balanced
    /// checkpointing, mixed bf16 (over an f32 base; a bf16 base stays bf16),
    /// burn-memory-efficient's ops.
    pub fn apply(self, base: StepPlan, micro_batches: usize) -> StepPlan {
        StepPlan {
            micro_batches: if self.accumulation {
                micro_batches
            } else {
                base.micro_batches
            },
            checkpointing: if self.checkpointing {
                Checkpointing::Balanced
            } else {
                base.checkpointing
            },
            precision: if self.mixed && base.precision == Precision::F32 {
                Precision::MixedBf16
            } else {
                base.precision
            },
            shape: if self.chunked.is_none() {
                base.shape
            } else {
                base.shape.with_chunked(self.chunked)
            },
            ..base
        }
    }

    /// Whether the combination applies to `shape` (burn-memory-efficient's need a decoder).
    pub fn applies_to(&self, shape: &ModelShape) -> bool {
        self.chunked.is_none() || shape.is_transformer()
    }
}

/// The largest batch a search tries: 2^30 samples.
pub const MAX_BATCH: u64 = 1 << 30;

/// The largest batch (a multiple of `plan.micro_batches`, at most [`MAX_BATCH`]) whose step peak,
/// one card's share under `sharding` over `cards` cards (each taking `batch / cards`), is at
/// most `budget_bytes`; `None` where not even the smallest fits.
pub fn largest_batch(
    plan: StepPlan,
    budget_bytes: f64,
    sharding: Sharding,
    cards: usize,
) -> Option<u64> {
    let step = plan.micro_batches.max(1) as u64 * cards.max(1) as u64;
    let peak = |units: u64| {
        let per_card = StepPlan {
            batch: (units * step) as f64 / cards.max(1) as f64,
            ..plan
        };
        sharding.per_card(&per_card.bytes(), cards).step_peak()
    };
    if peak(1) > budget_bytes {
        return None;
    }
    let max_units = MAX_BATCH / step.max(1);
    let fits = |units: u64| Ok::<_, std::convert::Infallible>(peak(units) <= budget_bytes);
    let Ok((units, _)) = largest_fitting(1, max_units, fits);
    Some(units * step)
}

/// The largest `n` in `1..=max` for which `fits(n)` holds, where `fits` holds up to some `n`
/// and fails above it and `fits(1)` is known to hold: from `start`, doubling while it fits or
/// halving until it does, then bisecting. Returns that `n` and the smallest `n` found not to
/// fit (`None` where `max` fits). `fits` may fail (a child process that could not run); the
/// estimator's own search cannot. The one search both the estimator and `workbench fit` use.
pub fn largest_fitting<E>(
    start: u64,
    max: u64,
    mut fits: impl FnMut(u64) -> Result<bool, E>,
) -> Result<(u64, Option<u64>), E> {
    let max = max.max(1);
    let start = start.clamp(1, max);
    let (mut lo, mut hi) = (1, None);
    if start == 1 || fits(start)? {
        lo = start;
        let mut next = start.saturating_mul(2).min(max);
        while next > lo {
            if fits(next)? {
                lo = next;
                next = next.saturating_mul(2).min(max);
            } else {
                hi = Some(next);
                break;
            }
        }
    } else {
        // Halve towards 1, which fits.
        hi = Some(start);
        let mut next = start / 2;
        while next > 1 {
            if fits(next)? {
                lo = next;
                break;
            }
            hi = Some(next);
            next /= 2;
        }
    }
    if let Some(h) = hi.as_mut() {
        while *h - lo > 1 {
            let mid = lo + (*h - lo) / 2;
            if fits(mid)? {
                lo = mid;
            } else {
                *h = mid;
            }
        }
    }
    Ok((lo, hi))
}

/// Bits a quantized weight is stored in for inference.
pub const WEIGHT_BITS: [u32; 3] = [16, 8, 4];

/// The bytes of a model's weights for inference at `bits` per value: on CubeCL backends
/// packed (four 8-bit or eight 4-bit values to a `u32`, cubecl's default `PackedU32` store);
/// on Flex, which stores every quantized value in an `i8`, one byte each below 16 bits. The
/// scale is one f32 per tensor (Burn's default `QuantLevel::Tensor`), a few hundred bytes for
/// the whole model, left out.
pub fn weight_bytes(params: u64, bits: u32, packed: bool) -> f64 {
    let bytes = if packed || bits >= 8 {
        bits as f64 / 8.0
    } else {
        1.0
    };
    params as f64 * bytes
}

/// Generation as the rules see it: the weights at some bits, the key/value cache of a batch of
/// sequences of `context` tokens, and the prompt's forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InferencePlan {
    /// The model.
    pub shape: ModelShape,
    /// Sequences generated at once.
    pub batch: u64,
    /// Tokens per sequence: the prompt and what is generated.
    pub context: usize,
    /// Bits per weight (16, 8 or 4).
    pub weight_bits: u32,
    /// Bits per cached key or value (16 or 8).
    pub kv_bits: u32,
}

/// An inference plan's bytes, in parts that add up to its peak.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InferenceBytes {
    /// The weights, packed at their bits (CubeCL's store).
    pub weights: f64,
    /// The key/value cache at the full context: the rule the Llama-family page measured.
    pub kv_cache: f64,
    /// The largest layer's weights dequantized to f32 for its matmul (quantized weights only).
    pub working_copy: f64,
    /// The prompt's pass over the whole context at once, above the weights and the cache: for
    /// a Llama-family model, one block's moment in 16 bits or the f32 logits, whichever is
    /// larger ([`crate::estimate::llama_prefill_bytes`], measured on the Llama-family page on
    /// the CPU in f32 at short prompts, projected here); for a GPT-2 block, its scores and
    /// their softmax in 16 bits and the f32 logits (projected, not measured).
    pub prefill: f64,
}

impl InferenceBytes {
    /// The peak: every part held at once (the prompt's pass ends with the cache full).
    pub fn peak(&self) -> f64 {
        decoder::inference_peak([self.weights, self.kv_cache, self.working_copy, self.prefill])
    }
}

impl InferencePlan {
    /// The plan's bytes ([`decoder::inference_bytes`]; an MLP's: its weights and, quantized,
    /// the f32 copy of a layer).
    pub fn bytes(&self) -> InferenceBytes {
        let model = match self.shape {
            ModelShape::Llama(s) => Decoder::from(&s),
            ModelShape::Transformer(s) => Decoder::from(&s),
            ModelShape::Mlp(s) => {
                let quantized = self.weight_bits < 16;
                return InferenceBytes {
                    weights: weight_bytes(self.shape.num_params(), self.weight_bits, true),
                    kv_cache: 0.0,
                    working_copy: if quantized {
                        (s.width * s.width) as f64 * 4.0
                    } else {
                        0.0
                    },
                    prefill: 0.0,
                };
            }
        };
        let [weights, kv_cache, working_copy, prefill] = decoder::inference_bytes(&Generation {
            model,
            batch: self.batch as f64,
            context: self.context as f64,
            weight_bits: f64::from(self.weight_bits),
            kv_bits: f64::from(self.kv_bits),
        });
        InferenceBytes {
            weights,
            kv_cache,
            working_copy,
            prefill,
        }
    }

    /// The longest context (tokens per sequence, at most `max`) whose peak fits in
    /// `usable_bytes`; none where not even one token does.
    pub fn longest_context(&self, usable_bytes: f64, max: usize) -> Option<usize> {
        let peak = |context: u64| {
            InferencePlan {
                context: context as usize,
                ..*self
            }
            .bytes()
            .peak()
        };
        if peak(1) > usable_bytes {
            return None;
        }
        let fits = |n: u64| Ok::<_, std::convert::Infallible>(peak(n) <= usable_bytes);
        let Ok((n, _)) = largest_fitting(1, max as u64, fits);
        Some(n as usize)
    }
}

/// What a card of `card_bytes` holds of a training plan: the largest batch, or which part alone
/// is over the bytes the plan may use.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CardAnswer {
    /// The bytes the plan may use: the card less the CUDA context and the safety margin.
    pub usable_bytes: f64,
    /// The largest batch, where one sequence fits.
    pub largest_batch: Option<u64>,
    /// Weights, gradients, optimizer state and weight copies: what no batch changes.
    pub fixed_bytes: f64,
    /// The step peak at one sequence (one micro-batch's worth where accumulating).
    pub smallest_peak_bytes: f64,
}

impl CardAnswer {
    /// `plan` on a card of `card_bytes`.
    pub fn of(plan: StepPlan, card_bytes: f64) -> Self {
        let usable = usable_bytes(card_bytes, plan.precision);
        let smallest = StepPlan {
            batch: plan.micro_batches.max(1) as f64,
            ..plan
        }
        .bytes();
        Self {
            usable_bytes: usable,
            largest_batch: largest_batch(plan, usable, Sharding::DataParallel, 1),
            fixed_bytes: smallest.per_parameter(),
            smallest_peak_bytes: smallest.step_peak(),
        }
    }

    /// Whether the fixed part alone is over the usable bytes (no batch, however small, helps).
    pub fn fixed_over(&self) -> bool {
        self.fixed_bytes > self.usable_bytes
    }
}

/// One row of an estimate: a combination, its components and peak, and where it fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimateRow {
    /// The combination.
    pub combination: Combination,
    /// The plan it estimates.
    pub plan: StepPlan,
    /// Its components.
    pub bytes: StepBytes,
    /// The peak in parts that add up to it.
    pub at_peak: PeakSplit,
    /// The step's peak, in bytes.
    pub peak_bytes: f64,
    /// The largest batch that fits each of [`CARDS`] ([`usable_bytes`] of it), in order
    /// (`None`: not even one sample).
    pub largest_batch_per_card: Vec<Option<u64>>,
    /// The largest batch over [`EIGHT_CARDS`] per [`Sharding::ALL`] scheme, in order.
    pub largest_batch_eight_cards: Vec<Option<u64>>,
}

/// An estimate for a model: every combination at the given batch, and where each fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// The preset's id, or `custom`.
    pub model: String,
    /// What the model assumes.
    pub assumes: String,
    /// Parameters.
    pub params: u64,
    /// The plan every combination starts from.
    pub base: StepPlan,
    /// Micro-batches used where a combination accumulates (`None`: none asked for, and no
    /// accumulating rows).
    pub micro_batches: Option<usize>,
    /// The share of each card kept free for the estimator's error, per row's precision, and
    /// the context left out first ([`safety_margin`], [`CUDA_CONTEXT_BYTES`]).
    pub context_bytes: f64,
    /// One row per combination.
    pub rows: Vec<EstimateRow>,
    /// Inference weights: (bits, packed bytes on CubeCL, bytes on Flex).
    pub inference_weights: Vec<(u32, f64, f64)>,
}

impl Estimate {
    /// Estimates `base` (its batch, precision and optimizer) with every combination, the
    /// accumulating ones over `micro_batches` (left out where it is `None`).
    pub fn of(model: &str, assumes: &str, base: StepPlan, micro_batches: Option<usize>) -> Self {
        let params = base.shape.num_params();
        let rows = COMBINATIONS
            .iter()
            .filter(|c| micro_batches.is_some() || !c.accumulation)
            .filter(|c| c.applies_to(&base.shape))
            .map(|&combination| {
                let plan = combination.apply(base, micro_batches.unwrap_or(1));
                let bytes = plan.bytes();
                let usable = |card: &Card| usable_bytes(card.bytes(), plan.precision);
                EstimateRow {
                    combination,
                    plan,
                    bytes,
                    at_peak: bytes.at_peak(),
                    peak_bytes: bytes.step_peak(),
                    largest_batch_per_card: CARDS
                        .iter()
                        .map(|c| largest_batch(plan, usable(c), Sharding::DataParallel, 1))
                        .collect(),
                    largest_batch_eight_cards: Sharding::ALL
                        .iter()
                        .map(|&s| largest_batch(plan, usable(&EIGHT_CARDS), s, EIGHT_CARDS.count))
                        .collect(),
                }
            })
            .collect();
        Self {
            model: model.to_string(),
            assumes: assumes.to_string(),
            params,
            base,
            micro_batches,
            context_bytes: CUDA_CONTEXT_BYTES,
            rows,
            inference_weights: WEIGHT_BITS
                .iter()
                .map(|&bits| {
                    (
                        bits,
                        weight_bytes(params, bits, true),
                        weight_bytes(params, bits, false),
                    )
                })
                .collect(),
        }
    }
}

/// The optimizer and precision an estimate starts from, by default: what the workbench
/// measures.
pub fn default_plan(shape: ModelShape, batch: u64) -> StepPlan {
    StepPlan {
        optimizer: Optimizer::Adam,
        ..StepPlan::f32_adam(shape, batch as f64)
    }
}

/// Micro-batches of the accumulating combinations in the guide's tables.
pub const TABLE_MICRO_BATCHES: usize = 4;

fn card_column(card: &Card) -> CardColumn {
    CardColumn {
        name: card.name(),
        models: card.card.models.into(),
        reported_mib: card.card.reported_mib,
        bytes: card.bytes(),
        count: card.count,
    }
}

/// The estimator's tables for every preset, as the "What fits" page shows them (derived when
/// the guide is rendered: they are the rules, not a measurement).
pub fn tables() -> EstimatorTables {
    let models: Vec<ModelCapacity> = presets()
        .iter()
        .map(|p| {
            let estimate = Estimate::of(
                p.id,
                p.assumes,
                default_plan(p.shape, 1),
                Some(TABLE_MICRO_BATCHES),
            );
            let one = default_plan(p.shape, 1).bytes();
            ModelCapacity {
                id: p.id.into(),
                assumes: p.assumes.into(),
                params: estimate.params,
                fixed_bytes: one.fixed() + one.grads,
                activation_bytes_per_sample: one.activations_at_peak(),
                micro_batches: TABLE_MICRO_BATCHES,
                rows: estimate
                    .rows
                    .iter()
                    .map(|r| CombinationFit {
                        combination: r.combination.name.into(),
                        peak_bytes_at_one: StepPlan {
                            batch: r.plan.micro_batches as f64,
                            ..r.plan
                        }
                        .bytes()
                        .step_peak(),
                        largest_batch_per_card: r.largest_batch_per_card.clone(),
                        largest_batch_many_cards: r.largest_batch_eight_cards.clone(),
                    })
                    .collect(),
            }
        })
        .collect();
    let weights = presets()
        .iter()
        .filter(|p| p.shape.is_transformer())
        .flat_map(|p| {
            let params = p.shape.num_params();
            WEIGHT_BITS.iter().map(move |&bits| WeightsRow {
                model: p.id.into(),
                params,
                bits,
                packed_bytes: weight_bytes(params, bits, true),
                flex_bytes: weight_bytes(params, bits, false),
            })
        })
        .collect();
    EstimatorTables {
        cards: CARDS.iter().map(card_column).collect(),
        many_cards: card_column(&EIGHT_CARDS),
        shardings: Sharding::ALL.iter().map(|s| s.name().into()).collect(),
        models,
        weights,
        calculator: calculator_rules(),
        ways: presets().iter().map(preset_ways).collect(),
        bytes_per_param: Precision::ALL
            .iter()
            .map(|&p| {
                (
                    p.name().to_string(),
                    per_parameter_optimizers()
                        .map(|o| bytes_per_param(p, o))
                        .collect(),
                )
            })
            .collect(),
        readers: readers(),
    }
}

/// The fine-tuning reader's model, card, sequence and LoRA rank; the inference reader's model,
/// card and context.
const FINE_TUNE: (&str, usize, usize) = ("tinyllama-1.1b", 2048, 16);
const INFERENCE: (&str, usize) = ("llama-2-7b", 2048);

/// The ways to fine-tune the reader's model: full training in f32 and bf16, each with
/// checkpointing, and LoRA (f32 master weights, then bf16 storage), each with checkpointing.
fn fine_tune_ways(shape: LlamaShape, rank: usize) -> Vec<(String, StepPlan)> {
    let lora = LlamaShape {
        lora_rank: Some(rank),
        ..shape
    };
    let plan = |s: LlamaShape, precision: Precision, checkpointing: Checkpointing| StepPlan {
        precision,
        checkpointing,
        ..StepPlan::f32_adam(s, 1.0)
    };
    let (none, balanced) = (Checkpointing::None, Checkpointing::Balanced);
    let chunked = |c: Chunked| LlamaShape { chunked: c, ..lora };
    vec![
        ("full, f32, Adam".into(), plan(shape, Precision::F32, none)),
        (
            "full, bf16, Adam, checkpointing".into(),
            plan(shape, Precision::Bf16, balanced),
        ),
        (
            format!("LoRA rank {rank}, f32"),
            plan(lora, Precision::F32, none),
        ),
        (
            format!("LoRA rank {rank}, f32, checkpointing"),
            plan(lora, Precision::F32, balanced),
        ),
        (
            format!("LoRA rank {rank}, bf16, checkpointing"),
            plan(lora, Precision::Bf16, balanced),
        ),
        (
            format!("LoRA rank {rank}, f32, memory-efficient attention"),
            plan(chunked(Chunked::attention()), Precision::F32, none),
        ),
        (
            format!("LoRA rank {rank}, f32, memory-efficient attention + chunked loss"),
            plan(chunked(Chunked::both()), Precision::F32, none),
        ),
    ]
}

/// The ranked fixes `plan` applies, whose checks every answer that recommends it carries (What
/// fits, `estimate`): accumulation, checkpointing, mixed bf16, bf16 storage,
/// burn-memory-efficient's attention (with its loss).
pub fn ranked_fixes(plan: &StepPlan) -> Vec<Fix> {
    let chunked = plan.shape.chunked();
    [
        (plan.micro_batches > 1).then_some(Fix::Accumulation),
        (plan.checkpointing == Checkpointing::Balanced).then_some(Fix::Checkpointing),
        (plan.precision == Precision::MixedBf16).then_some(Fix::MixedBf16),
        (plan.precision == Precision::Bf16).then_some(Fix::Bf16Storage),
        match (chunked.attention, chunked.loss) {
            (Some(_), Some(_)) => Some(Fix::EfficientAttentionLoss),
            (Some(_), None) => Some(Fix::EfficientAttention),
            _ => None,
        },
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The ranked fixes `c` applies at each precision, as the calculator runs it (micro-batches
/// where it accumulates; a mixed combination in mixed bf16 where f32 is chosen).
fn combination_fixes(c: &Combination) -> std::collections::BTreeMap<String, Vec<Fix>> {
    Precision::ALL
        .iter()
        .map(|&p| {
            let precision = if c.mixed && p == Precision::F32 {
                Precision::MixedBf16
            } else {
                p
            };
            let plan = StepPlan {
                micro_batches: if c.accumulation { 2 } else { 1 },
                checkpointing: if c.checkpointing {
                    Checkpointing::Balanced
                } else {
                    Checkpointing::None
                },
                precision,
                // Any decoder: only the form matters to which fixes it applies.
                ..StepPlan::f32_adam(
                    TransformerShape {
                        vocab: 1,
                        d_model: 1,
                        layers: 1,
                        heads: 1,
                        seq: 1,
                        tied_head: false,
                        chunked: c.chunked,
                    },
                    1.0,
                )
            };
            (p.name().to_string(), ranked_fixes(&plan))
        })
        .collect()
}

/// The longest sequence (at most 2^17 tokens) at which `plan` trains one sequence in `usable`.
fn longest_seq(plan: StepPlan, usable: f64) -> Option<u64> {
    let ModelShape::Llama(shape) = plan.shape else {
        return None;
    };
    let peak = |seq: u64| {
        StepPlan {
            shape: ModelShape::Llama(LlamaShape {
                seq: seq as usize,
                ..shape
            }),
            ..plan
        }
        .bytes()
        .step_peak()
    };
    if peak(1) > usable {
        return None;
    }
    let fits = |n: u64| Ok::<_, std::convert::Infallible>(peak(n) <= usable);
    let Ok((n, _)) = largest_fitting(1, 1 << 17, fits);
    Some(n)
}

/// The two readers' tables.
fn readers() -> results::capacity::ReaderTables {
    let (tune_id, seq, rank) = FINE_TUNE;
    let shape = preset(tune_id)
        .and_then(|p| p.shape.llama())
        .map(|s| LlamaShape { seq, ..s })
        .expect("the fine-tuning preset is a Llama");
    let card = results::cards::CONSUMER;
    let fine_tune = fine_tune_ways(shape, rank)
        .into_iter()
        .map(|(way, plan)| {
            let a = CardAnswer::of(plan, card.bytes());
            results::capacity::FineTuneRow {
                way,
                usable_bytes: a.usable_bytes,
                fixed_bytes: a.fixed_bytes,
                one_sequence_bytes: a.smallest_peak_bytes,
                largest_batch: a.largest_batch,
                longest_seq: longest_seq(plan, a.usable_bytes),
                fixes: ranked_fixes(&plan),
            }
        })
        .collect();
    let (infer_id, context) = INFERENCE;
    let infer = preset(infer_id).expect("the inference preset exists");
    let small = results::cards::SMALL;
    let usable = inference_usable_bytes(small.bytes());
    let inference = [16, 8, 4]
        .into_iter()
        .map(|weight_bits| {
            let plan = InferencePlan {
                shape: infer.shape,
                batch: 1,
                context,
                weight_bits,
                kv_bits: 16,
            };
            let bytes = plan.bytes();
            results::capacity::InferenceRow {
                weight_bits,
                usable_bytes: usable,
                weight_bytes: bytes.weights,
                kv_cache_bytes: bytes.kv_cache,
                peak_bytes: bytes.peak(),
                longest_context: plan.longest_context(usable, 1 << 20).map(|n| n as u64),
            }
        })
        .collect();
    results::capacity::ReaderTables {
        fine_tune_model: tune_id.into(),
        fine_tune_card: card,
        fine_tune_seq: seq,
        fine_tune,
        inference_model: infer_id.into(),
        inference_card: small,
        inference_context: context,
        inference,
    }
}

/// The longest context an inference search tries: 2^20 tokens.
pub const MAX_CONTEXT: usize = 1 << 20;

/// The share of a card left free for the estimator's error in inference: its training margin
/// in f32 (of the inference rules, only the cache's per token is measured).
pub const INFERENCE_MARGIN: f64 = 0.10;

/// The bytes an inference run may plan on, of a card of `card_bytes`.
pub fn inference_usable_bytes(card_bytes: f64) -> f64 {
    decoder::usable_bytes(card_bytes, INFERENCE_MARGIN)
}

/// The common ways to train: (name, precision, optimizer).
pub const WAYS: [(&str, Precision, Optimizer); 4] = [
    ("f32, Adam", Precision::F32, Optimizer::Adam),
    ("mixed bf16, Adam", Precision::MixedBf16, Optimizer::Adam),
    ("bf16, Adam", Precision::Bf16, Optimizer::Adam),
    (
        "f32, SGD with momentum",
        Precision::F32,
        Optimizer::Momentum,
    ),
];

/// The way to train of [`WAYS`] that `plan` is, where it is one (no accumulation, no
/// checkpointing, Burn's own attention and loss).
pub fn way_of(plan: &StepPlan) -> Option<&'static str> {
    (plan.micro_batches == 1
        && plan.checkpointing == Checkpointing::None
        && plan.shape.chunked().is_none())
    .then(|| {
        WAYS.iter()
            .find(|(_, precision, optimizer)| {
                *precision == plan.precision && *optimizer == plan.optimizer
            })
            .map(|(way, _, _)| *way)
    })
    .flatten()
}

/// The step of `shape` trained in `precision` with `optimizer`, at one sample.
fn way_plan(shape: ModelShape, precision: Precision, optimizer: Optimizer) -> StepPlan {
    StepPlan {
        precision,
        optimizer,
        ..StepPlan::f32_adam(shape, 1.0)
    }
}

/// Bytes per parameter of weights, gradients, optimizer state and weight copies, trained in
/// `precision` with `optimizer`: the estimator's components over any model's parameters.
pub fn bytes_per_param(precision: Precision, optimizer: Optimizer) -> f64 {
    let shape = ModelShape::Mlp(MlpShape { depth: 1, width: 1 });
    way_plan(shape, precision, optimizer)
        .bytes()
        .per_parameter()
        / shape.num_params() as f64
}

fn preset_ways(p: &Preset) -> PresetWays {
    let params = p.shape.num_params();
    PresetWays {
        id: p.id.into(),
        params,
        seq: p.shape.seq(),
        rows: WAYS
            .iter()
            .map(|&(way, precision, optimizer)| {
                let plan = way_plan(p.shape, precision, optimizer);
                let fixed_bytes = plan.bytes().per_parameter();
                WayFit {
                    way: way.into(),
                    bytes_per_param: fixed_bytes / params as f64,
                    fixed_bytes,
                    largest_batch_per_card: CARDS
                        .iter()
                        .map(|c| {
                            largest_batch(
                                plan,
                                usable_bytes(c.bytes(), precision),
                                Sharding::DataParallel,
                                1,
                            )
                        })
                        .collect(),
                    fixes: ranked_fixes(&plan),
                }
            })
            .collect(),
    }
}

/// The optimizers whose state is a number of values per parameter, in [`Optimizer::ALL`]'s
/// order: the calculator's, and the columns of the bytes-per-parameter table (Adafactor's
/// follows the tensors' shapes: `workbench estimate --optimizer adafactor`).
fn per_parameter_optimizers() -> impl Iterator<Item = Optimizer> {
    Optimizer::ALL
        .into_iter()
        .filter(|o| o.values_per_param().is_some())
}

/// The rules' constants for the "What fits" page's calculator.
pub fn calculator_rules() -> CalculatorRules {
    CalculatorRules {
        programs: serde_json::to_value(crate::calculator::programs())
            .expect("programs are numbers and names"),
        context_bytes: CUDA_CONTEXT_BYTES,
        max_batch: MAX_BATCH,
        inference_margin: INFERENCE_MARGIN,
        max_context: MAX_CONTEXT as u64,
        precisions: Precision::ALL
            .iter()
            .map(|&p| PrecisionRule {
                name: p.name().into(),
                param_bytes: p.param_bytes() as f64,
                activation_bytes: p.activation_bytes() as f64,
                weight_copy_bytes: p.weight_copy_bytes() as f64,
                margin: safety_margin(p),
            })
            .collect(),
        optimizers: per_parameter_optimizers()
            .map(|o| OptimizerRule {
                name: o.name().into(),
                values_per_param: o.values_per_param().unwrap_or(0) as f64,
            })
            .collect(),
        combinations: COMBINATIONS
            .iter()
            .map(|c| CombinationRule {
                name: c.name.into(),
                accumulation: c.accumulation,
                checkpointing: c.checkpointing,
                mixed: c.mixed,
                form: crate::calculator::Form::of(c.chunked).suffix().into(),
                fixes_by_precision: combination_fixes(c),
            })
            .collect(),
        chunks: crate::calculator::CHUNK_INPUTS
            .iter()
            .map(|&(name, chunk)| (name.to_string(), chunk))
            .collect(),
        cards: CARDS.iter().map(card_column).collect(),
        every_card: results::cards::ALL
            .iter()
            .map(|&card| card_column(&Card { card, count: 1 }))
            .collect(),
        presets: presets()
            .iter()
            .filter_map(|p| match p.shape {
                ModelShape::Transformer(t) => Some(PresetShape {
                    id: p.id.into(),
                    layers: t.layers,
                    d_model: t.d_model,
                    heads: t.heads,
                    vocab: t.vocab,
                    seq: t.seq,
                    tied_head: t.tied_head,
                    kv_heads: None,
                    mlp: None,
                }),
                ModelShape::Llama(t) => Some(PresetShape {
                    id: p.id.into(),
                    layers: t.layers,
                    d_model: t.d_model,
                    heads: t.heads,
                    vocab: t.vocab,
                    seq: t.seq,
                    tied_head: t.tied_head,
                    kv_heads: Some(t.kv_heads),
                    mlp: Some(t.mlp),
                }),
                ModelShape::Mlp(_) => None,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_counts_its_published_parameters() {
        for p in presets() {
            if let Some(published) = p.published_params {
                assert_eq!(p.shape.num_params(), published, "{}", p.id);
            }
        }
    }

    #[test]
    fn a_7b_model_has_the_articles_weights_within_its_parameter_count() {
        let p = preset("llama-2-7b").unwrap();
        let params = p.shape.num_params();
        // About 6.7e9 parameters: 13.4, 6.7 and 3.4 GB at 16, 8 and 4 bits (the articles round
        // to 7e9: 14, 7 and 3.5).
        assert!((6.6e9..6.8e9).contains(&(params as f64)), "{params}");
        assert_eq!(weight_bytes(params, 16, true), params as f64 * 2.0);
        assert_eq!(weight_bytes(params, 4, true), params as f64 * 0.5);
        assert_eq!(weight_bytes(params, 4, false), params as f64);
        assert_eq!(weight_bytes(7_000_000_000, 4, true), 3.5e9);
    }

    #[test]
    fn the_peak_s_parts_add_up_to_it_for_every_preset_and_combination() {
        for p in presets() {
            for micro in [None, Some(4)] {
                let e = Estimate::of(p.id, p.assumes, default_plan(p.shape, 8), micro);
                for r in &e.rows {
                    assert_eq!(
                        r.at_peak.total(),
                        r.peak_bytes,
                        "{} {}",
                        p.id,
                        r.combination.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_largest_batch_fits_and_the_next_does_not() {
        let shape = preset("gpt2-124m").unwrap().shape;
        let plan = default_plan(shape, 1);
        let budget = CARDS[0].bytes();
        let b = largest_batch(plan, budget, Sharding::DataParallel, 1).unwrap();
        let peak = |batch: u64| {
            StepPlan {
                batch: batch as f64,
                ..plan
            }
            .bytes()
            .step_peak()
        };
        assert!(peak(b) <= budget);
        assert!(peak(b + 1) > budget);
    }

    #[test]
    fn the_search_finds_the_same_answer_from_above_and_from_below() {
        for start in [1, 5, 37, 38, 1000] {
            let mut tried = Vec::new();
            let (lo, hi) = largest_fitting(start, 1 << 20, |n| {
                tried.push(n);
                Ok::<_, ()>(n <= 37)
            })
            .unwrap();
            assert_eq!((lo, hi), (37, Some(38)), "from {start}: {tried:?}");
        }
        let all = largest_fitting(3, 64, |_| Ok::<_, ()>(true)).unwrap();
        assert_eq!(all, (64, None));
    }

    #[test]
    fn the_bytes_per_parameter_table_has_a_value_under_every_optimizer_named() {
        let t = tables();
        for (precision, row) in &t.bytes_per_param {
            assert_eq!(row.len(), t.calculator.optimizers.len(), "{precision}");
        }
        // SGD keeps nothing: weights and gradients, 8 bytes a parameter in f32.
        assert_eq!(t.calculator.optimizers[0].name, "sgd");
        assert_eq!(t.bytes_per_param[0].1[0], 8.0);
    }

    #[test]
    fn sharding_never_needs_more_per_card() {
        let shape = preset("llama-2-7b").unwrap().shape;
        let plan = default_plan(shape, 1);
        let found: Vec<u64> = Sharding::ALL
            .iter()
            .map(|&s| largest_batch(plan, EIGHT_CARDS.bytes(), s, 8).unwrap_or(0))
            .collect();
        assert!(found.windows(2).all(|w| w[0] <= w[1]), "{found:?}");
        assert!(found[3] > 0);
    }
}
