//! A small decoder-only transformer, built from Burn 0.22's own modules, trained on sequences
//! from a fixed random Markov chain (generated in the process from a seed: no download).
//!
//! Token and learned position embeddings, `layers` pre-norm blocks (causal multi-head
//! attention, then a 4x MLP with GELU, each with a residual), a final layer norm and a linear
//! head (or, tied, the token embedding's weights transposed, as GPT-2's), cross-entropy against
//! the next token. Attention dropout is set to 0 (burn-nn's
//! default is 0.1, active under autodiff), so that runs are comparable and checks can be exact.
//! The Markov chain gives the loss a known floor: its entropy rate.

use burn::module::Module;
use burn::nn::attention::{
    generate_autoregressive_mask, MhaInput, MultiHeadAttention, MultiHeadAttentionConfig,
};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{
    Embedding, EmbeddingConfig, Gelu, LayerNorm, LayerNormConfig, Linear, LinearConfig,
};
use burn::tensor::Device;
use burn::tensor::{Bool, Int, Tensor, TensorData};
use burn_memory_efficient::{attention, AttentionOptions};
use rand::distr::{weighted::WeightedIndex, Distribution};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub use estimator::TransformerShape;

/// Builds a [`Transformer`] of a shape and its data: the Burn half of [`TransformerShape`].
pub trait BuildTransformer {
    /// Builds the model with Burn's default initialisation on `device`.
    fn init(&self, device: &Device) -> Transformer;
}

impl BuildTransformer for TransformerShape {
    fn init(&self, device: &Device) -> Transformer {
        let d = self.d_model;
        let blocks = (0..self.layers)
            .map(|_| Block {
                norm_attention: LayerNormConfig::new(d).init(device),
                attention: MultiHeadAttentionConfig::new(d, self.heads)
                    .with_dropout(0.0)
                    .init(device),
                norm_mlp: LayerNormConfig::new(d).init(device),
                up: LinearConfig::new(d, 4 * d).init(device),
                gelu: Gelu::new(),
                down: LinearConfig::new(4 * d, d).init(device),
            })
            .collect();
        Transformer {
            tokens: EmbeddingConfig::new(self.vocab, d).init(device),
            positions: EmbeddingConfig::new(self.seq, d).init(device),
            blocks,
            norm: LayerNormConfig::new(d).init(device),
            head: (!self.tied_head).then(|| LinearConfig::new(d, self.vocab).init(device)),
            attention_chunk: self.chunked.attention,
            loss_chunk: self.chunked.loss,
        }
    }
}

/// `batch` sequences of `seq` tokens from `chain` (inputs and next-token targets), the same
/// for a given `seed` on every backend: what both decoders train on.
pub fn token_sequences(
    chain: &MarkovChain,
    seq: usize,
    batch: usize,
    seed: u64,
    device: &Device,
) -> (Tensor<2, Int>, Tensor<2, Int>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut inputs = Vec::with_capacity(batch * seq);
    let mut targets = Vec::with_capacity(batch * seq);
    for _ in 0..batch {
        let sequence = chain.sample(seq + 1, &mut rng);
        inputs.extend(sequence[..seq].iter().map(|&t| t as i64));
        targets.extend(sequence[1..].iter().map(|&t| t as i64));
    }
    let tensor =
        |values: Vec<i64>| Tensor::from_data(TensorData::new(values, [batch, seq]), device);
    (tensor(inputs), tensor(targets))
}

/// A pre-norm decoder block: `x + attention(norm(x))`, then `x + down(gelu(up(norm(x))))`.
#[derive(Module, Debug)]
pub struct Block {
    norm_attention: LayerNorm,
    attention: MultiHeadAttention,
    norm_mlp: LayerNorm,
    up: Linear,
    gelu: Gelu,
    down: Linear,
}

impl Block {
    fn forward(&self, x: Tensor<3>, mask: Tensor<3, Bool>, chunk: Option<usize>) -> Tensor<3> {
        let h = self.norm_attention.forward(x.clone());
        let attended = match chunk {
            Some(chunk) => efficient(&self.attention, h, chunk),
            None => {
                self.attention
                    .forward(MhaInput::self_attn(h).mask_attn(mask))
                    .context
            }
        };
        let x = x + attended;
        let h = self.norm_mlp.forward(x.clone());
        x + self.down.forward(self.gelu.forward(self.up.forward(h)))
    }
}

/// Burn's multi-head attention module's projections around burn-memory-efficient's causal
/// attention (the same scale, 1 / sqrt(head width); no dropout, as the workbench sets it).
fn efficient(mha: &MultiHeadAttention, x: Tensor<3>, chunk: usize) -> Tensor<3> {
    let [b, s, d] = x.dims();
    let split = |t: Tensor<3>| t.reshape([b, s, mha.n_heads, mha.d_k]).swap_dims(1, 2);
    let q = split(mha.query.forward(x.clone()));
    let k = split(mha.key.forward(x.clone()));
    let v = split(mha.value.forward(x));
    let context = attention(q, k, v, None, AttentionOptions::causal(chunk));
    mha.output
        .forward(context.swap_dims(1, 2).reshape([b, s, d]))
}

/// The decoder-only transformer.
#[derive(Module, Debug)]
pub struct Transformer {
    tokens: Embedding,
    positions: Embedding,
    blocks: Vec<Block>,
    norm: LayerNorm,
    /// The head; none where it is tied to the token embedding.
    head: Option<Linear>,
    /// Query rows per chunk of burn-memory-efficient's attention, where it replaces Burn's.
    attention_chunk: Option<usize>,
    /// Tokens per chunk of burn-memory-efficient's loss, where it replaces the whole logits.
    loss_chunk: Option<usize>,
}

impl Transformer {
    /// Next-token logits `[batch, seq, vocab]` of `tokens` `[batch, seq]`.
    pub fn forward(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        let x = self.hidden(tokens);
        match &self.head {
            Some(head) => head.forward(x),
            None => x.matmul(self.tokens.weight.val().transpose().unsqueeze::<3>()),
        }
    }

    /// The mean next-token cross-entropy of `tokens` against `targets`: the logits and Burn's
    /// `CrossEntropyLoss`, or burn-memory-efficient's chunked loss where the shape runs it.
    pub fn loss(&self, tokens: Tensor<2, Int>, targets: Tensor<2, Int>) -> Tensor<1> {
        let Some(chunk) = self.loss_chunk else {
            return cross_entropy(self.forward(tokens), targets);
        };
        // The hidden states first: parameters initialise lazily, in the order first read, so
        // this keeps the seeded weights the written-out form draws.
        let hidden = self.hidden(tokens);
        let (weight, bias) = match &self.head {
            Some(head) => (head.weight.val(), head.bias.as_ref().map(|b| b.val())),
            None => (self.tokens.weight.val().transpose(), None),
        };
        super::chunked_loss(hidden, weight, bias, targets, chunk)
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
    fn hidden(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        let [batch, seq] = tokens.dims();
        let device = tokens.device();
        let positions = Tensor::<1, Int>::arange(0..seq as i64, &device)
            .reshape([1, seq])
            .expand([batch, seq]);
        let mut x = self.tokens.forward(tokens) + self.positions.forward(positions);
        let mask = generate_autoregressive_mask(batch, seq, &device);
        for block in &self.blocks {
            x = block.forward(x, mask.clone(), self.attention_chunk);
        }
        self.norm.forward(x)
    }
}

/// Mean cross-entropy of the next-token predictions, in nats.
pub fn loss(model: &Transformer, inputs: Tensor<2, Int>, targets: Tensor<2, Int>) -> Tensor<1> {
    model.loss(inputs, targets)
}

/// Mean cross-entropy of `logits` `[batch, seq, vocab]` against the next tokens, in nats.
pub fn cross_entropy(logits: Tensor<3>, targets: Tensor<2, Int>) -> Tensor<1> {
    let [batch, seq, vocab] = logits.dims();
    CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(
            logits.reshape([batch * seq, vocab]),
            targets.reshape([batch * seq]),
        )
}

/// A fixed random Markov chain over `vocab` tokens: each token moves to one of `successors`
/// tokens, with random probabilities. Its entropy rate is the floor of the next-token loss.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkovChain {
    /// For each token, its successors and their probabilities.
    rows: Vec<Vec<(usize, f64)>>,
}

impl MarkovChain {
    /// The chain of `seed`: successors drawn uniformly, weights uniform in [0.1, 1), normalised.
    pub fn new(vocab: usize, successors: usize, seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let rows = (0..vocab)
            .map(|_| {
                let weights: Vec<(usize, f64)> = (0..successors.max(1))
                    .map(|_| (rng.random_range(0..vocab), rng.random_range(0.1..1.0)))
                    .collect();
                let total: f64 = weights.iter().map(|(_, w)| w).sum();
                weights.into_iter().map(|(t, w)| (t, w / total)).collect()
            })
            .collect();
        Self { rows }
    }

    /// A sequence of `len` tokens, the first uniform.
    pub fn sample(&self, len: usize, rng: &mut StdRng) -> Vec<usize> {
        let mut token = rng.random_range(0..self.rows.len());
        let mut out = Vec::with_capacity(len);
        for _ in 0..len {
            out.push(token);
            let row = &self.rows[token];
            let pick = WeightedIndex::new(row.iter().map(|(_, w)| *w))
                .expect("positive weights")
                .sample(rng);
            token = row[pick].0;
        }
        out
    }

    /// The entropy rate in nats: each token's next-token entropy, weighted by how often the
    /// chain visits the token (its stationary distribution, by power iteration from uniform).
    pub fn entropy_rate_nats(&self) -> f64 {
        let n = self.rows.len();
        let mut visit = vec![1.0 / n as f64; n];
        for _ in 0..1000 {
            let mut next = vec![0.0; n];
            for (from, row) in self.rows.iter().enumerate() {
                for &(to, p) in row {
                    next[to] += visit[from] * p;
                }
            }
            visit = next;
        }
        self.rows
            .iter()
            .zip(&visit)
            .map(|(row, v)| {
                // Repeated successors add up: entropy of the merged distribution.
                let mut merged: Vec<(usize, f64)> = Vec::new();
                for &(t, p) in row {
                    match merged.iter_mut().find(|(m, _)| *m == t) {
                        Some((_, q)) => *q += p,
                        None => merged.push((t, p)),
                    }
                }
                v * -merged.iter().map(|(_, p)| p * p.ln()).sum::<f64>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_fixed_by_its_seed_and_its_floor_is_below_uniform() {
        let chain = MarkovChain::new(64, 4, 7);
        assert_eq!(chain, MarkovChain::new(64, 4, 7));
        let floor = chain.entropy_rate_nats();
        assert!(floor > 0.0 && floor < 4f64.ln() + 1e-9, "{floor}");
        let mut a = StdRng::seed_from_u64(1);
        let mut b = StdRng::seed_from_u64(1);
        assert_eq!(chain.sample(100, &mut a), chain.sample(100, &mut b));
    }

    #[test]
    fn parameters_counted_by_shape_match_the_module() {
        use burn::tensor::Device;
        let shape = TransformerShape {
            chunked: Default::default(),
            vocab: 32,
            d_model: 16,
            layers: 2,
            heads: 2,
            seq: 8,
            tied_head: false,
        };
        let model = shape.init(&Device::flex());
        assert_eq!(model.num_params() as u64, shape.num_params());
    }
}
