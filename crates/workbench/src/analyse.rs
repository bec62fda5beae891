//! What render derives from a record: the technique named by the record analyses its points
//! and comparisons, and supplies its title, page text and place in the guide.
//!
//! Records hold measurements only; running the analysis here, when the guide is rendered,
//! makes a change of wording or analysis a re-render of the stored records, never a re-run.

use results::{
    Analysed, AnalysedCapacity, CapacityRecord, ExperimentRecord, PageText, Profile, Text,
};

use crate::error::BadInput;

/// `record` with what its technique derives from it; refused (one line, exit 2) when no
/// technique of this workbench has the record's id.
pub fn analyse(mut record: ExperimentRecord) -> Result<Analysed<Text>, BadInput> {
    let Some(experiment) = experiments::find(&record.experiment) else {
        return Err(BadInput::UnknownRecordExperiment {
            id: record.experiment.clone(),
            known: known_ids(),
        });
    };
    let device = record.device.kind;
    // The record's own plan names its points; a point an older record has that today's plan
    // for its profile no longer has (a size moved) is named by the other profile's plan, where
    // the same id names the same configuration.
    let mut plan = experiment.points(record.profile, device);
    for other in [Profile::Quick, Profile::Full] {
        if other != record.profile {
            plan.extend(experiment.points(other, device));
        }
    }
    label(&mut record, plan);
    let words = guide::words::pages::page(experiment.technique());
    Ok(Analysed {
        title: words.title.into(),
        guide_position: experiment.technique().position(),
        page: PageText {
            explanation: words.explanation.into(),
            fix: words.fix.into(),
            on_devices: words.on_devices.into(),
            snippet: experiment.snippet().into(),
        },
        analysis: experiment.analyse(&record.points, &record.comparisons, device),
        estimator: experiment.estimator(&record.points, device),
        derived_checks: experiment.derived_checks(&record.points, device),
        record,
    })
}

/// Names each point and comparison of `record` as the technique's `plan` names its points (the
/// first point of that id; a point the plan does not have keeps its id as its name).
fn label(record: &mut ExperimentRecord, plan: Vec<results::Point>) {
    let name = |id: &str| {
        plan.iter()
            .find(|p| p.id == id)
            .map_or_else(|| id.to_string(), |p| p.label.clone())
    };
    for p in &mut record.points {
        p.point.label = name(&p.point.id);
    }
    for c in &mut record.comparisons {
        c.baseline_label = name(&c.spec.baseline);
        c.technique_label = name(&c.spec.technique);
    }
}

/// Every record analysed, in the guide's order.
pub fn analyse_all(records: Vec<ExperimentRecord>) -> Result<Vec<Analysed<Text>>, BadInput> {
    let mut analysed = records
        .into_iter()
        .map(analyse)
        .collect::<Result<Vec<_>, _>>()?;
    Analysed::sort_for_guide(&mut analysed);
    Ok(analysed)
}

/// The ids of every technique, for an error message.
pub(crate) fn known_ids() -> String {
    experiments::all()
        .iter()
        .map(|e| e.id())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The "What fits" page's input: `fit`'s measured searches beside the estimator's tables.
pub fn analyse_capacity(record: CapacityRecord) -> AnalysedCapacity {
    AnalysedCapacity {
        record,
        tables: estimator::capacity::tables(),
    }
}
