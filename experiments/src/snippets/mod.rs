//! The code blocks shown on the guide's pages, compiled here so that they stay true to Burn 0.21.
//! Where an experiment measures the snippet's functions themselves (`in_place`, `views`), the
//! page shows exactly the code that was measured.
#![allow(dead_code, missing_docs)]

pub mod accumulation;
pub mod batch_size;
pub mod cache_release;
pub mod checkpointing;
pub mod in_place;
pub mod mixed_precision;
pub mod no_grad;
pub mod views;
