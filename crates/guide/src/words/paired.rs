//! The words of a comparison timed in pairs: its interval, how its rounds ran and why they
//! stopped.

use results::{
    format, Interleaving, Interval, PairedComparison, PairedOutcome, PairedTiming, Stop,
};

/// "+4.1% (95% CI +1.2 to +7.0)" where resolved, "no difference resolved (±6.0%)" where the
/// interval holds 0.
pub fn interval(i: &Interval) -> String {
    if i.resolved() {
        format!(
            "{:+.1}% (95% CI {:+.1} to {:+.1})",
            i.estimate_pct, i.low_pct, i.high_pct
        )
    } else {
        format!("no difference resolved (±{:.1}%)", i.bound_pct())
    }
}

/// The cost in words: the interval's phrase, or why there is none.
pub fn cost_phrase(c: &PairedComparison) -> String {
    match &c.outcome {
        PairedOutcome::Measured { timing } => interval(&timing.cost),
        PairedOutcome::Failed { reason } => format!("not measured: {reason}"),
    }
}

/// One sentence for a page's findings: what was timed against what, how, the cost per sample
/// and the A/A control's resolution.
pub fn finding(c: &PairedComparison) -> String {
    let what = format!("{} against {}", c.technique_label, c.baseline_label);
    match &c.outcome {
        PairedOutcome::Failed { reason } => {
            format!("Timed in pairs, {what}: not measured ({reason}).")
        }
        PairedOutcome::Measured { timing } => format!(
            "Timed in pairs, {what} ({}, {}): time per sample {}; the A/A control (the baseline \
             against a second copy of itself) gives {}, so this comparison resolves differences \
             beyond ±{:.1}%.",
            method(timing),
            stop_phrase(timing),
            interval(&timing.cost),
            interval(&timing.control),
            timing.control.bound_pct(),
        ),
    }
}

/// How the rounds ran and what the interval is over, in a few words.
pub fn method(t: &PairedTiming) -> String {
    let steps = format!(
        "{} step{}",
        t.steps_per_block,
        if t.steps_per_block == 1 { "" } else { "s" }
    );
    match t.interleaving {
        Interleaving::OneProcess if t.builds >= 2 => format!(
            "{} builds, each a fresh process building its own three arms and running {} rounds \
             of {steps} per arm, the interval over builds",
            t.builds,
            t.rounds.len() / t.builds
        ),
        Interleaving::OneProcess => format!(
            "{} rounds of {steps} per arm in one process, the interval over rounds: it leaves \
             out how much a fresh build of the same points differs",
            t.rounds.len()
        ),
        Interleaving::OneModel => format!(
            "{} builds, each a fresh process building one model whose steps take the three \
             arms' turns (the technique switched on and off between steps) over {} rounds of \
             {steps} per arm, the interval over builds",
            t.builds,
            t.rounds.len() / t.builds.max(1)
        ),
        Interleaving::AlternatingProcesses => format!(
            "{} rounds of alternating child processes, {steps} per block, the interval over \
             rounds",
            t.rounds.len()
        ),
    }
}

/// Why the rounds stopped, and the time they took, in a few words.
pub fn stop_phrase(t: &PairedTiming) -> String {
    let why = match t.stop {
        Stop::Converged => format!(
            "stopped when both intervals were within ±{}%",
            t.settings.target_half_width_pct
        ),
        Stop::BudgetSpent => format!(
            "stopped at its {} budget before both intervals reached ±{}%",
            format::seconds(t.settings.budget_s),
            t.settings.target_half_width_pct
        ),
    };
    let rounds = format::seconds(t.rounds_s);
    if t.wall_s > 0.0 {
        format!(
            "{why} ({rounds} of rounds, {} in all)",
            format::seconds(t.wall_s)
        )
    } else {
        format!("{why} ({rounds} of rounds)")
    }
}

#[cfg(test)]
mod tests {
    use super::interval;
    use results::Interval;

    #[test]
    fn an_interval_that_holds_zero_reads_as_not_resolved() {
        let resolved = Interval {
            estimate_pct: 10.0,
            low_pct: 8.25,
            high_pct: 11.5,
        };
        assert_eq!(interval(&resolved), "+10.0% (95% CI +8.2 to +11.5)");
        let open = Interval {
            estimate_pct: 1.0,
            low_pct: -2.0,
            high_pct: 4.25,
        };
        assert_eq!(interval(&open), "no difference resolved (±4.2%)");
    }
}
