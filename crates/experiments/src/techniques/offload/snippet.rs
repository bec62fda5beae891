use std::marker::PhantomData;

use burn::backend::{Autodiff, Flex};
use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Tensor, TensorData};

/// The host: Adam steps an autodiff copy of the model here, on the CPU.
type Host = Autodiff<Flex>;

/// Forward and backward on the device; Adam's state and the master weights on the host.
fn train<B: AutodiffBackend>(device: &B::Device, x: Tensor<B, 2>, y: Tensor<B, 2>) {
    let config = LinearConfig::new(1024, 1024);
    let mut model: Linear<B> = config.init(device);
    let host_device = Default::default();
    // A wgpu read returns the device's mapped staging buffer, which Flex takes without a
    // copy: copy what the host keeps for the whole run into its own memory if that matters.
    let mut host: Linear<Host> = copy(&model, config.init(&host_device), &host_device);
    let mut optim = AdamConfig::new().init::<Host, Linear<Host>>();
    for _ in 0..100 {
        let loss = MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
        let mut grads = GradientsParams::from_grads(loss.backward(), &model);
        // Gradients down (each read waits for the device), under the same parameter ids.
        let mut down = ToHost::<B> {
            grads: &mut grads,
            host_grads: GradientsParams::new(),
            device: PhantomData,
        };
        host.visit(&mut down);
        host = optim.step(1e-3, host, down.host_grads);
        // Weights up: the device keeps only what it computes with.
        model = copy(&host, model, device);
    }
}

/// Takes each gradient off the device and registers it for the host's optimizer.
struct ToHost<'a, B: AutodiffBackend> {
    grads: &'a mut GradientsParams,
    host_grads: GradientsParams,
    device: PhantomData<B>,
}

impl<B: AutodiffBackend> ModuleVisitor<Host> for ToHost<'_, B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<Host, D>>) {
        if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
            let g = Tensor::<Flex, D>::from_data(g.into_data(), &Default::default());
            self.host_grads.register::<Flex, D>(param.id, g);
        }
    }
}

/// `to` with `from`'s values and ids, through TensorData (Burn's route between backends).
fn copy<A: Backend, B: Backend, M: Module<A>, N: Module<B>>(
    from: &M,
    to: N,
    device: &B::Device,
) -> N {
    let mut read = Read(Vec::new());
    from.visit(&mut read);
    to.map(&mut Write(read.0.into_iter(), device))
}

struct Read(Vec<(ParamId, TensorData)>);

impl<B: Backend> ModuleVisitor<B> for Read {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        self.0.push((param.id, param.val().into_data()));
    }
}

struct Write<'a, B: Backend>(std::vec::IntoIter<(ParamId, TensorData)>, &'a B::Device);

impl<B: Backend> ModuleMapper<B> for Write<'_, B> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (_, old, mapper) = param.consume();
        let require_grad = old.is_require_grad();
        drop(old);
        let (id, data) = self.0.next().expect("the same module on both sides");
        let value = Tensor::from_data(data, self.1).set_require_grad(require_grad);
        Param::from_mapped_value(id, value, mapper)
    }
}
