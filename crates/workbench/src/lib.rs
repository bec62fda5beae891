//! The Burn VRAM workbench application: the `workbench` command line, the runner that measures
//! each point in a child process, the versioned results schema, and the guide renderer.
//!
//! Data flows one way: `experiments` measure points, the [`runner`] collects them into
//! `results::ExperimentRecord`s (exported as JSON as soon as each experiment ends), [`analyse`]
//! runs each technique's analysis over its records when the guide is rendered, and the `guide`
//! crate renders the analysed records into HTML and SVG without knowing anything of Burn.

pub mod analyse;
pub mod args;
pub mod checks;
pub mod cli;
pub mod diff;
pub mod error;
pub mod estimate;
pub mod fit;
pub mod inference;
pub mod journal;
pub mod output;
pub mod provenance;
pub mod report;
pub mod runner;
