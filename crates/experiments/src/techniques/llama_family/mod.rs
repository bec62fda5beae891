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

use std::collections::BTreeMap;

use burn::module::{AutodiffModule, Quantizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::quantization::Calibration;
use burn::tensor::{Int, Tensor};
use results::{
    Check, ComparisonSpec, DeviceKind, Fix, FloatStorage, Metric, PointResult, Profile, PutMetric,
    TechniqueId, Trace, Unit,
};
use serde::{Deserialize, Serialize};

use crate::error::ExperimentError;
use crate::estimate::StepPlan;
use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::models::llama::{frozen_values, KvCache, Llama};
use crate::harness::models::transformer::token_sequences;
use crate::harness::models::{mlp, LlamaShape, MarkovChain, SUCCESSORS};
use crate::harness::probe::{evaluation_passes, MemoryProbe, PhaseMeter};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point_stored, Proof, TrainChecks, TrainConfig, Trained};
use crate::technique::{Measurement, Planned, Row, Technique};
use crate::techniques::gpt2_small::{CellConfig, CellProof};
use crate::techniques::optimizer_state::loss_fell;
use crate::techniques::quantization::{Bits, WeightFormat};

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
    /// A training step of LoRA adapters on the frozen base (the shape's rank).
    Lora(TrainConfig),
    /// Generation with a key/value cache.
    Generate(GenerateConfig),
    /// One inference forward pass, attention written out or fused (the shape says).
    Attention(AttentionConfig),
    /// A training step, attention written out or fused (the shape says): Burn 0.21's autodiff
    /// decomposes the fused kernel.
    AttentionStep(TrainConfig),
    /// QLoRA's step: LoRA on a base whose projections are quantized, as Burn 0.21 allows it.
    QLora(QLoraConfig),
}

/// A LoRA step on a quantized base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QLoraConfig {
    /// The LoRA step (its shape's rank).
    pub train: TrainConfig,
    /// Bits per quantized base weight.
    pub bits: Bits,
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
/// The sequences of fused attention against the written-out scores, in tokens, in inference
/// and in training: 512 to 2,048 in inference on the CPU and wgpu, to 4,096 on CUDA, and 512
/// and 1,024 in training; the quick run's are short. On 2 cores the two passes at 4,096 (the
/// written-out scores of 32 heads are 2 GiB a copy) took 1.9 of the full run's minutes and
/// answered nothing 2,048 did not: the same rule, verified at every length below it.
fn attention_seqs(sizes: Sizes) -> (&'static [usize], &'static [usize]) {
    match sizes {
        Sizes::Quick => (&[128, 256], &[128]),
        Sizes::Full => (&[512, 1024, 2048], &[512, 1024]),
        Sizes::FullCuda => (&[512, 1024, 2048, 4096], &[512, 1024]),
    }
}

fn cells(shape: LlamaShape) -> impl Iterator<Item = LlamaConfig> {
    Fix::ALL
        .into_iter()
        .filter(|f| f.training() && *f != Fix::PresetBlock)
        .map(move |fix| LlamaConfig::Cell(CellConfig::of(fix, shape, BATCH)))
}

fn loras(shape: LlamaShape) -> impl Iterator<Item = LlamaConfig> {
    RANKS.into_iter().map(move |r| {
        let lora = LlamaShape {
            lora_rank: Some(r),
            ..shape
        };
        LlamaConfig::Lora(TrainConfig {
            seed: 11,
            // Adapters start at zero; a rate that moves them in a few steps.
            lr: 1e-3,
            ..TrainConfig::adam(lora, BATCH)
        })
    })
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

fn qloras(shape: LlamaShape) -> impl Iterator<Item = LlamaConfig> {
    let lora = loras(shape).next();
    [Bits::Q8, Bits::Q4]
        .into_iter()
        .filter_map(move |bits| match lora {
            Some(LlamaConfig::Lora(train)) => Some(LlamaConfig::QLora(QLoraConfig { train, bits })),
            _ => None,
        })
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
            LlamaConfig::Lora(t) => {
                let r = t.shape.llama().and_then(|s| s.lora_rank).unwrap_or(0);
                (format!("lora-r{r}"), format!("LoRA rank {r}"))
            }
            LlamaConfig::Generate(g) => (
                format!("generate-kv{}", g.shape.kv_heads),
                format!("generate, {} key/value heads", g.shape.kv_heads),
            ),
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
            LlamaConfig::QLora(q) => (
                format!("qlora-{}bit", q.bits.bits()),
                format!("LoRA on a {}-bit base", q.bits.bits()),
            ),
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
            .chain(loras(shape))
            .chain(generations(shape))
            .chain(qloras(shape))
            .chain(attentions(shape, sizes))
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
            LlamaConfig::QLora(config) => device
                .dispatch(exclusive, QLoraPoint { config })
                .and_then(|r| r),
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
            LlamaConfig::Lora(t) | LlamaConfig::AttentionStep(t) => Some(StepPlan::of_training(t)),
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
    fn checks<B: AutodiffBackend>(&self, t: Trained<'_, B>) -> Proof {
        let trained = frozen_values(&t.model);
        drop(t.model);
        B::seed(t.device, t.config.seed);
        let fresh = t.config.shape.init::<B>(t.device);
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
    fn checks<B: AutodiffBackend>(&self, t: Trained<'_, B>) -> Proof {
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

/// QLoRA as Burn 0.21 allows it: the LoRA model built on the autodiff backend, its base's
/// projections quantized there (`quantize_weights`); failing that, quantized on the inner
/// backend and lifted into the autodiff one (`from_inner`) for a forward and backward pass.
/// Each attempt runs under `catch_unwind`: where both panic, the point is Burn's refusal, with
/// Burn's own messages.
struct QLoraPoint {
    config: QLoraConfig,
}

impl OnBackend for QLoraPoint {
    type Output = Measurement;

    fn run<A: AutodiffBackend>(self, device: A::Device, _probe: &dyn MemoryProbe) -> Measurement {
        let (train, bits) = (self.config.train, self.config.bits);
        let shape = train
            .shape
            .llama()
            .ok_or_else(|| ExperimentError::Backend("QLoRA needs a Llama-family shape".into()))?;
        let quantizer = || Quantizer {
            calibration: Calibration::MinMax,
            scheme: WeightFormat::Quantized { bits, block: None }
                .scheme::<A>()
                .expect("a quantized format has a scheme"),
        };
        A::seed(&device, train.seed);
        let model = shape.init::<A>(&device);
        let in_autodiff = attempt(|| drop(model.quantize_base(&mut quantizer())));
        let inner = shape.init::<A::InnerBackend>(&device);
        let lifted = attempt(|| {
            let model = Llama::<A>::from_inner(inner.quantize_base(&mut quantizer()));
            let chain = MarkovChain::new(shape.vocab, SUCCESSORS, train.seed);
            let (inputs, _) = shape.batch::<A>(&chain, train.batch, train.seed, &device);
            drop(model.forward(inputs).mean().backward());
        });
        match (in_autodiff, lifted) {
            (Err(first), Err(second)) => Err(ExperimentError::NotInBurn {
                what: format!(
                    "quantize_weights on the autodiff backend: {first}; the base quantized on \
                     the inner backend, then a step through it: {second}"
                ),
            }),
            _ => Err(ExperimentError::Backend(
                "Burn quantized a base under autodiff: measure QLoRA's step".into(),
            )),
        }
    }
}

/// Runs `work`, catching a panic: its message on one line, with the place in Burn's source
/// that panicked (`burn-autodiff-0.21.0/src/ops/qtensor.rs:24`).
fn attempt(work: impl FnOnce()) -> Result<(), String> {
    let place = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let seen = std::sync::Arc::clone(&place);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let (Some(at), Ok(mut place)) = (info.location(), seen.lock()) {
            let file = at.file();
            let from_crate = file.rfind("/burn-").map_or(file, |i| &file[i + 1..]);
            *place = format!("{from_crate}:{}", at.line());
        }
    }));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    std::panic::set_hook(previous);
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
        match place.lock() {
            Ok(at) if !at.is_empty() => format!("{message} at {at}"),
            _ => message,
        }
    })
}

/// A generation loop measured: the prompt's pass (prefill), then one token at a time with the
/// cache, the bytes in use read after each token (one loop, timed once).
struct GeneratePoint {
    config: GenerateConfig,
}

impl OnBackend for GeneratePoint {
    type Output = PointResult;

    fn run<A: AutodiffBackend>(self, device: A::Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let (prompt, total) = (c.shape.seq, c.shape.seq + c.tokens);
        let sync = || backend::sync::<A>(&device);
        let mut in_use = Vec::with_capacity(c.tokens + 1);
        sync();
        let process = probe.read().in_use_bytes;
        A::seed(&device, c.seed);
        let model = c.shape.init_for::<A>(total, &device).valid();
        mlp::materialize(&model);
        let chain = MarkovChain::new(c.shape.vocab, SUCCESSORS, c.seed);
        let (inputs, _) = token_sequences::<A::InnerBackend>(&chain, total, 1, c.seed, &device);
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
fn cached_logits_check<B: Backend>(
    model: &crate::harness::models::Llama<B>,
    inputs: Tensor<B, 2, Int>,
    last: Option<Tensor<B, 3>>,
) -> Check {
    let total = inputs.dims()[1];
    let whole = model.forward(inputs).narrow(1, total - 1, 1);
    let values = |t: Tensor<B, 3>| {
        t.into_data()
            .convert::<f32>()
            .to_vec::<f32>()
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

    fn run<A: AutodiffBackend>(self, device: A::Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync::<A>(&device);
        sync();
        let process = probe.read().in_use_bytes;
        A::seed(&device, c.seed);
        let model = c.shape.init::<A>(&device).valid();
        mlp::materialize(&model);
        let chain = MarkovChain::new(c.shape.vocab, SUCCESSORS, c.seed);
        let (inputs, _) =
            token_sequences::<A::InnerBackend>(&chain, c.shape.seq, c.batch, c.seed, &device);
        sync();
        let units = (c.batch * c.shape.seq) as u64;
        let (timing, phases, logits) = evaluation_passes(probe, &sync, self.repeats, units, || {
            model.forward(inputs.clone())
        });
        // The written-out pass is the reference itself: only the fused one has a check to make.
        let checks = if c.shape.fused_attention {
            vec![written_out_check::<A>(model, logits, inputs)]
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
fn written_out_check<A: AutodiffBackend>(
    model: crate::harness::models::Llama<A::InnerBackend>,
    logits: Tensor<A::InnerBackend, 3>,
    inputs: Tensor<A::InnerBackend, 2, Int>,
) -> Check {
    let written = model.with_fused_attention(false).forward(inputs);
    let values = |t: Tensor<A::InnerBackend, 3>| {
        t.into_data()
            .convert::<f32>()
            .to_vec::<f32>()
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
