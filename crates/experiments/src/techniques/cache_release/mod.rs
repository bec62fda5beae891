//! Cache release: what an allocator keeps after a tensor is freed, what `memory_cleanup()`
//! gives back, and what the next allocation pays for it.
//!
//! Question: what does a caching allocator keep after a tensor dies, what does releasing it
//! (`memory_cleanup()`, PyTorch's `empty_cache`) give back, and what does the next allocation
//! pay?
//! Method: for tensors at three sizes, each point in its own process, bytes in use and reserved
//! at the start, with the tensor alive, after it is dropped and after the cleanup; one
//! allocation served from the pool timed against one made after a cleanup.
//! Answer: CubeCL's memory manager (wgpu, CUDA) keeps the pages of freed tensors reserved until
//! `memory_cleanup()` returns them; on the CPU there is no pool to release, and Flex's
//! `Tensor::empty` peaks at twice the tensor.

mod analysis;
pub mod predict;
#[allow(dead_code, missing_docs)]
#[doc(hidden)]
pub mod snippet;

use results::TechniqueId;
use std::collections::BTreeMap;
use std::time::Instant;

use results::{ComparisonSpec, DeviceKind, Metric, PointResult, Profile, PutMetric};
use serde::{Deserialize, Serialize};

use crate::harness::backend::{self, Backends, OnBackend, Setup};
use crate::harness::probe::MemoryProbe;
use crate::harness::profile::{Repeats, Sizes};
use crate::harness::single_op::measure_op;
use crate::technique::{Measurement, Planned, Row, Technique};
use burn::tensor::Device;
use snippet::{allocate, release_cache};

results::phase_names! {
    /// The phase cache release times: one allocation.
    pub enum CachePhase {
        /// The timed allocation, from the pool or after a cleanup.
        Allocate = "allocate",
    }
}

results::metric_keys! {
    /// The counters cache release reads around one tensor's life beyond the shared metrics.
    pub enum CacheMetric {
        /// In use with the tensor alive (cache release).
        InUseAliveBytes = "in_use_alive_bytes",
        /// In use once the tensor was dropped (cache release).
        InUseDroppedBytes = "in_use_dropped_bytes",
        /// In use after `memory_cleanup()` (cache release).
        InUseReleasedBytes = "in_use_released_bytes",
        /// In use at the start (cache release).
        InUseStartBytes = "in_use_start_bytes",
        /// Reserved with the tensor alive (cache release).
        ReservedAliveBytes = "reserved_alive_bytes",
        /// Reserved at the start (cache release).
        ReservedStartBytes = "reserved_start_bytes",
        /// Reserved once the tensor was dropped: the pool keeps its pages.
        ReservedDroppedBytes = "reserved_dropped_bytes",
        /// Reserved after `memory_cleanup()`.
        ReservedReleasedBytes = "reserved_released_bytes",
    }
}

/// Where the measured allocation comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The previous tensor of the same size was dropped just before: its pages are reused.
    Cached,
    /// `memory_cleanup()` ran after the drop: the pages come from the driver again.
    AfterCleanup,
}

impl Source {
    /// The source's id part.
    pub fn id(self) -> &'static str {
        match self {
            Source::Cached => "cached",
            Source::AfterCleanup => "after-cleanup",
        }
    }

    /// The source in sentences.
    pub fn name(self) -> &'static str {
        match self {
            Source::Cached => "from the cache",
            Source::AfterCleanup => "after memory_cleanup()",
        }
    }
}

/// Configuration of one cache-release point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheConfig {
    /// Bytes of the f32 tensor allocated and freed.
    pub tensor_bytes: u64,
    /// Where each measured allocation comes from.
    pub source: Source,
}

/// The cache-release experiment.
pub struct CacheRelease;

fn sizes_mib(sizes: Sizes) -> Vec<u64> {
    match sizes {
        Sizes::Quick => vec![4, 16, 64],
        Sizes::Full => vec![16, 128, 512],
        Sizes::FullCuda => vec![256, 4096, 32768],
    }
}

/// A moment of the demonstration at which the counters are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// Before the tensor exists.
    Start,
    /// With the tensor alive.
    Alive,
    /// After the tensor is dropped.
    Dropped,
    /// After `memory_cleanup()`.
    Released,
}

/// A counter of the probe read at each [`Moment`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Bytes held by live tensors.
    InUse,
    /// Bytes the backend's pools hold.
    Reserved,
}

impl Counter {
    /// The metric of this counter at `moment`.
    pub fn at(self, moment: Moment) -> CacheMetric {
        match (self, moment) {
            (Counter::InUse, Moment::Start) => CacheMetric::InUseStartBytes,
            (Counter::InUse, Moment::Alive) => CacheMetric::InUseAliveBytes,
            (Counter::InUse, Moment::Dropped) => CacheMetric::InUseDroppedBytes,
            (Counter::InUse, Moment::Released) => CacheMetric::InUseReleasedBytes,
            (Counter::Reserved, Moment::Start) => CacheMetric::ReservedStartBytes,
            (Counter::Reserved, Moment::Alive) => CacheMetric::ReservedAliveBytes,
            (Counter::Reserved, Moment::Dropped) => CacheMetric::ReservedDroppedBytes,
            (Counter::Reserved, Moment::Released) => CacheMetric::ReservedReleasedBytes,
        }
    }
}

impl Technique for CacheRelease {
    type Config = CacheConfig;
    const ID: TechniqueId = TechniqueId::CacheRelease;
    const SNIPPET: &'static str = include_str!("snippet.rs");

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Planned<CacheConfig>> {
        let mut points = Vec::new();
        for mib in sizes_mib(Sizes::of(profile, device)) {
            for source in [Source::Cached, Source::AfterCleanup] {
                points.push(Planned::new(
                    format!("{}-{mib}-mib", source.id()),
                    format!("{mib} MiB {}", source.name()),
                    profile,
                    CacheConfig {
                        tensor_bytes: mib << 20,
                        source,
                    },
                ));
            }
        }
        points
    }

    fn comparisons(&self, rows: &[Row<'_, CacheConfig>]) -> Vec<ComparisonSpec> {
        analysis::comparisons(rows)
    }

    fn run_point(&self, config: &CacheConfig, repeats: Repeats, device: DeviceKind) -> Measurement {
        device.dispatch(
            Setup::default(),
            CachePoint {
                config: *config,
                repeats,
            },
        )
    }
}

/// Measures one size and source.
pub struct CachePoint {
    /// What to allocate, and from where.
    pub config: CacheConfig,
    /// Untimed and timed repeats.
    pub repeats: Repeats,
}

impl OnBackend for CachePoint {
    type Output = PointResult;

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> PointResult {
        let device = device.without_autodiff();
        let c = self.config;
        let sync = || backend::sync(&device);
        let elements = (c.tensor_bytes / 4) as usize;
        let allocate = || allocate(elements, &device);
        // The probe reports reserved bytes where the backend has a pool to release.
        let has_cache = probe.summary().reserved_bytes.is_some();

        // The demonstration: counters at four moments.
        let mut metrics = BTreeMap::new();
        let mut moment = |moment: Moment| {
            sync();
            let s = probe.summary();
            metrics.put(Counter::InUse.at(moment), s.in_use_bytes as f64);
            if let Some(r) = s.reserved_bytes {
                metrics.put(Counter::Reserved.at(moment), r as f64);
            }
        };
        moment(Moment::Start);
        let tensor = allocate();
        moment(Moment::Alive);
        drop(tensor);
        moment(Moment::Dropped);
        let clock = Instant::now();
        release_cache(&device);
        sync();
        let cleanup_s = clock.elapsed().as_secs_f64();
        moment(Moment::Released);

        // The timed allocation, from the cache or after a cleanup; the set-up (the cleanup, or
        // one tensor of the size allocated and freed to fill the pool) is outside the clock.
        let m = measure_op(
            probe,
            &sync,
            CachePhase::Allocate,
            self.repeats,
            1,
            || match c.source {
                Source::AfterCleanup => release_cache(&device),
                Source::Cached => drop(allocate()),
            },
            |()| allocate(),
        );

        metrics.put(Metric::TensorBytes, c.tensor_bytes as f64);
        metrics.put(Metric::CleanupS, cleanup_s);
        metrics.put(Metric::HasCache, if has_cache { 1.0 } else { 0.0 });
        metrics.put(
            Metric::RepeatDeltaSpreadBytes,
            m.repeat_delta_spread_bytes as f64,
        );
        let timing = m.timing;
        PointResult {
            metrics,
            ..PointResult::new(probe.info(), vec![m.phase], timing, 1)
        }
    }
}
