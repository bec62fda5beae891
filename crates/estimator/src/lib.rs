//! The estimator: how many bytes a training step or an inference pass of a model holds at its
//! peak, and what fits on which card, computed from shapes alone (no Burn in this crate's
//! dependency tree).
//!
//! Question: before a reader runs anything, which batch of which model fits their card?
//! Method: byte rules read in Burn 0.22.1's code and checked against the experiments'
//! measurements on every page ([`estimate`]), carried to presets, cards and several cards
//! ([`capacity`]); the guide's calculator evaluates the same rules, emitted as data.
//! Answer: `workbench estimate` and `fit`, the guide's What fits page and its calculator all
//! read this one crate.

pub mod calculator;
pub mod capacity;
mod checkpointing;
pub mod decoder;
pub mod estimate;
mod optimizer;
pub mod scalar;
pub mod shapes;

pub use checkpointing::Checkpointing;
pub use optimizer::{factored_values, Optimizer};
pub use shapes::{Chunked, LlamaShape, LoraForm, MlpShape, ModelShape, TransformerShape};
