use burn::optim::{GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn_step_monitor::attribution::{Recorder, Report};

use crate::harness::models::mlp::{self, Mlp};

// Line 1, in your binary (the workbench's binary has it already): every heap byte counted, and
// the large ones traced while recording.
//
// #[global_allocator]
// static ALLOCATOR: burn_step_monitor::host::CountingAllocator =
//     burn_step_monitor::host::CountingAllocator;

/// Line 2: start the recorder before the model is built (so its weights get a name), step
/// once (Adam makes its state), then record one step, its phases named, and write the page.
pub fn record<B: AutodiffBackend, O: Optimizer<Mlp<B>, B>>(
    recorder: Recorder,
    mut model: Mlp<B>,
    optim: &mut O,
    x: burn::tensor::Tensor<B, 2>,
    y: burn::tensor::Tensor<B, 2>,
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
