//! Why a point could not be measured.

use crate::harness::driver::DriverError;

/// What ends an unsupported point's message, before the float type the device lacks.
pub const UNSUPPORTED_MARK: &str = "the device has no ";

/// The float type an unsupported point's message names (its last stderr line), if it says one.
pub fn unsupported_lacks(line: &str) -> Option<&str> {
    let (_, lacks) = line.trim().rsplit_once(UNSUPPORTED_MARK)?;
    let lacks = lacks.split_whitespace().next()?;
    Some(lacks)
}

/// What starts the message of a point Burn itself refuses, before what was tried.
pub const NOT_IN_BURN_MARK: &str = "Burn 0.22 cannot: ";

/// What a point Burn refused tried and what Burn said (its last stderr line), if it says so.
pub fn not_in_burn(line: &str) -> Option<&str> {
    let (_, what) = line.trim().split_once(NOT_IN_BURN_MARK)?;
    Some(what)
}

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
    /// in (`Backend::dtype_usage`). The message ends in [`UNSUPPORTED_MARK`] and the type's
    /// name, which the runner reads back from the child's last stderr line.
    #[error("not supported on this device: {UNSUPPORTED_MARK}{lacks}")]
    Unsupported {
        /// The float type's name (`bf16`).
        lacks: String,
    },
    /// Burn itself refuses the work (a `todo!()` of the pinned version): the message says what
    /// was tried and Burn's panic, after [`NOT_IN_BURN_MARK`].
    #[error("{NOT_IN_BURN_MARK}{what}")]
    NotInBurn {
        /// What was tried and what Burn said.
        what: String,
    },
    /// The backend failed to run the work.
    #[error("backend error: {0}")]
    Backend(String),
    /// A paired comparison could not be timed.
    #[error("paired timing: {0}")]
    Paired(String),
}
