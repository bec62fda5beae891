//! The verdict of a set of correctness checks.

use serde::{Deserialize, Serialize};

use crate::point::{Check, MeasuredPoint};

/// Overall verdict of a technique's correctness checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Correctness {
    /// Every check passed.
    Passed,
    /// At least one check failed: the technique changed the result.
    Failed,
    /// The technique has nothing to compare (a sweep, not a substitute).
    NotApplicable,
    /// No point could be checked (all failed to run).
    Unknown,
}

impl Correctness {
    /// Combines the checks of all measured points.
    pub fn of(points: &[MeasuredPoint]) -> Self {
        Self::with_derived(points, [])
    }

    /// Combines the checks of all measured points and those `derived` from their readings
    /// (one point's set against another's, computed when the guide renders).
    pub fn with_derived<'a>(
        points: &'a [MeasuredPoint],
        derived: impl IntoIterator<Item = &'a Check>,
    ) -> Self {
        let checks = points
            .iter()
            .filter_map(|p| p.result())
            .flat_map(|r| r.checks.iter())
            .chain(derived);
        Self::of_checks(checks).unwrap_or_else(|| {
            if points.iter().any(|p| p.result().is_some()) {
                Correctness::NotApplicable
            } else {
                Correctness::Unknown
            }
        })
    }

    /// The verdict of `checks`: passed when every one passed, failed when any failed; `None`
    /// where there are none (what that means is the caller's to say).
    pub fn of_checks<'a>(checks: impl IntoIterator<Item = &'a Check>) -> Option<Self> {
        let mut any = false;
        for check in checks {
            if !check.passed {
                return Some(Correctness::Failed);
            }
            any = true;
        }
        any.then_some(Correctness::Passed)
    }
}
