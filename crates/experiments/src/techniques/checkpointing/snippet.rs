use burn::tensor::Device;

/// Checkpointing is a property of the autodiff device, not of the model: the same training
/// code runs on either device. Balanced recomputes the outputs of memory-bound ops (ReLU,
/// add, ...) in backward from the nearest kept output of a compute-bound op (matmul, Linear);
/// nothing else changes. On a GPU: `Device::cuda(0).autodiff().gradient_checkpointing()`.
pub fn devices() -> (Device, Device) {
    let plain = Device::flex().autodiff();
    let checkpointed = Device::flex().autodiff().gradient_checkpointing();
    (plain, checkpointed)
}
