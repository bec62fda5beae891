//! `workbench memory-summary`: what the memory probe of a device reads, before and after one
//! tensor lives and dies, and after the cache is released.
//!
//! It answers the questions `torch.cuda.memory_summary()` and `nvidia-smi` answer for PyTorch:
//! which device, how much memory it has, what live tensors hold, what the allocator keeps
//! reserved after they are freed, and what `memory_cleanup()` (PyTorch's `empty_cache`) gives
//! back.

use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Distribution, Tensor};
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

    fn run<B: AutodiffBackend>(self, device: B::Device, probe: &dyn MemoryProbe) -> Self::Output {
        let sync = || backend::sync::<B>(&device);
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
        let tensor =
            Tensor::<B::InnerBackend, 1>::random([elements], Distribution::Default, &device);
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
