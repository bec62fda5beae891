//! What a profile means on a device: the sizes points are built at and how often a step is
//! repeated. Shared by every technique; names none.

use std::time::{Duration, Instant};

use results::{DeviceKind, Interleaving, PairSettings, Profile, CYCLE, HALF_CYCLE};

/// The sizes a technique's points are built at, from the profile and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizes {
    /// The quick profile, on any device.
    Quick,
    /// The full profile on the CPU and on wgpu.
    Full,
    /// The full profile on CUDA: sizes that fill a large GPU far more, still within minutes.
    FullCuda,
}

impl Sizes {
    /// The sizes of `profile` on `device`.
    pub fn of(profile: Profile, device: DeviceKind) -> Self {
        match (profile, device) {
            (Profile::Quick, _) => Sizes::Quick,
            (Profile::Full, DeviceKind::Cuda) => Sizes::FullCuda,
            (Profile::Full, _) => Sizes::Full,
        }
    }
}

/// Untimed and timed repeats of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeats {
    /// Untimed steps before the measured ones.
    pub warmup: usize,
    /// Measured steps.
    pub repeats: usize,
    /// The warm-up also lasts at least this long (on device backends, see [`Self::on`]).
    pub min_warmup: Duration,
}

/// On wgpu and CUDA a point warms up for at least this long (kernels compile and autotune on
/// first use, clocks ramp up)...
pub const DEVICE_WARMUP: Duration = Duration::from_secs(1);
/// ...and, on a GPU, for at least this many steps. A software driver (lavapipe: wgpu on the
/// CPU) is spared this floor: its times are not compared and it has no clocks to ramp up, while
/// at the full sizes the floor made two thirds of a point's steps (10 of 15). Its memory
/// readings do not depend on it: in a quick run of all experiments on lavapipe with and without
/// the floor, the in-use bytes at every phase boundary (306 phases), the optimizer state and
/// gradient bytes and every outcome were the same; the reserved and sampled figures varied
/// about as often as between two runs with it (upper bounds: in 228 of 304 phases, against 198
/// of 298).
pub const DEVICE_WARMUP_STEPS: usize = 10;

impl Repeats {
    /// The repeats of a training or single-operation point at `profile`.
    pub fn of(profile: Profile) -> Self {
        match profile {
            Profile::Quick => Self {
                warmup: 1,
                repeats: 3,
                min_warmup: Duration::ZERO,
            },
            // One untimed step: it allocates the optimizer's state; from the second step on,
            // a CPU step's bytes repeat to within the autodiff graph's bookkeeping (the
            // record's `repeat_delta_spread_bytes`). Device backends add their own floor
            // ([`Self::on`]).
            Profile::Full => Self {
                warmup: 1,
                repeats: 4,
                min_warmup: Duration::ZERO,
            },
        }
    }

    /// `warmup` and `repeats` as planned, with the warm-up `device` needs: on wgpu and CUDA at
    /// least [`DEVICE_WARMUP`], and on a GPU (not a software driver) at least
    /// [`DEVICE_WARMUP_STEPS`] steps.
    pub fn on(warmup: usize, repeats: usize, device: DeviceKind) -> Self {
        Self::on_driver(
            warmup,
            repeats,
            device,
            crate::harness::driver::is_software(device),
        )
    }

    /// [`Self::on`] with the driver's kind given: `software` spares the step floor.
    pub fn on_driver(warmup: usize, repeats: usize, device: DeviceKind, software: bool) -> Self {
        match device {
            DeviceKind::Cpu => Self {
                warmup,
                repeats,
                min_warmup: Duration::ZERO,
            },
            DeviceKind::Wgpu | DeviceKind::Cuda => Self {
                warmup: if software {
                    warmup
                } else {
                    warmup.max(DEVICE_WARMUP_STEPS)
                },
                repeats,
                min_warmup: DEVICE_WARMUP,
            },
        }
    }

    /// Runs `step` as the warm-up: `warmup` times, then on until `min_warmup` has passed.
    pub fn warm_up(&self, mut step: impl FnMut()) {
        let started = Instant::now();
        let mut done = 0;
        while done < self.warmup || started.elapsed() < self.min_warmup {
            step();
            done += 1;
        }
    }
}

/// How long and how precisely a paired comparison is measured at `profile`.
///
/// In one process: builds (a fresh child process each, its three arms built anew) of half a
/// cycle of orders each, in pairs, at least 4 (2 quick), until both intervals over builds are
/// within ±3% (±5% quick) or the budget is spent: 12 s (1 s quick), counted over whole builds,
/// set-up included; blocks of at least 50 ms (5 ms quick). Alternating processes pay a process
/// per block, each round a build: at least one cycle of the six orders, blocks of at least 0.3 s
/// (20 ms quick), until ±3% or 12 s (1.5 s quick). The budgets are what keeps the full run's 18
/// comparisons inside its 20 minutes and the quick run's inside its minute on 2 cores: a quick
/// comparison is a smoke check with wide intervals, a full one resolves a few percent. Four
/// builds of the larger steps already take 20 to 50 s, so the budget only stops the smaller.
pub fn pair_settings(profile: Profile, interleaving: Interleaving) -> PairSettings {
    let (min_builds, target, budget_s, min_block_s) = match (profile, interleaving) {
        (Profile::Quick, Interleaving::OneProcess | Interleaving::OneModel) => (2, 5.0, 1.0, 0.005),
        (Profile::Quick, Interleaving::AlternatingProcesses) => (1, 5.0, 1.5, 0.02),
        (Profile::Full, Interleaving::OneProcess | Interleaving::OneModel) => (4, 3.0, 12.0, 0.05),
        (Profile::Full, Interleaving::AlternatingProcesses) => (1, 3.0, 12.0, 0.3),
    };
    PairSettings {
        min_rounds: CYCLE,
        target_half_width_pct: target,
        budget_s,
        min_block_s,
        min_builds,
        rounds_per_build: HALF_CYCLE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_warms_up_for_the_floor_and_a_software_driver_as_planned() {
        let gpu = Repeats::on_driver(2, 4, DeviceKind::Cuda, false);
        assert_eq!((gpu.warmup, gpu.repeats), (DEVICE_WARMUP_STEPS, 4));
        assert_eq!(gpu.min_warmup, DEVICE_WARMUP);
        let lavapipe = Repeats::on_driver(2, 4, DeviceKind::Wgpu, true);
        assert_eq!((lavapipe.warmup, lavapipe.repeats), (2, 4));
        // Still at least a second, as on every device backend.
        assert_eq!(lavapipe.min_warmup, DEVICE_WARMUP);
        let cpu = Repeats::on_driver(2, 4, DeviceKind::Cpu, false);
        assert_eq!((cpu.warmup, cpu.min_warmup), (2, Duration::ZERO));
        assert!(!crate::harness::driver::is_software(DeviceKind::Cpu));
    }
}
