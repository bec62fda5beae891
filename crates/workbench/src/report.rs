//! What happens while experiments run, fanned out to several reports (as criterion does):
//! a progress bar on the terminal, and the JSON export of each record as soon as it is complete.

use std::path::PathBuf;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use results::{ComparisonSpec, ExperimentRecord, MeasuredPoint, PairedComparison, Point};

/// Hooks called by the runner. Every method has a default that does nothing.
pub trait Report {
    /// An experiment with `points` points begins.
    fn experiment_started(&self, _experiment: &str, _points: usize) {}
    /// A point's child process is about to start.
    fn point_started(&self, _experiment: &str, _point: &Point) {}
    /// A point has been measured, or has failed.
    fn point_finished(&self, _experiment: &str, _point: &MeasuredPoint) {}
    /// A point was kept from an earlier run's journal (`run --resume`), not measured.
    fn point_kept(&self, _experiment: &str, _point: &MeasuredPoint) {}
    /// A paired comparison is about to be timed.
    fn comparison_started(&self, _experiment: &str, _spec: &ComparisonSpec) {}
    /// A paired comparison has been timed, or has failed.
    fn comparison_finished(&self, _experiment: &str, _comparison: &PairedComparison) {}
    /// An experiment's record is complete.
    fn experiment_finished(&self, _record: &ExperimentRecord) -> std::io::Result<()> {
        Ok(())
    }
}

/// A shared report (the run keeps a handle to read the progress report's failures at the end).
impl<R: Report + ?Sized> Report for std::sync::Arc<R> {
    fn experiment_started(&self, experiment: &str, points: usize) {
        (**self).experiment_started(experiment, points);
    }

    fn point_started(&self, experiment: &str, point: &Point) {
        (**self).point_started(experiment, point);
    }

    fn point_finished(&self, experiment: &str, point: &MeasuredPoint) {
        (**self).point_finished(experiment, point);
    }

    fn point_kept(&self, experiment: &str, point: &MeasuredPoint) {
        (**self).point_kept(experiment, point);
    }

    fn comparison_started(&self, experiment: &str, spec: &ComparisonSpec) {
        (**self).comparison_started(experiment, spec);
    }

    fn comparison_finished(&self, experiment: &str, comparison: &PairedComparison) {
        (**self).comparison_finished(experiment, comparison);
    }

    fn experiment_finished(&self, record: &ExperimentRecord) -> std::io::Result<()> {
        (**self).experiment_finished(record)
    }
}

/// Sends every event to each report in turn.
#[derive(Default)]
pub struct Reports(pub Vec<Box<dyn Report>>);

impl Report for Reports {
    fn experiment_started(&self, experiment: &str, points: usize) {
        self.0
            .iter()
            .for_each(|r| r.experiment_started(experiment, points));
    }

    fn point_started(&self, experiment: &str, point: &Point) {
        self.0
            .iter()
            .for_each(|r| r.point_started(experiment, point));
    }

    fn point_finished(&self, experiment: &str, point: &MeasuredPoint) {
        self.0
            .iter()
            .for_each(|r| r.point_finished(experiment, point));
    }

    fn point_kept(&self, experiment: &str, point: &MeasuredPoint) {
        self.0.iter().for_each(|r| r.point_kept(experiment, point));
    }

    fn comparison_started(&self, experiment: &str, spec: &ComparisonSpec) {
        self.0
            .iter()
            .for_each(|r| r.comparison_started(experiment, spec));
    }

    fn comparison_finished(&self, experiment: &str, comparison: &PairedComparison) {
        self.0
            .iter()
            .for_each(|r| r.comparison_finished(experiment, comparison));
    }

    fn experiment_finished(&self, record: &ExperimentRecord) -> std::io::Result<()> {
        self.0
            .iter()
            .try_for_each(|r| r.experiment_finished(record))
    }
}

/// Writes each record to `<dir>/<id>.json` the moment its experiment ends, atomically (a
/// temporary file renamed into place), so that a run that dies later keeps what it measured and
/// no record is ever torn.
pub struct JsonExport {
    /// The folder records go to.
    pub dir: PathBuf,
}

impl Report for JsonExport {
    fn experiment_finished(&self, record: &ExperimentRecord) -> std::io::Result<()> {
        let path = self.dir.join(record.data_file());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        crate::output::write_atomic(&path, record.to_json().as_bytes())
    }
}

/// A progress bar over all points of the run, naming the point in progress.
pub struct Progress {
    bar: ProgressBar,
    failures: Mutex<Vec<String>>,
}

impl Progress {
    /// A bar for `total_points`, drawn on stderr (hidden when stderr is not a terminal).
    pub fn new(total_points: usize) -> Self {
        let bar =
            ProgressBar::with_draw_target(Some(total_points as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} points  {msg}")
                .expect("the template is valid")
                .progress_chars("=> "),
        );
        Self {
            bar,
            failures: Mutex::new(Vec::new()),
        }
    }

    /// Clears the bar and returns the failure lines printed during the run.
    pub fn finish(&self) -> Vec<String> {
        self.bar.finish_and_clear();
        self.failures.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

impl Report for Progress {
    fn point_started(&self, experiment: &str, point: &Point) {
        self.bar
            .set_message(format!("{experiment}: {}", point.label));
    }

    fn point_finished(&self, experiment: &str, point: &MeasuredPoint) {
        self.bar.inc(1);
        match &point.outcome {
            results::Outcome::Failed { reason, .. } => {
                let line = format!("{experiment}: {} failed: {reason}", point.point.label);
                self.bar.println(format!("warning: {line}"));
                if let Ok(mut f) = self.failures.lock() {
                    f.push(line);
                }
            }
            results::Outcome::Measured { .. } => {}
            // An answer about the device, said once, not counted as a failure.
            other => self.bar.println(format!(
                "note: {experiment}: {}: {}: {}",
                point.point.label,
                other.status(),
                guide::words::outcome_reason(other)
            )),
        }
    }

    fn point_kept(&self, _experiment: &str, _point: &MeasuredPoint) {
        self.bar.inc(1);
    }

    fn comparison_started(&self, experiment: &str, spec: &ComparisonSpec) {
        self.bar.set_message(format!(
            "{experiment}: timing {} against {} in pairs",
            spec.technique, spec.baseline
        ));
    }

    fn comparison_finished(&self, experiment: &str, comparison: &PairedComparison) {
        if let results::PairedOutcome::Failed { reason } = &comparison.outcome {
            let line = format!(
                "{experiment}: comparison {} failed: {reason}",
                comparison.spec.id
            );
            self.bar.println(format!("warning: {line}"));
            if let Ok(mut f) = self.failures.lock() {
                f.push(line);
            }
        }
    }

    fn experiment_finished(&self, record: &ExperimentRecord) -> std::io::Result<()> {
        let Some(experiment) = experiments::find(&record.experiment) else {
            return Ok(());
        };
        let analysis = experiment.analyse(&record.points, &record.comparisons, record.device.kind);
        let h = &analysis.headline;
        let time = h
            .timed_by
            .as_deref()
            .and_then(|id| results::paired::find(&record.comparisons, id))
            .map_or_else(
                || "not timed in pairs".to_string(),
                guide::words::paired::cost_phrase,
            );
        self.bar.println(format!(
            "{:<12} {}/{} points in {:.1} s; {}",
            record.experiment,
            record.points.len() - record.failed_points(),
            record.points.len(),
            record.wall_s,
            match h.memory_saved_bytes {
                Some(saved) => format!(
                    "saves {} ({}) of the {}, time per sample {time}",
                    results::format::bytes(saved),
                    results::format::pct(h.memory_saved_pct.unwrap_or(f64::NAN)),
                    h.peak
                        .as_ref()
                        .map_or_else(String::new, |t| guide::words::word(t, record)),
                ),
                None => format!("time {time}"),
            }
        ));
        Ok(())
    }
}
