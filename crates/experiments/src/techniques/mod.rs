//! One folder per technique, each with the same four parts: `mod.rs` (what is measured, its
//! typed config, its own metric keys and the [`Technique`](crate::Technique) impl), `predict.rs`
//! (the byte model), `analysis.rs` (findings, charts as data, headline) and `snippet.rs` (the
//! Burn code shown on its page, compiled here so that it stays true to Burn 0.22).
//!
//! [`experiment`] maps each [`TechniqueId`] (the one list of techniques, in the guide's order,
//! declared in `results`) to its technique; the guide's page words are exhaustive over the
//! same list.

use results::TechniqueId;

use crate::Experiment;

pub mod accumulation;
pub mod allocator_settings;
pub mod batch_size;
pub mod cache_release;
pub mod checkpointing;
pub mod efficient_attention;
pub mod gpt2_small;
pub mod in_place;
pub mod llama_family;
pub mod memory_over_steps;
pub mod mixed_precision;
pub mod no_grad;
pub mod offload;
pub mod optimizer_state;
pub mod peak_attribution;
pub mod quantization;
pub mod sequence_length;
pub mod views;

/// The technique `id` names: exhaustive over [`TechniqueId`], whose order is the guide's.
pub fn experiment(id: TechniqueId) -> &'static dyn Experiment {
    match id {
        TechniqueId::Gpt2Small => &gpt2_small::Gpt2Small,
        TechniqueId::LlamaFamily => &llama_family::LlamaFamily,
        TechniqueId::EfficientAttention => &efficient_attention::EfficientAttention,
        TechniqueId::BatchSize => &batch_size::BatchSize,
        TechniqueId::Accumulation => &accumulation::Accumulation,
        TechniqueId::MixedPrecision => &mixed_precision::MixedPrecision,
        TechniqueId::Checkpointing => &checkpointing::GradientCheckpointing,
        TechniqueId::SequenceLength => &sequence_length::SequenceLength,
        TechniqueId::InPlace => &in_place::InPlace,
        TechniqueId::Views => &views::Views,
        TechniqueId::NoGrad => &no_grad::NoGrad,
        TechniqueId::CacheRelease => &cache_release::CacheRelease,
        TechniqueId::OptimizerState => &optimizer_state::OptimizerState,
        TechniqueId::Quantization => &quantization::Quantization,
        TechniqueId::Offload => &offload::Offload,
        TechniqueId::AllocatorSettings => &allocator_settings::AllocatorSettings,
        TechniqueId::MemoryOverSteps => &memory_over_steps::MemoryOverSteps,
        TechniqueId::PeakAttribution => &peak_attribution::PeakAttribution,
    }
}

/// Every technique, in the guide's order.
pub fn all() -> Vec<&'static dyn Experiment> {
    TechniqueId::ALL.into_iter().map(experiment).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_technique_is_the_one_its_id_names() {
        for id in TechniqueId::ALL {
            assert_eq!(experiment(id).technique(), id);
        }
    }
}
