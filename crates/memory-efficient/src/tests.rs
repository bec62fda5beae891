//! Correctness, with checks that can fail: each op's output and gradients against the
//! written-out computation (Burn's `attention_fallback`, and the logits with Burn's
//! `log_softmax`) in f64 on Flex, the reference. A tolerance derived from f32 rounding at the
//! size: the op in f32 may be off the f64 reference (relative to the result's largest value) by
//! at most 3 times the written-out f32 computation's own error there, or sqrt(2n) x f32's unit
//! roundoff (2^-24) where that is larger, n the longest sum (each of its terms rounded twice:
//! the product and the running sum). Measured: ours and the written-out
//! f32 agree with f64 to 1e-7 to 1e-5, and a deliberately wrong backward term (which must
//! fail the same check) is off by 0.5 to 3.

use burn::tensor::activation::log_softmax;
use burn::tensor::module::attention_fallback;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData};

use crate::mutation::{self, Mutant};
use crate::{attention, linear_cross_entropy, AttentionOptions};

/// Seeded uniform values in [-1, 1) (splitmix64): the same inputs on every device.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn to_f64<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.into_data()
        .convert::<f64>()
        .try_to_vec::<f64>()
        .expect("float data")
}

/// The largest difference from `reference`, relative to its largest magnitude.
fn relative_error(candidate: &[f64], reference: &[f64]) -> f64 {
    assert_eq!(candidate.len(), reference.len());
    let scale = reference
        .iter()
        .fold(0.0f64, |m, r| m.max(r.abs()))
        .max(1e-30);
    let worst = candidate
        .iter()
        .zip(reference)
        .map(|(c, r)| {
            if c.is_nan() {
                f64::INFINITY
            } else {
                (c - r).abs()
            }
        })
        .fold(0.0f64, f64::max);
    worst / scale
}

/// Named results (output and gradients) of one computation.
type Results = Vec<(&'static str, Vec<f64>)>;

/// Each result of `candidate` against the f64 `reference`, within 3 times the written-out f32
/// computation's error or sqrt(2n) times f32's unit roundoff (lavapipe's reductions, summed in
/// another order than Flex's, landed 1.4% above sqrt(n) on a 1,000-long sum).
fn compare(
    candidate: &Results,
    written: &Results,
    reference: &Results,
    n: usize,
) -> Result<(), String> {
    let floor = (2.0 * n as f64).sqrt() * f64::from(f32::EPSILON) / 2.0;
    for (((name, c), (_, w)), (_, r)) in candidate.iter().zip(written).zip(reference) {
        let (error, written_error) = (relative_error(c, r), relative_error(w, r));
        let tolerance = (3.0 * written_error).max(floor);
        if error > tolerance {
            return Err(format!(
                "{name}: relative error {error:.3e} > {tolerance:.3e} (written-out f32: \
                 {written_error:.3e})"
            ));
        }
    }
    Ok(())
}

/// An attention case: shapes, chunk, masks.
#[derive(Debug, Clone, Copy)]
struct Case {
    batch: usize,
    heads: usize,
    kv_heads: usize,
    seq_q: usize,
    seq_k: usize,
    head_dim: usize,
    chunk: usize,
    causal: bool,
    /// Keys masked at the start of the last sequence (left padding), as a `[batch, 1, 1, seq_k]`
    /// mask.
    padded: usize,
}

impl Case {
    fn new(seq: usize, chunk: usize) -> Self {
        Self {
            batch: 1,
            heads: 4,
            kv_heads: 2,
            seq_q: seq,
            seq_k: seq,
            head_dim: 16,
            chunk,
            causal: true,
            padded: 0,
        }
    }

    fn q_shape(&self) -> [usize; 4] {
        [self.batch, self.heads, self.seq_q, self.head_dim]
    }

    fn kv_shape(&self) -> [usize; 4] {
        [self.batch, self.kv_heads, self.seq_k, self.head_dim]
    }

    /// `[batch, 1, 1, seq_k]`, true on the last sequence's first `padded` keys.
    fn mask(&self, device: &Device) -> Option<Tensor<4, Bool>> {
        (self.padded > 0).then(|| {
            let masked = (0..self.batch * self.seq_k)
                .map(|i| i / self.seq_k == self.batch - 1 && i % self.seq_k < self.padded)
                .collect::<Vec<_>>();
            Tensor::from_data(
                TensorData::new(masked, [self.batch, 1, 1, self.seq_k]),
                device,
            )
        })
    }

    /// The inputs in `dtype` on `device`: q, k, v and the output's gradient (a fixed random
    /// direction).
    fn plain_inputs(&self, device: &Device, dtype: DType) -> [Tensor<4>; 4] {
        let make = |shape: [usize; 4], seed| {
            let data = TensorData::new(values(shape.iter().product(), seed), shape);
            Tensor::<4>::from_data(data, (device, dtype))
        };
        [
            make(self.q_shape(), 1),
            make(self.kv_shape(), 2),
            make(self.kv_shape(), 3),
            make(self.q_shape(), 4),
        ]
    }

    /// [`Case::plain_inputs`] on an autodiff device, q, k and v taking gradients.
    fn inputs(&self, device: &Device, dtype: DType) -> [Tensor<4>; 4] {
        let [q, k, v, direction] = self.plain_inputs(device, dtype);
        [
            q.require_grad(),
            k.require_grad(),
            v.require_grad(),
            direction,
        ]
    }

    /// Output and gradients of the written-out attention (Burn's fallback, the key/value heads
    /// repeated to the query heads).
    fn written_out(&self, device: &Device, dtype: DType) -> Results {
        let [q, k, v, direction] = self.inputs(device, dtype);
        let repeat = |t: Tensor<4>| {
            let [b, kv, s, d] = t.dims();
            let group = self.heads / kv;
            t.unsqueeze_dim::<5>(2)
                .expand([b, kv, group, s, d])
                .reshape([b, kv * group, s, d])
        };
        let mask = self
            .mask(device)
            .map(|m| m.expand([self.batch, self.heads, self.seq_q, self.seq_k]));
        let options = AttentionModuleOptions {
            scale: None,
            softcap: None,
            is_causal: self.causal,
        };
        let out = attention_fallback(
            q.clone(),
            repeat(k.clone()),
            repeat(v.clone()),
            mask,
            None,
            options,
        );
        results(out, direction, [q, k, v])
    }

    /// Output and gradients of [`attention`].
    fn ours(&self, device: &Device) -> Results {
        let [q, k, v, direction] = self.inputs(device, DType::F32);
        let options = AttentionOptions {
            chunk: self.chunk,
            causal: self.causal,
            scale: None,
        };
        let out = attention(q.clone(), k.clone(), v.clone(), self.mask(device), options);
        results(out, direction, [q, k, v])
    }

    /// Ours against the written-out f32 and the f64 reference on Flex.
    fn check(&self, device: &Device) -> Result<(), String> {
        let reference = self.written_out(&Device::flex().autodiff(), DType::F64);
        let written = self.written_out(device, DType::F32);
        let n = self.seq_q.max(self.seq_k).max(self.head_dim);
        compare(&self.ours(device), &written, &reference, n)
    }
}

fn results(out: Tensor<4>, direction: Tensor<4>, inputs: [Tensor<4>; 3]) -> Results {
    let grads = (out.clone() * direction).sum().backward();
    let grad = |t: &Tensor<4>| to_f64(t.grad(&grads).expect("a gradient"));
    vec![
        ("output", to_f64(out)),
        ("d_query", grad(&inputs[0])),
        ("d_key", grad(&inputs[1])),
        ("d_value", grad(&inputs[2])),
    ]
}

/// The attention cases: 128 to 2,048 tokens, chunks that divide the sequence and chunks that
/// do not, causal and padded masks (left padding: the first rows of the last sequence see no
/// key), grouped-query heads (2 and 4 query heads a key/value head) and plain multi-head,
/// cross-attention (fewer queries than keys, the causal diagonal bottom-right).
fn attention_cases() -> Vec<Case> {
    vec![
        Case::new(128, 32),
        Case {
            batch: 2,
            kv_heads: 1,
            padded: 37,
            ..Case::new(200, 64)
        },
        Case {
            heads: 2,
            kv_heads: 2,
            causal: false,
            padded: 50,
            batch: 2,
            ..Case::new(384, 100)
        },
        Case {
            seq_q: 96,
            seq_k: 160,
            ..Case::new(160, 40)
        },
        Case::new(2048, 256),
    ]
}

fn cpu() -> Device {
    Device::flex().autodiff()
}

#[test]
fn attention_matches_the_written_out_scores_and_gradients() {
    let _only = mutation::exclusive();
    for case in attention_cases() {
        case.check(&cpu())
            .unwrap_or_else(|e| panic!("{case:?}: {e}"));
    }
}

#[test]
fn attention_under_gradient_checkpointing_matches() {
    let _only = mutation::exclusive();
    let device = Device::flex().autodiff().gradient_checkpointing();
    let case = Case {
        padded: 20,
        batch: 2,
        ..Case::new(160, 48)
    };
    case.check(&device).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn attention_without_gradients_gives_the_same_output() {
    let _only = mutation::exclusive();
    let case = Case::new(192, 50);
    let device = Device::flex();
    let [q, k, v, _] = case.plain_inputs(&device, DType::F32);
    let ours = attention(q, k, v, None, AttentionOptions::causal(case.chunk));
    let reference = case.written_out(&cpu(), DType::F64);
    let error = relative_error(&to_f64(ours), &reference[0].1);
    assert!(error < 1e-5, "{error}");
}

#[test]
fn a_wrong_attention_backward_fails_the_check() {
    let _only = mutation::exclusive();
    let case = Case::new(128, 48);
    let failed = mutation::with(Mutant::SoftmaxDelta, || case.check(&cpu()));
    let message = failed.expect_err("the check passed a backward without its softmax term");
    assert!(message.starts_with("d_"), "{message}");
}

/// A cross-entropy case.
#[derive(Debug, Clone, Copy)]
struct Loss {
    tokens: usize,
    d_model: usize,
    vocab: usize,
    chunk: usize,
    frozen_weight: bool,
    /// Whether the head has a bias.
    bias: bool,
}

/// A case's inputs: hidden states, the head's weight and bias, the targets.
type LossInputs = (Tensor<2>, Tensor<2>, Option<Tensor<1>>, Tensor<1, Int>);

impl Loss {
    fn inputs(&self, device: &Device, dtype: DType) -> LossInputs {
        let make = |shape: [usize; 2], seed| {
            let data = TensorData::new(values(shape[0] * shape[1], seed), shape);
            Tensor::<2>::from_data(data, (device, dtype))
        };
        let hidden = make([self.tokens, self.d_model], 5).require_grad();
        let weight = make([self.d_model, self.vocab], 6).mul_scalar(2.0);
        let weight = if self.frozen_weight {
            weight
        } else {
            weight.require_grad()
        };
        let targets = values(self.tokens, 7)
            .iter()
            .map(|x| (((x + 1.0) / 2.0 * self.vocab as f32) as i64).min(self.vocab as i64 - 1))
            .collect::<Vec<_>>();
        let targets = Tensor::from_data(TensorData::new(targets, [self.tokens]), device);
        let bias = self.bias.then(|| {
            let data = TensorData::new(values(self.vocab, 8), [self.vocab]);
            Tensor::<1>::from_data(data, (device, dtype)).require_grad()
        });
        (hidden, weight, bias, targets)
    }

    fn results(
        &self,
        loss: Tensor<1>,
        hidden: Tensor<2>,
        weight: Tensor<2>,
        bias: Option<Tensor<1>>,
    ) -> Results {
        let grads = loss.clone().backward();
        let mut out = vec![
            ("loss", to_f64(loss)),
            ("d_hidden", to_f64(hidden.grad(&grads).expect("a gradient"))),
        ];
        match weight.grad(&grads) {
            Some(g) if !self.frozen_weight => out.push(("d_weight", to_f64(g))),
            None if self.frozen_weight => {}
            other => panic!(
                "frozen {}, weight gradient {:?}",
                self.frozen_weight,
                other.is_some()
            ),
        }
        if let Some(bias) = bias {
            out.push(("d_bias", to_f64(bias.grad(&grads).expect("a gradient"))));
        }
        out
    }

    fn written_out(&self, device: &Device, dtype: DType) -> Results {
        let (hidden, weight, bias, targets) = self.inputs(device, dtype);
        let logits = hidden.clone().matmul(weight.clone());
        let logits = match &bias {
            Some(b) => logits + b.clone().unsqueeze_dim(0),
            None => logits,
        };
        let picked = log_softmax(logits, 1).gather(1, targets.reshape([self.tokens, 1]));
        let loss = picked.mean().neg();
        self.results(loss, hidden, weight, bias)
    }

    fn ours(&self, device: &Device) -> Results {
        let (hidden, weight, bias, targets) = self.inputs(device, DType::F32);
        let loss = linear_cross_entropy(
            hidden.clone(),
            weight.clone(),
            bias.clone(),
            targets,
            self.chunk,
        );
        self.results(loss, hidden, weight, bias)
    }

    fn check(&self, device: &Device) -> Result<(), String> {
        let reference = self.written_out(&cpu(), DType::F64);
        let written = self.written_out(device, DType::F32);
        let n = self.tokens.max(self.vocab).max(self.d_model);
        compare(&self.ours(device), &written, &reference, n)
    }
}

fn loss_cases() -> Vec<Loss> {
    let base = Loss {
        tokens: 300,
        d_model: 32,
        vocab: 1000,
        chunk: 64,
        frozen_weight: false,
        bias: false,
    };
    vec![
        base,
        Loss {
            chunk: 100,
            bias: true,
            ..base
        },
        Loss {
            frozen_weight: true,
            bias: true,
            ..base
        },
        Loss {
            tokens: 2048,
            vocab: 5000,
            chunk: 512,
            ..base
        },
    ]
}

#[test]
fn linear_cross_entropy_matches_the_written_out_loss_and_gradients() {
    let _only = mutation::exclusive();
    for case in loss_cases() {
        case.check(&cpu())
            .unwrap_or_else(|e| panic!("{case:?}: {e}"));
    }
}

#[test]
fn a_wrong_cross_entropy_backward_fails_the_check() {
    let _only = mutation::exclusive();
    let case = loss_cases()[0];
    let failed = mutation::with(Mutant::TargetTerm, || case.check(&cpu()));
    let message = failed.expect_err("the check passed a backward without its target term");
    assert!(message.starts_with("d_"), "{message}");
}

#[cfg(feature = "wgpu")]
mod wgpu {
    use super::*;

    /// The default wgpu device, initialised once for the process (a runtime initialises once).
    fn device() -> Device {
        static DEVICE: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
        let device = DEVICE.get_or_init(|| {
            Device::wgpu_options()
                .init()
                .expect("a wgpu device (lavapipe in the tests)")
        });
        device.clone().autodiff()
    }

    /// The cases up to 384 tokens: on lavapipe every new shape compiles and autotunes its
    /// kernels (minutes for the 2,048-token cases in a debug build), and the grouped heads,
    /// masks, uneven chunks and vocabulary chunks are all in the shorter ones; the CPU runs
    /// every case.
    fn on_wgpu<C>(cases: Vec<C>, tokens: impl Fn(&C) -> usize) -> Vec<C> {
        cases.into_iter().filter(|c| tokens(c) <= 384).collect()
    }

    #[test]
    fn attention_matches_on_wgpu() {
        let _only = mutation::exclusive();
        let device = device();
        for case in on_wgpu(attention_cases(), |c| c.seq_q) {
            case.check(&device)
                .unwrap_or_else(|e| panic!("{case:?}: {e}"));
        }
    }

    #[test]
    fn linear_cross_entropy_matches_on_wgpu() {
        let _only = mutation::exclusive();
        let device = device();
        for case in on_wgpu(loss_cases(), |c| c.tokens) {
            case.check(&device)
                .unwrap_or_else(|e| panic!("{case:?}: {e}"));
        }
    }
}
