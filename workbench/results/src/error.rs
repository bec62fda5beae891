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
}
