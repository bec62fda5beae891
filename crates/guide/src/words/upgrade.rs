//! Why a point's peak moved between Burn 0.21.0 and 0.22.1, where it is known: the upgrade
//! page's reason column. Each reason names what moved it, and says so where the workbench's
//! own code for the point changed in the port rather than Burn.

use results::diff::PointRef;

/// A known reason: the points it covers (`experiment` and a point-id prefix; `None` for every
/// device) and the words.
struct Reason {
    device: Option<&'static str>,
    experiment: &'static str,
    prefix: &'static str,
    words: &'static str,
}

/// The known reasons, the most specific first.
const REASONS: &[Reason] = &[Reason {
    device: None,
    experiment: "llama-family",
    prefix: "qlora-",
    words: "Burn: 0.21's autodiff refused a quantized base (a todo!()), so the point was \
            Burn's refusal; 0.22.1 trains the adapters over it, and the same step is measured",
}];

/// The reason `at` moved, where it is known.
pub fn reason(at: &PointRef) -> Option<String> {
    REASONS
        .iter()
        .find(|r| {
            r.device.is_none_or(|d| d == at.device.name())
                && r.experiment == at.experiment
                && at.point.starts_with(r.prefix)
        })
        .map(|r| r.words.to_string())
}

/// The reason of a CPU phase whose change is (`rest` within `tolerance` of nothing) or holds
/// the process's start-up change `startup`.
pub fn startup_share(startup: f64, rest: f64, tolerance: f64) -> String {
    let startup = super::signed_bytes(startup);
    if rest.abs() <= tolerance {
        format!("the CPU process's start-up alone ({startup} before any model)")
    } else {
        format!(
            "{startup} of it the CPU process's start-up; the point's own: {}",
            super::signed_bytes(rest)
        )
    }
}
