//! The words of "what holds the memory at the peak": each recorded step's peak by the code
//! that made its bytes, each phase's largest holder, and what the recording costs.

use super::Said;
use results::keys::peak_attribution::Key;

/// A recorded model's name.
fn workload(id: &str) -> &'static str {
    match id {
        "mlp" => "the MLP",
        "gpt2-small" => "GPT-2 small",
        "gpt2-small-short" => "GPT-2 small, one short sequence",
        "llama-block" => "the Llama-family block",
        _ => "a model",
    }
}

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::Headline => format!(
            "a GPT-2-small step of {} tokens recorded (every block of {} or more traced to its \
             stack) against the same step unrecorded",
            s.count("tokens"),
            s.bytes("threshold")
        ),
        Key::Correctness => {
            "each recorded step's traced and untraced bytes add up to the probe's peak to the \
             byte, the traced blocks hold at least 95% of it, and recording leaves the peak as \
             it was"
                .into()
        }
        Key::PeakFinding => peak_finding(s),
        Key::PhaseFinding => phase_finding(s),
        Key::CostFinding => {
            let page = if s.has("tokens") {
                format!(
                    " The cost is per allocation and the compute per token, so on the page's \
                     step of {} tokens ({} events) it weighs less. Each build of the pairs is \
                     one model whose steps take the three arms' turns, the recorder switched on \
                     and off between them; the short step lets four builds narrow the interval \
                     in the run's time.",
                    s.count("tokens"),
                    s.count("events")
                )
            } else {
                String::new()
            };
            format!(
                "Recording costs a GPT-2-small step of {} tokens and {} allocation events {} \
                 in time (timed in pairs against the same step unrecorded) and nothing in \
                 memory: the recorder writes into buffers made once, off the heap.{page} \
                 Symbolising the stacks of the page's GPT-2-small step took {}, once, after the \
                 step.",
                s.count("timed_tokens"),
                s.count("timed_events"),
                s.cost("recording"),
                s.seconds("symbolise")
            )
        }
        Key::BreakdownTitle => format!(
            "{}: what is live at the step's peak",
            capitalised(workload(&s.name("workload")))
        ),
        Key::BreakdownNote => format!(
            "The {} live at the peak, by the code that made each block (the model's layer, the \
             operation, or the backward node or optimizer) and the phase it was made in; the \
             grey rows are the blocks under {}, summed, and what the process held before \
             recording began. The step made {} allocation events.",
            s.bytes("peak"),
            s.bytes("threshold"),
            s.count("events")
        ),
        Key::TimelineTitle => format!(
            "{}: bytes in use over the recorded step",
            capitalised(workload(&s.name("workload")))
        ),
        Key::LargestBlocks => format!(
            "{}: the largest blocks live at the peak (event {} of the step's {}), each with the \
             allocation events that made and freed it, counted from the step's start (a \
             negative one was made before the step): {}.",
            capitalised(workload(&s.name("workload"))),
            s.count("peak_event"),
            s.count("events"),
            s.list("blocks").join("; ")
        ),
        Key::LargestBlock => {
            let freed = if s.has("freed") {
                format!("freed at {}", s.num("freed"))
            } else {
                "alive after the step".into()
            };
            format!(
                "{}, {}, made at {}, {freed}",
                s.name("site"),
                s.bytes("bytes"),
                s.num("made")
            )
        }
        Key::CpuNote => {
            "These are the CPU backend's blocks, counted by the counting allocator. On a GPU the \
             weights, gradients, Adam's state and the activations autodiff keeps are the same \
             tensors; the transients differ where a GPU backend fuses operations, Flex's 16-bit \
             matmuls work in f32 buffers a GPU does not use, and a GPU's pool rounds each block \
             up. A \"(before the step)\" row was made by the model's first step or its set-up \
             and is still alive: the weights (drawn lazily at their first use) and Adam's \
             moments."
                .into()
        }
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn peak_finding(s: &Said<'_>) -> String {
    let mut top = Vec::new();
    for (site, bytes) in [
        ("site0", "bytes0"),
        ("site1", "bytes1"),
        ("site2", "bytes2"),
    ] {
        if s.has(site) {
            top.push(format!("{} ({})", s.name(site), s.bytes(bytes)));
        }
    }
    format!(
        "{}: at the step's peak, {} in use, the {} blocks of {} or more traced to the code \
         that made them hold {:.1}% of what the step and its model hold (the peak less the {} \
         the process held before recording began). The largest: {}.",
        capitalised(workload(&s.name("workload"))),
        s.bytes("peak"),
        s.count("blocks"),
        s.bytes("threshold"),
        s.num("share"),
        s.bytes("own"),
        top.join("; ")
    )
}

fn phase_finding(s: &Said<'_>) -> String {
    let mut parts = Vec::new();
    for (phase, peak, site, bytes) in [
        ("forward", "forward_peak", "forward_site", "forward_bytes"),
        (
            "backward",
            "backward_peak",
            "backward_site",
            "backward_bytes",
        ),
        (
            "optimizer",
            "optimizer_peak",
            "optimizer_site",
            "optimizer_bytes",
        ),
    ] {
        if s.has(peak) {
            parts.push(format!(
                "{phase} {} (largest: {}, {})",
                s.bytes(peak),
                s.name(site),
                s.bytes(bytes)
            ));
        }
    }
    format!(
        "{}, each phase's peak: {}.",
        capitalised(workload(&s.name("workload"))),
        parts.join("; ")
    )
}
