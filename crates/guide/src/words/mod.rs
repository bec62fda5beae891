//! The words of every technique's conclusions.
//!
//! Question: what does a page say about a record? Method: a technique's analysis returns
//! [`Text`] (a key and the figures it quotes, in base units); this module holds the sentence for
//! every key, one file per technique, and converts every unit. Answer: [`analysed`] turns a
//! technique's analysis into the strings the pages show, so that a change of wording is a
//! re-render of the stored records.

mod accumulation;
mod allocator_settings;
mod batch_size;
mod bracket;
mod cache_release;
mod checkpointing;
mod checks;
mod efficient_attention;
mod gpt2_small;
mod in_place;
pub mod landing;
mod llama_family;
mod memory_over_steps;
mod mixed_precision;
mod no_grad;
mod offload;
mod optimizer_state;
pub mod pages;
pub mod paired;
mod peak_attribution;
mod quantization;
mod sequence_length;
pub mod upgrade;
mod views;
mod workloads;

use results::keys::CommonKey;
use results::{
    format, Analysed, Arg, ExperimentRecord, Key, MapText, PairedComparison, TechniqueId, Text,
};

pub use checks::{check_sentence, check_short, describe as describe_check, worst_check};
pub use gpt2_small::fix_name;

/// `record` with every text of its analysis and estimator worded.
pub fn analysed(record: &Analysed<Text>) -> Analysed {
    let mut word = |t: &Text| word(t, &record.record);
    Analysed {
        record: record.record.clone(),
        title: record.title.clone(),
        guide_position: record.guide_position,
        page: record.page.clone(),
        analysis: record.analysis.map_text(&mut word),
        estimator: record
            .estimator
            .iter()
            .map(|c| c.map_text(&mut word))
            .collect(),
        derived_checks: record.derived_checks.clone(),
    }
}

/// Why a point has no result, in one line: the child's reason, or the float type the device
/// lacks (Burn's `Backend::dtype_usage` has no storage or arithmetic in it).
pub fn outcome_reason(outcome: &results::Outcome) -> String {
    match outcome {
        results::Outcome::Unsupported { lacks } => format!("the device has no {lacks}"),
        results::Outcome::NotInBurn { what } => format!("the Burn measured cannot: {what}"),
        other => other.reason().to_string(),
    }
}

/// A part of a stacked bar, in words (a named part reads as the measurement named it).
pub fn breakdown_part(part: &results::BreakdownPart) -> String {
    match part {
        results::BreakdownPart::Named(name) => name.clone(),
        results::BreakdownPart::Others(n) => format!("{n} more places, each smaller"),
        results::BreakdownPart::UnderThreshold => "blocks under the threshold, summed".into(),
        results::BreakdownPart::BeforeRecording => {
            "held before recording began (the process's own)".into()
        }
    }
}

/// Every record worded, in the same order.
pub fn all(records: &[Analysed<Text>]) -> Vec<Analysed> {
    records.iter().map(analysed).collect()
}

/// The words of `text`, said of `record`: each section's keys are worded by an exhaustive
/// `match` in its own file, so a key without words does not compile.
pub fn word(text: &Text, record: &ExperimentRecord) -> String {
    let s = &Said { text, record };
    match text.key {
        Key::Common(k) => common(k, s),
        Key::Transformer(k) => workloads::transformer(k, s),
        Key::Timeline(k) => workloads::timeline(k, s),
        Key::Bracket(k) => bracket::word(k, s),
        Key::Gpt2Small(k) => gpt2_small::word(k, s),
        Key::LlamaFamily(k) => llama_family::word(k, s),
        Key::EfficientAttention(k) => efficient_attention::word(k, s),
        Key::BatchSize(k) => batch_size::word(k, s),
        Key::Accumulation(k) => accumulation::word(k, s),
        Key::MixedPrecision(k) => mixed_precision::word(k, s),
        Key::Checkpointing(k) => checkpointing::word(k, s),
        Key::SequenceLength(k) => sequence_length::word(k, s),
        Key::InPlace(k) => in_place::word(k, s),
        Key::Views(k) => views::word(k, s),
        Key::NoGrad(k) => no_grad::word(k, s),
        Key::CacheRelease(k) => cache_release::word(k, s),
        Key::OptimizerState(k) => optimizer_state::word(k, s),
        Key::Quantization(k) => quantization::word(k, s),
        Key::Offload(k) => offload::word(k, s),
        Key::AllocatorSettings(k) => allocator_settings::word(k, s),
        Key::MemoryOverSteps(k) => memory_over_steps::word(k, s),
        Key::PeakAttribution(k) => peak_attribution::word(k, s),
    }
}

/// What the estimator leaves out on the record's technique, where that technique says (a
/// clause appended to the estimator's note).
fn estimator_leaves_out(s: &Said<'_>) -> &'static str {
    match TechniqueId::from_id(&s.record.experiment) {
        Some(TechniqueId::MixedPrecision) => mixed_precision::estimator_leaves_out(),
        _ => "",
    }
}

/// Sentences any technique says.
fn common(key: CommonKey, s: &Said<'_>) -> String {
    match key {
        // A number as it reads in a list.
        CommonKey::Number => format!("{}", s.num("value")),
        // What the checks of the record's points found, worst of each kind.
        CommonKey::WorstCheck => worst_check(&s.record.points),
        // The first check of one point, or that it has none.
        CommonKey::PointCheck => s
            .point_check()
            .map_or_else(|| "no check ran".to_string(), check_sentence),
        // The estimator's row of a training step: what it was asked, and where its step peak
        // and the measured one part.
        CommonKey::EstimatorQuantity => format!("step peak, {}", s.name("point")),
        CommonKey::EstimatorNote => {
            let parts = if s.has("total") {
                let rest = s.num("total") - s.num("fixed") - s.num("inputs");
                format!(
                    "; estimated less measured: {} in all, of which {} in the weights and \
                     optimizer state (per-tensor bookkeeping, which no rule counts), {} in the \
                     inputs and {} in the rest (activations, gradients and transients at the \
                     peak)",
                    signed_bytes(s.num("total")),
                    signed_bytes(s.num("fixed")),
                    signed_bytes(s.num("inputs")),
                    signed_bytes(rest)
                )
            } else {
                String::new()
            };
            format!(
                "asked: batch {}, {} micro-batch(es), checkpointing {}, {}, {}{parts}{}",
                s.num("batch"),
                s.count("micro_batches"),
                s.name("checkpointing"),
                s.name("precision"),
                s.name("optimizer"),
                estimator_leaves_out(s)
            )
        }
        // A paired comparison's finding.
        CommonKey::PairedFinding => s
            .paired("comparison")
            .map_or_else(|| s.missing("comparison"), paired::finding),
        CommonKey::NoPointMeasured => "no point was measured".into(),
        CommonKey::NoMeasurement => "no measurement".into(),
        CommonKey::StepPeak => "step peak".into(),
        CommonKey::Name => s.name("name"),
    }
}

/// `part` as a share of `whole`, in percent, as a page prints it (`24%`).
pub fn share(part: f64, whole: f64) -> String {
    format!("{:.0}%", part / whole * 100.0)
}

/// `after` against `before`, as a signed percentage of `before` (`-41.9%`).
fn change(before: f64, after: f64) -> String {
    format::pct((after - before) / before * 100.0)
}

/// Bytes with their sign, `+` included (`+1.50 KiB`).
pub(crate) fn signed_bytes(b: f64) -> String {
    let text = format::bytes(b);
    // Zero carries no sign: "+0 B" reads as a rise.
    if b > 0.0 {
        format!("+{text}")
    } else {
        text
    }
}

/// A text being worded, with the record it is said of: the arguments read in the units the
/// words want.
pub struct Said<'a> {
    text: &'a Text,
    record: &'a ExperimentRecord,
}

impl Said<'_> {
    fn missing(&self, name: &str) -> String {
        format!("[no argument {name}]")
    }

    /// The number (bytes, seconds or plain) `name`; NaN where it is not given.
    pub fn num(&self, name: &str) -> f64 {
        match self.text.get(name) {
            Some(Arg::Bytes(v) | Arg::Seconds(v) | Arg::Number(v)) => *v,
            _ => f64::NAN,
        }
    }

    /// Whether the flag `name` is set: an analysis says a yes or no as a number above zero or
    /// not.
    pub fn yes(&self, name: &str) -> bool {
        self.num(name) > 0.0
    }

    /// The count `name`.
    pub fn count(&self, name: &str) -> u64 {
        self.num(name) as u64
    }

    /// The bytes `name`, in the largest binary unit that keeps them at or above 1.
    pub fn bytes(&self, name: &str) -> String {
        format::bytes(self.num(name))
    }

    /// The seconds `name`, in ms or s.
    pub fn seconds(&self, name: &str) -> String {
        format::seconds(self.num(name))
    }

    /// The name `name`.
    pub fn name(&self, name: &str) -> String {
        match self.text.get(name) {
            Some(Arg::Name(v)) => v.clone(),
            _ => self.missing(name),
        }
    }

    /// The text `name`, worded.
    pub fn text(&self, name: &str) -> String {
        match self.text.get(name) {
            Some(Arg::Text(t)) => word(t, self.record),
            _ => self.missing(name),
        }
    }

    /// The texts of the list `name`, each worded.
    pub fn list(&self, name: &str) -> Vec<String> {
        match self.text.get(name) {
            Some(Arg::List(items)) => items.iter().map(|t| word(t, self.record)).collect(),
            _ => vec![self.missing(name)],
        }
    }

    /// The first check of the record's point named by the argument `point`.
    pub fn point_check(&self) -> Option<&results::Check> {
        let id = self.name("point");
        self.record
            .points
            .iter()
            .find(|p| p.point.id == id)
            .and_then(|p| p.result())
            .and_then(|r| r.checks.first())
    }

    /// Whether the argument `name` is given.
    pub fn has(&self, name: &str) -> bool {
        self.text.get(name).is_some()
    }

    /// The record's paired comparison named by the argument `name`.
    pub fn paired(&self, name: &str) -> Option<&PairedComparison> {
        match self.text.get(name) {
            Some(Arg::Paired(id)) => results::paired::find(&self.record.comparisons, id),
            _ => None,
        }
    }

    /// The cost phrase of the paired comparison `name`, or "not timed in pairs".
    pub fn cost(&self, name: &str) -> String {
        self.paired(name)
            .map_or_else(|| "not timed in pairs".into(), paired::cost_phrase)
    }
}

/// Values of optimizer state per parameter as a reader reads them: whole numbers as such,
/// Adafactor's fraction to three decimals.
pub(crate) fn values_per_param(values: f64) -> String {
    if values.fract() == 0.0 {
        format!("{values:.0}")
    } else {
        format!("{values:.3}")
    }
}
