//! Moving a model's parameters and gradients between two devices through `TensorData` (read
//! back to host memory, then written to the other device), the route the offload measures:
//! every read of a device tensor waits for the device, so the copies are synchronous.
//!
//! Parameters keep their `ParamId` on both sides, so that gradients taken on one backend are
//! registered under the ids the other side's optimizer looks up.

use std::collections::VecDeque;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Tensor, TensorData};

/// Parameters or gradients read back as host data, in visit order, each with its parameter's
/// id.
#[derive(Debug, Default)]
pub struct Moved {
    /// Each float parameter's id and values.
    pub values: VecDeque<(ParamId, TensorData)>,
}

impl Moved {
    /// Bytes of the values moved (what crossed from one backend to the other).
    pub fn bytes(&self) -> u64 {
        self.values
            .iter()
            .map(|(_, d)| d.as_bytes().len() as u64)
            .sum()
    }

    /// The values copied into memory of the host's own heap. A read of a wgpu tensor returns
    /// the device's mapped staging buffer (cubecl-wgpu's `WgpuAllocController`: pinned memory
    /// lent by CubeCL's staging pool), which Flex takes without a copy: a host tensor made from
    /// it stays in that buffer, holds it, and is not counted by the host's allocator. Values the
    /// host keeps (a master copy of the weights) are copied out once.
    pub fn owned(self) -> Self {
        Self {
            values: self
                .values
                .into_iter()
                .map(|(id, d)| {
                    let owned =
                        TensorData::from_bytes_vec(d.as_bytes().to_vec(), d.shape(), d.dtype());
                    (id, owned)
                })
                .collect(),
        }
    }
}

/// Every float parameter of `module`, read back as host data (a device read waits for the
/// device).
pub fn read_params<M: Module>(module: &M) -> Moved {
    struct Read(Moved);
    impl ModuleVisitor for Read {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.values.push_back((param.id, param.val().into_data()));
        }
    }
    let mut read = Read(Moved::default());
    module.visit(&mut read);
    read.0
}

/// Every float parameter's gradient, taken out of `grads` (so that the device frees it once
/// read) and read back as host data. A parameter without a gradient is skipped.
pub fn take_gradients<M: Module>(module: &M, grads: &mut GradientsParams) -> Moved {
    struct Take<'a>(&'a mut GradientsParams, Moved);
    impl ModuleVisitor for Take<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.0.remove::<D>(param.id) {
                self.1.values.push_back((param.id, g.into_data()));
            }
        }
    }
    let mut take = Take(grads, Moved::default());
    module.visit(&mut take);
    take.1
}

/// Gradients moved from another device, as its optimizer takes them: each registered under
/// its parameter's id on `device` (without autodiff, as gradients are). `module` gives each gradient its rank.
pub fn gradients_on<M: Module>(module: &M, moved: Moved, device: &Device) -> GradientsParams {
    struct Register<'a> {
        moved: Moved,
        grads: GradientsParams,
        device: &'a Device,
    }
    impl ModuleVisitor for Register<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let at = self.moved.values.iter().position(|(id, _)| *id == param.id);
            if let Some((id, data)) = at.and_then(|i| self.moved.values.remove(i)) {
                let device = self.device.clone().without_autodiff();
                let grad = Tensor::<D>::from_data(data, &device);
                self.grads.register::<D>(id, grad);
            }
        }
    }
    let mut register = Register {
        moved,
        grads: GradientsParams::new(),
        device,
    };
    module.visit(&mut register);
    register.grads
}

/// `module` with its float parameters replaced, in visit order, by `moved`'s values written to
/// `device` under `moved`'s ids; each old value is dropped before its replacement is written,
/// so that at most one parameter exists twice. Whether a parameter requires a gradient is kept.
///
/// # Panics
///
/// If `moved` holds fewer parameters than `module` (it was read from another model).
pub fn load_params<M: Module>(module: M, moved: Moved, device: &Device) -> M {
    struct Load<'a> {
        moved: Moved,
        device: &'a Device,
    }
    impl ModuleMapper for Load<'_> {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
            let (_, old, mapper) = param.consume();
            let require_grad = old.is_require_grad();
            drop(old);
            let (id, data) = self
                .moved
                .values
                .pop_front()
                .expect("one value per parameter, read from the same model");
            let value = Tensor::<D>::from_data(data, self.device).set_require_grad(require_grad);
            Param::from_mapped_value(id, value, mapper)
        }
    }
    module.map(&mut Load { moved, device })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::models::{mlp, BuildModel, MlpShape, ModelShape};

    #[test]
    fn parameters_and_gradients_cross_with_their_ids() {
        let device = Device::flex().autodiff();
        let shape = ModelShape::Mlp(MlpShape { width: 8, depth: 2 });
        let a = shape.init(&device);
        let b = load_params(shape.init(&device), read_params(&a), &device);
        assert_eq!(mlp::flatten(&a, None), mlp::flatten(&b, None));
        let ids = |m: &crate::harness::models::Model| {
            read_params(m)
                .values
                .into_iter()
                .map(|(id, _)| id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&a), ids(&b), "the ids cross with the values");

        let batch = shape.batch(4, 1, &device);
        let mut grads = GradientsParams::from_grads(a.loss(&batch).backward(), &a);
        let expected = mlp::flatten(&a, Some(&grads));
        let moved = take_gradients(&a, &mut grads);
        assert_eq!(moved.bytes(), 4 * shape.num_params());
        assert!(grads.is_empty(), "every gradient was taken out");
        let on_b = gradients_on(&b, moved, &device);
        assert_eq!(mlp::flatten(&b, Some(&on_b)), expected);
    }
}
