//! Every fix on one GPT-2-small-shaped training step: the table the landing page ranks.
//!
//! Question: on a model of the size people run out of memory with, what does each fix do to
//! the same step's peak, measured on one base?
//! Method: a decoder of GPT-2 small's shape (12 blocks, d_model 768, 12 heads, vocabulary
//! 50,257; learned positions; an untied head with a bias, so 162 M parameters at sequence 256
//! where GPT-2 ties its head and counts 124 M) trained with Adam on a Markov chain's
//! sequences; one cell per fix, each a fresh process from the same seed: plain, half the batch,
//! accumulation, mixed bf16, bf16 storage, checkpointing, SGD with momentum, and two
//! combinations; then inference on the same weights (autodiff, `valid()`, 8-bit and 4-bit
//! weights). Each cell's peak is set beside the estimator's and proved by a check that can
//! fail: where the fix should compute the same, 1,024 values of its first step's gradients
//! (spread over every parameter) against the plain cell's, compared when the guide renders;
//! the loss falling where it changes the step by design.
//! Answer: at the CPU's batch 2 the fixed part (weights, gradients, Adam's two moments: 16
//! bytes a parameter) is most of the step, so bf16 storage and a lighter optimizer save most,
//! checkpointing and half the batch save a little, and accumulation costs memory (the
//! accumulated gradients outweigh the activations it spares). At a 24 GiB card's out-of-memory
//! point, estimated by the rules these cells check, the activation fixes lead. On the CPU,
//! mixed bf16 kept more activations than f32, where the estimator's rule halves them: a
//! finding the estimator's error column carries.

pub(crate) mod analysis;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use crate::harness::models::BuildModel;
use results::TechniqueId;
use std::collections::BTreeMap;

use burn::module::{Module, ModuleMapper, Param, Quantizer};
use burn::tensor::quantization::Calibration;
use burn::tensor::Tensor;
use results::{
    ComparisonSpec, DeviceKind, Fix, FloatStorage, Metric, PointCheck, PointResult, Profile,
    PutMetric, Trace,
};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, Checkpointing, OnBackend, Pool, Setup};
use crate::harness::models::{mlp, ModelShape, TransformerShape};
use crate::harness::optim::Optimizer;
use crate::harness::probe::{evaluation_passes, MemoryProbe};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point_stored, Proof, TrainChecks, TrainConfig, Trained};
use crate::technique::{Measurement, Planned, Row, Technique};
use crate::techniques::no_grad::{EvalConfig, EvalMode, EvalPoint};
use crate::techniques::optimizer_state::loss_fell;
use crate::techniques::quantization::{self, Bits, WeightFormat};
use burn::tensor::Device;
use estimator::estimate::{Precision, StepPlan};
use estimator::Chunked;

results::metric_keys! {
    /// What the GPT-2-small table measures beyond the shared metrics.
    pub enum Gpt2Metric {
        /// The weights' bytes after conversion (inference cells with quantized weights).
        ConvertedWeightBytes = "converted_weight_bytes",
        /// Root-mean-square error of the logits against f32 weights', over theirs.
        LogitsRmsRelativeError = "logits_rms_relative_error",
    }
}

/// Gradients computed in another order (micro-batches summed, activations recomputed) are the
/// same values up to reordered f32 sums, which at this size run over hundreds of tokens: held
/// to a ten-thousandth of the largest gradient.
pub(crate) const SAME_GRADIENTS: f64 = 1e-4;
/// bf16 keeps 8 significant bits (a relative rounding of 2^-9 per value); a forward pass of a
/// few dozen rounded operations moves a gradient by a few percent of the largest at most.
const BF16_GRADIENTS: f64 = 0.05;

/// What the guide's table needs of a fix beyond its name: the step it runs and what proves it.
pub trait Cell {
    /// The estimator's precision of the cell.
    fn precision(self) -> Precision;
    /// The training step of the cell, from the plain step of `shape` on `batch` sequences.
    fn train(self, shape: impl Into<ModelShape>, batch: usize) -> TrainConfig;
    /// The cell whose first step's gradients this one's must equal, the check's name and its
    /// tolerance (none: the fix changes the step by design, or is not a training step).
    fn reference(self) -> Option<(Fix, &'static str, f64)>;
}

impl Cell for Fix {
    fn precision(self) -> Precision {
        match self {
            Fix::MixedBf16 | Fix::AccumulationCheckpointingMixed => Precision::MixedBf16,
            Fix::Bf16Storage => Precision::Bf16,
            _ => Precision::F32,
        }
    }

    fn train(self, shape: impl Into<ModelShape>, batch: usize) -> TrainConfig {
        let plain = TrainConfig {
            seed: 11,
            ..TrainConfig::adam(shape, batch)
        };
        let accumulated = TrainConfig {
            micro_batches: 2,
            ..plain
        };
        let checkpointed = |c: TrainConfig| TrainConfig {
            checkpointing: Checkpointing::Balanced,
            ..c
        };
        let mixed = |c: TrainConfig| TrainConfig {
            compute: Some(FloatStorage::Bf16),
            ..c
        };
        match self {
            Fix::HalfBatch => TrainConfig {
                batch: batch / 2,
                ..plain
            },
            Fix::Accumulation => accumulated,
            Fix::MixedBf16 => mixed(plain),
            Fix::Checkpointing => checkpointed(plain),
            Fix::Momentum => TrainConfig {
                optimizer: Optimizer::Momentum,
                // Burn's SGD default rate is far from Adam's; the optimizer-state page's rate.
                lr: crate::techniques::optimizer_state::learning_rate(Optimizer::Momentum),
                ..plain
            },
            Fix::AccumulationCheckpointing => checkpointed(accumulated),
            Fix::AccumulationCheckpointingMixed => mixed(checkpointed(accumulated)),
            Fix::EfficientAttention => TrainConfig {
                shape: plain.shape.with_chunked(Chunked::attention()),
                ..plain
            },
            Fix::EfficientAttentionLoss => TrainConfig {
                shape: plain.shape.with_chunked(Chunked::both()),
                ..plain
            },
            _ => plain,
        }
    }

    fn reference(self) -> Option<(Fix, &'static str, f64)> {
        Some(match self {
            // Accumulated, recomputed, chunked: the same sums in another order.
            Fix::Accumulation
            | Fix::Checkpointing
            | Fix::AccumulationCheckpointing
            | Fix::EfficientAttention
            | Fix::EfficientAttentionLoss => {
                (Fix::Plain, "gradients-as-one-plain-step", SAME_GRADIENTS)
            }
            // bf16 compute against f32 at the same weights and batch.
            Fix::MixedBf16 => (Fix::Plain, "gradients-bf16-against-f32", BF16_GRADIENTS),
            // bf16 rounds a split batch's values differently from the whole batch's.
            Fix::AccumulationCheckpointingMixed => (
                Fix::MixedBf16,
                "gradients-as-one-mixed-step",
                BF16_GRADIENTS,
            ),
            _ => return None,
        })
    }
}

/// Which model a cell trains: the table's (GPT-2 small, where the fixed part is most of the
/// step on the CPU) or the order's regime (GPT-2 small's block at sequence 1024, where the
/// activations are most of it, as at a card's out-of-memory point).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// The table's model.
    #[default]
    Table,
    /// The order's regime.
    Regime,
    /// GPT-2 small at its context: one sequence of 1,024 tokens under checkpointing, where the
    /// estimator's checkpointing rule meets a reader's model and length ([`long`]).
    Long,
}

/// Configuration of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellConfig {
    /// The fix.
    pub fix: Fix,
    /// The step (for inference: the model, batch and seed of the pass).
    pub train: TrainConfig,
    /// Which model it trains (records made before the regime's cells: the table's).
    #[serde(default)]
    pub workload: Workload,
}

impl CellConfig {
    /// The cell of `fix` on the plain step of `shape` at `batch` sequences.
    pub fn of(fix: Fix, shape: impl Into<ModelShape>, batch: usize) -> Self {
        Self {
            fix,
            train: fix.train(shape, batch),
            workload: Workload::Table,
        }
    }

    /// The same cell on the order's regime's model.
    pub fn in_regime(self) -> Self {
        Self {
            workload: Workload::Regime,
            ..self
        }
    }

    /// The training step as the estimator sees it (none for an inference cell): the step's
    /// own plan, in the fix's precision (16-bit storage is the process's float type, which the
    /// step's configuration does not hold).
    pub fn plan(&self) -> Option<StepPlan> {
        self.fix.training().then(|| StepPlan {
            precision: self.fix.precision(),
            ..self.train.step_plan()
        })
    }
}

/// The table's workload.
pub struct Gpt2Small;

/// A cell's point id and label: the fix's, prefixed `regime` in the order's regime.
fn cell_names(config: &CellConfig) -> (String, String) {
    let id = config.fix.id();
    match config.workload {
        Workload::Table => (id.into(), id.replace('-', " ")),
        Workload::Regime => (
            format!("regime-{id}"),
            format!("regime, {}", id.replace('-', " ")),
        ),
        Workload::Long => {
            let seq = config.train.shape.seq().unwrap_or(0);
            (
                format!("seq{seq}-{id}"),
                format!("one sequence of {seq}, {}", id.replace('-', " ")),
            )
        }
    }
}

/// GPT-2 small's checkpointing at its context, one sequence of 1,024 tokens, on the CPU: the
/// estimator's checkpointing rule, fitted on small models, at a reader's depth, vocabulary and
/// length (a step of about 20 s on 2 cores; one cell, its gradients checked by the table's and
/// the regime's checkpointing cells, which run the same strategy). None elsewhere: CUDA's table
/// is at 1,024 already, the quick run's models are small.
pub fn long(sizes: Sizes) -> Option<CellConfig> {
    (sizes == Sizes::Full).then(|| {
        let (shape, _) = workload(sizes);
        let shape = TransformerShape { seq: 1024, ..shape };
        CellConfig {
            workload: Workload::Long,
            ..CellConfig::of(Fix::Checkpointing, shape, 1)
        }
    })
}

/// The TinyLlama-like preset's block (d_model 2048, 32 heads; the estimator gives every preset
/// GPT-2's block) as one layer with a small vocabulary, so that the block, not the embedding
/// and head GPT-2's cells already measure, is most of the step: one sequence of 512 tokens on
/// the CPU (a step of a few seconds), the preset's own 2048 on CUDA; a small one quick.
pub fn preset_block(sizes: Sizes) -> TransformerShape {
    let block = |seq| TransformerShape {
        chunked: Default::default(),
        vocab: 512,
        d_model: 2048,
        layers: 1,
        heads: 32,
        seq,
        tied_head: false,
    };
    match sizes {
        Sizes::Quick => TransformerShape {
            chunked: Default::default(),
            vocab: 256,
            d_model: 128,
            layers: 1,
            heads: 8,
            seq: 64,
            tied_head: false,
        },
        Sizes::Full => block(512),
        Sizes::FullCuda => block(2048),
    }
}

/// The model and batch at each size: GPT-2 small at sequence 256, batch 2 on the CPU (the
/// smallest batch that halves and splits in two; a step takes 10 to 15 s on 2 cores), sequence
/// 1024 and batch 8 on CUDA; a small decoder quick.
pub fn workload(sizes: Sizes) -> (TransformerShape, usize) {
    let gpt2 = |seq| TransformerShape {
        chunked: Default::default(),
        vocab: 50257,
        d_model: 768,
        layers: 12,
        heads: 12,
        seq,
        tied_head: false,
    };
    match sizes {
        Sizes::Quick => (
            TransformerShape {
                chunked: Default::default(),
                vocab: 256,
                d_model: 64,
                layers: 2,
                heads: 4,
                seq: 128,
                tied_head: false,
            },
            4,
        ),
        Sizes::Full => (gpt2(256), 2),
        Sizes::FullCuda => (gpt2(1024), 8),
    }
}

/// The order's regime, where the table's model is not in it: on the CPU, GPT-2 small's block
/// (d_model 768, 12 heads) at its context of 1024 tokens, two blocks and a vocabulary of 512,
/// so that activations are over three quarters of the step's peak, as at a card's
/// out-of-memory point (the batch of 2 halves and splits in two). Quick and CUDA sizes have
/// none: their tables are in that regime already (the page says which set verified each rule).
pub fn regime(sizes: Sizes) -> Option<(TransformerShape, usize)> {
    (sizes == Sizes::Full).then_some((
        TransformerShape {
            chunked: Default::default(),
            vocab: 512,
            d_model: 768,
            layers: 2,
            heads: 12,
            seq: 1024,
            tied_head: false,
        },
        2,
    ))
}

impl Technique for Gpt2Small {
    type Config = CellConfig;
    const ID: TechniqueId = TechniqueId::Gpt2Small;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<CellConfig>> {
        let sizes = Sizes::of(profile, device);
        let (shape, batch) = workload(sizes);
        let block = CellConfig {
            fix: Fix::PresetBlock,
            train: TrainConfig {
                seed: 11,
                ..TrainConfig::adam(preset_block(sizes), 1)
            },
            workload: Workload::Table,
        };
        let regime = regime(sizes).into_iter().flat_map(|(shape, batch)| {
            Fix::ALL
                .into_iter()
                .filter(|f| f.training())
                .map(move |fix| CellConfig::of(fix, shape, batch).in_regime())
        });
        // burn-memory-efficient's fixes at sequence 256 save little of a step the weights
        // fill: the CPU's full run measures them in the regime (its table would spend half a
        // minute on them); the quick and CUDA tables keep them.
        let in_table = move |fix: &Fix| !(sizes == Sizes::Full && fix.chunked());
        Fix::ALL
            .into_iter()
            .filter(in_table)
            .map(|fix| CellConfig::of(fix, shape, batch))
            .chain(regime)
            .chain(long(sizes))
            .chain(std::iter::once(block))
            .map(|config| {
                let (id, label) = cell_names(&config);
                let mut planned = Planned::new(id, label, profile, config);
                // A step of GPT-2 small takes over ten seconds on 2 cores: one untimed step
                // (the first allocates Adam's state) and one timed, whose memory is the
                // cell's; no memory timeline.
                if sizes == Sizes::Full {
                    planned.repeats.warmup = 1;
                    planned.repeats.repeats = 1;
                }
                planned
            })
            .collect()
    }

    fn run_point(&self, config: &CellConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        let c = config.train;
        match config.fix {
            Fix::InferAutodiff | Fix::InferValid => device.dispatch(
                Setup {
                    pool: Pool::ExclusivePages,
                    ..Setup::default()
                },
                EvalPoint {
                    config: EvalConfig {
                        shape: c.shape,
                        batch: c.batch,
                        mode: if config.fix == Fix::InferAutodiff {
                            EvalMode::Autodiff
                        } else {
                            EvalMode::Valid
                        },
                        seed: c.seed,
                    },
                    repeats,
                },
            ),
            Fix::InferInt8 | Fix::InferInt4 => device.dispatch(
                Setup {
                    pool: Pool::ExclusivePages,
                    ..Setup::default()
                },
                QuantizedPass {
                    config: c,
                    bits: if config.fix == Fix::InferInt8 {
                        Bits::Q8
                    } else {
                        Bits::Q4
                    },
                    repeats,
                },
            ),
            fix => run_train_point_stored(
                c,
                Technique::float_storage(self, config),
                repeats,
                device,
                CellProof { fix },
                false,
            ),
        }
    }

    fn float_storage(&self, config: &CellConfig) -> FloatStorage {
        match config.fix {
            Fix::Bf16Storage => FloatStorage::Bf16,
            _ => FloatStorage::F32,
        }
    }

    fn step_plan(&self, config: &CellConfig) -> Option<StepPlan> {
        config.plan()
    }

    fn comparisons(&self, rows: &[Row<'_, CellConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn derived_checks(&self, rows: &[Row<'_, CellConfig>]) -> Vec<PointCheck> {
        analysis::derived_checks(rows)
    }
}

/// The proof of a training cell, as far as the cell can give it alone: the fixes that change
/// the step by design show their loss falling over the measured run's own steps; the others
/// keep a sample of their first step's gradients, set against the plain cell's (or mixed
/// bf16's) when the guide renders ([`Fix::reference`]). Each cell starts from the same seeded
/// weights on the same batch, so their first steps compute the same gradients wherever the
/// fix should.
pub(crate) struct CellProof {
    /// The cell's fix.
    pub fix: Fix,
}

impl CellProof {
    /// Whether the cell's first step is compared with another cell's.
    fn compared(&self) -> bool {
        self.fix == Fix::Plain || self.fix.reference().is_some()
    }
}

impl TrainChecks for CellProof {
    fn checks(&self, t: Trained<'_>) -> Proof {
        let mut proof = Proof::default();
        if self.compared() {
            proof.traces.insert(
                Trace::FirstStepGradientSample,
                t.gradients.iter().map(|&g| f64::from(g)).collect(),
            );
        }
        if self.reads_losses() {
            proof.checks.push(loss_fell(&t.losses));
            proof.traces.insert(Trace::LossByStep, t.losses);
        }
        proof
    }

    fn reads_losses(&self) -> bool {
        matches!(
            self.fix,
            Fix::Plain | Fix::HalfBatch | Fix::Bf16Storage | Fix::Momentum | Fix::PresetBlock
        )
    }

    fn samples_gradients(&self) -> bool {
        self.compared()
    }
}

/// Quantizes every float parameter with min-max calibration (as `quantize_weights` does), in
/// blocks of [`quantization::BLOCK`] values along its last dimension where that dimension splits into whole
/// blocks, and with one scale for the tensor where it does not: Burn 0.22's block
/// quantization refuses a dimension that is not a multiple of the block, and the head's
/// 50,257 columns (its weight and its bias) are not.
struct BlockWhereItFits {
    bits: Bits,
}

impl ModuleMapper for BlockWhereItFits {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let last = param.val().dims()[D - 1];
        let block = quantization::BLOCK;
        let format = WeightFormat::Quantized {
            bits: self.bits,
            block: last.is_multiple_of(block as usize).then_some(block),
        };
        let scheme = format
            .scheme(&param.device())
            .expect("a quantized format has a scheme");
        Quantizer::new(Calibration::MinMax, scheme).map_float(param)
    }
}

/// An inference pass with quantized weights: the weights' bytes after conversion, the pass's
/// peak, and the logits against those of the f32 weights.
struct QuantizedPass {
    config: TrainConfig,
    bits: Bits,
    repeats: Repeats,
}

impl OnBackend for QuantizedPass {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let c = self.config;
        let sync = || backend::sync(&device);
        sync();
        let process_bytes = probe.read().in_use_bytes;
        device.seed(c.seed);
        let model = c.shape.init(&device).valid();
        mlp::materialize(&model);
        sync();
        let f32_bytes = probe.read().in_use_bytes.saturating_sub(process_bytes);
        let batch = c.shape.batch(c.batch, c.seed, &device).inner();
        let reference = quantization::outputs(model.output(&batch));
        sync();
        let before = probe.read().in_use_bytes;
        let model = model.map(&mut BlockWhereItFits { bits: self.bits });
        sync();
        let weight_bytes = (f32_bytes + probe.read().in_use_bytes).saturating_sub(before);

        let (unit, units) = c.shape.units(c.batch);
        let (timing, phases, output) =
            evaluation_passes(probe, &sync, self.repeats, units, || model.output(&batch));
        let candidate = quantization::outputs(output);

        let mut metrics = BTreeMap::new();
        metrics.put(Metric::ProcessBaselineBytes, process_bytes as f64);
        metrics.put(Metric::ParamBytes, f32_bytes as f64);
        metrics.put(Gpt2Metric::ConvertedWeightBytes, weight_bytes as f64);
        metrics.put(Metric::NumParams, c.shape.num_params() as f64);
        metrics.put(
            Gpt2Metric::LogitsRmsRelativeError,
            quantization::rms_relative_error(&reference, &candidate),
        );
        if let Some(phase) = phases.first() {
            metrics.put(Metric::EvalBytes, phase.delta_bytes() as f64);
            metrics.put(Metric::LiveBeforeBytes, phase.live_before_bytes as f64);
        }
        PointResult {
            metrics,
            checks: vec![quantization::output_check(&reference, &candidate)],
            ..PointResult::new(probe.info(), phases, timing, units).in_unit(unit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::models::{Batch, Model};
    use burn::optim::{GradientsAccumulator, GradientsParams};
    use burn::tensor::FloatDType;
    use results::Check;

    /// `model`'s gradients on `batch` as `k` micro-batches (each loss scaled by 1/k), the forward
    /// computed in `compute` where set, flattened in module order.
    fn gradients_of(
        model: &Model,
        batch: &Batch,
        k: usize,
        compute: Option<FloatDType>,
    ) -> Vec<f32> {
        let k = k.max(1);
        let mut accumulator = GradientsAccumulator::<Model>::new();
        for slice in batch.slices(k) {
            let loss = model.loss_in(&slice, compute).div_scalar(k as f64);
            accumulator.accumulate(model, GradientsParams::from_grads(loss.backward(), model));
        }
        mlp::flatten(model, Some(&accumulator.grads()))
    }

    fn quick(fix: Fix) -> TrainConfig {
        let (shape, batch) = workload(Sizes::Quick);
        fix.train(shape, batch)
    }

    #[test]
    fn every_fix_is_a_cell_and_the_cpu_runs_gpt2_small_at_sequence_256() {
        let full = Gpt2Small.points(Profile::Full, DeviceKind::Cpu);
        let training = Fix::ALL.iter().filter(|f| f.training()).count();
        // The table (burn-memory-efficient's fixes left to the regime on the CPU), the regime,
        // GPT-2 small's checkpointing at 1,024, the preset's block.
        let chunked = Fix::ALL.iter().filter(|f| f.chunked()).count();
        assert_eq!(full.len(), Fix::ALL.len() - chunked + training + 2);
        let block = full.last().unwrap().config;
        assert_eq!(block.fix, Fix::PresetBlock);
        let preset = estimator::capacity::preset("tinyllama-1.1b").unwrap();
        let crate::harness::models::ModelShape::Llama(tiny) = preset.shape else {
            panic!("a Llama-family preset")
        };
        let b = block.train.shape.transformer().unwrap();
        assert_eq!((b.d_model, b.heads), (tiny.d_model, tiny.heads));
        let plain = full[0].config.train;
        let shape = plain.shape.transformer().expect("a transformer");
        assert_eq!(
            (shape.layers, shape.d_model, shape.heads, shape.vocab),
            (12, 768, 12, 50257)
        );
        assert!(shape.seq >= 256);
        // One base: every training cell is the plain step with one thing changed.
        let half = &full[1].config.train;
        assert_eq!(half.batch * 2, plain.batch);
        assert_eq!(full[2].config.train.micro_batches, 2);
        assert_eq!(full[2].config.train.batch, plain.batch);
        // The order's regime: GPT-2 small's block at its context, every training fix, in
        // the estimator's regime (activations over three quarters of the plain step's peak).
        let regime: Vec<_> = full
            .iter()
            .filter(|p| p.config.workload == Workload::Regime)
            .collect();
        assert_eq!(regime.len(), training);
        let r = regime[0].config;
        let s = r.train.shape.transformer().unwrap();
        assert_eq!((s.d_model, s.heads, s.seq), (768, 12, 1024));
        let bytes = r.plan().unwrap().bytes();
        assert!(bytes.activations_at_peak() / bytes.step_peak() >= 0.75);
        assert!(Gpt2Small
            .points(Profile::Quick, DeviceKind::Cpu)
            .iter()
            .all(|p| p.config.workload == Workload::Table));
    }

    #[test]
    fn the_gradient_check_passes_accumulation_and_fails_a_dropped_micro_batch() {
        // One model for the three computations: tests share the backend's generator, so a
        // model drawn anew per computation could differ by another test's draws in between.
        let device = burn::tensor::Device::flex().autodiff();
        let c = quick(Fix::Accumulation);
        let model = c.shape.init(&device);
        mlp::materialize(&model);
        let batch = c.shape.batch(c.batch, c.seed, &device);
        let plain = gradients_of(&model, &batch, 1, None);
        let accumulated = gradients_of(&model, &batch, 2, None);
        assert!(Check::compare("same", &plain, &accumulated, SAME_GRADIENTS).passed);
        // A loop that steps on its first micro-batch alone: the gradient of half the batch.
        let dropped = gradients_of(&model, &batch.narrow(0, c.batch / 2), 1, None);
        assert!(!Check::compare("dropped", &plain, &dropped, SAME_GRADIENTS).passed);
    }

    #[test]
    fn the_projection_is_at_plain_s_out_of_memory_batch_and_each_fix_is_estimated() {
        let p = analysis::projection(None, None).expect("GPT-2 small fits a 24 GB card at batch 1");
        let plain = p.cell(Fix::Plain).unwrap();
        assert!(
            plain.predicted_bytes > p.usable_bytes,
            "plain no longer fits"
        );
        assert!(p.usable_bytes < p.card_bytes);
        assert!(plain.max_batch < p.batch);
        for c in &p.cells {
            assert!(
                c.predicted_bytes.is_finite() && c.predicted_bytes > 0.0,
                "{:?}",
                c.fix
            );
            assert!(c.rule.is_none(), "nothing measured to check it in");
        }
        let combo = p.cell(Fix::AccumulationCheckpointingMixed).unwrap();
        assert!(combo.predicted_bytes < plain.predicted_bytes);
    }
}
