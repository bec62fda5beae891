//! The fix Burn lacks at real sequence lengths: memory-efficient attention and a chunked loss
//! (burn-memory-efficient), against the written-out scores, Burn's fused call and
//! checkpointing, on the reader's model.
//!
//! Question: at the sequences readers fine-tune at, what do attention's scores and the loss's
//! logits cost a training step, and what does computing both in chunks, with backward
//! recomputing each chunk, buy and cost?
//! Method: the reader's model (two TinyLlama-width blocks, vocabulary 32,000, one sequence)
//! with LoRA rank 8 at 256 to 2,048 tokens and full training with Adam at 1,024 (GPT-2 small's
//! shape at 1,024 quick and on CUDA), each form on the same seeded step: attention written
//! out, Burn's fused `attention` (which Burn 0.22.1's autodiff writes out), balanced
//! checkpointing, burn-memory-efficient's attention, its chunked loss, both, both under
//! checkpointing. Each step's peak is split into its parts and set beside the estimator; each
//! form proves it computes the written-out step (a sample of its first step's gradients and its
//! loss at every step, against the written-out point's); the chunked ops are timed against the
//! written-out step in pairs, one model taking the arms' turns.
//! Answer: the written-out step's bytes above the weights grow with the sequence's square, both
//! ops' with the sequence: at the reader's 2,048 tokens the LoRA step holds a fraction of the
//! written-out one, and Burn's fused call and checkpointing leave most of the scores.

mod analysis;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::{
    Build, BuildPlan, ComparisonSpec, DeviceKind, FloatStorage, PairSettings, PointCheck, Profile,
    TechniqueId, Trace,
};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{Backends, Checkpointing, Setup};
use crate::harness::models::{LlamaShape, Model, ModelShape, TransformerShape};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::train::{run_train_point_stored, Proof, TrainChecks, TrainConfig, Trained};
use crate::harness::turns::{TakingTurns, Turn};
use crate::technique::{Measured, Measurement, Planned, Row, Technique};
use crate::techniques::gpt2_small;
use crate::techniques::llama_family;
use estimator::estimate::StepPlan;
use estimator::Chunked;

/// How a step computes attention and its loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// The scores written out (as Burn's `MultiHeadAttention`), the whole logits, Burn's loss.
    WrittenOut,
    /// Burn's fused `attention` call (which Burn 0.22.1's autodiff writes out).
    Fused,
    /// The written-out step under Burn's balanced checkpointing.
    Checkpointing,
    /// burn-memory-efficient's attention.
    Efficient,
    /// burn-memory-efficient's chunked loss.
    ChunkedLoss,
    /// Both.
    Both,
    /// Both, under balanced checkpointing.
    BothCheckpointing,
}

impl Form {
    /// Every form, in the page's order.
    pub const ALL: [Form; 7] = [
        Form::WrittenOut,
        Form::Fused,
        Form::Checkpointing,
        Form::Efficient,
        Form::ChunkedLoss,
        Form::Both,
        Form::BothCheckpointing,
    ];

    /// Kebab-case id, the start of a point's id.
    pub fn id(self) -> &'static str {
        match self {
            Form::WrittenOut => "written-out",
            Form::Fused => "fused",
            Form::Checkpointing => "checkpointing",
            Form::Efficient => "efficient",
            Form::ChunkedLoss => "chunked-loss",
            Form::Both => "both",
            Form::BothCheckpointing => "both-checkpointing",
        }
    }

    /// What burn-memory-efficient replaces in this form.
    pub fn chunked(self) -> Chunked {
        match self {
            Form::Efficient => Chunked::attention(),
            Form::ChunkedLoss => Chunked::loss(),
            Form::Both | Form::BothCheckpointing => Chunked::both(),
            Form::WrittenOut | Form::Fused | Form::Checkpointing => Chunked::default(),
        }
    }

    /// What the autodiff backend keeps for backward.
    pub fn checkpointing(self) -> Checkpointing {
        match self {
            Form::Checkpointing | Form::BothCheckpointing => Checkpointing::Balanced,
            _ => Checkpointing::None,
        }
    }
}

/// Which model a point trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// The reader's model: two TinyLlama-width blocks at a real vocabulary
    /// ([`llama_family::reader`]).
    Reader,
    /// GPT-2 small's shape ([`gpt2_small::workload`]).
    Gpt2,
}

/// One point: a form of one training step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FormConfig {
    /// The form.
    pub form: Form,
    /// The model.
    pub workload: Workload,
    /// The step, its shape carrying the form.
    pub train: TrainConfig,
}

/// LoRA's rank on the reader's model.
pub const RANK: usize = 8;

/// The LoRA cells: the timed forms at the shortest sequence, whose steps take about a second on
/// the CPU, so that the pairs time them there and their loss curves run four steps (the answer,
/// both ops, and the attention alone; the chunked loss alone, a minute and a half of the run,
/// was not resolved from the written-out step and is measured at the next sequence, untimed);
/// every form at the next (Burn's fused call, checkpointing and both under it among them); the
/// written-out step and both ops at the longer ones, the reader's question at the longest.
fn lora_forms(seq_index: usize) -> &'static [Form] {
    match seq_index {
        0 => &[Form::WrittenOut, Form::Efficient, Form::Both],
        1 => &Form::ALL,
        _ => &[Form::WrittenOut, Form::Both],
    }
}

/// The sequences of the reader's LoRA cells, the timed one first. On the CPU 1,024 is the
/// Llama page's (its written-out LoRA step at 1,024 is this page's step): two steps of 6 s
/// each that would repeat it.
fn seqs(sizes: Sizes) -> &'static [usize] {
    match sizes {
        Sizes::Quick => &[64, 128],
        Sizes::Full => &[256, 512, 2048],
        Sizes::FullCuda => &[512, 1024, 2048, 4096],
    }
}

/// The sequence of full training's cells (one sequence, Adam's state over the embedding and
/// the head most of the step at a real vocabulary): 1,024, where the scores are as large as
/// the weights; the quick run's longest.
fn full_seq(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 128,
        Sizes::Full | Sizes::FullCuda => 1024,
    }
}

/// The step of `form` on `shape` (full training or LoRA as the shape says), one sequence.
fn step(form: Form, shape: ModelShape) -> TrainConfig {
    let shape = match shape {
        ModelShape::Llama(s) => ModelShape::Llama(LlamaShape {
            chunked: form.chunked(),
            fused_attention: form == Form::Fused,
            ..s
        }),
        ModelShape::Transformer(s) => ModelShape::Transformer(TransformerShape {
            chunked: form.chunked(),
            ..s
        }),
        mlp => mlp,
    };
    let lora = shape.llama().is_some_and(|s| s.lora_rank.is_some());
    TrainConfig {
        seed: 11,
        // Adapters start at zero: a rate that moves them in a few steps (the Llama page's).
        lr: if lora { 1e-3 } else { 1e-4 },
        checkpointing: form.checkpointing(),
        ..TrainConfig::adam(shape, 1)
    }
}

/// The reader's cells: LoRA at each sequence, full training at one.
fn reader_cells(sizes: Sizes) -> Vec<FormConfig> {
    let base = llama_family::reader(sizes);
    let cell = |form: Form, seq: usize, lora: bool| FormConfig {
        form,
        workload: Workload::Reader,
        train: step(
            form,
            ModelShape::Llama(LlamaShape {
                seq,
                lora_rank: lora.then_some(RANK),
                ..base
            }),
        ),
    };
    let lora = seqs(sizes)
        .iter()
        .enumerate()
        .flat_map(|(i, &seq)| lora_forms(i).iter().map(move |&f| cell(f, seq, true)));
    let full = [Form::WrittenOut, Form::Both].map(|f| cell(f, full_seq(sizes), false));
    lora.chain(full).collect()
}

/// GPT-2 small's shape at its context (1,024 tokens; the quick run's small decoder), written
/// out and with both chunked ops: on CUDA, and quick to keep the code measured. Not in the
/// CPU's full run, where a pair of its steps took two minutes of the budget: GPT-2 small's
/// block at 1,024 tokens is the landing order's regime set, measured there with every fix,
/// these two among them.
fn gpt2_cells(sizes: Sizes) -> Vec<FormConfig> {
    if sizes == Sizes::Full {
        return Vec::new();
    }
    let (shape, _) = gpt2_small::workload(sizes);
    let shape = TransformerShape {
        seq: full_seq(sizes),
        ..shape
    };
    [Form::WrittenOut, Form::Both]
        .into_iter()
        .map(|form| FormConfig {
            form,
            workload: Workload::Gpt2,
            train: step(form, ModelShape::Transformer(shape)),
        })
        .collect()
}

impl FormConfig {
    /// Full training or LoRA's rank (`full`, `lora-r8`).
    pub fn training(&self) -> String {
        match self.train.shape.llama().and_then(|s| s.lora_rank) {
            Some(r) => format!("lora-r{r}"),
            None => "full".into(),
        }
    }

    /// Tokens per sequence.
    pub fn seq(&self) -> usize {
        self.train.shape.seq().unwrap_or(0)
    }

    /// The point's id and label: `{form}-{seq}-{training}`, GPT-2 small's prefixed `gpt2-`.
    fn names(&self) -> (String, String) {
        let (prefix, model) = match self.workload {
            Workload::Reader => ("", "reader's model"),
            Workload::Gpt2 => ("gpt2-", "GPT-2 small"),
        };
        let (form, seq, training) = (self.form.id(), self.seq(), self.training());
        (
            format!("{prefix}{form}-{seq}-{training}"),
            format!(
                "{model}, {}, {seq} tokens, {training}",
                form.replace('-', " ")
            ),
        )
    }

    /// Whether `other` is the same step in another form (same model, training and sequence).
    pub fn same_step(&self, other: &FormConfig) -> bool {
        self.workload == other.workload
            && self.seq() == other.seq()
            && self.training() == other.training()
    }
}

/// The page.
pub struct EfficientAttention;

/// Measured repeats: one untimed step (Adam's state is made in the first) and one timed, whose
/// memory is the point's, on the full sizes (a step of the reader's model at 2,048 tokens takes
/// tens of seconds on 2 cores); the timed LoRA cells three, so that their loss curves are four
/// steps long.
fn repeats(c: &FormConfig, sizes: Sizes, profile: Profile) -> Repeats {
    let mut repeats = Repeats::of(profile);
    if sizes != Sizes::Quick {
        repeats.warmup = 1;
        repeats.repeats = if c.seq() == seqs(sizes)[0] { 3 } else { 1 };
    }
    repeats
}

impl Technique for EfficientAttention {
    type Config = FormConfig;
    const ID: TechniqueId = TechniqueId::EfficientAttention;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<FormConfig>> {
        let sizes = Sizes::of(profile, device);
        reader_cells(sizes)
            .into_iter()
            .chain(gpt2_cells(sizes))
            .map(|config| {
                let (id, label) = config.names();
                let mut planned = Planned::new(id, label, profile, config);
                planned.repeats = repeats(&config, sizes, profile);
                planned
            })
            .collect()
    }

    fn run_point(&self, config: &FormConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        run_train_point_stored(
            config.train,
            FloatStorage::F32,
            repeats,
            device,
            FormProof,
            false,
        )
    }

    fn one_model_build(
        &self,
        baseline: &FormConfig,
        technique: &FormConfig,
        settings: &PairSettings,
        plan: BuildPlan,
        device: DeviceKind,
    ) -> Option<Measured<Build>> {
        // The arms differ in burn-memory-efficient's ops alone (the same seeded weights, batch
        // and optimizer), which one model switches between its steps.
        let chunked = technique.train.shape.chunked();
        let same_step = TrainConfig {
            shape: baseline.train.shape.with_chunked(chunked),
            ..baseline.train
        } == technique.train;
        (same_step && baseline.form == Form::WrittenOut).then(|| {
            let turns = TakingTurns {
                train: baseline.train,
                turn: ChunkedTurn(chunked),
                settings: *settings,
                plan,
            };
            device
                .dispatch(Setup::default(), turns)
                .and_then(|build| build)
        })
    }

    fn step_plan(&self, config: &FormConfig) -> Option<StepPlan> {
        Some(config.train.step_plan())
    }

    fn comparisons(&self, rows: &[Row<'_, FormConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn derived_checks(&self, rows: &[Row<'_, FormConfig>]) -> Vec<PointCheck> {
        analysis::derived_checks(rows)
    }
}

/// A form's proof, set against the written-out point of the same step when the guide renders:
/// a sample of its first step's gradients (same seeded weights and sequence: the same
/// gradients up to reordered sums) and its loss at every step it ran.
struct FormProof;

impl TrainChecks for FormProof {
    fn checks(&self, t: Trained<'_>) -> Proof {
        let mut proof = Proof::default();
        proof.traces.insert(
            Trace::FirstStepGradientSample,
            t.gradients.iter().map(|&g| f64::from(g)).collect(),
        );
        proof.traces.insert(Trace::LossByStep, t.losses);
        proof
    }

    fn reads_losses(&self) -> bool {
        true
    }

    fn samples_gradients(&self) -> bool {
        true
    }
}

/// A form's arms on the shared model: the technique's steps with burn-memory-efficient's ops,
/// the baseline's and the control's written out (a set-up of the reader's model is a few
/// seconds on 2 cores, paid once for the three).
struct ChunkedTurn(Chunked);

impl Turn for ChunkedTurn {
    fn take(&self, arm: usize, model: Model, step: &mut dyn FnMut(Model) -> Model) -> Model {
        let chunked = if arm == 1 { self.0 } else { Chunked::default() };
        step(model.with_chunked(chunked))
    }
}
