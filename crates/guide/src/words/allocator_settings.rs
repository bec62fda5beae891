//! The words of allocator settings: reserved against in-use bytes under each pool setting, the
//! training step under each, and the losses compared across settings.

use super::Said;
use results::keys::allocator_settings::Key;

pub(super) fn word(key: Key, s: &Said<'_>) -> String {
    let has_pool = s.yes("has_pool");
    match key {
        Key::LabelPeakInUse => "peak in use".into(),
        Key::LabelBytes => "bytes".into(),
        Key::LabelPoolSetting => "pool setting".into(),
        Key::LabelAllocation => "allocation".into(),
        Key::LabelInUsePredicted => "in use (predicted)".into(),
        Key::LabelInUseMeasured => "in use (measured)".into(),
        Key::Sequence => format!(
            "The sequence: {} f32 tensors of {} to {} ({} more each), the last {} kept alive, so \
             {} is live after the last allocation and {} was allocated in all.",
            s.count("count"),
            s.bytes("first"),
            s.bytes("last"),
            s.bytes("first"),
            s.count("keep"),
            s.bytes("in_use"),
            s.bytes("allocated"),
        ),
        Key::Pooled => format!(
            "{}: after the last allocation {} in use and, at the sequence's peak, {} reserved \
             ({:.1}x); once every tensor was dropped {} stayed reserved, and memory_cleanup() \
             ({}) left {}.",
            s.name("setting"),
            s.bytes("held"),
            s.bytes("peak"),
            s.num("peak") / s.num("held"),
            s.bytes("dropped"),
            s.seconds("cleanup"),
            s.bytes("released"),
        ),
        Key::NoPool => format!(
            "No pool on this device: every freed buffer went back to the process's heap. After \
             the last allocation {} was in use, as the rule says ({}); nothing is reserved beyond \
             it, so there is no setting to choose.",
            s.bytes("held"),
            s.bytes("predicted"),
        ),
        Key::StepPooled => format!(
            "Training step, {}: peak in use {} above the process's own bytes{}; the pools held at \
             most {} after a phase.",
            s.name("setting"),
            s.bytes("peak"),
            if s.has("upper") {
                format!(" (bracket up to {})", s.bytes("upper"))
            } else {
                String::new()
            },
            s.bytes("reserved"),
        ),
        Key::StepNoPool => format!(
            "Training step: peak in use {} above the process's own bytes; no pool, nothing \
             reserved beyond the live buffers.",
            s.bytes("peak"),
        ),
        Key::Proof => format!(
            "The losses of {} steps from the same seed under every setting: largest relative \
             difference {:.1e} (tolerance {:.0e}){}.",
            s.count("steps"),
            s.num("max_rel_diff"),
            s.num("tolerance"),
            if s.num("passed") > 0.0 {
                ": the setting changes where tensors live, not what is computed"
            } else {
                ": they DIFFER"
            }
        ),
        Key::CustomPools => {
            "Custom pools (MemoryConfiguration::Custom) are not among the points: a \
                           custom pool of exclusive pages must have a largest size that is a \
                           multiple of the device's alignment (cubecl-runtime asserts it; \
                           u64::MAX failed here) and starts its running average of page sizes \
                           at half that size (ExclusiveMemoryPool::new), so one pool for every \
                           size makes pages of half its maximum from the first tensor on. The \
                           presets build their per-size pools from the device's properties, \
                           which a user does not see before the device exists."
                .into()
        }
        Key::NotTimed => "Not timed in pairs: a pool is chosen once per process before the \
                        device's first use, so two settings cannot be interleaved in one \
                        process, and the workbench alternates processes only for different float \
                        types. Each point's own time is in its table; on a software driver \
                        (lavapipe) it is the CPU's, not a GPU's."
            .into(),
        Key::InUseQuantity => format!("in use after the last allocation, {}", s.name("setting")),
        Key::InUseNote => format!(
            "the last {} tensors of the sequence, i x {} each",
            s.count("keep"),
            s.bytes("step")
        ),
        Key::ReservedSeries => format!("reserved, {}", s.name("setting")),
        Key::ProofCheck => {
            format!(
            "losses of {} steps from the same seed under each pool setting against {}: largest \
             difference {:.3e} (relative {:.3e}, tolerance {:.0e}){}",
            s.count("steps"),
            s.name("setting"),
            s.num("max_abs_diff"),
            s.num("max_rel_diff"),
            s.num("tolerance"),
            if s.num("passed") > 0.0 { "" } else { ", FAILED" }
        )
        }
        Key::NoProof => "the losses' finiteness (one setting: nothing to compare)".into(),
        Key::Headline => format!(
            "tensors of growing size: {} against {} (bytes reserved at the sequence's peak; not \
             timed)",
            s.name("default"),
            s.name("best")
        ),
        Key::HeadlineAlone => format!(
            "tensors of growing size under {} ({})",
            s.name("default"),
            if has_pool {
                "one setting measured: nothing to compare"
            } else {
                "no pool on this device: nothing to set"
            }
        ),
        Key::PublishedSource => "torchtune issue 1185 (Llama3-8B QLoRA, A100 80 GB)".into(),
        Key::PublishedClaim => "peak 16.39 GiB at 21.6 s/it without, 10.83 GiB at 20.56 s/it with \
                              PyTorch's expandable_segments:True"
            .into(),
        Key::PublishedOurs => format!(
            "on this device the growing sequence's reserved peak ranged from {} to {} across the \
             settings measured, for {} in use; CubeCL has no expandable segments, and the \
             settings it has are measured here",
            s.bytes("least"),
            s.bytes("most"),
            s.bytes("in_use"),
        ),
        Key::PublishedOursNoPool => "no pool on this device (the CPU backend): nothing is \
                                     reserved beyond the live buffers; see the device result \
                                     sets"
            .into(),
        // Chart titles, axes and legends.
        Key::LabelBytesReservedAtTheSequenceS => "bytes reserved at the sequence's peak".into(),
        Key::LabelEveryTensorSoFarNoPage => {
            "every tensor so far (no page reused, none freed)".into()
        }
        Key::LabelTensorsOfGrowingSizeInUse => {
            "Tensors of growing size: in use and reserved after each allocation".into()
        }
        Key::LabelATrainingStepUnderEachSetting => "A training step under each setting".into(),
        Key::LabelMostReservedAfterAPhase => "most reserved after a phase".into(),
    }
}
