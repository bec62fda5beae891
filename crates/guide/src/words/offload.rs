//! The words of offload: what moving the optimizer to the host saves on the device, what the
//! copies cost, and the proof that the steps compute the same.

use super::values_per_param;
use results::format;
use results::keys::offload::Key;

use super::{change, Said};

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    let same_memory = s.yes("same_memory");
    match key {
        Key::LabelStepPeak => "step peak".into(),
        Key::LabelHeldBetweenSteps => "held between steps".into(),
        Key::LabelTime => "time".into(),
        Key::LabelWhereTheOptimizerSteps => "where the optimizer steps".into(),
        Key::LabelBytesCopiedPerStep => "bytes copied per step".into(),
        Key::HeldAndPeak => {
            let saved_between = s.num("held_usual") - s.num("held_offloaded");
            let (peak_usual, peak_offloaded) = (s.num("peak_usual"), s.num("peak_offloaded"));
            format!(
                "The MLP ({} parameters, {}, batch {}), {}: between steps the {} held {} with the \
                 optimizer beside the model and {} with it on the host ({} {}); the step's peak \
                 went from {} (in its {} phase) to {} (in its {} phase), {}.",
                s.count("params"),
                s.name("shape"),
                s.count("batch"),
                s.name("optimizer"),
                if same_memory { "process" } else { "device" },
                s.bytes("held_usual"),
                s.bytes("held_offloaded"),
                format::bytes(saved_between.abs()),
                if saved_between >= 0.0 { "less" } else { "more" },
                s.bytes("peak_usual"),
                s.name("peak_phase_usual"),
                s.bytes("peak_offloaded"),
                s.name("peak_phase_offloaded"),
                change(peak_usual, peak_offloaded),
            )
        }
        Key::NothingToMove => format!(
            "On the CPU backend there is nothing to move: the host is the device. The offloaded \
             step keeps the optimizer's state in the same memory and adds a second copy of the \
             weights (the host's), {} by the byte model; what it measures here is the price of \
             the copies and of that second copy, not a saving. The device result sets show what \
             moves.",
            s.bytes("extra"),
        ),
        Key::Copies => {
            let transfer = s.num("transfer");
            format!(
                "Each offloaded step copied {} ({:.2} B per parameter: every gradient down, every \
                 weight up); the two copies took {} of a {} step (median of the measured steps; \
                 {}/s), the host's {} step {} against {} on the {}.",
                s.bytes("transfer"),
                transfer / s.num("params"),
                s.seconds("copy"),
                s.seconds("step"),
                format::bytes(transfer / s.num("copy")),
                s.name("optimizer"),
                s.seconds("host_optimizer"),
                s.seconds("usual_optimizer"),
                if same_memory {
                    "CPU in the usual step"
                } else {
                    "device"
                },
            )
        }
        Key::HostKept => format!(
            "The host kept {} between steps (the master weights and {}'s state; {} by the byte \
             model), counted by the host's allocator apart from the device's pool. A read of a \
             wgpu tensor returns the device's mapped staging buffer, which Flex takes without a \
             copy and the host's allocator does not see: the gradients cross that way and are \
             freed by the step's end, while the master weights are copied into the host's heap \
             once, before the first step (the first run on lavapipe left them in a staging \
             buffer and counted 2.08 MiB of 3.01 MiB: an explanation found after measuring, not \
             a prediction).",
            s.bytes("host_state"),
            s.name("optimizer"),
            s.bytes("predicted"),
        ),
        Key::Proof => format!(
            "The proof: {} steps both ways from the same weights; the parameters' largest \
             difference is {:.1e} of the largest parameter (tolerance {:.0e}){}.",
            s.count("steps"),
            s.num("max_rel_diff"),
            s.num("tolerance"),
            if s.num("passed") > 0.0 {
                ": where the optimizer steps changes where its state lives, not what is computed"
            } else {
                ": they DIFFER"
            }
        ),
        Key::SecondCopy => {
            "held between steps, offloaded less usual (a second copy of the weights)".into()
        }
        Key::SecondCopyNote => "the host's copy of the weights, one f32 (4 B) per parameter".into(),
        Key::SavedBetween => "device bytes saved between steps (the optimizer's state)".into(),
        Key::SavedBetweenNote => format!(
            "{} value(s) of {} state per parameter, 4 B each",
            values_per_param(s.num("values")),
            s.name("optimizer")
        ),
        Key::CopiedNote => "4 B per parameter each way (gradients down, weights up)".into(),
        Key::HostKeptNote => "the master weights and the optimizer's state, 4 B per value".into(),
        Key::Headline => format!(
            "{} beside the model against on the host, MLP, batch {} ({}; time per sample)",
            s.name("optimizer"),
            s.count("batch"),
            if same_memory {
                "step peak; the CPU: one memory, nothing to move"
            } else {
                "the device's step peak"
            }
        ),
        Key::PublishedSource => {
            "ZeRO (Rajbhandari et al. 2020); ZeRO-Offload (Ren et al. 2021)".into()
        }
        Key::PublishedClaim => "model states of mixed-precision Adam are 2 + 2 + 12 bytes per \
                              parameter on the device; offloading the 12 of the optimizer \
                              (master weights, momentum, variance) leaves the 2 + 2 of the \
                              half-precision weights and gradients"
            .into(),
        Key::PublishedOurs => format!(
            "in f32 the usual step holds {:.2} B per parameter between steps (weights, {}'s \
             state, the inputs), the offloaded one {:.2} B{}",
            s.num("usual_per_param"),
            s.name("optimizer"),
            s.num("offloaded_per_param"),
            if same_memory {
                " in the same memory (the CPU: the host's copy of the weights on top)"
            } else {
                " on the device"
            }
        ),
        // Chart titles, axes and legends.
        Key::LabelHostBytesKeptBetweenSteps => "host bytes kept between steps".into(),
        Key::LabelProcessBytesTheCpuHostAnd => {
            "Process bytes (the CPU: host and device are one memory)".into()
        }
        Key::LabelDeviceBytesWithTheOptimizerOn => {
            "Device bytes with the optimizer on the device and on the host".into()
        }
        Key::LabelBytesAboveTheProcessSOwn => "bytes above the process's own".into(),
        Key::LabelTimeOfEachPhaseOfA => "Time of each phase of a step (median)".into(),
    }
}
