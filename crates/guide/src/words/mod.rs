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
mod gpt2_small;
mod in_place;
mod memory_over_steps;
mod mixed_precision;
mod no_grad;
mod offload;
mod optimizer_state;
pub mod paired;
mod quantization;
mod sequence_length;
mod views;
mod workloads;

use results::{format, Analysed, Arg, ExperimentRecord, MapText, PairedComparison, Text};

pub use checks::{check_sentence, describe as describe_check, worst_check};

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
        other => other.reason().to_string(),
    }
}

/// Every record worded, in the same order.
pub fn all(records: &[Analysed<Text>]) -> Vec<Analysed> {
    records.iter().map(analysed).collect()
}

/// The words of `text`, said of `record`. A key this guide has no words for reads as
/// `[no words: experiment/key]`, which the tests look for on every page.
pub fn word(text: &Text, record: &ExperimentRecord) -> String {
    let key = match text {
        Text::Label(label) => return (*label).to_string(),
        Text::Said { key, .. } => *key,
    };
    let said = Said { text, record };
    common(key, &said)
        .or_else(|| technique(key, &said))
        .unwrap_or_else(|| format!("[no words: {}/{key}]", record.experiment))
}

/// The sentence `key` of the record's own technique.
fn technique(key: &str, said: &Said<'_>) -> Option<String> {
    match said.record.experiment.as_str() {
        "accumulation" => accumulation::word(key, said),
        "allocator-settings" => allocator_settings::word(key, said),
        "batch-size" => batch_size::word(key, said),
        "cache-release" => cache_release::word(key, said),
        "checkpointing" => checkpointing::word(key, said),
        "gpt2-small" => gpt2_small::word(key, said),
        "in-place" => in_place::word(key, said),
        "memory-over-steps" => memory_over_steps::word(key, said),
        "mixed-precision" => mixed_precision::word(key, said),
        "no-grad" => no_grad::word(key, said),
        "offload" => offload::word(key, said),
        "optimizer-state" => optimizer_state::word(key, said),
        "quantization" => quantization::word(key, said),
        "sequence-length" => sequence_length::word(key, said),
        "views-vs-clones" => views::word(key, said),
        _ => None,
    }
}

/// Sentences any technique says.
fn common(key: &str, s: &Said<'_>) -> Option<String> {
    Some(match key {
        // A number as it reads in a list.
        "number" => format!("{}", s.num("value")),
        // What the checks of the record's points found, worst of each kind.
        "worst-check" => worst_check(&s.record.points),
        // The first check of one point, or that it has none.
        "point-check" => s
            .point_check()
            .map_or_else(|| "no check ran".to_string(), check_sentence),
        // The estimator's row of a training step: what it was asked, and where its step peak
        // and the measured one part.
        "estimator.quantity" => format!("step peak, {}", s.name("point")),
        "estimator.note" => {
            let parts = if s.has("total") {
                let rest = s.num("total") - s.num("fixed") - s.num("inputs");
                format!(
                    "; measured less estimated: {} in all, of which {} in the weights and \
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
                technique("estimator-leaves-out", s).unwrap_or_default()
            )
        }
        // A paired comparison's finding.
        "paired-finding" => s
            .paired("comparison")
            .map_or_else(|| s.missing("comparison"), paired::finding),
        _ => return workloads::word(key, s).or_else(|| bracket::word(key, s)),
    })
}

/// `after` against `before`, as a signed percentage of `before` (`-41.9%`).
fn change(before: f64, after: f64) -> String {
    format::pct((after - before) / before * 100.0)
}

/// Bytes with their sign, `+` included (`+1.50 KiB`).
fn signed_bytes(b: f64) -> String {
    let text = format::bytes(b);
    if b >= 0.0 {
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
