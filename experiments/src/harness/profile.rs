//! What a profile means on a device: the sizes points are built at and how often a step is
//! repeated. Shared by every technique; names none.

use results::{DeviceKind, Profile};

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
}

impl Repeats {
    /// The repeats of a training or single-operation point at `profile`.
    pub fn of(profile: Profile) -> Self {
        match profile {
            Profile::Quick => Self {
                warmup: 1,
                repeats: 3,
            },
            Profile::Full => Self {
                warmup: 2,
                repeats: 7,
            },
        }
    }
}
