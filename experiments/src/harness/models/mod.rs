//! The models the experiments train: small enough for a CPU, shaped so that the memory of
//! parameters, gradients, optimizer state and activations can each be predicted from shapes.

pub mod mlp;
pub mod transformer;

pub use mlp::{Mlp, MlpShape};
pub use transformer::{MarkovChain, Transformer, TransformerShape};

use crate::harness::profile::Sizes;

/// The MLP the training techniques train (batch size, accumulation, no-grad), at each size.
pub fn training_mlp(sizes: Sizes) -> MlpShape {
    match sizes {
        Sizes::Quick => MlpShape {
            width: 256,
            depth: 4,
        },
        Sizes::Full => MlpShape {
            width: 1024,
            depth: 8,
        },
        Sizes::FullCuda => MlpShape {
            width: 4096,
            depth: 16,
        },
    }
}
