//! Allocator settings: Burn's answer to `PYTORCH_CUDA_ALLOC_CONF`.
//!
//! Question: how many bytes does CubeCL's memory manager hold beyond what live tensors use
//! under each of its pool configurations (cubecl 0.11's `MemoryConfiguration`: the default
//! adaptive pool and exclusive pages), for a training step and for a sequence of
//! tensors of growing size (the pattern that leaves a caching pool holding pages no tensor
//! uses), and which setting should a user who runs out of memory with much reserved but
//! unused try?
//! Method: one process per setting and workload, the pool set before the device's first use
//! (`Device::wgpu_options().memory_config(..)` on wgpu; Burn 0.22 cannot choose CUDA's, which
//! runs its default; the CPU has no pool). The sequence allocates tensors of 1, 2, 3, ... times a
//! base size, the last two kept alive, and reads bytes in use and reserved after each
//! allocation, then after the drop and after `memory_cleanup()`. The training step is the
//! shared one (its phases bracketed), with reserved bytes read after it; its proof runs three
//! steps from the point's seed, and the losses are compared across settings.
//! Answer: on the page, per device: the bytes reserved against in use under each setting, and
//! the setting that holds the least beyond its live tensors.

mod analysis;
pub mod predict;
// The snippet sets up a wgpu device: compiled (and kept true to Burn 0.22) where wgpu is built.
#[cfg(feature = "wgpu")]
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::TechniqueId;
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use burn::tensor::Tensor;
use results::{Check, DeviceKind, Metric, PointResult, Profile, PutMetric, Timing, Trace};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Pool, Setup};
use crate::harness::models::{training_mlp, MlpShape};
use crate::harness::probe::{MemoryProbe, MemoryReading, PhaseMeter};
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::timing;
use crate::harness::train::{run_train_point, Proof, TrainChecks, TrainConfig, Trained};
use crate::technique::{Measurement, Planned, Technique};
use burn::tensor::Device;
use estimator::estimate::StepPlan;

results::phase_names! {
    /// The phase allocator settings measures: a sequence of allocations.
    pub enum AllocatorPhase {
        /// The sequence of growing tensors.
        Allocations = "allocations",
    }
}

results::metric_keys! {
    /// What allocator settings measure beyond the shared metrics.
    pub enum AllocatorMetric {
        /// Reserved once the sequence's tensors were dropped: the pools keep their pages.
        ReservedDroppedBytes = "reserved_dropped_bytes",
        /// Reserved after `memory_cleanup()`.
        ReservedReleasedBytes = "reserved_released_bytes",
        /// The most the pools held at once over a sequence of allocations.
        ReservedPeakBytes = "reserved_peak_bytes",
    }
}

/// Tensors of the sequence kept alive at once (the newest ones).
pub const KEEP: usize = 2;

/// Steps of the proof's run from the point's seed, whose losses are compared across settings.
pub const PROOF_STEPS: usize = 3;

/// What a point runs under its pool setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Workload {
    /// An Adam training step of the MLP (the shared training point).
    TrainingStep {
        /// The model.
        shape: MlpShape,
        /// Samples per step.
        batch: usize,
    },
    /// `count` f32 tensors of 1, 2, ..., `count` times `base_bytes`, allocated in turn, the
    /// last [`KEEP`] alive.
    GrowingTensors {
        /// The first tensor's bytes (each next one is one more of these).
        base_bytes: u64,
        /// Tensors allocated.
        count: usize,
    },
}

impl Workload {
    fn id(self) -> &'static str {
        match self {
            Workload::TrainingStep { .. } => "step",
            Workload::GrowingTensors { .. } => "growing",
        }
    }
}

/// Configuration of one allocator-settings point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocConfig {
    /// The pool setting asked for; `None`: not set (the CPU, which has no pool, and CUDA, whose
    /// pool Burn 0.22 cannot choose: its default, adaptive).
    pub pool: Option<Pool>,
    /// What runs under it.
    pub workload: Workload,
}

impl AllocConfig {
    /// The setting's name on the page.
    pub fn setting(&self) -> &'static str {
        self.pool.map_or("the device's default", Pool::name)
    }

    /// The training step this point runs, if it runs one.
    pub fn train(&self) -> Option<TrainConfig> {
        match self.workload {
            Workload::TrainingStep { shape, batch } => Some(self.step(shape, batch)),
            Workload::GrowingTensors { .. } => None,
        }
    }

    /// The Adam step of `shape` at `batch` on this point's pool.
    fn step(&self, shape: MlpShape, batch: usize) -> TrainConfig {
        TrainConfig {
            pool: self.pool.unwrap_or_default(),
            ..TrainConfig::adam(shape, batch)
        }
    }
}

/// The allocator-settings experiment.
pub struct AllocatorSettings;

/// The sequence's first tensor and length at each size: 256 KiB x 16 (up to 4 MiB) quick,
/// 1 MiB x 32 (up to 32 MiB) full, 64 MiB x 32 (up to 2 GiB) on CUDA.
fn growing(sizes: Sizes) -> Workload {
    let (base_bytes, count) = match sizes {
        Sizes::Quick => (256 << 10, 16),
        Sizes::Full => (1 << 20, 32),
        Sizes::FullCuda => (64 << 20, 32),
    };
    Workload::GrowingTensors { base_bytes, count }
}

/// The training step's batch at each size.
fn step_batch(sizes: Sizes) -> usize {
    match sizes {
        Sizes::Quick => 64,
        Sizes::Full => 256,
        Sizes::FullCuda => 4096,
    }
}

impl Technique for AllocatorSettings {
    type Config = AllocConfig;
    const ID: TechniqueId = TechniqueId::AllocatorSettings;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<AllocConfig>> {
        let sizes = Sizes::of(profile, device);
        let pools: Vec<Option<Pool>> = match device {
            DeviceKind::Wgpu => Pool::ALL.into_iter().map(Some).collect(),
            DeviceKind::Cpu | DeviceKind::Cuda => vec![None],
        };
        let workloads = [
            growing(sizes),
            Workload::TrainingStep {
                shape: training_mlp(sizes),
                batch: step_batch(sizes),
            },
        ];
        let mut points = Vec::new();
        for workload in workloads {
            for &pool in &pools {
                let config = AllocConfig { pool, workload };
                let (id, label) = match workload {
                    Workload::TrainingStep { batch, .. } => (
                        format!("{}-{}", workload.id(), pool.map_or("default", Pool::name)),
                        format!("training step, batch {batch}, {}", config.setting()),
                    ),
                    Workload::GrowingTensors { .. } => (
                        format!("{}-{}", workload.id(), pool.map_or("default", Pool::name)),
                        format!("growing tensors, {}", config.setting()),
                    ),
                };
                points.push(Planned::new(id, label, profile, config));
            }
        }
        points
    }

    fn run_point(&self, config: &AllocConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        match config.workload {
            Workload::TrainingStep { shape, batch } => {
                run_train_point(config.step(shape, batch), repeats, device, SameLosses)
            }
            Workload::GrowingTensors { base_bytes, count } => device.dispatch(
                Setup {
                    pool: config.pool.unwrap_or_default(),
                    ..Setup::default()
                },
                GrowingPoint {
                    base_bytes,
                    count,
                    repeats,
                },
            ),
        }
    }

    fn step_plan(&self, config: &AllocConfig) -> Option<StepPlan> {
        config.train().map(|t| t.step_plan())
    }
}

/// The training point's proof: [`PROOF_STEPS`] steps from the point's seed, their losses kept
/// (compared across settings by the analysis: a pool decides where tensors live, not what is
/// computed) and checked to be finite.
pub struct SameLosses;

impl TrainChecks for SameLosses {
    fn checks(&self, t: Trained<'_>) -> Proof {
        let losses = t.loss_curve(PROOF_STEPS);
        let finite = losses.iter().all(|l| l.is_finite());
        let mut proof = Proof::from(vec![Check {
            what: "finite-losses".into(),
            params: Default::default(),
            max_abs_diff: 0.0,
            max_rel_diff: if finite { 0.0 } else { f64::INFINITY },
            tolerance: 0.0,
            passed: finite,
        }
        .with("steps", PROOF_STEPS)]);
        proof.traces.insert(Trace::LossByStep, losses);
        proof
    }
}

/// The sequence of growing tensors, measured once on a pool emptied first, then timed.
pub struct GrowingPoint {
    /// The first tensor's bytes.
    pub base_bytes: u64,
    /// Tensors allocated.
    pub count: usize,
    /// Timed repeats of the whole sequence.
    pub repeats: Repeats,
}

impl GrowingPoint {
    /// Allocates the sequence (each tensor written: zeros), calling `after` after each
    /// allocation with the device synchronised; the last [`KEEP`] tensors are alive when it
    /// returns and are dropped with the returned queue.
    fn run_sequence(&self, device: &Device, mut after: impl FnMut()) -> VecDeque<Tensor<1>> {
        let mut live = VecDeque::with_capacity(KEEP + 1);
        for i in 1..=self.count as u64 {
            let values = (i * self.base_bytes / 4) as usize;
            live.push_back(Tensor::<1>::zeros([values], device));
            if live.len() > KEEP {
                live.pop_front();
            }
            after();
        }
        live
    }
}

impl OnBackend for GrowingPoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let device = device.without_autodiff();
        let sync = || backend::sync(&device);
        // One short sequence first (kernels compiled, the runtime's own buffers made), then an
        // empty pool to start from.
        drop(GrowingPoint { count: 2, ..self }.run_sequence(&device, sync));
        sync();
        probe.release_cache();
        sync();
        let start = probe.read();
        let reserved = |r: &MemoryReading| {
            r.reserved_bytes
                .zip(start.reserved_bytes)
                .map(|(now, then)| now.saturating_sub(then) as f64)
        };
        let (mut in_use, mut held) = (
            Vec::with_capacity(self.count),
            Vec::with_capacity(self.count),
        );
        let mut meter = PhaseMeter::with_capacity(probe, &sync, 1);
        let live = meter.phase(AllocatorPhase::Allocations, || {
            self.run_sequence(&device, || {
                sync();
                let r = probe.read();
                in_use.push(r.in_use_bytes.saturating_sub(start.in_use_bytes) as f64);
                if let Some(b) = reserved(&r) {
                    held.push(b);
                }
            })
        });
        let phases = meter.finish();
        sync();
        let end = probe.read();
        drop(live);
        sync();
        let dropped = probe.read();
        let cleanup_clock = Instant::now();
        let has_cache = probe.release_cache();
        sync();
        let cleanup_s = cleanup_clock.elapsed().as_secs_f64();
        let released = probe.read();

        // The time of the whole sequence, the pool warm from the previous one.
        let mut warm = || {
            drop(self.run_sequence(&device, || {}));
            sync();
        };
        self.repeats.warm_up(&mut warm);
        let timing: Timing = timing::repeat_timed(self.repeats.repeats, self.count as u64, || {
            let clock = Instant::now();
            warm();
            clock.elapsed()
        });

        let mut metrics = BTreeMap::new();
        metrics.put(
            Metric::HeldBytes,
            end.in_use_bytes.saturating_sub(start.in_use_bytes) as f64,
        );
        metrics.put(Metric::HasCache, if has_cache { 1.0 } else { 0.0 });
        if let Some(peak) = held.iter().copied().reduce(f64::max) {
            metrics.put(AllocatorMetric::ReservedPeakBytes, peak);
        }
        if let (Some(d), Some(r)) = (reserved(&dropped), reserved(&released)) {
            metrics.put(AllocatorMetric::ReservedDroppedBytes, d);
            metrics.put(AllocatorMetric::ReservedReleasedBytes, r);
            metrics.put(Metric::CleanupS, cleanup_s);
        }
        let mut traces = BTreeMap::new();
        traces.insert(Trace::InUseBytesByAllocation, in_use);
        if !held.is_empty() {
            traces.insert(Trace::ReservedBytesByAllocation, held);
        }
        PointResult {
            metrics,
            traces,
            ..PointResult::new(probe.info(), phases, timing, self.count as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_runs_both_workloads_on_wgpu_and_the_default_elsewhere() {
        let wgpu = AllocatorSettings.points(Profile::Quick, DeviceKind::Wgpu);
        assert_eq!(wgpu.len(), 2 * Pool::ALL.len());
        let cpu = AllocatorSettings.points(Profile::Quick, DeviceKind::Cpu);
        assert_eq!(cpu.len(), 2);
        assert!(cpu.iter().all(|p| p.config.pool.is_none()));
        let mut ids: Vec<_> = wgpu.iter().map(|p| p.id.clone()).collect();
        ids.dedup();
        assert_eq!(ids.len(), wgpu.len());
    }
}
