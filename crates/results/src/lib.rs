//! The results of the Burn VRAM workbench, without Burn.
//!
//! Question: what does a measurement say, in a form that outlives the code that made it?
//! Method: one versioned JSON record per experiment and device ([`record::ExperimentRecord`]),
//! holding measurements only (configurations, readings, raw samples, outcomes, provenance),
//! loaded with errors that name the file and the problem; the typed facts a technique's
//! analysis derives from it at render time ([`Analysis`], carried beside the record by
//! [`record::Analysed`]); and pure statistics over samples.
//! Answer: the techniques (crate `experiments`) write records and analyse them, the guide (crate
//! `guide`) reads both; neither knows the other, and an older record of the same schema renders
//! with today's analysis.

pub mod analysis;
pub mod attribution;
pub mod capacity;
pub mod cards;
pub mod criterion;
pub mod device;
pub mod diff;
pub mod error;
pub mod fit;
pub mod fix_table;
pub mod format;
pub mod keys;
pub mod memory;
pub mod paired;
pub mod point;
pub mod record;
pub mod timing;
pub mod verdict;
pub mod words;

pub use analysis::{
    Analysis, AxisUnit, Breakdown, BreakdownPart, BreakdownRow, Chart, ChartPoint, Comparison,
    Correctness, ErrorSummary, Headline, MapText, PublishedFigure, ReportedFit, Scale, Series,
    Side,
};
pub use attribution::PeakAttribution;
pub use capacity::{AnalysedCapacity, CapacityRecord, EstimatorTables, FitModel, CAPACITY_FILE};
pub use device::{CubeclSettings, DeviceIdentity, DeviceKind, FloatStorage};
pub use error::LoadError;
pub use fit::LinearFit;
pub use fix_table::{
    CellSet, Contradiction, FixCell, FixTable, PeakParts, ProjectedCell, Projection, RuleCheck,
};
pub use keys::{Key, TechniqueId};
pub use memory::{PeakBracket, Phase, PhaseKey, PhaseMemory, ProbeInfo};
pub use paired::{
    build_rounds, count_builds, round_order, run_round, CYCLE, HALF_CYCLE, MAX_BUILDS,
};
pub use paired::{
    Build, BuildPlan, ComparisonSpec, Interleaving, Interval, PairSettings, PairedComparison,
    PairedOutcome, PairedTiming, Round, Stop,
};
pub use point::{
    Check, MeasuredPoint, Metric, MetricKey, Metrics, Outcome, PhaseTiming, Point, PointResult,
    Profile, PutMetric, Trace, Unit,
};
pub use record::{
    Analysed, Calibration, DeviceInfo, ExperimentRecord, KeptFromRun, MeasuredAgain, PageText,
    PointCheck, Provenance, Resumed, OLDEST_READABLE_VERSION, SCHEMA_VERSION,
};
pub use timing::Timing;
pub use verdict::{Fix, FixCheck, Verdicts};
pub use words::{Arg, Text};
