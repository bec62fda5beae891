use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Tensor, TensorData};

/// Forward and backward on `device` (autodiff on); Adam's state and the master weights on the
/// host, on the CPU.
pub fn train(device: &Device, x: Tensor<2>, y: Tensor<2>) {
    let config = LinearConfig::new(1024, 1024);
    let mut model: Linear = config.init(device);
    let host_device = Device::flex().autodiff();
    // A wgpu read returns the device's mapped staging buffer, which Flex takes without a
    // copy: copy what the host keeps for the whole run into its own memory if that matters.
    let mut host: Linear = copy(&model, config.init(&host_device), &host_device);
    let mut optim = AdamConfig::new().init();
    for _ in 0..100 {
        let loss = MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
        let mut grads = GradientsParams::from_grads(loss.backward(), &model);
        // Gradients down (each read waits for the device), under the same parameter ids.
        let mut down = ToHost {
            grads: &mut grads,
            host_grads: GradientsParams::new(),
        };
        host.visit(&mut down);
        host = optim.step(1e-3, host, down.host_grads);
        // Weights up: the device keeps only what it computes with.
        model = copy(&host, model, device);
    }
}

/// Takes each gradient off the device and registers it for the host's optimizer.
struct ToHost<'a> {
    grads: &'a mut GradientsParams,
    host_grads: GradientsParams,
}

impl ModuleVisitor for ToHost<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if let Some(g) = self.grads.remove::<D>(param.id) {
            let g = Tensor::<D>::from_data(g.into_data(), &Device::flex());
            self.host_grads.register::<D>(param.id, g);
        }
    }
}

/// `to` with `from`'s values and ids, through TensorData (the route between devices that
/// leaves the copy in the host's own memory).
fn copy<M: Module, N: Module>(from: &M, to: N, device: &Device) -> N {
    let mut read = Read(Vec::new());
    from.visit(&mut read);
    to.map(&mut Write(read.0.into_iter(), device))
}

struct Read(Vec<(ParamId, TensorData)>);

impl ModuleVisitor for Read {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.0.push((param.id, param.val().into_data()));
    }
}

struct Write<'a>(std::vec::IntoIter<(ParamId, TensorData)>, &'a Device);

impl ModuleMapper for Write<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (_, old, mapper) = param.consume();
        let require_grad = old.is_require_grad();
        drop(old);
        let (id, data) = self.0.next().expect("the same module on both sides");
        let value = Tensor::from_data(data, self.1).set_require_grad(require_grad);
        Param::from_mapped_value(id, value, mapper)
    }
}
