//! Memory over many steps, in the reader's own training loop.
//!
//! Question: does my loop's memory grow from step to step, and if so, what is growing?
//! Method: around each step the caller hands it, synchronise the device and read its probe:
//! bytes in use before and after, the step's peak (Burn has no `max_memory_allocated`: on the
//! CPU the counting allocator's exact high-water mark, on CubeCL the highest reading the probe
//! saw), and bytes reserved where the backend pools. After a warm-up, a least-squares line
//! through the bytes in use after each step, with its 95% interval, says whether it grows.
//! Answer: [`StepMonitor::summary`] prints one screen (like PyTorch's `memory_summary`);
//! [`StepMonitor::warning`] names the likely causes when in-use memory grows.
//!
//! ```no_run
//! use experiments::harness::probe::host::HostProbe;
//! use experiments::monitor::StepMonitor;
//! # fn train_step() {}
//! // With `#[global_allocator] static A: CountingAllocator = CountingAllocator;` in the binary.
//! let probe = HostProbe;
//! let mut monitor = StepMonitor::new(&probe, || {});
//! for _ in 0..100 {
//!     monitor.step(train_step);
//! }
//! println!("{}", monitor.summary());
//! ```

use std::collections::VecDeque;
use std::fmt::Write;

use results::{format, LinearFit};
use serde::Serialize;

use crate::harness::probe::MemoryProbe;

/// Steps kept by default: the last this many (room made once, so that the monitor's own
/// bookkeeping never shows up as growth on a probe that counts the process's heap).
pub const DEFAULT_CAPACITY: usize = 4096;

/// Steps left out of the growth fit by default: the first steps allocate the optimizer's state
/// and fill the pools.
pub const DEFAULT_WARMUP_STEPS: usize = 5;

/// Growth below this many bytes per step is not called growth, whatever its interval: the
/// autodiff graph's bookkeeping moves by a few hundred bytes from step to step.
pub const NEGLIGIBLE_BYTES_PER_STEP: f64 = 4096.0;

/// One step's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepMemory {
    /// The step's number, from 0.
    pub step: usize,
    /// Bytes in use when the step began.
    pub in_use_before_bytes: u64,
    /// The step's peak: exact where the probe counts every allocation.
    pub peak_bytes: u64,
    /// Bytes in use after the step (its return value still alive).
    pub in_use_after_bytes: u64,
    /// Bytes the backend's pool held after the step, where it has one.
    pub reserved_bytes: Option<u64>,
}

/// How a series of bytes moves from step to step after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Growth {
    /// The fitted change per step, in bytes.
    pub bytes_per_step: f64,
    /// The 95% interval of that slope, in bytes per step.
    pub low_bytes_per_step: f64,
    /// Its upper end.
    pub high_bytes_per_step: f64,
    /// Steps fitted.
    pub steps: usize,
}

impl Growth {
    /// The least-squares slope of `series` against the step and its 95% interval (Student's
    /// t with n - 2 degrees of freedom); `None` with fewer than 3 values.
    pub fn of(series: &[f64]) -> Option<Self> {
        let points: Vec<(f64, f64)> = series
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64, *y))
            .collect();
        let fit = LinearFit::fit(&points)?;
        let (low, high) = fit.slope_interval(&points)?;
        Some(Self {
            bytes_per_step: fit.slope,
            low_bytes_per_step: low,
            high_bytes_per_step: high,
            steps: fit.n,
        })
    }

    /// Whether it grows: the whole interval above zero and the slope above
    /// [`NEGLIGIBLE_BYTES_PER_STEP`].
    pub fn grows(&self) -> bool {
        self.low_bytes_per_step > 0.0 && self.bytes_per_step > NEGLIGIBLE_BYTES_PER_STEP
    }

    fn words(&self) -> String {
        format!(
            "{}/step [{}, {}] over {} steps",
            signed_bytes(self.bytes_per_step),
            signed_bytes(self.low_bytes_per_step),
            signed_bytes(self.high_bytes_per_step),
            self.steps
        )
    }
}

fn signed_bytes(b: f64) -> String {
    if b < 0.0 {
        format!("-{}", format::bytes(-b))
    } else {
        format!("+{}", format::bytes(b))
    }
}

/// One of a step's readings, where the probe has it.
type Reading = fn(&StepMemory) -> Option<u64>;

/// Reads the memory of each step of a loop, and says whether it grows.
pub struct StepMonitor<'a> {
    probe: &'a dyn MemoryProbe,
    sync: Box<dyn Fn() + 'a>,
    warmup_steps: usize,
    next_step: usize,
    steps: VecDeque<StepMemory>,
}

impl<'a> StepMonitor<'a> {
    /// A monitor reading `probe`; `sync` waits for the device to finish its queued work (on
    /// CubeCL backends `B::sync(&device)`; nothing on the CPU).
    pub fn new(probe: &'a dyn MemoryProbe, sync: impl Fn() + 'a) -> Self {
        Self::with_capacity(probe, sync, DEFAULT_CAPACITY)
    }

    /// A monitor that keeps the last `capacity` steps (at least 3).
    pub fn with_capacity(
        probe: &'a dyn MemoryProbe,
        sync: impl Fn() + 'a,
        capacity: usize,
    ) -> Self {
        Self {
            probe,
            sync: Box::new(sync),
            warmup_steps: DEFAULT_WARMUP_STEPS,
            next_step: 0,
            steps: VecDeque::with_capacity(capacity.max(3)),
        }
    }

    /// Leaves the first `steps` out of the growth fit.
    pub fn warmup(mut self, steps: usize) -> Self {
        self.warmup_steps = steps;
        self
    }

    /// Runs one step, reading the memory around it; returns what the step returned.
    pub fn step<T>(&mut self, step: impl FnOnce() -> T) -> T {
        (self.sync)();
        let before = self.probe.read().in_use_bytes;
        self.probe.reset_peak();
        let out = step();
        (self.sync)();
        let after = self.probe.read();
        if self.steps.len() == self.steps.capacity() {
            self.steps.pop_front();
        }
        self.steps.push_back(StepMemory {
            step: self.next_step,
            in_use_before_bytes: before,
            peak_bytes: after.peak_in_use_bytes.max(after.in_use_bytes),
            in_use_after_bytes: after.in_use_bytes,
            reserved_bytes: after.reserved_bytes,
        });
        self.next_step += 1;
        out
    }

    /// The steps kept, oldest first.
    pub fn steps(&self) -> impl Iterator<Item = &StepMemory> {
        self.steps.iter()
    }

    fn after_warmup(&self) -> impl Iterator<Item = &StepMemory> {
        let warmup = self.warmup_steps;
        self.steps.iter().filter(move |s| s.step >= warmup)
    }

    /// How the bytes in use after each step move, after the warm-up (`None` before 3 steps).
    pub fn growth(&self) -> Option<Growth> {
        let series: Vec<f64> = self
            .after_warmup()
            .map(|s| s.in_use_after_bytes as f64)
            .collect();
        Growth::of(&series)
    }

    /// How the pool's reserved bytes move, after the warm-up, where the backend has a pool.
    pub fn reserved_growth(&self) -> Option<Growth> {
        let series: Option<Vec<f64>> = self
            .after_warmup()
            .map(|s| s.reserved_bytes.map(|r| r as f64))
            .collect();
        Growth::of(&series?)
    }

    /// Where memory grows across steps: how much, and its likely causes; `None` where it does
    /// not (or too few steps were seen to tell).
    pub fn warning(&self) -> Option<String> {
        if let Some(g) = self.growth().filter(Growth::grows) {
            return Some(format!(
                "memory in use grows by {} after the warm-up: something from each step stays \
                 alive. Likely causes: a loss or output kept for logging (read it with \
                 `into_scalar()`, or `detach()` it: a kept tensor keeps its whole autodiff \
                 graph); evaluation on the autodiff backend (run it on `model.valid()`); \
                 minibatches cut with `.clone().select(..)` or `narrow` from a tensor that \
                 stays alive; a collection that grows",
                g.words()
            ));
        }
        let g = self.reserved_growth().filter(Growth::grows)?;
        Some(format!(
            "the pool's reserved memory grows by {} while memory in use does not: the \
             allocator keeps memory no tensor holds. Likely causes: a data loader whose threads \
             each get their own CubeCL stream and pool (Burn #4971; the reported workaround, \
             `[streaming] max_streams = 1` in cubecl.toml, holds only where a reading of every \
             pool shows it: the workbench's Memory over many steps page says where); shapes \
             that change every step; \
             `memory_cleanup()` gives the pool's free pages back",
            g.words()
        ))
    }

    /// One screen: the first and last steps kept, the range, the growth and the warning.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let info = self.probe.info();
        let _ = writeln!(
            out,
            "memory over {} steps ({} kept), probe: {}{}",
            self.next_step,
            self.steps.len(),
            info.kind,
            if self.probe.exact_peak() {
                " (exact peak)"
            } else {
                " (peak: the highest reading at the step's boundaries)"
            }
        );
        let (Some(first), Some(last)) = (self.steps.front(), self.steps.back()) else {
            let _ = writeln!(out, "no step measured");
            return out;
        };
        let range = |f: Reading| {
            let values: Vec<u64> = self.steps.iter().filter_map(f).collect();
            match (values.iter().min(), values.iter().max()) {
                (Some(lo), Some(hi)) => (format::bytes(*lo as f64), format::bytes(*hi as f64)),
                _ => ("n/a".into(), "n/a".into()),
            }
        };
        let cell = |v: Option<u64>| v.map_or("n/a".into(), |b| format::bytes(b as f64));
        let _ = writeln!(
            out,
            "{:<18} {:>14} {:>14} {:>14} {:>14}",
            "", "first step", "last step", "min", "max"
        );
        let rows: [(&str, Reading); 3] = [
            ("in use after", |s| Some(s.in_use_after_bytes)),
            ("step peak", |s| Some(s.peak_bytes)),
            ("reserved", |s| s.reserved_bytes),
        ];
        for (name, f) in rows {
            let (lo, hi) = range(f);
            let _ = writeln!(
                out,
                "{name:<18} {:>14} {:>14} {lo:>14} {hi:>14}",
                cell(f(first)),
                cell(f(last))
            );
        }
        let growth = |g: Option<Growth>| match g {
            Some(g) => format!(
                "{} ({})",
                g.words(),
                if g.grows() { "grows" } else { "flat" }
            ),
            None => format!(
                "too few steps after the warm-up of {} to tell",
                self.warmup_steps
            ),
        };
        let _ = writeln!(out, "in use, per step:   {}", growth(self.growth()));
        if self.steps.iter().any(|s| s.reserved_bytes.is_some()) {
            let _ = writeln!(
                out,
                "reserved, per step: {}",
                growth(self.reserved_growth())
            );
        }
        if let Some(w) = self.warning() {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::harness::probe::{MemoryReading, ProbeInfo};

    /// A probe whose bytes in use the test sets.
    struct Scripted {
        in_use: Cell<u64>,
    }

    impl MemoryProbe for Scripted {
        fn info(&self) -> ProbeInfo {
            ProbeInfo::of("scripted")
        }
        fn read(&self) -> MemoryReading {
            MemoryReading {
                in_use_bytes: self.in_use.get(),
                peak_in_use_bytes: self.in_use.get(),
                reserved_bytes: None,
            }
        }
        fn reset_peak(&self) {}
    }

    #[test]
    fn a_flat_loop_is_flat_and_a_leaking_one_is_named() {
        let probe = Scripted {
            in_use: Cell::new(1 << 20),
        };
        let mut flat = StepMonitor::new(&probe, || {});
        for _ in 0..50 {
            flat.step(|| ());
        }
        assert_eq!(flat.growth().unwrap().bytes_per_step, 0.0);
        assert!(flat.warning().is_none(), "{}", flat.summary());

        let mut leaking = StepMonitor::new(&probe, || {});
        for _ in 0..50 {
            leaking.step(|| probe.in_use.set(probe.in_use.get() + 64 * 1024));
        }
        let g = leaking.growth().unwrap();
        assert!((g.bytes_per_step - 65536.0).abs() < 1e-6, "{g:?}");
        let warning = leaking.warning().expect("a leak is named");
        assert!(warning.contains("into_scalar"), "{warning}");
        assert!(leaking.summary().contains("warning:"));
    }

    #[test]
    fn noise_around_a_level_is_not_growth() {
        let series: Vec<f64> = (0..60)
            .map(|i| 1e8 + if i % 2 == 0 { 3e4 } else { -3e4 })
            .collect();
        let g = Growth::of(&series).unwrap();
        assert!(!g.grows(), "{g:?}");
        assert!(g.low_bytes_per_step <= 0.0 && g.high_bytes_per_step >= 0.0);
    }
}
