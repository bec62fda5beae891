//! The verdict of a set of correctness checks.

use serde::{Deserialize, Serialize};

use crate::keys::TechniqueId;
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

/// A fix the guide ranks: each a cell of the table of every fix on one workload, and the
/// subject of checks made on several pages. Its serialised name is a record's (`CellConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fix {
    /// Adam in f32 on the whole batch: the base.
    Plain,
    /// Half the batch.
    HalfBatch,
    /// The batch as two micro-batches, gradients accumulated.
    Accumulation,
    /// f32 master weights, the forward pass in bf16.
    MixedBf16,
    /// Everything stored in bf16.
    Bf16Storage,
    /// Burn's balanced checkpointing.
    Checkpointing,
    /// SGD with momentum instead of Adam.
    Momentum,
    /// Accumulation and checkpointing.
    AccumulationCheckpointing,
    /// Accumulation, checkpointing and mixed bf16.
    AccumulationCheckpointingMixed,
    /// burn-memory-efficient's attention in place of the written-out scores.
    EfficientAttention,
    /// burn-memory-efficient's attention and its chunked loss.
    EfficientAttentionLoss,
    /// A forward pass on the autodiff backend, never back-propagated.
    InferAutodiff,
    /// The same pass after `model.valid()`.
    InferValid,
    /// `valid()` with 8-bit weights.
    InferInt8,
    /// `valid()` with 4-bit weights.
    InferInt4,
    /// Not a fix: one block of another preset's width, a plain step, measured so that the
    /// estimator's error is known at another block than GPT-2's.
    PresetBlock,
}

impl Fix {
    /// Every fix of the table, in its order.
    pub const ALL: [Fix; 15] = [
        Fix::Plain,
        Fix::HalfBatch,
        Fix::Accumulation,
        Fix::MixedBf16,
        Fix::Bf16Storage,
        Fix::Checkpointing,
        Fix::Momentum,
        Fix::AccumulationCheckpointing,
        Fix::AccumulationCheckpointingMixed,
        Fix::EfficientAttention,
        Fix::EfficientAttentionLoss,
        Fix::InferAutodiff,
        Fix::InferValid,
        Fix::InferInt8,
        Fix::InferInt4,
    ];

    /// Kebab-case id (a point's id in the table's record).
    pub fn id(self) -> &'static str {
        match self {
            Fix::Plain => "plain",
            Fix::HalfBatch => "half-batch",
            Fix::Accumulation => "accumulation",
            Fix::MixedBf16 => "mixed-bf16",
            Fix::Bf16Storage => "bf16-storage",
            Fix::Checkpointing => "checkpointing",
            Fix::Momentum => "momentum",
            Fix::AccumulationCheckpointing => "accumulation-checkpointing",
            Fix::AccumulationCheckpointingMixed => "accumulation-checkpointing-mixed-bf16",
            Fix::EfficientAttention => "efficient-attention",
            Fix::EfficientAttentionLoss => "efficient-attention-chunked-loss",
            Fix::InferAutodiff => "inference-autodiff",
            Fix::InferValid => "inference-valid",
            Fix::InferInt8 => "inference-int8",
            Fix::InferInt4 => "inference-int4",
            Fix::PresetBlock => "tinyllama-block",
        }
    }

    /// The fix of id `id`.
    pub fn from_id(id: &str) -> Option<Fix> {
        Fix::ALL.into_iter().find(|f| f.id() == id)
    }

    /// A chart's category label: a few letters, so that nine fit under a phone-wide chart.
    pub fn short(self) -> &'static str {
        match self {
            Fix::Plain => "plain",
            Fix::HalfBatch => "half",
            Fix::Accumulation => "accum",
            Fix::MixedBf16 => "mixed",
            Fix::Bf16Storage => "bf16",
            Fix::Checkpointing => "ckpt",
            Fix::Momentum => "SGD-m",
            Fix::AccumulationCheckpointing => "acc+ckpt",
            Fix::AccumulationCheckpointingMixed => "all 3",
            Fix::EfficientAttention => "eff-attn",
            Fix::EfficientAttentionLoss => "eff+loss",
            Fix::InferAutodiff => "autodiff",
            Fix::InferValid => "valid",
            Fix::InferInt8 => "int8",
            Fix::InferInt4 => "int4",
            Fix::PresetBlock => "TL block",
        }
    }

    /// Whether the cell is a training step.
    pub fn training(self) -> bool {
        !matches!(
            self,
            Fix::InferAutodiff | Fix::InferValid | Fix::InferInt8 | Fix::InferInt4
        )
    }

    /// The technique page that explains the fix.
    pub fn page(self) -> Option<TechniqueId> {
        Some(match self {
            Fix::Plain | Fix::PresetBlock => return None,
            Fix::HalfBatch => TechniqueId::BatchSize,
            Fix::Accumulation | Fix::AccumulationCheckpointing => TechniqueId::Accumulation,
            Fix::MixedBf16 | Fix::Bf16Storage | Fix::AccumulationCheckpointingMixed => {
                TechniqueId::MixedPrecision
            }
            Fix::Checkpointing => TechniqueId::Checkpointing,
            Fix::Momentum => TechniqueId::OptimizerState,
            Fix::EfficientAttention | Fix::EfficientAttentionLoss => {
                TechniqueId::EfficientAttention
            }
            Fix::InferAutodiff | Fix::InferValid => TechniqueId::NoGrad,
            Fix::InferInt8 | Fix::InferInt4 => TechniqueId::Quantization,
        })
    }

    /// Whether the fix runs burn-memory-efficient's ops.
    pub fn chunked(self) -> bool {
        matches!(self, Fix::EfficientAttention | Fix::EfficientAttentionLoss)
    }

    /// The fixes a combination is made of, whose checks judge it too (none for a single fix).
    pub fn components(self) -> &'static [Fix] {
        match self {
            Fix::AccumulationCheckpointing => &[Fix::Accumulation, Fix::Checkpointing],
            Fix::AccumulationCheckpointingMixed => {
                &[Fix::Accumulation, Fix::Checkpointing, Fix::MixedBf16]
            }
            Fix::EfficientAttentionLoss => &[Fix::EfficientAttention],
            _ => &[],
        }
    }
}

/// A check that judged a fix, where it was made: every page that states the fix's verdict on
/// the same device reads every such check, so that two pages never disagree on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixCheck {
    /// The fix judged.
    pub fix: Fix,
    /// The page whose measurement made the check.
    pub technique: TechniqueId,
    /// The measured point the check is of.
    pub point: String,
    /// The check, with what it compared and its figures.
    pub check: Check,
}

impl FixCheck {
    /// `check` of `point`, made on `technique`'s page, judging `fix`.
    pub fn new(fix: Fix, technique: TechniqueId, point: impl Into<String>, check: Check) -> Self {
        Self {
            fix,
            technique,
            point: point.into(),
            check,
        }
    }
}

/// Every check of the fixes the guide ranks, from every record of one device: the one source
/// of each fix's verdict.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdicts {
    checks: Vec<FixCheck>,
}

impl Verdicts {
    /// The checks `checks`, gathered from one device's records.
    pub fn new(checks: impl IntoIterator<Item = FixCheck>) -> Self {
        Self {
            checks: checks.into_iter().collect(),
        }
    }

    /// Every check that judges `fix`: its own, then those of the fixes it combines.
    pub fn checks(&self, fix: Fix) -> Vec<&FixCheck> {
        std::iter::once(fix)
            .chain(fix.components().iter().copied())
            .flat_map(|f| self.checks.iter().filter(move |c| c.fix == f))
            .collect()
    }

    /// The verdict on `fix`: failed when any check that judges it failed, passed when there
    /// are checks and all passed, `None` where none was made.
    pub fn of(&self, fix: Fix) -> Option<Correctness> {
        Correctness::of_checks(self.checks(fix).into_iter().map(|c| &c.check))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(what: &'static str, passed: bool) -> Check {
        let mut c = Check::compare(what, &[1.0], &[if passed { 1.0 } else { 2.0 }], 1e-6);
        c.passed = passed;
        c
    }

    #[test]
    fn a_fix_fails_when_any_check_of_it_or_of_a_component_fails() {
        let verdicts = Verdicts::new([
            FixCheck::new(
                Fix::MixedBf16,
                TechniqueId::Gpt2Small,
                "mixed-bf16",
                check("g", true),
            ),
            FixCheck::new(
                Fix::MixedBf16,
                TechniqueId::MixedPrecision,
                "mixed-bf16",
                check("loss-drift", false),
            ),
            FixCheck::new(
                Fix::Checkpointing,
                TechniqueId::Gpt2Small,
                "c",
                check("g", true),
            ),
        ]);
        assert_eq!(verdicts.of(Fix::MixedBf16), Some(Correctness::Failed));
        assert_eq!(verdicts.checks(Fix::MixedBf16).len(), 2);
        assert_eq!(verdicts.of(Fix::Checkpointing), Some(Correctness::Passed));
        assert_eq!(
            verdicts.of(Fix::AccumulationCheckpointingMixed),
            Some(Correctness::Failed)
        );
        assert_eq!(verdicts.of(Fix::HalfBatch), None);
        for fix in Fix::ALL {
            assert_eq!(Fix::from_id(fix.id()), Some(fix));
        }
    }
}
