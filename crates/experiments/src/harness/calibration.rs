//! The machine's own speed, so that step times from two machines can be compared.
//!
//! Question: how fast is this device at the two things a training step does, multiplying
//! matrices and streaming memory?
//! Method: on the device's backend, in a process of its own, an f32 matmul of two n x n
//! matrices (`2 n^3` operations) and an element-wise add of a scalar into a new tensor (its
//! bytes read and as many written), each warmed up, then timed between device synchronisations.
//! Answer: a matmul rate (GFLOP/s) and a bandwidth (GB/s) written into every record of the run;
//! a page divides a step's matrix work by the rate to say how much of it the step achieves.

use std::time::Instant;

use burn::tensor::{Distribution, Tensor};
use results::{Calibration, DeviceKind, Timing};

use crate::error::ExperimentError;
use crate::harness::backend::{self, Backends, OnBackend, Setup};
use crate::harness::probe::MemoryProbe;
use burn::tensor::Device;

/// Untimed runs of each operation first.
const WARMUP: usize = 3;
/// Timed runs of each operation.
const REPEATS: usize = 9;

/// Matrix side and copied bytes on `device`: enough work to dwarf a kernel launch.
fn sizes(device: DeviceKind) -> (usize, u64) {
    match device {
        DeviceKind::Cpu | DeviceKind::Wgpu => (1024, 64 << 20),
        DeviceKind::Cuda => (8192, 1 << 30),
    }
}

struct Calibrate {
    matmul_n: usize,
    copy_bytes: u64,
}

impl OnBackend for Calibrate {
    type Output = Calibration;

    fn run(self, device: Device, _probe: &dyn MemoryProbe) -> Calibration {
        let device = device.without_autodiff();
        let sync = || backend::sync(&device);
        // Each output is held until the device has synchronised: Burn's fusion on CubeCL can
        // skip work whose output was dropped before it ran, and an add timed with its output
        // dropped read 50 TB/s on an H200, whose memory moves 4.8.
        let time = |op: &dyn Fn() -> Tensor<1>| {
            for _ in 0..WARMUP {
                let out = op();
                sync();
                drop(out);
            }
            Timing::from_samples(
                (0..REPEATS)
                    .map(|_| {
                        let clock = Instant::now();
                        let out = op();
                        sync();
                        let elapsed = clock.elapsed().as_secs_f64();
                        drop(out);
                        elapsed
                    })
                    .collect(),
            )
        };
        let n = self.matmul_n;
        let a = Tensor::<2>::random([n, n], Distribution::Default, &device);
        let b = Tensor::<2>::random([n, n], Distribution::Default, &device);
        let matmul = time(&|| a.clone().matmul(b.clone()).reshape([n * n]));
        drop((a, b));
        let elements = (self.copy_bytes / 4) as usize;
        let x = Tensor::<1>::random([elements], Distribution::Default, &device);
        // x stays shared, so the add writes a new tensor: every byte read once and written once.
        let copy = time(&|| x.clone().add_scalar(1.0));
        Calibration {
            matmul_n: n,
            matmul_gflop_s: 2.0 * (n as f64).powi(3) / matmul.median_s / 1e9,
            matmul,
            copy_bytes: self.copy_bytes,
            copy_gb_s: 2.0 * self.copy_bytes as f64 / copy.median_s / 1e9,
            copy,
            copy_output_held: Some(true),
        }
    }
}

/// Measures the matmul rate and copy bandwidth of `device`.
pub fn calibrate(device: DeviceKind) -> Result<Calibration, ExperimentError> {
    let (matmul_n, copy_bytes) = sizes(device);
    device.dispatch(
        Setup::default(),
        Calibrate {
            matmul_n,
            copy_bytes,
        },
    )
}
