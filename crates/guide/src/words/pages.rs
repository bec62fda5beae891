//! The words of each technique's page: its title, what it does, the fix in one sentence and
//! what it means on a device backend. One arm per technique of [`TechniqueId`], so a technique
//! without its page's words does not compile.

use results::TechniqueId;

/// A technique page's own words (its findings are worded from its analysis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageWords {
    /// The page's title.
    pub title: &'static str,
    /// What the technique does, in two or three sentences.
    pub explanation: &'static str,
    /// What to change to apply it, in one imperative sentence.
    pub fix: &'static str,
    /// What it, or its measurement, means on wgpu and CUDA where that differs from the CPU.
    pub on_devices: &'static str,
}

/// The page words of technique `id`.
pub fn page(id: TechniqueId) -> PageWords {
    match id {
        TechniqueId::Gpt2Small => PageWords {
            title: "Every fix on a GPT-2-small step",
            explanation: "One model of the size people run out of memory with, one training step, every fix \
             applied to it in turn: each cell's peak is a share of the same plain step's peak.",
            fix: "Read the table for your case: training or inference, and whether the fixed part alone \
             is over your card.",
            on_devices: "The byte rules are Burn's autodiff and the optimizer's, the same on every device; a \
             GPU runs the same cells at sequence 1024.",
        },
        TechniqueId::LlamaFamily => PageWords {
            title: "The Llama family: every fix, LoRA, the KV cache",
            explanation: "A Llama-family block (RMSNorm, rotary positions, grouped-query attention, a SwiGLU \
             MLP) of TinyLlama's width under every fix of the GPT-2 table; LoRA adapters on a \
             frozen base, where only the adapters take gradients and optimizer state; and \
             generation with a key/value cache, whose bytes grow with every token by the key/value \
             heads' width, which grouped-query attention divides; Burn's fused attention, which \
             in inference need not hold the scores (what it holds instead is measured below) and is written out again by autodiff in \
             training; and LoRA in two forms, the adapters applied to the input beside the frozen base, \
             and Burn's own apply_lora, which composes each adapted weight dense, on f32 and on 8- and \
             4-bit bases (QLoRA).",
            fix: "To fine-tune on a small card, freeze the base and train LoRA adapters applied on the \
             activation path (Burn's apply_lora composes each adapted weight dense: measured below); \
             where the frozen base alone is over the card, quantize it with Burn's apply_qlora (on \
             wgpu or CUDA, which pack it); to generate, keep the key/value cache, prefer a model with fewer key/value heads, and \
             call the fused attention.",
            on_devices: "The byte rules are Burn's autodiff and the optimizer's, the same on every device; \
             a GPU runs the block at TinyLlama's vocabulary and sequence 2048.",
        },
        TechniqueId::EfficientAttention => PageWords {
            title: "Memory-efficient attention and the chunked loss",
            explanation: "At the sequences readers fine-tune at, most of a training step is attention's scores: \
             Burn 0.22.1's autodiff writes attention out, fused call or not, and keeps score-sized \
             tensors (heads x sequence² values a block) until backward; a language model's loss \
             holds the logits over the whole vocabulary for every token. burn-memory-efficient, a \
             crate of this workspace that depends on Burn alone, computes both in chunks as \
             differentiable operations with their own backward, which recomputes each chunk \
             (FlashAttention-2's backward) instead of keeping it.",
            fix: "Add burn-memory-efficient and call its attention(q, k, v, mask, AttentionOptions::causal(256)) in place of the written-out scores, and linear_cross_entropy(hidden, head.weight.val(), bias, targets, 512) in place of the head and the loss.",
            on_devices: "The ops compose Burn's own primitives, so wgpu and CUDA run them as Flex does; \
             CubeCL's fusion may merge a chunk's element-wise work, and its pool rounds each \
             chunk's buffers to its pages.",
        },
        TechniqueId::BatchSize => PageWords {
            title: "Batch size",
            explanation: "A training step holds the model, its optimizer state and the batch, plus the larger of \
             two things: the activations the forward pass keeps for backward, which grow linearly \
             with the batch, and the parameter gradients, which do not. Shrinking the batch saves \
             activation memory only; once gradients set the peak, a smaller batch buys nothing and \
             costs throughput. The sweep measures where that crossover lies.",
            fix: "Lower the batch size.",
            on_devices: "On wgpu and CUDA the probe is CubeCL's memory manager, read after a device sync: \
             parameters, Adam state and the bytes the forward pass leaves for backward are exact. \
             CubeCL keeps no high-water mark, so each phase's peak is bracketed: from below by \
             the boundary readings and a thread sampling the stream (a transient between two \
             samples, such as the loss's square, can be missed, so the activation slope is a \
             lower bound), from above by the pool's reserved bytes after the phase, the pool \
             emptied before it. On a GPU it is reserved bytes that run out, so read both bounds.",
        },
        TechniqueId::Accumulation => PageWords {
            title: "Gradient accumulation",
            explanation: "Gradient accumulation splits a batch of B samples into k micro-batches of B/k, \
             back-propagates each with its loss scaled by 1/k, adds up the gradients, and takes one \
             optimizer step: the same step as the big batch, with the activations of only one \
             micro-batch alive at a time. It costs the accumulated gradients (one more copy of the \
             parameter gradients) and the speed of k smaller passes.",
            fix: "Keep the batch, split it into micro-batches and accumulate their gradients before one optimizer step.",
            on_devices: "On the device backends the accumulated gradients and each micro-batch's activations \
             are device memory, read from CubeCL's memory manager at phase boundaries, and each \
             phase also shows the bytes the pools had reserved at its end: what a GPU runs out of \
             is reserved memory, which the pools do not return until memory_cleanup().",
        },
        TechniqueId::MixedPrecision => PageWords {
            title: "Mixed precision (bf16, f16)",
            explanation: "Storing every tensor in bf16 or f16 halves weights, optimizer state, gradients and \
             activations; mixed precision proper keeps f32 master weights, gradients and optimizer \
             state and computes the forward pass in 16 bits, which halves activations only and adds \
             a 16-bit copy of the weights. f16's narrow range flushes small gradients to zero unless \
             the loss is scaled up before backward (a dynamic loss scale); bf16 has f32's range and \
             needs none. Every precision trains the same student on the same task for the same \
             steps, and its loss curve is compared with f32's.",
            fix: "Compute in bf16 (mixed precision with f32 master weights), or store the whole model in 16 bits.",
            on_devices: "On a GPU, 16-bit matmuls run on tensor cores, so mixed precision is expected to raise \
             throughput there, the opposite of what this CPU shows; that is an expectation, \
             not a figure of this guide until a GPU result set sits beside this one. A \
             device that lacks a type refuses its points (the software Vulkan driver has no \
             bf16): they appear as failed points saying so.",
        },
        TechniqueId::Checkpointing => PageWords {
            title: "Gradient checkpointing",
            explanation: "Backward needs tensors from the forward pass; checkpointing keeps fewer of them and \
             recomputes the rest when backward asks. In Burn it is a property of the autodiff \
             device: device.autodiff().gradient_checkpointing() recomputes the outputs of memory-bound ops \
             (ReLU, additions) from the nearest kept output of a compute-bound op (a Linear), \
             trading a little compute for activation memory. It lowers the step's peak only where \
             activations, not parameter gradients, set it.",
            fix: "Recompute activations in backward instead of keeping them: train on device.autodiff().gradient_checkpointing(), Burn's balanced strategy.",
            on_devices: "Which tensors are kept and which recomputed is decided by Burn's autodiff, above the \
             backend, so the memory rules (and the predictions) are the same on every \
             device. What changes on a GPU is the price of recomputing: memory-bound ops are \
             cheap there relative to matmuls, which is why the balanced strategy recomputes \
             those.",
        },
        TechniqueId::SequenceLength => PageWords {
            title: "Sequence length (transformer)",
            explanation: "A transformer's forward pass keeps, for every token and block, tensors as wide as the \
             model (the layer norms' intermediates, the attention projections, the MLP's 4x hidden \
             layer) and, for attention, rows as long as the sequence: the attention weights are a \
             sequence-by-sequence matrix per head. Per token the first part is fixed and the second \
             grows with the length, so the memory of a batch of sequences grows with the square of \
             the length once attention dominates. Shorter sequences (or fewer per batch) are the \
             fix; the crossover says when attention, not the MLP, is what to attack (by \
             checkpointing or a fused attention kernel that does not keep the weights).",
            fix: "Shorten the sequences, or checkpoint the transformer's blocks.",
            on_devices: "On wgpu and CUDA the probe is CubeCL's memory manager, read at phase boundaries after a \
             device sync: what the forward pass leaves for backward is exact, so the per-token \
             bytes compare directly with the CPU's; a fused attention kernel (which Burn 0.22 does \
             not use in this model) would not keep the sequence-by-sequence weights at all.",
        },
        TechniqueId::InPlace => PageWords {
            title: "In-place operations and ownership",
            explanation: "Burn's CPU backend writes an operation's result into its input's buffer when the input is \
             uniquely owned and contiguous, so ownership decides memory: code that keeps a clone of x \
             alive while transforming it pays for a new buffer at the first write, code that hands x \
             over by value does not. The same computation is measured written both ways, for an \
             element-wise chain and a layer normalisation, and the difference is predicted in bytes \
             from the backend's rules.",
            fix: "Pass tensors to operations by value (no clone) when you no longer need them, so the operation can reuse the buffer.",
            on_devices: "CubeCL backends also write into a uniquely owned input (burn-cubecl checks that the \
             handle can be mutated), and with fusion (a default feature of burn-wgpu and burn-cuda) a \
             chain of element-wise ops can run as one kernel whose intermediates never reach \
             device memory. The predictions here follow Flex's rules, so on a device the \
             measured bytes are the finding and the predictions only a reference.",
        },
        TechniqueId::Views => PageWords {
            title: "Views against copies",
            explanation: "Slicing, narrowing, transposing, reshaping a contiguous tensor and expanding change only \
             a tensor's shape, strides and offset: they share the parent's buffer and cost nothing. A \
             reshape that strides cannot express, an element-wise op on a strided view and a round \
             trip through TensorData copy. A view is not free in one way: it keeps the whole parent \
             buffer alive, so a one-row view of a large tensor holds all of it.",
            fix: "Copy out the small slice you keep (or drop the view): a view keeps its whole parent alive.",
            on_devices: "Views are views on the device backends too (shape, strides and offset over one buffer), \
             and a view keeps its parent's buffer alive there as well. A round trip through \
             TensorData is not a device copy: to_data copies the tensor to host memory, \
             which the device probe does not count; only the tensor made again from it is \
             device memory.",
        },
        TechniqueId::NoGrad => PageWords {
            title: "No-grad evaluation",
            explanation: "Evaluating a model on the autodiff backend records, for every operation, what backward \
             would need: the activations of the whole pass stay alive. Calling `model.valid()` gives \
             the same module without autodiff, where a pass only holds the tensor being computed. \
             In Burn the graph of a forward pass that is never back-propagated is not freed when its \
             output is dropped: it lingers until the next `backward()`, so an evaluation loop on the \
             autodiff backend grows memory pass after pass.",
            fix: "Evaluate on model.valid(), without the autodiff graph.",
            on_devices: "The trap is the same on a device: an autodiff forward pass that is never \
             back-propagated keeps its graph, and the graph holds device buffers. CubeCL's \
             pools then keep those pages reserved after the graph is freed, until \
             memory_cleanup() returns them (see memory-summary).",
        },
        TechniqueId::CacheRelease => PageWords {
            title: "Cache release (empty_cache)",
            explanation: "A caching allocator keeps the memory of freed tensors reserved, so that the next tensor \
             of that size costs no call to the driver; nvidia-smi shows the reserved bytes, not the \
             bytes in use. Burn's GPU backends cache through CubeCL's memory manager, and \
             memory_cleanup() returns its unused pages (PyTorch's empty_cache). Releasing helps \
             another process, not this one: the next allocation pays for it. The experiment reads \
             in use and reserved with a large tensor alive, after it is dropped and after the \
             cleanup, and times an allocation from the cache against one after a cleanup.",
            fix: "Call memory_cleanup() on the device to hand cached pages back: it lowers the bytes reserved, not the bytes in use.",
            on_devices: "This is a device technique. On the CPU (Flex) there is no pool: a freed tensor's \
             bytes go back to the process heap at once, the counting allocator sees no reserved \
             bytes, and both allocations below are the same (the system allocator may keep pages \
             the counting allocator cannot see).",
        },
        TechniqueId::OptimizerState => PageWords {
            title: "Optimizer state",
            explanation: "An optimizer keeps state for every parameter between steps: Adam and AdamW two \
             moments, SGD with momentum one velocity, plain SGD nothing. In f32 that is 8, 4 or 0 \
             bytes per parameter on top of the 4 of the weight and the 4 of its gradient, whatever \
             the batch: with a large model and a small batch it is the optimizer, not the \
             activations, that fills the card. A lighter optimizer saves that state; whether the \
             model still trains as well is the price, and it is the model's to say.",
            fix: "Switch Adam for SGD with momentum (or plain SGD) if your model still converges with it: it keeps one value per parameter instead of two (or none).",
            on_devices: "On wgpu and CUDA the state is device memory, read from CubeCL's memory manager after \
             the first step, after a sync: the same tensors as on the CPU, each rounded up to the \
             pool's allocation granularity. Bitsandbytes' 8-bit Adam, which memory guides cite, has \
             no Burn 0.22 counterpart.",
        },
        TechniqueId::Quantization => PageWords {
            title: "Quantized weights",
            explanation: "Weights stored in fewer bits: 16-bit floats (f16, bf16), or integers of 8, 4 or 2 bits \
             with a scale per tensor or per block of values, which Burn's `quantize_weights` \
             produces from an f32 model. At inference, where nothing else is large, the weights are \
             most of the memory, so their size is the model's. What matters is how Burn stores the \
             quantized values, what a layer does with them when it runs, and how far the output \
             moves.",
            fix: "For inference, quantize the weights to 8 bits (module.quantize_weights with a Quantizer, a scale per block) or cast them to f16; check the output against f32's before you serve it.",
            on_devices: "CubeCL (wgpu, CUDA) packs quantized values into u32 words, so 4-bit and 2-bit weights \
             take a half and a quarter of 8-bit's, where Flex stores every value in a byte. The \
             dequantized f32 copy each Linear makes on its forward is a device buffer, counted by \
             CubeCL's memory manager and rounded to its pages. Some schemes are not supported by \
             every runtime: a point that fails shows its error.",
        },
        TechniqueId::Offload => PageWords {
            title: "Offload to the CPU",
            explanation: "The optimizer's state (Adam's two moments) and the master copy of the weights do not \
             have to live on the GPU: forward and backward need only the weights they compute with. \
             Offloading, the idea of ZeRO-Offload, sends the gradients to the host after backward, \
             steps the optimizer there in host memory, and sends the updated weights back. The \
             device saves the state; every step pays two copies across the bus and the host's \
             slower optimizer step. The workbench moves them as TensorData, and reading a device \
             tensor waits for the device: the copies are synchronous.",
            fix: "Step the optimizer on the host: read the gradients back with into_data after backward, step a copy of the model on Device::flex().autodiff(), and write its weights back to the device.",
            on_devices: "This is a device technique: the device's bytes come from CubeCL's memory manager, the \
             host's from the counting allocator, and the bytes copied are counted as they cross. On \
             lavapipe (wgpu in software) the 'device' is the CPU too, so its times say what the \
             copies cost there, not across a PCIe bus. On the CPU backend alone nothing moves: the \
             host is the device.",
        },
        TechniqueId::AllocatorSettings => PageWords {
            title: "Allocator settings",
            explanation: "A caching allocator keeps the pages of freed tensors to serve later allocations \
             quickly, so a device can run out of memory while most of what it holds is reserved, \
             not in use. PyTorch tunes its allocator with `PYTORCH_CUDA_ALLOC_CONF` \
             (`expandable_segments`); Burn's backends on CubeCL (wgpu, CUDA) take a \
             `MemoryConfiguration` when a device is set up: an adaptive pool whose pages follow the \
             largest allocation served (the default in CubeCL 0.11; 0.10's was sub-slices of pages in \
             fixed sizes), or a page of its own per allocation (`ExclusivePages`). What each holds \
             beyond the live tensors depends on the allocation pattern.",
            fix: "If much memory is reserved but not in use, call device.memory_cleanup() between phases of different sizes, and on wgpu try Device::wgpu_options().memory_config(MemoryConfiguration::ExclusivePages) before the device's first use.",
            on_devices: "The setting exists only on CubeCL backends and must be chosen before the device's first \
             use (an initialised runtime cannot be set up again). On wgpu it is set through \
             Device::wgpu_options(); Burn 0.22 has no such option for CUDA, so the CUDA result set \
             shows the default pool only. The CPU backend has no pool: every freed buffer goes back \
             to the process heap, so its page shows bytes in use only.",
        },
        TechniqueId::PeakAttribution => PageWords {
            title: "What holds the memory at the peak",
            explanation: "A step's peak split by the code that made each block: the model's layer \
             and operation, the backward node, or the optimizer, and the phase it was made in. \
             Burn has no memory profiler; the workbench's recorder (in burn-step-monitor) traces \
             every allocation of 64 KiB or more on the CPU backend to its call stack, as \
             PyTorch's memory snapshot does on CUDA, and writes the same page for your model.",
            fix: "Record one step of your own model on the CPU backend with burn_step_monitor::attribution::Recorder, open the page it writes, and apply the fix that removes its largest row.",
            on_devices: "The recorder reads the CPU's heap: a GPU's pool does not say who asked for a \
             block. What the CPU's picture shows holds on a GPU for the weights, gradients, \
             optimizer state and the activations autodiff keeps, which are the same tensors; \
             it differs where a GPU backend fuses operations (fewer transient blocks), where \
             Flex runs 16-bit matmuls in f32 buffers (a GPU does not), and in the pool's \
             rounding, which the CPU does not have.",
        },
        TechniqueId::MemoryOverSteps => PageWords {
            title: "Memory over many steps",
            explanation: "Memory that grows from step to step until the run dies is what Burn users report most. \
             Each loop below trains the same small model for many steps, reading the memory after \
             every step: the correct loop stays flat; a loop that keeps a tensor with a graph, or \
             makes batches on a new thread each epoch, does not.",
            fix: "Keep nothing that holds an autodiff graph across steps: read losses with into_scalar() and evaluate on model.valid().",
            on_devices: "On CubeCL (wgpu, CUDA) each thread that touches the device gets a stream, and each \
             stream its own pool; bytes in use and reserved are read on the training thread's \
             stream and over every pool of the device (each stream that worked on it), with the \
             driver's used memory on CUDA and the process's resident set where the device's \
             memory is host memory (lavapipe). The loader's workaround is recommended only on a \
             backend whose device-wide readings show it stops a leak.",
        },
    }
}

/// What a page shows, for the footer that says where its figures come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// A technique page: measured figures, with the estimator's beside them where it has a rule.
    Technique,
    /// The landing page: measured tables and an order projected to a card.
    Landing,
    /// What fits: the estimator's tables.
    Estimates,
    /// Runs and changes: measured sets side by side.
    Runs,
    /// The glossary: definitions.
    Definitions,
}

/// The footer of a page that shows `p`: a page of estimates never says its figures were
/// measured.
pub fn footer(p: Provenance) -> &'static str {
    match p {
        Provenance::Technique => {
            "The figures on this page were measured by workbench, except those labelled estimate, \
             rule or projected: the estimator's, each beside the measurement it was checked on. \
             The raw records are linked above."
        }
        Provenance::Landing => {
            "The tables' figures were measured by workbench; the order's peaks and batches are the \
             estimator's, projected to the card, each rule checked where the order says. The raw \
             records are linked from each page."
        }
        Provenance::Estimates => {
            "The tables on this page are the estimator's rules carried to each model and card, not \
             measurements; each says where its rules were verified and with what error. The \
             measurements are on the technique pages."
        }
        Provenance::Runs => {
            "Every figure on this page was measured by workbench; the raw records are linked from \
             each page."
        }
        Provenance::Definitions => "Definitions; the figures are on the pages that measure them.",
    }
}
