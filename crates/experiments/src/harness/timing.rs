//! Timing: warm up, synchronise the device before reading the clock, repeat, summarise.
//!
//! A measured loop can also hand its prepared step to a timer from outside the workbench (the
//! criterion benches): [`with_step_timer`] installs one on this thread, and every loop
//! [`offer`]s its step to it after the warm-up, so that criterion times exactly the step the
//! workbench times, built by the same code, instead of a copy of it.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use results::Timing;

/// Runs `step` `warmup` times untimed, offers it to the installed [`StepTimer`] if there is one,
/// then runs it `repeats` times timed. `step` must synchronise the device before it returns, so
/// that the clock is read after the work has finished; it processes `samples_per_step` samples.
pub fn repeat(
    warmup: usize,
    repeats: usize,
    samples_per_step: u64,
    mut step: impl FnMut(),
) -> Timing {
    for _ in 0..warmup {
        step();
    }
    repeat_timed(repeats, samples_per_step, || {
        let start = Instant::now();
        step();
        start.elapsed()
    })
}

/// Offers `step` to the installed [`StepTimer`], then runs it `repeats` times. Each call of
/// `step` runs it once and returns the time of its timed region, which the step clocks itself
/// (after synchronising the device) so that work around it (a release, a fresh input) stays
/// outside the clock.
pub fn repeat_timed(
    repeats: usize,
    samples_per_step: u64,
    mut step: impl FnMut() -> Duration,
) -> Timing {
    offer(samples_per_step, &mut step);
    Timing::from_samples((0..repeats.max(1)).map(|_| step().as_secs_f64()).collect())
}

/// A timer from outside the workbench that takes over a measured loop's prepared step: the
/// criterion benches install one, the workbench's runner never does.
pub trait StepTimer {
    /// Times the step. Each call of `step` runs it once and returns the time it took, the clock
    /// read after the device was synchronised and any per-run set-up (a fresh input) left out.
    /// Each run processes `samples_per_step` samples.
    fn time(&mut self, samples_per_step: u64, step: &mut dyn FnMut() -> Duration);
}

thread_local! {
    static STEP_TIMER: RefCell<Option<Box<dyn StepTimer>>> = const { RefCell::new(None) };
}

/// Runs `work` with `timer` installed on this thread, so that the measured loop inside `work`
/// (an experiment's point, run on this thread) hands its step to `timer` after its warm-up.
pub fn with_step_timer<R>(timer: Box<dyn StepTimer>, work: impl FnOnce() -> R) -> R {
    let previous = STEP_TIMER.with(|t| t.borrow_mut().replace(timer));
    let output = work();
    STEP_TIMER.with(|t| *t.borrow_mut() = previous);
    output
}

/// Runs `work` with no timer installed on this thread (a point that runs several measured loops
/// offers only one of them), then puts back the one there was.
pub fn without_step_timer<R>(work: impl FnOnce() -> R) -> R {
    let previous = STEP_TIMER.with(|t| t.borrow_mut().take());
    let output = work();
    STEP_TIMER.with(|t| *t.borrow_mut() = previous);
    output
}

/// Whether a timer is installed on this thread: the point runs to be timed (a paired
/// comparison's arm, a criterion bench), so its correctness checks, which the point's own run
/// already recorded, are skipped.
pub fn timing_only() -> bool {
    STEP_TIMER.with(|t| t.borrow().is_some())
}

/// Hands a prepared step to the timer installed on this thread, if any; says whether there was
/// one. Measured loops call this once, after their warm-up and before their own repeats.
pub fn offer(samples_per_step: u64, step: &mut dyn FnMut() -> Duration) -> bool {
    // Taken out while it times, so that the step can never reach it again.
    let Some(mut timer) = STEP_TIMER.with(|t| t.borrow_mut().take()) else {
        return false;
    };
    timer.time(samples_per_step, step);
    STEP_TIMER.with(|t| *t.borrow_mut() = Some(timer));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_installed_timer_is_offered_the_step_once() {
        struct Count(u64);
        impl StepTimer for Count {
            fn time(&mut self, samples_per_step: u64, step: &mut dyn FnMut() -> Duration) {
                assert_eq!(samples_per_step, 8);
                for _ in 0..5 {
                    step();
                }
                self.0 += 5;
            }
        }
        let mut steps = 0;
        let timing = with_step_timer(Box::new(Count(0)), || repeat(2, 3, 8, || steps += 1));
        assert_eq!(steps, 2 + 5 + 3);
        assert_eq!(timing.samples_s.len(), 3);
        // Without a timer nothing is offered.
        assert!(!offer(1, &mut || Duration::ZERO));
    }
}
