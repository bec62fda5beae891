//! The monitor crate (`burn-step-monitor`) on the workbench's devices: a training loop with the
//! monitor around each step, and the monitor's own cost measured as a comparison.
//!
//! `cargo run --release --example memory_monitor [-- --device cpu|wgpu|cuda] [--leak|--cost]
//! [--every N]` (`--features wgpu` or `cuda` for a device). `--leak` keeps each step's
//! evaluation output, computed on the autodiff backend: its graph stays alive, and the monitor
//! says so. `--cost` times the monitor itself: blocks of steps without it (A), with it (B) and
//! without it again (A', the control), interleaved in rotating orders, as a ratio with its 95%
//! interval; `--every N` reads one step in N (`StepMonitor::every`). The crate's own example,
//! with nothing of the workbench, is `cargo run -p burn-step-monitor --example monitor`.

use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Distribution, Tensor};
use burn_step_monitor::StepMonitor;
use experiments::harness::backend::{Backends, OnBackend, Setup};
use experiments::harness::probe::host::CountingAllocator;
use experiments::harness::probe::{MemoryProbe, Monitored};
use results::paired::intervals;
use results::{round_order, DeviceKind, Round};

// On the CPU, the monitor reads this allocator's counters: every heap byte the process holds.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const STEPS: usize = 60;

#[derive(Module, Debug)]
struct Net {
    layers: Vec<Linear>,
    relu: Relu,
}

impl Net {
    fn new(device: &Device) -> Self {
        Self {
            layers: (0..4)
                .map(|_| LinearConfig::new(256, 256).init(device))
                .collect(),
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

/// Your training loop, with the monitor around each step.
struct Loop {
    leak: bool,
    cost: bool,
    every: usize,
}

/// Rounds of the cost comparison (eight cycles of the six orders) and steps per block.
const COST_ROUNDS: usize = 48;
const COST_BLOCK_STEPS: usize = 20;

impl OnBackend for Loop {
    type Output = String;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> String {
        let mut model = Net::new(&device);
        let mut optim = AdamConfig::new().init();
        let x = Tensor::<2>::random([128, 256], Distribution::Default, &device);
        let y = Tensor::<2>::random([128, 256], Distribution::Default, &device);
        let mut kept = Vec::with_capacity(STEPS);
        if self.cost {
            let mut train = || {
                let loss =
                    MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(1e-3, model.clone(), grads);
            };
            return cost(&device, probe, self.every, &mut train);
        }

        let readings = Monitored(probe);
        let mut monitor =
            StepMonitor::new(&readings, burn_step_monitor::sync_of(&device)).every(self.every);
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

/// The monitor's cost on `train`'s step, measured as a paired comparison in this process.
fn cost(device: &Device, probe: &dyn MemoryProbe, every: usize, train: &mut dyn FnMut()) -> String {
    let sync = burn_step_monitor::sync_of(device);
    let readings = Monitored(probe);
    let mut monitor = StepMonitor::new(&readings, &sync).every(every);
    let mut block = |arm: usize, train: &mut dyn FnMut()| {
        sync();
        let started = std::time::Instant::now();
        for _ in 0..COST_BLOCK_STEPS {
            if arm == 1 {
                monitor.step(&mut *train);
            } else {
                train();
            }
        }
        sync();
        started.elapsed().as_secs_f64() / COST_BLOCK_STEPS as f64
    };
    // One warm-up round, then the counted ones.
    for arm in 0..3 {
        block(arm, train);
    }
    let rounds: Vec<Round> = (1..=COST_ROUNDS)
        .map(|r| {
            let mut s = [0.0; 3];
            for arm in round_order(r) {
                s[arm] = block(arm, train);
            }
            Round {
                build: 0,
                baseline_s: s[0],
                technique_s: s[1],
                control_s: s[2],
            }
        })
        .collect();
    let step_ms = 1e3 * rounds.iter().map(|r| r.baseline_s).sum::<f64>() / rounds.len() as f64;
    match intervals(&rounds, 1, 1) {
        Some((cost, control)) => format!(
            "monitor cost per step, reading every {every} step(s): {:+.2}% [{:+.2}%, {:+.2}%] \
             (95%); A/A control: {:+.2}% [{:+.2}%, {:+.2}%]; {} rounds of {} steps, a step \
             {step_ms:.2} ms\n",
            cost.estimate_pct,
            cost.low_pct,
            cost.high_pct,
            control.estimate_pct,
            control.low_pct,
            control.high_pct,
            rounds.len(),
            COST_BLOCK_STEPS,
        ),
        None => "monitor cost: no interval\n".into(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let leak = args.iter().any(|a| a == "--leak");
    let cost = args.iter().any(|a| a == "--cost");
    let every = match args.iter().position(|a| a == "--every") {
        Some(i) => match args.get(i + 1).and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if n > 0 => n,
            _ => {
                eprintln!("--every takes a whole number of steps, 1 or more");
                std::process::exit(2);
            }
        },
        None => 1,
    };
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
    match device.dispatch(Setup::default(), Loop { leak, cost, every }) {
        Ok(summary) => print!("{summary}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
