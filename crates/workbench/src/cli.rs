//! The `workbench` command line: parse, dispatch, and turn errors into one line and an exit code
//! (2 for bad input, 1 for anything else).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use experiments::harness::backend::Backends;
use experiments::harness::driver::DriverError;
use experiments::{Experiment, ExperimentError};
use guide::HtmlRenderer;
use results::diff::SetDiff;
use results::{
    format, record, CapacityRecord, DeviceIdentity, DeviceKind, ExperimentRecord, Point, Profile,
};

use crate::error::{BadInput, Interrupted};
use crate::journal::{Journal, RunKey};
use crate::output::Staging;
use crate::report::{JsonExport, Progress, Report, Reports};
use crate::runner::{CompareRequest, Runner};

/// Measures what memory-saving techniques buy (peak memory) and cost (throughput) on Burn, and
/// writes the results as a static HTML guide.
#[derive(Debug, Parser)]
#[command(name = "workbench", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the experiments, in the guide's order.
    List,
    /// Run experiments (each point in its own process) and write the guide.
    Run {
        /// Experiment ids, or `all`.
        #[arg(required_unless_present = "from_record")]
        experiments: Vec<String>,
        /// Measure one point of a saved record again (with `--point`) and print it beside the
        /// stored one: the record holds its configuration, seed, device, versions and commit.
        #[arg(long, requires = "point", conflicts_with = "experiments")]
        from_record: Option<PathBuf>,
        /// The id of the point to measure again (with `--from-record`).
        #[arg(long, requires = "from_record")]
        point: Option<String>,
        /// Folder of the guide; replaced as a whole when the run ends.
        #[arg(long, default_value = "site")]
        out: PathBuf,
        /// Small sizes, for CI and first looks.
        #[arg(long)]
        quick: bool,
        /// Device to measure on.
        #[arg(long, default_value_t = DeviceKind::Cpu, value_parser = device_parser())]
        device: DeviceKind,
        /// Kill a point still running after this many seconds and record it as failed (1 s to
        /// a week).
        #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=604_800))]
        point_timeout_s: u64,
        /// Keep the points and comparisons an interrupted or killed run into the same `--out`
        /// journaled (`.<out>.journal/`), where their configuration, profile, device and
        /// workbench build match this run's; measure the rest. Failed points are measured again.
        #[arg(long)]
        resume: bool,
        /// A result set to compare this run's with (a folder of records: an earlier commit's
        /// `site/data`, another machine's): the guide adds its "Changes" page.
        #[arg(long)]
        baseline: Option<PathBuf>,
    },
    /// Rebuild the guide from saved records, running nothing.
    Render {
        /// Folder of `*.json` records (the `data/` folder of a guide; its subfolders hold device
        /// result sets). Repeat it to put result sets of several devices side by side.
        #[arg(long, required = true)]
        results: Vec<PathBuf>,
        /// Folder of the guide.
        #[arg(long)]
        out: PathBuf,
        /// Criterion's output folder (`target/criterion`, after `cargo bench`): its estimates of
        /// the same points are set beside the workbench's step times and kept in the records.
        #[arg(long)]
        criterion: Option<PathBuf>,
        /// A result set to compare these with (a folder of records): the guide adds its
        /// "Changes" page.
        #[arg(long)]
        baseline: Option<PathBuf>,
    },
    /// Compare two result sets point by point: the bytes at each phase's peak, exactly, the
    /// points added and removed, and both sets' provenance.
    Diff(crate::diff::DiffArgs),
    /// Name the device and show what its memory probe reads: in use, padding, reserved, live
    /// allocations, before and after one tensor lives and dies, and after the cache is released.
    MemorySummary {
        /// Device to inspect.
        #[arg(long, default_value_t = DeviceKind::Cpu, value_parser = device_parser())]
        device: DeviceKind,
        /// Size of the tensor allocated and dropped, in MiB (at least 1; at most what the
        /// device's memory holds).
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
        tensor_mib: u64,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Estimate a training step's bytes for a model (a preset or its shape) with every
    /// technique and combination, and which common cards hold it: the rules the experiments
    /// check, carried to the reader's model.
    Estimate(crate::estimate::EstimateArgs),
    /// Find the largest batch that trains under a memory budget, plainly and with each
    /// technique, by running it (on the CPU the budget is enforced by the counting allocator in
    /// each child), starting from the estimator's guess.
    Fit {
        /// What to fit.
        #[command(flatten)]
        args: crate::fit::FitArgs,
        /// Device to run on.
        #[arg(long, default_value_t = DeviceKind::Cpu, value_parser = device_parser())]
        device: DeviceKind,
    },
    /// Run one training step, read as JSON from stdin, under a budget (used by `fit`).
    #[command(hide = true)]
    FitPoint {
        /// The budget, in bytes.
        #[arg(long)]
        budget_bytes: u64,
        /// Device.
        #[arg(long, value_parser = device_parser())]
        device: DeviceKind,
    },
    /// Measure the device's matmul rate and copy bandwidth; print them as JSON (used by `run`).
    #[command(hide = true)]
    Calibrate {
        /// Device.
        #[arg(long, value_parser = device_parser())]
        device: DeviceKind,
    },
    /// Time two points against each other in pairs, read as JSON from stdin; print the
    /// timing as JSON (used by `run`).
    #[command(hide = true)]
    Compare {
        /// Experiment id.
        #[arg(long)]
        experiment: String,
        /// Device.
        #[arg(long, value_parser = device_parser())]
        device: DeviceKind,
    },
    /// Measure one point, read as JSON from stdin; print its result as JSON (used by `run`).
    #[command(hide = true)]
    Point {
        /// Experiment id.
        #[arg(long)]
        experiment: String,
        /// Device.
        #[arg(long, value_parser = device_parser())]
        device: DeviceKind,
    },
}

/// `--device`: the names [`DeviceKind`] parses, listed in the help and in clap's error for
/// any other.
fn device_parser() -> impl clap::builder::TypedValueParser<Value = DeviceKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(DeviceKind::ALL.map(DeviceKind::name))
        .map(|name| name.parse::<DeviceKind>().expect("a listed device parses"))
}

/// Refuses a device this binary cannot measure (backend not built in, no driver), before
/// anything runs; names the device otherwise.
fn check_device(device: DeviceKind) -> Result<DeviceIdentity, BadInput> {
    device.identify().map_err(|e| unavailable(device, e))
}

fn unavailable(device: DeviceKind, e: DriverError) -> BadInput {
    BadInput::DeviceUnavailable(format!("--device {}: {e}", device.name()))
}

/// An error of the experiments crate, as the CLI reports it: a device it cannot use is bad input
/// (the backend identifies the device before it touches it); anything else gets `context`.
fn experiment_error(device: DeviceKind, e: ExperimentError, context: String) -> anyhow::Error {
    match e {
        ExperimentError::Driver(e) => unavailable(device, e).into(),
        other => anyhow::Error::new(other).context(context),
    }
}

/// Parses the command line, runs it, and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let chain: Vec<String> = err.chain().map(|c| c.to_string()).collect();
            eprintln!("error: {}", chain.join(": "));
            if let Some(Interrupted { signal, .. }) = err.downcast_ref::<Interrupted>() {
                ExitCode::from((128 + signal) as u8)
            } else if err.chain().any(|c| c.downcast_ref::<BadInput>().is_some()) {
                ExitCode::from(2)
            } else if err.chain().any(|c| {
                matches!(
                    c.downcast_ref::<ExperimentError>(),
                    Some(ExperimentError::Unsupported { .. } | ExperimentError::NotInBurn { .. })
                )
            }) {
                // A point child whose device (or Burn) cannot run it: the runner records the
                // answer.
                ExitCode::from(crate::runner::UNSUPPORTED_EXIT)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Help and version as clap prints them; any other parse error as one line (clap's message
/// and its hints joined), exit 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let text = e.render().to_string();
    let line = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information") && *l != "Usage:")
        .filter(|l| !l.starts_with("Usage: "))
        .collect::<Vec<_>>()
        .join("; ");
    eprintln!("{line}");
    ExitCode::from(2)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::List => {
            for e in experiments::all() {
                println!(
                    "{:<16} {}",
                    e.id(),
                    guide::words::pages::page(e.technique()).title
                );
            }
            Ok(())
        }
        Command::Run {
            experiments: ids,
            from_record,
            point,
            out,
            quick,
            device,
            point_timeout_s,
            resume,
            baseline,
        } => {
            if let (Some(file), Some(point)) = (from_record, point) {
                return measure_again(&file, &point, Duration::from_secs(point_timeout_s));
            }
            let profile = if quick { Profile::Quick } else { Profile::Full };
            let runner = Runner {
                exe: std::env::current_exe().context("cannot locate the workbench binary")?,
                device,
                profile,
                point_timeout: Duration::from_secs(point_timeout_s),
                compare_times: true,
                journal: None,
                memory_bytes: None,
            };
            let with_capacity = ids.iter().any(|id| id == "all");
            // Read before anything is measured: a bad baseline costs no run.
            let baseline = Baseline::load(baseline)?;
            let site = SiteOptions {
                with_capacity,
                resume,
                baseline,
            };
            run_experiments(&select(&ids)?, &runner, &out, site)
        }
        Command::Render {
            results,
            out,
            criterion,
            baseline,
        } => {
            refuse_output_among(&out, &results)?;
            Staging::check(&out)?;
            let _lock = crate::output::RunLock::acquire(&out)?;
            crate::output::clean_stale_staging(&out);
            let mut records = record::load_dirs(&results).map_err(BadInput::from)?;
            let capacity = CapacityRecord::find(&results).map_err(BadInput::from)?;
            if let Some(dir) = criterion {
                attach_estimates(&mut records, &dir)?;
            }
            let baseline = Baseline::load(baseline)?;
            let staging = Staging::new(&out)?;
            write_site(&records, capacity.as_ref(), baseline.as_ref(), staging)?;
            println!(
                "wrote the guide to {} ({} experiments)",
                out.display(),
                records.len()
            );
            Ok(())
        }
        Command::Diff(args) => crate::diff::diff(&args),
        Command::Point { experiment, device } => measure_point(&experiment, device),
        Command::Compare { experiment, device } => compare_points(&experiment, device),
        Command::Calibrate { device } => {
            let calibration = experiments::harness::calibration::calibrate(device)
                .map_err(|e| experiment_error(device, e, "calibration".into()))?;
            println!("{}", serde_json::to_string(&calibration)?);
            Ok(())
        }
        Command::MemorySummary {
            device,
            tensor_mib,
            json,
        } => memory_summary(device, tensor_mib, json),
        Command::Estimate(args) if args.inference => crate::inference::run(&args),
        Command::Estimate(args) => crate::estimate::run(&args),
        Command::Fit { args, device } => {
            check_device(device)?;
            crate::fit::run(&args, device)
        }
        Command::FitPoint {
            budget_bytes,
            device,
        } => crate::fit::fit_point(device, budget_bytes, read_stdin("training step")?),
    }
}

/// Refuses an output folder that is a results folder being read, or inside one: replacing it
/// would delete the records the guide is made from. (The guide's own folder, which holds its
/// `data/`, is fine: the records are read before it is replaced, and written into the new one.)
fn refuse_output_among(out: &Path, results: &[PathBuf]) -> Result<(), BadInput> {
    // An output that does not exist yet: its parent resolved, its name joined, so that a
    // relative path is compared as the absolute one it names.
    let resolve = |p: &Path| -> PathBuf {
        if let Ok(resolved) = std::fs::canonicalize(p) {
            return resolved;
        }
        let absolute = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        match (absolute.parent(), absolute.file_name()) {
            (Some(parent), Some(name)) => std::fs::canonicalize(parent)
                .map(|c| c.join(name))
                .unwrap_or(absolute),
            _ => absolute,
        }
    };
    let out_path = resolve(out);
    for dir in results {
        let dir_path = resolve(dir);
        if out_path.starts_with(&dir_path) {
            return Err(BadInput::OutputAmongResults {
                out: out.to_path_buf(),
                results: dir.clone(),
            });
        }
    }
    Ok(())
}

/// Attaches criterion's estimates in `dir` to the records they match; says what matched nothing.
fn attach_estimates(records: &mut [ExperimentRecord], dir: &Path) -> Result<(), BadInput> {
    let sets = results::criterion::load(dir)?;
    let total = sets.len();
    let unmatched = ExperimentRecord::attach_estimates(records, sets);
    for set in &unmatched {
        eprintln!(
            "note: criterion's estimates of {} on {} at {} sizes match no record: left out",
            set.experiment,
            set.device.name(),
            set.profile.name()
        );
    }
    if unmatched.len() == total {
        return Err(BadInput::NoMatchingEstimates(dir.to_path_buf()));
    }
    println!(
        "criterion: estimates of {} experiments attached from {}",
        total - unmatched.len(),
        dir.display()
    );
    Ok(())
}

fn memory_summary(device: DeviceKind, tensor_mib: u64, json: bool) -> anyhow::Result<()> {
    let identity = check_device(device)?;
    let bytes = tensor_mib << 20;
    // Refused up front rather than crash: the device's memory where it says, else the host's
    // available memory (the CPU, and a software driver's "device").
    let room = identity
        .total_memory_bytes
        .filter(|_| !identity.software)
        .map(|b| (b, "the device's memory"))
        .or_else(|| host_available_bytes().map(|b| (b, "the host's available memory")));
    if let Some((room, what)) = room {
        if bytes > room {
            return Err(BadInput::TooLarge(format!(
                "--tensor-mib {tensor_mib}: {} does not fit in {what} ({}); give at most {}",
                format::bytes(bytes as f64),
                format::bytes(room as f64),
                room >> 20
            ))
            .into());
        }
    }
    let summary = experiments::harness::summary::summarise(device, bytes)
        .map_err(|e| experiment_error(device, e, format!("memory summary of {}", device.name())))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    let id = &summary.identity;
    let opt_bytes = |b: Option<u64>| b.map_or("n/a".into(), |b| format::bytes(b as f64));
    println!("device        {} ({})", id.name, device.backend());
    println!("driver        {}", id.driver.as_deref().unwrap_or("n/a"));
    println!("total memory  {}", opt_bytes(id.total_memory_bytes));
    println!(
        "free memory   {} (whole device, all processes)",
        opt_bytes(id.free_memory_bytes)
    );
    println!(
        "probe         {}: {}",
        summary.probe.kind,
        guide::probe::counts(&summary.probe)
    );
    println!();
    println!(
        "{:<44} {:>12} {:>12} {:>12} {:>12}",
        "moment", "in use", "padding", "reserved", "allocations"
    );
    for row in &summary.rows {
        let m = &row.memory;
        println!(
            "{:<44} {:>12} {:>12} {:>12} {:>12}",
            row.moment,
            format::bytes(m.in_use_bytes as f64),
            opt_bytes(m.padding_bytes),
            opt_bytes(m.reserved_bytes),
            m.live_allocations.map_or("n/a".into(), |n| n.to_string()),
        );
    }
    Ok(())
}

/// `run --from-record FILE --point ID`: measures the stored point again, as the record says
/// (configuration, repeats, device), in a fresh child, and prints both results side by side.
fn measure_again(file: &Path, id: &str, point_timeout: Duration) -> anyhow::Result<()> {
    let record = ExperimentRecord::load(file).map_err(BadInput::from)?;
    let stored = record
        .points
        .iter()
        .find(|p| p.point.id == id)
        .ok_or_else(|| {
            BadInput::BadModel(format!(
                "--point {id}: {} has no such point (its points: {})",
                file.display(),
                record
                    .points
                    .iter()
                    .map(|p| p.point.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    experiment(&record.experiment)?;
    let device = record.device.kind;
    check_device(device)?;
    let runner = Runner {
        exe: std::env::current_exe().context("cannot locate the workbench binary")?,
        device,
        profile: record.profile,
        point_timeout,
        compare_times: false,
        journal: None,
        memory_bytes: None,
    };
    let now = crate::provenance::current();
    let p = &record.provenance;
    println!(
        "{} / {} on {} ({} profile)",
        record.experiment,
        stored.point.id,
        device.name(),
        record.profile.name()
    );
    println!(
        "stored: commit {}, Burn {}, {} ({} cores), {}{}",
        p.git_commit,
        p.burn_version,
        p.cpu_model,
        p.cpu_cores,
        p.started_at,
        p.command_line
            .as_deref()
            .map_or(String::new(), |c| format!(", `{c}`"))
    );
    println!(
        "now:    commit {}, Burn {}, {} ({} cores)",
        now.git_commit, now.burn_version, now.cpu_model, now.cpu_cores
    );
    let again = runner.run_point(&record.experiment, &stored.point);
    println!();
    let rows = compare_outcomes(&stored.outcome, &again);
    println!(
        "{:<36} {:>18} {:>18} {:>10}",
        "figure", "stored", "again", "change"
    );
    for (name, a, b) in rows {
        // Two times taken minutes apart are not a comparison: no change is printed for them.
        let change = if !name.ends_with("(s)") && a != 0.0 && a.is_finite() && b.is_finite() {
            format::pct((b - a) / a * 100.0)
        } else {
            String::new()
        };
        println!("{name:<36} {:>18} {:>18} {change:>10}", num(a), num(b));
    }
    println!(
        "(times: one run each, minutes apart, not a comparison; bytes on the CPU repeat within \
         the autodiff graph's bookkeeping)"
    );
    if !again.is_failure() && again.result().is_none() {
        println!(
            "again: {}: {}",
            again.status(),
            guide::words::outcome_reason(&again)
        );
    }
    if let results::Outcome::Failed { reason, .. } = &again {
        bail!("measuring {id} again failed: {reason}");
    }
    Ok(())
}

/// A figure for the side-by-side table: bytes and times as they are measured.
fn num(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.6}")
    }
}

/// The figures of two outcomes of one point, row by row: the step's peak and time, each
/// phase's peak, every metric either has, and the checks passed.
fn compare_outcomes(a: &results::Outcome, b: &results::Outcome) -> Vec<(String, f64, f64)> {
    let (ra, rb) = (a.result(), b.result());
    let get = |r: Option<&results::PointResult>, f: &dyn Fn(&results::PointResult) -> f64| {
        r.map_or(f64::NAN, f)
    };
    let mut rows = vec![
        (
            "step peak (bytes)".to_string(),
            get(ra, &|r| r.peak_bytes() as f64),
            get(rb, &|r| r.peak_bytes() as f64),
        ),
        (
            "step median (s)".to_string(),
            get(ra, &|r| r.step.median_s),
            get(rb, &|r| r.step.median_s),
        ),
    ];
    let phases: Vec<String> = ra
        .into_iter()
        .chain(rb)
        .flat_map(|r| r.phases.iter().map(|p| p.phase.to_string()))
        .fold(Vec::new(), |mut v, p| {
            if !v.contains(&p) {
                v.push(p);
            }
            v
        });
    for phase in phases {
        let peak = |r: &results::PointResult| {
            r.phase_named(&phase)
                .map_or(f64::NAN, |p| p.peak_bytes as f64)
        };
        rows.push((
            format!("{phase} peak (bytes)"),
            get(ra, &peak),
            get(rb, &peak),
        ));
    }
    let metrics: std::collections::BTreeSet<&str> = ra
        .into_iter()
        .chain(rb)
        .flat_map(|r| r.metrics.keys().map(String::as_str))
        .collect();
    let value = |r: &results::PointResult, m: &str| r.metrics.get(m).copied().unwrap_or(f64::NAN);
    for m in metrics {
        rows.push((
            m.to_string(),
            get(ra, &|r| value(r, m)),
            get(rb, &|r| value(r, m)),
        ));
    }
    let passed = |r: &results::PointResult| r.checks.iter().filter(|c| c.passed).count() as f64;
    rows.push(("checks passed".into(), get(ra, &passed), get(rb, &passed)));
    rows
}

/// The host's available memory (`MemAvailable` in /proc/meminfo), where the system says.
fn host_available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The experiments named on the command line, in the guide's order.
fn select(ids: &[String]) -> Result<Vec<&'static dyn Experiment>, BadInput> {
    if ids.iter().any(|id| id == "all") {
        return Ok(experiments::all());
    }
    for id in ids {
        experiment(id)?;
    }
    Ok(experiments::all()
        .into_iter()
        .filter(|e| ids.iter().any(|id| id == e.id()))
        .collect())
}

/// A result set the guide is compared with: its folder and records.
struct Baseline {
    dir: PathBuf,
    records: Vec<ExperimentRecord>,
}

impl Baseline {
    /// The records of `dir`, where one is given; bad input where it holds none.
    fn load(dir: Option<PathBuf>) -> Result<Option<Self>, BadInput> {
        let Some(dir) = dir else { return Ok(None) };
        let records = crate::diff::load_set(&dir)?;
        Ok(Some(Self { dir, records }))
    }
}

/// What a run writes beside its records.
struct SiteOptions {
    /// "What fits" (a run of every experiment).
    with_capacity: bool,
    /// Keep what a killed run journaled.
    resume: bool,
    /// The "Changes" page's baseline.
    baseline: Option<Baseline>,
}

fn run_experiments(
    selected: &[&'static dyn Experiment],
    runner: &Runner,
    out: &Path,
    site: SiteOptions,
) -> anyhow::Result<()> {
    let SiteOptions {
        with_capacity,
        resume,
        baseline,
    } = site;
    let identity = check_device(runner.device)?;
    if identity.software {
        println!(
            "{}: a software driver; its memory is measured, its times are not compared",
            identity.name
        );
    }
    // Nothing touches the disk before the output folder is known to be replaceable.
    Staging::check(out)?;
    let _lock = crate::output::RunLock::acquire(out)?;
    crate::output::clean_stale_staging(out);
    let provenance = crate::provenance::current();
    let key = RunKey {
        device: runner.device,
        device_name: identity.name.clone(),
        profile: runner.profile,
        workbench_version: provenance.workbench_version.clone(),
        git_commit: provenance.git_commit.clone(),
        build_profile: provenance.build_profile.clone(),
        binary_hash: crate::journal::file_hash(&runner.exe),
    };
    let (journal, note) =
        Journal::open(out, key, provenance.started_at.clone(), resume).map_err(|e| {
            BadInput::OutputNotWritable {
                path: out.to_path_buf(),
                reason: format!("cannot open the run's journal: {e}"),
            }
        })?;
    if let Some(note) = note {
        println!("{note}");
    }
    let journal = std::sync::Arc::new(journal);
    let runner = &Runner {
        compare_times: runner.compare_times && !identity.software,
        journal: Some(journal.clone()),
        memory_bytes: identity.total_memory_bytes,
        ..runner.clone()
    };
    let kept = journal.calibration();
    let journaled = kept.is_some();
    let calibration = kept.map_or_else(|| runner.calibrate(), Ok);
    match &calibration {
        Ok(c) => {
            println!(
                "calibration: f32 matmul {}^3 at {:.1} GFLOP/s, element-wise add at {:.1} GB/s{}",
                c.matmul_n,
                c.matmul_gflop_s,
                c.copy_gb_s,
                if journaled {
                    " (kept from the journal)"
                } else {
                    ""
                }
            );
            if !journaled {
                if let Err(e) = journal.save_calibration(c) {
                    eprintln!("warning: cannot journal the calibration: {e}");
                }
            }
        }
        Err(why) => eprintln!("note: no calibration in the records: {why}"),
    }
    let calibration = calibration.ok();
    let staging = Staging::new(out)?;
    let data_dir = staging.path().join("data");
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let total: usize = selected
        .iter()
        .map(|e| e.points(runner.profile, runner.device).len())
        .sum();
    let progress = std::sync::Arc::new(Progress::new(total));
    let reports = Reports(vec![
        Box::new(progress.clone()),
        Box::new(JsonExport {
            dir: data_dir.clone(),
        }),
    ]);
    crate::runner::catch_interrupts().context("cannot install the SIGINT and SIGTERM handlers")?;
    let mut records = Vec::new();
    for experiment in selected {
        if crate::runner::interrupted().is_some() {
            break;
        }
        let mut record = runner.run(*experiment, &reports);
        record.device.identity = Some(identity.clone());
        record.calibration = calibration.clone();
        if let Err(e) = reports.experiment_finished(&record) {
            let kept = staging.abandon();
            bail!(
                "cannot save the record of {}: {e} (records so far kept in {})",
                record.experiment,
                kept.display()
            );
        }
        records.push(record);
    }
    let failures = progress.finish();
    let capacity = if with_capacity && crate::runner::interrupted().is_none() {
        let kept = journal.capacity();
        let journaled = kept.is_some();
        let record = kept.unwrap_or_else(|| {
            crate::fit::capacity_record(&runner.exe, runner.device, runner.profile)
        });
        // A search the interruption stopped half-way is neither journaled nor written.
        if crate::runner::interrupted().is_some() {
            None
        } else {
            if !journaled {
                if let Err(e) = journal.save_capacity(&record) {
                    eprintln!("warning: cannot journal the capacity search: {e}");
                }
            }
            let path = data_dir.join(results::CAPACITY_FILE);
            crate::output::write_atomic(&path, record.to_json().as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Some(record)
        }
    } else {
        None
    };
    write_site(&records, capacity.as_ref(), baseline.as_ref(), staging)?;
    if let Some(signal) = crate::runner::interrupted() {
        let kept: usize = records.iter().map(|r| r.points.len()).sum();
        let missing: Vec<&str> = selected
            .iter()
            .map(|e| e.id())
            .filter(|id| !records.iter().any(|r| r.experiment == *id))
            .collect();
        return Err(Interrupted {
            signal,
            message: format!(
                "interrupted by {}: {kept} finished point(s) of {total} kept and rendered into \
                 {} (incomplete: {}{}); run the same command with --resume to keep them and \
                 measure the rest",
                crate::runner::signal_name(signal),
                out.display(),
                records
                    .iter()
                    .filter(|r| r.incomplete.is_some())
                    .map(|r| r.experiment.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                if missing.is_empty() {
                    String::new()
                } else {
                    format!("; not started: {}", missing.join(", "))
                }
            ),
        }
        .into());
    }
    println!(
        "wrote the guide to {} ({} experiments, device {})",
        out.display(),
        records.len(),
        runner.device.name()
    );
    if !failures.is_empty() {
        bail!(
            "{} point(s) failed; the guide shows their errors: {} (the same command with \
             --resume measures only those again)",
            failures.len(),
            failures.join("; ")
        );
    }
    // Complete: nothing is left to resume.
    if let Err(e) = journal.remove() {
        eprintln!(
            "warning: cannot remove the finished run's journal {}: {e}",
            journal.dir().display()
        );
    }
    Ok(())
}

/// Analyses `records`, renders them into the staging folder and moves it into place; on error
/// keeps nothing half-written at the target.
fn write_site(
    records: &[ExperimentRecord],
    capacity: Option<&CapacityRecord>,
    baseline: Option<&Baseline>,
    staging: Staging,
) -> anyhow::Result<()> {
    let analysed = crate::analyse::analyse_all(records.to_vec())?;
    let capacity = capacity.cloned().map(crate::analyse::analyse_capacity);
    let diff = baseline.map(|b| {
        // As the reader named the guide's folder: `site/data` for `--out site`.
        let new_dir = staging.target().join("data");
        SetDiff::of(
            &b.dir.display().to_string(),
            &b.records,
            &new_dir.display().to_string(),
            records,
        )
    });
    let rendered =
        HtmlRenderer.render_against(&analysed, capacity.as_ref(), diff.as_ref(), staging.path());
    if let Err(e) = rendered {
        let kept = staging.abandon();
        return Err(anyhow::Error::new(e).context(format!(
            "cannot render the guide (partial output kept in {})",
            kept.display()
        )));
    }
    let target = staging
        .commit()
        .context("cannot move the finished guide into place")?;
    debug_assert!(target.join("index.html").exists());
    Ok(())
}

/// The experiment `id`, or bad input naming the known ones.
fn experiment(id: &str) -> Result<&'static dyn Experiment, BadInput> {
    experiments::find(id).ok_or_else(|| BadInput::UnknownExperiment {
        id: id.into(),
        known: crate::analyse::known_ids(),
    })
}

/// What the parent wrote on stdin, parsed as JSON (`what` names it in errors).
fn read_stdin<T: serde::de::DeserializeOwned>(what: &str) -> anyhow::Result<T> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .with_context(|| format!("cannot read the {what} from stdin"))?;
    serde_json::from_str(&input).with_context(|| format!("the {what} on stdin is not valid JSON"))
}

/// The child side of the comparison protocol.
fn compare_points(id: &str, device: DeviceKind) -> anyhow::Result<()> {
    let experiment = experiment(id)?;
    let request: CompareRequest = read_stdin("comparison")?;
    let timing = experiment
        .time_pair(
            &request.baseline,
            &request.technique,
            &request.settings,
            request.plan,
            device,
        )
        .map_err(|e| {
            experiment_error(
                device,
                e,
                format!(
                    "{id}: {} against {}",
                    request.technique.id, request.baseline.id
                ),
            )
        })?;
    println!("{}", serde_json::to_string(&timing)?);
    Ok(())
}

/// The child side of the point protocol.
fn measure_point(id: &str, device: DeviceKind) -> anyhow::Result<()> {
    let experiment = experiment(id)?;
    let point: Point = read_stdin("point")?;
    let result = experiment
        .run_point(&point, device)
        .map_err(|e| experiment_error(device, e, format!("{}: {}", id, point.id)))?;
    println!("{}", serde_json::to_string(&result)?);
    Ok(())
}
