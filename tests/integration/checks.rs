//! The correctness checks themselves: they pass for the technique and fail when it is broken.

use burn::backend::{Autodiff, Flex};
use experiments::accumulation::{checks, checks_with_loss_scale};
use experiments::backend::Checkpointing;
use experiments::models::MlpShape;
use experiments::train::TrainConfig;

type B = Autodiff<Flex>;

fn setup() -> (TrainConfig, MlpShape) {
    let shape = MlpShape {
        width: 64,
        depth: 3,
    };
    let config = TrainConfig {
        shape,
        batch: 64,
        lr: 1e-3,
        seed: 3,
        micro_batches: 4,
        checkpointing: Checkpointing::None,
    };
    (config, shape)
}

#[test]
fn accumulation_with_scaled_loss_equals_the_big_batch() {
    let (config, shape) = setup();
    let device = Default::default();
    let model = shape.init::<B>(&device);
    let (x, y) = shape.batch::<B>(config.batch, &device);
    for check in checks(&config, &x, &y, model) {
        assert!(check.passed, "{check:?}");
        assert!(check.max_rel_diff < 1e-5, "{check:?}");
    }
}

#[test]
fn accumulation_without_the_1_over_k_scale_is_caught() {
    let (config, shape) = setup();
    let device = Default::default();
    let model = shape.init::<B>(&device);
    let (x, y) = shape.batch::<B>(config.batch, &device);
    let result = checks_with_loss_scale(&config, &x, &y, model, 1.0);
    assert!(
        !result[0].passed,
        "unscaled gradients must differ: {:?}",
        result[0]
    );
}
