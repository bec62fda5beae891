//! Devices a point can be measured on, as records name them, and the float types they store.
//!
//! [`DeviceKind`] is the one place that parses a device name (CLI, benches, records), gives its
//! slug, and decides where a device's files go in a guide (the CPU's at the top, every other
//! device's in a folder of its own). Which Burn backend a kind runs on is the `experiments`
//! crate's business (its `DeviceKind::dispatch`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A device a point can be measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
    /// Every kind, in the order result sets are shown (the CPU first).
    pub const ALL: [DeviceKind; 3] = [DeviceKind::Cpu, DeviceKind::Wgpu, DeviceKind::Cuda];

    /// The slug, as in the CLI, file names and records (`cpu`, `wgpu`, `cuda`).
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Wgpu => "wgpu",
            DeviceKind::Cuda => "cuda",
        }
    }

    /// The Burn backend measured on this device, in words.
    pub fn backend(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "Flex (burn-flex, CPU)",
            DeviceKind::Wgpu => "Wgpu (burn-wgpu, CubeCL)",
            DeviceKind::Cuda => "Cuda (burn-cuda, CubeCL)",
        }
    }

    /// The folder a device's files go to inside a guide's `data/` and `charts/` naming: none for
    /// the CPU (the guide's own result set), the slug for every other device.
    pub fn subfolder(self) -> Option<&'static str> {
        match self {
            DeviceKind::Cpu => None,
            other => Some(other.name()),
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device name that is not one of [`DeviceKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a device: '{0}' (cpu, wgpu, cuda)")]
pub struct UnknownDevice(pub String);

impl FromStr for DeviceKind {
    type Err = UnknownDevice;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DeviceKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownDevice(s.to_string()))
    }
}

/// A device's identity, as the driver reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// Adapter or GPU name.
    pub name: String,
    /// Driver name and version, where the driver tells them.
    pub driver: Option<String>,
    /// Total device memory in bytes, where the driver tells it.
    pub total_memory_bytes: Option<u64>,
    /// Device memory free right now, in bytes, for the whole device (all processes), where the
    /// driver tells it: the figure `nvidia-smi` is read against.
    pub free_memory_bytes: Option<u64>,
    /// Whether the driver is a software one running on the CPU (lavapipe): its memory
    /// figures are the memory manager's real bytes, its times are not a GPU's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub software: bool,
    /// How CubeCL compiles and tunes kernels on this device (wgpu and CUDA; `None` on the CPU
    /// and in records made before the workbench said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubecl: Option<CubeclSettings>,
}

/// CubeCL's settings that decide what a device point's first steps spend compiling and
/// autotuning kernels, as the run read them (`cubecl.toml` in the working folder or a parent,
/// then `CUBECL_AUTOTUNE_LEVEL`). A point's warm-up absorbs this work; the caches decide
/// whether the next process pays it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CubeclSettings {
    /// `[autotune] level`: `minimal`, `balanced` (CubeCL's default), `extensive` or `full`.
    pub autotune_level: String,
    /// The folder autotune results are kept in, across processes.
    pub autotune_cache: String,
    /// The folder compiled kernels are kept in, across processes; `None`: not kept (CubeCL's
    /// default, and always on wgpu, whose runtime keeps only SPIR-V, not built by Burn's wgpu),
    /// each process compiles its own.
    pub kernel_cache: Option<String>,
}

/// The float type a device stores tensors in by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FloatStorage {
    /// 4 bytes per value.
    #[default]
    F32,
    /// bfloat16: 2 bytes, f32's exponent range, 8 significant bits.
    Bf16,
    /// IEEE half: 2 bytes, 11 significant bits, largest finite value 65504.
    F16,
}

impl FloatStorage {
    /// Lower-case name, as in configs and ids (`f32`, `bf16`, `f16`).
    pub fn name(self) -> &'static str {
        match self {
            FloatStorage::F32 => "f32",
            FloatStorage::Bf16 => "bf16",
            FloatStorage::F16 => "f16",
        }
    }

    /// Bytes per value.
    pub const fn bytes(self) -> u64 {
        match self {
            FloatStorage::F32 => 4,
            FloatStorage::Bf16 | FloatStorage::F16 => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_slug_and_refuses_others() {
        for kind in DeviceKind::ALL {
            assert_eq!(kind.name().parse::<DeviceKind>(), Ok(kind));
        }
        let err = "tpu".parse::<DeviceKind>().unwrap_err();
        assert_eq!(err.to_string(), "not a device: 'tpu' (cpu, wgpu, cuda)");
    }

    #[test]
    fn only_the_cpu_has_no_subfolder() {
        assert_eq!(DeviceKind::Cpu.subfolder(), None);
        assert_eq!(DeviceKind::Cuda.subfolder(), Some("cuda"));
    }
}
