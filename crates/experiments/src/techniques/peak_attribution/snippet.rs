use burn::optim::{GradientsParams, ModuleOptimizer};
use burn_step_monitor::attribution::{Recorder, Report};
use burn_step_monitor::host::CountingAllocator;

use crate::harness::models::mlp::{self, Mlp};

/// Line 1, in your binary, marked `#[global_allocator]` (the workbench's binary has one
/// already): every heap byte counted, and the large ones traced while recording.
pub static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Line 2: start the recorder before the model is built (so its weights get a name), step
/// once (Adam makes its state), then record one step, its phases named, and write the page.
pub fn record(
    recorder: Recorder,
    mut model: Mlp,
    optim: &mut ModuleOptimizer,
    x: burn::tensor::Tensor<2>,
    y: burn::tensor::Tensor<2>,
) -> Report {
    let mut recorder = recorder;
    let grads =
        GradientsParams::from_grads(mlp::loss(&model, x.clone(), y.clone()).backward(), &model);
    model = optim.step(1e-3, model, grads);
    recorder.begin_step();
    recorder.phase("forward");
    let loss = mlp::loss(&model, x, y);
    recorder.phase("backward");
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    recorder.phase("optimizer");
    drop(optim.step(1e-3, model, grads));
    let report = recorder.end_step();
    std::fs::write("peak.html", report.html("my model")).expect("write the page");
    report
}
