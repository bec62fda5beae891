//! The landing page's own words: what its figures are, measured or projected.

use results::{Analysed, DeviceKind};

/// The first lines: what each result set measured, with which probe, on which Burn release,
/// and which figures are projected to a GPU rather than measured. Only the devices with a
/// result set on this site are named.
pub fn lede(records: &[Analysed]) -> String {
    let has = |k: DeviceKind| records.iter().any(|r| r.device.kind == k);
    let probes = [
        (DeviceKind::Cpu, "CPU: heap bytes, exact"),
        (DeviceKind::Wgpu, "wgpu: pool bytes, bracketed"),
        (DeviceKind::Cuda, "CUDA: pool bytes, bracketed"),
    ];
    let measured: Vec<&str> = probes
        .iter()
        .filter(|(k, _)| has(*k))
        .map(|(_, words)| *words)
        .collect();
    let mut versions: Vec<&str> = records
        .iter()
        .map(|r| r.record.provenance.burn_version.as_str())
        .collect();
    versions.sort_unstable();
    versions.dedup();
    format!(
        "Measured on Burn {} ({}); the order is projected to a 24 GB GPU.",
        versions.join(", "),
        measured.join("; ")
    )
}
