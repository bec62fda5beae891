//! The models the experiments train: small enough for a CPU, shaped so that the memory of
//! parameters, gradients, optimizer state and activations can each be predicted from shapes.

pub mod mlp;

pub use mlp::{Mlp, MlpShape};
