//! Two result sets set side by side: what changed in memory between two commits, two machines or
//! two Burn versions.
//!
//! Question: did a change move any point's memory, and which? Method: points matched by device,
//! experiment and point id; for each phase both measured, the bytes in use at its peak, old and
//! new, exactly (the CPU's counting allocator reproduces them to the byte); points only one set
//! has, listed; each set's device and provenance. Step times only where both sets come from the
//! same machine (CPU model, cores, OS and device), and then as two figures measured apart, not a
//! comparison. Answer: [`SetDiff`], which `workbench diff` prints and the guide renders.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::record::ExperimentRecord;
use crate::DeviceKind;

/// One result set as the diff describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetSide {
    /// The folder it was read from, as given.
    pub dir: String,
    /// Commits of its records (one where the set is one run's).
    pub commits: Vec<String>,
    /// Burn versions of its records.
    pub burn_versions: Vec<String>,
    /// Machines: CPU model, cores and OS.
    pub machines: Vec<String>,
    /// Devices: kind, backend and the driver's name.
    pub devices: Vec<String>,
    /// Profiles (`full`, `quick`).
    pub profiles: Vec<String>,
}

/// Where a point is: its device, experiment and id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PointRef {
    /// The device it was measured on.
    pub device: DeviceKind,
    /// The experiment.
    pub experiment: String,
    /// The point's id.
    pub point: String,
}

impl PointRef {
    /// `cpu/llama-family/plain`.
    pub fn name(&self) -> String {
        format!("{}/{}/{}", self.device.name(), self.experiment, self.point)
    }
}

/// `points` grouped by device and experiment (`cpu/llama-family`), each with its point ids, in
/// order: how a list of added or removed points reads.
pub fn grouped(points: &[PointRef]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for p in points {
        let key = format!("{}/{}", p.device.name(), p.experiment);
        match groups.last_mut() {
            Some((k, ids)) if *k == key => ids.push(p.point.clone()),
            _ => groups.push((key, vec![p.point.clone()])),
        }
    }
    groups
}

/// The fixed part of [`bookkeeping_tolerance_bytes`]. Burn's autodiff keeps hash tables whose
/// iteration order follows the process's random hash seed, so a table may grow in one process
/// and not in the next: on Burn 0.21 by 3,136 or 4,352 bytes in the GPT-2 cells (up to 8,304 over
/// 28 quick runs); on Burn 0.22.1 by 62,128 bytes at once in the Llama block's LoRA backward
/// (one process in four to six, at quick sizes), only on the autodiff backend.
pub const BOOKKEEPING_FIXED_BYTES: u64 = 64 * 1024;

/// The part of [`bookkeeping_tolerance_bytes`] that grows with the count (and so with the
/// autodiff graph), in thousandths: 8,704 bytes were seen at 64 layers (a count of 14.9 MB).
pub const BOOKKEEPING_PER_MILLE: u64 = 1;

/// Largest run-to-run difference of a CPU byte count that is not a change: a fixed part plus a
/// part that grows with the count. Points without a graph repeat to the byte.
pub fn bookkeeping_tolerance_bytes(count: u64) -> u64 {
    BOOKKEEPING_FIXED_BYTES + count * BOOKKEEPING_PER_MILLE / 1000
}

/// One phase's peak in both sets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseChange {
    /// The phase (`forward`).
    pub phase: String,
    /// Bytes in use at the phase's peak in the old set.
    pub old_bytes: u64,
    /// The same in the new set.
    pub new_bytes: u64,
}

impl PhaseChange {
    /// New less old, in bytes.
    pub fn change_bytes(&self) -> f64 {
        self.new_bytes as f64 - self.old_bytes as f64
    }

    /// Whether the two differ by no more than the autodiff graph's bookkeeping
    /// ([`bookkeeping_tolerance_bytes`]): the same measurement, run again.
    pub fn within_bookkeeping(&self) -> bool {
        let larger = self.old_bytes.max(self.new_bytes);
        self.old_bytes.abs_diff(self.new_bytes) <= bookkeeping_tolerance_bytes(larger)
    }

    /// The change as a share of the old bytes, in percent (infinite from zero).
    pub fn change_pct(&self) -> f64 {
        if self.old_bytes == 0 {
            return if self.new_bytes == 0 {
                0.0
            } else {
                f64::INFINITY
            };
        }
        100.0 * self.change_bytes() / self.old_bytes as f64
    }
}

/// A point both sets hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointChange {
    /// The point.
    pub at: PointRef,
    /// Its label in the new set.
    pub label: String,
    /// Its status in each set (`measured`, `failed`, ...).
    pub old_status: String,
    /// The same in the new set.
    pub new_status: String,
    /// Each phase both measured, in the new set's order.
    pub phases: Vec<PhaseChange>,
    /// Median step time in each set, where both sets come from one machine (unpaired).
    pub step_s: Option<(f64, f64)>,
    /// Whether both records of the point come from one machine and device.
    pub same_machine: bool,
}

impl PointChange {
    /// Whether anything measured differs: a status, or a phase's bytes beyond the autodiff
    /// graph's bookkeeping.
    pub fn changed(&self) -> bool {
        self.old_status != self.new_status || self.moved_phases().next().is_some()
    }

    /// The phases whose bytes moved beyond the autodiff graph's bookkeeping.
    pub fn moved_phases(&self) -> impl Iterator<Item = &PhaseChange> {
        self.phases.iter().filter(|p| !p.within_bookkeeping())
    }

    /// Whether every phase's bytes are equal to the byte (and the status too).
    pub fn identical(&self) -> bool {
        self.old_status == self.new_status && self.phases.iter().all(|p| p.new_bytes == p.old_bytes)
    }

    /// The largest rise of a phase's peak, in percent (0 where none rose).
    pub fn worst_rise_pct(&self) -> f64 {
        self.phases
            .iter()
            .map(PhaseChange::change_pct)
            .fold(0.0, f64::max)
    }
}

/// Two result sets compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetDiff {
    /// The baseline.
    pub old: SetSide,
    /// The set compared with it.
    pub new: SetSide,
    /// Whether every point both sets hold was measured on one machine and device in both, so
    /// that their times may be set side by side (still unpaired: measured apart). Decided point
    /// by point: a set of several devices (the CPU's here, CUDA's on a lent GPU) compared with
    /// itself is on the same machines.
    pub same_machine: bool,
    /// How many of `points` were measured on one machine and device in both sets.
    pub same_machine_points: usize,
    /// Points both hold, in device, experiment and point order.
    pub points: Vec<PointChange>,
    /// Points only the new set holds.
    pub added: Vec<PointRef>,
    /// Points only the old set holds.
    pub removed: Vec<PointRef>,
    /// The bytes the CPU process held before any model, old and new, where both sets measured
    /// it: every CPU peak counts them, so a change of the backend's start-up moves every point.
    pub cpu_startup_bytes: Option<(u64, u64)>,
}

/// One entry of github-action-benchmark's `customSmallerIsBetter` input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchmarkEntry {
    /// `cpu/llama-family/plain forward peak`.
    pub name: String,
    /// `bytes`.
    pub unit: String,
    /// The new set's bytes.
    pub value: f64,
    /// The old set's bytes, and the change.
    pub extra: String,
}

fn sorted(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = values.collect();
    v.sort();
    v.dedup();
    v
}

impl SetSide {
    /// The set read from `dir`.
    pub fn of(dir: &str, records: &[ExperimentRecord]) -> Self {
        let each = |f: &dyn Fn(&ExperimentRecord) -> String| sorted(records.iter().map(f));
        Self {
            dir: dir.into(),
            commits: each(&|r| r.provenance.git_commit.clone()),
            burn_versions: each(&|r| r.provenance.burn_version.clone()),
            machines: each(&machine),
            devices: each(&|r| device(r)),
            profiles: each(&|r| r.profile.name().to_string()),
        }
    }
}

fn machine(r: &ExperimentRecord) -> String {
    let p = &r.provenance;
    format!("{}, {} cores, {}", p.cpu_model, p.cpu_cores, p.os)
}

fn device(r: &ExperimentRecord) -> String {
    let name = r.device.identity.as_ref().map(|i| i.name.clone());
    let mut words = format!("{} ({})", r.device.kind.name(), r.device.backend);
    if let Some(name) = name {
        words = format!("{words}, {name}");
    }
    words
}

/// Every measured point of `records`, by where it is.
fn points(records: &[ExperimentRecord]) -> BTreeMap<PointRef, (&ExperimentRecord, usize)> {
    let mut map = BTreeMap::new();
    for r in records {
        for (i, p) in r.points.iter().enumerate() {
            let at = PointRef {
                device: r.device.kind,
                experiment: r.experiment.clone(),
                point: p.point.id.clone(),
            };
            map.insert(at, (r, i));
        }
    }
    map
}

/// The bytes the CPU process held before any model: the smallest `process_baseline_bytes` over
/// the set's CPU points (one process each, the same start-up).
fn cpu_startup_bytes(records: &[ExperimentRecord]) -> Option<u64> {
    records
        .iter()
        .filter(|r| r.device.kind == DeviceKind::Cpu)
        .flat_map(|r| &r.points)
        .filter_map(|p| p.result())
        .map(|r| r.metric(crate::Metric::ProcessBaselineBytes))
        .filter(|b| b.is_finite())
        .map(|b| b as u64)
        .min()
}

fn change(
    at: PointRef,
    old: (&ExperimentRecord, usize),
    new: (&ExperimentRecord, usize),
) -> PointChange {
    let same_machine = machine(old.0) == machine(new.0) && device(old.0) == device(new.0);
    let (o, n) = (&old.0.points[old.1], &new.0.points[new.1]);
    let (or, nr) = (o.result(), n.result());
    let phases = match (or, nr) {
        (Some(or), Some(nr)) => nr
            .phases
            .iter()
            .filter_map(|p| {
                let before = or.phase_named(&p.phase)?;
                Some(PhaseChange {
                    phase: p.phase.to_string(),
                    old_bytes: before.peak_bytes,
                    new_bytes: p.peak_bytes,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let step_s = match (or, nr) {
        (Some(or), Some(nr)) if same_machine => Some((or.step.median_s, nr.step.median_s)),
        _ => None,
    };
    PointChange {
        at,
        label: n.point.label.clone(),
        old_status: o.outcome.status().into(),
        new_status: n.outcome.status().into(),
        phases,
        step_s,
        same_machine,
    }
}

impl SetDiff {
    /// `new` (read from `new_dir`) against `old` (from `old_dir`).
    pub fn of(
        old_dir: &str,
        old: &[ExperimentRecord],
        new_dir: &str,
        new: &[ExperimentRecord],
    ) -> Self {
        let (old_side, new_side) = (SetSide::of(old_dir, old), SetSide::of(new_dir, new));
        let (before, after) = (points(old), points(new));
        let points: Vec<PointChange> = after
            .iter()
            .filter_map(|(at, &n)| Some(change(at.clone(), *before.get(at)?, n)))
            .collect();
        let same_machine_points = points.iter().filter(|p| p.same_machine).count();
        Self {
            old: old_side,
            new: new_side,
            same_machine: !points.is_empty() && same_machine_points == points.len(),
            same_machine_points,
            points,
            added: after
                .keys()
                .filter(|k| !before.contains_key(*k))
                .cloned()
                .collect(),
            removed: before
                .keys()
                .filter(|k| !after.contains_key(*k))
                .cloned()
                .collect(),
            cpu_startup_bytes: cpu_startup_bytes(old).zip(cpu_startup_bytes(new)),
        }
    }

    /// The points whose memory (beyond bookkeeping) or status changed.
    pub fn changed(&self) -> impl Iterator<Item = &PointChange> {
        self.points.iter().filter(|p| p.changed())
    }

    /// How many points are the same to the byte.
    pub fn identical(&self) -> usize {
        self.points.iter().filter(|p| p.identical()).count()
    }

    /// The points with a phase whose peak rose by more than `pct` percent.
    pub fn regressions(&self, pct: f64) -> Vec<&PointChange> {
        self.points
            .iter()
            .filter(|p| p.worst_rise_pct() > pct)
            .collect()
    }

    /// The new set's phase peaks in github-action-benchmark's `customSmallerIsBetter` form, the
    /// old bytes and the change in each entry's `extra`.
    pub fn benchmark_entries(&self) -> Vec<BenchmarkEntry> {
        self.points
            .iter()
            .flat_map(|p| {
                p.phases.iter().map(move |ph| BenchmarkEntry {
                    name: format!("{} {} peak", p.at.name(), ph.phase),
                    unit: "bytes".into(),
                    value: ph.new_bytes as f64,
                    extra: format!(
                        "old {} bytes ({}); change {}",
                        ph.old_bytes,
                        crate::format::bytes(ph.old_bytes as f64),
                        crate::format::pct(ph.change_pct())
                    ),
                })
            })
            .collect()
    }
}
