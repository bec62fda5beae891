//! The optimizers a training step can take, Burn 0.22's own, each with the tensors it keeps
//! per parameter as read in `burn-optim` 0.22's source: the byte rule every prediction of
//! optimizer state uses. (Building one is the experiments' `BuildOptimizer`.)

use serde::{Deserialize, Serialize};

use crate::shapes::ModelShape;

/// A Burn 0.22 optimizer, at Burn's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    /// `AdamConfig::new()`: two moments per parameter.
    #[default]
    Adam,
    /// `AdamWConfig::new()`: Adam's two moments, weight decay applied to the weights.
    AdamW,
    /// `SgdConfig::new().with_momentum(Some(MomentumConfig::new()))`: one velocity per
    /// parameter. Burn's dampening default is 0.1 (PyTorch's is 0), kept here.
    Momentum,
    /// `SgdConfig::new()`: no state.
    Sgd,
    /// `AdaGradConfig::new()`: one running sum of squared gradients per parameter.
    AdaGrad,
    /// `RmsPropConfig::new()` (momentum 0.9, not centered): the squared average and the
    /// momentum buffer (the "centered" average is the squared average's own handle when not
    /// centered, so it adds nothing).
    RmsProp,
    /// `AdanConfig::new()`: three moments and the previous gradient.
    Adan,
    /// `LionConfig::new()`: one momentum per parameter; the update is a sign.
    Lion,
    /// `LambConfig::new()`: Adam's two moments, the update scaled per tensor by the ratio of
    /// the weight's norm to the update's.
    Lamb,
    /// `AdafactorConfig::new()`: no first moment, and the second factored: a matrix keeps one
    /// value per row and one per column (a vector keeps one per value), in f32.
    Adafactor,
}

impl Optimizer {
    /// Every optimizer, the lightest first.
    pub const ALL: [Optimizer; 10] = [
        Self::Sgd,
        Self::Adafactor,
        Self::Momentum,
        Self::Lion,
        Self::AdaGrad,
        Self::RmsProp,
        Self::Adam,
        Self::AdamW,
        Self::Lamb,
        Self::Adan,
    ];

    /// Its name on the command line, in ids and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Adam => "adam",
            Self::AdamW => "adamw",
            Self::Momentum => "momentum",
            Self::Sgd => "sgd",
            Self::AdaGrad => "adagrad",
            Self::RmsProp => "rmsprop",
            Self::Adan => "adan",
            Self::Lion => "lion",
            Self::Lamb => "lamb",
            Self::Adafactor => "adafactor",
        }
    }

    /// Parameter-sized tensors of state it keeps per parameter (Burn 0.22's source: `Adam`'s
    /// `moment_1` and `moment_2`, `MomentumState::velocity`, `LrDecayState::sum`,
    /// `SquareAvgState` and `RmsPropMomentumState::buf`, `Adan`'s `exp_avg`, `exp_avg_sq`,
    /// `exp_avg_diff` and `neg_pre_grad`, `LionState::momentum`, `LambState`'s `moment_1` and
    /// `moment_2`); `None` for Adafactor, whose state follows the tensors' shapes
    /// ([`Optimizer::state_values`]).
    pub fn values_per_param(self) -> Option<u64> {
        match self {
            Self::Sgd => Some(0),
            Self::Momentum | Self::AdaGrad | Self::Lion => Some(1),
            Self::Adam | Self::AdamW | Self::RmsProp | Self::Lamb => Some(2),
            Self::Adan => Some(4),
            Self::Adafactor => None,
        }
    }

    /// Values of state it keeps for parameter tensors of `shapes` holding `params` values:
    /// `values_per_param` per value, or Adafactor's factored second moment (`AdafactorState`:
    /// a tensor of rank 2 or more keeps its size with the last dimension reduced, plus its size
    /// with the one before reduced: rows + columns for a matrix; a vector keeps one per value).
    pub fn state_values(self, shapes: &[Vec<usize>], params: u64) -> u64 {
        match self.values_per_param() {
            Some(per) => per * params,
            None => shapes.iter().map(|dims| factored_values(dims)).sum(),
        }
    }

    /// Values of state per trainable parameter of `shape` (Adafactor's depends on the tensors'
    /// shapes; the others' is [`Optimizer::values_per_param`]).
    pub fn values_per_param_of(self, shape: &ModelShape) -> f64 {
        let params = shape.trainable_params();
        self.state_values(&shape.trainable_shapes(), params) as f64 / params.max(1) as f64
    }

    /// Whether its state stays f32 whatever the parameters' float type (Adafactor keeps its
    /// statistics in f32 for half-precision parameters; the others store the parameters' type).
    pub fn state_in_f32(self) -> bool {
        self == Self::Adafactor
    }
}

/// Adafactor's state values for one parameter tensor of shape `dims`: the tensor's size with
/// its last dimension reduced plus its size with the one before reduced (rank 2 or more), or its
/// size (a vector).
pub fn factored_values(dims: &[usize]) -> u64 {
    let size: u64 = dims.iter().map(|&d| d as u64).product();
    match dims {
        [.., rows, cols] if *rows > 0 && *cols > 0 => size / *cols as u64 + size / *rows as u64,
        _ => size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adafactor_keeps_rows_and_columns_of_a_matrix_and_a_vector_whole() {
        assert_eq!(factored_values(&[768, 3072]), 768 + 3072);
        assert_eq!(factored_values(&[3072]), 3072);
        assert_eq!(factored_values(&[2, 4, 8]), 2 * 4 + 2 * 8);
        let shapes = vec![vec![1024, 1024], vec![1024]];
        assert_eq!(
            Optimizer::Adafactor.state_values(&shapes, 1024 * 1025),
            3 * 1024
        );
        assert_eq!(
            Optimizer::Adam.state_values(&shapes, 1024 * 1025),
            2 * 1024 * 1025
        );
    }
}
