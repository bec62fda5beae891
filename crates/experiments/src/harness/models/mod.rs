//! The models the experiments train: small enough for a CPU, shaped so that the memory of
//! parameters, gradients, optimizer state and activations can each be predicted from shapes.
//!
//! Two workloads: an MLP (square Linear layers, the simple model that teaches each mechanism)
//! and a decoder-only transformer (what people who run out of memory train). [`ModelShape`]
//! names either in a point's configuration; [`Model`] and [`Batch`] are the module and the data
//! it trains on, so that the training step, the checks and the probes are written once.

pub mod llama;
pub mod mlp;
pub mod transformer;

use burn::module::Module;
use burn::optim::{GradientsAccumulator, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, FloatDType, Int, Tensor};
pub use llama::{BuildLlama, Llama, LlamaShape, LoraForm};
pub use mlp::{BuildMlp, Mlp, MlpShape};
use results::Phase;
pub use transformer::{
    token_sequences, BuildTransformer, MarkovChain, Transformer, TransformerShape,
};

use crate::harness::probe::PhaseMeter;
use crate::harness::profile::Sizes;

/// Successors of each token in the transformer's Markov chain task.
pub const SUCCESSORS: usize = 4;

/// The MLP the training techniques train (batch size, accumulation, no-grad), at each size.
pub fn training_mlp(sizes: Sizes) -> MlpShape {
    match sizes {
        Sizes::Quick => MlpShape {
            width: 256,
            depth: 4,
        },
        Sizes::Full => MlpShape {
            width: 1024,
            depth: 8,
        },
        Sizes::FullCuda => MlpShape {
            width: 4096,
            depth: 16,
        },
    }
}

/// The transformer the training techniques train beside the MLP, at each size: small enough
/// that a sweep of a few points takes seconds on 2 cores (d_model 256, 4 blocks, sequence 128
/// in full: about 0.26 s per step at batch 4), GPT-2 small on CUDA.
pub fn training_transformer(sizes: Sizes) -> TransformerShape {
    match sizes {
        Sizes::Quick => TransformerShape {
            chunked: Default::default(),
            vocab: 256,
            d_model: 64,
            layers: 2,
            heads: 4,
            seq: 64,
            tied_head: false,
        },
        Sizes::Full => TransformerShape {
            chunked: Default::default(),
            vocab: 512,
            d_model: 256,
            layers: 4,
            heads: 4,
            seq: 128,
            tied_head: false,
        },
        Sizes::FullCuda => TransformerShape {
            chunked: Default::default(),
            vocab: 50257,
            d_model: 768,
            layers: 12,
            heads: 12,
            seq: 1024,
            tied_head: false,
        },
    }
}

/// Whether the techniques whose fix the GPT-2-small table measures on a 12-block transformer
/// (accumulation, checkpointing, no-grad, the optimizer's state) also sweep the small
/// transformer beside their MLP: in quick runs, which keep that code exercised, and on CUDA,
/// where the training transformer is GPT-2 small itself; not in the CPU's and wgpu's full
/// runs, where the sweep would repeat the table at a tenth of its size and cost 80 s of the
/// run budget.
pub fn sweeps_the_small_transformer(sizes: Sizes) -> bool {
    sizes != Sizes::Full
}

pub use estimator::ModelShape;

/// Builds a [`Model`] of a shape and its data: the Burn half of [`ModelShape`].
pub trait BuildModel {
    /// Builds the model with Burn's default initialisation on `device`.
    fn init(&self, device: &Device) -> Model;
    /// A batch of `batch` samples (random regression pairs for the MLP, from the backend's
    /// seeded generator; sequences of the Markov chain of `seed` for the transformer).
    fn batch(&self, batch: usize, seed: u64, device: &Device) -> Batch;
}

impl BuildModel for ModelShape {
    fn init(&self, device: &Device) -> Model {
        match self {
            ModelShape::Mlp(s) => Model::Mlp(s.init(device)),
            ModelShape::Transformer(s) => Model::Transformer(s.init(device)),
            ModelShape::Llama(s) => Model::Llama(s.init(device)),
        }
    }

    fn batch(&self, batch: usize, seed: u64, device: &Device) -> Batch {
        match self {
            ModelShape::Mlp(s) => {
                let (x, y) = s.batch(batch, device);
                Batch::Regression { x, y }
            }
            ModelShape::Transformer(s) => {
                let chain = MarkovChain::new(s.vocab, SUCCESSORS, seed);
                let (inputs, targets) = token_sequences(&chain, s.seq, batch, seed, device);
                Batch::Tokens { inputs, targets }
            }
            ModelShape::Llama(s) => {
                let chain = MarkovChain::new(s.vocab, SUCCESSORS, seed);
                let (inputs, targets) = token_sequences(&chain, s.seq, batch, seed, device);
                Batch::Tokens { inputs, targets }
            }
        }
    }
}

/// A model the techniques train. One is built per point, so the size of the enum does not
/// matter (and Burn's derive does not take a boxed variant).
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum Model {
    /// The MLP.
    Mlp(Mlp),
    /// The decoder-only transformer.
    Transformer(Transformer),
    /// The Llama-family decoder.
    Llama(Llama),
}

/// What a model trains on.
#[derive(Debug, Clone)]
pub enum Batch {
    /// Inputs and regression targets of the MLP.
    Regression {
        /// Inputs `[batch, width]`.
        x: Tensor<2>,
        /// Targets `[batch, width]`.
        y: Tensor<2>,
    },
    /// Token sequences and their next tokens, for the transformer.
    Tokens {
        /// Inputs `[batch, seq]`.
        inputs: Tensor<2, Int>,
        /// Next tokens `[batch, seq]`.
        targets: Tensor<2, Int>,
    },
}

impl Batch {
    /// Samples (rows or sequences) in the batch.
    pub fn len(&self) -> usize {
        match self {
            Batch::Regression { x, .. } => x.dims()[0],
            Batch::Tokens { inputs, .. } => inputs.dims()[0],
        }
    }

    /// The device the batch is on.
    pub fn device(&self) -> Device {
        match self {
            Batch::Regression { x, .. } => x.device(),
            Batch::Tokens { inputs, .. } => inputs.device(),
        }
    }

    /// Whether the batch holds no sample.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The batch's first sample, and of a sequence its first `tokens` tokens at most (a view,
    /// no copy): the least input the model takes.
    pub fn first(&self, tokens: usize) -> Self {
        match self.narrow(0, 1) {
            Batch::Tokens { inputs, targets } => {
                let n = tokens.clamp(1, inputs.dims()[1]);
                Batch::Tokens {
                    inputs: inputs.narrow(1, 0, n),
                    targets: targets.narrow(1, 0, n),
                }
            }
            regression => regression,
        }
    }

    /// `len` samples from `start` (a view, no copy).
    pub fn narrow(&self, start: usize, len: usize) -> Self {
        match self {
            Batch::Regression { x, y } => Batch::Regression {
                x: x.clone().narrow(0, start, len),
                y: y.clone().narrow(0, start, len),
            },
            Batch::Tokens { inputs, targets } => Batch::Tokens {
                inputs: inputs.clone().narrow(0, start, len),
                targets: targets.clone().narrow(0, start, len),
            },
        }
    }

    /// The batch as `k` slices of equal size (views; the last takes the rest).
    pub fn slices(&self, k: usize) -> Vec<Self> {
        let rows = self.len();
        let size = rows.div_ceil(k.max(1)).max(1);
        (0..rows)
            .step_by(size)
            .map(|start| self.narrow(start, size.min(rows - start)))
            .collect()
    }
}

impl Batch {
    /// The same batch without autodiff (no graph).
    pub fn inner(&self) -> Batch {
        match self {
            Batch::Regression { x, y } => Batch::Regression {
                x: x.clone().inner(),
                y: y.clone().inner(),
            },
            Batch::Tokens { inputs, targets } => Batch::Tokens {
                inputs: inputs.clone().inner(),
                targets: targets.clone().inner(),
            },
        }
    }
}

impl Model {
    /// The model's output on `batch` as a matrix: the MLP's output, or the transformer's
    /// logits with one row per token.
    pub fn output(&self, batch: &Batch) -> Tensor<2> {
        match (self, batch) {
            (Model::Mlp(m), Batch::Regression { x, .. }) => m.forward(x.clone()),
            (Model::Transformer(m), Batch::Tokens { inputs, .. }) => {
                let logits = m.forward(inputs.clone());
                let [b, s, v] = logits.dims();
                logits.reshape([b * s, v])
            }
            (Model::Llama(m), Batch::Tokens { inputs, .. }) => {
                let logits = m.forward(inputs.clone());
                let [b, s, v] = logits.dims();
                logits.reshape([b * s, v])
            }
            _ => panic!("a model is only given its own kind of batch"),
        }
    }

    /// The same weights running `chunked`'s ops (burn-memory-efficient's attention and loss,
    /// or Burn's where none): what a paired comparison of the forms switches between steps.
    pub fn with_chunked(self, chunked: estimator::Chunked) -> Self {
        match self {
            Model::Llama(m) => Model::Llama(m.with_chunked(chunked)),
            Model::Transformer(m) => Model::Transformer(m.with_chunked(chunked)),
            mlp => mlp,
        }
    }

    /// The loss on `batch`: mean squared error for the MLP, mean next-token cross-entropy for
    /// the transformer.
    pub fn loss(&self, batch: &Batch) -> Tensor<1> {
        self.loss_in(batch, None)
    }

    /// The loss with the forward pass computed in `compute` (weights and inputs cast from
    /// their stored type, the loss itself in f32), or in the stored type if `None`. The casts
    /// are operations of the graph: backward casts each gradient back to its parameter's type.
    pub fn loss_in(&self, batch: &Batch, compute: Option<FloatDType>) -> Tensor<1> {
        match (self, batch) {
            (Model::Mlp(m), Batch::Regression { x, y }) => match compute {
                None => mlp::loss(m, x.clone(), y.clone()),
                Some(dtype) => mlp::loss_cast(&cast(m.clone(), dtype), x.clone(), y.clone(), dtype),
            },
            (Model::Transformer(m), Batch::Tokens { inputs, targets }) => match compute {
                None => m.loss(inputs.clone(), targets.clone()),
                // The chunked loss computes its statistics in f32 itself.
                Some(dtype) if m.chunks_loss() => {
                    cast(m.clone(), dtype).loss(inputs.clone(), targets.clone())
                }
                Some(dtype) => transformer::cross_entropy(
                    cast(m.clone(), dtype)
                        .forward(inputs.clone())
                        .cast(FloatDType::F32),
                    targets.clone(),
                ),
            },
            (Model::Llama(m), Batch::Tokens { inputs, targets }) => match compute {
                None => m.loss(inputs.clone(), targets.clone()),
                Some(dtype) if m.chunks_loss() => {
                    cast(m.clone(), dtype).loss(inputs.clone(), targets.clone())
                }
                Some(dtype) => transformer::cross_entropy(
                    cast(m.clone(), dtype)
                        .forward(inputs.clone())
                        .cast(FloatDType::F32),
                    targets.clone(),
                ),
            },
            _ => panic!("a model is only given its own kind of batch"),
        }
    }
}

/// The mean next-token cross-entropy of a decoder's last hidden states `[batch, seq, d_model]`
/// through its head (`weight` `[d_model, vocab]`, `bias`), over chunks of `chunk` tokens
/// (burn-memory-efficient's `linear_cross_entropy`): the logits never exist whole.
pub fn chunked_loss(
    hidden: Tensor<3>,
    weight: Tensor<2>,
    bias: Option<Tensor<1>>,
    targets: Tensor<2, Int>,
    chunk: usize,
) -> Tensor<1> {
    let [b, s, d] = hidden.dims();
    let hidden = hidden.reshape([b * s, d]);
    burn_memory_efficient::linear_cross_entropy(
        hidden,
        weight,
        bias,
        targets.reshape([b * s]),
        chunk,
    )
}

/// The module with every float parameter cast to `dtype`, as operations on the originals (so
/// that the gradients flow back to them through the casts).
pub fn cast<M: Module>(module: M, dtype: FloatDType) -> M {
    use burn::module::{ModuleMapper, Param};
    struct Cast(FloatDType);
    impl ModuleMapper for Cast {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
            let dtype = self.0;
            param.map(|t| t.cast(dtype))
        }
    }
    module.map(&mut Cast(dtype))
}

/// One training step, each phase metered: forward (with the loss), backward, optimizer step.
///
/// With `micro_batches` k > 1 the batch is split into k slices (views, no copy); each slice's
/// loss is scaled by 1/k, back-propagated, and its gradients added to a `GradientsAccumulator`
/// (inside the `backward` phase); one optimizer step then applies the sum, which equals the
/// gradient of the whole batch's mean loss. The meter records one forward and one backward
/// phase per micro-batch. `compute`, where set, is the float type the forward pass computes in
/// ([`Model::loss_in`]). `reads` says what else the step reads for a proof
/// ([`StepReads`]), each reading outside the memory of the phase it follows where it can.
#[allow(clippy::too_many_arguments)]
pub fn train_step(
    meter: &mut PhaseMeter<'_>,
    model: Model,
    optim: &mut ModuleOptimizer,
    lr: f64,
    batch: &Batch,
    micro_batches: usize,
    compute: Option<FloatDType>,
    reads: StepReads<'_>,
) -> Model {
    let read = |loss: &Tensor<1>| loss.clone().into_scalar::<f64>();
    let StepReads {
        losses,
        mut gradients,
    } = reads;
    let mut sample = |model: &Model, grads: &GradientsParams| {
        if let Some(out) = gradients.take() {
            mlp::sample_gradients(model, grads, GRADIENT_SAMPLE, out);
        }
    };
    if micro_batches <= 1 {
        let loss = meter.phase(Phase::Forward, || model.loss_in(batch, compute));
        if let Some(losses) = losses {
            losses.push(read(&loss));
        }
        let grads = meter.phase(Phase::Backward, || loss.backward());
        return meter.phase(Phase::Optimizer, || {
            let grads = GradientsParams::from_grads(grads, &model);
            sample(&model, &grads);
            optim.step(lr, model, grads)
        });
    }
    let mut accumulator = GradientsAccumulator::new();
    let mut total = 0.0;
    for slice in batch.slices(micro_batches) {
        let loss = meter.phase(Phase::Forward, || {
            model
                .loss_in(&slice, compute)
                .div_scalar(micro_batches as f64)
        });
        if losses.is_some() {
            total += read(&loss);
        }
        meter.phase(Phase::Backward, || {
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            accumulator.accumulate(&model, grads);
        });
    }
    if let Some(losses) = losses {
        losses.push(total);
    }
    meter.phase(Phase::Optimizer, || {
        let grads = accumulator.grads();
        sample(&model, &grads);
        optim.step(lr, model, grads)
    })
}

/// Values of a step's gradients kept by [`StepReads::gradients`]: about a thousand, spread over
/// every parameter, so that two fixes' steps from the same weights compare value by value.
pub const GRADIENT_SAMPLE: usize = 1024;

/// What a training step reads for a proof besides its memory.
#[derive(Default)]
pub struct StepReads<'a> {
    /// Where to push the step's loss (the whole batch's mean, summed over its micro-batches):
    /// read between the forward and backward phases, outside any phase's memory, so that a
    /// proof that the loss falls reads the measured run's own steps instead of training again.
    pub losses: Option<&'a mut Vec<f64>>,
    /// Where to put [`GRADIENT_SAMPLE`] values of the step's gradients
    /// ([`mlp::sample_gradients`]; room for them made beforehand), read after backward (in the
    /// optimizer's phase) before the optimizer consumes them, so that a fix's step is proved
    /// against another point's without computing either step again.
    pub gradients: Option<&'a mut Vec<f32>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use estimator::Chunked;

    /// The loss and a sample of the gradients of one step of `model` on `batch`.
    fn step(model: &Model, batch: &Batch) -> (f64, Vec<f32>) {
        let loss = model.loss(batch);
        let value = loss.clone().into_scalar::<f64>();
        let grads = GradientsParams::from_grads(loss.backward(), model);
        let mut sample = vec![0.0; GRADIENT_SAMPLE];
        mlp::sample_gradients(model, &grads, GRADIENT_SAMPLE, &mut sample);
        (value, sample)
    }

    /// Each decoder with burn-memory-efficient's attention, its loss and both computes the
    /// written-out step's loss and gradients (chunks that do not divide the sequence, grouped
    /// key/value heads in the Llama family, the GPT head's bias).
    #[test]
    fn chunked_forms_compute_the_written_out_step() {
        let device = Device::flex().autodiff();
        let gpt = ModelShape::Transformer(TransformerShape {
            vocab: 96,
            d_model: 32,
            layers: 2,
            heads: 4,
            seq: 24,
            tied_head: false,
            chunked: Chunked::default(),
        });
        let llama = ModelShape::Llama(LlamaShape {
            vocab: 96,
            d_model: 32,
            layers: 2,
            heads: 4,
            kv_heads: 2,
            mlp: 48,
            seq: 24,
            tied_head: true,
            lora_rank: None,
            lora_form: LoraForm::ActivationPath,
            base_bits: None,
            fused_attention: false,
            chunked: Chunked::default(),
        });
        let forms = [
            Chunked::attention(),
            Chunked::loss(),
            Chunked {
                attention: Some(5),
                loss: Some(7),
            },
        ];
        for shape in [gpt, llama] {
            // One model and batch for every form: the device's generator is shared with the
            // tests running beside this one, so a second draw could give other weights.
            let model = shape.init(&device);
            let batch = shape.batch(2, 3, &device);
            let (loss, grads) = step(&model, &batch);
            for chunked in forms {
                let (l, g) = step(&model.clone().with_chunked(chunked), &batch);
                assert!((l - loss).abs() < 1e-5, "{chunked:?}: loss {l} vs {loss}");
                let scale = grads.iter().fold(0f32, |m, v| m.max(v.abs()));
                let worst = g
                    .iter()
                    .zip(&grads)
                    .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
                assert!(
                    worst <= 1e-4 * scale,
                    "{chunked:?}: gradients off by {worst} of {scale}"
                );
            }
        }
    }
}
