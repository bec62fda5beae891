//! What a profile means on a device: the sizes points are built at and how often a step is
//! repeated. Shared by every technique; names none.

use std::time::{Duration, Instant};

use results::{DeviceKind, Interleaving, PairSettings, Profile};

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
/// ...and for at least this many steps.
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
            Profile::Full => Self {
                warmup: 2,
                repeats: 7,
                min_warmup: Duration::ZERO,
            },
        }
    }

    /// `warmup` and `repeats` as planned, with the warm-up `device` needs: on wgpu and CUDA at
    /// least [`DEVICE_WARMUP_STEPS`] steps and [`DEVICE_WARMUP`].
    pub fn on(warmup: usize, repeats: usize, device: DeviceKind) -> Self {
        match device {
            DeviceKind::Cpu => Self {
                warmup,
                repeats,
                min_warmup: Duration::ZERO,
            },
            DeviceKind::Wgpu | DeviceKind::Cuda => Self {
                warmup: warmup.max(DEVICE_WARMUP_STEPS),
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

/// How long and how precisely a paired comparison is measured at `profile`: at least one cycle
/// of the six orders (rounds stop only at the end of a cycle), until both intervals are within
/// ±5% (±2% full) or the budget is spent. In one process: blocks of at least 5 ms (50 ms
/// full), 1.5 s of rounds (30 s full). Alternating processes pay a process per block: blocks of
/// at least 20 ms (0.3 s full), 4 s (40 s full).
pub fn pair_settings(profile: Profile, interleaving: Interleaving) -> PairSettings {
    let (min_rounds, target, budget_s, min_block_s) = match (profile, interleaving) {
        (Profile::Quick, Interleaving::OneProcess) => (6, 5.0, 1.5, 0.005),
        (Profile::Quick, Interleaving::AlternatingProcesses) => (6, 5.0, 4.0, 0.02),
        (Profile::Full, Interleaving::OneProcess) => (6, 2.0, 30.0, 0.05),
        (Profile::Full, Interleaving::AlternatingProcesses) => (6, 2.0, 40.0, 0.3),
    };
    PairSettings {
        min_rounds,
        target_half_width_pct: target,
        budget_s,
        min_block_s,
    }
}
