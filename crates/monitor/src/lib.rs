//! The memory of every step of a Burn 0.22 training loop, and a warning when it grows.
//!
//! Question: does my loop's memory grow from step to step, and if so, what is growing?
//! Method: around each step the caller hands it, synchronise the device and read its probe:
//! bytes in use before and after, the step's peak (Burn has no `max_memory_allocated`: on the
//! CPU the counting allocator's exact high-water mark, on a pooled device the highest reading
//! the probe saw), and bytes reserved where the backend pools. After a warm-up, a least-squares
//! line through the bytes in use after each step, with its 95% interval, says whether it grows.
//! Answer: [`StepMonitor::summary`] prints one screen (like PyTorch's `memory_summary`);
//! [`StepMonitor::warning`] names the likely causes when in-use memory grows.
//!
//! On the CPU (Burn's Flex backend), with the counting allocator as the global allocator:
//!
//! ```
//! # #[cfg(feature = "burn")] {
//! use burn::nn::{Linear, LinearConfig};
//! use burn::tensor::{Device, Distribution, Tensor};
//! use burn_step_monitor::host::{CountingAllocator, HostProbe};
//! use burn_step_monitor::StepMonitor;
//!
//! #[global_allocator]
//! static ALLOCATOR: CountingAllocator = CountingAllocator;
//!
//! let device = Device::flex().autodiff();
//! let layer: Linear = LinearConfig::new(64, 64).init(&device);
//! let x = Tensor::<2>::random([32, 64], Distribution::Default, &device);
//! // The CPU's work is done when the step returns: no sync to wait for.
//! let mut monitor = StepMonitor::new(&HostProbe, || {});
//! for _ in 0..20 {
//!     monitor.step(|| {
//!         let loss = layer.forward(x.clone()).powi_scalar(2).mean();
//!         drop(loss.backward());
//!     });
//! }
//! assert!(monitor.warning().is_none(), "{}", monitor.summary());
//! println!("{}", monitor.summary());
//! # }
//! ```
//!
//! On a pooled device (wgpu, CUDA), the probe is `device::DeviceProbe` (feature `burn`, Burn's
//! `Device::memory_pool_usage`) and the sync closure [`sync_of(&device)`](sync_of): see
//! [`StepMonitor::every`] for its cost. Without the `burn` feature the crate needs no Burn: the
//! counting allocator, the monitor and the attribution recorder serve a loop on any version.

pub mod attribution;
#[cfg(feature = "burn")]
pub mod device;
mod growth;
pub mod host;
mod probe;
mod trace;

use std::collections::VecDeque;
use std::fmt::Write;

pub use growth::{
    bytes, Growth, NEGLIGIBLE_BYTES_PER_STEP, POOL_NEGLIGIBLE_BYTES_PER_STEP, SETTLING_SHARE,
};
pub use probe::{MemoryReading, ReadMemory};

/// The sync a [`StepMonitor`] of a Burn device needs: waits for `device`'s queued work, so
/// that a reading counts what the step did (CubeCL backends; nothing to wait for on the CPU).
#[cfg(feature = "burn")]
pub fn sync_of(device: &burn::tensor::Device) -> impl Fn() + '_ {
    move || {
        // A failed device surfaces again at the step's next tensor read.
        let _ = device.sync();
    }
}

/// The page of the Burn VRAM workbench's guide that measures the causes [`StepMonitor::warning`]
/// names (a file of the guide the workbench writes, and publishes).
pub const GUIDE_PAGE: &str = "memory-over-steps.html";

/// Steps kept by default: the last this many (room made once, so that the monitor's own
/// bookkeeping never shows up as growth on a probe that counts the process's heap).
pub const DEFAULT_CAPACITY: usize = 4096;

/// Steps left out of the growth fit by default: the first steps allocate the optimizer's state
/// and fill the pools.
pub const DEFAULT_WARMUP_STEPS: usize = 5;

/// One step's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// One of a step's readings, where the probe has it.
type Reading = fn(&StepMemory) -> Option<u64>;

/// Reads the memory of each step of a loop, and says whether it grows.
pub struct StepMonitor<'a> {
    probe: &'a dyn ReadMemory,
    sync: Box<dyn Fn() + 'a>,
    warmup_steps: usize,
    every: usize,
    next_step: usize,
    steps: VecDeque<StepMemory>,
}

impl<'a> StepMonitor<'a> {
    /// A monitor reading `probe`; `sync` waits for the device to finish its queued work (on
    /// pooled devices [`sync_of`]; nothing on the CPU).
    pub fn new(probe: &'a dyn ReadMemory, sync: impl Fn() + 'a) -> Self {
        Self::with_capacity(probe, sync, DEFAULT_CAPACITY)
    }

    /// A monitor that keeps the last `capacity` steps (at least 3).
    pub fn with_capacity(probe: &'a dyn ReadMemory, sync: impl Fn() + 'a, capacity: usize) -> Self {
        Self {
            probe,
            sync: Box::new(sync),
            warmup_steps: DEFAULT_WARMUP_STEPS,
            every: 1,
            next_step: 0,
            steps: VecDeque::with_capacity(capacity.max(3)),
        }
    }

    /// Leaves the first `steps` out of the growth fit.
    pub fn warmup(mut self, steps: usize) -> Self {
        self.warmup_steps = steps;
        self
    }

    /// Reads one step in `n` (at least 1): the others run without a sync or a reading. On a
    /// device each read step syncs twice, which drains the queue the step would otherwise
    /// overlap with the next; reading one step in `n` divides that cost by `n`. The growth is
    /// still per step (the fit's slope over read steps, divided by `n`).
    pub fn every(mut self, n: usize) -> Self {
        self.every = n.max(1);
        self
    }

    /// Runs one step, reading the memory around it (if it is one of the steps read); returns
    /// what the step returned.
    pub fn step<T>(&mut self, step: impl FnOnce() -> T) -> T {
        if !self.next_step.is_multiple_of(self.every) {
            self.next_step += 1;
            return step();
        }
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
        self.per_step(Growth::of(&series))
    }

    /// How the pool's reserved bytes move, after the warm-up, where the backend has a pool.
    pub fn reserved_growth(&self) -> Option<Growth> {
        let series: Option<Vec<f64>> = self
            .after_warmup()
            .map(|s| s.reserved_bytes.map(|r| r as f64))
            .collect();
        self.per_step(Growth::of(&series?))
    }

    /// A growth fitted over read steps, per step.
    fn per_step(&self, g: Option<Growth>) -> Option<Growth> {
        let n = self.every as f64;
        g.map(|g| Growth {
            bytes_per_step: g.bytes_per_step / n,
            low_bytes_per_step: g.low_bytes_per_step / n,
            high_bytes_per_step: g.high_bytes_per_step / n,
            thirds_bytes_per_step: g.thirds_bytes_per_step.map(|(a, b)| (a / n, b / n)),
            ..g
        })
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
                 stays alive; a collection that grows. Each is measured on the Burn VRAM \
                 workbench's \"Memory over many steps\" page ({GUIDE_PAGE})",
                g.words()
            ));
        }
        let g = self
            .reserved_growth()
            .filter(|g| g.grows() && g.bytes_per_step > POOL_NEGLIGIBLE_BYTES_PER_STEP)?;
        Some(format!(
            "the pool's reserved memory grows by {} while memory in use does not: the \
             allocator keeps memory no tensor holds. Likely causes: a data loader whose threads \
             each get their own CubeCL stream and pool (Burn #4971; the reported workaround, \
             `[streaming] max_streams = 1` in cubecl.toml, holds only where a reading of every \
             pool shows it: the workbench's \"Memory over many steps\" page ({GUIDE_PAGE}) says \
             where); shapes that change every step; `memory_cleanup()` gives the pool's free \
             pages back",
            g.words()
        ))
    }

    /// One screen: the first and last steps kept, the range, the growth and the warning.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "memory over {} steps ({} kept), probe: {}{}",
            self.next_step,
            self.steps.len(),
            self.probe.kind(),
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
                (Some(lo), Some(hi)) => (bytes(*lo as f64), bytes(*hi as f64)),
                _ => ("n/a".into(), "n/a".into()),
            }
        };
        let cell = |v: Option<u64>| v.map_or("n/a".into(), |b| bytes(b as f64));
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
    use crate::MemoryReading;

    /// A probe whose bytes in use the test sets.
    struct Scripted {
        in_use: Cell<u64>,
    }

    impl ReadMemory for Scripted {
        fn kind(&self) -> String {
            "scripted".into()
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
}
