//! The optimizers a training step can take, Burn 0.21's own, each with the tensors it keeps
//! per parameter as read in `burn-optim` 0.21's source (the byte rule every prediction of
//! optimizer state uses), and the one call that builds it and hands it to a generic user.

use burn::optim::momentum::MomentumConfig;
use burn::optim::{
    AdaGradConfig, AdamConfig, AdamWConfig, AdanConfig, Optimizer as BurnOptimizer, RmsPropConfig,
    SgdConfig,
};
use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use crate::harness::models::Model;

/// A Burn 0.21 optimizer, at Burn's defaults.
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
}

impl Optimizer {
    /// Every optimizer, the lightest first.
    pub const ALL: [Optimizer; 7] = [
        Self::Sgd,
        Self::Momentum,
        Self::AdaGrad,
        Self::RmsProp,
        Self::Adam,
        Self::AdamW,
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
        }
    }

    /// Parameter-sized tensors of state it keeps per parameter (Burn 0.21's source: `Adam`'s
    /// `moment_1` and `moment_2`, `MomentumState::velocity`, `LrDecayState::sum`,
    /// `SquareAvgState` and `RmsPropMomentumState::buf`, `Adan`'s `exp_avg`, `exp_avg_sq`,
    /// `exp_avg_diff` and `neg_pre_grad`).
    pub fn values_per_param(self) -> u64 {
        match self {
            Self::Sgd => 0,
            Self::Momentum | Self::AdaGrad => 1,
            Self::Adam | Self::AdamW | Self::RmsProp => 2,
            Self::Adan => 4,
        }
    }

    /// Builds it for `Model<B>` and hands it to `user`.
    pub fn with<B: AutodiffBackend, U: UseOptimizer<B>>(self, user: U) -> U::Output {
        match self {
            Self::Adam => user.with(AdamConfig::new().init::<B, Model<B>>()),
            Self::AdamW => user.with(AdamWConfig::new().init::<B, Model<B>>()),
            Self::Momentum => user.with(
                SgdConfig::new()
                    .with_momentum(Some(MomentumConfig::new()))
                    .init::<B, Model<B>>(),
            ),
            Self::Sgd => user.with(SgdConfig::new().init::<B, Model<B>>()),
            Self::AdaGrad => user.with(AdaGradConfig::new().init::<B, Model<B>>()),
            Self::RmsProp => user.with(RmsPropConfig::new().init::<B, Model<B>>()),
            Self::Adan => user.with(AdanConfig::new().init::<B, Model<B>>()),
        }
    }
}

/// What is done with an optimizer once built (each has its own type).
pub trait UseOptimizer<B: AutodiffBackend> {
    /// What it gives.
    type Output;
    /// Uses `optim`.
    fn with<O: BurnOptimizer<Model<B>, B>>(self, optim: O) -> Self::Output;
}
