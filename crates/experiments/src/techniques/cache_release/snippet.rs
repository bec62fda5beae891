use burn::tensor::{Device, Tensor};

/// A tensor of `elements` f32 values, allocated and left uninitialised.
pub fn allocate(elements: usize, device: &Device) -> Tensor<1> {
    Tensor::empty([elements], device)
}

/// PyTorch's `torch.cuda.empty_cache()`: wait for queued work, then return the pool pages
/// that no live tensor uses to the driver. Tensors still alive keep their pages; on a backend
/// without a pool (Flex, the CPU) it does nothing.
pub fn release_cache(device: &Device) {
    let _ = device.sync();
    device.memory_cleanup();
}
