//! Picks the Burn backend and memory probe for a device, so that experiment code is written once,
//! generic over `B: AutodiffBackend`, and instantiated once per backend built in.

use burn::backend::{Autodiff, Flex};
use burn::tensor::backend::AutodiffBackend;

use crate::device::DeviceKind;
use crate::experiment::ExperimentError;
use crate::probe::host::HostProbe;
use crate::probe::MemoryProbe;

/// The training backend on the CPU.
pub type CpuBackend = Autodiff<Flex>;

/// Work that runs on whichever backend a device selects.
pub trait OnBackend {
    /// What the work returns.
    type Output;
    /// Runs the work on backend `B`, measuring with `probe`.
    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> Self::Output;
}

/// Runs `work` on the backend of `kind`.
pub fn dispatch<W: OnBackend>(kind: DeviceKind, work: W) -> Result<W::Output, ExperimentError> {
    match kind {
        DeviceKind::Cpu => {
            // WORKBENCH_ALLOW_UNCOUNTED: timing-only runs of the uncounted build (probe cost).
            if !HostProbe::is_installed() && std::env::var_os("WORKBENCH_ALLOW_UNCOUNTED").is_none()
            {
                return Err(ExperimentError::ProbeNotInstalled);
            }
            Ok(work.run::<CpuBackend>(Default::default(), &HostProbe))
        }
        DeviceKind::Wgpu => Err(ExperimentError::BackendNotBuilt("wgpu")),
        DeviceKind::Cuda => Err(ExperimentError::BackendNotBuilt("cuda")),
    }
}

/// Waits for the device's queued work (a no-op on Flex, which runs eagerly).
pub fn sync<B: AutodiffBackend>(device: &B::Device) {
    // A failed sync surfaces again at the next read of a tensor; nothing to do with it here.
    let _ = B::sync(device);
}
