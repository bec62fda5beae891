//! A Llama-style attention block and its head trained one step written out and with this
//! crate's ops, on the CPU: the step's peak heap bytes of each, read from a counting allocator.
//!
//! `cargo run --release -p burn-memory-efficient --example llama_block [-- SEQ]` (default 1,024
//! tokens; 32 heads, 4 key/value heads, d_model 2,048, vocabulary 32,000). `cargo test` runs it
//! at 256 tokens and requires the efficient step's peak to be the lower.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Int, Tensor};
use burn_memory_efficient::{attention, linear_cross_entropy, AttentionOptions};

/// Every heap byte of the process, and the most held at once since the last reset.
struct Counting;
static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `alloc` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const D: usize = 2048;
const HEADS: usize = 32;
const KV_HEADS: usize = 4;
const HEAD_DIM: usize = D / HEADS;
const VOCAB: usize = 32_000;

struct Block {
    query: Linear,
    key: Linear,
    value: Linear,
    output: Linear,
    head: Linear,
}

impl Block {
    fn new(device: &Device) -> Self {
        let linear = |i, o| LinearConfig::new(i, o).with_bias(false).init(device);
        let kv = KV_HEADS * HEAD_DIM;
        Self {
            query: linear(D, D),
            key: linear(D, kv),
            value: linear(D, kv),
            output: linear(D, D),
            head: linear(D, VOCAB),
        }
    }

    /// The step's loss: attention then the head and the cross-entropy, written out or with
    /// this crate's ops.
    fn loss(&self, x: Tensor<3>, targets: Tensor<1, Int>, efficient: bool) -> Tensor<1> {
        let [b, s, _] = x.dims();
        let split = |t: Tensor<3>, h: usize| t.reshape([b, s, h, HEAD_DIM]).swap_dims(1, 2);
        let q = split(self.query.forward(x.clone()), HEADS);
        let k = split(self.key.forward(x.clone()), KV_HEADS);
        let v = split(self.value.forward(x.clone()), KV_HEADS);
        let context = if efficient {
            attention(q, k, v, None, AttentionOptions::causal(256))
        } else {
            written_out(q, k, v)
        };
        let hidden = x + self
            .output
            .forward(context.swap_dims(1, 2).reshape([b, s, D]));
        let hidden = hidden.reshape([b * s, D]);
        if efficient {
            linear_cross_entropy(hidden, self.head.weight.val(), None, targets, 512)
        } else {
            let logits = self.head.forward(hidden);
            CrossEntropyLossConfig::new()
                .init(&logits.device())
                .forward(logits, targets)
        }
    }
}

/// Attention as most models write it: the key/value heads repeated, every score held.
fn written_out(q: Tensor<4>, k: Tensor<4>, v: Tensor<4>) -> Tensor<4> {
    let repeat = |t: Tensor<4>| {
        let [b, kv, s, hd] = t.dims();
        let group = HEADS / kv;
        t.unsqueeze_dim::<5>(2)
            .expand([b, kv, group, s, hd])
            .reshape([b, kv * group, s, hd])
    };
    let (k, v) = (repeat(k), repeat(v));
    let s = q.dims()[2];
    let scores = q
        .matmul(k.swap_dims(2, 3))
        .div_scalar((HEAD_DIM as f64).sqrt());
    let mask = burn::nn::attention::generate_autoregressive_mask(1, s, &scores.device());
    softmax(
        scores.mask_fill(mask.unsqueeze_dim(1), f32::NEG_INFINITY),
        3,
    )
    .matmul(v)
}

/// One step's peak heap bytes above those held before it, and its loss.
fn step_peak(seq: usize, efficient: bool) -> (usize, f32) {
    let device = Device::flex().autodiff();
    device.seed(7);
    let block = Block::new(&device);
    let x = Tensor::<3>::random([1, seq, D], Default::default(), &device).require_grad();
    let targets = Tensor::<1, Int>::zeros([seq], &device);
    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let loss = block.loss(x, targets, efficient);
    let value = loss.clone().into_scalar::<f32>();
    let grads = loss.backward();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    drop(grads);
    (peak, value)
}

fn main() {
    let seq = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    for efficient in [false, true] {
        let (peak, loss) = step_peak(seq, efficient);
        let form = if efficient {
            "efficient"
        } else {
            "written-out"
        };
        println!(
            "{form:>12}: step peak {:>8.1} MiB, loss {loss:.6}",
            peak as f64 / 1048576.0
        );
    }
}

#[test]
fn the_efficient_step_holds_less_and_computes_the_same_loss() {
    let (written, loss_w) = step_peak(256, false);
    let (efficient, loss_e) = step_peak(256, true);
    assert!(efficient < written, "{efficient} >= {written}");
    assert!((loss_w - loss_e).abs() < 1e-4, "{loss_w} vs {loss_e}");
}
