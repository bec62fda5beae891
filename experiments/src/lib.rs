//! The science of the Burn VRAM workbench: one module per memory-saving technique, the models
//! they train, and the measurement primitives (memory probes, timing, fits).
//!
//! Every experiment implements [`Experiment`]: it declares its points, measures one point at a
//! time (the `workbench` runner calls it in a fresh child process per point) and analyses the
//! measured points into a headline, findings, predictions beside measurements, and charts as data.
//! Nothing here knows how the guide is rendered.

pub mod accumulation;
pub mod backend;
pub mod batch_size;
pub mod cache_release;
pub mod checkpointing;
pub mod device;
pub mod driver;
pub mod experiment;
pub mod fit;
pub mod format;
pub mod in_place;
pub mod mixed_precision;
pub mod models;
pub mod no_grad;
pub mod probe;
pub mod single_op;
#[doc(hidden)]
pub mod snippets;
pub mod summary;
pub mod timing;
pub mod train;
pub mod views;

pub use device::DeviceKind;
pub use experiment::{Experiment, MeasuredPoint, Outcome, Point, PointResult, Profile};

/// Every experiment, in the guide's order.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &batch_size::BatchSize,
        &accumulation::Accumulation,
        &mixed_precision::MixedPrecision,
        &checkpointing::GradientCheckpointing,
        &in_place::InPlace,
        &views::Views,
        &no_grad::NoGrad,
        &cache_release::CacheRelease,
    ]
}

/// The experiment with this id.
pub fn find(id: &str) -> Option<&'static dyn Experiment> {
    all().into_iter().find(|e| e.id() == id)
}
