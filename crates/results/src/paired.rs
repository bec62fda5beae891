//! Paired timing: a technique's time against its baseline's, measured as a comparison.
//!
//! Question: is the technique slower or faster than its baseline on this machine, and by how
//! much, given that these machines drift by up to ±20% between processes minutes apart?
//! Method: baseline (A), technique (B) and a second, independently built baseline (A') run in
//! rounds, the order of the three turning through all six permutations. Where the three can
//! share a process, a *build* (a fresh child process that builds its own three arms) runs
//! three rounds, and builds follow one another; where they cannot, each block is a child
//! process of its own, so each round is a build. Each round gives one block time per arm; a
//! build's cost is the mean over its rounds of `ln(B / A)` per sample, and the comparison's
//! the mean over builds, with the paired t-interval over builds (Student's t with builds - 1
//! degrees of freedom). The unit is the build, not the round, because the step of a freshly
//! built point differs from one process to the next by more than rounds within one process
//! vary (views-vs-clones' copy against a view: -43% to +34% in five processes, each with a
//! tight interval over its own rounds): an interval over one process's rounds leaves that out.
//! A' against A is the A/A control: its interval should hold 0 (at 95%, one control in twenty
//! will not), and its width is the resolution.
//! Builds go on until both intervals are narrower than a target or a time budget is spent.
//! Answer: a [`PairedComparison`] in the record, whose [`Interval`] says "+4.1% (95% CI +1.2
//! to +7.0)" or "no difference resolved (±6.0%)", never a bare difference of two medians.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Which two of a technique's points a comparison times against each other, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComparisonSpec {
    /// Unique within the technique, kebab-case (`headline`, `bf16-storage`).
    pub id: String,
    /// The point the technique is compared with (A).
    pub baseline: String,
    /// The point applying the technique (B).
    pub technique: String,
    /// A supporting comparison (one point of a chart), not a headline: it gets a quarter of
    /// the time budget and two builds at least (the headline's four).
    #[serde(default)]
    pub supporting: bool,
    /// Builds to run at least, where fewer than the settings' (four) are enough: a step of
    /// seconds, whose builds of three arms each take a minute (the interval widens with fewer
    /// builds, and says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_builds: Option<usize>,
}

impl ComparisonSpec {
    /// Compares point `technique` with point `baseline` (point ids).
    pub fn new(id: &str, baseline: &str, technique: &str) -> Self {
        Self {
            id: id.into(),
            baseline: baseline.into(),
            technique: technique.into(),
            supporting: false,
            min_builds: None,
        }
    }

    /// The same, run in at least `builds` builds (two, or more, even).
    pub fn in_builds(self, builds: usize) -> Self {
        Self {
            min_builds: Some(builds),
            ..self
        }
    }

    /// The same, as a supporting comparison.
    pub fn supporting(self) -> Self {
        Self {
            supporting: true,
            ..self
        }
    }
}

/// How long, and how precisely, a comparison is measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairSettings {
    /// Rounds run before the stopping rule is first asked (the first round, a warm-up, is not
    /// counted).
    pub min_rounds: usize,
    /// Stop once both intervals' half-widths are at most this, in percent.
    pub target_half_width_pct: f64,
    /// Or once this much time has been spent on rounds, whichever is first.
    pub budget_s: f64,
    /// A block (one arm's turn in a round) runs as many steps as take at least this long.
    pub min_block_s: f64,
    /// Builds before the stopping rule is first asked, where the arms share a process (each
    /// block its own process counts each round as a build, and `min_rounds` applies).
    pub min_builds: usize,
    /// Rounds each build runs, where the arms share a process: [`HALF_CYCLE`], so that each
    /// build takes every order in one half of the cycle, and two builds the whole cycle.
    pub rounds_per_build: usize,
}

/// Why the rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// Both intervals reached the target half-width.
    Converged,
    /// The time budget was spent first.
    BudgetSpent,
}

/// Where the arms ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interleaving {
    /// The three arms built side by side in one child process, taking turns step by step.
    OneProcess,
    /// The three arms one model in one child process, taking turns step by step: a technique
    /// the model switches on and off between steps (the allocation recorder). Builds, as in
    /// [`Interleaving::OneProcess`], each with one set-up instead of three.
    OneModel,
    /// A child process per block, alternating (the arms need different default float types,
    /// which Burn sets once per process).
    AlternatingProcesses,
}

impl Interleaving {
    /// Whether the rounds run in builds (child processes of half a cycle each), the interval
    /// over builds; otherwise each block is a child process.
    pub fn in_builds(self) -> bool {
        matches!(self, Interleaving::OneProcess | Interleaving::OneModel)
    }

    /// In words, for the page.
    pub fn describe(self) -> &'static str {
        match self {
            Interleaving::OneProcess => "interleaved in one process",
            Interleaving::OneModel => "interleaved on one model in one process",
            Interleaving::AlternatingProcesses => "alternating child processes",
        }
    }
}

/// One round: the time per step of each arm's block, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The build it ran in (0, 1, ...): the child process that built its arms.
    pub build: usize,
    /// The baseline (A).
    pub baseline_s: f64,
    /// The technique (B).
    pub technique_s: f64,
    /// The second baseline (A'), the control.
    pub control_s: f64,
}

/// Rounds in one cycle of [`round_order`]: every order once.
pub const CYCLE: usize = 6;

/// Rounds in half a cycle: each half is a Latin square (every arm in every position once).
pub const HALF_CYCLE: usize = 3;

/// The order of the three arms in round `r`: all six permutations in turn, so that over a
/// cycle each arm runs first, second and third equally often and follows each other arm
/// equally often, and over each half cycle takes every position once (0: A, 1: B, 2: A').
pub fn round_order(r: usize) -> [usize; 3] {
    const ORDERS: [[usize; 3]; CYCLE] = [
        [0, 1, 2],
        [1, 2, 0],
        [2, 0, 1],
        [0, 2, 1],
        [2, 1, 0],
        [1, 0, 2],
    ];
    ORDERS[r % ORDERS.len()]
}

/// The rounds (as indices into [`round_order`]) that build `build` runs, `rounds_per_build` of
/// them. With [`HALF_CYCLE`] rounds a build takes one half of the cycle (a Latin square: each
/// arm first, second and third once), builds alternating halves, so that two builds run all
/// six orders; and the half's rounds start one further on every second build, so that over six
/// builds each arm opens a build twice (the first counted round of a build follows the
/// warm-up, and an arm that always opened it would carry whatever that costs).
pub fn build_rounds(build: usize, rounds_per_build: usize) -> Vec<usize> {
    if rounds_per_build == HALF_CYCLE {
        let (half, offset) = (build % 2, (build / 2) % HALF_CYCLE);
        (0..HALF_CYCLE)
            .map(|j| HALF_CYCLE * half + (offset + j) % HALF_CYCLE)
            .collect()
    } else {
        let first = build * rounds_per_build.max(1);
        (first..first + rounds_per_build.max(1)).collect()
    }
}

/// Runs round `r` of build `build`: each arm's block in [`round_order`]`(r)`; `block(i)` runs
/// arm `i` for one block and returns its time per step.
pub fn run_round<E>(
    r: usize,
    build: usize,
    mut block: impl FnMut(usize) -> Result<f64, E>,
) -> Result<Round, E> {
    let mut times = [0.0; 3];
    for &i in &round_order(r) {
        times[i] = block(i)?;
    }
    Ok(Round {
        build,
        baseline_s: times[0],
        technique_s: times[1],
        control_s: times[2],
    })
}

/// Which build a child process runs, and its block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildPlan {
    /// The build's number (0, 1, ...): it labels the rounds, picks which half of the cycle of
    /// orders they take, and the order in which the three arms are built.
    pub build: usize,
    /// Steps per block; `None` for the first build, which sizes its blocks (at least
    /// `min_block_s` of the fastest arm) for the builds after it.
    pub steps_per_block: Option<usize>,
}

/// The rounds one build ran (one child process that built the three arms side by side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Build {
    /// Steps in each arm's block.
    pub steps_per_block: usize,
    /// Samples one step of the baseline processes.
    pub baseline_samples_per_step: u64,
    /// Samples one step of the technique processes.
    pub technique_samples_per_step: u64,
    /// Its rounds, each labelled with this build's number.
    pub rounds: Vec<Round>,
    /// Time spent on its rounds (building and warming up the arms excluded).
    pub rounds_s: f64,
    /// Whether its arms were one model taking turns ([`Interleaving::OneModel`]).
    #[serde(default)]
    pub one_model: bool,
}

/// A relative difference with its 95% interval, in percent (`+4.1` is 4.1% more time).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The estimate: `exp(mean ln ratio) - 1`, in percent.
    pub estimate_pct: f64,
    /// Lower end of the 95% interval, in percent.
    pub low_pct: f64,
    /// Upper end, in percent.
    pub high_pct: f64,
}

impl Interval {
    /// The mean of `log_ratios` and its 95% paired t-interval, as percentages
    /// (`exp(x) - 1`); `None` for fewer than two.
    pub fn paired_t(log_ratios: &[f64]) -> Option<Self> {
        let n = log_ratios.len();
        if n < 2 || log_ratios.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = log_ratios.iter().sum::<f64>() / n as f64;
        let variance = log_ratios.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .ok()?
            .inverse_cdf(0.975);
        let half = t * (variance / n as f64).sqrt();
        let pct = |l: f64| l.exp_m1() * 100.0;
        Some(Self {
            estimate_pct: pct(mean),
            low_pct: pct(mean - half),
            high_pct: pct(mean + half),
        })
    }

    /// Whether the interval excludes 0: a difference was resolved.
    pub fn resolved(&self) -> bool {
        self.low_pct > 0.0 || self.high_pct < 0.0
    }

    /// Half the interval's width, in percentage points.
    pub fn half_width_pct(&self) -> f64 {
        (self.high_pct - self.low_pct) / 2.0
    }

    /// The largest difference the interval cannot rule out, in percent: its farther end.
    pub fn bound_pct(&self) -> f64 {
        self.low_pct.abs().max(self.high_pct.abs())
    }
}

/// What the rounds of a comparison measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedTiming {
    /// Where the arms ran.
    pub interleaving: Interleaving,
    /// Steps in each arm's block.
    pub steps_per_block: usize,
    /// Samples one step of the baseline processes (the cost is per sample).
    pub baseline_samples_per_step: u64,
    /// Samples one step of the technique processes.
    pub technique_samples_per_step: u64,
    /// Every counted round, in the order run (warm-up rounds excluded), with its build.
    pub rounds: Vec<Round>,
    /// Builds the rounds ran in: the units of the intervals.
    pub builds: usize,
    /// The technique's time per sample against the baseline's.
    pub cost: Interval,
    /// The control's time per step against the baseline's: the resolution.
    pub control: Interval,
    /// Why the rounds stopped.
    pub stop: Stop,
    /// How long and how precisely it was asked to measure.
    pub settings: PairSettings,
    /// Time spent on rounds (building the arms and their warm-up excluded).
    pub rounds_s: f64,
    /// Time the whole comparison took, building and warming up every build's arms included.
    pub wall_s: f64,
}

/// The two intervals of a set of rounds: the technique's cost per sample and the control's.
/// Where the rounds come from two builds or more, the units are the builds (each build's mean
/// log ratio over its rounds); rounds of a single build are units themselves.
pub fn intervals(
    rounds: &[Round],
    baseline_samples_per_step: u64,
    technique_samples_per_step: u64,
) -> Option<(Interval, Interval)> {
    let per_sample =
        baseline_samples_per_step.max(1) as f64 / technique_samples_per_step.max(1) as f64;
    let cost = per_build(rounds, |r| (r.technique_s / r.baseline_s * per_sample).ln());
    let control = per_build(rounds, |r| (r.control_s / r.baseline_s).ln());
    Some((Interval::paired_t(&cost)?, Interval::paired_t(&control)?))
}

/// Builds among `rounds`.
pub fn count_builds(rounds: &[Round]) -> usize {
    let mut seen: Vec<usize> = rounds.iter().map(|r| r.build).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// `value` of each build's rounds, averaged per build (in the order builds first appear); the
/// rounds' own values where there is one build.
fn per_build(rounds: &[Round], value: impl Fn(&Round) -> f64) -> Vec<f64> {
    if count_builds(rounds) < 2 {
        return rounds.iter().map(value).collect();
    }
    let mut sums: Vec<(usize, f64, usize)> = Vec::new();
    for r in rounds {
        let v = value(r);
        match sums.iter_mut().find(|(b, _, _)| *b == r.build) {
            Some((_, sum, n)) => {
                *sum += v;
                *n += 1;
            }
            None => sums.push((r.build, v, 1)),
        }
    }
    sums.into_iter().map(|(_, sum, n)| sum / n as f64).collect()
}

impl PairedTiming {
    /// Summarises counted `rounds` (their builds are counted from them).
    #[allow(clippy::too_many_arguments)]
    pub fn summarise(
        interleaving: Interleaving,
        steps_per_block: usize,
        baseline_samples_per_step: u64,
        technique_samples_per_step: u64,
        rounds: Vec<Round>,
        stop: Stop,
        settings: PairSettings,
        rounds_s: f64,
        wall_s: f64,
    ) -> Option<Self> {
        let (cost, control) = intervals(
            &rounds,
            baseline_samples_per_step,
            technique_samples_per_step,
        )?;
        Some(Self {
            interleaving,
            steps_per_block,
            baseline_samples_per_step,
            technique_samples_per_step,
            builds: count_builds(&rounds),
            rounds,
            cost,
            control,
            stop,
            settings,
            rounds_s,
            wall_s,
        })
    }

    /// Whether the rounds stop after `rounds`, with `elapsed_s` spent on them, and why. Where
    /// the arms share a process, the units are builds: they stop only after an even number of
    /// builds (a whole cycle of orders), at least `min_builds`, and at most [`MAX_BUILDS`].
    /// Where each block is a process, the units are rounds: they stop only at the end of a
    /// cycle. Either stops when both intervals are within the target (after `min_rounds`
    /// rounds), or when the budget is spent.
    pub fn stop(
        interleaving: Interleaving,
        rounds: &[Round],
        baseline_samples_per_step: u64,
        technique_samples_per_step: u64,
        settings: &PairSettings,
        elapsed_s: f64,
    ) -> Option<Stop> {
        let whole = if interleaving.in_builds() {
            let builds = count_builds(rounds);
            builds >= settings.min_builds.max(2) && builds.is_multiple_of(2)
        } else {
            rounds.len() >= 2 && rounds.len().is_multiple_of(CYCLE)
        };
        if !whole {
            return None;
        }
        if Self::converged(
            rounds,
            baseline_samples_per_step,
            technique_samples_per_step,
            settings,
        ) {
            Some(Stop::Converged)
        } else if elapsed_s >= settings.budget_s
            || (interleaving.in_builds() && count_builds(rounds) >= MAX_BUILDS)
        {
            Some(Stop::BudgetSpent)
        } else {
            None
        }
    }

    /// Whether the stopping rule is met by `rounds` (at least `min_rounds`, both intervals
    /// within the target).
    pub fn converged(
        rounds: &[Round],
        baseline_samples_per_step: u64,
        technique_samples_per_step: u64,
        settings: &PairSettings,
    ) -> bool {
        rounds.len() >= settings.min_rounds
            && intervals(
                rounds,
                baseline_samples_per_step,
                technique_samples_per_step,
            )
            .is_some_and(|(cost, control)| {
                cost.half_width_pct() <= settings.target_half_width_pct
                    && control.half_width_pct() <= settings.target_half_width_pct
            })
    }
}

/// The most builds a comparison runs, whatever its budget says.
pub const MAX_BUILDS: usize = 24;

/// A comparison as the record keeps it: which points, and what the rounds found or why there
/// are none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedComparison {
    /// Which points.
    pub spec: ComparisonSpec,
    /// The baseline's label (not stored: render takes it from the plan, as the points').
    #[serde(default, skip_serializing)]
    pub baseline_label: String,
    /// The technique's label (likewise).
    #[serde(default, skip_serializing)]
    pub technique_label: String,
    /// What the rounds measured, or why they could not run.
    pub outcome: PairedOutcome,
}

/// What a comparison's rounds gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum PairedOutcome {
    /// Measured.
    Measured {
        /// The rounds and their intervals.
        timing: Box<PairedTiming>,
    },
    /// Not measured: why, in one line.
    Failed {
        /// Why.
        reason: String,
    },
}

impl PairedComparison {
    /// The rounds, where measured.
    pub fn timing(&self) -> Option<&PairedTiming> {
        match &self.outcome {
            PairedOutcome::Measured { timing } => Some(timing),
            PairedOutcome::Failed { .. } => None,
        }
    }
}

/// The comparison `id` among `comparisons`.
pub fn find<'a>(comparisons: &'a [PairedComparison], id: &str) -> Option<&'a PairedComparison> {
    comparisons.iter().find(|c| c.spec.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> PairSettings {
        PairSettings {
            min_rounds: 5,
            target_half_width_pct: 2.0,
            budget_s: 10.0,
            min_block_s: 0.01,
            min_builds: 4,
            rounds_per_build: HALF_CYCLE,
        }
    }

    #[test]
    fn a_clear_difference_is_resolved_and_noise_is_not() {
        // B takes 10% longer than A in every round, with ±2% of alternating noise.
        let rounds: Vec<Round> = (0..20)
            .map(|i| {
                let noise = if i % 2 == 0 { 1.02 } else { 0.98 };
                Round {
                    build: 0,
                    baseline_s: 1.0,
                    technique_s: 1.1 * noise,
                    control_s: noise,
                }
            })
            .collect();
        let (cost, control) = intervals(&rounds, 1, 1).unwrap();
        assert!(cost.resolved());
        assert!((cost.estimate_pct - 10.0).abs() < 0.5, "{cost:?}");
        assert!(cost.low_pct < 10.0 && cost.high_pct > 10.0);
        assert!(!control.resolved(), "{control:?}");
    }

    #[test]
    fn the_cost_is_per_sample() {
        // B processes twice the samples in 1.5 times the time: 25% less time per sample.
        let rounds = vec![
            Round {
                build: 0,
                baseline_s: 1.0,
                technique_s: 1.5,
                control_s: 1.0,
            };
            4
        ];
        let (cost, _) = intervals(&rounds, 8, 16).unwrap();
        assert!((cost.estimate_pct + 25.0).abs() < 1e-9, "{cost:?}");
    }

    #[test]
    fn the_interval_is_students_and_needs_two_rounds() {
        // Mean 0.1, sample standard deviation 0.1, n = 4: t(3, 0.975) = 3.182.
        let logs = [0.0, 0.1, 0.2, 0.1 + 0.1 * (2.0f64 / 3.0).sqrt() * 0.0];
        let i = Interval::paired_t(&logs).unwrap();
        let sd = (logs.iter().map(|v| (v - 0.1f64).powi(2)).sum::<f64>() / 3.0).sqrt();
        let half = 3.182_446 * sd / 2.0;
        assert!(
            (i.low_pct - (0.1f64 - half).exp_m1() * 100.0).abs() < 1e-3,
            "{i:?}"
        );
        assert!(
            (i.high_pct - (0.1f64 + half).exp_m1() * 100.0).abs() < 1e-3,
            "{i:?}"
        );
        assert!(Interval::paired_t(&[0.1]).is_none());
        assert!(Interval::paired_t(&[0.1, f64::NAN]).is_none());
    }

    #[test]
    fn rounds_stop_only_at_the_end_of_a_cycle() {
        let steady = vec![
            Round {
                build: 0,
                baseline_s: 1.0,
                technique_s: 1.05,
                control_s: 1.0,
            };
            13
        ];
        let s = PairSettings {
            min_rounds: 6,
            ..settings()
        };
        let alt = Interleaving::AlternatingProcesses;
        // Converged from 6 rounds on, but only at multiples of 6.
        assert_eq!(PairedTiming::stop(alt, &steady[..5], 1, 1, &s, 0.0), None);
        assert_eq!(
            PairedTiming::stop(alt, &steady[..6], 1, 1, &s, 0.0),
            Some(Stop::Converged)
        );
        assert_eq!(PairedTiming::stop(alt, &steady[..7], 1, 1, &s, 99.0), None);
        let mut noisy = steady.clone();
        noisy[0].control_s = 1.5;
        assert_eq!(
            PairedTiming::stop(alt, &noisy[..12], 1, 1, &s, 99.0),
            Some(Stop::BudgetSpent)
        );
        assert_eq!(PairedTiming::stop(alt, &noisy[..12], 1, 1, &s, 1.0), None);
    }

    /// `n` builds of three rounds each; build `k`'s technique runs `1 + offset(k)` times the
    /// baseline, its rounds identical.
    fn builds(n: usize, offset: impl Fn(usize) -> f64) -> Vec<Round> {
        (0..n * HALF_CYCLE)
            .map(|i| {
                let build = i / HALF_CYCLE;
                Round {
                    build,
                    baseline_s: 1.0,
                    technique_s: 1.0 + offset(build),
                    control_s: 1.0 + offset(build) / 10.0,
                }
            })
            .collect()
    }

    #[test]
    fn builds_stop_in_pairs_after_the_minimum() {
        let s = settings();
        let one = Interleaving::OneProcess;
        let steady = builds(6, |k| 0.05 + 0.001 * k as f64);
        // Never before min_builds (4), and only after an even number of builds.
        for n in 1..4 {
            assert_eq!(
                PairedTiming::stop(one, &steady[..n * 3], 1, 1, &s, 99.0),
                None
            );
        }
        assert_eq!(
            PairedTiming::stop(one, &steady[..12], 1, 1, &s, 0.0),
            Some(Stop::Converged)
        );
        assert_eq!(PairedTiming::stop(one, &steady[..15], 1, 1, &s, 99.0), None);
        let scattered = builds(4, |k| [0.3, -0.3, 0.2, -0.1][k]);
        assert_eq!(
            PairedTiming::stop(one, &scattered, 1, 1, &s, 1.0),
            None,
            "not converged, budget left"
        );
        assert_eq!(
            PairedTiming::stop(one, &scattered, 1, 1, &s, 99.0),
            Some(Stop::BudgetSpent)
        );
    }

    #[test]
    fn the_unit_is_the_build_not_the_round() {
        // Each build's rounds agree exactly, but the builds disagree: the interval over rounds
        // would be narrow, the interval over builds is wide and holds 0.
        let rounds = builds(4, |k| [0.2, -0.15, 0.1, -0.1][k]);
        assert_eq!(count_builds(&rounds), 4);
        let (cost, _) = intervals(&rounds, 1, 1).unwrap();
        let means: Vec<f64> = [0.2f64, -0.15, 0.1, -0.1]
            .iter()
            .map(|o| (1.0 + o).ln())
            .collect();
        assert_eq!(cost, Interval::paired_t(&means).unwrap());
        assert!(!cost.resolved(), "{cost:?}");
        // One build: the rounds are the units.
        let single = builds(1, |_| 0.1);
        let (cost, _) = intervals(&single, 1, 1).unwrap();
        assert!((cost.estimate_pct - 10.0).abs() < 1e-9);
    }

    #[test]
    fn every_arm_opens_builds_equally_often_and_two_builds_run_every_order() {
        let mut opened = [0; 3];
        for build in 0..6 {
            let rounds = build_rounds(build, HALF_CYCLE);
            opened[round_order(rounds[0])[0]] += 1;
            for position in 0..3 {
                let mut arms: Vec<usize> =
                    rounds.iter().map(|&r| round_order(r)[position]).collect();
                arms.sort_unstable();
                assert_eq!(arms, [0, 1, 2], "build {build}, position {position}");
            }
        }
        assert_eq!(opened, [2, 2, 2]);
        for pair in [0, 2, 4] {
            let mut orders: Vec<[usize; 3]> = build_rounds(pair, HALF_CYCLE)
                .into_iter()
                .chain(build_rounds(pair + 1, HALF_CYCLE))
                .map(round_order)
                .collect();
            orders.sort_unstable();
            orders.dedup();
            assert_eq!(orders.len(), CYCLE);
        }
    }

    #[test]
    fn half_cycles_are_latin_squares() {
        for half in [0, HALF_CYCLE] {
            for position in 0..3 {
                let mut arms: Vec<usize> = (half..half + HALF_CYCLE)
                    .map(|r| round_order(r)[position])
                    .collect();
                arms.sort_unstable();
                assert_eq!(arms, [0, 1, 2], "half from {half}, position {position}");
            }
        }
    }

    #[test]
    fn every_arm_takes_every_position_equally_often() {
        for arm in 0..3 {
            for position in 0..3 {
                let n = (0..CYCLE)
                    .filter(|&r| round_order(r)[position] == arm)
                    .count();
                assert_eq!(n, 2);
            }
        }
        // And follows every other arm equally often, across the boundary between rounds too.
        let sequence: Vec<usize> = (1..=CYCLE).flat_map(round_order).collect();
        for a in 0..3 {
            for b in (0..3).filter(|&b| b != a) {
                let n = (0..sequence.len())
                    .filter(|&i| sequence[i] == a && sequence[(i + 1) % sequence.len()] == b)
                    .count();
                assert!(n >= 2, "{a} then {b}: {n}");
            }
        }
    }

    #[test]
    fn convergence_needs_the_minimum_rounds_and_both_intervals_narrow() {
        let steady = vec![
            Round {
                build: 0,
                baseline_s: 1.0,
                technique_s: 1.05,
                control_s: 1.0,
            };
            5
        ];
        assert!(PairedTiming::converged(&steady, 1, 1, &settings()));
        assert!(!PairedTiming::converged(&steady[..4], 1, 1, &settings()));
        let mut noisy_control = steady.clone();
        noisy_control[0].control_s = 1.5;
        assert!(!PairedTiming::converged(&noisy_control, 1, 1, &settings()));
    }
}
