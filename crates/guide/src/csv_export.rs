//! Each record's points as CSV, one row per point: the raw figures (bytes, seconds, rates) as
//! the record holds them, for a spreadsheet or a script. Written beside the JSON record.

use std::collections::BTreeSet;

use results::{Analysed, Outcome};

/// The CSV of `record`'s points, each with its checks recorded and derived.
pub fn points_csv(record: &Analysed) -> Result<String, csv::Error> {
    let measured = || record.points.iter().filter_map(|p| p.result());
    let mut phases: Vec<String> = Vec::new();
    for r in measured() {
        for ph in &r.phases {
            if !phases.iter().any(|p| *p == ph.phase) {
                phases.push(ph.phase.to_string());
            }
        }
    }
    let metrics: BTreeSet<&str> = measured()
        .flat_map(|r| r.metrics.keys().map(String::as_str))
        .collect();

    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "experiment",
        "device",
        "profile",
        "point_id",
        "label",
        "status",
        "peak_bytes",
        "peak_upper_bytes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(phases.iter().map(|p| format!("{p}_peak_bytes")));
    header.extend(
        [
            "step_median_s",
            "step_min_s",
            "step_max_s",
            "units_per_step",
            "unit",
            "units_per_s",
            "checks_passed",
            "failure",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    header.extend(metrics.iter().map(|m| m.to_string()));
    w.write_record(&header)?;

    let num = |v: f64| {
        if v.is_finite() {
            v.to_string()
        } else {
            String::new()
        }
    };
    for p in &record.points {
        let mut row = vec![
            record.experiment.clone(),
            record.device.kind.name().to_string(),
            record.profile.name().to_string(),
            p.point.id.clone(),
            p.point.label.clone(),
        ];
        match &p.outcome {
            Outcome::Measured { result: r, .. } => {
                row.push("measured".into());
                row.push(r.peak_bytes().to_string());
                row.push(
                    r.peak_upper_bytes()
                        .map_or(String::new(), |b| b.to_string()),
                );
                for name in &phases {
                    row.push(
                        r.phase_named(name)
                            .map_or(String::new(), |ph| ph.peak_bytes.to_string()),
                    );
                }
                row.push(num(r.step.median_s));
                row.push(num(r.step.min_s));
                row.push(num(r.step.max_s));
                row.push(r.samples_per_step.to_string());
                row.push(r.unit.name().into());
                row.push(num(r.samples_per_s));
                let checks: Vec<_> = record.checks_of(&p.point.id).collect();
                row.push(if checks.is_empty() {
                    String::new()
                } else {
                    checks.iter().all(|c| c.passed).to_string()
                });
                row.push(String::new());
                for m in &metrics {
                    row.push(r.metrics.get(*m).map_or(String::new(), |v| num(*v)));
                }
            }
            other => {
                row.push(other.status().into());
                row.extend(std::iter::repeat_n(String::new(), 2 + phases.len() + 7));
                row.push(crate::words::outcome_reason(other));
                row.extend(std::iter::repeat_n(String::new(), metrics.len()));
            }
        }
        w.write_record(&row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings"))
}
