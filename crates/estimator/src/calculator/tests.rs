//! The programs against the estimator: the same doubles, bit for bit, on random shapes.

use super::*;
use crate::capacity::{usable_bytes, InferencePlan, CARDS};
use crate::estimate::{Optimizer, Precision, StepPlan};
use crate::shapes::{LlamaShape, LoraForm, ModelShape, TransformerShape};

/// A small deterministic generator (no dependency): xorshift64*.
struct Draw(u64);

impl Draw {
    fn next(&mut self, lo: usize, hi: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        lo + (self.0 % (hi - lo + 1) as u64) as usize
    }
}

fn random_shape(r: &mut Draw, family: Family) -> ModelShape {
    let heads = 1 << r.next(0, 6);
    let d_model = heads * 8 * r.next(1, 40);
    let (vocab, layers, seq) = (r.next(2, 160_000), r.next(1, 96), r.next(1, 8192));
    let tied_head = r.next(0, 1) == 1;
    match family {
        Family::Gpt => TransformerShape {
            chunked: Default::default(),
            vocab,
            d_model,
            layers,
            heads,
            seq,
            tied_head,
        }
        .into(),
        Family::Llama { lora, .. } => LlamaShape {
            chunked: Default::default(),
            vocab,
            d_model,
            layers,
            heads,
            kv_heads: heads >> r.next(0, heads.trailing_zeros() as usize),
            mlp: r.next(1, 30_000),
            seq,
            tied_head,
            lora_rank: lora.map(|_| r.next(1, 256)),
            lora_form: LoraForm::ActivationPath,
            base_bits: None,
            fused_attention: false,
        }
        .into(),
    }
}

fn decoder_of(shape: ModelShape) -> Decoder<f64> {
    match shape {
        ModelShape::Transformer(s) => Decoder::from(&s),
        ModelShape::Llama(s) => Decoder::from(&s),
        ModelShape::Mlp(_) => unreachable!("the calculator's models are decoders"),
    }
}

fn same(name: &str, program: f64, rust: f64) {
    assert_eq!(
        program.to_bits(),
        rust.to_bits(),
        "{name}: {program} != {rust}"
    );
}

fn check_training(all: &BTreeMap<String, Program>, r: &mut Draw, family: Family) {
    let ck = [Checkpointing::None, Checkpointing::Balanced][r.next(0, 1)];
    let form = Form::ALL[r.next(0, 2)];
    let chunked = match form {
        Form::Burn => crate::Chunked::default(),
        Form::Attention => crate::Chunked::attention(),
        Form::Both => crate::Chunked::both(),
    };
    let shape = random_shape(r, family).with_chunked(chunked);
    let precision = Precision::ALL[r.next(0, 2)];
    let optimizer = [Optimizer::Adam, Optimizer::Sgd, Optimizer::Adan][r.next(0, 2)];
    let micro = r.next(1, 8);
    let plan = StepPlan {
        shape,
        batch: (micro * r.next(1, 64)) as f64,
        micro_batches: micro,
        checkpointing: ck,
        precision,
        optimizer,
    };
    let mut inputs = shape_inputs(&decoder_of(shape));
    let per_param = optimizer.values_per_param().unwrap() as f64;
    let step = [
        plan.batch,
        micro as f64,
        precision.param_bytes() as f64,
        precision.activation_bytes() as f64,
        precision.weight_copy_bytes() as f64,
        per_param,
    ];
    inputs.extend(STEP_INPUTS.into_iter().zip(step));
    inputs.extend(CHUNK_INPUTS.map(|(name, chunk)| (name, chunk as f64)));
    let out = all[&training_key(family, ck, form)].run(&inputs).unwrap();
    let expected = training_outputs(plan.bytes(), shape.num_params() as f64);
    for (name, rust) in expected {
        same(name, out[name], rust);
    }
}

fn check_inference(all: &BTreeMap<String, Program>, r: &mut Draw, family: Family) {
    let plan = InferencePlan {
        shape: random_shape(r, family),
        batch: r.next(1, 64) as u64,
        context: r.next(1, 32_768),
        weight_bits: [16, 8, 4][r.next(0, 2)],
        kv_bits: [16, 8][r.next(0, 1)],
    };
    let mut inputs = shape_inputs(&decoder_of(plan.shape));
    inputs.insert("batch", plan.batch as f64);
    inputs.insert("context", plan.context as f64);
    inputs.insert("weight_bits", f64::from(plan.weight_bits));
    inputs.insert("kv_bits", f64::from(plan.kv_bits));
    let out = all[inference_key(family)].run(&inputs).unwrap();
    let b = plan.bytes();
    same("weights", out["weights"], b.weights);
    same("kv_cache", out["kv_cache"], b.kv_cache);
    same("working_copy", out["working_copy"], b.working_copy);
    same("prefill", out["prefill"], b.prefill);
    same("peak", out["peak"], b.peak());
}

#[test]
fn every_program_computes_what_the_estimator_computes_bit_for_bit() {
    let all = programs();
    let mut r = Draw(0x9e37_79b9_7f4a_7c15);
    for _ in 0..400 {
        for family in FAMILIES {
            check_training(&all, &mut r, family);
            check_inference(
                &all,
                &mut r,
                Family::Llama {
                    lora: None,
                    base_bits: None,
                },
            );
            check_inference(&all, &mut r, Family::Gpt);
        }
    }
}

#[test]
fn the_usable_program_is_the_estimator_s_usable_bytes() {
    let all = programs();
    for card in CARDS {
        for precision in Precision::ALL {
            let margin = crate::capacity::safety_margin(precision);
            let inputs = BTreeMap::from([("card_bytes", card.bytes()), ("margin", margin)]);
            let out = all[USABLE_KEY].run(&inputs).unwrap();
            same(
                "usable",
                out["usable"],
                usable_bytes(card.bytes(), precision),
            );
        }
    }
}

/// Three families, two checkpointings and three forms (Burn's attention, burn-memory-efficient's,
/// and its loss with it) of training programs, and inference's: 80 KB of JSON in the page.
#[test]
fn the_programs_are_small_enough_to_ship_in_the_page() {
    let json = serde_json::to_string(&programs()).unwrap();
    assert!(json.len() < 96 * 1024, "{} bytes", json.len());
}
