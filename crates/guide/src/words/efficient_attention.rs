//! The words of memory-efficient attention and the chunked loss: the reader's answer, how the
//! peak grows with the sequence, each form, full training and GPT-2 small, and the proof.

use results::format;
use results::keys::efficient_attention::Key;

use super::{change, share, Said};

/// A form's name, from its id.
fn form_name(id: &str) -> &'static str {
    match id {
        "written-out" => "scores written out",
        "fused" => "Burn's fused attention (written out by autodiff)",
        "checkpointing" => "Burn's balanced checkpointing",
        "efficient" => "memory-efficient attention",
        "chunked-loss" => "chunked loss",
        "both" => "memory-efficient attention + chunked loss",
        "both-checkpointing" => "both + checkpointing",
        _ => "an unknown form",
    }
}

/// "LoRA rank 8" or "full training with Adam".
fn training(s: &Said<'_>) -> String {
    let t = s.name("training");
    match t.strip_prefix("lora-r") {
        Some(rank) => format!("LoRA rank {rank}"),
        None => "full training with Adam".into(),
    }
}

/// " (timed at 256 tokens)", or nothing where the pairs were not timed.
fn timed_at(s: &Said<'_>) -> String {
    match s.count("timed_seq") {
        0 => String::new(),
        seq => format!(" (timed at {} tokens)", format::thousands(seq)),
    }
}

/// Two steps of another model, written out and with both ops.
fn other_step(s: &Said<'_>, model: &str) -> String {
    let (written, both) = (s.num("written"), s.num("both"));
    format!(
        "{model} ({} parameters), one sequence of {} tokens, full training with Adam: the step \
         peaked at {} written out and at {} with both ops ({}); the weights, Adam's state and \
         the inputs are {} of it, what the forward pass kept went from {} to {}.",
        format::thousands(s.count("params")),
        format::thousands(s.count("seq")),
        s.bytes("written"),
        s.bytes("both"),
        change(written, both),
        s.bytes("fixed"),
        s.bytes("kept_written"),
        s.bytes("kept_both"),
    )
}

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::Headline => format!(
            "the reader's model, {}, {} tokens: scores written out against memory-efficient \
             attention + chunked loss{}",
            training(s),
            format::thousands(s.count("seq")),
            timed_at(s),
        ),
        Key::HeadlineAttention => format!(
            "the reader's model, {}, {} tokens: scores written out against memory-efficient \
             attention alone{}",
            training(s),
            format::thousands(s.count("seq")),
            timed_at(s),
        ),
        Key::Answer => {
            let (written, both) = (s.num("written"), s.num("both"));
            format!(
                "The reader's model (two TinyLlama-width blocks, vocabulary 32,000), {}, one \
                 sequence of {} tokens: the step peaked at {} with attention written out and at \
                 {} with memory-efficient attention and the chunked loss, {} of it ({}). What the \
                 forward pass kept for backward fell from {} to {}; the frozen weights, the \
                 adapters and their state are {} of the efficient step.",
                training(s),
                format::thousands(s.count("seq")),
                s.bytes("written"),
                s.bytes("both"),
                share(both, written),
                change(written, both),
                s.bytes("kept_written"),
                s.bytes("kept_both"),
                s.bytes("fixed"),
            )
        }
        Key::BySequence => format!(
            "Above the weights and state, the written-out step held {} at {} tokens and {} at \
             {}: {:.1} times as much for {:.0} times the tokens, the scores' square. With both \
             ops it held {} and {}: {:.1} times as much, the tokens' growth.",
            s.bytes("written_from"),
            format::thousands(s.count("from")),
            s.bytes("written_to"),
            format::thousands(s.count("to")),
            s.num("written_to") / s.num("written_from"),
            s.num("to") / s.num("from"),
            s.bytes("both_from"),
            s.bytes("both_to"),
            s.num("both_to") / s.num("both_from"),
        ),
        Key::FormPeak => format!(
            "{}: {} (kept {})",
            form_name(&s.name("form")),
            s.bytes("peak"),
            s.bytes("kept")
        ),
        Key::Forms => format!(
            "Every form on the same LoRA step at {} tokens, its step peak and what its forward \
             pass kept: {}. Burn's fused attention peaked {} the written-out step: Burn 0.22.1's \
             autodiff writes it out.",
            format::thousands(s.count("seq")),
            s.list("forms").join("; "),
            if (s.num("fused") - s.num("written")).abs() <= 0.01 * s.num("written") {
                "within 1% of".to_string()
            } else {
                format!("{} from", change(s.num("written"), s.num("fused")))
            },
        ),
        Key::Full => other_step(s, "The reader's model"),
        Key::Gpt2 => other_step(
            s,
            "GPT-2 small's shape (12 blocks, d_model 768, vocabulary 50,257)",
        ),
        Key::Proof => format!(
            "Each form proved it computes the written-out step, from the same seeded weights \
             and sequence: {} checks ({} failed), its first step's gradients within {:.1e} of the \
             written-out step's (the worst {:.1e}) and its loss at every step within {:.1e} (the \
             worst {:.1e}).",
            s.count("checks"),
            s.count("failed"),
            s.num("gradient_tolerance"),
            s.num("worst_gradients"),
            s.num("loss_tolerance"),
            s.num("worst_losses"),
        ),
        Key::PublishedSource => {
            "Korthikanti et al. 2022, \"Reducing Activation Recomputation in Large Transformer \
             Models\""
                .into()
        }
        Key::PublishedClaim => {
            "A transformer layer's activations take sbh(34 + 5as/h) bytes in 16 bits, of which \
             5as²b are attention's scores, their softmax and its dropout mask: the only term \
             that grows with the sequence's square."
                .into()
        }
        Key::PublishedOurs => format!(
            "At {} tokens and {} heads, the {} blocks' written-out step kept {} for backward; \
             with the scores recomputed in chunks it kept {}: the square term gone, as \
             FlashAttention-style kernels remove it.",
            format::thousands(s.count("seq")),
            s.count("heads"),
            s.count("layers"),
            s.bytes("kept_written"),
            s.bytes("kept_both"),
        ),
        Key::LabelPeakBySequence => "LoRA step's peak above the weights, by sequence".into(),
        Key::LabelSequence => "sequence (tokens)".into(),
        Key::LabelAboveFixed => "bytes above weights and state".into(),
        Key::LabelWrittenOut => "written out".into(),
        Key::LabelBoth => "efficient attention + chunked loss".into(),
        Key::LabelPeakByForm => format!(
            "Each form on the LoRA step at {} tokens",
            format::thousands(s.count("seq"))
        ),
        Key::LabelForm => "form".into(),
        Key::LabelStepPeak => "step peak".into(),
        Key::LabelKept => "kept for backward".into(),
        Key::LabelFixed => "weights, state and inputs".into(),
    }
}
