use burn::backend::autodiff::checkpoint::strategy::BalancedCheckpointing;
use burn::backend::{Autodiff, Flex};

/// Checkpointing is a property of the autodiff backend, not of the model: the same training
/// code, generic over `B: AutodiffBackend`, runs with it switched on.
pub type Plain = Autodiff<Flex>; // NoCheckpointing
pub type Checkpointed = Autodiff<Flex, BalancedCheckpointing>;

// On a GPU: Autodiff<Cuda, BalancedCheckpointing>.
// Balanced recomputes the outputs of memory-bound ops (ReLU, add, ...) in backward from the
// nearest kept output of a compute-bound op (matmul, Linear); nothing else changes.
fn train<B: burn::tensor::backend::AutodiffBackend>() { /* model, optimizer, loop */
}

fn main() {
    train::<Checkpointed>();
}
