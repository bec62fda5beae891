//! The workbench's step monitor in a training loop of your own: the memory of every step (in
//! use, its peak, the pool's reserved bytes), one screen at the end, and a warning when memory
//! in use grows from step to step.
//!
//! `cargo run --release --example memory_monitor [-- --device cpu|wgpu|cuda] [--leak]`
//! (`--features wgpu` or `cuda` for a device). `--leak` keeps each step's evaluation output,
//! computed on the autodiff backend: its graph stays alive, and the monitor says so.

use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Tensor};
use experiments::harness::backend::{Backends, OnBackend, Setup};
use experiments::harness::probe::host::CountingAllocator;
use experiments::harness::probe::MemoryProbe;
use experiments::monitor::StepMonitor;
use results::DeviceKind;

// On the CPU, the monitor reads this allocator's counters: every heap byte the process holds.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const STEPS: usize = 60;

#[derive(Module, Debug)]
struct Net<B: Backend> {
    layers: Vec<Linear<B>>,
    relu: Relu,
}

impl<B: Backend> Net<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            layers: (0..4)
                .map(|_| LinearConfig::new(256, 256).init(device))
                .collect(),
            relu: Relu::new(),
        }
    }

    fn forward(&self, mut x: Tensor<B, 2>) -> Tensor<B, 2> {
        for layer in &self.layers {
            x = self.relu.forward(layer.forward(x));
        }
        x
    }
}

/// Your training loop, with the monitor around each step.
struct Loop {
    leak: bool,
}

impl OnBackend for Loop {
    type Output = String;

    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> String {
        let mut model = Net::<B>::new(&device);
        let mut optim = AdamConfig::new().init();
        let x = Tensor::<B, 2>::random([128, 256], Distribution::Default, &device);
        let y = Tensor::<B, 2>::random([128, 256], Distribution::Default, &device);
        let mut kept = Vec::with_capacity(STEPS);

        let mut monitor = StepMonitor::new(probe, || {
            let _ = B::sync(&device);
        });
        for _ in 0..STEPS {
            monitor.step(|| {
                let loss =
                    MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(1e-3, model.clone(), grads);
                if self.leak {
                    // Evaluation on the autodiff backend, its output kept for later: every
                    // step's graph stays alive (run it on `model.valid()` instead).
                    kept.push(model.forward(x.clone()));
                }
            });
        }
        monitor.summary()
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let leak = args.iter().any(|a| a == "--leak");
    let device = match args.iter().position(|a| a == "--device") {
        Some(i) => match args.get(i + 1).and_then(|d| d.parse::<DeviceKind>().ok()) {
            Some(d) => d,
            None => {
                eprintln!("--device takes cpu, wgpu or cuda");
                std::process::exit(2);
            }
        },
        None => DeviceKind::Cpu,
    };
    match device.dispatch(Setup::default(), Loop { leak }) {
        Ok(summary) => print!("{summary}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
