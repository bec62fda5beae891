//! The words of gradient checkpointing: the saving against depth and batch, where it starts
//! to pay, its time, and the published figures beside ours.

use super::{change, Said};
use results::keys::checkpointing::Key;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::StrategyBalanced => "balanced checkpointing".into(),
        Key::StrategyNone => "no checkpointing".into(),
        Key::LabelBlocks => "blocks".into(),
        Key::LabelBatchSizeSamples => "batch size (samples)".into(),
        Key::LabelDepthLinearLayers => "depth (Linear layers)".into(),
        Key::Deepest => format!(
            "At depth {} and batch {}: step peak {} without checkpointing, {} with ({}); the \
             forward pass keeps {} against {} ({:.3} of it); time per step {} (timed in pairs, \
             below).",
            s.count("depth"),
            s.count("batch"),
            s.bytes("plain"),
            s.bytes("balanced"),
            change(s.num("plain"), s.num("balanced")),
            s.bytes("plain_kept"),
            s.bytes("balanced_kept"),
            s.num("balanced_kept") / s.num("plain_kept"),
            s.cost("timing"),
        ),
        Key::Resolved => format!(
            "Across the {} (plain, balanced) pairs timed in pairs, {} show a time difference \
             whose 95% interval excludes 0 (the charts below draw each interval).",
            s.count("pairs"),
            s.count("resolved")
        ),
        Key::WhereItPays => format!(
            "Where it starts to pay (depth {}): the parameter gradients ({} measured) set the \
             step's peak until the forward pass's activations outgrow them, predicted at batch \
             {:.0} without checkpointing. {}",
            s.count("depth"),
            s.bytes("gradients"),
            s.num("crossover"),
            if s.has("pays_batch") {
                format!(
                    "Checkpointing first lowers the measured peak by more than 1% at batch {} ({} \
                     -> {}).",
                    s.count("pays_batch"),
                    s.bytes("pays_plain"),
                    s.bytes("pays_balanced")
                )
            } else {
                "No measured batch showed a saving above 1%.".into()
            }
        ),
        Key::ActivationsQuantity => format!(
            "forward activations, depth {}, batch {}, {}",
            s.count("depth"),
            s.count("batch"),
            s.text("strategy")
        ),
        Key::ActivationsNotePlain => "each hidden layer's Linear and ReLU outputs, plus the last \
                                     output and the loss's difference"
            .into(),
        Key::ActivationsNoteBalanced => "each hidden layer's Linear output only (ReLU recomputed \
                                        in backward), plus the last output, the loss's \
                                        difference and the last ReLU output still live as the \
                                        last Linear's input"
            .into(),
        Key::StepQuantity => format!(
            "step peak, depth {}, batch {}, {}",
            s.count("depth"),
            s.count("batch"),
            s.text("strategy")
        ),
        Key::StepNote => "model + Adam state + inputs + the larger of activations and parameter \
                        gradients; the process baseline (thread pool, matmul slabs) and \
                        temporaries inside backward, including recomputed outputs, are not \
                        predicted"
            .into(),
        Key::SeriesMeasured => format!("{} (measured)", s.text("strategy")),
        Key::SeriesPredicted => format!("{} (predicted)", s.text("strategy")),
        Key::DepthChart => format!("Step peak against depth (batch {})", s.count("batch")),
        Key::DepthOverheadSeries => {
            format!("against depth (batch {}); bars: 95% CI", s.count("batch"))
        }
        Key::BatchChart => format!(
            "Step peak against batch size (depth {}): where it pays",
            s.count("depth")
        ),
        Key::BatchOverheadChart => format!(
            "Time cost of checkpointing against batch size (depth {})",
            s.count("depth")
        ),
        Key::ChenSource => {
            "Chen et al. 2016, \"Training Deep Nets with Sublinear Memory Cost\"".into()
        }
        Key::ChenClaim => "segments of about sqrt(n) layers: O(sqrt(n)) activation memory for one \
                         extra forward pass; a 1000-layer ResNet from 48 GB to 7 GB at about \
                         +30% time"
            .into(),
        Key::ChenOurs => format!(
            "Burn's balanced strategy is per operation, not per segment: it drops ReLU outputs \
             and keeps every Linear output, so activations stay linear in depth ({:.3} of plain \
             at depth {}); time per step {}",
            s.num("kept_share"),
            s.count("depth"),
            s.cost("timing")
        ),
        Key::HfSource => "Hugging Face Transformers, \"efficient training on a single GPU\" \
                        (bert-large, V100, batch 1 x accumulation 4)"
            .into(),
        Key::HfClaim => "checkpointing costs about 20% of speed (7.75 -> 5.99 samples/s, -23%); \
                       8681 -> 6775 MB (-22%)"
            .into(),
        Key::HfOurs => format!(
            "depth {} batch {}: time per step {}; step peak {} -> {} ({})",
            s.count("depth"),
            s.count("batch"),
            s.cost("timing"),
            s.bytes("plain"),
            s.bytes("balanced"),
            change(s.num("plain"), s.num("balanced")),
        ),
        Key::Headline => format!(
            "depth {}, batch {}: NoCheckpointing against BalancedCheckpointing (step peak; time \
             per sample)",
            s.count("depth"),
            s.count("batch")
        ),
        Key::TransformerNote => {
            "model + Adam state + token ids + what the forward pass keeps (the \
                               blocks' rule with or without the balanced strategy, see the \
                               sequence-length page; v + 3 d + 5 values per token outside the \
                               blocks, the same count with checkpointing: not modelled) + \
                               log-softmax's output (v per token)"
                .into()
        }
        Key::TransformerSaving => format!(
            "{} blocks {} -> {} ({})",
            s.count("blocks"),
            s.bytes("plain"),
            s.bytes("balanced"),
            change(s.num("plain"), s.num("balanced"))
        ),
        Key::Transformer => format!(
            "Transformer: balanced checkpointing's step peak against none: {}. The gradients with \
             and without it: {}. Its time on the transformer is timed in pairs on the \
             sequence-length page.",
            s.list("savings").join("; "),
            match s.count("failed") {
                0 => "identical within the check's tolerance at every depth".to_string(),
                n => format!("{n} checks failed"),
            }
        ),
        // Chart titles, axes and legends.
        Key::LabelTimeCostOfCheckpointingPairedBalanced => {
            "Time cost of checkpointing (paired, balanced against plain, 95% CI)".into()
        }
        Key::LabelExtraTimePerStep => "extra time per step (%)".into(),
        Key::LabelBalancedAgainstPlainPairedBars95 => {
            "balanced against plain (paired); bars: 95% CI".into()
        }
        Key::LabelMemoryThroughOneTrainingStepWithout => {
            "Memory through one training step: without and with checkpointing".into()
        }
    }
}
