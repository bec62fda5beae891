//! One build of a paired comparison on one model that takes the three arms' turns: for a
//! technique one model switches on and off between its steps (the allocation recorder,
//! burn-memory-efficient's ops), so one set-up serves the baseline, the technique and the
//! control, and no arm is built before another. The rounds are
//! [`paired::time_one_model`]'s; each technique says only how its arm takes a step.

use std::time::Instant;

use burn::optim::ModuleOptimizer;
use burn::tensor::Device;
use results::{Build, BuildPlan, DeviceKind, PairSettings};

use crate::harness::backend::{self, OnBackend};
use crate::harness::models::{train_step, Batch, Model, StepReads};
use crate::harness::optim::{BuildOptimizer, UseOptimizer};
use crate::harness::paired;
use crate::harness::probe::{MemoryProbe, PhaseMeter};
use crate::harness::profile::Repeats;
use crate::harness::train::{set_up, SetUp, TrainConfig};
use crate::technique::Measured;

/// How one arm takes its turn at a step of the shared model.
pub trait Turn {
    /// Arm `arm`'s step (0 the baseline, 1 the technique, 2 the control): `step` runs one
    /// training step of the model it is given, its phases metered, and gives the model back.
    fn take(&self, arm: usize, model: Model, step: &mut dyn FnMut(Model) -> Model) -> Model;
}

/// The build: `train`'s model and batch, set up once, each arm's steps taken as `turn` says.
pub struct TakingTurns<T> {
    /// The step every arm trains.
    pub train: TrainConfig,
    /// How each arm takes its step.
    pub turn: T,
    /// The pairs' settings.
    pub settings: PairSettings,
    /// The build's rounds.
    pub plan: BuildPlan,
}

impl<T: Turn> OnBackend for TakingTurns<T> {
    type Output = Measured<Build>;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> Self::Output {
        let SetUp { model, batch, .. } = set_up(&self.train, &device, probe);
        self.train.optimizer.with(Turns {
            build: self,
            device: &device,
            probe,
            model,
            batch: &batch,
        })
    }
}

/// The build's model, its optimizer to be built.
struct Turns<'a, T> {
    build: TakingTurns<T>,
    device: &'a Device,
    probe: &'a dyn MemoryProbe,
    model: Model,
    batch: &'a Batch,
}

impl<T: Turn> UseOptimizer for Turns<'_, T> {
    type Output = Measured<Build>;

    fn with(self, mut optim: ModuleOptimizer) -> Self::Output {
        let Turns {
            build,
            device,
            probe,
            model,
            batch,
        } = self;
        let (c, sync) = (build.train, || backend::sync(device));
        let mut step = |m: Model| {
            let mut meter = PhaseMeter::with_capacity(probe, &sync, 4);
            let reads = StepReads::default();
            let m = train_step(&mut meter, m, &mut optim, c.lr, batch, 1, None, reads);
            drop(meter.finish());
            m
        };
        let mut model = Some(model);
        let block = |arm: usize, steps: usize| {
            let clock = Instant::now();
            for _ in 0..steps {
                model = Some(build.turn.take(arm, model.take()?, &mut step));
            }
            Some(clock.elapsed().as_secs_f64() / steps.max(1) as f64)
        };
        let (_, units) = c.shape.units(c.batch);
        let min_warmup = Repeats::on(0, 0, DeviceKind::Cpu).min_warmup;
        paired::time_one_model(block, units, &build.settings, build.plan, min_warmup)
    }
}
