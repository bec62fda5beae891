//! `workbench fit --budget`: the largest batch that trains under a memory budget, found by
//! running it, beside the estimator's guess.
//!
//! Question: under a budget of B bytes, what is the largest batch that trains, plainly and with
//! each technique?
//! Method: each try is one training step in a child process. On the CPU the counting allocator
//! enforces the budget in the child (an allocation past it writes `out of memory: tried to
//! allocate ...` to stderr and fails, so the child aborts); the parent recognises the message
//! and the abort, and searches on from the estimator's guess: doubling or halving until the
//! answer is bracketed, then bisecting, on multiples of the micro-batches. On a device CubeCL
//! has no limit: a try fits when its step's bracketed peak (the upper bound) is within the
//! budget. The answer is verified by construction: the batch found ran under the budget and
//! the next larger one did not.
//! Answer: a table (or JSON) per model and technique: the batch, the verification, the guess,
//! its miss and the search's wall time.

use std::time::{Duration, Instant};

use clap::Args;
use estimator::capacity::{self, Sharding};
use estimator::estimate::{Optimizer, Precision, StepPlan};
use experiments::harness::backend::Checkpointing;
use experiments::harness::models::{training_mlp, training_transformer, ModelShape};
use experiments::harness::profile::Sizes;
use experiments::harness::train::TrainConfig;
use results::capacity::{CapacityRecord, MeasuredFit};
use results::{format, DeviceKind, Metric, PointResult, Profile};
use serde::Serialize;

use crate::args::{emit, parse_bytes};
use crate::error::BadInput;
use crate::estimate::{ModelArgs, Step, StepArgs};
use crate::runner::{classify_failure, out_of_memory, run_child};

/// `workbench fit`'s options.
#[derive(Debug, Clone, Args)]
pub struct FitArgs {
    /// The memory budget: bytes, or a number with B, KiB, MiB, GiB, KB, MB or GB (`512MiB`).
    #[arg(long, allow_hyphen_values = true)]
    pub budget: String,
    /// Your model, as `estimate` takes it (--preset, --mlp, or --layers, --d-model, --heads,
    /// --vocab and --seq, with --tied-head).
    #[command(flatten)]
    pub shape: ModelArgs,
    /// Or the workbench's own models: mlp, transformer (comma-separated; default both), at the
    /// run profile's sizes.
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    /// Techniques: plain, accumulation, checkpointing, accumulation+checkpointing
    /// (comma-separated; default all four).
    #[arg(long, value_delimiter = ',')]
    pub techniques: Vec<String>,
    /// The step's precision, optimizer and micro-batches, as `estimate` takes them.
    #[command(flatten)]
    pub step: StepArgs,
    /// The quick profile's model sizes, as in `run`.
    #[arg(long)]
    pub quick: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Reads a budget: a positive number of bytes, with an optional unit.
pub fn parse_budget(text: &str) -> Result<u64, BadInput> {
    parse_bytes("budget", text)
}

/// A technique `fit` can run: the ones the training step takes as configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FitTechnique {
    /// Its name.
    pub name: &'static str,
    /// Whether it accumulates.
    pub accumulation: bool,
    /// Whether it checkpoints.
    pub checkpointing: bool,
}

/// Every technique `fit` runs. Mixed precision is estimated, not fitted: on the CPU Flex
/// multiplies bf16 through f32 copies, which a fit here would measure instead.
pub const FIT_TECHNIQUES: [FitTechnique; 4] = [
    FitTechnique {
        name: "plain",
        accumulation: false,
        checkpointing: false,
    },
    FitTechnique {
        name: "accumulation",
        accumulation: true,
        checkpointing: false,
    },
    FitTechnique {
        name: "checkpointing",
        accumulation: false,
        checkpointing: true,
    },
    FitTechnique {
        name: "accumulation+checkpointing",
        accumulation: true,
        checkpointing: true,
    },
];

/// What one try gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum Try {
    /// The step ran within the budget; its peak (the upper bound on a device).
    Fits {
        /// Batch tried.
        batch: u64,
        /// The step's peak, in bytes.
        peak_bytes: u64,
        /// Bytes the child held before its model existed (thread pool, runtime).
        process_baseline_bytes: u64,
    },
    /// Out of memory: the allocator refused (CPU) or the peak passed the budget (device).
    OutOfMemory {
        /// Batch tried.
        batch: u64,
        /// The allocator's message, or the peak against the budget.
        message: String,
        /// The bytes the refused allocation asked for, where the message says (on a device,
        /// the step's peak that passed the budget).
        requested_bytes: Option<u64>,
    },
}

impl Try {
    fn fits(&self) -> bool {
        matches!(self, Try::Fits { .. })
    }
}

/// One model and technique, searched.
#[derive(Debug, Clone, Serialize)]
pub struct FitResult {
    /// The model.
    pub model: ModelShape,
    /// The model's name (`mlp 4x256`).
    pub model_name: String,
    /// The technique.
    pub technique: FitTechnique,
    /// The budget, in bytes.
    pub budget_bytes: u64,
    /// The estimator's largest batch under the budget less the process's own bytes (measured
    /// in the first try, at the smallest batch): the search's start.
    pub estimated_batch: Option<u64>,
    /// The largest batch that ran under the budget (`None`: not even the smallest).
    pub found_batch: Option<u64>,
    /// The next larger batch tried, which did not fit.
    pub next_fails_at: Option<u64>,
    /// The estimator's guess against the batch found, in percent.
    pub estimate_miss_pct: Option<f64>,
    /// Every try, in order.
    pub tries: Vec<Try>,
    /// The search's wall time, in seconds.
    pub wall_s: f64,
}

/// Runs `workbench fit`.
pub fn run(args: &FitArgs, device: DeviceKind) -> anyhow::Result<()> {
    let budget = parse_budget(&args.budget)?;
    let Step {
        micro_batches: micro,
        precision,
        optimizer,
    } = args.step.parse()?;
    let micro = micro.map(|m| m as u64);
    if precision != Precision::F32 {
        return Err(BadInput::BadModel(format!(
            "--precision {}: fit runs f32 steps (on the CPU Flex multiplies 16-bit values \
             through f32 copies, which a fit would measure instead); `workbench estimate \
             --precision {}` gives its rules",
            precision.name(),
            precision.name()
        ))
        .into());
    }
    if args.shape.given() && !args.model.is_empty() {
        return Err(BadInput::BadModel(
            "--model names the workbench's own models; describe yours with --preset, --mlp or \
             --layers/--d-model/--heads/--vocab/--seq instead, not both"
                .into(),
        )
        .into());
    }
    let sizes = Sizes::of(
        if args.quick {
            Profile::Quick
        } else {
            Profile::Full
        },
        device,
    );
    let mut models = Vec::new();
    let names = if args.shape.given() {
        models.push(args.shape.resolve()?.2);
        Vec::new()
    } else if args.model.is_empty() {
        vec!["mlp".to_string(), "transformer".to_string()]
    } else {
        args.model.clone()
    };
    for m in &names {
        models.push(match m.as_str() {
            "mlp" => ModelShape::Mlp(training_mlp(sizes)),
            "transformer" => ModelShape::Transformer(training_transformer(sizes)),
            other => {
                return Err(BadInput::BadModel(format!(
                    "unknown --model '{other}' (known: mlp, transformer)"
                ))
                .into())
            }
        });
    }
    let mut techniques = Vec::new();
    let wanted = if args.techniques.is_empty() {
        FIT_TECHNIQUES
            .iter()
            .filter(|t| micro.is_some() || !t.accumulation)
            .map(|t| t.name.to_string())
            .collect()
    } else {
        args.techniques.clone()
    };
    for t in &wanted {
        let technique = *FIT_TECHNIQUES
            .iter()
            .find(|f| f.name == t.as_str())
            .ok_or_else(|| {
                BadInput::BadModel(format!(
                    "unknown --techniques '{t}' (known: {})",
                    FIT_TECHNIQUES.map(|f| f.name).join(", ")
                ))
            })?;
        if technique.accumulation && micro.is_none() {
            return Err(BadInput::BadModel(format!(
                "--techniques {t} accumulates: give --micro-batches too"
            ))
            .into());
        }
        techniques.push(technique);
    }
    let micro = micro.unwrap_or(1);
    let exe = std::env::current_exe()?;
    let mut results = Vec::new();
    for &model in &models {
        for &technique in &techniques {
            let r = search(&exe, device, model, technique, budget, micro, optimizer)?;
            if !args.json {
                emit(&row(&r))?;
            }
            results.push(r);
        }
    }
    if args.json {
        emit(&(serde_json::to_string_pretty(&results)? + "\n"))?;
    }
    Ok(())
}

/// The training step of `model` at `batch` with `technique` and `optimizer`.
fn config(
    model: ModelShape,
    technique: FitTechnique,
    batch: u64,
    micro: u64,
    optimizer: Optimizer,
) -> TrainConfig {
    TrainConfig {
        optimizer,
        micro_batches: if technique.accumulation {
            micro as usize
        } else {
            1
        },
        checkpointing: if technique.checkpointing {
            Checkpointing::Balanced
        } else {
            Checkpointing::None
        },
        ..TrainConfig::adam(model, batch as usize)
    }
}

/// Runs one try in a child (`workbench fit-point`).
fn attempt(
    exe: &std::path::Path,
    device: DeviceKind,
    config: &TrainConfig,
    budget: u64,
) -> anyhow::Result<Try> {
    let mut command = std::process::Command::new(exe);
    command
        .args([
            "fit-point",
            "--budget-bytes",
            &budget.to_string(),
            "--device",
        ])
        .arg(device.name())
        .env("RUST_BACKTRACE", "0");
    let input = serde_json::to_vec(config)?;
    let child = run_child(command, &input, Some(Duration::from_secs(600)), false)?;
    let batch = config.batch as u64;
    // The run's own classification of a child that printed no result: out of memory (the
    // budget's message, a host allocation failure, a device allocator's error) is this
    // search's answer; anything else is a failure of the try.
    let result: PointResult = match child.json() {
        Ok(result) => result,
        Err(why) => {
            return match out_of_memory(&child.stderr) {
                Some((line, requested_bytes)) => Ok(Try::OutOfMemory {
                    batch,
                    message: line,
                    requested_bytes,
                }),
                None => Err(anyhow::anyhow!(
                    "batch {batch} failed other than by running out of memory: {}: {}",
                    guide::words::outcome_reason(&classify_failure(&child, why)),
                    child.stderr.lines().last().unwrap_or("")
                )),
            };
        }
    };
    // On a device the bracket's upper bound, so that a batch said to fit surely does.
    let peak = result
        .peak_upper_bytes()
        .unwrap_or_else(|| result.peak_bytes());
    Ok(if peak > budget {
        Try::OutOfMemory {
            batch,
            message: format!(
                "step peak {peak} bytes (bracket's upper bound) over the budget of {budget}"
            ),
            requested_bytes: Some(peak),
        }
    } else {
        Try::Fits {
            batch,
            peak_bytes: peak,
            process_baseline_bytes: result.metric(Metric::ProcessBaselineBytes) as u64,
        }
    })
}

/// Searches the largest batch of `model` with `technique` under `budget`.
fn search(
    exe: &std::path::Path,
    device: DeviceKind,
    model: ModelShape,
    technique: FitTechnique,
    budget: u64,
    micro: u64,
    optimizer: Optimizer,
) -> anyhow::Result<FitResult> {
    let started = Instant::now();
    let step = if technique.accumulation { micro } else { 1 };
    let plan = StepPlan {
        micro_batches: step as usize,
        checkpointing: config(model, technique, 1, micro, optimizer).checkpointing,
        optimizer,
        ..StepPlan::f32_adam(model, 1.0)
    };
    let mut tries: Vec<Try> = Vec::new();
    let try_units = |units: u64, tries: &mut Vec<Try>| -> anyhow::Result<bool> {
        let t = attempt(
            exe,
            device,
            &config(model, technique, units * step, micro, optimizer),
            budget,
        )?;
        let fits = t.fits();
        tries.push(t);
        Ok(fits)
    };
    // The smallest batch first: whether anything fits, and the process's own bytes, which the
    // estimator's rule (a training step's bytes) is then set on top of.
    let smallest_fits = try_units(1, &mut tries)?;
    let baseline = match tries.first() {
        Some(Try::Fits {
            process_baseline_bytes,
            ..
        }) => *process_baseline_bytes as f64,
        _ => 0.0,
    };
    let estimated =
        capacity::largest_batch(plan, budget as f64 - baseline, Sharding::DataParallel, 1);
    // Units of `step` samples, from the estimator's guess.
    const MAX_UNITS: u64 = 1 << 20;
    let start = estimated.map_or(1, |b| (b / step).max(1));
    let (lo, hi) = if smallest_fits {
        let (lo, hi) =
            capacity::largest_fitting(start, MAX_UNITS, |units| try_units(units, &mut tries))?;
        (Some(lo), hi)
    } else {
        (None, Some(1))
    };
    let found = lo.map(|u| u * step);
    Ok(FitResult {
        model,
        model_name: model_name(model),
        technique,
        budget_bytes: budget,
        estimated_batch: estimated,
        found_batch: found,
        next_fails_at: hi.map(|u| u * step),
        estimate_miss_pct: results::capacity::estimate_miss_pct(found, estimated),
        tries,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

impl FitResult {
    /// The search as the "What fits" page records it.
    pub fn measured(&self) -> MeasuredFit {
        MeasuredFit {
            model: fit_model(self.model),
            technique: self.technique.name.into(),
            budget_bytes: self.budget_bytes,
            estimated_batch: self.estimated_batch,
            found_batch: self.found_batch,
            next_fails_at: self.next_fails_at,
            tries: self.tries.len(),
            wall_s: self.wall_s,
        }
    }
}

/// The budget `run all` fits under, on the CPU and at the quick profile's sizes (whatever the
/// run's profile: at the full sizes a search takes minutes).
pub const RUN_FIT_BUDGET_BYTES: u64 = 32 << 20;

/// The "What fits" record of a run: on the CPU in the full profile, `fit`'s searches (both
/// models at the quick sizes, every technique, under [`RUN_FIT_BUDGET_BYTES`]); the quick
/// profile and the devices run none. A search that cannot run (a child that does not start)
/// ends them, its error kept in the record.
pub fn capacity_record(
    exe: &std::path::Path,
    device: DeviceKind,
    profile: Profile,
) -> CapacityRecord {
    let micro = capacity::TABLE_MICRO_BATCHES;
    let mut record = CapacityRecord {
        schema_version: results::capacity::CAPACITY_SCHEMA_VERSION,
        provenance: crate::provenance::current(),
        profile,
        device,
        fit_budget_bytes: RUN_FIT_BUDGET_BYTES,
        fit_micro_batches: micro,
        fits: Vec::new(),
        fit_error: None,
    };
    if profile == Profile::Quick || device != DeviceKind::Cpu {
        return record;
    }
    let sizes = Sizes::of(Profile::Quick, device);
    for model in [
        ModelShape::Mlp(training_mlp(sizes)),
        ModelShape::Transformer(training_transformer(sizes)),
    ] {
        for technique in FIT_TECHNIQUES {
            match search(
                exe,
                device,
                model,
                technique,
                RUN_FIT_BUDGET_BYTES,
                micro as u64,
                Optimizer::Adam,
            ) {
                Ok(r) => {
                    print!("fit: {}", row(&r));
                    record.fits.push(r.measured());
                }
                Err(e) => {
                    eprintln!("note: fit could not run: {e:#}");
                    record.fit_error = Some(format!("{e:#}"));
                    return record;
                }
            }
        }
    }
    record
}

/// A model's shape, as the record keeps it.
fn fit_model(model: ModelShape) -> results::FitModel {
    match model {
        ModelShape::Mlp(s) => results::FitModel::Mlp {
            depth: s.depth,
            width: s.width,
        },
        ModelShape::Transformer(t) => results::FitModel::Transformer {
            layers: t.layers,
            d_model: t.d_model,
            seq: t.seq,
            vocab: t.vocab,
        },
        // Named by the widths a record keeps of a decoder.
        ModelShape::Llama(t) => results::FitModel::Transformer {
            layers: t.layers,
            d_model: t.d_model,
            seq: t.seq,
            vocab: t.vocab,
        },
    }
}

/// A model's short name.
fn model_name(model: ModelShape) -> String {
    guide::what_fits::model_name(&fit_model(model))
}

/// One result as a line of text.
fn row(r: &FitResult) -> String {
    let measured = r.measured();
    let (found, verified) = (
        guide::what_fits::found(&measured),
        guide::what_fits::verified(&measured),
    );
    format!(
        "{} | {} | budget {}: {found} ({verified}); estimator's guess {} ({}); {} tries in {}\n",
        r.model_name,
        r.technique.name,
        format::bytes(r.budget_bytes as f64),
        r.estimated_batch
            .map_or("does not fit".into(), |b| b.to_string()),
        r.estimate_miss_pct.map_or("n/a".into(), |p| format!(
            "{} against the batch found",
            format::pct(p)
        )),
        r.tries.len(),
        format::seconds(r.wall_s),
    )
}

/// `workbench fit-point`: one try, in the child. On the CPU the budget is armed before the
/// backend exists, so that everything the step allocates counts.
pub fn fit_point(device: DeviceKind, budget_bytes: u64, config: TrainConfig) -> anyhow::Result<()> {
    if device == DeviceKind::Cpu {
        experiments::harness::probe::host::arm_budget(budget_bytes);
    }
    let repeats = experiments::harness::profile::Repeats::on(0, 1, device);
    let result = experiments::harness::train::run_train_point(
        config,
        repeats,
        device,
        experiments::harness::train::NoChecks,
    )?;
    emit(&(serde_json::to_string(&result)? + "\n"))
}
