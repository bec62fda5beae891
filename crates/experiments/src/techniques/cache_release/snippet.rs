use burn::tensor::backend::Backend;
use burn::tensor::Tensor;

/// A tensor of `elements` f32 values, allocated and left uninitialised.
pub fn allocate<B: Backend>(elements: usize, device: &B::Device) -> Tensor<B, 1> {
    Tensor::empty([elements], device)
}

/// PyTorch's `torch.cuda.empty_cache()`: wait for queued work, then return the pool pages
/// that no live tensor uses to the driver. Tensors still alive keep their pages; on a backend
/// without a pool (Flex, the CPU) it does nothing.
pub fn release_cache<B: Backend>(device: &B::Device) {
    let _ = B::sync(device);
    B::memory_cleanup(device);
}
