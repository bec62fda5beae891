//! `workbench estimate`: the byte rules the experiments check, carried to the reader's model and
//! cards ([`estimator::capacity`]), printed as tables or JSON.

use clap::Args;
use estimator::capacity::{self, Estimate, Sharding, CARDS, EIGHT_CARDS};
use estimator::estimate::{Optimizer, Precision, StepPlan};
use experiments::harness::models::{LlamaShape, LoraForm, MlpShape, ModelShape, TransformerShape};
use results::format;

use guide::recommend::{recommend, Recommendation, WayStatus};
use serde::Serialize;

use crate::args::{emit, named, parse_bytes, positive};
use crate::checks::Checks;
use crate::error::BadInput;

/// A model, described by a preset or by its shape. Numbers are read as text and checked here,
/// so that a bad one is refused with one line.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// A named model: mlp-8x1024, gpt2-124m, tinyllama-1.1b, gpt2-1.5b, llama-2-7b,
    /// mistral-7b, llama-3-8b, llama-2-70b.
    #[arg(long)]
    pub preset: Option<String>,
    /// An MLP, as DEPTHxWIDTH (`8x1024`).
    #[arg(long, conflicts_with = "preset")]
    pub mlp: Option<String>,
    /// Transformer blocks (with --d-model, --heads, --vocab, --seq).
    #[arg(long, conflicts_with_all = ["preset", "mlp"], allow_hyphen_values = true)]
    pub layers: Option<String>,
    /// Width of the residual stream.
    #[arg(long, conflicts_with_all = ["preset", "mlp"], allow_hyphen_values = true)]
    pub d_model: Option<String>,
    /// Attention heads (a divisor of --d-model).
    #[arg(long, conflicts_with_all = ["preset", "mlp"], allow_hyphen_values = true)]
    pub heads: Option<String>,
    /// Vocabulary size.
    #[arg(long, conflicts_with_all = ["preset", "mlp"], allow_hyphen_values = true)]
    pub vocab: Option<String>,
    /// Tokens per sequence (also overrides a transformer preset's).
    #[arg(long, conflicts_with = "mlp", allow_hyphen_values = true)]
    pub seq: Option<String>,
    /// The head reuses the token embedding's weights (GPT-2's tied head): no head weights of
    /// its own.
    #[arg(long, conflicts_with_all = ["preset", "mlp"])]
    pub tied_head: bool,
    /// Key/value heads (a divisor of --heads): a Llama-family block (RMSNorm, rotary
    /// positions, grouped-query attention, SwiGLU); give --mlp-width with it.
    #[arg(long, conflicts_with_all = ["preset", "mlp"], allow_hyphen_values = true)]
    pub kv_heads: Option<String>,
    /// The SwiGLU MLP's width, for a Llama-family block.
    #[arg(long, conflicts_with_all = ["preset", "mlp"], allow_hyphen_values = true)]
    pub mlp_width: Option<String>,
    /// LoRA adapters of this rank on the query and value projections of a Llama-family
    /// model, its base frozen: only the adapters take gradients and optimizer state.
    #[arg(long, conflicts_with = "mlp", allow_hyphen_values = true)]
    pub lora_rank: Option<String>,
}

impl ModelArgs {
    /// Whether any of the model's options was given.
    pub fn given(&self) -> bool {
        self.preset.is_some()
            || self.mlp.is_some()
            || self.layers.is_some()
            || self.d_model.is_some()
            || self.heads.is_some()
            || self.vocab.is_some()
            || self.seq.is_some()
            || self.tied_head
            || self.kv_heads.is_some()
            || self.mlp_width.is_some()
            || self.lora_rank.is_some()
    }

    /// [`ModelArgs::resolve`], with the LoRA rank applied where one was given.
    pub fn resolve_with_lora(&self) -> Result<(String, String, ModelShape), BadInput> {
        let (name, assumes, shape) = self.resolve()?;
        let Some(rank) = self.lora_rank.as_deref() else {
            return Ok((name, assumes, shape));
        };
        let rank = positive("lora-rank", rank)?;
        match shape {
            ModelShape::Llama(s) => Ok((
                format!("{name} + LoRA rank {rank}"),
                format!(
                    "{assumes}; LoRA adapters of rank {rank} on the query and value \
                     projections, the base frozen"
                ),
                ModelShape::Llama(LlamaShape {
                    lora_rank: Some(rank),
                    ..s
                }),
            )),
            _ => Err(BadInput::BadModel(format!(
                "--lora-rank applies to a Llama-family model (a llama preset, or --kv-heads \
                 with --mlp-width); {name} is not one"
            ))),
        }
    }

    /// The model: its name, what it assumes, and its shape.
    pub fn resolve(&self) -> Result<(String, String, ModelShape), BadInput> {
        let seq = self
            .seq
            .as_deref()
            .map(|s| positive("seq", s))
            .transpose()?;
        if let Some(id) = &self.preset {
            let known: Vec<&str> = capacity::presets().iter().map(|p| p.id).collect();
            let p = capacity::preset(id).ok_or_else(|| {
                BadInput::BadModel(format!(
                    "unknown preset '{id}' (known: {})",
                    known.join(", ")
                ))
            })?;
            let shape = match (p.shape, seq) {
                (ModelShape::Transformer(t), Some(seq)) => {
                    ModelShape::Transformer(TransformerShape { seq, ..t })
                }
                (ModelShape::Llama(t), Some(seq)) => ModelShape::Llama(LlamaShape { seq, ..t }),
                (ModelShape::Mlp(_), Some(_)) => {
                    return Err(BadInput::BadModel(format!(
                        "--seq does not apply to {id}, an MLP"
                    )))
                }
                (shape, None) => shape,
            };
            return Ok((
                p.id.to_string(),
                match p.published_params {
                    Some(n) => format!(
                        "{}; stands for {}: {} parameters, as published",
                        p.assumes,
                        p.published,
                        format::thousands(n)
                    ),
                    None => format!("{}; stands for {}", p.assumes, p.published),
                },
                shape,
            ));
        }
        if let Some(mlp) = &self.mlp {
            let bad = || {
                BadInput::BadModel(format!(
                    "--mlp must be DEPTHxWIDTH with both positive (8x1024), got '{mlp}'"
                ))
            };
            let (depth, width) = mlp.split_once(['x', 'X']).ok_or_else(bad)?;
            let (depth, width) = (
                positive("mlp depth", depth).map_err(|_| bad())?,
                positive("mlp width", width).map_err(|_| bad())?,
            );
            return Ok((
                format!("mlp-{depth}x{width}"),
                "the measured MLP: Linear and ReLU layers of one width, an MSE loss".into(),
                ModelShape::Mlp(MlpShape { depth, width }),
            ));
        }
        let field = |name: &str, v: &Option<String>| -> Result<usize, BadInput> {
            let v = v.as_deref().ok_or_else(|| {
                BadInput::BadModel(format!(
                    "describe the model with --preset, --mlp, or all of --layers, --d-model, \
                     --heads, --vocab and --seq (--{name} is missing)"
                ))
            })?;
            positive(name, v)
        };
        if self.kv_heads.is_some() || self.mlp_width.is_some() {
            return self.llama(field);
        }
        let shape = TransformerShape {
            chunked: Default::default(),
            layers: field("layers", &self.layers)?,
            d_model: field("d-model", &self.d_model)?,
            heads: field("heads", &self.heads)?,
            vocab: field("vocab", &self.vocab)?,
            seq: field("seq", &self.seq)?,
            tied_head: self.tied_head,
        };
        if !shape.d_model.is_multiple_of(shape.heads) {
            return Err(BadInput::BadModel(format!(
                "--heads {} does not divide --d-model {}",
                shape.heads, shape.d_model
            )));
        }
        let head = if shape.tied_head {
            "a head tied to the token embedding"
        } else {
            "an untied head with a bias"
        };
        Ok((
            "custom".into(),
            format!("{}, {head}", capacity::GPT_BLOCK),
            ModelShape::Transformer(shape),
        ))
    }
}

impl ModelArgs {
    /// A custom Llama-family model from the shape's options.
    fn llama(
        &self,
        field: impl Fn(&str, &Option<String>) -> Result<usize, BadInput>,
    ) -> Result<(String, String, ModelShape), BadInput> {
        let shape = LlamaShape {
            chunked: Default::default(),
            layers: field("layers", &self.layers)?,
            d_model: field("d-model", &self.d_model)?,
            heads: field("heads", &self.heads)?,
            kv_heads: field("kv-heads", &self.kv_heads)?,
            mlp: field("mlp-width", &self.mlp_width)?,
            vocab: field("vocab", &self.vocab)?,
            seq: field("seq", &self.seq)?,
            tied_head: self.tied_head,
            lora_rank: None,
            lora_form: LoraForm::ActivationPath,
            base_bits: None,
            fused_attention: false,
        };
        if !shape.d_model.is_multiple_of(shape.heads) || !shape.heads.is_multiple_of(shape.kv_heads)
        {
            return Err(BadInput::BadModel(format!(
                "--heads {} must divide --d-model {}, and --kv-heads {} must divide --heads",
                shape.heads, shape.d_model, shape.kv_heads
            )));
        }
        Ok((
            "custom".into(),
            capacity::LLAMA_BLOCK.into(),
            ModelShape::Llama(shape),
        ))
    }
}

/// The options of a training step that `estimate` and `fit` share, parsed alike: a wrong one
/// gets the same line from both commands.
#[derive(Debug, Clone, Args)]
pub struct StepArgs {
    /// Micro-batches, where a combination accumulates gradients (a divisor of --batch);
    /// without it, nothing that accumulates is estimated or searched.
    #[arg(long, allow_hyphen_values = true)]
    pub micro_batches: Option<String>,
    /// How parameters are stored and the forward pass computes: f32, bf16, mixed-bf16 (`fit`
    /// runs f32 only).
    #[arg(long, default_value = "f32")]
    pub precision: String,
    /// The optimizer: sgd, adafactor, momentum, lion, adagrad, rmsprop, adam, adamw, lamb, adan
    /// (Burn 0.22's, at its defaults).
    #[arg(long, default_value = "adam")]
    pub optimizer: String,
}

/// [`StepArgs`], parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Micro-batches, where given.
    pub micro_batches: Option<usize>,
    /// How parameters are stored and the forward pass computes.
    pub precision: Precision,
    /// The optimizer.
    pub optimizer: Optimizer,
}

impl StepArgs {
    /// The step these options name, or the one line that says which option is wrong.
    pub fn parse(&self) -> Result<Step, BadInput> {
        Ok(Step {
            micro_batches: self
                .micro_batches
                .as_deref()
                .map(|m| positive("micro-batches", m))
                .transpose()?,
            precision: named(
                "precision",
                &self.precision,
                &Precision::ALL,
                Precision::name,
            )?,
            optimizer: named(
                "optimizer",
                &self.optimizer,
                &Optimizer::ALL,
                Optimizer::name,
            )?,
        })
    }
}

/// `workbench estimate`'s own options.
#[derive(Debug, Clone, Args)]
pub struct EstimateArgs {
    /// The model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Samples (sequences) per optimizer step (default 8); with --inference, sequences
    /// generated at once (default 1).
    #[arg(long, allow_hyphen_values = true)]
    pub batch: Option<String>,
    /// The step's precision, optimizer and micro-batches.
    #[command(flatten)]
    pub step: StepArgs,
    /// A card's memory: a size printed on the box (8GB to 141GB) is that card as its driver
    /// reports it; any other (12GiB, 12000000000) is taken as written. The first lines answer
    /// for it; without it, the common cards.
    #[arg(long)]
    pub card: Option<String>,
    /// Generation instead of training: the weights at 16, 8 and 4 bits, the key/value cache
    /// of --batch sequences of --context tokens, and the longest context that fits.
    #[arg(long)]
    pub inference: bool,
    /// Tokens per sequence for --inference (the prompt and what is generated; default: the
    /// model's sequence).
    #[arg(long, requires = "inference", allow_hyphen_values = true)]
    pub context: Option<String>,
    /// Bits per cached key or value for --inference: 16 or 8.
    #[arg(long, default_value = "16", requires = "inference")]
    pub kv_bits: String,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// A guide's records (its `data` folder), whose checks each way carries: a way whose
    /// check failed is said so, and is the answer only where no other way fits [default:
    /// site/data where it exists]
    #[arg(long)]
    pub results: Option<std::path::PathBuf>,
}

/// A `--card` as read: its bytes, and the line that says how it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct CardRead {
    /// The card's bytes.
    pub bytes: u64,
    /// How the text was read, the answer's first line.
    pub how: String,
}

impl CardRead {
    /// `text` read as a card: a size on the box names the guide's card of that class (one
    /// definition, [`results::cards`]), so that the CLI and What fits answer for the same
    /// bytes; any other size is taken as written.
    pub fn of(text: &str) -> Result<Self, BadInput> {
        if let Some(c) = results::cards::on_the_box(text) {
            return Ok(Self {
                bytes: c.bytes() as u64,
                how: format!(
                    "--card {text}: the guide's {} card ({}), {} MiB as nvidia-smi reports it ({})",
                    c.class,
                    c.models,
                    format::thousands(c.reported_mib),
                    format::bytes(c.bytes())
                ),
            });
        }
        let bytes = parse_bytes("card", text)?;
        let known: Vec<&str> = results::cards::ALL.iter().map(|c| c.class).collect();
        Ok(Self {
            bytes,
            how: format!(
                "--card {text}: taken as written, {} bytes ({}); the sizes printed on a box \
                 ({}) read as those cards",
                format::thousands(bytes),
                format::bytes(bytes as f64),
                known.join(", ")
            ),
        })
    }
}

impl EstimateArgs {
    /// `--card` as read, where given.
    pub fn card(&self) -> Result<Option<CardRead>, BadInput> {
        self.card.as_deref().map(CardRead::of).transpose()
    }

    /// The estimate these options ask for.
    pub fn estimate(&self) -> Result<Estimate, BadInput> {
        let (name, assumes, shape) = self.model.resolve_with_lora()?;
        let batch = positive("batch", self.batch.as_deref().unwrap_or("8"))?;
        let Step {
            micro_batches: micro,
            precision,
            optimizer,
        } = self.step.parse()?;
        if let Some(micro) = micro.filter(|&m| !batch.is_multiple_of(m)) {
            return Err(BadInput::BadModel(format!(
                "--micro-batches {micro} does not divide --batch {batch}"
            )));
        }
        let base = StepPlan {
            precision,
            optimizer,
            ..StepPlan::f32_adam(shape, batch as f64)
        };
        Ok(Estimate::of(&name, &assumes, base, micro))
    }
}

/// The estimate with each way's checks and, on a card, the answer: what `--json` prints.
#[derive(Debug, Serialize)]
pub struct Answered<'a> {
    /// The estimate.
    #[serde(flatten)]
    pub estimate: &'a Estimate,
    /// Where the checks were read.
    pub checks_source: String,
    /// Each row's way and its checks, in the rows' order.
    pub checks: Vec<WayChecks>,
    /// On `--card`: the way to train (none where none fits).
    pub answer: Option<Recommendation>,
}

/// One way's checks.
#[derive(Debug, Serialize)]
pub struct WayChecks {
    /// The way (the row's combination).
    pub way: &'static str,
    /// The ranked fixes it applies.
    pub fixes: Vec<results::Fix>,
    /// Their checks.
    pub checks: WayStatus,
}

/// Each row's checks.
fn way_checks(e: &Estimate, checks: &Checks) -> Vec<WayChecks> {
    e.rows
        .iter()
        .map(|r| {
            let fixes = capacity::ranked_fixes(&r.plan);
            WayChecks {
                way: r.combination.name,
                checks: checks.status(&fixes),
                fixes,
            }
        })
        .collect()
}

/// Each row's fit on a card of `card_bytes` (a search per row: done once per answer).
fn fits_on(e: &Estimate, card_bytes: f64) -> Vec<capacity::CardAnswer> {
    e.rows
        .iter()
        .map(|r| capacity::CardAnswer::of(r.plan, card_bytes))
        .collect()
}

/// The way to train, given each row's fit: the largest batch among the ways whose checks did
/// not fail, else among those that failed ([`guide::recommend::recommend`]).
fn answer_on(ways: &[WayChecks], fits: &[capacity::CardAnswer]) -> Option<Recommendation> {
    recommend(
        ways.iter()
            .zip(fits)
            .map(|(w, fit)| (w.way.to_string(), fit.largest_batch, w.checks.clone())),
    )
}

/// Runs `workbench estimate`.
pub fn run(args: &EstimateArgs) -> anyhow::Result<()> {
    let card = args.card()?;
    let e = args.estimate()?;
    let text = match (card, args.json) {
        // The common cards' table alone says nothing of checks: no records to read for it
        // (a --results given is still read: a folder without records is refused).
        (None, false) if args.results.is_none() => table(&e),
        (card, json) => {
            let checks = Checks::read(args.results.as_deref())?;
            let ways = way_checks(&e, &checks);
            match card {
                _ if json => {
                    let answer = card
                        .as_ref()
                        .and_then(|c| answer_on(&ways, &fits_on(&e, c.bytes as f64)));
                    let answered = Answered {
                        estimate: &e,
                        checks_source: checks.source,
                        checks: ways,
                        answer,
                    };
                    serde_json::to_string_pretty(&answered)? + "\n"
                }
                Some(c) => {
                    let answer = card_answer(&e, &ways, c.bytes as f64);
                    format!("{}\n{answer}{}\n\n{}", c.how, checks.source, table(&e))
                }
                None => table(&e),
            }
        }
    };
    emit(&text)
}

/// The width of the combinations' names, so that every table's columns line up.
fn name_width(e: &Estimate) -> usize {
    e.rows
        .iter()
        .map(|r| r.combination.name.len())
        .max()
        .unwrap_or(0)
        .max("training step".len())
}

/// The first lines for a reader's card: the answer, then each combination's largest batch on
/// it, or which part is over it, each with its checks.
pub fn card_answer(e: &Estimate, ways: &[WayChecks], card_bytes: f64) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{} on a {} card ({} less {} for the CUDA context and the safety margin of the \
         precision):\n",
        e.model,
        format::bytes(card_bytes),
        format::bytes(card_bytes),
        format::bytes(e.context_bytes)
    );
    let fits = fits_on(e, card_bytes);
    let _ = writeln!(out, "  answer: {}", answer_words(ways, &fits));
    for ((r, w), a) in e.rows.iter().zip(ways).zip(&fits) {
        let line = match a.largest_batch {
            Some(b) => format!("fits: the largest batch is {}", format::thousands(b)),
            None if a.fixed_over() => format!(
                "does not fit: weights, gradients and optimizer state alone are {} of the {} \
                 it may use",
                format::bytes(a.fixed_bytes),
                format::bytes(a.usable_bytes)
            ),
            None => format!(
                "does not fit: one sequence peaks at {} of the {} it may use (weights, \
                 gradients and optimizer state {}; the rest is activations)",
                format::bytes(a.smallest_peak_bytes),
                format::bytes(a.usable_bytes),
                format::bytes(a.fixed_bytes)
            ),
        };
        let _ = writeln!(
            out,
            "  {:<w$} {line}{}",
            r.combination.name,
            w.checks.bracketed(),
            w = name_width(e)
        );
    }
    out
}

/// The answer's line: the way, its batch and its checks, or that none fits.
fn answer_words(ways: &[WayChecks], fits: &[capacity::CardAnswer]) -> String {
    match answer_on(ways, fits) {
        Some(r) => format!(
            "{}, batch {}{}",
            r.way(),
            format::thousands(r.largest_batch()),
            r.checks().bracketed()
        ),
        None => "no way fits one sequence on this card".into(),
    }
}

/// A batch found, or "-" where not even one sample fits.
fn batch_cell(b: Option<u64>) -> String {
    b.map_or("-".into(), format::thousands)
}

/// The estimate as text tables.
pub fn table(e: &Estimate) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let w = name_width(e);
    let b = &e.base;
    let accumulation = match e.micro_batches {
        Some(m) => format!("accumulation over {m} micro-batches"),
        None => "no accumulation (give --micro-batches to add it)".into(),
    };
    let _ = writeln!(
        out,
        "{}: {} parameters ({})\nbatch {} ({}), {} precision, {} optimizer; {accumulation}; \
         checkpointing is Burn's balanced strategy; memory-efficient attention and the chunked \
         loss are burn-memory-efficient's ops (this workspace's crate; their checks are the \
         guide's efficient-attention page's); activations at the peak include mixed \
         precision's 16-bit weight copies and the loss's or backward's transient\n",
        e.model,
        format::thousands(e.params),
        e.assumes,
        b.batch,
        match b.shape {
            ModelShape::Mlp(_) => "samples".into(),
            shape => format!("sequences of {} tokens", shape.seq().unwrap_or_default()),
        },
        b.precision.name(),
        b.optimizer.name(),
    );
    let _ = writeln!(
        out,
        "the peak, in parts that add up to it: held the whole step (weights, optimizer state, \
         inputs, accumulated gradients), then at backward's peak either the activations (what \
         the forward pass kept, the 16-bit weight copies, the larger transient) or the \
         gradients with the optimizer's copy of the largest parameter (in the transient \
         column), whichever is larger (- : the other)"
    );
    let _ = writeln!(
        out,
        "{:<w$} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "training step",
        "weights",
        "optimizer",
        "inputs",
        "accum.",
        "kept",
        "16-bit",
        "transient",
        "gradients",
        "peak"
    );
    let part = |b: f64| {
        if b == 0.0 {
            "-".to_string()
        } else {
            format::bytes(b)
        }
    };
    for r in &e.rows {
        let p = &r.at_peak;
        let _ = writeln!(
            out,
            "{:<w$} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            r.combination.name,
            part(p.weights),
            part(p.optimizer),
            part(p.inputs),
            part(p.accumulated),
            part(p.kept),
            part(p.weight_copies),
            // One of the two is zero: the activations' transient or the optimizer's copy.
            part(p.transient + p.update_transient),
            part(p.grads),
            format::bytes(r.peak_bytes),
        );
    }
    let margins: Vec<String> = Precision::ALL
        .iter()
        .filter(|p| e.rows.iter().any(|r| r.plan.precision == **p))
        .map(|&p| format!("{:.0}% in {}", 100.0 * capacity::safety_margin(p), p.name()))
        .collect();
    let _ = writeln!(
        out,
        "\nlargest batch per card (a multiple of the micro-batches where accumulating; - : \
         not even one), planned on the card less {} for the CUDA context, less a safety \
         margin for the estimator's measured error ({})",
        format::bytes(e.context_bytes),
        margins.join(", ")
    );
    let _ = writeln!(
        out,
        "cards as their driver reports them: {}",
        CARDS
            .iter()
            .map(|c| format!(
                "{} ({}: {} MiB, {})",
                c.name(),
                c.card.models,
                format::thousands(c.card.reported_mib),
                format::bytes(c.bytes())
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let _ = write!(out, "{:<w$}", "");
    for c in CARDS {
        let _ = write!(out, " {:>9}", c.name());
    }
    let _ = writeln!(out);
    for r in &e.rows {
        let _ = write!(out, "{:<w$}", r.combination.name);
        for b in &r.largest_batch_per_card {
            let _ = write!(out, " {:>9}", batch_cell(*b));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "\n{}: largest batch over all cards, per scheme ({})",
        EIGHT_CARDS.name(),
        guide::what_fits::SHARDING_SOURCE
    );
    let _ = write!(out, "{:<w$}", "");
    for s in Sharding::ALL {
        let _ = write!(out, " {:>24}", s.name());
    }
    let _ = writeln!(out);
    for r in &e.rows {
        let _ = write!(out, "{:<w$}", r.combination.name);
        for b in &r.largest_batch_eight_cards {
            let _ = write!(out, " {:>24}", batch_cell(*b));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "\ninference weights (one f32 scale per tensor, left out): {}",
        e.inference_weights
            .iter()
            .map(|(bits, packed, flex)| if packed == flex {
                format!("{bits}-bit {}", format::bytes(*packed))
            } else {
                format!(
                    "{bits}-bit {} packed on CubeCL ({} on Flex, one byte a value)",
                    format::bytes(*packed),
                    format::bytes(*flex)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    );
    out
}
