//! The optimizers a training step can take, Burn 0.22's own, each with the tensors it keeps
//! per parameter as read in `burn-optim` 0.22's source (the byte rule every prediction of
//! optimizer state uses), and the one call that builds it (a `ModuleOptimizer`) and hands it
//! to its user.

use burn::optim::momentum::MomentumConfig;
use burn::optim::{
    AdaGradConfig, AdafactorConfig, AdamConfig, AdamWConfig, AdanConfig, LambConfig, LionConfig,
    ModuleOptimizer, RmsPropConfig, SgdConfig,
};
pub use estimator::Optimizer;

/// Builds an [`Optimizer`]: the Burn half of the estimator's optimizer.
pub trait BuildOptimizer {
    /// Builds it, as Burn builds a whole-module optimizer.
    fn init(self) -> ModuleOptimizer;
    /// Builds it and hands it to `user`.
    fn with<U: UseOptimizer>(self, user: U) -> U::Output;
}

impl BuildOptimizer for Optimizer {
    fn init(self) -> ModuleOptimizer {
        match self {
            Self::Adam => AdamConfig::new().init(),
            Self::AdamW => AdamWConfig::new().init(),
            Self::Momentum => SgdConfig::new()
                .with_momentum(Some(MomentumConfig::new()))
                .init(),
            Self::Sgd => SgdConfig::new().init(),
            Self::AdaGrad => AdaGradConfig::new().init(),
            Self::RmsProp => RmsPropConfig::new().init(),
            Self::Adan => AdanConfig::new().init(),
            Self::Lion => LionConfig::new().init(),
            Self::Lamb => LambConfig::new().init(),
            Self::Adafactor => AdafactorConfig::new().init(),
        }
    }

    fn with<U: UseOptimizer>(self, user: U) -> U::Output {
        user.with(self.init())
    }
}

/// What is done with an optimizer once built.
pub trait UseOptimizer {
    /// What it gives.
    type Output;
    /// Uses `optim`.
    fn with(self, optim: ModuleOptimizer) -> Self::Output;
}
