//! Devices the experiments run on, and the backend each one selects.

use serde::{Deserialize, Serialize};

/// A device a point can be measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    /// Burn's Flex backend on the host CPU; memory from the counting global allocator.
    Cpu,
    /// Burn's wgpu backend (feature `wgpu`).
    Wgpu,
    /// Burn's CUDA backend (feature `cuda`).
    Cuda,
}

impl DeviceKind {
    /// Name as in the CLI and the records.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Wgpu => "wgpu",
            DeviceKind::Cuda => "cuda",
        }
    }

    /// The Burn backend measured on this device.
    pub fn backend(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "Flex (burn-flex, CPU)",
            DeviceKind::Wgpu => "Wgpu (burn-wgpu, CubeCL)",
            DeviceKind::Cuda => "Cuda (burn-cuda, CubeCL)",
        }
    }
}
