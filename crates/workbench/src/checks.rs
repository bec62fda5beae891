//! The checks `estimate` sets beside each way, read from measured records as the guide reads
//! them.
//!
//! Question: a way fits the reader's card; did the guide's measurements show it computes the
//! same thing? Method: the records of a results folder (`--results`, by default the guide's
//! `site/data` where it exists) analysed as `render` analyses them, their checks of each
//! ranked fix gathered per device ([`SiteVerdicts`]). Answer: each way's [`WayStatus`], the
//! one every page of the guide shows for it.

use std::path::{Path, PathBuf};

use guide::recommend::WayStatus;
use guide::verdicts::SiteVerdicts;
use results::{record, Fix};

use crate::error::BadInput;

/// Where the guide's records are when `--results` is not given.
pub const DEFAULT_RESULTS: &str = "site/data";

/// The checks of one results folder, and a line saying where they were read.
pub struct Checks {
    verdicts: SiteVerdicts,
    /// Where the checks came from, in a line.
    pub source: String,
}

impl Checks {
    /// The checks of the records in `dir`; without `dir`, of [`DEFAULT_RESULTS`] where it
    /// exists (none read otherwise, which every way's status says). A `dir` given that holds
    /// no records is refused (one line, exit 2).
    pub fn read(dir: Option<&Path>) -> Result<Self, BadInput> {
        let (dir, given) = match dir {
            Some(d) => (d.to_path_buf(), true),
            None => (PathBuf::from(DEFAULT_RESULTS), false),
        };
        if !given && !dir.is_dir() {
            return Ok(Self {
                verdicts: SiteVerdicts::default(),
                source: format!(
                    "checks: none read ({DEFAULT_RESULTS} is not here; --results DIR reads a \
                     guide's records)"
                ),
            });
        }
        let records = record::load_dirs(std::slice::from_ref(&dir)).map_err(BadInput::from)?;
        let count = records.len();
        let analysed = crate::analyse::analyse_all(records)?;
        let worded: Vec<results::Analysed> = analysed.iter().map(guide::words::analysed).collect();
        Ok(Self {
            verdicts: SiteVerdicts::new(&worded),
            source: format!(
                "checks: the guide's, read from {} records in {}",
                count,
                dir.display()
            ),
        })
    }

    /// The status of a way that applies `fixes`.
    pub fn status(&self, fixes: &[Fix]) -> WayStatus {
        self.verdicts.way_status(fixes)
    }
}
