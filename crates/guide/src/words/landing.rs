//! The landing page's own words: what its figures are, measured or projected.

use results::{Analysed, DeviceKind};

/// The first lines: what each result set measured, with which probe, and which figures are
/// projected to a GPU rather than measured.
pub fn lede(records: &[Analysed]) -> String {
    let mut devices: Vec<String> = Vec::new();
    for r in records {
        let said =
            match r.device.kind {
                DeviceKind::Cpu => "on the CPU (Burn's Flex backend), every byte of the process's \
                                heap, counted by an allocator (exact)"
                    .to_string(),
                kind => {
                    format!(
                "on {}{}, the device pool's bytes in use, read around each phase (a bracket)",
                kind.name(),
                r.device
                    .identity
                    .as_ref()
                    .map(|id| format!(
                        " ({}{})",
                        id.name,
                        if id.software { ", a software driver" } else { "" }
                    ))
                    .unwrap_or_default()
            )
                }
            };
        if !devices.contains(&said) {
            devices.push(said);
        }
    }
    format!(
        "Measured on Burn 0.21 by this workbench: {}. The order below projects those \
         measurements onto a 24 GB GPU with the estimator's rules: its peaks are estimates, \
         each rule checked where a measurement covers it; the tables under it are measured.",
        devices.join("; ")
    )
}
