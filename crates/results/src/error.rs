//! Why a record, a results folder or a criterion folder cannot be read.

use std::path::PathBuf;

/// A stored result that cannot be loaded; each variant names the path and the problem.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file or folder that cannot be read.
    #[error("cannot read {path}: {reason}")]
    Unreadable {
        /// What could not be read.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// A results folder without records.
    #[error("no result records (*.json) in {0}")]
    NoRecords(PathBuf),
    /// A record that is not valid JSON of this schema.
    #[error("malformed result record {path}: {reason}")]
    MalformedRecord {
        /// The record's path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A criterion folder without the workbench benches' results.
    #[error(
        "no estimates of the workbench's benches in {0} (run `cargo bench` first; each benchmark \
         folder holds a workbench-point.json)"
    )]
    NoEstimates(PathBuf),
    /// A criterion result file that cannot be parsed.
    #[error("malformed criterion result {path}: {reason}")]
    MalformedEstimate {
        /// The file's path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// One folder holding records of several devices: a guide's `data/` holds the CPU's, each
    /// device's set is in a subfolder of its own (`data/wgpu/`).
    #[error(
        "{} mixes devices: {} is a {first_device} record, {} a {other_device} one (each \
         device's records go in a folder of their own, as a run writes them)",
        first.parent().unwrap_or(first).display(),
        first.display(),
        other.display()
    )]
    MixedDevices {
        /// A record of the folder's first device.
        first: PathBuf,
        /// Its device.
        first_device: &'static str,
        /// A record of another device, in the same folder.
        other: PathBuf,
        /// That device.
        other_device: &'static str,
    },
    /// Two records of the same experiment and device in one folder: which one the guide
    /// should show is not for the workbench to guess.
    #[error(
        "{} holds two records of {experiment} on {device}: {} and {}",
        first.parent().unwrap_or(first).display(),
        first.display(),
        other.display()
    )]
    DuplicateRecord {
        /// The experiment.
        experiment: String,
        /// The device.
        device: &'static str,
        /// The first file.
        first: PathBuf,
        /// The second, in the same folder.
        other: PathBuf,
    },
}
