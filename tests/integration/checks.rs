//! The correctness checks themselves: they pass for the technique and fail when it is broken.

use burn::backend::{Autodiff, Flex};
use experiments::harness::backend::{CheckpointedCpuBackend, Checkpointing};
use experiments::harness::models::MlpShape;
use experiments::harness::train::TrainConfig;
use experiments::techniques::accumulation::{checks, checks_with_loss_scale};

type B = Autodiff<Flex>;

/// Flex's random generator is one per process. The checkpointing check seeds it twice and
/// expects the same weights both times, so no other test of this module may draw from it in
/// between: every test here that draws holds this lock. (Points run alone in their process.)
static FLEX_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn flex_rng() -> std::sync::MutexGuard<'static, ()> {
    FLEX_RNG
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

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
    let _rng = flex_rng();
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
    let _rng = flex_rng();
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

#[test]
fn checkpointed_gradients_equal_the_plain_ones() {
    let _rng = flex_rng();
    let (config, _) = setup();
    let config = TrainConfig {
        micro_batches: 1,
        checkpointing: Checkpointing::Balanced,
        ..config
    };
    let check = experiments::techniques::checkpointing::check::<CheckpointedCpuBackend>(
        &config,
        &Default::default(),
    );
    assert!(check.passed, "{check:?}");
}

#[test]
fn a_loss_curve_that_drifts_fails_the_mixed_precision_check() {
    let _rng = flex_rng();
    use experiments::techniques::mixed_precision::{drift, drift_check};
    let reference: Vec<f64> = (0..60).map(|i| 1.0 / (1.0 + i as f64 / 10.0)).collect();
    // The yardstick: a run from other weights, 1% off everywhere.
    let other: Vec<f64> = reference.iter().map(|l| l * 1.01).collect();
    let tolerance = drift(&reference, &other);
    assert!((tolerance - 0.01).abs() < 1e-6, "{tolerance}");
    assert!(drift_check(&reference, &reference, "same", tolerance).passed);
    // A curve that stalls at half the initial loss drifts far beyond it.
    let stalled: Vec<f64> = reference.iter().map(|l| l.max(0.5)).collect();
    let check = drift_check(&reference, &stalled, "stalled", tolerance);
    assert!(!check.passed && check.max_rel_diff > 0.1, "{check:?}");
    // Without a yardstick nothing passes.
    assert!(!drift_check(&reference, &reference, "same", f64::NAN).passed);
}

#[test]
fn both_ways_of_writing_layer_norm_compute_the_same_values() {
    let _rng = flex_rng();
    use experiments::techniques::in_place::snippet::{layer_norm_borrowed, layer_norm_owned};
    type Inner = Flex;
    let device = Default::default();
    let x = burn::tensor::Tensor::<Inner, 2>::random(
        [32, 64],
        burn::tensor::Distribution::Normal(0.0, 1.0),
        &device,
    );
    let borrowed = layer_norm_borrowed(&x, 1e-5).into_data();
    let owned = layer_norm_owned(x, 1e-5).into_data();
    borrowed.assert_eq(&owned, true);
}
