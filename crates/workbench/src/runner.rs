//! Runs experiments point by point, each point in a fresh child process, then times the
//! comparisons the technique states in pairs.
//!
//! The parent writes the point as JSON to the child's stdin (`workbench point`), the child prints
//! exactly one JSON [`PointResult`] on stdout and exits 0. Anything else (a crash, a timeout, an
//! allocation failure, unparseable output) is recorded as a failed point with the tail of the
//! child's stderr, and the run goes on.
//!
//! A comparison (baseline, technique and the baseline again as an A/A control) runs in one child
//! (`workbench compare`) that builds the three side by side and interleaves them, where the two
//! points store floats in the same type; otherwise (Burn sets the float type once per process)
//! the runner alternates point children itself, round by round.
//!
//! Every finished point and comparison is written to the run's [`Journal`] as it ends; with
//! `--resume` the journal's matching entries are kept instead of measured again. A point whose
//! estimated step peak exceeds the device's memory is recorded as out of memory without a
//! child ([`Runner::refuse_up_front`]).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use experiments::harness::profile::pair_settings;
use experiments::Experiment;
use results::timing::median;
use results::{
    round_order, Build, BuildPlan, Calibration, DeviceInfo, DeviceKind, ExperimentRecord,
    Interleaving, MeasuredPoint, Outcome, PairSettings, PairedComparison, PairedOutcome,
    PairedTiming, Point, PointResult, Profile, SCHEMA_VERSION,
};
use serde::{Deserialize, Serialize};

use crate::journal::{Journal, Lookup};
use crate::report::Report;

/// The signal that interrupted the run (SIGINT or SIGTERM), 0 while none has: set by the
/// handlers [`catch_interrupts`] installs, read by the child loop, which then stops its child.
static INTERRUPT: AtomicUsize = AtomicUsize::new(0);

/// Installs handlers for SIGINT (Ctrl-C) and SIGTERM that record the signal instead of ending
/// the process: the running child is stopped, no further point starts, and the caller keeps
/// what was measured ([`interrupted`]).
pub fn catch_interrupts() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for signal in [SIGINT, SIGTERM] {
        signal_hook::flag::register_usize(signal, &INTERRUPT, signal as usize)?;
    }
    Ok(())
}

/// The signal that interrupted the run, if one has.
pub fn interrupted() -> Option<i32> {
    match INTERRUPT.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal as i32),
    }
}

/// How many trailing lines of a failed child's stderr are kept.
const STDERR_TAIL_LINES: usize = 20;
/// How long to wait for a finished child's output pipes to close.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// Runs experiments in child processes of `exe`.
#[derive(Debug, Clone)]
pub struct Runner {
    /// The workbench binary to spawn (normally the current executable).
    pub exe: PathBuf,
    /// The device measured.
    pub device: DeviceKind,
    /// Point sizes.
    pub profile: Profile,
    /// A point still running after this is killed and recorded as failed.
    pub point_timeout: Duration,
    /// Whether the comparisons are timed: not on a software driver (lavapipe), whose times are
    /// the CPU's, not a GPU's.
    pub compare_times: bool,
    /// Where finished points and comparisons are journaled, and (with `--resume`) kept from.
    pub journal: Option<Arc<Journal>>,
    /// The device's memory, where its driver says: a point whose estimated step peak exceeds
    /// it is recorded as out of memory without being run.
    pub memory_bytes: Option<u64>,
}

impl Runner {
    /// Runs every point of `experiment` and its comparisons, telling `report` along the way.
    pub fn run(&self, experiment: &dyn Experiment, report: &dyn Report) -> ExperimentRecord {
        let points = experiment.points(self.profile, self.device);
        let provenance = crate::provenance::current();
        let started = Instant::now();
        report.experiment_started(experiment.id(), points.len());
        let planned = points.len();
        let mut measured: Vec<MeasuredPoint> = Vec::with_capacity(planned);
        for point in points {
            if interrupted().is_some() {
                break;
            }
            if let Some(journal) = &self.journal {
                if let Lookup::Kept { mut value, .. } = journal.point(experiment.id(), &point) {
                    // The journal keeps no label: the plan's point names it.
                    value.point = point;
                    report.point_kept(experiment.id(), &value);
                    measured.push(value);
                    continue;
                }
            }
            report.point_started(experiment.id(), &point);
            let outcome = self
                .refuse_up_front(experiment, &point)
                .unwrap_or_else(|| self.run_point(experiment.id(), &point));
            // A point whose child was stopped by the interruption is not kept.
            if interrupted().is_some() {
                break;
            }
            let point = MeasuredPoint { point, outcome };
            report.point_finished(experiment.id(), &point);
            if let Some(journal) = &self.journal {
                if let Err(e) = journal.save_point(experiment.id(), &point) {
                    eprintln!(
                        "warning: cannot journal {}/{} in {}: {e} (a resumed run measures it again)",
                        experiment.id(),
                        point.point.id,
                        journal.dir().display()
                    );
                }
            }
            measured.push(point);
        }
        let comparisons = if self.compare_times && interrupted().is_none() {
            self.run_comparisons(experiment, &measured, report)
        } else {
            Vec::new()
        };
        // Comparisons stopped half-way are not kept either.
        let incomplete = interrupted().map(|signal| {
            format!(
                "interrupted by {} after {} of {planned} points{}",
                signal_name(signal),
                measured.len(),
                if self.compare_times {
                    "; no comparison timed"
                } else {
                    ""
                }
            )
        });
        let comparisons = if incomplete.is_some() {
            Vec::new()
        } else {
            comparisons
        };
        let probe = measured
            .iter()
            .find_map(|p| p.result())
            .map(|r| r.probe.clone());
        ExperimentRecord {
            schema_version: SCHEMA_VERSION,
            experiment: experiment.id().into(),
            profile: self.profile,
            provenance,
            device: DeviceInfo {
                kind: self.device,
                backend: self.device.backend().into(),
                dtype: stored_float_types(experiment, &measured),
                probe,
                identity: None,
            },
            calibration: None,
            wall_s: started.elapsed().as_secs_f64(),
            points: measured,
            comparisons,
            criterion: Vec::new(),
            incomplete,
            resumed: self
                .journal
                .as_ref()
                .and_then(|j| j.resumed(experiment.id())),
        }
    }

    /// Measures the device's matmul rate and copy bandwidth in a child process (see
    /// `experiments::harness::calibration`); says why not where it fails.
    pub fn calibrate(&self) -> Result<Calibration, String> {
        self.child_json(&["calibrate"], &[], self.point_timeout)
    }

    /// Runs `workbench <args> --device D` with `input` on its stdin and reads the one JSON value
    /// it prints; otherwise says why, with the last line of its stderr.
    fn child_json<T: serde::de::DeserializeOwned>(
        &self,
        args: &[&str],
        input: &[u8],
        timeout: Duration,
    ) -> Result<T, String> {
        let mut command = Command::new(&self.exe);
        command.args(args).arg("--device").arg(self.device.name());
        let child = run_child(command, input, Some(timeout), false)
            .map_err(|e| format!("cannot start {}: {e}", self.exe.display()))?;
        child
            .json()
            .map_err(|why| format!("{why}: {}", tail(&child.stderr, 1)))
    }

    /// Times each comparison `experiment` states between its measured points.
    fn run_comparisons(
        &self,
        experiment: &dyn Experiment,
        measured: &[MeasuredPoint],
        report: &dyn Report,
    ) -> Vec<PairedComparison> {
        let find = |id: &str| measured.iter().find(|p| p.point.id == id);
        let step_s = |p: &MeasuredPoint| p.result().map_or(0.0, |r| r.step.median_s);
        experiment
            .comparisons(measured, self.device)
            .into_iter()
            .filter_map(|spec| {
                let (a, b) = (find(&spec.baseline)?, find(&spec.technique)?);
                let (baseline, technique) = (&a.point, &b.point);
                if let Some(journal) = &self.journal {
                    if let Lookup::Kept { value, .. } =
                        journal.comparison(experiment.id(), baseline, technique)
                    {
                        // Kept as measured, with the spec the experiment states now.
                        return Some(PairedComparison { spec, ..value });
                    }
                }
                report.comparison_started(experiment.id(), &spec);
                let interleaving =
                    if experiment.float_storage(baseline) == experiment.float_storage(technique) {
                        Interleaving::OneProcess
                    } else {
                        Interleaving::AlternatingProcesses
                    };
                let mut settings = pair_settings(self.profile, interleaving);
                if spec.supporting {
                    // One point of a chart: a quarter of the budget and half the builds.
                    settings.budget_s /= 4.0;
                    settings.min_builds = settings.min_builds.min(2);
                }
                if let Some(builds) = spec.min_builds {
                    settings.min_builds = builds;
                }
                let timed = match interleaving {
                    Interleaving::OneProcess | Interleaving::OneModel => {
                        self.compare_in_builds(experiment.id(), baseline, technique, &settings)
                    }
                    Interleaving::AlternatingProcesses => self.alternate_children(
                        experiment.id(),
                        baseline,
                        technique,
                        &settings,
                        step_s(a).max(step_s(b)),
                    ),
                };
                let comparison = PairedComparison {
                    baseline_label: baseline.label.clone(),
                    technique_label: technique.label.clone(),
                    spec,
                    outcome: match timed {
                        Ok(timing) => PairedOutcome::Measured {
                            timing: Box::new(timing),
                        },
                        Err(reason) => PairedOutcome::Failed { reason },
                    },
                };
                // A comparison the interruption stopped half-way is not journaled.
                if interrupted().is_some() {
                    return None;
                }
                report.comparison_finished(experiment.id(), &comparison);
                if let Some(journal) = &self.journal {
                    if let Err(e) =
                        journal.save_comparison(experiment.id(), baseline, technique, &comparison)
                    {
                        eprintln!(
                            "warning: cannot journal the comparison {} in {}: {e}",
                            comparison.spec.id,
                            journal.dir().display()
                        );
                    }
                }
                Some(comparison)
            })
            .collect()
    }

    /// Times a comparison in builds: one child process (`workbench compare`) per build, each
    /// building the three arms afresh and running half a cycle of rounds, until the stopping
    /// rule says stop. The first build sizes the blocks for the others.
    fn compare_in_builds(
        &self,
        experiment: &str,
        baseline: &Point,
        technique: &Point,
        settings: &PairSettings,
    ) -> Result<PairedTiming, String> {
        let mut steps_per_block = None;
        experiments::harness::paired::in_builds(
            settings,
            |build| {
                let input = serde_json::to_vec(&CompareRequest {
                    baseline: baseline.clone(),
                    technique: technique.clone(),
                    settings: *settings,
                    plan: BuildPlan {
                        build,
                        steps_per_block,
                    },
                })
                .expect("a comparison serialises");
                // Three arms to build and warm up, then half a cycle of rounds.
                let timeout = self.point_timeout + Duration::from_secs_f64(settings.budget_s);
                let b: Build =
                    self.child_json(&["compare", "--experiment", experiment], &input, timeout)?;
                steps_per_block = Some(b.steps_per_block);
                Ok(b)
            },
            || "the builds gave no interval".to_string(),
        )
    }

    /// Times a comparison by alternating point children (baseline, technique, baseline again),
    /// one block each per round in balanced order; a block is one child's timed steps (after
    /// the point's own warm-up), as many as the slower point's measured median needs to last
    /// `min_block_s`, at least 3 and at most the point's planned repeats, summarised by their
    /// median. The first round is a warm-up and is not counted.
    fn alternate_children(
        &self,
        experiment: &str,
        baseline: &Point,
        technique: &Point,
        settings: &PairSettings,
        slower_step_s: f64,
    ) -> Result<PairedTiming, String> {
        let steps = ((settings.min_block_s / slower_step_s.max(1e-9)).ceil() as usize).clamp(
            3.min(baseline.repeats),
            baseline.repeats.max(technique.repeats).max(3),
        );
        let block_of = |point: &Point| Point {
            repeats: steps,
            ..point.clone()
        };
        let (baseline_block, technique_block) = (block_of(baseline), block_of(technique));
        let arms = [&baseline_block, &technique_block, &baseline_block];
        let block = |point: &Point| -> Result<(f64, u64), String> {
            match self.run_point(experiment, point) {
                Outcome::Measured { result, .. } => {
                    Ok((median(&result.step.samples_s), result.samples_per_step))
                }
                other => Err(format!(
                    "{}: {}",
                    other.status(),
                    guide::words::outcome_reason(&other)
                )),
            }
        };
        let mut samples = [1_u64; 3];
        for &i in &round_order(0) {
            samples[i] = block(arms[i])?.1;
        }
        experiments::harness::paired::alternate(
            steps,
            samples[0],
            samples[1],
            settings,
            |i| block(arms[i]).map(|(time, _)| time),
            || "the rounds gave no interval".to_string(),
        )
    }

    /// Out of memory without running, where the estimator's step peak of `point` exceeds the
    /// device's memory: said up front rather than found by a crash.
    pub fn refuse_up_front(&self, experiment: &dyn Experiment, point: &Point) -> Option<Outcome> {
        let memory = self.memory_bytes?;
        let estimate = experiment.estimated_peak_bytes(point)?;
        (estimate > memory as f64).then(|| Outcome::OutOfMemory {
            reason: format!(
                "not run: the estimator puts its step peak at {}, more than the device's {}",
                results::format::bytes(estimate),
                results::format::bytes(memory as f64)
            ),
            requested_bytes: Some(estimate as u64),
            stderr_tail: String::new(),
        })
    }

    /// Runs one point in a child process.
    pub fn run_point(&self, experiment: &str, point: &Point) -> Outcome {
        let started = Instant::now();
        let failed = |reason: String, stderr: &str| Outcome::Failed {
            reason,
            stderr_tail: tail(stderr, STDERR_TAIL_LINES),
        };
        let mut command = Command::new(&self.exe);
        command
            .args(["point", "--experiment", experiment, "--device"])
            .arg(self.device.name());
        let input = serde_json::to_vec(point).expect("a point serialises");
        let child = match run_child(command, &input, Some(self.point_timeout), false) {
            Ok(child) => child,
            Err(e) => return failed(format!("cannot start {}: {e}", self.exe.display()), ""),
        };
        match child.json::<PointResult>() {
            Ok(result) => Outcome::Measured {
                result: Box::new(result),
                wall_s: started.elapsed().as_secs_f64(),
            },
            Err(reason) => classify_failure(&child, reason),
        }
    }
}

/// A signal's name (`SIGINT`), or its number.
pub fn signal_name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// The exit status of a point child whose device cannot run the point (a float type it lacks),
/// or that Burn itself refuses:
/// its last stderr line says why.
pub const UNSUPPORTED_EXIT: u8 = 3;

/// What a child that printed no result means: the device cannot run the point (it exited
/// [`UNSUPPORTED_EXIT`]); it ran out of memory (a host allocation failed, which Rust reports
/// as "memory allocation of N bytes failed" before it aborts, or the device's allocator said
/// out of memory); or it failed (anything else: a panic, a timeout, garbage output).
pub fn classify_failure(child: &ChildRun, reason: String) -> Outcome {
    let last_line = tail(&child.stderr, 1);
    if matches!(&child.status, Ok(s) if s.code() == Some(i32::from(UNSUPPORTED_EXIT))) {
        if let Some(lacks) = experiments::error::unsupported_lacks(&last_line) {
            return Outcome::Unsupported {
                lacks: lacks.to_string(),
            };
        }
        if let Some(what) = experiments::error::not_in_burn(&last_line) {
            return Outcome::NotInBurn {
                what: what.to_string(),
            };
        }
    }
    if let Some((line, requested_bytes)) = out_of_memory(&child.stderr) {
        return Outcome::OutOfMemory {
            reason: format!("{reason}: {line}"),
            requested_bytes,
            stderr_tail: tail(&child.stderr, STDERR_TAIL_LINES),
        };
    }
    Outcome::Failed {
        reason,
        stderr_tail: tail(&child.stderr, STDERR_TAIL_LINES),
    }
}

/// The line of `stderr` that says memory ran out, and the bytes asked for where it says them.
pub fn out_of_memory(stderr: &str) -> Option<(String, Option<u64>)> {
    // std's allocation error handler ("memory allocation of 123 bytes failed"), the counting
    // allocator under a `fit` budget ("out of memory: tried to allocate N bytes; M bytes in
    // use; budget B bytes"), a device allocator's error (which may say the bytes asked for).
    stderr.lines().map(str::trim).find_map(|line| {
        let lower = line.to_ascii_lowercase();
        let says = lower.starts_with("memory allocation of ")
            || [
                "out of memory",
                "outofmemory",
                "out_of_memory",
                "not enough memory",
            ]
            .iter()
            .any(|p| lower.contains(p));
        says.then(|| (line.to_string(), first_byte_count(line)))
    })
}

/// The first number in `line` followed by the word `bytes`.
fn first_byte_count(line: &str) -> Option<u64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.windows(2).find_map(|pair| {
        pair[1]
            .trim_end_matches([';', ',', '.', ')'])
            .eq_ignore_ascii_case("bytes")
            .then(|| pair[0].replace([',', '_'], "").parse().ok())
            .flatten()
    })
}

/// The allocator's settings in every measuring child (points, comparisons, benches), so that a
/// step costs the same in every process, whatever the process did before.
///
/// - `MALLOC_ARENA_MAX=1`: one glibc malloc arena for all threads. A comparison's three arms run
///   on threads of their own; with glibc's default of one arena per thread, the arm built first
///   ran 6 to 13% slower than two identical copies of itself (three copies of checkpointing's
///   depth 16, batch 64 point, three runs), an A/A difference of the allocator, not of the
///   technique. In one arena the copies agree (-1.3% [-4.2, 1.8] and -1.0% [-4.1, 2.3]).
/// - `MALLOC_MMAP_MAX_=0` and `MALLOC_TRIM_THRESHOLD_` 1 TiB: every block comes from the heap
///   and freed memory stays in it, as in a device's pool. Left to glibc's dynamic threshold, a
///   process's history decided whether an 8 MiB tensor was mapped and page-faulted afresh at
///   every step or reused from the heap: the same comparison (no-grad, batch 4096) gave 0% in
///   one full run (the autodiff arm at 457 ms a pass, its own point at 591 ms) and -19% in the
///   next (630 ms, its point 621 ms). A fixed 32 MiB threshold made that repeat, but still
///   mapped every larger tensor afresh: a GPT-2-small step (logits of 103 MB, a head of
///   154 MB) spent a quarter of its process's time in the kernel zeroing new pages (75 s for
///   the plain cell's process, 48 s without mapping; one run each). The probe counts the bytes
///   asked for, so no peak changes.
pub const MEASURING_ENV: [(&str, &str); 3] = [
    ("MALLOC_ARENA_MAX", "1"),
    ("MALLOC_MMAP_MAX_", "0"),
    ("MALLOC_TRIM_THRESHOLD_", "1099511627776"),
];

/// What the parent sends a `workbench compare` child on its stdin.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareRequest {
    /// The baseline point (A, and A' for the control).
    pub baseline: Point,
    /// The technique's point (B).
    pub technique: Point,
    /// How long and how precisely.
    pub settings: PairSettings,
    /// Which build this child runs.
    pub plan: BuildPlan,
}

/// What a child process did.
#[derive(Debug)]
pub struct ChildRun {
    /// Its exit status, or why there is none (killed at the timeout, not waited for).
    pub status: Result<ExitStatus, String>,
    /// What it wrote to stdout.
    pub stdout: String,
    /// What it wrote to stderr.
    pub stderr: String,
}

impl ChildRun {
    /// What the child printed on stdout, parsed as JSON where it exited 0; otherwise why not,
    /// in one line (its stderr is kept apart).
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        match &self.status {
            Err(reason) => Err(reason.clone()),
            Ok(status) if !status.success() => Err(describe_exit(*status)),
            Ok(_) => serde_json::from_str(self.stdout.trim())
                .map_err(|e| format!("the child printed no valid result: {e}")),
        }
    }
}

/// Runs `command` as a child with `input` on its stdin and the allocator settings of
/// [`MEASURING_ENV`], killing it after `timeout` if it has one, and collects its stdout and
/// stderr; with `echo`, they are also passed through to this
/// process's own as they come. The one way the workbench (one child per point) and the
/// criterion benches (one child per benchmark) start a measuring process.
pub fn run_child(
    mut command: Command,
    input: &[u8],
    timeout: Option<Duration>,
    echo: bool,
) -> std::io::Result<ChildRun> {
    let started = Instant::now();
    let mut child = command
        .envs(MEASURING_ENV)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that dies before reading shows up below through its exit status.
        let _ = stdin.write_all(input);
    }
    let stdout = read_in_background(
        child.stdout.take(),
        echo.then(|| Box::new(std::io::stdout()) as Echo),
    );
    let stderr = read_in_background(
        child.stderr.take(),
        echo.then(|| Box::new(std::io::stderr()) as Echo),
    );

    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if interrupted().is_some() => {
                let _ = child.kill();
                let _ = child.wait();
                break Err("interrupted".into());
            }
            Ok(None) if timeout.is_some_and(|t| started.elapsed() > t) => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!(
                    "timed out after {:.0} s and was killed",
                    timeout.unwrap_or_default().as_secs_f64()
                ));
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(format!("cannot wait for the child: {e}")),
        }
    };
    // A grandchild that outlives a killed child could hold the pipes open: wait a little for
    // the readers, not forever.
    Ok(ChildRun {
        status,
        stdout: stdout.recv_timeout(PIPE_GRACE).unwrap_or_default(),
        stderr: stderr.recv_timeout(PIPE_GRACE).unwrap_or_default(),
    })
}

/// Where a child's output is passed through to.
type Echo = Box<dyn Write + Send>;

fn read_in_background<R: Read + Send + 'static>(
    pipe: Option<R>,
    mut echo: Option<Echo>,
) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if let Some(out) = echo.as_mut() {
                            let _ = out.write_all(&chunk[..n]);
                            let _ = out.flush();
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                }
            }
        }
        let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    rx
}

/// An exit status in words (`the child was killed by signal 9`).
pub fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("the child was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("the child exited with status {code}"),
        None => "the child exited abnormally".into(),
    }
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The float types the points store tensors in: `f32`, or e.g. `f32, bf16, f16 (per point)`
/// where the points differ (mixed precision: each point's configuration names its own).
fn stored_float_types(experiment: &dyn Experiment, points: &[MeasuredPoint]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for p in points {
        let name = experiment.float_storage(&p.point).name();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [] => "f32".into(),
        [one] => (*one).into(),
        many => format!("{} (per point)", many.join(", ")),
    }
}
