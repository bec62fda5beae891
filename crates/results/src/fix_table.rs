//! One workload's fixes on one base: the table the landing page is built on.
//!
//! Question: on a model of the size people run out of memory with, what does each fix do to
//! the same training step's peak, and does the rule that projects it onto a card hold where
//! the card runs out? Method: a technique that measures every fix on one workload declares its
//! cells (each a measured point: its peak split into parts that add up to it, the estimator's
//! prediction), in one or two sets (the table's model, and a model in the order's regime,
//! where activations are most of the step); the same fixes projected by the estimator onto a
//! card's out-of-memory point; and, for each projected fix, its rule checked in the measured
//! set nearest that regime. Answer: the guide ranks fixes by the projection, says where each
//! rule was verified, and labels a rule a measurement contradicts.

use serde::{Deserialize, Serialize};

use crate::device::DeviceKind;
use crate::verdict::Fix;
use crate::words::MapText;

/// A measured step's peak in parts that add up to it: what was held before the step (weights
/// and optimizer state, and the rest: inputs, the runtime's bookkeeping), what earlier phases
/// left for the peak's phase (on a training step, the activations the forward pass kept), and
/// what the peak's phase added at its high-water mark (backward's gradients and transients,
/// less the activations it had already freed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PeakParts {
    /// Weights and optimizer state (weights only for inference), as measured.
    pub weights_and_state_bytes: f64,
    /// The rest of what was live before the step.
    pub other_before_bytes: f64,
    /// What the phases before the peak's left alive into it.
    pub carried_bytes: f64,
    /// What the peak's phase added, at its peak.
    pub added_bytes: f64,
}

impl PeakParts {
    /// The peak the parts make.
    pub fn total_bytes(&self) -> f64 {
        self.weights_and_state_bytes
            + self.other_before_bytes
            + self.carried_bytes
            + self.added_bytes
    }
}

/// One fix measured on the workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixCell {
    /// The fix.
    pub fix: Fix,
    /// The measured point's id.
    pub point: String,
    /// The step's (or pass's) peak above the process's own bytes.
    pub peak_bytes: f64,
    /// The peak in parts ([`PeakParts::total_bytes`] equals `peak_bytes`).
    pub parts: PeakParts,
    /// What the forward pass keeps for backward (a pass's own bytes for inference), measured.
    pub activation_bytes: f64,
    /// The parameter gradients at the end of backward, as measured (NaN where the cell did not
    /// read them: inference, and accumulation, whose gradients move into the accumulator).
    pub gradient_bytes: f64,
    /// The estimator's step peak, where it models the cell.
    pub predicted_bytes: Option<f64>,
}

impl FixCell {
    /// The estimator's error against this cell's peak, in percent (positive: it predicts
    /// more than measured).
    pub fn estimate_error_pct(&self) -> Option<f64> {
        self.predicted_bytes
            .map(|p| (p - self.peak_bytes) / self.peak_bytes * 100.0)
    }
}

/// The fixes measured on one model, on one base (the plain step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSet<S = String> {
    /// The model, batch and sequence, in words.
    pub workload: S,
    /// Tokens per sequence.
    pub seq: usize,
    /// Sequences per step of the plain cell.
    pub batch: usize,
    /// The cells, in the table's order.
    pub cells: Vec<FixCell>,
}

impl<S> CellSet<S> {
    /// The cell of `fix`.
    pub fn cell(&self, fix: Fix) -> Option<&FixCell> {
        self.cells.iter().find(|c| c.fix == fix)
    }

    /// The base cell's peak (the plain step's).
    pub fn base_peak_bytes(&self) -> Option<f64> {
        self.cell(Fix::Plain).map(|c| c.peak_bytes)
    }

    /// `cell`'s change of the base's peak, in percent (negative: saves).
    pub fn change_pct(&self, cell: &FixCell) -> Option<f64> {
        self.base_peak_bytes()
            .map(|base| (cell.peak_bytes - base) / base * 100.0)
    }

    /// The share of the plain step's peak that its activations are, in percent: the regime
    /// the set measures rules in.
    pub fn activation_share_pct(&self) -> Option<f64> {
        self.cell(Fix::Plain)
            .map(|c| c.activation_bytes / c.peak_bytes * 100.0)
    }
}

/// Why a measurement contradicts a rule, where the cause is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Contradiction {
    /// The backend multiplies 16-bit values through f32 copies of its own (Flex): mixed
    /// precision keeps more, not fewer, bytes than the rule's 2 a value.
    Bf16MatmulViaF32,
    /// No cause traced: the measurement saved less than half of what the rule predicts.
    Unexplained,
}

/// A projected fix's rule, checked in a measured set: the change of the plain step's peak it
/// predicts there and the change measured, on one backend, in one regime.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RuleCheck {
    /// The device the set was measured on.
    pub device: DeviceKind,
    /// Whether the set is the one measured for the order's regime (otherwise the table's own
    /// model, in its regime).
    pub regime_set: bool,
    /// Activations as a share of the set's plain step's peak, in percent.
    pub activation_share_pct: f64,
    /// Tokens per sequence of the set.
    pub seq: usize,
    /// Sequences per plain step of the set.
    pub batch: usize,
    /// The rule's change of the plain step's peak there, in percent.
    pub predicted_change_pct: f64,
    /// The measured change, in percent.
    pub measured_change_pct: f64,
    /// The estimator's error on the fix's step there, in percent (positive: too high).
    pub error_pct: f64,
    /// Where the measurement contradicts the rule: it saved less than half of the predicted
    /// saving.
    pub contradiction: Option<Contradiction>,
}

impl RuleCheck {
    /// The share of the peak activations must reach for a set to stand for the order's regime.
    pub const REGIME_SHARE_PCT: f64 = 75.0;

    /// Whether the measured change contradicts the predicted one: a predicted saving of which
    /// less than half was measured.
    pub fn contradicts(predicted_change_pct: f64, measured_change_pct: f64) -> bool {
        predicted_change_pct < 0.0 && measured_change_pct > predicted_change_pct / 2.0
    }
}

/// One fix at the card's out-of-memory point, from the estimator's rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectedCell {
    /// The fix.
    pub fix: Fix,
    /// The way to train of "What fits" whose step is this fix's (`f32, Adam` for the plain
    /// step), where one is: the same largest batch, which both pages print.
    #[serde(default)]
    pub way: Option<String>,
    /// The estimated step peak at the projection's batch and sequence.
    pub predicted_bytes: f64,
    /// The largest batch that fits the card with this fix, by the same rules.
    pub max_batch: f64,
    /// The fix's rule checked in the measured set nearest the projection's regime (none where
    /// no set was measured in it).
    pub rule: Option<RuleCheck>,
    /// The same rule checked in a measured set outside the regime (the table's, where the
    /// regime was measured apart), kept where that measurement contradicts it: a rule any
    /// measurement contradicts says so wherever it is used.
    #[serde(default)]
    pub contradicted_outside: Option<RuleCheck>,
}

impl ProjectedCell {
    /// Its rule's check in the regime, where that measurement contradicts it: the only
    /// measurement that labels the row (one outside the regime is said beside it, see
    /// [`ProjectedCell::contradicted_outside`], but a rule may hold in one regime and not in
    /// another).
    pub fn contradiction(&self) -> Option<&RuleCheck> {
        self.rule.as_ref().filter(|r| r.contradiction.is_some())
    }
}

/// The fixes projected onto a card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// The estimator's preset the fixes are projected on (`gpt2-124m`).
    #[serde(default)]
    pub preset: String,
    /// The card's memory, as its driver reports it.
    pub card_bytes: f64,
    /// What a step in f32 may plan on: the card less the CUDA context and the estimator's
    /// safety margin.
    pub usable_bytes: f64,
    /// Tokens per sequence at the projection.
    pub seq: usize,
    /// Sequences per step: the smallest batch at which plain training no longer fits.
    pub batch: f64,
    /// Activations (with transients) as a share of the plain step's estimated peak there, in
    /// percent: the order's regime.
    pub activation_share_pct: f64,
    /// The projected cells, in the measured table's order.
    pub cells: Vec<ProjectedCell>,
}

impl Projection {
    /// The projected cell of `fix`.
    pub fn cell(&self, fix: Fix) -> Option<&ProjectedCell> {
        self.cells.iter().find(|c| c.fix == fix)
    }
}

/// The fixes of one workload, on one base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixTable<S = String> {
    /// The table's model.
    pub table: CellSet<S>,
    /// A model measured in the order's regime, where the table's is not in it.
    pub regime: Option<CellSet<S>>,
    /// The same fixes on a card, estimated.
    pub projection: Option<Projection>,
}

impl<S> MapText<S> for CellSet<S> {
    type Out<T> = CellSet<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> CellSet<T> {
        CellSet {
            workload: word(&self.workload),
            seq: self.seq,
            batch: self.batch,
            cells: self.cells.clone(),
        }
    }
}

impl<S> MapText<S> for FixTable<S> {
    type Out<T> = FixTable<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> FixTable<T> {
        FixTable {
            table: self.table.map_text(word),
            regime: self.regime.as_ref().map(|r| r.map_text(word)),
            projection: self.projection.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(fix: Fix, peak: f64, activations: f64, predicted: Option<f64>) -> FixCell {
        FixCell {
            fix,
            point: fix.id().into(),
            peak_bytes: peak,
            parts: PeakParts {
                weights_and_state_bytes: peak - activations,
                other_before_bytes: 0.0,
                carried_bytes: activations,
                added_bytes: 0.0,
            },
            activation_bytes: activations,
            gradient_bytes: f64::NAN,
            predicted_bytes: predicted,
        }
    }

    #[test]
    fn every_change_is_a_share_of_the_one_base_and_the_parts_add_up() {
        let set = CellSet {
            workload: String::new(),
            seq: 1024,
            batch: 2,
            cells: vec![
                cell(Fix::Plain, 200.0, 160.0, None),
                cell(Fix::HalfBatch, 150.0, 80.0, Some(165.0)),
            ],
        };
        assert_eq!(set.change_pct(&set.cells[0]), Some(0.0));
        assert_eq!(set.change_pct(&set.cells[1]), Some(-25.0));
        assert_eq!(set.cells[1].estimate_error_pct(), Some(10.0));
        assert_eq!(set.activation_share_pct(), Some(80.0));
        for c in &set.cells {
            assert_eq!(c.parts.total_bytes(), c.peak_bytes);
        }
    }

    #[test]
    fn a_rule_is_contradicted_when_less_than_half_its_saving_is_measured() {
        assert!(RuleCheck::contradicts(-45.0, 0.5));
        assert!(RuleCheck::contradicts(-45.0, -20.0));
        assert!(!RuleCheck::contradicts(-45.0, -30.0));
        assert!(!RuleCheck::contradicts(10.0, 12.0));
    }
}
