//! What holds the peak, end to end: a quick run of `peak-attribution` records the steps of the
//! MLP, GPT-2 small and the Llama-family block, and the record's bytes add up to the probe's
//! peak, recomputed here from what the record keeps.

use results::record::load_dir;
use results::{PointResult, Trace};

use crate::workbench;

/// The sums the page states, recomputed: the traced blocks by site plus the untraced bytes
/// equal the bytes in use at the recorded step's highest event, which equal the probe's peak
/// (the highest of the step's phases), which equals the highest point of the step's timeline.
fn assert_adds_up(id: &str, r: &PointResult) {
    let a = r
        .attribution
        .as_deref()
        .expect("a recorded point keeps its attribution");
    let traced: u64 = a.peak.sites.iter().map(|s| s.bytes).sum();
    assert_eq!(traced + a.peak.untraced_bytes, a.peak.in_use_bytes, "{id}");
    assert_eq!(a.peak.in_use_bytes, a.probe_peak_bytes, "{id}");
    assert_eq!(a.probe_peak_bytes, r.peak_bytes(), "{id}: the phases' peak");
    let timeline_peak = r
        .trace(Trace::MemoryTimelineBytes)
        .iter()
        .copied()
        .fold(0.0, f64::max);
    assert_eq!(
        timeline_peak as u64, a.probe_peak_bytes,
        "{id}: the timeline's peak"
    );
    assert!(
        a.traced_share_of_step() >= 0.95,
        "{id}: traced {:.3} of the step's bytes",
        a.traced_share_of_step()
    );
    for (phase, m) in &a.phases {
        let traced: u64 = m.sites.iter().map(|s| s.bytes).sum();
        assert_eq!(traced + m.untraced_bytes, m.in_use_bytes, "{id} {phase}");
        let measured = r
            .phases
            .iter()
            .find(|p| p.phase == phase.as_str())
            .map(|p| p.peak_bytes);
        assert_eq!(
            Some(m.in_use_bytes),
            measured,
            "{id} {phase}: the phase's peak"
        );
    }
}

#[test]
fn a_recorded_step_adds_up_to_the_probes_peak_and_names_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    workbench()
        .args(["run", "peak-attribution", "--quick", "--out"])
        .arg(&out)
        .assert()
        .success();
    let records = load_dir(&out.join("data")).unwrap();
    let record = &records[0];
    let mut recorded = 0;
    for p in &record.points {
        let r = p.result().expect("every point is measured");
        assert!(
            r.checks.iter().all(|c| c.passed),
            "{}: {:?}",
            p.point.id,
            r.checks
        );
        if r.attribution.is_none() {
            continue;
        }
        assert_adds_up(&p.point.id, r);
        recorded += 1;
    }
    assert_eq!(
        recorded, 4,
        "the MLP, GPT-2 small, the Llama block and the short step the pairs time"
    );
    let gpt2 = record
        .points
        .iter()
        .find(|p| p.point.id == "gpt2-small")
        .and_then(|p| p.result())
        .and_then(|r| r.attribution.as_deref())
        .unwrap();
    let codes: Vec<&str> = gpt2.peak.sites.iter().map(|s| s.code.as_str()).collect();
    assert!(
        codes.iter().any(|c| c.contains("MultiHeadAttention")),
        "{codes:?}"
    );
    assert!(codes.contains(&"Adam"), "{codes:?}");
    let page = std::fs::read_to_string(out.join("peak-attribution.html")).unwrap();
    assert!(page.contains("class=\"bar\"") && page.contains("breakdown-table"));
    assert!(page.contains("MultiHeadAttention::forward"));
}
