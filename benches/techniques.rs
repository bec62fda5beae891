//! `cargo bench`: one criterion group per technique, one benchmark per point its experiment
//! measures (`checkpointing/balanced-depth-32/cpu-full`), on the CPU by default or on the device
//! named by `WORKBENCH_DEVICE` (`cpu`, `wgpu`, `cuda`; the device backends need their feature).
//!
//! Nothing of the experiments is copied here. Each benchmark runs the experiment's own point
//! (`Experiment::run_point`) with a criterion timer installed on this thread
//! (`experiments::timing::with_step_timer`): the point builds its model, optimizer and inputs
//! exactly as in the workbench, runs its warm-up, and then hands its prepared step, the one the
//! workbench times, to criterion, which times it with `iter_custom` (the device synchronised
//! before every clock read) and reports samples per second (`Throughput::Elements`). The point
//! then finishes as usual, its result unused (the training step skips its correctness checks
//! while a timer is installed: the workbench's own run records them).
//!
//! Sizes: `WORKBENCH_BENCH_PROFILE=quick|full`. By default `quick` on the CPU and in test mode
//! (`cargo test --benches`, `cargo bench -- --test`), `full` on wgpu and CUDA (on CUDA the GPU
//! sizes). `full` on the CPU gives the committed guide's sizes, so that
//! `workbench render --criterion` can set criterion's estimates beside the guide's timings.
//! Criterion's defaults are trimmed for steps of milliseconds to seconds: 10 samples, 1 s of
//! warm-up, 2 s of measurement (each can be overridden on the command line, e.g.
//! `cargo bench -- --sample-size 50`).
//!
//! As in the workbench, every point runs in a process of its own: the bench starts itself again
//! per benchmark, with the same arguments. One process for all points would measure a heap
//! warmed by the points before: a step that frees a 128 MiB tensor took 0.04 ms there against
//! 4.3 ms in a fresh process. It also lets each point set its own float type (Burn sets it once
//! per process).

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::rc::Rc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use criterion::{BenchmarkId, Criterion, Throughput};
use experiments::harness::backend::Backends;
use experiments::harness::timing::{with_step_timer, StepTimer};
use experiments::{Experiment, ExperimentError};
use results::criterion::{Sidecar, SIDECAR};
use results::{DeviceKind, Point, Profile};
use workbench::runner::{describe_exit, run_child};

// The same allocator as the `workbench` binary, so that the steps run under the same allocator
// the workbench's timings were taken under (and the CPU backend's points can run at all).
#[global_allocator]
static ALLOCATOR: experiments::harness::probe::host::CountingAllocator =
    experiments::harness::probe::host::CountingAllocator;

/// Chooses the device: `cpu` (default), `wgpu` or `cuda`.
const DEVICE_ENV: &str = "WORKBENCH_DEVICE";
/// Chooses the sizes: `full` or `quick`.
const PROFILE_ENV: &str = "WORKBENCH_BENCH_PROFILE";
/// Set by this bench for its child processes: the one benchmark (`group/function/parameter`)
/// the child measures.
const POINT_ENV: &str = "WORKBENCH_BENCH_POINT";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            // 2 for what the user asked for (a device, a profile, a filter), 1 for a failure.
            ExitCode::from(if e.downcast_ref::<Refused>().is_some() {
                2
            } else {
                1
            })
        }
    }
}

/// A request this bench cannot carry out: an unknown or missing device, profile or filter.
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn refuse<T>(message: String) -> Result<T> {
    Err(Refused(message).into())
}

/// What this bench process was asked to do.
struct Options {
    device: DeviceKind,
    profile: Profile,
    /// The one benchmark this process measures (a child), or none (the parent).
    only: Option<String>,
    /// Criterion's arguments (after `--`), passed to child processes unchanged.
    args: Vec<String>,
    /// Whether criterion only checks that each benchmark runs (`--test`, or `cargo test`).
    test_mode: bool,
    /// Criterion's benchmark filter, applied before a point is built.
    filter: Filter,
}

fn run() -> Result<()> {
    let options = options()?;
    if options.device != DeviceKind::Cpu {
        if let Err(e) = options.device.identify() {
            return refuse(format!("{DEVICE_ENV}={}: {e}", options.device.name()));
        }
    }
    let mut chosen = Vec::new();
    for experiment in experiments::all() {
        for point in experiment.points(options.profile, options.device) {
            let id = BenchId::new(experiment, &point, &options);
            if options.filter.matches(&id) {
                chosen.push((experiment, point, id));
            }
        }
    }
    match &options.only {
        // A child: measure the one point it was started for.
        Some(only) => {
            let (experiment, mut point, id) = chosen
                .into_iter()
                .find(|(_, _, id)| id.full() == *only)
                .with_context(|| format!("{POINT_ENV}={only}: no such benchmark"))?;
            // Criterion does the timing; the point's own repeats only finish it.
            point.repeats = 1;
            let output_directory = criterion_home();
            let criterion = Criterion::default()
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(2))
                .output_directory(&output_directory)
                // Criterion's HTML reports are not built (its `html_reports` feature is off);
                // the estimates are read by `workbench render --criterion`.
                .without_plots()
                .configure_from_args();
            if bench_point(criterion, experiment, &point, &id, &options)? && !options.test_mode {
                write_sidecar(&id.dir(&output_directory), experiment, &point, &options)?;
            }
            Ok(())
        }
        // Listing needs no measurement: criterion's `--list` format, without starting a point.
        None if options.args.iter().any(|a| a == "--list") => {
            for (_, _, id) in &chosen {
                println!("{}: benchmark", id.full());
            }
            Ok(())
        }
        // The parent: one process per point, as the workbench measures them.
        None => {
            let exe = std::env::current_exe().context("finding this bench's executable")?;
            let mut failed = Vec::new();
            for (_, _, id) in &chosen {
                let mut command = Command::new(&exe);
                command
                    .args(&options.args)
                    .env(POINT_ENV, id.full())
                    .env(PROFILE_ENV, options.profile.name());
                // The runner's own helper, as for the workbench's points; criterion's output
                // passed through as it comes.
                let child = run_child(command, &[], None, true)
                    .with_context(|| format!("starting the bench process of {}", id.full()))?;
                // As in the workbench, a point that fails does not stop the others.
                match child.status {
                    Ok(status) if status.success() => {}
                    Ok(status) => failed.push(format!("{} ({})", id.full(), describe_exit(status))),
                    Err(reason) => failed.push(format!("{} ({reason})", id.full())),
                }
            }
            if !failed.is_empty() {
                bail!(
                    "{} of {} benchmarks failed: {}",
                    failed.len(),
                    chosen.len(),
                    failed.join(", ")
                );
            }
            Ok(())
        }
    }
}

/// Times one point with criterion.
fn bench_point(
    criterion: Criterion,
    experiment: &dyn Experiment,
    point: &Point,
    id: &BenchId,
    options: &Options,
) -> Result<bool> {
    let offered = Rc::new(Cell::new(false));
    let timer = CriterionTimer {
        criterion,
        id: id.clone(),
        offered: Rc::clone(&offered),
    };
    let result = with_step_timer(Box::new(timer), || {
        experiment.run_point(point, options.device)
    });
    match result {
        Ok(_) => {}
        // The device lacks what the point needs (lavapipe has no bf16), or Burn itself refuses
        // it (QLoRA: quantized weights under autodiff): the workbench records the answer; here
        // the benchmark is skipped, saying why.
        Err(ExperimentError::Backend(why)) => {
            eprintln!("{}/{}: skipped: {why}", experiment.id(), point.id);
            return Ok(false);
        }
        Err(e @ (ExperimentError::Unsupported { .. } | ExperimentError::NotInBurn { .. })) => {
            eprintln!("{}/{}: skipped: {e}", experiment.id(), point.id);
            return Ok(false);
        }
        Err(e) => return Err(e).with_context(|| format!("{}/{}", experiment.id(), point.id)),
    }
    if !offered.get() {
        bail!(
            "{}/{}: the point never offered its step to the timer",
            experiment.id(),
            point.id
        );
    }
    Ok(true)
}

/// Hands a point's prepared step to criterion.
struct CriterionTimer {
    criterion: Criterion,
    id: BenchId,
    /// Set when the point offers its step; read by the bench once the point returns.
    offered: Rc<Cell<bool>>,
}

impl StepTimer for CriterionTimer {
    fn time(&mut self, samples_per_step: u64, step: &mut dyn FnMut() -> Duration) {
        self.offered.set(true);
        let mut group = self.criterion.benchmark_group(&self.id.group);
        group.throughput(Throughput::Elements(samples_per_step));
        let id = BenchmarkId::new(&self.id.function, &self.id.parameter);
        group.bench_function(id, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| step()).sum())
        });
        group.finish();
    }
}

/// What `workbench render --criterion` reads beside criterion's estimates: which point of which
/// experiment, on which device, at which sizes, in its exact configuration.
fn write_sidecar(
    dir: &Path,
    experiment: &dyn Experiment,
    point: &Point,
    options: &Options,
) -> Result<()> {
    if !dir.join("new").join("estimates.json").is_file() {
        // Criterion wrote nothing (e.g. `--list`, or a baseline comparison only).
        return Ok(());
    }
    let sidecar = Sidecar {
        experiment: experiment.id().into(),
        device: options.device,
        profile: options.profile,
        point: point.clone(),
    };
    std::fs::write(
        dir.join(SIDECAR),
        serde_json::to_string_pretty(&sidecar).expect("serialises"),
    )
    .with_context(|| format!("writing {}", dir.join(SIDECAR).display()))?;
    Ok(())
}

/// Where criterion keeps its results, by criterion's own rule ($CRITERION_HOME, else
/// $CARGO_TARGET_DIR/criterion), with the workspace's `target/criterion` last.
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        PathBuf::from(home)
    } else if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        PathBuf::from(target).join("criterion")
    } else {
        Path::new(
            &std::env::var("CARGO_MANIFEST_DIR").expect("cargo bench sets CARGO_MANIFEST_DIR"),
        )
        .join("target/criterion")
    }
}

fn options() -> Result<Options> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    // As criterion decides: `cargo bench` passes --bench; without it (cargo test), or with
    // --test, each benchmark only runs once.
    let test_mode = !has("--bench") || has("--test");
    let device = match std::env::var(DEVICE_ENV).as_deref() {
        Err(_) | Ok("") => DeviceKind::Cpu,
        Ok(name) => match name.parse::<DeviceKind>() {
            Ok(device) => device,
            Err(e) => return refuse(format!("{DEVICE_ENV}={name}: {e}")),
        },
    };
    let profile = match std::env::var(PROFILE_ENV).as_deref() {
        // Criterion takes at least 10 samples of a step: at the full sizes the CPU's slowest
        // steps (about a second) make `cargo bench` take over 15 minutes on 2 cores.
        Err(_) | Ok("") if test_mode || device == DeviceKind::Cpu => Profile::Quick,
        Err(_) | Ok("") | Ok("full") => Profile::Full,
        Ok("quick") => Profile::Quick,
        Ok(other) => {
            return refuse(format!(
                "{PROFILE_ENV}={other}: not a profile (full, quick)"
            ))
        }
    };
    let only = std::env::var(POINT_ENV).ok().filter(|s| !s.is_empty());
    let filter = Filter::from_args(&args)?;
    Ok(Options {
        device,
        profile,
        only,
        args,
        test_mode,
        filter,
    })
}

/// Criterion's positional filter (a regular expression, or an exact id with `--exact`), read
/// from the same arguments criterion reads, so that a filtered run does not build the points it
/// would skip.
enum Filter {
    All,
    Exact(String),
    Regex(regex::Regex),
}

impl Filter {
    fn from_args(args: &[String]) -> Result<Self> {
        // Criterion's options that take a value.
        const WITH_VALUE: [&str; 18] = [
            "-c",
            "--color",
            "-s",
            "--save-baseline",
            "-b",
            "--baseline",
            "--baseline-lenient",
            "--format",
            "--profile-time",
            "--load-baseline",
            "--sample-size",
            "--warm-up-time",
            "--measurement-time",
            "--nresamples",
            "--noise-threshold",
            "--confidence-level",
            "--significance-level",
            "--plotting-backend",
        ];
        let mut positional = None;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if WITH_VALUE.contains(&a.as_str()) || a == "--output-format" {
                i += 2;
                continue;
            }
            if !a.starts_with('-') && positional.is_none() {
                positional = Some(a.clone());
            }
            i += 1;
        }
        Ok(match positional {
            None => Filter::All,
            Some(f) if args.iter().any(|a| a == "--exact") => Filter::Exact(f),
            Some(f) => match regex::Regex::new(&f) {
                Ok(r) => Filter::Regex(r),
                Err(e) => {
                    // regex's message spans lines; one line here.
                    let why = e
                        .to_string()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ");
                    return refuse(format!("benchmark filter {f:?}: {why}"));
                }
            },
        })
    }

    fn matches(&self, id: &BenchId) -> bool {
        match self {
            Filter::All => true,
            Filter::Exact(f) => id.full() == *f,
            Filter::Regex(r) => r.is_match(&id.full()),
        }
    }
}

/// A benchmark's id, as criterion composes it: `group/function/parameter`.
#[derive(Clone)]
struct BenchId {
    /// The experiment.
    group: String,
    /// The point.
    function: String,
    /// `device-profile`.
    parameter: String,
}

impl BenchId {
    fn new(experiment: &dyn Experiment, point: &Point, options: &Options) -> Self {
        Self {
            group: experiment.id().to_string(),
            function: point.id.clone(),
            parameter: format!("{}-{}", options.device.name(), options.profile.name()),
        }
    }

    /// What criterion's filter is matched against.
    fn full(&self) -> String {
        format!("{}/{}/{}", self.group, self.function, self.parameter)
    }

    /// Where criterion keeps this benchmark's results (its ids here need no escaping).
    fn dir(&self, criterion_home: &Path) -> PathBuf {
        criterion_home
            .join(&self.group)
            .join(&self.function)
            .join(&self.parameter)
    }
}
