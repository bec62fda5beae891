//! What an answer that recommends a way carries: the checks of the fixes the way applies.
//!
//! Question: a way fits the reader's card; did the guide's own measurements show it computes
//! the same thing? Method: a way names the ranked fixes it applies
//! (the estimator's `capacity::ranked_fixes`); its status is every check of those fixes on every
//! device with records ([`SiteVerdicts`]). A [`Recommendation`] is built only from a way's
//! status, and [`recommend`] answers with a way whose checks passed wherever one fits, a way
//! whose check failed only where none other fits, its failure beside it. Answer: the CLI's
//! `estimate` lines and JSON and What fits' rows read the status from here.

use results::Fix;
use serde::Serialize;

use crate::verdicts::SiteVerdicts;
use crate::words::fix_name;

/// A way's checks over every device with records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub enum WayStatus {
    /// It applies no ranked fix (plain training, 16-bit weights): nothing to check.
    NothingToCheck,
    /// Every check of its fixes passed.
    Passed {
        /// How many checks, over the devices.
        checks: usize,
    },
    /// A check of one of its fixes failed.
    Failed {
        /// Each failed fix with its failed checks, in words.
        failures: String,
    },
    /// No record checked its fixes (no records were read, or none measured them).
    NotChecked,
}

impl WayStatus {
    /// Whether a check failed.
    pub fn failed(&self) -> bool {
        matches!(self, WayStatus::Failed { .. })
    }

    /// The failed checks in words, where one failed.
    pub fn into_failures(self) -> Option<String> {
        match self {
            WayStatus::Failed { failures } => Some(failures),
            _ => None,
        }
    }

    /// The status in a few words, for a line that recommends the way.
    pub fn words(&self) -> String {
        match self {
            WayStatus::NothingToCheck => String::new(),
            WayStatus::Passed { checks: 1 } => "1 check passed".into(),
            WayStatus::Passed { checks } => format!("{checks} checks passed"),
            WayStatus::Failed { failures } => failures.clone(),
            WayStatus::NotChecked => "no check measured".into(),
        }
    }

    /// The status in brackets after a line (" [3 checks passed]"); nothing where there is
    /// nothing to check.
    pub fn bracketed(&self) -> String {
        match self.words() {
            words if words.is_empty() => String::new(),
            words => format!(" [{words}]"),
        }
    }
}

impl SiteVerdicts {
    /// The status of a way that applies `fixes`.
    pub fn way_status(&self, fixes: &[Fix]) -> WayStatus {
        if fixes.is_empty() {
            return WayStatus::NothingToCheck;
        }
        let failures: Vec<String> = fixes
            .iter()
            .filter_map(|&f| Some(format!("{}: {}", fix_name(f), self.failure(f)?)))
            .collect();
        if !failures.is_empty() {
            return WayStatus::Failed {
                failures: failures.join("; "),
            };
        }
        match self.check_count(fixes) {
            0 => WayStatus::NotChecked,
            checks => WayStatus::Passed { checks },
        }
    }
}

/// A way recommended as the answer: it cannot be made without the way's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recommendation {
    way: String,
    largest_batch: u64,
    checks: WayStatus,
}

impl Recommendation {
    /// The way's name.
    pub fn way(&self) -> &str {
        &self.way
    }

    /// The largest batch it fits.
    pub fn largest_batch(&self) -> u64 {
        self.largest_batch
    }

    /// Its checks.
    pub fn checks(&self) -> &WayStatus {
        &self.checks
    }
}

/// The answer among `ways` (name, largest batch that fits, status): of the ways that fit, the
/// largest batch among those whose checks did not fail; where every fitting way failed a
/// check, the largest batch among them, the failure carried with it. None where none fits.
pub fn recommend(
    ways: impl IntoIterator<Item = (String, Option<u64>, WayStatus)>,
) -> Option<Recommendation> {
    let fitting: Vec<Recommendation> = ways
        .into_iter()
        .filter_map(|(way, batch, checks)| {
            Some(Recommendation {
                way,
                largest_batch: batch?,
                checks,
            })
        })
        .collect();
    let best = |failed: bool| {
        fitting
            .iter()
            .filter(|r| r.checks.failed() == failed)
            // The first of equal batches: the ways come in the estimator's order, simplest
            // first.
            .fold(None::<&Recommendation>, |best, r| match best {
                Some(b) if b.largest_batch >= r.largest_batch => Some(b),
                _ => Some(r),
            })
            .cloned()
    };
    best(false).or_else(|| best(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> WayStatus {
        WayStatus::Failed {
            failures: "bf16 storage: its check failed on cpu: loss".into(),
        }
    }

    #[test]
    fn a_way_whose_check_failed_is_never_the_answer_where_another_fits() {
        let ways = vec![
            ("bf16 storage".to_string(), Some(9), failed()),
            (
                "checkpointing".into(),
                Some(2),
                WayStatus::Passed { checks: 3 },
            ),
            ("plain".into(), None, WayStatus::NothingToCheck),
        ];
        let r = recommend(ways).expect("one fits");
        assert_eq!(r.way(), "checkpointing");
        assert!(!r.checks().failed());
    }

    #[test]
    fn the_only_fitting_way_is_the_answer_with_its_failure_beside_it() {
        let ways = vec![
            ("bf16 storage".to_string(), Some(1), failed()),
            ("plain".into(), None, WayStatus::NothingToCheck),
        ];
        let r = recommend(ways).expect("one fits");
        assert_eq!(r.way(), "bf16 storage");
        assert!(r.checks().words().contains("check failed"));
        assert_eq!(recommend(vec![("plain".into(), None, failed())]), None);
    }
}
