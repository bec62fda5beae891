//! A stack of square `Linear` layers with ReLU between them, trained to regress random targets.
//!
//! Square layers make every figure easy to predict: `depth * (width^2 + width)` parameters, and a
//! forward pass that keeps about two `width`-sized tensors per layer and sample for backward.

use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::GradientsParams;
use burn::tensor::activation::relu;
use burn::tensor::Device;
use burn::tensor::{Distribution, FloatDType, Tensor};

/// `depth` Linear(width, width) layers, ReLU between them (not after the last).
#[derive(Module, Debug)]
pub struct Mlp {
    /// The layers, input first.
    pub layers: Vec<Linear>,
}

impl Mlp {
    /// Runs the layers.
    pub fn forward(&self, input: Tensor<2>) -> Tensor<2> {
        let last = self.layers.len().saturating_sub(1);
        let mut x = input;
        for (i, layer) in self.layers.iter().enumerate() {
            x = layer.forward(x);
            if i < last {
                x = relu(x);
            }
        }
        x
    }
}

pub use estimator::MlpShape;

/// Builds an [`Mlp`] of a shape: the Burn half of [`MlpShape`].
pub trait BuildMlp {
    /// Builds the model with Burn's default initialisation on `device`.
    fn init(&self, device: &Device) -> Mlp;
    /// Random inputs and regression targets for a batch, from the backend's seeded generator.
    fn batch(&self, batch: usize, device: &Device) -> (Tensor<2>, Tensor<2>);
}

impl BuildMlp for MlpShape {
    fn init(&self, device: &Device) -> Mlp {
        let layers = (0..self.depth)
            .map(|_| LinearConfig::new(self.width, self.width).init(device))
            .collect();
        Mlp { layers }
    }
    fn batch(&self, batch: usize, device: &Device) -> (Tensor<2>, Tensor<2>) {
        let x = Tensor::random([batch, self.width], Distribution::Normal(0.0, 1.0), device);
        let y = Tensor::random([batch, self.width], Distribution::Normal(0.0, 1.0), device);
        (x, y)
    }
}

/// Mean squared error of the model's output against the targets.
pub fn loss(model: &Mlp, x: Tensor<2>, y: Tensor<2>) -> Tensor<1> {
    MseLoss::new().forward(model.forward(x), y, Reduction::Mean)
}

/// The loss with the forward pass in `dtype` (`model` already cast), the error in f32.
pub(super) fn loss_cast(model: &Mlp, x: Tensor<2>, y: Tensor<2>, dtype: FloatDType) -> Tensor<1> {
    let out = model.forward(x.cast(dtype)).cast(FloatDType::F32);
    MseLoss::new().forward(out, y, Reduction::Mean)
}

/// Collects a module's float parameters, or their gradients, as one flat vector in visit order.
struct Flatten<'a> {
    grads: Option<&'a GradientsParams>,
    values: Vec<f32>,
}

impl ModuleVisitor for Flatten<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let data = match self.grads {
            Some(grads) => match grads.get::<D>(param.id) {
                Some(g) => g.into_data(),
                None => return,
            },
            None => param.val().into_data(),
        };
        // 16-bit values widen exactly to f32.
        self.values.extend(
            data.convert::<f32>()
                .try_to_vec::<f32>()
                .expect("float parameters"),
        );
    }
}

/// A model's parameters (`grads` None) or their gradients, as f32 values in visit order.
pub fn flatten<M: Module>(model: &M, grads: Option<&GradientsParams>) -> Vec<f32> {
    let mut visitor = Flatten {
        grads,
        values: Vec::new(),
    };
    model.visit(&mut visitor);
    visitor.values
}

/// `n` values of `model`'s gradients, evenly spaced over its parameters in visit order (the
/// value at `i * count / n` for `i` in `0..n`, a parameter without a gradient reading 0), as
/// f32, into `out` (cleared first; its room made beforehand, the sample allocates nothing that
/// outlives it): enough to tell two computations of the same step apart without holding a
/// copy of every gradient (GPT-2 small's are 650 MB). One parameter's gradient is read at a
/// time.
pub fn sample_gradients<M: Module>(
    model: &M,
    grads: &GradientsParams,
    n: usize,
    out: &mut Vec<f32>,
) {
    let count = model.num_params();
    let n = n.min(count);
    out.clear();
    let mut visitor = Sample {
        grads,
        position: |i: usize| (i as u128 * count as u128 / n as u128) as usize,
        n,
        next: 0,
        offset: 0,
        values: out,
    };
    model.visit(&mut visitor);
}

/// Collects the gradient values at `position(0..n)` (increasing) of a module's flattened
/// parameters.
struct Sample<'a, P> {
    grads: &'a GradientsParams,
    position: P,
    n: usize,
    next: usize,
    offset: usize,
    values: &'a mut Vec<f32>,
}

impl<P: Fn(usize) -> usize> ModuleVisitor for Sample<'_, P> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let end = self.offset + param.shape().num_elements();
        let start = self.next;
        while self.next < self.n && (self.position)(self.next) < end {
            self.next += 1;
        }
        if self.next > start {
            let wanted = (start..self.next).map(|i| (self.position)(i) - self.offset);
            match self.grads.get::<D>(param.id) {
                Some(g) => {
                    // 16-bit values widen exactly to f32.
                    let values = g
                        .into_data()
                        .convert::<f32>()
                        .try_to_vec::<f32>()
                        .expect("float gradients");
                    self.values.extend(wanted.map(|p| values[p]));
                }
                None => self.values.extend(wanted.map(|_| 0.0)),
            }
        }
        self.offset = end;
    }
}

/// Burn initialises parameters lazily: `init()` allocates nothing until a parameter is first
/// read. This reads every float parameter once, so that the model's memory is live (and can be
/// measured) before the first step.
pub fn materialize<M: Module>(module: &M) {
    struct Touch;
    impl ModuleVisitor for Touch {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            drop(param.val());
        }
    }
    module.visit(&mut Touch);
}
