//! The model the reader has: a Llama-family decoder under every fix, LoRA on a frozen base,
//! generation with a key/value cache, and Burn's fused attention.
//!
//! Question: on TinyLlama's block (d_model 2048, 32 heads, 4 key/value heads, SwiGLU of 5,632),
//! what does each fix of the GPT-2 table do to a training step, what does fine-tuning a frozen
//! base with LoRA adapters hold, and what does generation hold per token?
//! Method: one TinyLlama-width block with a small vocabulary (so that the block, not the
//! embedding, is the step) trained with Adam, one cell per fix, each proved as the GPT-2
//! table's cells are (the gradient sample against the plain cell's, or the loss falling); LoRA
//! at ranks 8 and 64 on the query and value projections, the base frozen (`no_grad`), proved by
//! the base's weights left bit for bit as they were and the loss falling; a generation loop
//! with a key/value cache, with 4 key/value heads and with 32 (no grouped-query attention),
//! the bytes in use read after every token, proved by the last token's logits against a
//! forward pass over the whole sequence; a forward pass with Burn's fused `attention` against
//! the written-out scores. Every training cell is set beside the estimator.
//! Answer: at this block LoRA drops the base's gradients and Adam's state, which were most of
//! the step, so the peak falls by more than half whatever the rank; the cache grows by exactly
//! its rule per token, and grouped-query attention divides it by the group; in inference Burn's
//! fused attention never holds the scores the written-out pass does. The estimator's rules for
//! the block were read op by op (what the forward pass keeps) or fitted here (checkpointing,
//! LoRA, backward's peak): the page sets every cell beside them.

mod analysis;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::models::{BuildLlama, BuildModel};
use std::collections::BTreeMap;

use burn::module::Module;
use burn::tensor::{Int, Tensor};
use results::{
    Check, ComparisonSpec, DeviceKind, Fix, FloatStorage, Metric, PointResult, Profile, PutMetric,
    TechniqueId, Trace, Unit,
};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::models::llama::{frozen_values, KvCache, LoraForm};
use crate::harness::models::transformer::token_sequences;
use crate::harness::models::{mlp, LlamaShape, MarkovChain, SUCCESSORS};
use crate::harness::probe::{evaluation_passes, MemoryProbe, PhaseMeter};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point_stored, Proof, TrainChecks, TrainConfig, Trained};
use crate::technique::{Measurement, Planned, Row, Technique};
use crate::techniques::gpt2_small::{CellConfig, CellProof};
use crate::techniques::optimizer_state::loss_fell;
use burn::tensor::Device;
use estimator::estimate::StepPlan;

results::metric_keys! {
    /// What the Llama-family page measures beyond the shared metrics.
    pub enum LlamaMetric {
        /// Bytes in use after the prefill, above those before it: the cache of the prompt.
        PrefillCacheBytes = "prefill_cache_bytes",
        /// Bytes in use added per generated token (least squares over the tokens).
        KvBytesPerToken = "kv_bytes_per_token",
    }
}

results::phase_names! {
    /// The phases of a generation loop.
    pub enum GenerationPhase {
        /// The prompt's forward pass, filling the cache.
        Prefill = "prefill",
        /// The generated tokens, one forward pass each.
        Generate = "generate",
    }
}

/// Values of the logits compared between the cached and the whole-sequence pass: f32 sums in
/// another order.
const SAME_LOGITS: f64 = 1e-4;

/// One point of the Llama-family page.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LlamaConfig {
    /// A training step under one fix of the GPT-2 table.
    Cell(CellConfig),
    /// A training step of LoRA adapters on the frozen base: the shape's rank, form (the
    /// workbench's on the activation path, or Burn's `apply_lora`) and base bits (QLoRA).
    Lora(TrainConfig),
    /// Generation with a key/value cache.
    Generate(GenerateConfig),
    /// One inference forward pass, attention written out or fused (the shape says).
    Attention(AttentionConfig),
    /// A training step, attention written out or fused (the shape says): Burn 0.22's autodiff
    /// decomposes the fused kernel.
    AttentionStep(TrainConfig),
    /// Full training with Adam at the reader's scale ([`reader`]).
    Reader(TrainConfig),
}

/// A generation loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GenerateConfig {
    /// The model (its `seq` is the prompt's length).
    pub shape: LlamaShape,
    /// Tokens generated after the prompt.
    pub tokens: usize,
    /// Seed of the weights and the sequence.
    pub seed: u64,
}

/// An inference forward pass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AttentionConfig {
    /// The model, with its sequence and attention.
    pub shape: LlamaShape,
    /// Sequences.
    pub batch: usize,
    /// Seed of the weights and the sequences.
    pub seed: u64,
}

/// The Llama-family page.
pub struct LlamaFamily;

/// TinyLlama's block, one of it, at each size: a vocabulary of 512 and 256 tokens on the CPU
/// (a step of a few seconds on 2 cores); a small block quick.
pub fn block(sizes: Sizes) -> LlamaShape {
    let tiny = LlamaShape {
        chunked: Default::default(),
        vocab: 512,
        d_model: 2048,
        layers: 1,
        heads: 32,
        kv_heads: 4,
        mlp: 5632,
        seq: 256,
        tied_head: false,
        lora_rank: None,
        fused_attention: false,
        lora_form: LoraForm::ActivationPath,
        base_bits: None,
    };
    match sizes {
        Sizes::Quick => LlamaShape {
            vocab: 256,
            d_model: 128,
            heads: 8,
            kv_heads: 2,
            mlp: 352,
            seq: 64,
            ..tiny
        },
        Sizes::Full => tiny,
        Sizes::FullCuda => LlamaShape {
            vocab: 32000,
            layers: 4,
            seq: 2048,
            ..tiny
        },
    }
}

/// Sequences per step.
pub const BATCH: usize = 2;
/// LoRA's ranks.
const RANKS: [usize; 2] = [8, 64];
/// Tokens generated after the prompt.
const GENERATED: usize = 16;
/// The sequences of fused attention against the written-out scores in inference, in tokens:
/// 512 to 2,048 on the CPU and wgpu, to 4,096 on CUDA; the quick run's are short. On 2 cores
/// the two passes at 4,096 (the written-out scores of 32 heads are 2 GiB a copy) took 1.9 of
/// the full run's minutes and answered nothing 2,048 did not: the same rule, verified at every
/// length below it. In training, Burn's fused call against the written-out scores is the
/// memory-efficient attention page's (its `fused` form on the reader's model): the training
/// steps measured here before are that page's now.
fn attention_seqs(sizes: Sizes) -> (&'static [usize], &'static [usize]) {
    match sizes {
        Sizes::Quick => (&[128, 256], &[]),
        Sizes::Full => (&[512, 1024, 2048], &[]),
        Sizes::FullCuda => (&[512, 1024, 2048, 4096], &[]),
    }
}

fn cells(shape: LlamaShape) -> impl Iterator<Item = LlamaConfig> {
    Fix::ALL
        .into_iter()
        .filter(|f| f.training() && *f != Fix::PresetBlock)
        .map(move |fix| LlamaConfig::Cell(CellConfig::of(fix, shape, BATCH)))
}

/// A LoRA step of `shape` at `rank` in `form`, its base at `base_bits` (QLoRA) or f32.
fn lora(
    shape: LlamaShape,
    rank: usize,
    form: LoraForm,
    base_bits: Option<u8>,
    batch: usize,
) -> LlamaConfig {
    let shape = LlamaShape {
        lora_rank: Some(rank),
        lora_form: form,
        base_bits,
        ..shape
    };
    LlamaConfig::Lora(TrainConfig {
        seed: 11,
        // Adapters start at zero; a rate that moves them in a few steps.
        lr: 1e-3,
        ..TrainConfig::adam(shape, batch)
    })
}

/// The LoRA steps of the block: each form (the workbench's adapters on the activation path,
/// Burn's `apply_lora` composing the weight) at ranks 8 and 64 on an f32 base and at rank 8 on
/// quantized bases (QLoRA), at the block's sequence. The bases: 8 and 4 bits where the device
/// packs the values, 4 bits alone on the CPU, where Flex stores every quantized value in a
/// byte ([`estimator::estimate::Allocator::quantized_value_bytes`]: the two steps measured the same
/// peak to the byte).
fn loras(shape: LlamaShape, device: DeviceKind) -> impl Iterator<Item = LlamaConfig> {
    let bits: &'static [u8] = if device == DeviceKind::Cpu {
        &[4]
    } else {
        &[8, 4]
    };
    [LoraForm::ActivationPath, LoraForm::Composed]
        .into_iter()
        .flat_map(move |form| {
            let ranks = RANKS.map(|r| lora(shape, r, form, None, BATCH));
            let quantized = bits
                .iter()
                .map(move |&b| lora(shape, RANKS[0], form, Some(b), BATCH));
            ranks.into_iter().chain(quantized)
        })
}

/// Blocks of the reader's-scale model. In one block the adapted layers' input comes from the
/// frozen embedding and norm and needs no gradient, and Burn's autodiff matmul keeps its right
/// operand (the composed weight) only for the left one's gradient: the composed form's cost
/// shows from the second block on.
pub const READER_LAYERS: usize = 2;

/// The model where readers stand: [`READER_LAYERS`] blocks of the block's width at a real
/// vocabulary (TinyLlama's and Llama 2's 32,000; 2,048 in the quick run), where the embedding,
/// the head and the loss over the vocabulary are most of the weights and a large part of the
/// step, as they are in the models readers train (at the block cells' 512 they are invisible).
pub fn reader(sizes: Sizes) -> LlamaShape {
    let (vocab, seq) = match sizes {
        Sizes::Quick => (2048, block(sizes).seq),
        Sizes::Full | Sizes::FullCuda => (32000, block(Sizes::Full).seq),
    };
    LlamaShape {
        vocab,
        seq,
        layers: READER_LAYERS,
        ..block(sizes)
    }
}

/// The reader's-scale steps, one sequence each: full training with Adam at the block's
/// sequence; LoRA rank 8 in both forms and Burn's QLoRA on a 4-bit base at the block's
/// sequence, the workbench's LoRA at four times it; then a generation loop with an
/// eight-times prompt (2,048 tokens on the CPU). On 2 cores a full step at 1 x 256 takes
/// about 3 s: these six points replace the block's LoRA cells at a longer sequence and on two
/// blocks at the 512-token vocabulary, which they measure where readers stand.
fn readers(sizes: Sizes) -> impl Iterator<Item = LlamaConfig> {
    let shape = reader(sizes);
    let seq = shape.seq;
    let at = move |s: usize| LlamaShape { seq: s, ..shape };
    // Full training at four times the sequence is the memory-efficient attention page's
    // written-out step at 1,024 tokens (the same seeded step): measured there.
    let full = [LlamaConfig::Reader(TrainConfig {
        seed: 11,
        ..TrainConfig::adam(at(seq), 1)
    })];
    let adapters = [
        lora(at(seq), RANKS[0], LoraForm::ActivationPath, None, 1),
        lora(at(seq), RANKS[0], LoraForm::Composed, None, 1),
        lora(at(seq), RANKS[0], LoraForm::Composed, Some(4), 1),
        lora(at(4 * seq), RANKS[0], LoraForm::ActivationPath, None, 1),
    ];
    let generate = LlamaConfig::Generate(GenerateConfig {
        shape: at(8 * seq),
        tokens: GENERATED,
        seed: 5,
    });
    full.into_iter().chain(adapters).chain([generate])
}

fn generations(shape: LlamaShape) -> impl Iterator<Item = LlamaConfig> {
    [shape.kv_heads, shape.heads].into_iter().map(move |kv| {
        LlamaConfig::Generate(GenerateConfig {
            shape: LlamaShape {
                kv_heads: kv,
                ..shape
            },
            tokens: GENERATED,
            seed: 5,
        })
    })
}

/// The shape at sequence `seq`, attention written out and fused.
fn both_attentions(shape: LlamaShape, seq: usize) -> [LlamaShape; 2] {
    [false, true].map(|fused| LlamaShape {
        fused_attention: fused,
        seq,
        ..shape
    })
}

fn attentions(shape: LlamaShape, sizes: Sizes) -> impl Iterator<Item = LlamaConfig> {
    let (inference, training) = attention_seqs(sizes);
    let passes = inference.iter().flat_map(move |&seq| {
        both_attentions(shape, seq).map(|shape| {
            LlamaConfig::Attention(AttentionConfig {
                shape,
                batch: 1,
                seed: 5,
            })
        })
    });
    let steps = training.iter().flat_map(move |&seq| {
        both_attentions(shape, seq).map(|shape| {
            LlamaConfig::AttentionStep(TrainConfig {
                seed: 11,
                ..TrainConfig::adam(shape, 1)
            })
        })
    });
    passes.chain(steps)
}

/// A LoRA step's id and label: `lora-r8`, `burn-qlora-4bit-seq1024` (the block's sequence
/// unsuffixed).
fn lora_names(t: &TrainConfig) -> (String, String) {
    let shape = t.shape.llama().unwrap_or_else(|| block(Sizes::Quick));
    let rank = shape.lora_rank.unwrap_or(0);
    let (prefix, form) = match shape.lora_form {
        LoraForm::ActivationPath => ("", "workbench's adapters"),
        LoraForm::Composed => ("burn-", "Burn's apply_lora"),
    };
    let (id, label) = match shape.base_bits {
        // Burn's QLoRA is its own call, `apply_qlora(QLora::new(..))`, not `apply_lora`.
        Some(bits) => (
            format!("{prefix}qlora-{bits}bit"),
            format!(
                "QLoRA, {}, rank {rank}, {bits}-bit base",
                form.replace("apply_lora", "apply_qlora")
            ),
        ),
        None => (
            format!("{prefix}lora-r{rank}"),
            format!("LoRA, {form}, rank {rank}"),
        ),
    };
    if t.batch == BATCH {
        (id, label)
    } else {
        reader_names(&id, &label, &shape)
    }
}

/// A reader's-scale point's id and label: `reader-` and its sequence beside the block's.
fn reader_names(id: &str, label: &str, shape: &LlamaShape) -> (String, String) {
    (
        format!("reader-{id}-seq{}", shape.seq),
        format!(
            "{label}, {} blocks, vocabulary {}, sequence {}",
            shape.layers, shape.vocab, shape.seq
        ),
    )
}

/// "written-out" or "fused".
fn attention_way(shape: &LlamaShape) -> &'static str {
    if shape.fused_attention {
        "fused"
    } else {
        "written-out"
    }
}

impl LlamaConfig {
    /// The point's id and label.
    fn names(&self) -> (String, String) {
        match self {
            LlamaConfig::Cell(c) => (c.fix.id().into(), c.fix.id().replace('-', " ")),
            LlamaConfig::Lora(t) => lora_names(t),
            LlamaConfig::Generate(g) if g.shape.layers == READER_LAYERS => {
                reader_names("generate", "generate", &g.shape)
            }
            LlamaConfig::Generate(g) => (
                format!("generate-kv{}", g.shape.kv_heads),
                format!("generate, {} key/value heads", g.shape.kv_heads),
            ),
            LlamaConfig::Reader(t) => {
                let shape = t.shape.llama().unwrap_or_else(|| reader(Sizes::Quick));
                reader_names("full", "full training, Adam", &shape)
            }
            LlamaConfig::Attention(a) => {
                let way = attention_way(&a.shape);
                (
                    format!("attention-{way}-{}", a.shape.seq),
                    format!("inference, {way} attention, sequence {}", a.shape.seq),
                )
            }
            LlamaConfig::AttentionStep(t) => {
                let shape = t.shape.llama().unwrap_or_else(|| block(Sizes::Quick));
                let way = attention_way(&shape);
                (
                    format!("attention-step-{way}-{}", shape.seq),
                    format!("training step, {way} attention, sequence {}", shape.seq),
                )
            }
        }
    }
}

impl Technique for LlamaFamily {
    type Config = LlamaConfig;
    const ID: TechniqueId = TechniqueId::LlamaFamily;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<LlamaConfig>> {
        let sizes = Sizes::of(profile, device);
        let shape = block(sizes);
        cells(shape)
            .chain(loras(shape, device))
            .chain(generations(shape))
            .chain(attentions(shape, sizes))
            .chain(readers(sizes))
            .map(|config| {
                let (id, label) = config.names();
                let mut planned = Planned::new(id, label, profile, config);
                if matches!(config, LlamaConfig::Generate(_)) {
                    // One generation loop, timed once: its memory is read token by token.
                    planned.repeats.repeats = 1;
                }
                if sizes == Sizes::Full {
                    // A step of a TinyLlama-width block takes seconds on 2 cores: one untimed
                    // step (the first allocates Adam's state) and one timed, whose memory is the
                    // point's; its time beside another's is the pairs' (two of each took 1.8
                    // more of the run's minutes).
                    planned.repeats.warmup = 1;
                    planned.repeats.repeats = 1;
                }
                planned
            })
            .collect()
    }

    fn run_point(&self, config: &LlamaConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        let exclusive = Setup {
            pool: Pool::ExclusivePages,
            ..Setup::default()
        };
        match *config {
            LlamaConfig::Cell(c) => run_train_point_stored(
                c.train,
                Technique::float_storage(self, config),
                repeats,
                device,
                CellProof { fix: c.fix },
                false,
            ),
            LlamaConfig::Lora(train) => {
                run_train_point_stored(train, FloatStorage::F32, repeats, device, LoraProof, false)
            }
            LlamaConfig::Reader(train) => run_train_point_stored(
                train,
                FloatStorage::F32,
                repeats,
                device,
                CellProof { fix: Fix::Plain },
                false,
            ),
            LlamaConfig::Generate(config) => device.dispatch(exclusive, GeneratePoint { config }),
            LlamaConfig::Attention(config) => {
                device.dispatch(exclusive, AttentionPoint { config, repeats })
            }
            LlamaConfig::AttentionStep(train) => run_train_point_stored(
                train,
                FloatStorage::F32,
                repeats,
                device,
                GradientSample,
                false,
            ),
        }
    }

    fn float_storage(&self, config: &LlamaConfig) -> FloatStorage {
        match config {
            LlamaConfig::Cell(c) if c.fix == Fix::Bf16Storage => FloatStorage::Bf16,
            _ => FloatStorage::F32,
        }
    }

    fn step_plan(&self, config: &LlamaConfig) -> Option<StepPlan> {
        match config {
            LlamaConfig::Cell(c) => c.plan(),
            LlamaConfig::Lora(t) | LlamaConfig::AttentionStep(t) | LlamaConfig::Reader(t) => {
                Some(t.step_plan())
            }
            _ => None,
        }
    }

    fn comparisons(&self, rows: &[Row<'_, LlamaConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn derived_checks(&self, rows: &[Row<'_, LlamaConfig>]) -> Vec<results::PointCheck> {
        analysis::derived_checks(rows)
    }
}

/// LoRA's proof: the frozen base's weights after the measured steps, value for value as a
/// fresh model of the same seed draws them (nothing stepped them), and the loss falling (the
/// adapters learned).
struct LoraProof;

impl TrainChecks for LoraProof {
    fn checks(&self, t: Trained<'_>) -> Proof {
        let trained = frozen_values(&t.model);
        drop(t.model);
        t.device.seed(t.config.seed);
        let fresh = t.config.shape.init(t.device);
        let unchanged = Check::compare(
            "frozen-base-unchanged",
            &frozen_values(&fresh),
            &trained,
            0.0,
        )
        .with("values", trained.len());
        let mut proof = Proof::from(vec![unchanged, loss_fell(&t.losses)]);
        proof.traces.insert(Trace::LossByStep, t.losses);
        proof
    }

    fn reads_losses(&self) -> bool {
        true
    }
}

/// The proof of a training step with its attention written out or fused: a sample of its first
/// step's gradients, set against the written-out step's at the same sequence when the guide
/// renders (same seeded weights and batch: the same gradients up to reordered sums).
struct GradientSample;

impl TrainChecks for GradientSample {
    fn checks(&self, t: Trained<'_>) -> Proof {
        let mut proof = Proof::default();
        proof.traces.insert(
            Trace::FirstStepGradientSample,
            t.gradients.iter().map(|&g| f64::from(g)).collect(),
        );
        proof
    }

    fn samples_gradients(&self) -> bool {
        true
    }
}

/// A generation loop measured: the prompt's pass (prefill), then one token at a time with the
/// cache, the bytes in use read after each token (one loop, timed once).
struct GeneratePoint {
    config: GenerateConfig,
}

impl OnBackend for GeneratePoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let (prompt, total) = (c.shape.seq, c.shape.seq + c.tokens);
        let sync = || backend::sync(&device);
        let mut in_use = Vec::with_capacity(c.tokens + 1);
        sync();
        let process = probe.read().in_use_bytes;
        device.seed(c.seed);
        let model = c.shape.init_for(total, &device).valid();
        mlp::materialize(&model);
        let chain = MarkovChain::new(c.shape.vocab, SUCCESSORS, c.seed);
        let (inputs, _) =
            token_sequences(&chain, total, 1, c.seed, &device.clone().without_autodiff());
        sync();
        let before = probe.read().in_use_bytes;
        let mut meter = PhaseMeter::with_capacity(probe, &sync, 2);
        let mut caches = vec![KvCache::default(); c.shape.layers];
        let clock = std::time::Instant::now();
        drop(meter.phase(GenerationPhase::Prefill, || {
            model.forward_from(inputs.clone().narrow(1, 0, prompt), 0, Some(&mut caches))
        }));
        sync();
        in_use.push(probe.read().in_use_bytes as f64);
        let last = meter.phase(GenerationPhase::Generate, || {
            let mut last = None;
            for t in prompt..total {
                drop(last.take());
                let token = inputs.clone().narrow(1, t, 1);
                last = Some(model.forward_from(token, t, Some(&mut caches)));
                sync();
                in_use.push(probe.read().in_use_bytes as f64);
            }
            last
        });
        let elapsed = clock.elapsed();
        let phases = meter.finish();
        let check = cached_logits_check(&model, inputs, last);
        let mut metrics = BTreeMap::new();
        metrics.put(Metric::ProcessBaselineBytes, process as f64);
        metrics.put(Metric::ParamBytes, before.saturating_sub(process) as f64);
        metrics.put(Metric::NumParams, c.shape.num_params() as f64);
        metrics.put(LlamaMetric::PrefillCacheBytes, in_use[0] - before as f64);
        metrics.put(LlamaMetric::KvBytesPerToken, slope(&in_use[1..]));
        let timing = crate::harness::timing::repeat_timed(1, c.tokens as u64, || elapsed);
        PointResult {
            metrics,
            checks: vec![check],
            ..PointResult::new(probe.info(), phases, timing, c.tokens as u64).in_unit(Unit::Tokens)
        }
    }
}

/// The last generated token's logits against those of one forward pass over the whole
/// sequence, at the same position: the cache must not change what is computed.
fn cached_logits_check(
    model: &crate::harness::models::Llama,
    inputs: Tensor<2, Int>,
    last: Option<Tensor<3>>,
) -> Check {
    let total = inputs.dims()[1];
    let whole = model.forward(inputs).narrow(1, total - 1, 1);
    let values = |t: Tensor<3>| {
        t.into_data()
            .convert::<f32>()
            .try_to_vec::<f32>()
            .unwrap_or_default()
    };
    let cached = last.map(values).unwrap_or_default();
    Check::compare(
        "cached-logits-as-whole-sequence",
        &values(whole),
        &cached,
        SAME_LOGITS,
    )
    .with("values", cached.len())
}

/// Bytes added per token: the least-squares slope of the bytes in use over the tokens (the
/// results crate's fit, as every other sweep's slope).
fn slope(ys: &[f64]) -> f64 {
    let points: Vec<(f64, f64)> = ys.iter().enumerate().map(|(i, &y)| (i as f64, y)).collect();
    results::fit::LinearFit::fit(&points).map_or(f64::NAN, |f| f.slope)
}

/// One inference forward pass (no graph), its attention written out or fused, proved against
/// the written-out pass of the same weights.
struct AttentionPoint {
    config: AttentionConfig,
    repeats: Repeats,
}

impl OnBackend for AttentionPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync(&device);
        sync();
        let process = probe.read().in_use_bytes;
        device.seed(c.seed);
        let model = c.shape.init(&device).valid();
        mlp::materialize(&model);
        let chain = MarkovChain::new(c.shape.vocab, SUCCESSORS, c.seed);
        let (inputs, _) = token_sequences(
            &chain,
            c.shape.seq,
            c.batch,
            c.seed,
            &device.clone().without_autodiff(),
        );
        sync();
        let units = (c.batch * c.shape.seq) as u64;
        let (timing, phases, logits) = evaluation_passes(probe, &sync, self.repeats, units, || {
            model.forward(inputs.clone())
        });
        // The written-out pass is the reference itself: only the fused one has a check to make.
        let checks = if c.shape.fused_attention {
            vec![written_out_check(model, logits, inputs)]
        } else {
            Vec::new()
        };
        let mut metrics = BTreeMap::new();
        metrics.put(Metric::ProcessBaselineBytes, process as f64);
        metrics.put(Metric::NumParams, c.shape.num_params() as f64);
        if let Some(phase) = phases.first() {
            metrics.put(Metric::EvalBytes, phase.delta_bytes() as f64);
            metrics.put(Metric::LiveBeforeBytes, phase.live_before_bytes as f64);
        }
        PointResult {
            metrics,
            checks,
            ..PointResult::new(probe.info(), phases, timing, units).in_unit(Unit::Tokens)
        }
    }
}

/// `logits` against the written-out pass of the same weights.
fn written_out_check(
    model: crate::harness::models::Llama,
    logits: Tensor<3>,
    inputs: Tensor<2, Int>,
) -> Check {
    let written = model.with_fused_attention(false).forward(inputs);
    let values = |t: Tensor<3>| {
        t.into_data()
            .convert::<f32>()
            .try_to_vec::<f32>()
            .unwrap_or_default()
    };
    let candidate = values(logits);
    Check::compare(
        "logits-as-written-out-attention",
        &values(written),
        &candidate,
        SAME_LOGITS,
    )
    .with("values", candidate.len())
}
