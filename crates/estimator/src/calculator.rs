//! The guide's calculator: the decoder rules recorded as programs the page runs for the
//! reader's own shape.
//!
//! Question: how does What fits answer for a shape no table lists, with the estimator's own
//! rules?
//! Method: [`crate::decoder`]'s rules run on [`Sym`] inputs, once per structural case (the
//! family, LoRA, checkpointing), record every operation ([`Program`]); the page's evaluator
//! runs a program's nodes in order on the form's numbers, and searches the largest batch or
//! context as `capacity::largest_fitting` does. Devices' rules (burn-cubecl's): the page
//! answers for cards.
//! Answer: [`programs`], rendered into the page as JSON; a test runs every program against
//! the estimator on random shapes, bit for bit.

use std::collections::BTreeMap;

use crate::checkpointing::Checkpointing;
use crate::decoder::{
    self, inference_peak, step_bytes, Decoder, Family, Generation, Step, ValueBytes,
};
use crate::estimate::{Allocator, StepBytes};
use crate::scalar::{record, Program, Scalar, Sym};

/// The inputs a training program reads, beside the model's ([`MODEL_INPUTS`]).
pub const STEP_INPUTS: [&str; 6] = [
    "batch",
    "micro_batches",
    "param_bytes",
    "activation_bytes",
    "weight_copy_bytes",
    "optimizer_values_per_param",
];

/// The model's inputs: its sizes, `tied` (1 or 0) and `lora_rank` (0 without).
pub const MODEL_INPUTS: [&str; 9] = [
    "vocab",
    "d_model",
    "layers",
    "heads",
    "kv_heads",
    "mlp",
    "seq",
    "tied",
    "lora_rank",
];

/// What burn-memory-efficient runs in a training program, its chunks read as inputs
/// (`attention_chunk`, `loss_chunk`): the forms the calculator offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Burn's attention and loss.
    Burn,
    /// Memory-efficient attention.
    Attention,
    /// Memory-efficient attention and the chunked loss.
    Both,
}

impl Form {
    /// Every form, in the calculator's order.
    pub const ALL: [Form; 3] = [Form::Burn, Form::Attention, Form::Both];

    /// The form of `chunked` (the chunked loss alone is no form the calculator offers).
    pub fn of(chunked: crate::Chunked) -> Self {
        match (chunked.attention, chunked.loss) {
            (Some(_), Some(_)) => Form::Both,
            (Some(_), None) => Form::Attention,
            _ => Form::Burn,
        }
    }

    /// The suffix of its programs' names (none for Burn's).
    pub fn suffix(self) -> &'static str {
        match self {
            Form::Burn => "",
            Form::Attention => "/attention",
            Form::Both => "/attention-loss",
        }
    }
}

fn model_inputs(family: Family) -> Decoder<Sym> {
    let i = Sym::input;
    Decoder {
        family,
        vocab: i("vocab"),
        d_model: i("d_model"),
        layers: i("layers"),
        heads: i("heads"),
        kv_heads: i("kv_heads"),
        mlp: i("mlp"),
        seq: i("seq"),
        tied: i("tied"),
        lora_rank: i("lora_rank"),
        attention_chunk: None,
        loss_chunk: None,
    }
}

/// The program's name for a training step of `family` with `checkpointing` in `form`
/// (`training/llama-lora/balanced`, `training/gpt/none/attention-loss`).
pub fn training_key(family: Family, checkpointing: Checkpointing, form: Form) -> String {
    let model = match family {
        Family::Gpt => "gpt",
        Family::Llama { lora: None, .. } => "llama",
        Family::Llama { lora: Some(_), .. } => "llama-lora",
    };
    let ck = match checkpointing {
        Checkpointing::None => "none",
        Checkpointing::Balanced => "balanced",
    };
    format!("training/{model}/{ck}{}", form.suffix())
}

/// The program's name for generation with `family` (`inference/gpt`).
pub fn inference_key(family: Family) -> &'static str {
    match family {
        Family::Gpt => "inference/gpt",
        Family::Llama { .. } => "inference/llama",
    }
}

/// The program of the usable bytes of a card (`card_bytes`, `margin`).
pub const USABLE_KEY: &str = "usable";

/// The families the calculator offers: the GPT block, the Llama block, with LoRA on the
/// activation path (the workbench's form; the base in f32).
pub const FAMILIES: [Family; 3] = [
    Family::Gpt,
    Family::Llama {
        lora: None,
        base_bits: None,
    },
    Family::Llama {
        lora: Some(crate::decoder::LoraForm::ActivationPath),
        base_bits: None,
    },
];

/// A training step's outputs, by name: its parts, its peak and the peak's split (the page's
/// names; the tests read the estimator's `f64` step through the same list).
pub fn training_outputs<T: Scalar>(b: StepBytes<T>, params: T) -> Vec<(&'static str, T)> {
    let at = b.at_peak();
    vec![
        ("params", params),
        ("weights", b.weights),
        ("optimizer", b.optimizer),
        ("weight_copies", b.weight_copies),
        ("inputs", b.inputs),
        ("kept", b.kept),
        ("loss_transient", b.loss_transient),
        ("backward_transient", b.backward_transient),
        ("grads", b.grads),
        ("update_transient", b.update_transient),
        ("accumulated", b.accumulated),
        ("activations", b.activations_at_peak()),
        ("peak", b.step_peak()),
        ("at_peak.kept", at.kept),
        ("at_peak.weight_copies", at.weight_copies),
        ("at_peak.transient", at.transient),
        ("at_peak.grads", at.grads),
        ("at_peak.update_transient", at.update_transient),
    ]
}

fn training(family: Family, checkpointing: Checkpointing, form: Form) -> Program {
    record(|| {
        let chunk = |on: bool, name| on.then(|| Sym::input(name));
        let model = Decoder {
            attention_chunk: chunk(form != Form::Burn, "attention_chunk"),
            loss_chunk: chunk(form == Form::Both, "loss_chunk"),
            ..model_inputs(family)
        };
        let param = Sym::input("param_bytes");
        let step = Step {
            model,
            batch: Sym::input("batch"),
            micro_batches: Sym::input("micro_batches"),
            optimizer_values: model.trainable_params() * Sym::input("optimizer_values_per_param"),
            optimizer_value_bytes: param,
            bytes: ValueBytes {
                param,
                activation: Sym::input("activation_bytes"),
                weight_copy: Sym::input("weight_copy_bytes"),
                via_f32: false,
            },
            checkpointing,
            allocator: Allocator::CubeCl,
        };
        training_outputs(step_bytes(&step), model.params())
    })
}

fn inference(family: Family) -> Program {
    record(|| {
        let model = model_inputs(family);
        let parts = decoder::inference_bytes(&Generation {
            model,
            batch: Sym::input("batch"),
            context: Sym::input("context"),
            weight_bits: Sym::input("weight_bits"),
            kv_bits: Sym::input("kv_bits"),
        });
        let [weights, kv_cache, working_copy, prefill] = parts;
        vec![
            ("params", model.params()),
            ("weights", weights),
            ("kv_cache", kv_cache),
            ("working_copy", working_copy),
            ("prefill", prefill),
            ("peak", inference_peak(parts)),
        ]
    })
}

/// Every program the page runs, by name ([`training_key`], [`inference_key`], [`USABLE_KEY`]).
pub fn programs() -> BTreeMap<String, Program> {
    let mut all = BTreeMap::new();
    for family in FAMILIES {
        for ck in [Checkpointing::None, Checkpointing::Balanced] {
            for form in Form::ALL {
                all.insert(training_key(family, ck, form), training(family, ck, form));
            }
        }
        all.entry(inference_key(family).to_string())
            .or_insert_with(|| inference(family));
    }
    let usable = record(|| {
        let (card, margin) = (Sym::input("card_bytes"), Sym::input("margin"));
        vec![("usable", decoder::usable_bytes(card, margin))]
    });
    all.insert(USABLE_KEY.to_string(), usable);
    all
}

/// The chunks a program in a burn-memory-efficient form reads: the workbench's.
pub const CHUNK_INPUTS: [(&str, usize); 2] = [
    ("attention_chunk", crate::Chunked::ATTENTION_ROWS),
    ("loss_chunk", crate::Chunked::LOSS_TOKENS),
];

/// The numbers a program reads for `shape` (the form's fields).
pub fn shape_inputs(model: &Decoder<f64>) -> BTreeMap<&'static str, f64> {
    let values = [
        model.vocab,
        model.d_model,
        model.layers,
        model.heads,
        model.kv_heads,
        model.mlp,
        model.seq,
        model.tied,
        model.lora_rank,
    ];
    MODEL_INPUTS.into_iter().zip(values).collect()
}

#[cfg(test)]
mod tests;
