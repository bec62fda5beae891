//! The landing page's own words: what its figures are, measured or projected.

use results::{Analysed, DeviceKind};

/// The first lines: what each result set measured, with which probe, and which figures are
/// projected to a GPU rather than measured.
pub fn lede(records: &[Analysed]) -> String {
    let has = |k: DeviceKind| records.iter().any(|r| r.device.kind == k);
    let mut measured = Vec::new();
    if has(DeviceKind::Cpu) {
        measured.push("on the CPU every heap byte, counted exactly");
    }
    if has(DeviceKind::Wgpu) || has(DeviceKind::Cuda) {
        measured.push("on wgpu and CUDA the device pool's bytes, bracketed");
    }
    format!(
        "Tables are measured by this workbench on Burn 0.21: {}. The order is projected onto a \
         24 GB GPU from them; each rule is checked where a measurement covers it.",
        measured.join("; ")
    )
}
