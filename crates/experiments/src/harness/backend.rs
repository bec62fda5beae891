//! Picks the Burn backend and memory probe for a device, so that technique code is written once,
//! generic over `B: AutodiffBackend`, and instantiated once per backend built in.
//!
//! [`Backends`] gives `results::DeviceKind` its dispatch table: `device.dispatch(setup, work)`
//! runs `work` on the device's backend (with checkpointing and float type as `setup` says), and
//! `device.identify()` names the device (or refuses it) before any Burn device exists.

use burn::backend::autodiff::checkpoint::strategy::BalancedCheckpointing;
use burn::backend::{Autodiff, Flex};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::backend::DeviceError;
use burn::tensor::{get_device_settings, set_default_dtypes, FloatDType, IntDType, Tensor};

use results::{DeviceIdentity, DeviceKind, FloatStorage};

use crate::error::ExperimentError;
use crate::harness::driver::{self, DriverError};
use crate::harness::probe::host::HostProbe;
use crate::harness::probe::MemoryProbe;
pub use crate::harness::probe::Pool;

/// The training backend on the CPU.
pub type CpuBackend = Autodiff<Flex>;

/// The training backend on the CPU with Burn's balanced gradient checkpointing.
pub type CheckpointedCpuBackend = Autodiff<Flex, BalancedCheckpointing>;

/// Which tensors the autodiff backend keeps for backward.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Checkpointing {
    /// `NoCheckpointing`: every tensor a backward step needs is kept from the forward pass.
    #[default]
    None,
    /// `BalancedCheckpointing`: outputs of memory-bound ops are recomputed during backward
    /// from the nearest kept (compute-bound) ancestor instead of being kept.
    Balanced,
}

/// Work that runs on whichever backend a device selects.
pub trait OnBackend {
    /// What the work returns.
    type Output;
    /// Runs the work on backend `B`, measuring with `probe`.
    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> Self::Output;
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
    /// closely (the points whose phases are bracketed ask for it). Honoured on wgpu; cubecl
    /// 0.10 cannot set CUDA's pool, which keeps its default. No effect on the CPU.
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
            require_floats::<Flex>(&Default::default(), setup)?;
            // Before the first tensor (the warm-up below then multiplies in the same type the
            // work will).
            set_float_storage::<Flex>(&Default::default(), setup.float)?;
            warm_matmul_workspaces();
            let checkpointing = setup.checkpointing;
            Ok(match checkpointing {
                Checkpointing::None => work.run::<CpuBackend>(Default::default(), &HostProbe),
                Checkpointing::Balanced => {
                    work.run::<CheckpointedCpuBackend>(Default::default(), &HostProbe)
                }
            })
        }
        DeviceKind::Wgpu => {
            driver::identify(kind)?;
            #[cfg(feature = "wgpu")]
            {
                use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
                run_on_cube::<WgpuRuntime, burn::backend::Wgpu, W>(
                    WgpuDevice::default(),
                    setup,
                    work,
                )
            }
            #[cfg(not(feature = "wgpu"))]
            unreachable!("identify refuses a backend that is not built")
        }
        DeviceKind::Cuda => {
            driver::identify(kind)?;
            #[cfg(feature = "cuda")]
            {
                use burn::backend::cuda::CudaDevice;
                run_on_cube::<cubecl::cuda::CudaRuntime, burn::backend::Cuda, W>(
                    CudaDevice::default(),
                    setup,
                    work,
                )
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("identify refuses a backend that is not built")
        }
    }
}

/// Runs `work` on a CubeCL backend `B` (runtime `R`), measured by CubeCL's memory manager on
/// this thread's stream.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
fn run_on_cube<R, B, W>(
    device: B::Device,
    setup: Setup,
    work: W,
) -> Result<W::Output, ExperimentError>
where
    R: cubecl::Runtime<Device = B::Device>,
    B: burn::tensor::backend::Backend,
    W: OnBackend,
{
    use crate::harness::probe::cube::CubeProbe;
    let pool = configure_pool::<R>(&device, setup.pool);
    require_floats::<B>(&device, setup)?;
    set_float_storage::<B>(&device, setup.float)?;
    let probe = CubeProbe::<R>::new(&device, pool);
    Ok(match setup.checkpointing {
        Checkpointing::None => work.run::<Autodiff<B>>(device, &probe),
        Checkpointing::Balanced => work.run::<Autodiff<B, BalancedCheckpointing>>(device, &probe),
    })
}

/// Sets the pool of a wgpu device as `pool` says, before the device's first use (a later call
/// would panic in CubeCL); says which pool the device has (CUDA keeps its default).
#[cfg(any(feature = "wgpu", feature = "cuda"))]
fn configure_pool<R: cubecl::Runtime>(device: &R::Device, pool: Pool) -> Pool {
    if pool == Pool::SubSlices {
        return Pool::SubSlices;
    }
    #[cfg(feature = "wgpu")]
    {
        use burn::backend::wgpu::{
            graphics::AutoGraphicsApi, init_setup, MemoryConfiguration, RuntimeOptions, WgpuDevice,
        };
        let any: &dyn std::any::Any = device;
        if let Some(wgpu) = any.downcast_ref::<WgpuDevice>() {
            let memory_config = match pool {
                Pool::SubSlices => MemoryConfiguration::SubSlices,
                Pool::ExclusivePages => MemoryConfiguration::ExclusivePages,
            };
            init_setup::<AutoGraphicsApi>(
                wgpu,
                RuntimeOptions {
                    memory_config,
                    ..Default::default()
                },
            );
            return pool;
        }
    }
    let _ = device;
    Pool::SubSlices
}

/// Refuses work whose stored or computed float type the device lacks (lavapipe has no bf16):
/// [`ExperimentError::Unsupported`], which the runner records as "not supported on this
/// device" rather than as a failure.
fn require_floats<B: burn::tensor::backend::Backend>(
    device: &B::Device,
    setup: Setup,
) -> Result<(), ExperimentError> {
    for float in std::iter::once(setup.float).chain(setup.compute) {
        let dtype = float_dtype(float);
        // Storage and arithmetic (Burn's "general" usage); CubeCL's own supports_dtype also
        // asks for dot products, which the points do not need in that type.
        let usage = B::dtype_usage(device, dtype.into());
        if !usage.is_superset(burn::tensor::backend::DTypeUsage::general()) {
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
fn set_float_storage<B: burn::tensor::backend::Backend>(
    device: &B::Device,
    float: FloatStorage,
) -> Result<(), ExperimentError> {
    if float != FloatStorage::F32 {
        match set_default_dtypes::<B>(device, float_dtype(float), IntDType::I32) {
            Ok(()) | Err(DeviceError::AlreadyInitialized { .. }) => {}
            Err(e) => return Err(ExperimentError::Backend(format!("{e:?}"))),
        }
    }
    let current = get_device_settings::<B>(device).float_dtype;
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
pub fn sync<B: AutodiffBackend>(device: &B::Device) {
    // A failed sync surfaces again at the next read of a tensor; nothing to do with it here.
    let _ = B::sync(device);
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
        let a = Tensor::<Flex, 2>::ones([128, 128], &Default::default());
        drop(a.clone().matmul(a));
    };
    rayon::broadcast(|_| multiply());
    multiply();
}
