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
//! also weights), since Burn has none of them; quantized weights for inference at their packed
//! size on CubeCL (Flex stores each quantized value in a byte).
//! Answer: `workbench estimate` prints it; the "What fits" page tabulates it for the presets.

use results::capacity::{CardColumn, CombinationFit, EstimatorTables, ModelCapacity, WeightsRow};
use serde::{Deserialize, Serialize};

use crate::estimate::{Optimizer, Precision, StepBytes, StepPlan};
use crate::harness::backend::Checkpointing;
use crate::harness::models::{MlpShape, ModelShape, TransformerShape};

/// Bytes in a decimal gigabyte, the unit cards are sold in.
pub const GB: f64 = 1e9;

/// A named model the estimator knows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Preset {
    /// The name given on the command line.
    pub id: &'static str,
    /// The model's shape.
    pub shape: ModelShape,
    /// What the preset assumes, said on every output.
    pub assumes: &'static str,
}

/// The block every transformer preset assumes.
pub const GPT_BLOCK: &str = "the measured GPT-style block (LayerNorm, multi-head attention as \
                             Burn 0.21 computes it, its scores materialised: no flash \
                             attention; a GELU MLP of 4 d, learned positions, an untied head)";

/// The block a LLaMA-like preset assumes instead of LLaMA's own.
const LLAMA_LIKE: &str = "LLaMA's layers, width, heads, vocabulary and sequence, with the \
                          measured GPT-style block (LayerNorm and a GELU MLP of 4 d, not RMSNorm \
                          and SwiGLU, nor the 70B's grouped-query attention, none of which the \
                          workbench has measured: parameter counts up to about 6% below \
                          LLaMA's own); attention as Burn 0.21 computes it, its scores \
                          materialised: no flash attention";

fn transformer(
    layers: usize,
    d_model: usize,
    heads: usize,
    vocab: usize,
    seq: usize,
) -> ModelShape {
    ModelShape::Transformer(TransformerShape {
        vocab,
        d_model,
        layers,
        heads,
        seq,
    })
}

/// The presets, smallest first.
pub fn presets() -> Vec<Preset> {
    vec![
        Preset {
            id: "mlp-8x1024",
            shape: ModelShape::Mlp(MlpShape {
                depth: 8,
                width: 1024,
            }),
            assumes: "the measured MLP: Linear and ReLU layers of one width, an MSE loss",
        },
        Preset {
            id: "gpt2-124m",
            shape: transformer(12, 768, 12, 50257, 1024),
            assumes: GPT_BLOCK,
        },
        Preset {
            id: "gpt2-1.5b",
            shape: transformer(48, 1600, 25, 50257, 1024),
            assumes: GPT_BLOCK,
        },
        Preset {
            id: "llama-7b-like",
            shape: transformer(32, 4096, 32, 32000, 2048),
            assumes: LLAMA_LIKE,
        },
        Preset {
            id: "llama-13b-like",
            shape: transformer(40, 5120, 40, 32000, 2048),
            assumes: LLAMA_LIKE,
        },
        Preset {
            id: "llama-70b-like",
            shape: transformer(80, 8192, 64, 32000, 2048),
            assumes: LLAMA_LIKE,
        },
    ]
}

/// The preset named `id`.
pub fn preset(id: &str) -> Option<Preset> {
    presets().into_iter().find(|p| p.id == id)
}

/// A card, or several of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Card {
    /// What it is called here (`80 GB`).
    pub name: &'static str,
    /// Memory of one card, in bytes.
    pub bytes: f64,
    /// Cards (1 unless data parallel).
    pub count: usize,
}

/// The common cards: 24 to 141 GB (the memory sizes of common consumer and data-centre cards).
pub const CARDS: [Card; 5] = [
    Card {
        name: "24 GB",
        bytes: 24.0 * GB,
        count: 1,
    },
    Card {
        name: "48 GB",
        bytes: 48.0 * GB,
        count: 1,
    },
    Card {
        name: "80 GB",
        bytes: 80.0 * GB,
        count: 1,
    },
    Card {
        name: "96 GB",
        bytes: 96.0 * GB,
        count: 1,
    },
    Card {
        name: "141 GB",
        bytes: 141.0 * GB,
        count: 1,
    },
];

/// Eight 96 GB cards, for data parallelism and sharding.
pub const EIGHT_CARDS: Card = Card {
    name: "8 x 96 GB",
    bytes: 96.0 * GB,
    count: 8,
};

/// How state is spread over several cards (formulas from the ZeRO paper; Burn has none).
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
}

/// Plain training, each technique alone, and every combination of them.
pub const COMBINATIONS: [Combination; 8] = {
    const fn c(
        name: &'static str,
        accumulation: bool,
        checkpointing: bool,
        mixed: bool,
    ) -> Combination {
        Combination {
            name,
            accumulation,
            checkpointing,
            mixed,
        }
    }
    [
        c("plain", false, false, false),
        c("accumulation", true, false, false),
        c("checkpointing", false, true, false),
        c("mixed bf16", false, false, true),
        c("accumulation + checkpointing", true, true, false),
        c("accumulation + mixed bf16", true, false, true),
        c("checkpointing + mixed bf16", false, true, true),
        c("all three", true, true, true),
    ]
};

impl Combination {
    /// The combination applied to `base`: accumulation over `micro_batches`, balanced
    /// checkpointing, mixed bf16 (over an f32 base; a bf16 base stays bf16).
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
            ..base
        }
    }
}

/// The largest batch (a multiple of `plan.micro_batches`, at most 2^30) whose step peak,
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
    let max_units = (1u64 << 30) / step.max(1);
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

/// One row of an estimate: a combination, its components and peak, and where it fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimateRow {
    /// The combination.
    pub combination: Combination,
    /// The plan it estimates.
    pub plan: StepPlan,
    /// Its components.
    pub bytes: StepBytes,
    /// The step's peak, in bytes.
    pub peak_bytes: f64,
    /// The largest batch that fits each of [`CARDS`], in order (`None`: not even one sample).
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
    /// Micro-batches used where a combination accumulates.
    pub micro_batches: usize,
    /// One row per combination.
    pub rows: Vec<EstimateRow>,
    /// Inference weights: (bits, packed bytes on CubeCL, bytes on Flex).
    pub inference_weights: Vec<(u32, f64, f64)>,
}

impl Estimate {
    /// Estimates `base` (its batch, precision and optimizer) with every combination, the
    /// accumulating ones over `micro_batches`.
    pub fn of(model: &str, assumes: &str, base: StepPlan, micro_batches: usize) -> Self {
        let params = base.shape.num_params();
        let rows = COMBINATIONS
            .iter()
            .map(|&combination| {
                let plan = combination.apply(base, micro_batches);
                let bytes = plan.bytes();
                EstimateRow {
                    combination,
                    plan,
                    bytes,
                    peak_bytes: bytes.step_peak(),
                    largest_batch_per_card: CARDS
                        .iter()
                        .map(|c| largest_batch(plan, c.bytes, Sharding::DataParallel, 1))
                        .collect(),
                    largest_batch_eight_cards: Sharding::ALL
                        .iter()
                        .map(|&s| largest_batch(plan, EIGHT_CARDS.bytes, s, EIGHT_CARDS.count))
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

/// Micro-batches of the accumulating combinations in the guide's tables (`estimate`'s default).
pub const TABLE_MICRO_BATCHES: usize = 4;

fn card_column(card: &Card) -> CardColumn {
    CardColumn {
        name: card.name.into(),
        bytes: card.bytes,
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
                TABLE_MICRO_BATCHES,
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
        .filter(|p| matches!(p.shape, ModelShape::Transformer(_)))
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_7b_like_model_has_the_articles_weights_within_its_parameter_count() {
        let p = preset("llama-7b-like").unwrap();
        let params = p.shape.num_params();
        // About 6.7e9 parameters: 13.4, 6.7 and 3.4 GB at 16, 8 and 4 bits (the articles round
        // to 7e9: 14, 7 and 3.5).
        assert!((6.6e9..6.8e9).contains(&(params as f64)), "{params}");
        assert_eq!(weight_bytes(params, 16, true), params as f64 * 2.0);
        assert_eq!(weight_bytes(params, 4, true), params as f64 * 0.5);
        assert_eq!(weight_bytes(params, 4, false), params as f64);
        assert_eq!(weight_bytes(7_000_000_000, 4, true), 3.5 * GB);
    }

    #[test]
    fn the_largest_batch_fits_and_the_next_does_not() {
        let shape = preset("gpt2-124m").unwrap().shape;
        let plan = default_plan(shape, 1);
        let b = largest_batch(plan, 24.0 * GB, Sharding::DataParallel, 1).unwrap();
        let peak = |batch: u64| {
            StepPlan {
                batch: batch as f64,
                ..plan
            }
            .bytes()
            .step_peak()
        };
        assert!(peak(b) <= 24.0 * GB);
        assert!(peak(b + 1) > 24.0 * GB);
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
    fn sharding_never_needs_more_per_card() {
        let shape = preset("llama-7b-like").unwrap().shape;
        let plan = default_plan(shape, 1);
        let found: Vec<u64> = Sharding::ALL
            .iter()
            .map(|&s| largest_batch(plan, 96.0 * GB, s, 8).unwrap_or(0))
            .collect();
        assert!(found.windows(2).all(|w| w[0] <= w[1]), "{found:?}");
        assert!(found[3] > 0);
    }
}
