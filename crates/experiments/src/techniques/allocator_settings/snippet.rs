use burn::tensor::wgpu::{MemoryConfiguration, WgpuInitError};
use burn::tensor::Device;

/// Choose the pool before the device's first use (an initialised runtime cannot be set up
/// again): every allocation in a page of its own, pages sized in buckets and freed after a
/// while unused.
pub fn setup_device() -> Result<Device, WgpuInitError> {
    Device::wgpu_options()
        .memory_config(MemoryConfiguration::ExclusivePages)
        .init()
}

/// Between phases of different sizes (a long prompt, then short ones), give the pool's unused
/// pages back: the `empty_cache` of CubeCL.
pub fn release_unused(device: &Device) {
    device.memory_cleanup();
}
