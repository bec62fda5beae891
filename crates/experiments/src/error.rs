//! Why a point could not be measured.

use crate::harness::driver::DriverError;

/// Errors of a measurement.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// The point's configuration does not fit the experiment.
    #[error("bad point configuration for {experiment}: {source}")]
    BadConfig {
        /// Experiment id.
        experiment: &'static str,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// The device cannot be used: its backend is not built in, or there is no driver.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// The probe would read zeros.
    #[error(
        "the counting allocator is not this binary's global allocator: host memory cannot be measured"
    )]
    ProbeNotInstalled,
    /// The device cannot run the point: it lacks a float type the point stores or computes
    /// in (`Backend::supports_dtype`).
    #[error("not supported on this device: {0}")]
    Unsupported(String),
    /// The backend failed to run the work.
    #[error("backend error: {0}")]
    Backend(String),
    /// A paired comparison could not be timed.
    #[error("paired timing: {0}")]
    Paired(String),
}
