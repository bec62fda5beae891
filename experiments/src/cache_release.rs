//! Cache release: what an allocator keeps after a tensor is freed, what `memory_cleanup()`
//! gives back, and what the next allocation pays for it.
//!
//! CubeCL's memory manager (wgpu, CUDA) keeps the pages of freed tensors reserved, so the next
//! tensor of that size is served without asking the driver; `memory_cleanup()` (PyTorch's
//! `empty_cache`) returns unused pages. The experiment reads bytes in use and reserved with a
//! large tensor alive, after it is dropped and after the cleanup, and times an allocation served
//! from the pool against one made after a cleanup. On the CPU there is no pool to release.

use std::collections::BTreeMap;
use std::time::Instant;

use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use crate::backend::{self, OnBackend};
use crate::device::DeviceKind;
use crate::experiment::{
    parse_config, Analysis, Chart, Comparison, Correctness, Experiment, ExperimentError, Headline,
    MeasuredPoint, Point, PointResult, Profile, Scale, Series, Sizes,
};
use crate::format::{self, mib};
use crate::probe::MemoryProbe;
use crate::single_op::measure_op;
use crate::snippets::cache_release::{allocate, release_cache};

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
    fn id(self) -> &'static str {
        match self {
            Source::Cached => "cached",
            Source::AfterCleanup => "after-cleanup",
        }
    }

    fn name(self) -> &'static str {
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
        Sizes::Full => vec![16, 128, 1024],
        Sizes::Gpu => vec![256, 4096, 32768],
    }
}

impl Experiment for CacheRelease {
    fn id(&self) -> &'static str {
        "cache-release"
    }

    fn title(&self) -> &'static str {
        "Cache release (empty_cache)"
    }

    fn explanation(&self) -> &'static str {
        "A caching allocator keeps the memory of freed tensors reserved, so that the next tensor \
         of that size costs no call to the driver; nvidia-smi shows the reserved bytes, not the \
         bytes in use. Burn's GPU backends cache through CubeCL's memory manager, and \
         memory_cleanup() returns its unused pages (PyTorch's empty_cache). Releasing helps \
         another process, not this one: the next allocation pays for it. The experiment reads \
         in use and reserved with a large tensor alive, after it is dropped and after the \
         cleanup, and times an allocation from the cache against one after a cleanup."
    }

    fn on_devices(&self) -> &'static str {
        "This is a device technique. On the CPU (Flex) there is no pool: a freed tensor's \
         bytes go back to the process heap at once, the counting allocator sees no reserved \
         bytes, and both allocations below are the same (the system allocator may keep pages \
         the counting allocator cannot see)."
    }

    fn snippet(&self) -> &'static str {
        include_str!("snippets/cache_release.rs")
    }

    fn points(&self, profile: Profile, device: DeviceKind) -> Vec<Point> {
        let (warmup, repeats) = crate::batch_size::repeats(profile);
        let mut points = Vec::new();
        for mib in sizes_mib(Sizes::of(profile, device)) {
            for source in [Source::Cached, Source::AfterCleanup] {
                points.push(Point {
                    id: format!("{}-{mib}-mib", source.id()),
                    label: format!("{mib} MiB {}", source.name()),
                    warmup,
                    repeats,
                    config: serde_json::to_value(CacheConfig {
                        tensor_bytes: mib << 20,
                        source,
                    })
                    .expect("config serialises"),
                });
            }
        }
        points
    }

    fn run_point(&self, point: &Point, device: DeviceKind) -> Result<PointResult, ExperimentError> {
        let config: CacheConfig = parse_config(self.id(), point)?;
        backend::dispatch(
            device,
            CachePoint {
                config,
                warmup: point.warmup,
                repeats: point.repeats,
            },
        )
    }

    fn analyse(&self, points: &[MeasuredPoint]) -> Analysis {
        analyse(points)
    }
}

/// Measures one size and source.
pub struct CachePoint {
    /// What to allocate, and from where.
    pub config: CacheConfig,
    /// Untimed allocations first.
    pub warmup: usize,
    /// Timed allocations.
    pub repeats: usize,
}

impl OnBackend for CachePoint {
    type Output = PointResult;

    fn run<AB: AutodiffBackend>(self, device: AB::Device, probe: &dyn MemoryProbe) -> PointResult {
        type B<AB> = <AB as AutodiffBackend>::InnerBackend;
        let c = self.config;
        let sync = || backend::sync::<AB>(&device);
        let elements = (c.tensor_bytes / 4) as usize;
        let allocate = || allocate::<B<AB>>(elements, &device);
        // The probe reports reserved bytes where the backend has a pool to release.
        let has_cache = probe.summary().reserved_bytes.is_some();

        // The demonstration: counters at four moments.
        let mut metrics = BTreeMap::new();
        let mut moment = |name: &str| {
            sync();
            let s = probe.summary();
            metrics.insert(format!("in_use_{name}_bytes"), s.in_use_bytes as f64);
            if let Some(r) = s.reserved_bytes {
                metrics.insert(format!("reserved_{name}_bytes"), r as f64);
            }
        };
        moment("start");
        let tensor = allocate();
        moment("alive");
        drop(tensor);
        moment("dropped");
        let clock = Instant::now();
        release_cache::<AB>(&device);
        sync();
        let cleanup_s = clock.elapsed().as_secs_f64();
        moment("released");

        // The timed allocation, from the cache or after a cleanup; the set-up (the cleanup, or
        // one tensor of the size allocated and freed to fill the pool) is outside the clock.
        let m = measure_op(
            probe,
            &sync,
            "allocate",
            self.warmup,
            self.repeats,
            1,
            || match c.source {
                Source::AfterCleanup => release_cache::<AB>(&device),
                Source::Cached => drop(allocate()),
            },
            |()| allocate(),
        );

        metrics.insert("tensor_bytes".into(), c.tensor_bytes as f64);
        metrics.insert("cleanup_s".into(), cleanup_s);
        metrics.insert("has_cache".into(), if has_cache { 1.0 } else { 0.0 });
        metrics.insert(
            "repeat_delta_spread_bytes".into(),
            m.repeat_delta_spread_bytes as f64,
        );
        let timing = m.timing;
        PointResult {
            probe: probe.info(),
            phases: vec![m.phase],
            samples_per_s: timing.per_second(1.0),
            step: timing,
            samples_per_step: 1,
            metrics,
            traces: BTreeMap::new(),
            checks: vec![],
        }
    }
}

struct Row {
    config: CacheConfig,
    result: PointResult,
}

impl Row {
    fn above_start(&self, moment: &str, counter: &str) -> f64 {
        self.result.metric(&format!("{counter}_{moment}_bytes"))
            - self.result.metric(&format!("{counter}_start_bytes"))
    }
}

/// The analysis of the cache-release experiment.
pub fn analyse(points: &[MeasuredPoint]) -> Analysis {
    let mut rows: Vec<Row> = points
        .iter()
        .filter_map(|p| {
            Some(Row {
                config: p.config()?,
                result: p.result()?.clone(),
            })
        })
        .collect();
    rows.sort_by_key(|r| r.config.tensor_bytes);
    let of = |source: Source| -> Vec<&Row> {
        rows.iter().filter(|r| r.config.source == source).collect()
    };
    let (cached, fresh) = (of(Source::Cached), of(Source::AfterCleanup));
    let Some(largest) = cached.last().copied() else {
        return Analysis::unmeasured(Correctness::of(points));
    };
    let largest_fresh = fresh
        .iter()
        .find(|r| r.config.tensor_bytes == largest.config.tensor_bytes)
        .copied();
    let has_cache = largest.result.metric("has_cache") > 0.0;
    let size = largest.config.tensor_bytes as f64;

    let mut findings = Vec::new();
    let mut comparisons = Vec::new();
    for r in &cached {
        let n = r.config.tensor_bytes as f64;
        comparisons.push(Comparison {
            quantity: format!("in use with the {} tensor alive", format::bytes(n)),
            predicted_bytes: n,
            measured_bytes: r.above_start("alive", "in_use"),
            note: "elements x 4 bytes, above the start".into(),
        });
        comparisons.push(Comparison {
            quantity: format!("in use after the {} tensor is dropped", format::bytes(n)),
            predicted_bytes: 0.0,
            measured_bytes: r.above_start("dropped", "in_use"),
            note: "nothing live above the start".into(),
        });
        if has_cache {
            comparisons.push(Comparison {
                quantity: format!(
                    "reserved after memory_cleanup(), {} tensor",
                    format::bytes(n)
                ),
                predicted_bytes: 0.0,
                measured_bytes: r.above_start("released", "reserved"),
                note: "every page the tensor took returned, above the start".into(),
            });
        }
    }
    // The allocation's own peak: on the CPU, Flex's empty() zero-fills a Vec<u8> that
    // cubecl-common's Bytes::from_bytes_vec then copies into a 16-byte-aligned buffer.
    let on_host = largest.result.probe.kind == crate::probe::host::KIND;
    for r in &cached {
        let n = r.config.tensor_bytes as f64;
        let phase = r.result.phase("allocate");
        comparisons.push(Comparison {
            quantity: format!("peak while allocating {} (empty)", format::bytes(n)),
            predicted_bytes: if on_host { 2.0 * n } else { n },
            measured_bytes: phase.map_or(f64::NAN, |p| p.delta_bytes() as f64),
            note: if on_host {
                "twice the tensor: Flex's empty() zero-fills a Vec<u8>, and \
                 Bytes::from_bytes_vec copies it to 16-byte alignment (it checks the Vec's \
                 declared alignment, 1, not its address), then frees the first"
            } else {
                "the tensor's bytes: the pool hands out a slice of a page"
            }
            .into(),
        });
    }
    let reserved_dropped = largest.above_start("dropped", "reserved");
    let reserved_released = largest.above_start("released", "reserved");
    if has_cache {
        findings.push(format!(
            "With a {} tensor alive the pools reserved {} above the start; after the drop \
             {} was in use and {} still reserved (what nvidia-smi counts); memory_cleanup() \
             took {} and left {} reserved above the start.",
            format::bytes(size),
            format::bytes(largest.above_start("alive", "reserved")),
            format::bytes(largest.above_start("dropped", "in_use")),
            format::bytes(reserved_dropped),
            format::seconds(largest.result.metric("cleanup_s")),
            format::bytes(reserved_released),
        ));
    } else {
        findings.push(format!(
            "No allocator cache on this device: after the {} tensor was dropped, {} above the \
             start was in use, and there is nothing to release.",
            format::bytes(size),
            format::bytes(largest.above_start("dropped", "in_use")),
        ));
    }
    if let Some(f) = largest_fresh {
        findings.push(format!(
            "Allocating {} took {} from the cache and {} after memory_cleanup() (medians; the \
             cleanup itself and the refill of the cache are outside the clock).{}",
            format::bytes(size),
            format::seconds(largest.result.step.median_s),
            format::seconds(f.result.step.median_s),
            if has_cache {
                ""
            } else {
                " Without a cache both are the same allocation: the difference is this \
                 machine's run-to-run noise, not a cost of releasing."
            }
        ));
    }

    let time_series = |rows: &[&Row], name: &str| Series {
        name: name.into(),
        predicted: false,
        points: rows
            .iter()
            .map(|r| crate::experiment::ChartPoint {
                x: mib(r.config.tensor_bytes as f64),
                y: r.result.step.median_s * 1e3,
                y_low: Some(r.result.step.min_s * 1e3),
                y_high: Some(r.result.step.max_s * 1e3),
            })
            .collect(),
    };
    let counter_series = |moment: &str, counter: &str, name: &str| {
        Series::line(
            name,
            false,
            cached
                .iter()
                .map(|r| {
                    (
                        mib(r.config.tensor_bytes as f64),
                        mib(r.result.metric(&format!("{counter}_{moment}_bytes"))),
                    )
                })
                .collect(),
        )
    };
    let mut memory_series = vec![
        counter_series("alive", "in_use", "in use, tensor alive"),
        counter_series("dropped", "in_use", "in use, tensor dropped"),
    ];
    if has_cache {
        memory_series.push(counter_series(
            "dropped",
            "reserved",
            "reserved, tensor dropped",
        ));
        memory_series.push(counter_series(
            "released",
            "reserved",
            "reserved, after memory_cleanup()",
        ));
    }
    let charts = vec![
        Chart {
            id: "counters-vs-size".into(),
            title: "In use and reserved around one tensor's life".into(),
            x_label: "tensor size (MiB)".into(),
            y_label: "bytes (MiB)".into(),
            x_scale: Scale::Log2,
            series: memory_series,
        },
        Chart {
            id: "allocation-time".into(),
            title: "Time of one allocation, from the cache and after a cleanup".into(),
            x_label: "tensor size (MiB)".into(),
            y_label: "allocation time (ms; bars: fastest and slowest)".into(),
            x_scale: Scale::Log2,
            series: vec![
                time_series(&cached, "from the cache (median)"),
                time_series(&fresh, "after memory_cleanup() (median)"),
            ],
        },
    ];

    Analysis {
        headline: Headline {
            compared: format!(
                "a dropped {} tensor: reserved before and after memory_cleanup(); allocation \
                 rate from the cache and after a cleanup",
                format::bytes(size)
            ),
            memory_saved_bytes: has_cache.then_some(reserved_dropped - reserved_released),
            memory_saved_pct: (has_cache && reserved_dropped > 0.0)
                .then(|| (reserved_dropped - reserved_released) / reserved_dropped * 100.0),
            // Without a cache there is nothing to pay for: no cost to report.
            throughput_cost_pct: largest_fresh.filter(|_| has_cache).map(|f| {
                (largest.result.samples_per_s - f.result.samples_per_s)
                    / largest.result.samples_per_s
                    * 100.0
            }),
            correctness: Correctness::of(points),
            correctness_detail: "nothing to compare: releasing the cache changes no value".into(),
        },
        findings,
        comparisons,
        fits: vec![],
        charts,
        published: vec![],
    }
}
