//! Finding the device driver before any Burn device exists.
//!
//! Burn's device backends create their device on a thread of their own; without a driver that
//! thread panics and the caller panics after it. These checks run first, so that a machine
//! without a GPU or a Vulkan driver gets one clear line instead of a backtrace.

use results::{DeviceIdentity, DeviceKind};

/// Why a device cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// The backend is not compiled into this binary.
    #[error("the {0} backend is not built into this binary (rebuild with `--features {0}`)")]
    NotBuilt(&'static str),
    /// No driver (or no device) was found.
    #[error("{0}")]
    NotFound(String),
}

/// Checks that `kind` can be used here and says what it is (through
/// [`Backends::identify`](super::backend::Backends::identify)).
pub(crate) fn identify(kind: DeviceKind) -> Result<DeviceIdentity, DriverError> {
    match kind {
        DeviceKind::Cpu => Ok(DeviceIdentity {
            name: "host CPU (Flex)".into(),
            driver: None,
            total_memory_bytes: None,
            free_memory_bytes: None,
            software: false,
            cubecl: None,
        }),
        DeviceKind::Wgpu => wgpu_identity(),
        DeviceKind::Cuda => cuda_identity(),
    }
}

/// Whether `kind`'s driver is a software one (lavapipe), looked up once per process; false
/// where the driver cannot be found (the backend then fails on its own, with its own message).
pub fn is_software(kind: DeviceKind) -> bool {
    static WGPU: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    match kind {
        DeviceKind::Cpu | DeviceKind::Cuda => false,
        DeviceKind::Wgpu => *WGPU.get_or_init(|| wgpu_identity().is_ok_and(|i| i.software)),
    }
}

#[cfg(feature = "wgpu")]
fn wgpu_identity() -> Result<DeviceIdentity, DriverError> {
    // The wgpu Burn's runtime is built on, as Burn re-exports it.
    use burn::tensor::wgpu::wgpu;
    // The adapter Burn's default wgpu device would pick (CubeCL's AutoGraphicsApi is Vulkan on
    // Linux), looked up without creating a device.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let adapter = adapters.into_iter().next().ok_or_else(|| {
        DriverError::NotFound(
            "no Vulkan driver found: wgpu sees no adapter (install a Vulkan driver, e.g. \
             Debian's mesa-vulkan-drivers for a software one)"
                .into(),
        )
    })?;
    let info = adapter.get_info();
    Ok(DeviceIdentity {
        name: format!("{} ({:?}, {:?})", info.name, info.device_type, info.backend),
        driver: Some(
            format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
        ),
        total_memory_bytes: None,
        free_memory_bytes: None,
        software: info.device_type == wgpu::DeviceType::Cpu,
        // CubeCL's wgpu runtime keeps compiled kernels only as SPIR-V, a feature Burn's wgpu
        // does not build: each process compiles its own WGSL (the driver may cache shaders).
        cubecl: Some(cubecl_settings(false)),
    })
}

/// CubeCL's compilation and autotune settings as this process reads them: the measured
/// children run in the same folder with the same environment, so they read the same.
/// `keeps_kernels`: whether the runtime reads `[compilation] cache` at all.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
fn cubecl_settings(keeps_kernels: bool) -> results::CubeclSettings {
    use cubecl::config::{autotune::AutotuneLevel, CubeClRuntimeConfig, RuntimeConfig};
    // Read as `get` would, without installing it: CubeCL 0.11 freezes its configuration on the
    // first `get`, and a point child identifies its device before the point may set its own
    // (Memory over many steps' `max_streams = 1`, which panicked here on 0.22.1).
    let config = CubeClRuntimeConfig::from_current_dir().override_from_env();
    // CubeCL 0.11 keeps autotune results and compiled kernels in one environment database.
    let environment = cubecl_environment::environment::path()
        .display()
        .to_string();
    let level = match config.autotune.level {
        AutotuneLevel::Minimal => "minimal",
        AutotuneLevel::Balanced => "balanced",
        AutotuneLevel::Extensive => "extensive",
        AutotuneLevel::Full => "full",
    };
    results::CubeclSettings {
        autotune_level: level.into(),
        autotune_cache: if config.autotune.disable_cache {
            String::new()
        } else {
            environment.clone()
        },
        kernel_cache: (config.compilation.cache && keeps_kernels).then_some(environment),
    }
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_identity() -> Result<DeviceIdentity, DriverError> {
    Err(DriverError::NotBuilt("wgpu"))
}

#[cfg(feature = "cuda")]
fn cuda_identity() -> Result<DeviceIdentity, DriverError> {
    use cudarc::driver::{result, sys};
    // cudarc loads libcuda lazily and panics if it is missing: look for it first.
    let mut last_error = String::new();
    let found = ["libcuda.so.1", "libcuda.so"].iter().any(|name| {
        // SAFETY: loading the CUDA driver library runs its initialisers, as cudarc itself
        // would on first use; the handle is dropped at once.
        match unsafe { libloading::Library::new(*name) } {
            Ok(_) => true,
            Err(e) => {
                // libloading's message is "dlopen failed"; the loader's reason is its source.
                last_error = match std::error::Error::source(&e) {
                    Some(reason) => format!("{e}: {reason}"),
                    None => e.to_string(),
                };
                false
            }
        }
    });
    if !found {
        return Err(DriverError::NotFound(format!(
            "no CUDA driver found (libcuda.so): {last_error}"
        )));
    }
    let not_found = |what: &str, e: result::DriverError| {
        DriverError::NotFound(format!("CUDA driver present but {what} failed: {e:?}"))
    };
    result::init().map_err(|e| not_found("cuInit", e))?;
    let count = result::device::get_count().map_err(|e| not_found("device count", e))?;
    if count < 1 {
        return Err(DriverError::NotFound(
            "CUDA driver present but it reports no device".into(),
        ));
    }
    let dev = result::device::get(0).map_err(|e| not_found("cuDeviceGet", e))?;
    let name = result::device::get_name(dev).map_err(|e| not_found("device name", e))?;
    // SAFETY: `dev` is a valid device handle from cuDeviceGet.
    let total = unsafe { result::device::total_mem(dev) }
        .ok()
        .map(|b| b as u64);
    let mut version: std::os::raw::c_int = 0;
    // SAFETY: cuDriverGetVersion writes one int to the pointer it is given.
    let driver = unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .ok()
        .map(|_| {
            format!(
                "CUDA driver API {}.{}",
                version / 1000,
                (version % 1000) / 10
            )
        });
    // Free memory needs a context: the primary context, which the CUDA backend uses too.
    let free = cudarc::driver::CudaContext::new(0)
        .ok()
        .and_then(|_ctx| result::mem_get_info().ok())
        .map(|(free, _)| free as u64);
    Ok(DeviceIdentity {
        name,
        driver,
        total_memory_bytes: total,
        free_memory_bytes: free,
        software: false,
        cubecl: Some(cubecl_settings(true)),
    })
}

/// Bytes taken on CUDA device 0, as the driver says (total less free), read in the primary
/// context the CUDA backend uses.
#[cfg(feature = "cuda")]
pub fn cuda_used_bytes() -> Option<u64> {
    let _context = cudarc::driver::CudaContext::new(0).ok()?;
    let (free, total) = cudarc::driver::result::mem_get_info().ok()?;
    Some(total.saturating_sub(free) as u64)
}

#[cfg(not(feature = "cuda"))]
fn cuda_identity() -> Result<DeviceIdentity, DriverError> {
    Err(DriverError::NotBuilt("cuda"))
}
