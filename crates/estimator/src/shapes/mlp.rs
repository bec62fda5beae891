//! The MLP's shape: a stack of square `Linear` layers with ReLU between them.
//!
//! Square layers make every figure easy to predict: `depth * (width^2 + width)` parameters, and a
//! forward pass that keeps about two `width`-sized tensors per layer and sample for backward.

use serde::{Deserialize, Serialize};

/// The shape of an MLP (the experiments' `Mlp`), from which its memory is predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MlpShape {
    /// Features in and out of every layer.
    pub width: usize,
    /// Number of Linear layers.
    pub depth: usize,
}

impl MlpShape {
    /// The parameter tensors' shapes: each layer's weight and bias.
    pub fn param_shapes(&self) -> Vec<Vec<usize>> {
        let w = self.width;
        (0..self.depth)
            .flat_map(|_| [vec![w, w], vec![w]])
            .collect()
    }

    /// Number of parameters: weights and biases.
    pub fn num_params(&self) -> u64 {
        (self.depth * (self.width * self.width + self.width)) as u64
    }

    /// Predicted bytes at the forward pass's high point per sample, in `elem_bytes` floats,
    /// above what was live before it: each hidden layer's Linear and ReLU outputs (kept for
    /// backward), the last Linear output and the loss's difference (kept for the square's
    /// backward). The square itself dies inside the mean.
    pub fn predicted_activation_bytes_per_sample(&self, elem_bytes: u64) -> u64 {
        (2 * (self.depth as u64 - 1) + 2) * self.width as u64 * elem_bytes
    }

    /// Predicted bytes at the forward pass's high point per sample under
    /// `BalancedCheckpointing`: ReLU is marked memory-bound, so its output is recomputed in
    /// backward rather than kept, while each hidden Linear output (ReLU's input, produced by a
    /// compute-bound op) is kept: one width per hidden layer. At the end of the pass the last
    /// Linear output and the loss's difference are live as without checkpointing, and the last
    /// hidden ReLU output, no longer kept, is still live while it feeds the last Linear.
    pub fn predicted_checkpointed_activation_bytes_per_sample(&self, elem_bytes: u64) -> u64 {
        ((self.depth as u64 - 1) + 3) * self.width as u64 * elem_bytes
    }

    /// Predicted bytes an evaluation pass on the autodiff backend leaves recorded per sample once
    /// its output is dropped: each hidden layer's Linear and ReLU outputs. The last output is
    /// saved by no operation, so it dies with the output.
    pub fn predicted_graph_bytes_per_sample(&self, elem_bytes: u64) -> u64 {
        2 * (self.depth as u64 - 1) * self.width as u64 * elem_bytes
    }

    /// Predicted bytes an evaluation pass without a graph holds at its peak per sample: a
    /// layer's input and its output, every other op running in place on uniquely owned buffers.
    pub fn predicted_inference_bytes_per_sample(&self, elem_bytes: u64) -> u64 {
        2 * self.width as u64 * elem_bytes
    }

    /// Floating-point operations of the matrix products of one training step on `batch`
    /// samples: per layer `2 B w^2` forward and `4 B w^2` backward (the input's and the
    /// weight's gradients); biases and element-wise ops left out.
    pub fn step_matmul_flop(&self, batch: usize) -> u64 {
        6 * (batch * self.depth * self.width * self.width) as u64
    }
}
