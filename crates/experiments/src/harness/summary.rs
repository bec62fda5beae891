//! `workbench memory-summary`: what the memory probe of a device reads, before and after one
//! tensor lives and dies, and after the cache is released.
//!
//! It answers the questions `torch.cuda.memory_summary()` and `nvidia-smi` answer for PyTorch:
//! which device, how much memory it has, what live tensors hold, what the allocator keeps
//! reserved after they are freed, and what `memory_cleanup()` (PyTorch's `empty_cache`) gives
//! back.

use burn::tensor::{Device, Tensor};
use serde::{Deserialize, Serialize};

use results::{DeviceIdentity, DeviceKind};

use crate::error::ExperimentError;
use crate::harness::backend::{self, Backends, OnBackend, Setup};
use crate::harness::probe::{MemoryProbe, MemorySummary, ProbeInfo};

/// The probe's counters at one moment of the demonstration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// What had just happened.
    pub moment: String,
    /// The counters.
    pub memory: MemorySummary,
}

/// Everything `memory-summary` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceSummary {
    /// Which device, as the driver reports it.
    pub identity: DeviceIdentity,
    /// What the probe counts.
    pub probe: ProbeInfo,
    /// The counters, moment by moment.
    pub rows: Vec<SummaryRow>,
}

struct Demonstration {
    tensor_bytes: u64,
}

impl OnBackend for Demonstration {
    type Output = (ProbeInfo, Vec<SummaryRow>);

    fn run(self, device: Device, probe: &dyn MemoryProbe) -> Self::Output {
        let sync = || backend::sync(&device);
        let mut rows = Vec::new();
        let mut row = |moment: String| {
            sync();
            rows.push(SummaryRow {
                moment,
                memory: probe.summary(),
            });
        };
        row("start".into());
        let elements = (self.tensor_bytes / 4).max(1) as usize;
        // Zeros, not random values: on CubeCL 0.11 a random kernel leaves a 48-byte buffer
        // of its own beside the tensor, which the row would count as the tensor's.
        let tensor = Tensor::<1>::zeros([elements], &device.clone().without_autodiff());
        row(format!("one f32 tensor of {elements} elements alive"));
        drop(tensor);
        row("the tensor dropped".into());
        if probe.release_cache() {
            row("after memory_cleanup()".into());
        }
        (probe.info(), rows)
    }
}

/// Identifies `kind`'s device and runs the demonstration with a tensor of `tensor_bytes`.
pub fn summarise(kind: DeviceKind, tensor_bytes: u64) -> Result<DeviceSummary, ExperimentError> {
    let identity = kind.identify()?;
    let (probe, rows) = kind.dispatch(Setup::default(), Demonstration { tensor_bytes })?;
    Ok(DeviceSummary {
        identity,
        probe,
        rows,
    })
}
