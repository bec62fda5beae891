//! The words of the correctness checks: each check in one sentence, and the worst of each kind
//! for an index row.

use results::{Check, MeasuredPoint};

/// The check in one sentence, as the index and the pages state it: what was compared, the
/// largest difference, relative and absolute, against the tolerance, and `FAILED` where it
/// failed.
pub fn check_sentence(c: &Check) -> String {
    format!(
        "{}: largest difference {:.3e} (relative {:.3e}, tolerance {:.0e}){}",
        c.what,
        c.max_abs_diff,
        c.max_rel_diff,
        c.tolerance,
        if c.passed { "" } else { ", FAILED" }
    )
}

/// The check with the largest relative difference over all measured points, for each kind of
/// check, in one sentence each.
pub fn worst_check(points: &[MeasuredPoint]) -> String {
    let mut by_what: Vec<&Check> = Vec::new();
    for check in points
        .iter()
        .filter_map(|p| p.result())
        .flat_map(|r| r.checks.iter())
    {
        match by_what.iter_mut().find(|c| c.what == check.what) {
            Some(worst) if check.max_rel_diff > worst.max_rel_diff => *worst = check,
            Some(_) => {}
            None => by_what.push(check),
        }
    }
    if by_what.is_empty() {
        return "no check ran".into();
    }
    by_what
        .iter()
        .map(|c| check_sentence(c))
        .collect::<Vec<_>>()
        .join("; ")
}
