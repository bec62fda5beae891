//! Errors that are the user's to fix: the CLI exits 2 on these, 1 on anything else.

use std::path::PathBuf;

/// Bad input: an unknown id, an unusable path, a results folder that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum BadInput {
    /// An experiment id that is not in the registry.
    #[error("unknown experiment '{id}' (known: {known})")]
    UnknownExperiment {
        /// What was asked for.
        id: String,
        /// The ids that exist.
        known: String,
    },
    /// A record of an experiment this workbench does not have: it cannot be analysed.
    #[error("a record of experiment '{id}', which this workbench does not have (it has: {known})")]
    UnknownRecordExperiment {
        /// The record's experiment id.
        id: String,
        /// The ids that exist.
        known: String,
    },
    /// A model description, batch or budget that describes nothing that can run.
    #[error("{0}")]
    BadModel(String),
    /// `--out` names a file.
    #[error("output path {0} is a file, not a folder")]
    OutputIsFile(PathBuf),
    /// `--out` names a folder the workbench did not write and that is not empty.
    #[error(
        "refusing to replace {0}: it is not empty and was not written by workbench (no .workbench marker)"
    )]
    OutputNotOurs(PathBuf),
    /// The output's parent folder cannot be written.
    #[error("cannot write beside {path}: {reason}")]
    OutputNotWritable {
        /// The output path.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// Criterion's estimates are of other experiments, devices or sizes than the records.
    #[error(
        "none of criterion's estimates in {0} matches a record (same experiment, device and \
         profile): run the benches at the records' sizes (WORKBENCH_BENCH_PROFILE)"
    )]
    NoMatchingEstimates(PathBuf),
    /// A stored result (a record, a results folder, criterion's output) that cannot be read.
    #[error(transparent)]
    Load(#[from] results::LoadError),
    /// Another run is writing the same output folder.
    #[error(
        "another workbench run (process {pid}) is writing {out}; wait for it to end (a lock \
         left by a process that is gone is taken over: {lock})"
    )]
    Busy {
        /// The output folder.
        out: PathBuf,
        /// The process holding the lock.
        pid: u32,
        /// The lock file.
        lock: PathBuf,
    },
    /// A size that the machine cannot hold.
    #[error("{0}")]
    TooLarge(String),
    /// `--out` is a results folder being read, or inside one.
    #[error(
        "--out {out} is inside the results folder {results}: writing the guide there would \
         replace the records it is made from; choose another folder"
    )]
    OutputAmongResults {
        /// The output folder.
        out: PathBuf,
        /// The results folder it is in.
        results: PathBuf,
    },
    /// A device this binary cannot use.
    #[error("{0}")]
    DeviceUnavailable(String),
}

/// A run ended by SIGINT or SIGTERM after keeping and rendering what it had measured: the CLI
/// exits 128 + the signal's number (130, 143) with this one line.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Interrupted {
    /// The signal's number.
    pub signal: i32,
    /// What was kept, and what to do next.
    pub message: String,
}
