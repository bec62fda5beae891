//! Timing two points against each other in one process, one build of a paired comparison:
//! baseline, technique and a second baseline (the A/A control), each built by its own point
//! code on a thread of its own (in an order that turns with the build's number), taking turns
//! one block of steps at a time for half a cycle of orders.
//!
//! Each arm runs its point as the runner would (same set-up, same warm-up, same step), with a
//! [`StepTimer`] installed that, once the point offers its prepared step, serves requests for a
//! number of steps until told to finish. Only one arm runs at a time (the others wait on a
//! channel), so the timed step is exactly the point's and nothing else competes for the cores. The
//! rounds' order and their statistics are `results::paired`'s; the loops that sample them
//! against the clock ([`alternate`] across child processes, [`in_builds`] across builds) are
//! here, beside the one build's. Where the technique is one a model switches on and off between
//! its steps (the allocation recorder), [`time_one_model`] runs the same rounds on one model
//! taking the three arms' turns: one set-up instead of three.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use results::{
    build_rounds, count_builds, round_order, run_round, Build, BuildPlan, Interleaving,
    PairSettings, PairedTiming, PointResult,
};

use crate::error::ExperimentError;
use crate::harness::timing::{with_step_timer, StepTimer};

/// Runs counted rounds where each block is a child process of its own (so each round is a
/// build), and summarises them. `block(i)` runs arm `i` (0: baseline, 1: technique, 2:
/// control) for one block and returns its time per step; round `r` (1, 2, ...) runs the
/// arms in [`round_order`]`(r)`, round 0 being the caller's warm-up. Rounds go on until
/// [`PairedTiming::stop`] says stop; `failed` turns a set of rounds that gives no interval (a
/// non-finite time) into the caller's error.
#[allow(clippy::too_many_arguments)]
pub fn alternate<E>(
    steps_per_block: usize,
    baseline_samples_per_step: u64,
    technique_samples_per_step: u64,
    settings: &PairSettings,
    mut block: impl FnMut(usize) -> Result<f64, E>,
    failed: impl FnOnce() -> E,
) -> Result<PairedTiming, E> {
    let interleaving = Interleaving::AlternatingProcesses;
    let started = Instant::now();
    let mut rounds = Vec::new();
    let stop = loop {
        let r = rounds.len() + 1;
        rounds.push(run_round(r, r - 1, &mut block)?);
        if let Some(stop) = PairedTiming::stop(
            interleaving,
            &rounds,
            baseline_samples_per_step,
            technique_samples_per_step,
            settings,
            started.elapsed().as_secs_f64(),
        ) {
            break stop;
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    PairedTiming::summarise(
        interleaving,
        steps_per_block,
        baseline_samples_per_step,
        technique_samples_per_step,
        rounds,
        stop,
        *settings,
        elapsed,
        elapsed,
    )
    .ok_or_else(failed)
}

/// Runs builds one after another (`build(k)` builds the arms afresh, in their own process,
/// and runs their rounds), and summarises them, until [`PairedTiming::stop`] says stop.
pub fn in_builds<E>(
    settings: &PairSettings,
    mut build: impl FnMut(usize) -> Result<Build, E>,
    failed: impl FnOnce() -> E,
) -> Result<PairedTiming, E> {
    let started = Instant::now();
    let mut rounds = Vec::new();
    let mut rounds_s = 0.0;
    let mut first: Option<Build> = None;
    let mut interleaving = Interleaving::OneProcess;
    let stop = loop {
        let b = build(count_builds(&rounds))?;
        rounds.extend(b.rounds.iter().copied());
        rounds_s += b.rounds_s;
        let f = first.get_or_insert(b);
        if f.one_model {
            interleaving = Interleaving::OneModel;
        }
        if let Some(stop) = PairedTiming::stop(
            interleaving,
            &rounds,
            f.baseline_samples_per_step,
            f.technique_samples_per_step,
            settings,
            started.elapsed().as_secs_f64(),
        ) {
            break stop;
        }
    };
    let Some(f) = first else {
        return Err(failed());
    };
    PairedTiming::summarise(
        interleaving,
        f.steps_per_block,
        f.baseline_samples_per_step,
        f.technique_samples_per_step,
        rounds,
        stop,
        *settings,
        rounds_s,
        started.elapsed().as_secs_f64(),
    )
    .ok_or_else(failed)
}

/// Runs one arm's point to the end, its step offered to the timer installed on its thread.
pub type ArmRun<'a> = Box<dyn FnOnce() -> Result<PointResult, ExperimentError> + Send + 'a>;

/// A request to an arm.
enum Command {
    /// Run this many steps and send their times.
    Run(usize),
}

/// An arm's answer.
enum Reply {
    /// The step is prepared; one step processes this many samples.
    Ready(u64),
    /// The times of the steps asked for.
    Times(Vec<Duration>),
}

/// The timer installed on an arm's thread: serves requests until the coordinator hangs up.
struct Serve {
    commands: Receiver<Command>,
    replies: Sender<Reply>,
}

impl StepTimer for Serve {
    fn time(&mut self, samples_per_step: u64, step: &mut dyn FnMut() -> Duration) {
        if self.replies.send(Reply::Ready(samples_per_step)).is_err() {
            arm_done();
        }
        while let Ok(Command::Run(n)) = self.commands.recv() {
            let times = (0..n).map(|_| step()).collect();
            if self.replies.send(Reply::Times(times)).is_err() {
                arm_done();
            }
        }
        arm_done();
    }
}

/// What an arm unwinds with once the coordinator has hung up.
struct ArmDone;

/// Ends an arm's point where the coordinator hung up: the rest of it (its own repeats, its
/// checks, which its own run already recorded) would be thrown away, and in a full run it is
/// as long as the rounds. `resume_unwind` runs no panic hook, so nothing is printed.
fn arm_done() -> ! {
    std::panic::resume_unwind(Box::new(ArmDone))
}

/// The coordinator's end of one arm.
struct Arm {
    commands: Sender<Command>,
    replies: Receiver<Reply>,
    samples_per_step: u64,
}

impl Arm {
    /// Mean time per step of a block of `steps`, in seconds; `None` where the arm has died.
    fn block(&self, steps: usize) -> Option<f64> {
        self.commands.send(Command::Run(steps)).ok()?;
        match self.replies.recv().ok()? {
            Reply::Times(times) => {
                Some(times.iter().map(Duration::as_secs_f64).sum::<f64>() / times.len() as f64)
            }
            Reply::Ready(_) => None,
        }
    }
}

/// Runs build `plan` of `arms` (baseline, technique, control): `settings.rounds_per_build`
/// rounds (at least one); `min_warmup` is how long each arm's blocks run before rounds count
/// (on device backends at least a second; one step each on the CPU, after the point's own
/// warm-up).
pub fn time_in_one_process(
    arms: [ArmRun<'_>; 3],
    settings: &PairSettings,
    plan: BuildPlan,
    min_warmup: Duration,
) -> Result<Build, ExperimentError> {
    thread::scope(|scope| {
        let mut started: Vec<(usize, Arm)> = Vec::new();
        let mut handles = Vec::new();
        // Built one after another, so that no arm's set-up competes with another's, in an
        // order that turns with the build (the arm built first may land differently).
        let mut arms = arms.map(Some);
        for i in round_order(plan.build) {
            let run = arms[i].take().expect("each arm is built once");
            let (command_tx, command_rx) = channel();
            let (reply_tx, reply_rx) = channel();
            let timer = Serve {
                commands: command_rx,
                replies: reply_tx,
            };
            let handle = scope.spawn(move || with_step_timer(Box::new(timer), run));
            let ready = reply_rx.recv();
            handles.push(handle);
            match ready {
                Ok(Reply::Ready(samples_per_step)) => started.push((
                    i,
                    Arm {
                        commands: command_tx,
                        replies: reply_rx,
                        samples_per_step,
                    },
                )),
                _ => {
                    // The point ended without offering its step: its error says why.
                    drop(started);
                    let why = handles
                        .pop()
                        .and_then(|h| h.join().ok())
                        .and_then(|r| r.err())
                        .map_or_else(
                            || "the point ended without offering its step".to_string(),
                            |e| e.to_string(),
                        );
                    // The arms already built end on the hang-up; joined here, so that their
                    // unwinding is not taken for a failure of the scope.
                    for handle in handles {
                        let _ = handle.join();
                    }
                    return Err(ExperimentError::Paired(why));
                }
            }
        }
        started.sort_by_key(|(i, _)| *i);
        let started: Vec<Arm> = started.into_iter().map(|(_, arm)| arm).collect();
        let samples = [started[0].samples_per_step, started[1].samples_per_step];
        let result = rounds(
            |i, steps| started[i].block(steps),
            samples,
            settings,
            plan,
            min_warmup,
        );
        // Hanging up ends each arm ([`arm_done`]).
        drop(started);
        for handle in handles {
            match handle.join() {
                Err(payload) if payload.is::<ArmDone>() => {}
                Ok(Err(e)) => {
                    return Err(ExperimentError::Paired(format!(
                        "an arm failed after timing: {e}"
                    )))
                }
                Err(_) => {
                    return Err(ExperimentError::Paired(
                        "an arm panicked after timing".into(),
                    ))
                }
                Ok(Ok(_)) => {}
            }
        }
        result
    })
}

/// One build of a technique that one model switches on and off between its steps (the
/// allocation recorder): the three arms are that model taking turns, `block(i, steps)` running
/// `steps` of arm `i`'s steps and giving their mean time per step (`None` where the model
/// failed), each step `samples_per_step` samples. The rounds are [`time_in_one_process`]'s; a
/// build pays for one set-up instead of three, and no arm is built before another.
pub fn time_one_model(
    block: impl FnMut(usize, usize) -> Option<f64>,
    samples_per_step: u64,
    settings: &PairSettings,
    plan: BuildPlan,
    min_warmup: Duration,
) -> Result<Build, ExperimentError> {
    let build = rounds(block, [samples_per_step; 2], settings, plan, min_warmup)?;
    Ok(Build {
        one_model: true,
        ..build
    })
}

/// The rounds themselves: `block(i, steps)` runs a block of `steps` of arm `i` and gives its
/// mean time per step; `samples` is what one step of the baseline and of the technique process.
fn rounds(
    mut block: impl FnMut(usize, usize) -> Option<f64>,
    samples: [u64; 2],
    settings: &PairSettings,
    plan: BuildPlan,
    min_warmup: Duration,
) -> Result<Build, ExperimentError> {
    let died = || ExperimentError::Paired("an arm stopped answering".into());
    // Round 0, the warm-up, also sizes the blocks where the plan does not: one step of each
    // arm, then blocks of the steps the fastest arm needs to last `min_block_s` on the wall
    // clock (a step's set-up outside its timed region, a fresh input, counts: it is what the
    // budget pays for).
    let mut fastest = f64::INFINITY;
    for i in 0..3 {
        let wall = Instant::now();
        let timed = block(i, 1).ok_or_else(died)?;
        fastest = fastest.min(timed.max(wall.elapsed().as_secs_f64()));
    }
    let steps = plan.steps_per_block.unwrap_or_else(|| {
        ((settings.min_block_s / fastest.max(1e-9)).ceil() as usize).clamp(1, 100_000)
    });
    // Then, where a block is more than the one step each arm has run, or the device asks for
    // more, whole warm-up rounds: an arm's first block of many steps would otherwise be
    // counted, in whichever arm opens the build.
    let orders = build_rounds(plan.build, settings.rounds_per_build);
    let warm = Instant::now();
    if steps > 1 || !min_warmup.is_zero() {
        loop {
            for &i in &round_order(orders[orders.len() - 1]) {
                block(i, steps).ok_or_else(died)?;
            }
            if warm.elapsed() >= min_warmup {
                break;
            }
        }
    }

    let started = Instant::now();
    let rounds = orders
        .into_iter()
        .map(|r| run_round(r, plan.build, |i| block(i, steps).ok_or_else(died)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Build {
        steps_per_block: steps,
        baseline_samples_per_step: samples[0],
        technique_samples_per_step: samples[1],
        rounds,
        rounds_s: started.elapsed().as_secs_f64(),
        one_model: false,
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use results::{Interleaving, PairedTiming, PointResult, ProbeInfo, Stop, HALF_CYCLE};

    use super::*;
    use crate::harness::timing::repeat_timed;

    /// An arm whose step "takes" `step_s` seconds, give or take a small alternating noise, and
    /// processes `samples` samples; it reports the time instead of spending it.
    fn arm(step_s: f64, samples: u64) -> ArmRun<'static> {
        Box::new(move || {
            let n = Cell::new(0_u32);
            let timing = repeat_timed(1, samples, || {
                n.set(n.get() + 1);
                let noise = if n.get().is_multiple_of(2) {
                    1.01
                } else {
                    0.99
                };
                Duration::from_secs_f64(step_s * noise)
            });
            let probe = ProbeInfo::of("none");
            Ok(PointResult::new(probe, Vec::new(), timing, samples))
        })
    }

    fn settings() -> PairSettings {
        PairSettings {
            min_rounds: 6,
            target_half_width_pct: 1.0,
            budget_s: 5.0,
            min_block_s: 0.0,
            min_builds: 4,
            rounds_per_build: HALF_CYCLE,
        }
    }

    /// Builds of `arms` (made afresh for each build) until the stopping rule says stop.
    fn time(arms: impl Fn() -> [ArmRun<'static>; 3]) -> Result<PairedTiming, ExperimentError> {
        let mut steps = None;
        in_builds(
            &settings(),
            |build| {
                let plan = BuildPlan {
                    build,
                    steps_per_block: steps,
                };
                let b = time_in_one_process(arms(), &settings(), plan, Duration::ZERO)?;
                steps = Some(b.steps_per_block);
                Ok(b)
            },
            || ExperimentError::Paired("no interval".into()),
        )
    }

    #[test]
    fn a_slower_technique_is_resolved_and_the_control_is_not() {
        let t = time(|| [arm(0.001, 8), arm(0.0012, 8), arm(0.001, 8)]).unwrap();
        assert_eq!(t.interleaving, Interleaving::OneProcess);
        assert_eq!(t.stop, Stop::Converged);
        assert_eq!(t.builds, 4);
        assert_eq!(t.rounds.len(), 4 * HALF_CYCLE);
        assert!(t.rounds.iter().enumerate().all(|(i, r)| r.build == i / 3));
        assert!(t.cost.resolved(), "{:?}", t.cost);
        assert!((t.cost.estimate_pct - 20.0).abs() < 1.0, "{:?}", t.cost);
        assert!(!t.control.resolved(), "{:?}", t.control);
    }

    #[test]
    fn one_model_taking_turns_is_timed_in_builds_and_recorded_so() {
        // Arm 1's steps "take" 20% longer; the model's steps alternate noise as one arm's do.
        let mut steps_per_block = None;
        let t = in_builds(
            &settings(),
            |build| {
                let plan = BuildPlan {
                    build,
                    steps_per_block,
                };
                // Each arm's steps alternate their noise, as the threaded arms' do.
                let n = [Cell::new(0_u32), Cell::new(0_u32), Cell::new(0_u32)];
                let block = |arm: usize, _steps: usize| {
                    n[arm].set(n[arm].get() + 1);
                    let noise = if n[arm].get().is_multiple_of(2) {
                        1.01
                    } else {
                        0.99
                    };
                    Some(if arm == 1 { 0.0012 } else { 0.001 } * noise)
                };
                let b = time_one_model(block, 8, &settings(), plan, Duration::ZERO)?;
                assert!(b.one_model);
                steps_per_block = Some(b.steps_per_block);
                Ok::<_, ExperimentError>(b)
            },
            || ExperimentError::Paired("no interval".into()),
        )
        .unwrap();
        assert_eq!(t.interleaving, Interleaving::OneModel);
        assert_eq!(t.builds, 4);
        assert!(t.cost.resolved(), "{:?}", t.cost);
        assert!((t.cost.estimate_pct - 20.0).abs() < 1.0, "{:?}", t.cost);
        assert!(!t.control.resolved(), "{:?}", t.control);

        // A model that stops answering is the build's error.
        let died = time_one_model(
            |_, _| None,
            8,
            &settings(),
            BuildPlan {
                build: 0,
                steps_per_block: None,
            },
            Duration::ZERO,
        );
        assert!(died.is_err());
    }

    #[test]
    fn the_cost_is_per_sample_and_a_failing_arm_is_an_error() {
        // Twice the samples in 1.5 times the time: 25% less time per sample.
        let t = time(|| [arm(0.001, 8), arm(0.0015, 16), arm(0.001, 8)]).unwrap();
        assert!((t.cost.estimate_pct + 25.0).abs() < 1.0, "{:?}", t.cost);

        let err = time(|| {
            let failing: ArmRun<'static> =
                Box::new(|| Err(ExperimentError::Backend("no such device".into())));
            [arm(0.001, 8), failing, arm(0.001, 8)]
        })
        .unwrap_err();
        assert!(err.to_string().contains("no such device"), "{err}");
    }
}
