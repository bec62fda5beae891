//! What holds the memory at your step's peak: one step of a model of your own recorded on the
//! CPU backend, every allocation of 64 KiB or more traced to the code that made it, written as
//! one HTML page.
//!
//! `cargo run --release -p burn-step-monitor --example attribution [-- OUT.html]` (default
//! `peak.html`). The two lines your own loop needs are the allocator below and the recorder
//! around one step. The process exits 1 if the page's sums do not hold (the traced and untraced
//! bytes must add up to the probe's peak, and the model's layers must be named): `cargo test`
//! runs it as that check.

use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Distribution, Tensor};
use burn_step_monitor::attribution::Recorder;
use burn_step_monitor::host::CountingAllocator;

// Line 1: every heap byte counted, and the large ones traced while a recorder is on.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Your model: a wide layer, a narrow one and a wide head.
#[derive(Module, Debug)]
struct Net {
    wide: Linear,
    narrow: Linear,
    head: Linear,
    relu: Relu,
}

impl Net {
    fn new(device: &Device) -> Self {
        Self {
            wide: LinearConfig::new(256, 2048).init(device),
            narrow: LinearConfig::new(2048, 256).init(device),
            head: LinearConfig::new(256, 1024).init(device),
            relu: Relu::new(),
        }
    }

    fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        let x = self.relu.forward(self.wide.forward(x));
        let x = self.relu.forward(self.narrow.forward(x));
        self.head.forward(x)
    }
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "peak.html".into());
    if !record_and_write(&out) {
        std::process::exit(1);
    }
}

/// Records one step of the network and writes its page to `out`; says whether the page's sums
/// hold.
fn record_and_write(out: &str) -> bool {
    let device = Device::flex().autodiff();
    // Line 2, first half: start before the model is built, so that its weights get a name.
    let mut recorder = Recorder::start();
    let mut model = Net::new(&device);
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<2>::random([512, 256], Distribution::Default, &device);
    let y = Tensor::<2>::random([512, 1024], Distribution::Default, &device);
    let loss_of =
        |model: &Net| MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
    // A first step makes Adam's state; the second is recorded.
    let grads = GradientsParams::from_grads(loss_of(&model).backward(), &model);
    model = optim.step(1e-3, model, grads);
    // Line 2, second half: the recorded step, its phases named.
    recorder.begin_step();
    recorder.phase("forward");
    let loss = loss_of(&model);
    recorder.phase("backward");
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    recorder.phase("optimizer");
    model = optim.step(1e-3, model, grads);
    let report = recorder.end_step();
    drop(model);

    std::fs::write(out, report.html("a 3-layer network, batch 512")).expect("write the page");
    let peak = &report.peak;
    println!(
        "peak {} bytes (probe {}); traced {:.1}%; largest: {}",
        peak.in_use_bytes,
        report.probe_peak_bytes,
        100.0 * peak.traced_share(),
        peak.sites.first().map_or(String::new(), |s| s.site.label())
    );
    let traced: u64 = peak.sites.iter().map(|s| s.bytes).sum();
    let sums = traced + peak.untraced_bytes == report.probe_peak_bytes
        && peak.in_use_bytes == report.probe_peak_bytes;
    let named = peak.sites.iter().any(|s| s.site.code.contains("Linear"));
    if !(sums && named && peak.traced_share() > 0.9) {
        eprintln!("the recording does not add up: sums {sums}, layers named {named}");
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_adds_up_to_the_probes_peak_and_names_the_layers() {
        let dir = std::env::temp_dir().join(format!("attribution-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let page = dir.join("peak.html");
        assert!(super::record_and_write(page.to_str().unwrap()));
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.contains("What holds the peak") && html.contains("Linear::forward"));
    }
}
