//! One folder per technique, each with the same four parts: `mod.rs` (what is measured, its
//! typed config, its own metric keys and the [`Technique`](crate::Technique) impl), `predict.rs`
//! (the byte model), `analysis.rs` (findings, charts as data, headline) and `snippet.rs` (the
//! Burn code shown on its page, compiled here so that it stays true to Burn 0.21).
//!
//! The registry below is the one place a technique is named outside its folder: one line each,
//! in the guide's order, declaring its module and its place in [`all`].

use crate::Experiment;

/// Declares each technique's module and lists its technique in the guide's order.
macro_rules! registry {
    ($($module:ident :: $technique:ident,)*) => {
        $(pub mod $module;)*

        /// Every technique, in the guide's order.
        pub fn all() -> Vec<&'static dyn Experiment> {
            vec![$(&$module::$technique,)*]
        }
    };
}

registry! {
    gpt2_small::Gpt2Small,
    batch_size::BatchSize,
    accumulation::Accumulation,
    mixed_precision::MixedPrecision,
    checkpointing::GradientCheckpointing,
    sequence_length::SequenceLength,
    in_place::InPlace,
    views::Views,
    no_grad::NoGrad,
    cache_release::CacheRelease,
    optimizer_state::OptimizerState,
    quantization::Quantization,
    offload::Offload,
    allocator_settings::AllocatorSettings,
    memory_over_steps::MemoryOverSteps,
}
