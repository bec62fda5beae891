//! A training loop of your own with the step monitor around each step: the memory of every step
//! and one screen at the end, with a warning when memory in use grows.
//!
//! `cargo run -p burn-step-monitor --example monitor [-- --leak]` on the CPU;
//! `cargo run -p burn-step-monitor --features wgpu --example monitor -- --wgpu [--leak]` on
//! wgpu. `--leak` keeps each step's evaluation output, computed on the autodiff backend: its
//! graph stays alive, and the monitor says so (the process exits 1 if it does not, or if it
//! warns of a loop that does not leak). `cargo test` runs it both ways, on the CPU and, built
//! with `wgpu`, on wgpu.

use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Distribution, Tensor};
use burn_step_monitor::host::{CountingAllocator, HostProbe};
use burn_step_monitor::{sync_of, ReadMemory, StepMonitor};

// On the CPU, the monitor reads this allocator's counters: every heap byte the process holds.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[derive(Module, Debug)]
struct Net {
    layers: Vec<Linear>,
    relu: Relu,
}

impl Net {
    fn new(device: &Device) -> Self {
        let layers = (0..4).map(|_| LinearConfig::new(256, 256).init(device));
        Self {
            layers: layers.collect(),
            relu: Relu::new(),
        }
    }

    fn forward(&self, mut x: Tensor<2>) -> Tensor<2> {
        for layer in &self.layers {
            x = self.relu.forward(layer.forward(x));
        }
        x
    }
}

/// Your loop: 60 steps of Adam on a small network, the monitor around each.
fn train(device: &Device, probe: &dyn ReadMemory, leak: bool) -> bool {
    let mut model = Net::new(device);
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<2>::random([128, 256], Distribution::Default, device);
    let y = Tensor::<2>::random([128, 256], Distribution::Default, device);
    let mut kept = Vec::new();
    let mut monitor = StepMonitor::new(probe, sync_of(device));
    for _ in 0..60 {
        monitor.step(|| {
            let output = model.forward(x.clone());
            let loss = MseLoss::new().forward(output, y.clone(), Reduction::Mean);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(1e-3, model.clone(), grads);
            if leak {
                // Evaluation on the autodiff device, its output kept for later: every step's
                // graph stays alive (run it on `model.valid()` instead).
                kept.push(model.forward(x.clone()));
            }
        });
    }
    print!("{}", monitor.summary());
    monitor.warning().is_some() == leak
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let leak = args.iter().any(|a| a == "--leak");
    let as_expected = if args.iter().any(|a| a == "--wgpu") {
        on_wgpu(leak)
    } else {
        train(&Device::flex().autodiff(), &HostProbe, leak)
    };
    if !as_expected {
        eprintln!("the monitor's warning did not match the loop (--leak: {leak})");
        std::process::exit(1);
    }
}

#[cfg(feature = "wgpu")]
fn on_wgpu(leak: bool) -> bool {
    use burn::tensor::DeviceKind;
    use burn_step_monitor::device::DeviceProbe;
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let probe = DeviceProbe::new(&device).expect("a wgpu device reports its pool");
    train(&device, &probe, leak)
}

#[cfg(not(feature = "wgpu"))]
fn on_wgpu(_leak: bool) -> bool {
    eprintln!("--wgpu: build with `--features wgpu`");
    std::process::exit(2);
}

#[cfg(test)]
mod tests {
    /// Both loops on every backend built in, one after the other: the CPU's probe counts the
    /// whole process's heap, which a test running beside it would add to.
    #[test]
    fn the_monitor_warns_of_the_leaking_loop_and_only_of_it() {
        for leak in [false, true] {
            assert!(super::train(
                &super::Device::flex().autodiff(),
                &super::HostProbe,
                leak
            ));
            #[cfg(feature = "wgpu")]
            assert!(super::on_wgpu(leak));
        }
    }
}
