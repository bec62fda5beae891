//! What an analysis can say, as typed keys: one enum per technique (its own module here) and
//! one per shared section, each declared once and read by two crates: the technique's
//! analysis (`experiments`) says a key with its figures ([`crate::Text`]), the guide words it.
//!
//! Question: how does a missing or a stray sentence get caught before a page is rendered?
//! Method: the guide words each section's keys with an exhaustive `match`, so a key without
//! words does not compile; a workspace test finds every key said by some analysis, so a key
//! no analysis says fails it. [`TechniqueId`] is the one list of techniques, in the guide's
//! order: the experiments' registry and the guide's page words are both exhaustive over it.
//! Answer: [`Key`], the union of every section's keys.

pub mod accumulation;
pub mod allocator_settings;
pub mod batch_size;
pub mod cache_release;
pub mod checkpointing;
pub mod efficient_attention;
pub mod gpt2_small;
pub mod in_place;
pub mod llama_family;
pub mod memory_over_steps;
pub mod mixed_precision;
pub mod no_grad;
pub mod offload;
pub mod optimizer_state;
pub mod peak_attribution;
pub mod quantization;
pub mod sequence_length;
pub mod views;

/// Declares a section's keys: an enum of unit variants, each with its kebab-case id (the form a
/// text takes in JSON and in a `[no words: ...]` marker), and the list of them all.
#[macro_export]
macro_rules! word_keys {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($variant:ident = $id:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $(
                #[doc = concat!("`", $id, "`")]
                $variant,
            )*
        }

        impl $name {
            /// Every key of the section, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The key's kebab-case id.
            pub fn id(self) -> &'static str {
                match self {
                    $($name::$variant => $id,)*
                }
            }
        }
    };
}

/// The techniques, in the guide's order: the one list every registry is exhaustive over.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum TechniqueId {
    /// Every fix on a GPT-2-small step.
    Gpt2Small,
    /// The Llama family: every fix, LoRA, the KV cache.
    LlamaFamily,
    /// Memory-efficient attention and the chunked loss (burn-memory-efficient).
    EfficientAttention,
    /// Batch size.
    BatchSize,
    /// Gradient accumulation.
    Accumulation,
    /// Mixed precision.
    MixedPrecision,
    /// Gradient checkpointing.
    Checkpointing,
    /// Sequence length.
    SequenceLength,
    /// In-place operations.
    InPlace,
    /// Views against copies.
    #[serde(rename = "views-vs-clones")]
    Views,
    /// No-grad evaluation.
    NoGrad,
    /// Cache release.
    CacheRelease,
    /// Optimizer state.
    OptimizerState,
    /// Quantized weights.
    Quantization,
    /// Offload to the CPU.
    Offload,
    /// Allocator settings.
    AllocatorSettings,
    /// Memory over many steps.
    MemoryOverSteps,
    /// What holds the memory at the peak.
    PeakAttribution,
}

impl TechniqueId {
    /// Every technique, in the guide's order.
    pub const ALL: [TechniqueId; 18] = [
        TechniqueId::Gpt2Small,
        TechniqueId::LlamaFamily,
        TechniqueId::EfficientAttention,
        TechniqueId::PeakAttribution,
        TechniqueId::BatchSize,
        TechniqueId::Accumulation,
        TechniqueId::MixedPrecision,
        TechniqueId::Checkpointing,
        TechniqueId::SequenceLength,
        TechniqueId::InPlace,
        TechniqueId::Views,
        TechniqueId::NoGrad,
        TechniqueId::CacheRelease,
        TechniqueId::OptimizerState,
        TechniqueId::Quantization,
        TechniqueId::Offload,
        TechniqueId::AllocatorSettings,
        TechniqueId::MemoryOverSteps,
    ];

    /// The kebab-case id: the CLI's name, the record's `experiment`, the page's file name.
    pub fn id(self) -> &'static str {
        match self {
            TechniqueId::Gpt2Small => "gpt2-small",
            TechniqueId::LlamaFamily => "llama-family",
            TechniqueId::EfficientAttention => "efficient-attention",
            TechniqueId::BatchSize => "batch-size",
            TechniqueId::Accumulation => "accumulation",
            TechniqueId::MixedPrecision => "mixed-precision",
            TechniqueId::Checkpointing => "checkpointing",
            TechniqueId::SequenceLength => "sequence-length",
            TechniqueId::InPlace => "in-place",
            TechniqueId::Views => "views-vs-clones",
            TechniqueId::NoGrad => "no-grad",
            TechniqueId::CacheRelease => "cache-release",
            TechniqueId::OptimizerState => "optimizer-state",
            TechniqueId::Quantization => "quantization",
            TechniqueId::Offload => "offload",
            TechniqueId::AllocatorSettings => "allocator-settings",
            TechniqueId::MemoryOverSteps => "memory-over-steps",
            TechniqueId::PeakAttribution => "peak-attribution",
        }
    }

    /// The technique of kebab-case id `id`.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.id() == id)
    }

    /// Its place in the guide, from 0.
    pub fn position(self) -> usize {
        Self::ALL
            .iter()
            .position(|t| *t == self)
            .expect("every technique is listed")
    }
}

word_keys! {
    /// What any analysis says.
    pub enum CommonKey {
        Number = "number",
        WorstCheck = "worst-check",
        PointCheck = "point-check",
        PairedFinding = "paired-finding",
        EstimatorQuantity = "estimator.quantity",
        EstimatorNote = "estimator.note",
        NoPointMeasured = "no-point-measured",
        NoMeasurement = "no-measurement",
        StepPeak = "step-peak",
        Name = "name",
    }
}

word_keys! {
    /// The transformer's section of a mechanism page.
    pub enum TransformerKey {
        ForwardQuantity = "transformer.forward-quantity",
        StepQuantity = "transformer.step-quantity",
        StepNote = "transformer.step-note",
        StepMeasured = "transformer.step-measured",
        ForwardMeasured = "transformer.forward-measured",
        ForwardPredicted = "transformer.forward-predicted",
        TokensPerS = "transformer.tokens-per-s",
        Summary = "transformer.summary",
        AgainstRules = "transformer.against-rules",
        PeaksTitle = "transformer.peaks-title",
        TimelineXLabel = "transformer.timeline-x-label",
        PhasesXLabel = "transformer.phases-x-label",
        BytesInUse = "transformer.bytes-in-use",
        ThroughputTitle = "transformer.throughput-title",
        ThroughputYLabel = "transformer.throughput-y-label",
    }
}

word_keys! {
    /// One step's memory timeline.
    pub enum TimelineKey {
        AtEvent = "timeline.at-event",
        PhaseStart = "timeline.phase-start",
        InPhase = "timeline.in-phase",
        Peak = "timeline.peak",
        Series = "timeline.series",
    }
}

word_keys! {
    /// A device phase's peak, bracketed, beside its rule.
    pub enum BracketKey {
        AtBound = "bracket.at-bound",
        Below = "bracket.below",
        Above = "bracket.above",
        Inside = "bracket.inside",
        Finding = "bracket.finding",
        Quantity = "bracket.quantity",
        Note = "bracket.note",
    }
}

/// Declares [`Key`], the union of every section's keys, with a conversion from each.
macro_rules! union {
    ($($variant:ident($ty:ty),)*) => {
        /// Any key an analysis says: its section, then the key.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Key {
            $(
                #[doc = concat!("A key of [`", stringify!($ty), "`].")]
                $variant($ty),
            )*
        }

        impl Key {
            /// The key's kebab-case id within its section.
            pub fn id(self) -> &'static str {
                match self {
                    $(Key::$variant(k) => k.id(),)*
                }
            }
        }

        $(
            impl From<$ty> for Key {
                fn from(key: $ty) -> Self {
                    Key::$variant(key)
                }
            }
        )*
    };
}

union! {
    Common(CommonKey),
    Transformer(TransformerKey),
    Timeline(TimelineKey),
    Bracket(BracketKey),
    Gpt2Small(gpt2_small::Key),
    LlamaFamily(llama_family::Key),
    EfficientAttention(efficient_attention::Key),
    BatchSize(batch_size::Key),
    Accumulation(accumulation::Key),
    MixedPrecision(mixed_precision::Key),
    Checkpointing(checkpointing::Key),
    SequenceLength(sequence_length::Key),
    InPlace(in_place::Key),
    Views(views::Key),
    NoGrad(no_grad::Key),
    CacheRelease(cache_release::Key),
    OptimizerState(optimizer_state::Key),
    Quantization(quantization::Key),
    Offload(offload::Key),
    AllocatorSettings(allocator_settings::Key),
    MemoryOverSteps(memory_over_steps::Key),
    PeakAttribution(peak_attribution::Key),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_technique_id_reads_back() {
        for t in TechniqueId::ALL {
            assert_eq!(TechniqueId::from_id(t.id()), Some(t));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.id()));
        }
        assert_eq!(TechniqueId::Gpt2Small.position(), 0);
        assert_eq!(TechniqueId::from_id("nothing"), None);
    }
}
