//! The landing page's own words: what its figures are, measured or projected.

use results::{Analysed, DeviceKind};

/// The first lines: what each result set measured, with which probe, and which figures are
/// projected to a GPU rather than measured.
pub fn lede(records: &[Analysed]) -> String {
    let has = |k: DeviceKind| records.iter().any(|r| r.device.kind == k);
    let mut measured = Vec::new();
    if has(DeviceKind::Cpu) {
        measured.push("CPU: heap bytes, exact");
    }
    if has(DeviceKind::Wgpu) || has(DeviceKind::Cuda) {
        measured.push("wgpu, CUDA: pool bytes, bracketed");
    }
    format!(
        "Measured on Burn 0.22 ({}); the order is projected to a 24 GB GPU.",
        measured.join("; ")
    )
}
