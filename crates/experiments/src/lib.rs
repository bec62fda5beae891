//! The science of the Burn VRAM workbench: one folder per memory-saving technique, and the
//! shared harness they are measured with.
//!
//! - [`techniques`]: one folder per technique (`mod.rs`: what is measured; `predict.rs`: the
//!   byte model; `analysis.rs`: findings, charts and headline; `snippet.rs`: the code shown).
//! - [`harness`]: what every technique shares and none is named in: backends and the device
//!   dispatch, memory probes, timing, the training step, models.
//! - [`technique`]: the typed [`Technique`] trait and the [`Experiment`] the runner drives.
//! - the byte rules every prediction uses are the `estimator` crate's (no Burn); [`workloads`]:
//!   the transformer's section of a page, beside the MLP's; [`bracket`]: a device phase's peak,
//!   bracketed, beside its rule.
//!
//! Results are written as `results` types; nothing here knows how the guide is rendered.

pub mod bracket;
pub mod error;
pub mod harness;
pub mod technique;
pub mod techniques;
pub mod workloads;

pub use error::ExperimentError;
pub use technique::{Experiment, Technique};

/// Every technique, in the guide's order (`results::TechniqueId::ALL`).
pub fn all() -> Vec<&'static dyn Experiment> {
    techniques::all()
}

/// The technique with this id.
pub fn find(id: &str) -> Option<&'static dyn Experiment> {
    results::TechniqueId::from_id(id).map(techniques::experiment)
}
