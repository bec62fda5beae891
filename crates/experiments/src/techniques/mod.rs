//! One folder per technique, each with the same four parts: `mod.rs` (what is measured, its
//! typed config and the [`Technique`](crate::Technique) impl), `predict.rs` (the byte model),
//! `analysis.rs` (findings, charts as data, headline) and `snippet.rs` (the Burn code shown on
//! its page, compiled here so that it stays true to Burn 0.21).

pub mod accumulation;
pub mod allocator_settings;
pub mod batch_size;
pub mod cache_release;
pub mod checkpointing;
pub mod in_place;
pub mod mixed_precision;
pub mod no_grad;
pub mod offload;
pub mod optimizer_state;
pub mod quantization;
pub mod sequence_length;
pub mod views;
