//! One workload's fixes on one base: the table the landing page is built on.
//!
//! Question: on a model of the size people run out of memory with, what does each fix do to
//! the same training step's peak? Method: a technique that measures every fix on one workload
//! declares its cells (each a measured point: its peak, its fixed part and activations, the
//! estimator's prediction, its check) and the same fixes projected by the estimator onto a
//! card's out-of-memory point; the saving of every cell is a share of one base, the plain
//! step's peak. Answer: the guide ranks fixes by this table, not by each technique's own base.

use serde::{Deserialize, Serialize};

use crate::verdict::Correctness;
use crate::words::MapText;

/// One fix measured on the workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixCell<S = String> {
    /// The point's id.
    pub id: String,
    /// The fix, in a few words.
    pub fix: S,
    /// A training step (otherwise an inference pass).
    pub training: bool,
    /// The page that explains the fix (a technique id), if any.
    pub page: Option<String>,
    /// The step's (or pass's) peak above the process's own bytes.
    pub peak_bytes: f64,
    /// Weights and optimizer state, as measured (weights only for inference): held whatever
    /// the batch.
    pub fixed_bytes: f64,
    /// The parameter gradients a step holds at the end of backward, as measured (NaN where the
    /// cell did not read them: inference, and accumulation, whose gradients move into the
    /// accumulator micro-batch by micro-batch).
    pub gradient_bytes: f64,
    /// What the forward pass keeps for backward (a pass's own bytes for inference), measured.
    pub activation_bytes: f64,
    /// The estimator's step peak, where it models the cell.
    pub predicted_bytes: Option<f64>,
    /// The cell's own check.
    pub correctness: Correctness,
    /// What the check compared, with its figures, in words.
    pub check: S,
    /// What the check compared, in a few words.
    pub check_short: S,
}

impl<S> FixCell<S> {
    /// The estimator's error against this cell's peak, in percent (positive: it predicts
    /// more than measured).
    pub fn estimate_error_pct(&self) -> Option<f64> {
        self.predicted_bytes
            .map(|p| (p - self.peak_bytes) / self.peak_bytes * 100.0)
    }
}

/// One fix at the card's out-of-memory point, from the estimator's rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectedCell<S = String> {
    /// The measured cell it projects (its id).
    pub id: String,
    /// The fix, in a few words.
    pub fix: S,
    /// The estimated step peak at the projection's batch and sequence.
    pub predicted_bytes: f64,
    /// The largest batch that fits the card with this fix, by the same rules.
    pub max_batch: f64,
}

/// The fixes projected onto a card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection<S = String> {
    /// The card's memory.
    pub card_bytes: f64,
    /// What a step in f32 may plan on: the card less the CUDA context and the estimator's
    /// safety margin.
    pub usable_bytes: f64,
    /// Tokens per sequence at the projection.
    pub seq: usize,
    /// Sequences per step: the largest batch at which plain training still fits.
    pub batch: f64,
    /// The projected cells, in the measured table's order.
    pub cells: Vec<ProjectedCell<S>>,
}

/// The fixes of one workload, on one base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixTable<S = String> {
    /// The workload, in words.
    pub workload: S,
    /// The id of the cell every saving is a share of (the plain training step).
    pub base: String,
    /// The measured cells.
    pub cells: Vec<FixCell<S>>,
    /// The same fixes on a card, estimated.
    pub projection: Option<Projection<S>>,
}

impl<S> FixTable<S> {
    /// The base cell's peak.
    pub fn base_peak_bytes(&self) -> Option<f64> {
        self.cells
            .iter()
            .find(|c| c.id == self.base)
            .map(|c| c.peak_bytes)
    }

    /// `cell`'s saving as a share of the base's peak, in percent (positive: saves).
    pub fn saving_pct(&self, cell: &FixCell<S>) -> Option<f64> {
        self.base_peak_bytes()
            .map(|base| (base - cell.peak_bytes) / base * 100.0)
    }
}

impl<S> MapText<S> for FixTable<S> {
    type Out<T> = FixTable<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> FixTable<T> {
        FixTable {
            workload: word(&self.workload),
            base: self.base.clone(),
            cells: self
                .cells
                .iter()
                .map(|c| FixCell {
                    id: c.id.clone(),
                    fix: word(&c.fix),
                    training: c.training,
                    page: c.page.clone(),
                    peak_bytes: c.peak_bytes,
                    fixed_bytes: c.fixed_bytes,
                    gradient_bytes: c.gradient_bytes,
                    activation_bytes: c.activation_bytes,
                    predicted_bytes: c.predicted_bytes,
                    correctness: c.correctness,
                    check: word(&c.check),
                    check_short: word(&c.check_short),
                })
                .collect(),
            projection: self.projection.as_ref().map(|p| Projection {
                card_bytes: p.card_bytes,
                usable_bytes: p.usable_bytes,
                seq: p.seq,
                batch: p.batch,
                cells: p
                    .cells
                    .iter()
                    .map(|c| ProjectedCell {
                        id: c.id.clone(),
                        fix: word(&c.fix),
                        predicted_bytes: c.predicted_bytes,
                        max_batch: c.max_batch,
                    })
                    .collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(id: &str, peak: f64, predicted: Option<f64>) -> FixCell {
        FixCell {
            id: id.into(),
            fix: id.into(),
            training: true,
            page: None,
            peak_bytes: peak,
            fixed_bytes: 0.0,
            gradient_bytes: f64::NAN,
            activation_bytes: 0.0,
            predicted_bytes: predicted,
            correctness: Correctness::Passed,
            check: String::new(),
            check_short: String::new(),
        }
    }

    #[test]
    fn every_saving_is_a_share_of_the_one_base() {
        let table = FixTable {
            workload: String::new(),
            base: "plain".into(),
            cells: vec![cell("plain", 200.0, None), cell("half", 150.0, Some(165.0))],
            projection: None,
        };
        assert_eq!(table.saving_pct(&table.cells[0]), Some(0.0));
        assert_eq!(table.saving_pct(&table.cells[1]), Some(25.0));
        assert_eq!(table.cells[1].estimate_error_pct(), Some(10.0));
        assert_eq!(table.cells[0].estimate_error_pct(), None);
    }
}
