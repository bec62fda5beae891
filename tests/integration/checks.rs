//! The correctness checks themselves: they pass for the technique and fail when it is broken.

use burn::optim::{GradientsAccumulator, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Tensor};
use experiments::harness::backend::Checkpointing;
use experiments::harness::models::{
    self, Batch, BuildMlp, BuildModel, MlpShape, Model, ModelShape, TransformerShape,
};
use experiments::harness::probe::host::HostProbe;
use experiments::harness::probe::PhaseMeter;
use experiments::harness::train::TrainConfig;
use experiments::technique::Experiment;
use experiments::techniques::accumulation::{checks, checks_with_step, TrainStep};
use experiments::techniques::gpt2_small::Gpt2Small;

/// The CPU's training device, as the points train on it.
fn training_device() -> Device {
    Device::flex().autodiff()
}

/// Flex's random generator is one per process. The checkpointing check seeds it twice and
/// expects the same weights both times, so no other test of this module may draw from it in
/// between: every test here that draws holds this lock. (Points run alone in their process.)
static FLEX_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn flex_rng() -> std::sync::MutexGuard<'static, ()> {
    FLEX_RNG
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn setup() -> (TrainConfig, ModelShape) {
    let shape = ModelShape::Mlp(MlpShape {
        width: 64,
        depth: 3,
    });
    let config = TrainConfig {
        lr: 1e-3,
        seed: 3,
        micro_batches: 4,
        ..TrainConfig::adam(shape, 64)
    };
    (config, shape)
}

#[test]
fn accumulation_with_scaled_loss_equals_the_big_batch() {
    let _rng = flex_rng();
    let (config, shape) = setup();
    let device = training_device();
    let model = shape.init(&device);
    let batch = shape.batch(config.batch, config.seed, &device);
    let checks = checks(&config, &batch, model, &HostProbe);
    assert_eq!(checks.len(), 2);
    for check in checks {
        assert!(check.passed, "{check:?}");
        assert!(check.max_rel_diff < 1e-5, "{check:?}");
    }
}

/// A training step that accumulates without scaling each micro-batch's loss by 1/k: the
/// gradient is k times too large.
struct Unscaled;

impl TrainStep for Unscaled {
    fn step(
        &self,
        meter: &mut PhaseMeter<'_>,
        model: Model,
        optim: &mut ModuleOptimizer,
        lr: f64,
        batch: &Batch,
        micro_batches: usize,
    ) -> Model {
        if micro_batches <= 1 {
            return models::train_step(
                meter,
                model,
                optim,
                lr,
                batch,
                1,
                None,
                models::StepReads::default(),
            );
        }
        let mut accumulator = GradientsAccumulator::<Model>::new();
        for slice in batch.slices(micro_batches) {
            let grads = GradientsParams::from_grads(model.loss(&slice).backward(), &model);
            accumulator.accumulate(&model, grads);
        }
        optim.step(lr, model, accumulator.grads())
    }
}

#[test]
fn a_training_step_without_the_1_over_k_scale_is_caught() {
    let _rng = flex_rng();
    let (config, shape) = setup();
    let device = training_device();
    let model = shape.init(&device);
    let batch = shape.batch(config.batch, config.seed, &device);
    let result = checks_with_step(&config, &batch, model, &HostProbe, &Unscaled);
    assert!(
        !result[0].passed,
        "the SGD update (the gradient) must differ: {:?}",
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
    let check = experiments::techniques::checkpointing::check(
        &config,
        &training_device().gradient_checkpointing(),
    );
    assert!(check.passed, "{check:?}");
}

/// A small transformer point of the same checks.
fn transformer_setup() -> (TrainConfig, ModelShape) {
    let shape = ModelShape::Transformer(TransformerShape {
        chunked: Default::default(),
        vocab: 32,
        d_model: 16,
        layers: 2,
        heads: 2,
        seq: 8,
        tied_head: false,
    });
    let (config, _) = setup();
    (
        TrainConfig {
            shape,
            batch: 8,
            ..config
        },
        shape,
    )
}

#[test]
fn accumulation_on_the_transformer_equals_the_big_batch_and_the_unscaled_step_is_caught() {
    let _rng = flex_rng();
    let (config, shape) = transformer_setup();
    let device = training_device();
    let model = shape.init(&device);
    let batch = shape.batch(config.batch, config.seed, &device);
    for check in checks(&config, &batch, model.clone(), &HostProbe) {
        assert!(check.passed, "{check:?}");
    }
    let result = checks_with_step(&config, &batch, model, &HostProbe, &Unscaled);
    assert!(!result[0].passed, "{:?}", result[0]);
}

#[test]
fn checkpointed_transformer_gradients_equal_the_plain_ones() {
    let _rng = flex_rng();
    let (config, _) = transformer_setup();
    let config = TrainConfig {
        micro_batches: 1,
        checkpointing: Checkpointing::Balanced,
        ..config
    };
    let check = experiments::techniques::checkpointing::check(
        &config,
        &training_device().gradient_checkpointing(),
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
    assert!(drift_check(&reference, &reference, tolerance).passed);
    // A curve that stalls at half the initial loss drifts far beyond it.
    let stalled: Vec<f64> = reference.iter().map(|l| l.max(0.5)).collect();
    let check = drift_check(&reference, &stalled, tolerance);
    assert!(!check.passed && check.max_rel_diff > 0.1, "{check:?}");
    // Without a yardstick nothing passes.
    assert!(!drift_check(&reference, &reference, f64::NAN).passed);
}

#[test]
fn both_ways_of_writing_layer_norm_compute_the_same_values() {
    let _rng = flex_rng();
    use experiments::techniques::in_place::snippet::{layer_norm_borrowed, layer_norm_owned};
    let device = Device::flex();
    let x = burn::tensor::Tensor::<2>::random(
        [32, 64],
        burn::tensor::Distribution::Normal(0.0, 1.0),
        &device,
    );
    let borrowed = layer_norm_borrowed(&x, 1e-5).into_data();
    let owned = layer_norm_owned(x, 1e-5).into_data();
    borrowed.assert_eq(&owned, true);
}

#[test]
fn mixed_precision_that_trains_worse_than_the_seed_spread_fails_its_check() {
    use experiments::techniques::mixed_precision::seed_check;
    let f32_final = [0.100, 0.104, 0.098, 0.102, 0.101];
    // Paired by seed, within f32's own spread (0.006): passes.
    let close = [0.101, 0.103, 0.099, 0.103, 0.100];
    assert!(seed_check(&f32_final, &close, "close").passed);
    // Better than f32 passes too: the check is one-sided.
    let better = f32_final.map(|l| l - 0.05);
    assert!(seed_check(&f32_final, &better, "better").passed);
    // Worse on average by more than the spread: fails.
    let worse = f32_final.map(|l| l + 0.01);
    let check = seed_check(&f32_final, &worse, "worse");
    assert!(!check.passed, "{check:?}");
    assert!(check.max_rel_diff > 1.0, "{check:?}");
    // A diverged run fails.
    let diverged = [0.1, f64::NAN, 0.1, 0.1, 0.1];
    assert!(!seed_check(&f32_final, &diverged, "nan").passed);
}

#[test]
fn in_place_outputs_are_checked_against_the_host_and_a_wrong_one_fails() {
    let _rng = flex_rng();
    use experiments::techniques::in_place::snippet::{chain, layer_norm_owned};
    use experiments::techniques::in_place::{host_reference, Case};
    use results::Check;
    let device = Device::flex();
    let x = Tensor::<2>::random(
        [32, 64],
        burn::tensor::Distribution::Normal(0.0, 1.0),
        &device,
    );
    let values = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap();
    let input = values(x.clone());
    let tolerance = 1e-5;
    let norm = Check::compare(
        "layer norm",
        &host_reference(Case::LayerNorm, &input, 64),
        &values(layer_norm_owned(x.clone(), 1e-5)),
        tolerance,
    );
    assert!(norm.passed, "{norm:?}");
    let softplus = Check::compare(
        "chain",
        &host_reference(Case::Chain, &input, 64),
        &values(chain(x.clone())),
        tolerance,
    );
    assert!(softplus.passed, "{softplus:?}");
    // A layer norm that forgets to centre is caught.
    let wrong = x.clone() / x.clone().var(1).add_scalar(1e-5).sqrt();
    let caught = Check::compare(
        "uncentred",
        &host_reference(Case::LayerNorm, &input, 64),
        &values(wrong),
        tolerance,
    );
    assert!(!caught.passed, "{caught:?}");
}

/// Quantization's proof holds 8-bit and 16-bit weights' outputs to f32's and fails 2-bit ones:
/// the check can fail, and does where the format changes the result.
#[test]
fn quantized_outputs_pass_at_eight_bits_and_fail_at_two() {
    use burn::tensor::{Distribution, Tensor};
    use experiments::techniques::quantization::{
        convert, output_check, outputs, Bits, WeightFormat, BLOCK,
    };
    use results::FloatStorage;

    let _rng = flex_rng();
    let device = Device::flex();
    let shape = MlpShape {
        width: 64,
        depth: 3,
    };
    let verdict = |format: WeightFormat| {
        let model = shape.init(&device);
        let x = Tensor::<2>::random([8, 64], Distribution::Normal(0.0, 1.0), &device);
        let reference = outputs(model.forward(x.clone()));
        let model = convert(model, format, &device);
        let x = match format {
            WeightFormat::Float { float } => {
                x.cast(experiments::harness::backend::float_dtype(float))
            }
            WeightFormat::Quantized { .. } => x,
        };
        output_check(&reference, &outputs(model.forward(x)))
    };
    for format in [
        WeightFormat::Quantized {
            bits: Bits::Q8,
            block: Some(BLOCK),
        },
        WeightFormat::Float {
            float: FloatStorage::Bf16,
        },
    ] {
        let check = verdict(format);
        assert!(check.passed, "{format:?}: {check:?}");
        assert!(
            check.max_rel_diff > 0.0,
            "{format:?} changes the output a little"
        );
    }
    let two_bits = verdict(WeightFormat::Quantized {
        bits: Bits::Q2,
        block: Some(BLOCK),
    });
    assert!(!two_bits.passed, "{two_bits:?}");
}

#[test]
fn gpt2_cells_compare_their_first_steps_gradients_and_a_halved_gradient_fails() {
    let _rng = flex_rng();
    // The quick cells run as the runner runs them (each would be its own process): plain
    // and accumulation from the same seed, each keeping a sample of its first step.
    let planned = Experiment::points(
        &Gpt2Small,
        results::Profile::Quick,
        results::DeviceKind::Cpu,
    );
    let mut points: Vec<results::MeasuredPoint> = planned
        .into_iter()
        .filter(|p| p.id == "plain" || p.id == "accumulation")
        .map(|point| {
            let result = Experiment::run_point(&Gpt2Small, &point, results::DeviceKind::Cpu)
                .expect("a quick cell runs");
            results::MeasuredPoint {
                point,
                outcome: results::Outcome::Measured {
                    result: Box::new(result),
                    wall_s: 0.0,
                },
            }
        })
        .collect();
    let derived = Experiment::derived_checks(&Gpt2Small, &points, results::DeviceKind::Cpu);
    assert_eq!(derived.len(), 1);
    assert_eq!(derived[0].point, "accumulation");
    assert!(derived[0].check.passed, "{:?}", derived[0].check);
    // A loop that divides each micro-batch's loss by k twice steps on half the gradient.
    let results::Outcome::Measured { result, .. } = &mut points[1].outcome else {
        unreachable!("measured above")
    };
    for v in result
        .traces
        .get_mut(&results::Trace::FirstStepGradientSample)
        .expect("the accumulation cell kept its sample")
    {
        *v *= 0.5;
    }
    let derived = Experiment::derived_checks(&Gpt2Small, &points, results::DeviceKind::Cpu);
    assert!(!derived[0].check.passed, "{:?}", derived[0].check);
}
