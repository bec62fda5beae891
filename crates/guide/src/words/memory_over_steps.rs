//! The words of memory over many steps: each loop's pattern, what it grew by and why, its fix,
//! and the Burn issue it reproduces.

use super::Said;
use results::keys::memory_over_steps::Key;

/// A pattern's name.
fn pattern(id: &str) -> &'static str {
    match id {
        "control" => "correct loop (control)",
        "kept-loss" => "loss kept as a tensor",
        "kept-eval-output" => "eval on autodiff, output kept",
        "eval-on-autodiff" => "eval on autodiff, read and dropped",
        "clone-select" => ".clone().select() minibatches",
        "loader-thread" => "batches made on a new thread per epoch",
        "loader-thread-one-stream" => "the same, max_streams = 1",
        "cleanup-every" => "memory_cleanup() every 10 steps",
        "monitored" => "correct loop, StepMonitor around each step",
        _ => "an unknown loop",
    }
}

/// What the pattern does, its fix and the report it reproduces.
fn about(id: &str) -> &'static str {
    match id {
        "control" => {
            "Reads the loss with into_scalar() and evaluates on model.valid(): the loop every \
             other is measured against."
        }
        "kept-loss" => {
            "Pushes each step's loss tensor onto a Vec for logging (in PyTorch, summing losses \
             with their graphs is the classic leak); loss.into_scalar() keeps a number."
        }
        "kept-eval-output" => {
            "Evaluates on the autodiff model and keeps the output, so each output holds its \
             graph (burn#4339, #4970). Fix: evaluate on model.valid()."
        }
        "eval-on-autodiff" => {
            "Evaluates on the autodiff model and reads the result as a number, keeping nothing."
        }
        "clone-select" => {
            "Cuts each minibatch with .clone().select() from a dataset tensor that stays alive \
             (burn#4302)."
        }
        "loader-thread" => {
            "Makes each epoch's batch on a new thread, as Burn 0.22's DataLoader does per \
             iter(): on CubeCL each thread gets a stream and each stream a pool that outlives \
             the thread (burn#4971, #4792). The workaround reported there is the next loop; \
             what this backend's device-wide readings say of it is below."
        }
        "loader-thread-one-stream" => {
            "The same loader with CubeCL's [streaming] max_streams = 1: every thread shares one \
             stream and its pool."
        }
        "cleanup-every" => {
            "The control with memory_cleanup() every 10 steps: it returns the pool's unused \
             pages, not bytes in use (burn#3431)."
        }
        "monitored" => {
            "The control with the workbench's StepMonitor around each training step (a sync and \
             two readings of the probe): what watching the loop's memory adds."
        }
        _ => "",
    }
}

fn verdict(v: &str) -> &'static str {
    match v {
        "flat" => "flat",
        "grows" => "grows without bound",
        "levels" => "grew, then levelled",
        _ => "not read",
    }
}

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    match key {
        Key::LabelBytesInUseAfterTheLast => "bytes in use after the last step".into(),
        Key::Pattern => {
            let mut out = format!(
                "{}: bytes in use {} ({}/step, 95% CI {} to {}, {} steps after a {}-step \
                 warm-up; {} after the last step).",
                pattern(&s.name("pattern")),
                verdict(&s.name("in_use_verdict")),
                s.bytes("in_use_slope"),
                s.bytes("in_use_low"),
                s.bytes("in_use_high"),
                s.count("steps") - s.count("warmup"),
                s.count("warmup"),
                s.bytes("in_use_last"),
            );
            if s.has("reserved_slope") {
                out.push_str(&format!(
                    " Reserved on the training thread's stream: {} ({}/step).",
                    verdict(&s.name("reserved_verdict")),
                    s.bytes("reserved_slope"),
                ));
            }
            if s.has("all_reserved_slope") {
                out.push_str(&format!(
                    " Over every pool of the device ({:.0}): in use {} ({}/step), reserved {} \
                     ({}/step).",
                    s.num("pools"),
                    verdict(&s.name("all_verdict")),
                    s.bytes("all_slope"),
                    verdict(&s.name("all_reserved_verdict")),
                    s.bytes("all_reserved_slope"),
                ));
            }
            if s.has("driver_slope") {
                out.push_str(&format!(
                    " The driver's used memory: {} ({}/step).",
                    verdict(&s.name("driver_verdict")),
                    s.bytes("driver_slope"),
                ));
            }
            if s.has("resident_slope") {
                out.push_str(&format!(
                    " Resident set: {} ({}/step).",
                    verdict(&s.name("resident_verdict")),
                    s.bytes("resident_slope"),
                ));
            }
            out.push(' ');
            out.push_str(about(&s.name("pattern")));
            out
        }
        Key::LoaderFinding => loader_finding(s),
        Key::LoaderOneStreamRead => {
            "The loaders were read on the training thread's stream only (a set measured before \
             the workbench read every pool): what the other threads' pools hold is not seen, so \
             which loader leaves memory behind is not established here, and max_streams = 1 is \
             not recommended on this set until it is measured again."
                .into()
        }
        Key::Headline => format!(
            "{} against the correct loop, bytes in use after {} steps",
            pattern(&s.name("pattern")),
            s.count("steps")
        ),
        Key::ControlCheck => {
            "the correct loop's bytes in use after the warm-up, a line fitted with its 95% \
             interval: flat unless the whole interval is above zero and the slope above 4 KiB \
             a step"
                .into()
        }
        Key::Growth => format!(
            "growth of bytes in use per step, {}",
            pattern(&s.name("pattern"))
        ),
        Key::GrowthNoteControl => "nothing kept from step to step".into(),
        Key::GrowthNoteKeptOutput => format!(
            "the graph of each kept output: the step's weights ({}, replaced by the optimizer \
             but held for the matrix products' backward) and the activations and output of one \
             pass ({}, the MLP's rule for an un-back-propagated pass); written after the \
             measurement was seen, not fitted to it",
            s.bytes("weights"),
            s.bytes("graph"),
        ),
        Key::LabelInUseByStep => "Bytes in use after each step".into(),
        Key::LabelStep => "step".into(),
        Key::LabelAboveWarmUp => "in use, above the first step after warm-up".into(),
        // A legend entry: the id, short enough for a phone-wide chart.
        Key::LabelPattern => s.name("pattern").replace('-', " "),
    }
}

/// What the device-wide readings support saying of `max_streams = 1` on this backend.
fn loader_finding(s: &Said<'_>) -> String {
    let figures = if s.num("reserved_per_thread").is_nan() {
        format!(
            "the process's whole heap (every thread's; the CPU backend has no pools), after \
             each step: the per-thread loader's bytes in use moved {}/step, with max_streams = \
             1 {}/step",
            s.bytes("in_use_per_thread"),
            s.bytes("in_use_one"),
        )
    } else {
        format!(
            "every pool of the device, after each step: the per-thread loader's {:.0} pools \
             held in use {}/step and reserved {}/step; with max_streams = 1, {:.0} pool(s), \
             in use {}/step, reserved {}/step",
            s.num("pools_per_thread"),
            s.bytes("in_use_per_thread"),
            s.bytes("reserved_per_thread"),
            s.num("pools_one"),
            s.bytes("in_use_one"),
            s.bytes("reserved_one"),
        )
    };
    let said = match s.name("finding").as_str() {
        "workaround-holds" => {
            "the per-thread loader leaves memory behind and max_streams = 1 stops it: on this \
             backend the workaround holds"
        }
        "nothing-to-fix" => {
            "neither loader leaves memory behind: on this backend there is nothing for \
             max_streams = 1 to fix, and it is not recommended here"
        }
        "neither-fixes" if s.num("reserved_one") < s.num("reserved_per_thread") => {
            "both loaders leave memory behind: on this backend max_streams = 1 slows the pools' \
             growth but does not stop the leak, so it is not recommended here as a fix"
        }
        "neither-fixes" => {
            "both loaders leave memory behind: on this backend max_streams = 1 does not fix it, \
             and it is not recommended here"
        }
        "workaround-worse" => {
            "only the loader with max_streams = 1 leaves memory behind: on this backend the \
             workaround makes it worse"
        }
        _ => "the two loaders could not be set side by side",
    };
    let mut out = format!("The loaders, read over {figures}: {said}.");
    out[..1].make_ascii_uppercase();
    out
}
