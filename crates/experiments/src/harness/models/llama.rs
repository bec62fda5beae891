//! A Llama-family decoder, built from Burn 0.22's own modules: what most people fine-tune.
//!
//! Token embedding, `layers` pre-norm blocks (RMSNorm; causal attention with rotary positions
//! and grouped-query attention, the key/value heads repeated to the query heads; RMSNorm; a
//! SwiGLU MLP of a given width; each with a residual), a final RMSNorm and an untied head (or,
//! tied, the token embedding's weights transposed); no biases, as Llama. Attention is either
//! written out (the scores held, as Burn's `MultiHeadAttention` computes them) or Burn's fused
//! `attention` (a fused kernel on Flex and CubeCL in inference; Burn 0.22's autodiff
//! decomposes it). With a LoRA rank, the base is frozen and the query and value projections
//! carry adapters `B A` of that rank (B zero at the start, scaled by 2: alpha = 2 r), the only
//! trainable parameters. Trained on the transformer's Markov chain sequences.

use burn::module::{Lora, Module, ModuleVisitor, Param, ParamGroup, QLora, Quantizer};
use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::{
    Embedding, EmbeddingConfig, Initializer, Linear, LinearConfig, RmsNorm, RmsNormConfig,
    RotaryEncoding, RotaryEncodingConfig, SwiGlu, SwiGluConfig,
};
use burn::tensor::activation::softmax;
use burn::tensor::module::attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::quantization::{Calibration, QuantValue, ScaleDtype};
use burn::tensor::{Int, Tensor};
use burn_memory_efficient::{attention as efficient_attention, AttentionOptions};

use burn::tensor::Device;

/// LoRA's scale `alpha / r`, with alpha = 2 r (a common choice; the scale does not change
/// what is held in memory).
const LORA_SCALE: f64 = 2.0;

/// What masked scores are set to before the softmax (burn-nn's `MultiHeadAttention` default).
const MASKED_SCORE: f32 = -1.0e4;

pub use estimator::{LlamaShape, LoraForm};

/// Builds a [`Llama`] of a shape and its data: the Burn half of [`LlamaShape`].
pub trait BuildLlama {
    /// Builds the model with Burn's default initialisation on `device` (the base frozen under
    /// LoRA). Rotary positions cover the shape's sequence.
    fn init(&self, device: &Device) -> Llama;
    /// [`BuildLlama::init`] with rotary positions for `max_seq` tokens (at least the shape's
    /// sequence: generation beyond the training sequence).
    fn init_for(&self, max_seq: usize, device: &Device) -> Llama;
}

impl BuildLlama for LlamaShape {
    fn init(&self, device: &Device) -> Llama {
        self.init_for(self.seq, device)
    }
    fn init_for(&self, max_seq: usize, device: &Device) -> Llama {
        let blocks = (0..self.layers)
            .map(|_| llama_block(self, device))
            .collect();
        let model = Llama {
            tokens: EmbeddingConfig::new(self.vocab, self.d_model).init(device),
            blocks,
            norm: RmsNormConfig::new(self.d_model).init(device),
            head: (!self.tied_head).then(|| linear(self.d_model, self.vocab, device)),
            rope: RotaryEncodingConfig::new(max_seq.max(self.seq), self.head_dim()).init(device),
            heads: self.heads,
            kv_heads: self.kv_heads,
            fused: self.fused_attention,
            attention_chunk: self.chunked.attention,
            loss_chunk: self.chunked.loss,
        };
        let Some(rank) = self.lora_rank else {
            return model;
        };
        let quantizer = self.base_bits.map(|bits| base_quantizer(bits, device));
        match (self.lora_form, quantizer) {
            (LoraForm::ActivationPath, None) => model.frozen_base(),
            (LoraForm::ActivationPath, Some(mut q)) => model.frozen_base().quantize_base(&mut q),
            (LoraForm::Composed, None) => model.apply_lora(burn_lora(rank)),
            (LoraForm::Composed, Some(q)) => model.apply_qlora(QLora::new(burn_lora(rank), q)),
        }
    }
}

/// One block of `shape`, with the workbench's adapters where its LoRA form has them.
fn llama_block(shape: &LlamaShape, device: &Device) -> LlamaBlock {
    let (d, k) = (shape.d_model, shape.kv_width());
    let activation_path = shape.lora_form == LoraForm::ActivationPath;
    let adapter = |out: usize| {
        shape
            .lora_rank
            .filter(|_| activation_path)
            .map(|r| LoraAdapter::new(d, r, out, device))
    };
    LlamaBlock {
        norm_attention: RmsNormConfig::new(d).init(device),
        query: linear(d, d, device),
        query_lora: adapter(d),
        key: linear(d, k, device),
        value: linear(d, k, device),
        value_lora: adapter(k),
        output: linear(d, d, device),
        norm_mlp: RmsNormConfig::new(d).init(device),
        mlp: SwiGluConfig::new(d, shape.mlp).init(device),
        down: linear(shape.mlp, d, device),
    }
}

/// Burn's LoRA of `rank` on the blocks' query and value weights, scaled as the workbench's
/// adapters are (alpha = 2 r). Burn freezes every other float parameter, norms included.
fn burn_lora(rank: usize) -> Lora {
    let adapted =
        ParamGroup::from_regex(r"^blocks\.\d+\.(query|value)\.weight$").expect("a valid pattern");
    Lora::new(rank, LORA_SCALE * rank as f64).set_param_group(adapted)
}

/// The quantizer of QLoRA's base: the blocks' projection and MLP weights (what
/// [`Llama::quantize_base`] quantizes), `bits`-bit symmetric values, min-max calibration, one
/// f32 scale per tensor, in the device's own storage.
pub fn base_quantizer(bits: u8, device: &Device) -> Quantizer {
    let value = match bits {
        8 => QuantValue::Q8S,
        4 => QuantValue::Q4S,
        _ => QuantValue::Q2S,
    };
    let scheme = device
        .settings()
        .quantization
        .scheme
        .with_value(value)
        .per_tensor(ScaleDtype::F32);
    let mut quantizer = Quantizer::new(Calibration::MinMax, scheme);
    quantizer.set_param_group(
        ParamGroup::from_regex(r"^blocks\.\d+\.(query|key|value|output|mlp\.\w+|down)\.weight$")
            .expect("a valid pattern"),
    );
    quantizer
}

fn linear(d_in: usize, d_out: usize, device: &Device) -> Linear {
    LinearConfig::new(d_in, d_out).with_bias(false).init(device)
}

/// A LoRA adapter: `x A B`, scaled; B starts at zero, so the adapted model starts as the base.
#[derive(Module, Debug)]
pub struct LoraAdapter {
    down: Linear,
    up: Linear,
}

impl LoraAdapter {
    fn new(d_in: usize, rank: usize, d_out: usize, device: &Device) -> Self {
        Self {
            down: linear(d_in, rank, device),
            up: LinearConfig::new(rank, d_out)
                .with_bias(false)
                .with_initializer(Initializer::Zeros)
                .init(device),
        }
    }

    fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        self.up.forward(self.down.forward(x)).mul_scalar(LORA_SCALE)
    }
}

/// One block's key and value cache for generation: `[batch, kv_heads, tokens, head_dim]`.
#[derive(Debug, Clone, Default)]
pub struct KvCache {
    key: Option<Tensor<4>>,
    value: Option<Tensor<4>>,
}

impl KvCache {
    /// The cache with `key` and `value` appended along the tokens; returns the whole of each.
    fn append(&mut self, key: Tensor<4>, value: Tensor<4>) -> (Tensor<4>, Tensor<4>) {
        let join = |held: Option<Tensor<4>>, new: Tensor<4>| match held {
            Some(h) => Tensor::cat(vec![h, new], 2),
            None => new,
        };
        let key = join(self.key.take(), key);
        let value = join(self.value.take(), value);
        self.key = Some(key.clone());
        self.value = Some(value.clone());
        (key, value)
    }
}

/// A pre-norm Llama block.
#[derive(Module, Debug)]
pub struct LlamaBlock {
    norm_attention: RmsNorm,
    query: Linear,
    query_lora: Option<LoraAdapter>,
    key: Linear,
    value: Linear,
    value_lora: Option<LoraAdapter>,
    output: Linear,
    norm_mlp: RmsNorm,
    mlp: SwiGlu,
    down: Linear,
}

/// What a block's attention needs besides its input.
struct Context<'a> {
    rope: &'a RotaryEncoding,
    heads: usize,
    kv_heads: usize,
    fused: bool,
    attention_chunk: Option<usize>,
    start: usize,
}

fn adapted(base: &Linear, lora: &Option<LoraAdapter>, x: Tensor<3>) -> Tensor<3> {
    match lora {
        Some(adapter) => base.forward(x.clone()) + adapter.forward(x),
        None => base.forward(x),
    }
}

impl LlamaBlock {
    fn forward(&self, x: Tensor<3>, c: &Context<'_>, cache: Option<&mut KvCache>) -> Tensor<3> {
        let h = self.norm_attention.forward(x.clone());
        let x = x + self.attend(h, c, cache);
        let h = self.norm_mlp.forward(x.clone());
        x + self.down.forward(self.mlp.forward(h))
    }

    fn attend(&self, x: Tensor<3>, c: &Context<'_>, cache: Option<&mut KvCache>) -> Tensor<3> {
        let [b, s, d] = x.dims();
        let hd = d / c.heads;
        let split = |t: Tensor<3>, heads: usize| t.reshape([b, s, heads, hd]).swap_dims(1, 2);
        let q = split(adapted(&self.query, &self.query_lora, x.clone()), c.heads);
        let k = split(self.key.forward(x.clone()), c.kv_heads);
        let v = split(adapted(&self.value, &self.value_lora, x), c.kv_heads);
        let q = rope(c.rope, q, c.start);
        let k = rope(c.rope, k, c.start);
        let (k, v) = match cache {
            Some(cache) => cache.append(k, v),
            None => (k, v),
        };
        // Only a prefill (several query tokens from position 0) needs the causal mask; a
        // generated token attends to every cached one.
        let causal = s > 1;
        let context = match c.attention_chunk {
            // burn-memory-efficient takes the key/value heads as they are.
            Some(chunk) => {
                let options = AttentionOptions {
                    causal,
                    ..AttentionOptions::causal(chunk)
                };
                efficient_attention(q, k, v, None, options)
            }
            None => {
                let group = c.heads / c.kv_heads;
                let (k, v) = (repeat_kv(k, group), repeat_kv(v, group));
                match c.fused {
                    true => {
                        let options = AttentionModuleOptions {
                            scale: None,
                            softcap: None,
                            is_causal: causal,
                        };
                        attention(q, k, v, None, None, options)
                    }
                    false => written_out(q, k, v, causal),
                }
            }
        };
        self.output
            .forward(context.swap_dims(1, 2).reshape([b, s, d]))
    }
}

/// Rotary positions from `start`, computed in the query's float type: Burn's
/// `RotaryEncoding::apply` multiplies by its own tables (f32 where the default float is), so a
/// half-precision forward pass is given tables in its own type.
fn rope(rope: &RotaryEncoding, x: Tensor<4>, start: usize) -> Tensor<4> {
    let dtype = x.dtype();
    if rope.freq_complex.dtype() == dtype {
        return rope.apply(x, start);
    }
    // A half forward pass: the rotation in f32 (its tables and sign matrix are made in the
    // default float type), cast back.
    rope.apply(x.cast(rope.freq_complex.dtype()), start)
        .cast(dtype)
}

/// Key/value heads repeated `group` times to the query heads (grouped-query attention).
fn repeat_kv(x: Tensor<4>, group: usize) -> Tensor<4> {
    if group == 1 {
        return x;
    }
    let [b, kv, t, hd] = x.dims();
    x.unsqueeze_dim::<5>(2)
        .expand([b, kv, group, t, hd])
        .reshape([b, kv * group, t, hd])
}

/// Attention as Burn's `MultiHeadAttention` writes it: the scores `[batch, heads, s, t]` held.
fn written_out(q: Tensor<4>, k: Tensor<4>, v: Tensor<4>, causal: bool) -> Tensor<4> {
    let [b, _, s, hd] = q.dims();
    let scores = q.matmul(k.swap_dims(2, 3)).div_scalar((hd as f64).sqrt());
    let scores = if causal {
        let mask = generate_autoregressive_mask(b, s, &scores.device());
        scores.mask_fill(mask.unsqueeze_dim(1), MASKED_SCORE)
    } else {
        scores
    };
    softmax(scores, 3).matmul(v)
}

/// The Llama-family decoder.
#[derive(Module, Debug)]
pub struct Llama {
    tokens: Embedding,
    blocks: Vec<LlamaBlock>,
    norm: RmsNorm,
    /// The head; none where it is tied to the token embedding.
    head: Option<Linear>,
    rope: RotaryEncoding,
    heads: usize,
    kv_heads: usize,
    fused: bool,
    /// Query rows per chunk of burn-memory-efficient's attention, where it replaces Burn's.
    attention_chunk: Option<usize>,
    /// Tokens per chunk of burn-memory-efficient's loss, where it replaces the whole logits.
    loss_chunk: Option<usize>,
}

impl Llama {
    /// Next-token logits `[batch, seq, vocab]` of `tokens` `[batch, seq]`.
    pub fn forward(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        self.forward_from(tokens, 0, None)
    }

    /// Logits of `tokens` at positions from `start`, each block appending its keys and values
    /// to its cache where `caches` holds one per block.
    pub fn forward_from(
        &self,
        tokens: Tensor<2, Int>,
        start: usize,
        caches: Option<&mut [KvCache]>,
    ) -> Tensor<3> {
        let x = self.hidden_from(tokens, start, caches);
        match &self.head {
            Some(head) => head.forward(x),
            None => x.matmul(self.tokens.weight.val().transpose().unsqueeze::<3>()),
        }
    }

    /// The same weights running `chunked`'s ops.
    pub fn with_chunked(self, chunked: estimator::Chunked) -> Self {
        Self {
            attention_chunk: chunked.attention,
            loss_chunk: chunked.loss,
            ..self
        }
    }

    /// Whether the loss runs burn-memory-efficient's chunked loss.
    pub fn chunks_loss(&self) -> bool {
        self.loss_chunk.is_some()
    }

    /// The last hidden states `[batch, seq, d_model]` (after the final norm, before the head).
    fn hidden_from(
        &self,
        tokens: Tensor<2, Int>,
        start: usize,
        mut caches: Option<&mut [KvCache]>,
    ) -> Tensor<3> {
        let mut x = self.tokens.forward(tokens);
        let context = Context {
            rope: &self.rope,
            heads: self.heads,
            kv_heads: self.kv_heads,
            fused: self.fused,
            attention_chunk: self.attention_chunk,
            start,
        };
        for (i, block) in self.blocks.iter().enumerate() {
            let cache = caches.as_deref_mut().map(|c| &mut c[i]);
            x = block.forward(x, &context, cache);
        }
        self.norm.forward(x)
    }

    /// The mean next-token cross-entropy of `tokens` against `targets`: the logits and Burn's
    /// `CrossEntropyLoss`, or burn-memory-efficient's chunked loss where the shape runs it.
    pub fn loss(&self, tokens: Tensor<2, Int>, targets: Tensor<2, Int>) -> Tensor<1> {
        match self.loss_chunk {
            Some(chunk) => {
                // The hidden states first: parameters initialise lazily, in the order first
                // read, so this keeps the seeded weights the written-out form draws.
                let hidden = self.hidden_from(tokens, 0, None);
                let weight = match &self.head {
                    Some(head) => head.weight.val(),
                    None => self.tokens.weight.val().transpose(),
                };
                super::chunked_loss(hidden, weight, None, targets, chunk)
            }
            None => super::transformer::cross_entropy(self.forward(tokens), targets),
        }
    }

    /// The same weights with attention written out (`false`) or fused (`true`).
    pub fn with_fused_attention(self, fused: bool) -> Self {
        Self { fused, ..self }
    }

    /// The model with the parameters `quantizer`'s group names quantized ([`base_quantizer`]:
    /// the blocks' projection and MLP weights, QLoRA's base; the embedding, the norms, the head
    /// and the adapters stay as they are). The group's paths are read from the model's root.
    pub fn quantize_base(self, quantizer: &mut Quantizer) -> Self {
        self.quantize_weights(quantizer)
    }

    /// The model with every base parameter frozen (no gradient, no optimizer state), the
    /// adapters left trainable.
    fn frozen_base(self) -> Self {
        Self {
            tokens: self.tokens.no_grad(),
            blocks: self
                .blocks
                .into_iter()
                .map(|b| LlamaBlock {
                    norm_attention: b.norm_attention.no_grad(),
                    query: b.query.no_grad(),
                    key: b.key.no_grad(),
                    value: b.value.no_grad(),
                    output: b.output.no_grad(),
                    norm_mlp: b.norm_mlp.no_grad(),
                    mlp: b.mlp.no_grad(),
                    down: b.down.no_grad(),
                    ..b
                })
                .collect(),
            norm: self.norm.no_grad(),
            head: self.head.map(Module::no_grad),
            ..self
        }
    }
}

/// The values of every parameter that takes no gradient (the frozen base), in module order,
/// a quantized one read as its dequantized values: what a LoRA step must leave exactly as it
/// was.
pub fn frozen_values<M: Module>(module: &M) -> Vec<f32> {
    struct Frozen(Vec<f32>);
    impl ModuleVisitor for Frozen {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if !param.is_require_grad() {
                let values = param.val().dequantize().into_data().convert::<f32>();
                self.0.extend(values.iter::<f32>());
            }
        }
    }
    let mut visitor = Frozen(Vec::new());
    module.visit(&mut visitor);
    visitor.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::models::{token_sequences, MarkovChain};
    use burn::tensor::Device;

    fn tiny(kv_heads: usize, lora_rank: Option<usize>) -> LlamaShape {
        LlamaShape {
            chunked: Default::default(),
            vocab: 32,
            d_model: 16,
            layers: 2,
            heads: 4,
            kv_heads,
            mlp: 24,
            seq: 8,
            tied_head: false,
            lora_rank,
            lora_form: LoraForm::ActivationPath,
            base_bits: None,
            fused_attention: false,
        }
    }

    /// Every form of QLoRA quantizes the blocks' seven projection and MLP weights and nothing
    /// else, and trains: a step runs and only the adapters take gradients.
    #[test]
    fn qlora_quantizes_the_blocks_projections_in_both_forms() {
        struct Quantized(usize);
        impl ModuleVisitor for Quantized {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                if !param.val().dtype().is_float() {
                    self.0 += 1;
                }
            }
        }
        let device = Device::flex().autodiff();
        for form in [LoraForm::ActivationPath, LoraForm::Composed] {
            let shape = LlamaShape {
                lora_form: form,
                base_bits: Some(8),
                ..tiny(2, Some(2))
            };
            let model = shape.init(&device);
            let mut quantized = Quantized(0);
            model.visit(&mut quantized);
            assert_eq!(quantized.0, 7 * shape.layers, "{form:?}");
            let chain = MarkovChain::new(shape.vocab, 4, 1);
            let (inputs, _) = token_sequences(&chain, shape.seq, 2, 3, &device);
            let grads = model.forward(inputs).mean().backward();
            drop(grads);
        }
    }

    #[test]
    fn parameters_counted_by_shape_match_the_module() {
        for shape in [tiny(4, None), tiny(2, None), tiny(1, Some(3))] {
            let model = shape.init(&Device::flex());
            assert_eq!(model.num_params() as u64, shape.num_params(), "{shape:?}");
        }
    }

    #[test]
    fn the_cache_gives_the_logits_of_the_whole_sequence() {
        let device = Device::flex();
        let shape = tiny(2, None);
        let model = shape.init(&device);
        let chain = MarkovChain::new(shape.vocab, 4, 1);
        let (inputs, _) = token_sequences(&chain, shape.seq, 1, 3, &device);
        let whole = model.forward(inputs.clone());
        let mut caches = vec![KvCache::default(); shape.layers];
        let prefill = model.forward_from(inputs.clone().narrow(1, 0, 5), 0, Some(&mut caches));
        let mut last = prefill.narrow(1, 4, 1);
        for t in 5..shape.seq {
            last = model.forward_from(inputs.clone().narrow(1, t, 1), t, Some(&mut caches));
        }
        let expected = whole.narrow(1, shape.seq - 1, 1);
        let diff = (last - expected).abs().max().into_scalar::<f32>();
        assert!(diff < 1e-4, "{diff}");
    }

    #[test]
    fn fused_attention_computes_the_written_out_scores() {
        let device = Device::flex();
        let shape = tiny(2, None);
        let chain = MarkovChain::new(shape.vocab, 4, 1);
        let (inputs, _) = token_sequences(&chain, shape.seq, 2, 3, &device);
        let model = shape.init(&device);
        let written = model.forward(inputs.clone());
        let fused = model.with_fused_attention(true).forward(inputs);
        let diff = (written - fused).abs().max().into_scalar::<f32>();
        assert!(diff < 1e-4, "{diff}");
    }
}
