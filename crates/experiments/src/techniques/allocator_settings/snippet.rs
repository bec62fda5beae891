use burn::backend::wgpu::{
    graphics::AutoGraphicsApi, init_setup, MemoryConfiguration, RuntimeOptions, WgpuDevice,
};
use burn::backend::Wgpu;
use burn::tensor::backend::Backend;

/// Choose the pool before the device's first use (a second init_setup panics): every
/// allocation in a page of its own, pages sized in buckets and freed after a while unused.
fn setup_device() -> WgpuDevice {
    let device = WgpuDevice::default();
    init_setup::<AutoGraphicsApi>(
        &device,
        RuntimeOptions {
            memory_config: MemoryConfiguration::ExclusivePages,
            ..Default::default()
        },
    );
    device
}

/// Between phases of different sizes (a long prompt, then short ones), give the pool's unused
/// pages back: the `empty_cache` of CubeCL.
fn release_unused(device: &WgpuDevice) {
    <Wgpu as Backend>::memory_cleanup(device);
}
