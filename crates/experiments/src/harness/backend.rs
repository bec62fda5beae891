//! Picks the Burn device and memory probe for a point, so that technique code is written once
//! against Burn 0.22's `Device` (the backend is chosen at run time) and runs on every backend
//! built in.
//!
//! [`Backends`] gives `results::DeviceKind` its dispatch table: `device.dispatch(setup, work)`
//! runs `work` on the device (autodiff, with checkpointing and float type as `setup` says), and
//! `device.identify()` names the device (or refuses it) before any Burn device exists.

use burn::tensor::{Device, DeviceError, FloatDType, IntDType, Tensor};

use results::{DeviceIdentity, DeviceKind, FloatStorage};

use crate::error::ExperimentError;
use crate::harness::driver::{self, DriverError};
use crate::harness::probe::host::HostProbe;
use crate::harness::probe::MemoryProbe;
pub use crate::harness::probe::Pool;

pub use estimator::Checkpointing;

/// Burn's device for a [`Checkpointing`]: the Burn half of the estimator's plan.
pub trait AutodiffOf {
    /// `device` with autodiff on, keeping for backward what this says.
    fn autodiff(self, device: Device) -> Device;
}

impl AutodiffOf for Checkpointing {
    fn autodiff(self, device: Device) -> Device {
        match self {
            Checkpointing::None => device.autodiff(),
            Checkpointing::Balanced => device.autodiff().gradient_checkpointing(),
        }
    }
}

/// Work that runs on whichever backend a device selects.
pub trait OnBackend {
    /// What the work returns.
    type Output;
    /// Runs the work on `device` (autodiff on), measuring with `probe`.
    fn run(self, device: Device, probe: &dyn MemoryProbe) -> Self::Output;
}

/// Burn's name for a float type.
pub fn float_dtype(float: FloatStorage) -> FloatDType {
    match float {
        FloatStorage::F32 => FloatDType::F32,
        FloatStorage::Bf16 => FloatDType::BF16,
        FloatStorage::F16 => FloatDType::F16,
    }
}

/// How the backend of a point is set up before any tensor exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Setup {
    /// What the autodiff backend keeps for backward.
    pub checkpointing: Checkpointing,
    /// The device's default float type.
    pub float: FloatStorage,
    /// How a CubeCL device pools its memory: [`Pool::ExclusivePages`] gives each allocation a
    /// page of its own, so that the bytes it reserves after a phase bound the phase's peak
    /// closely (the points whose phases are bracketed ask for it). Honoured on wgpu (Burn's
    /// `Device::wgpu_options().memory_config`); Burn 0.22 has no such option for CUDA, which
    /// keeps its default. No effect on the CPU.
    pub pool: Pool,
    /// A float type the work computes in beside the one it stores (mixed precision's half
    /// forward pass, a model cast to half): checked, with the stored one, against what the
    /// device supports before anything runs.
    pub compute: Option<FloatStorage>,
}

/// The backend dispatch table of a [`DeviceKind`].
pub trait Backends: Copy {
    /// Checks that the device can be used here and says what it is: its backend is built in
    /// and its driver answers.
    fn identify(self) -> Result<DeviceIdentity, DriverError>;
    /// Runs `work` on the device's backend, set up as `setup` says.
    fn dispatch<W: OnBackend>(self, setup: Setup, work: W) -> Result<W::Output, ExperimentError>;
}

impl Backends for DeviceKind {
    fn identify(self) -> Result<DeviceIdentity, DriverError> {
        driver::identify(self)
    }

    fn dispatch<W: OnBackend>(self, setup: Setup, work: W) -> Result<W::Output, ExperimentError> {
        dispatch(self, setup, work)
    }
}

fn dispatch<W: OnBackend>(
    kind: DeviceKind,
    setup: Setup,
    work: W,
) -> Result<W::Output, ExperimentError> {
    match kind {
        DeviceKind::Cpu => {
            // WORKBENCH_ALLOW_UNCOUNTED: timing-only runs of the uncounted build (probe cost).
            if !HostProbe::is_installed() && std::env::var_os("WORKBENCH_ALLOW_UNCOUNTED").is_none()
            {
                return Err(ExperimentError::ProbeNotInstalled);
            }
            let mut device = Device::flex();
            require_floats(&device, setup)?;
            // Before the first tensor (the warm-up below then multiplies in the same type the
            // work will).
            set_float_storage(&mut device, setup.float)?;
            warm_matmul_workspaces();
            Ok(work.run(setup.checkpointing.autodiff(device), &HostProbe))
        }
        DeviceKind::Wgpu => {
            driver::identify(kind)?;
            #[cfg(feature = "wgpu")]
            {
                let device = wgpu_device(setup.pool)?;
                run_on_cube(device, setup.pool, setup, work)
            }
            #[cfg(not(feature = "wgpu"))]
            unreachable!("identify refuses a backend that is not built")
        }
        DeviceKind::Cuda => {
            driver::identify(kind)?;
            #[cfg(feature = "cuda")]
            {
                // Burn 0.22 offers no pool option for CUDA: it keeps its default.
                run_on_cube(Device::cuda(0), Pool::Adaptive, setup, work)
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("identify refuses a backend that is not built")
        }
    }
}

/// Runs `work` on a CubeCL device whose pool is `pool`, measured by its memory manager.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
fn run_on_cube<W: OnBackend>(
    mut device: Device,
    pool: Pool,
    setup: Setup,
    work: W,
) -> Result<W::Output, ExperimentError> {
    use crate::harness::probe::cube::CubeProbe;
    require_floats(&device, setup)?;
    set_float_storage(&mut device, setup.float)?;
    let probe = CubeProbe::new(&device, pool);
    Ok(work.run(setup.checkpointing.autodiff(device), &probe))
}

/// The default wgpu device, its pool set as `pool` says before its first use (an initialised
/// runtime cannot be configured again).
#[cfg(feature = "wgpu")]
fn wgpu_device(pool: Pool) -> Result<Device, ExperimentError> {
    use burn::tensor::wgpu::MemoryConfiguration;
    let options = Device::wgpu_options();
    let options = match pool {
        Pool::Adaptive => options,
        Pool::ExclusivePages => options.memory_config(MemoryConfiguration::ExclusivePages),
    };
    options
        .init()
        .map_err(|e| ExperimentError::Backend(format!("wgpu: {e}")))
}

/// Refuses work whose stored or computed float type the device lacks (lavapipe has no bf16):
/// [`ExperimentError::Unsupported`], which the runner records as "not supported on this
/// device" rather than as a failure.
fn require_floats(device: &Device, setup: Setup) -> Result<(), ExperimentError> {
    for float in std::iter::once(setup.float).chain(setup.compute) {
        // Storage, conversion and arithmetic (Burn's "general" support).
        if !device.supports_dtype(float_dtype(float)) {
            return Err(ExperimentError::Unsupported {
                lacks: float.name().to_string(),
            });
        }
    }
    Ok(())
}

/// Makes `float` the default float type of `device`. Burn sets it once per device and process,
/// before the first tensor; a later call for the type already set is fine (several points of one
/// type in one process: the benches), a call for another type is refused.
fn set_float_storage(device: &mut Device, float: FloatStorage) -> Result<(), ExperimentError> {
    if float != FloatStorage::F32 {
        match device.configure((float_dtype(float), IntDType::I32)) {
            Ok(()) | Err(DeviceError::AlreadyInitialized { .. }) => {}
            Err(e) => return Err(ExperimentError::Backend(format!("{e:?}"))),
        }
    }
    let current = device.settings().float_dtype;
    if current != float_dtype(float) {
        return Err(ExperimentError::Backend(format!(
            "the device's default float type is already {current:?} in this process; \
             {} needs a process of its own",
            float.name()
        )));
    }
    Ok(())
}

/// Waits for the device's queued work (a no-op on Flex, which runs eagerly).
pub fn sync(device: &Device) {
    // A failed sync surfaces again at the next read of a tensor; nothing to do with it here.
    let _ = device.sync();
}

/// Flex multiplies matrices with the `gemm` crate, which keeps one packing slab the size of the
/// L2 cache per thread (`L2_SLAB`), allocated the first time that thread multiplies and kept for
/// the life of the process. Which pool threads take part in a given matmul depends on
/// scheduling, so without this the slabs (hundreds of KiB each) would appear inside measured
/// phases in some runs and not in others. Every pool thread and the calling thread multiply once
/// here, before anything is measured.
pub fn warm_matmul_workspaces() {
    let multiply = || {
        // 128^3 multiply-adds: below Flex's parallel threshold, so it runs on this thread.
        let a = Tensor::<2>::ones([128, 128], &Device::flex());
        drop(a.clone().matmul(a));
    };
    rayon::broadcast(|_| multiply());
    multiply();
}
