//! What a technique concludes from its measured points: the index row, findings, predictions
//! beside measurements, fits, charts as data and published figures. A technique fills these
//! with [`crate::words::Text`] (what it says, unworded); the guide maps every text to its
//! words ([`MapText`]) when it renders.

use serde::{Deserialize, Serialize};

use crate::fit::LinearFit;
use crate::keys::CommonKey;
use crate::point::PointResult;
pub use crate::verdict::Correctness;
pub use crate::words::MapText;
use crate::words::Text;

/// One side of a headline comparison: the bytes it peaks at. Its time is not a side's: it is
/// measured as a comparison ([`crate::PairedComparison`]) and named by [`Headline::timed_by`].
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The peak the comparison is about (`step peak`, `peak above the input`).
    pub peak: Text,
    /// Its bytes.
    pub peak_bytes: f64,
}

impl Side {
    /// A point's step peak.
    pub fn step(result: &PointResult) -> Self {
        Self {
            peak: Text::said(CommonKey::StepPeak),
            peak_bytes: result.peak_bytes() as f64,
        }
    }

    /// A peak of the comparison's own choosing, named `peak`.
    pub fn with_peak(peak: impl Into<Text>, peak_bytes: f64) -> Self {
        Self {
            peak: peak.into(),
            peak_bytes,
        }
    }
}

/// The one-row summary of a technique for the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headline<S = String> {
    /// Which configurations the two figures below compare, in words.
    pub compared: S,
    /// Peak bytes saved by the technique (baseline minus technique; negative means it costs).
    pub memory_saved_bytes: Option<f64>,
    /// The same as a percentage of the baseline's peak.
    pub memory_saved_pct: Option<f64>,
    /// The id of the record's [`crate::PairedComparison`] that times this headline's two
    /// sides against each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_by: Option<String>,
    /// Verdict of the correctness checks.
    pub correctness: Correctness,
    /// One sentence on what the checks found.
    pub correctness_detail: S,
    /// The peak `memory_saved_bytes` is a reduction of (`step peak`); none where nothing was
    /// measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<S>,
    /// Which variant of the technique the row is, where a technique has several rows
    /// (`16-bit storage`); shown after the technique's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The fix the guide ranks that this row measures, where it is one: its verdict is then
    /// every check of that fix on the device, from whichever page made it
    /// ([`crate::Verdicts`]), not this row's alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<crate::verdict::Fix>,
}

impl Headline<Text> {
    /// The technique against its baseline: bytes saved (baseline minus technique) and the same
    /// as a percentage of the baseline's peak. Every technique's index row is computed here;
    /// its time comes from a paired comparison ([`Self::timed_by`]).
    pub fn versus(
        compared: impl Into<Text>,
        baseline: Side,
        technique: Side,
        correctness: Correctness,
        correctness_detail: impl Into<Text>,
    ) -> Self {
        let saved = baseline.peak_bytes - technique.peak_bytes;
        Self {
            compared: compared.into(),
            memory_saved_bytes: Some(saved),
            memory_saved_pct: Some(saved / baseline.peak_bytes * 100.0),
            timed_by: None,
            correctness,
            correctness_detail: correctness_detail.into(),
            peak: Some(baseline.peak),
            variant: None,
            fix: None,
        }
    }
}

impl<S> Headline<S> {
    /// The row is variant `name` of its technique.
    pub fn variant(mut self, name: &str) -> Self {
        self.variant = Some(name.into());
        self
    }

    /// The row measures the ranked fix `fix`.
    pub fn of_fix(mut self, fix: crate::verdict::Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    /// This headline's time is the paired comparison `id` of the same record.
    pub fn timed_by(mut self, id: &str) -> Self {
        self.timed_by = Some(id.into());
        self
    }
}

/// Axis scale of a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Powers of two evenly spaced (batch sizes, depths).
    Log2,
    /// Evenly spaced counts in order (rounds, steps): linear however far they reach, where
    /// [`Scale::Linear`] gives way to a log axis over more than a decade.
    Counted,
}

/// What an axis's values count. Bytes and seconds are kept in base units and labelled without
/// their unit: the guide picks the unit they read best in (KiB, MiB, GiB; µs, ms, s) and adds it
/// to the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AxisUnit {
    /// Numbers as they are, their unit in the label (`throughput (tokens/s)`, `step`).
    #[default]
    Given,
    /// Bytes.
    Bytes,
    /// Seconds.
    Seconds,
}

/// One measured value on a chart, with its spread where it has one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartPoint {
    /// Position on the x axis.
    #[serde(deserialize_with = "crate::point::nan_map::number")]
    pub x: f64,
    /// Position on the y axis (`null` in JSON, read back as NaN, where it is not finite).
    #[serde(deserialize_with = "crate::point::nan_map::number")]
    pub y: f64,
    /// Lower end of the spread (e.g. the fastest repeat), drawn as an error bar.
    pub y_low: Option<f64>,
    /// Upper end of the spread.
    pub y_high: Option<f64>,
}

/// A named line on a chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series<S = String> {
    /// Legend entry.
    pub name: S,
    /// Points in x order.
    pub points: Vec<ChartPoint>,
    /// Drawn dashed without markers: a prediction or a fit rather than a measurement.
    pub predicted: bool,
    /// Points of the series marked with a large marker in its colour (a timeline's peak).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marked: Vec<ChartPoint>,
    /// Drawn as a shaded band between each point's `y_low` and `y_high` (an interval), with
    /// its `y` as a line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub band: bool,
}

impl<S> Series<S> {
    /// A series of plain `(x, y)` points, without spread.
    pub fn line(name: impl Into<S>, predicted: bool, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            predicted,
            points: points
                .into_iter()
                .map(|(x, y)| ChartPoint {
                    x,
                    y,
                    y_low: None,
                    y_high: None,
                })
                .collect(),
            marked: Vec::new(),
            band: false,
        }
    }

    /// An interval as a band: at each `(x, y, low, high)`, `y` drawn as a dashed line and the
    /// band shaded from `low` to `high`.
    pub fn band(name: impl Into<S>, points: Vec<(f64, f64, f64, f64)>) -> Self {
        Self {
            name: name.into(),
            predicted: true,
            points: points
                .into_iter()
                .map(|(x, y, low, high)| ChartPoint {
                    x,
                    y,
                    y_low: Some(low),
                    y_high: Some(high),
                })
                .collect(),
            marked: Vec::new(),
            band: true,
        }
    }

    /// The series with `(x, y)` marked (its peak).
    pub fn with_marked(mut self, (x, y): (f64, f64)) -> Self {
        self.marked.push(ChartPoint {
            x,
            y,
            y_low: None,
            y_high: None,
        });
        self
    }

    /// Throughput of measured points with the fastest and slowest repeat as the spread.
    pub fn throughput<'a>(
        name: impl Into<S>,
        points: impl IntoIterator<Item = (f64, &'a PointResult)>,
    ) -> Self {
        Self {
            name: name.into(),
            predicted: false,
            points: points
                .into_iter()
                .map(|(x, r)| {
                    let samples = r.samples_per_step as f64;
                    ChartPoint {
                        x,
                        y: r.samples_per_s,
                        y_low: Some(samples / r.step.max_s),
                        y_high: Some(samples / r.step.min_s),
                    }
                })
                .collect(),
            marked: Vec::new(),
            band: false,
        }
    }
}

/// A chart as data; the guide turns it into SVG.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chart<S = String> {
    /// Anchor and file name (`peak-vs-batch`).
    pub id: String,
    /// Title drawn above the chart.
    pub title: S,
    /// x-axis label: with its unit where [`Chart::x_unit`] is [`AxisUnit::Given`], without it
    /// otherwise.
    pub x_label: S,
    /// y-axis label, as the x axis's.
    pub y_label: S,
    /// What the x values count.
    #[serde(default)]
    pub x_unit: AxisUnit,
    /// What the y values count.
    #[serde(default)]
    pub y_unit: AxisUnit,
    /// x-axis scale.
    pub x_scale: Scale,
    /// Where the x axis is a set of categories (precisions), their names: x = 1 is the first.
    /// Drawn as markers without connecting lines. Empty for a numeric axis (and in records made
    /// before it existed, which drew categories as numbered codes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// The lines.
    pub series: Vec<Series<S>>,
}

impl<S> Chart<S> {
    /// A chart `id` titled `title`, its axes labelled; numbers as given on a linear x axis, no
    /// categories and no series until the builder's calls below add them.
    pub fn new(
        id: impl Into<String>,
        title: impl Into<S>,
        x_label: impl Into<S>,
        y_label: impl Into<S>,
    ) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_unit: AxisUnit::Given,
            y_unit: AxisUnit::Given,
            x_scale: Scale::Linear,
            categories: Vec::new(),
            series: Vec::new(),
        }
    }

    /// The x axis counts `unit` on `scale`.
    pub fn x(mut self, unit: AxisUnit, scale: Scale) -> Self {
        self.x_unit = unit;
        self.x_scale = scale;
        self
    }

    /// The y axis counts `unit`.
    pub fn y(mut self, unit: AxisUnit) -> Self {
        self.y_unit = unit;
        self
    }

    /// The x axis is these categories (x = 1 is the first).
    pub fn categories(mut self, names: Vec<String>) -> Self {
        self.categories = names;
        self
    }

    /// Adds the lines `series`.
    pub fn series(mut self, series: impl IntoIterator<Item = Series<S>>) -> Self {
        self.series.extend(series);
        self
    }
}

/// A figure predicted from shapes and dtypes, beside the measured one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison<S = String> {
    /// What is compared (`Adam state`, `activations per sample`).
    pub quantity: S,
    /// The prediction, in bytes.
    pub predicted_bytes: f64,
    /// The measurement, in bytes: on a backend whose peaks are bracketed, the bracket's lower
    /// bound.
    pub measured_bytes: f64,
    /// Where the measurement is a bracket (a peak on CubeCL: see [`crate::PeakBracket`]), its
    /// upper bound; the prediction is met anywhere between the two bounds. Absent in records
    /// before it existed and wherever the measurement is exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_upper_bytes: Option<f64>,
    /// How the prediction was made, and why it may differ.
    pub note: S,
    /// The estimator's precision regime of a step peak (`f32`, `bf16`, `mixed-bf16`): the
    /// "fits" margin that covers its error. None for any other prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime: Option<String>,
}

impl<S> Comparison<S> {
    /// An exact measurement beside its prediction.
    pub fn new(
        quantity: impl Into<S>,
        predicted_bytes: f64,
        measured_bytes: f64,
        note: impl Into<S>,
    ) -> Self {
        Self {
            quantity: quantity.into(),
            predicted_bytes,
            measured_bytes,
            measured_upper_bytes: None,
            note: note.into(),
            regime: None,
        }
    }

    /// The same comparison as a step peak in the estimator's precision `regime`.
    pub fn in_regime(mut self, regime: &str) -> Self {
        self.regime = Some(regime.to_string());
        self
    }

    /// The same comparison with the measurement read as a bracket up to `upper_bytes` (none:
    /// exact, as before).
    pub fn bracketed(mut self, upper_bytes: Option<f64>) -> Self {
        self.measured_upper_bytes = upper_bytes;
        self
    }

    /// The measured figure nearest the prediction: the measurement where it is exact; within a
    /// bracket, the prediction itself where it lies inside, else the nearer bound.
    pub fn nearest_measured_bytes(&self) -> f64 {
        match self.measured_upper_bytes {
            Some(upper) => self
                .predicted_bytes
                .clamp(self.measured_bytes, upper.max(self.measured_bytes)),
            None => self.measured_bytes,
        }
    }

    /// Whether the prediction lies inside a bracketed measurement.
    pub fn inside_bracket(&self) -> bool {
        self.measured_upper_bytes.is_some() && self.nearest_measured_bytes() == self.predicted_bytes
    }

    /// The measured minus the predicted, relative to the prediction, in percent (NaN where
    /// the prediction is zero), from the measured figure nearest the prediction.
    pub fn miss_pct(&self) -> f64 {
        crate::format::diff_pct(self.predicted_bytes, self.nearest_measured_bytes())
    }

    /// The prediction's error relative to the measurement, in percent: positive where the
    /// prediction is too high (0 inside a bracket; NaN where the measurement is zero). This is
    /// how an estimate is read: "12% high".
    pub fn error_pct(&self) -> f64 {
        crate::format::diff_pct(self.nearest_measured_bytes(), self.predicted_bytes)
    }
}

/// How far a set of predictions missed their measurements: the estimator's error over a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorSummary {
    /// Predictions with a finite error.
    pub count: usize,
    /// Of them, those within `WITHIN_PCT` (or inside their bracket).
    pub within: usize,
    /// Of them, those below the measurement: the way that makes a "fits" answer run out.
    pub under: usize,
    /// The median of the errors' absolute values, in percent.
    pub median_abs_pct: f64,
    /// The error of largest absolute value, signed, in percent.
    pub worst_pct: f64,
    /// What the worst prediction was of.
    pub worst_quantity: String,
}

impl ErrorSummary {
    /// The error the guide aims under for a step peak, in percent.
    pub const WITHIN_PCT: f64 = 10.0;

    /// The summary of `comparisons`' errors ([`Comparison::error_pct`]); none where no error is
    /// finite.
    pub fn of<'a>(comparisons: impl IntoIterator<Item = &'a Comparison>) -> Option<Self> {
        let errors: Vec<(f64, &str)> = comparisons
            .into_iter()
            .map(|c| (c.error_pct(), c.quantity.as_str()))
            .filter(|(e, _)| e.is_finite())
            .collect();
        let (worst_pct, worst_quantity) = errors
            .iter()
            .copied()
            .max_by(|a, b| a.0.abs().total_cmp(&b.0.abs()))?;
        let abs: Vec<f64> = errors.iter().map(|(e, _)| e.abs()).collect();
        Some(Self {
            count: errors.len(),
            within: abs.iter().filter(|e| **e <= Self::WITHIN_PCT).count(),
            under: errors.iter().filter(|(e, _)| *e < 0.0).count(),
            median_abs_pct: crate::timing::median(&abs),
            worst_pct,
            worst_quantity: worst_quantity.to_string(),
        })
    }
}

/// A fitted line reported on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportedFit<S = String> {
    /// What was fitted, with units (`forward activation bytes against batch size`).
    pub what: S,
    /// The fit.
    pub fit: LinearFit,
}

/// A published figure on the same technique, set beside ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedFigure<S = String> {
    /// Who published it, and where.
    pub source: S,
    /// What they report.
    pub claim: S,
    /// Our figure on the same question, from this run, in words.
    pub ours: S,
}

/// Everything a technique concludes from its measured points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis<S = String> {
    /// The index row.
    pub headline: Headline<S>,
    /// Further index rows under the first (another variant of the technique people also use).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secondary_headlines: Vec<Headline<S>>,
    /// Sentences stating what the measurements show, each quoting its figures.
    pub findings: Vec<S>,
    /// Predictions beside measurements.
    pub comparisons: Vec<Comparison<S>>,
    /// Fitted lines.
    pub fits: Vec<ReportedFit<S>>,
    /// Charts, as data.
    pub charts: Vec<Chart<S>>,
    /// Published figures beside ours.
    pub published: Vec<PublishedFigure<S>>,
    /// Every fix on one workload, on one base (the technique that measures them all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_table: Option<crate::fix_table::FixTable<S>>,
    /// The checks this record makes of the fixes the guide ranks: every page that states a
    /// fix's verdict reads them all, whichever record made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fix_checks: Vec<crate::verdict::FixCheck>,
    /// Bytes held at one moment split by what holds them (a step's peak by the code that made
    /// each block), drawn as a stacked bar and its table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakdowns: Vec<Breakdown<S>>,
}

/// What one part of a [`Breakdown`] is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BreakdownPart {
    /// Named by the measurement itself (where its bytes were made:
    /// `Block::forward › Linear::forward · matmul (forward)`), not by the guide.
    Named(String),
    /// The named parts not shown one by one, this many.
    Others(u64),
    /// Allocations under the recorder's threshold.
    UnderThreshold,
    /// What the process held before the recording began.
    BeforeRecording,
}

/// One part of a [`Breakdown`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakdownRow {
    /// What holds the bytes.
    pub part: BreakdownPart,
    /// Bytes it holds.
    pub bytes: f64,
    /// Blocks it holds (0 where not counted).
    pub blocks: u64,
}

/// Bytes held at one moment split into parts that add up to `total_bytes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breakdown<S = String> {
    /// Anchor.
    pub id: String,
    /// Title.
    pub title: S,
    /// What the bar shows, in a sentence under it.
    pub note: S,
    /// The bytes the rows add up to.
    pub total_bytes: f64,
    /// The parts, largest first, the rest last.
    pub rows: Vec<BreakdownRow>,
}

impl<S> Analysis<S> {
    /// An analysis whose index row is `headline`, with nothing else yet: the builder's calls
    /// below add the rest.
    pub fn new(headline: Headline<S>) -> Self {
        Self {
            headline,
            secondary_headlines: Vec::new(),
            findings: Vec::new(),
            comparisons: Vec::new(),
            fits: Vec::new(),
            charts: Vec::new(),
            published: Vec::new(),
            fix_table: None,
            fix_checks: Vec::new(),
            breakdowns: Vec::new(),
        }
    }

    /// Adds stacked bars.
    pub fn breakdowns(mut self, breakdowns: impl IntoIterator<Item = Breakdown<S>>) -> Self {
        self.breakdowns.extend(breakdowns);
        self
    }

    /// Adds further index rows.
    pub fn secondary(mut self, headlines: impl IntoIterator<Item = Headline<S>>) -> Self {
        self.secondary_headlines.extend(headlines);
        self
    }

    /// Adds findings.
    pub fn findings(mut self, findings: impl IntoIterator<Item = S>) -> Self {
        self.findings.extend(findings);
        self
    }

    /// Adds predictions beside measurements.
    pub fn comparisons(mut self, comparisons: impl IntoIterator<Item = Comparison<S>>) -> Self {
        self.comparisons.extend(comparisons);
        self
    }

    /// Adds fitted lines.
    pub fn fits(mut self, fits: impl IntoIterator<Item = ReportedFit<S>>) -> Self {
        self.fits.extend(fits);
        self
    }

    /// Adds charts.
    pub fn charts(mut self, charts: impl IntoIterator<Item = Chart<S>>) -> Self {
        self.charts.extend(charts);
        self
    }

    /// Adds published figures.
    pub fn published(mut self, published: impl IntoIterator<Item = PublishedFigure<S>>) -> Self {
        self.published.extend(published);
        self
    }

    /// The table of every fix on one workload.
    pub fn fix_table(mut self, table: crate::fix_table::FixTable<S>) -> Self {
        self.fix_table = Some(table);
        self
    }

    /// Adds the checks that judged a fix the guide ranks.
    pub fn fix_checks(
        mut self,
        checks: impl IntoIterator<Item = crate::verdict::FixCheck>,
    ) -> Self {
        self.fix_checks.extend(checks);
        self
    }
}

impl Analysis<Text> {
    /// The analysis of an experiment none of whose points was measured.
    pub fn unmeasured(correctness: Correctness) -> Self {
        Self {
            headline: Headline {
                compared: Text::said(CommonKey::NoPointMeasured),
                memory_saved_bytes: None,
                memory_saved_pct: None,
                timed_by: None,
                correctness,
                correctness_detail: Text::said(CommonKey::NoMeasurement),
                peak: None,
                variant: None,
                fix: None,
            },
            secondary_headlines: vec![],
            findings: vec![],
            comparisons: vec![],
            fits: vec![],
            charts: vec![],
            published: vec![],
            fix_table: None,
            fix_checks: vec![],
            breakdowns: vec![],
        }
    }
}

impl<S> MapText<S> for Headline<S> {
    type Out<T> = Headline<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> Headline<T> {
        Headline {
            compared: word(&self.compared),
            memory_saved_bytes: self.memory_saved_bytes,
            memory_saved_pct: self.memory_saved_pct,
            timed_by: self.timed_by.clone(),
            correctness: self.correctness,
            correctness_detail: word(&self.correctness_detail),
            peak: self.peak.as_ref().map(&mut *word),
            variant: self.variant.clone(),
            fix: self.fix,
        }
    }
}

impl<S> MapText<S> for Series<S> {
    type Out<T> = Series<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> Series<T> {
        Series {
            name: word(&self.name),
            points: self.points.clone(),
            predicted: self.predicted,
            marked: self.marked.clone(),
            band: self.band,
        }
    }
}

impl<S> MapText<S> for Chart<S> {
    type Out<T> = Chart<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> Chart<T> {
        Chart {
            id: self.id.clone(),
            title: word(&self.title),
            x_label: word(&self.x_label),
            y_label: word(&self.y_label),
            x_unit: self.x_unit,
            y_unit: self.y_unit,
            x_scale: self.x_scale,
            categories: self.categories.clone(),
            series: self.series.iter().map(|s| s.map_text(word)).collect(),
        }
    }
}

impl<S> MapText<S> for Comparison<S> {
    type Out<T> = Comparison<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> Comparison<T> {
        Comparison {
            quantity: word(&self.quantity),
            predicted_bytes: self.predicted_bytes,
            measured_bytes: self.measured_bytes,
            measured_upper_bytes: self.measured_upper_bytes,
            note: word(&self.note),
            regime: self.regime.clone(),
        }
    }
}

impl<S> MapText<S> for ReportedFit<S> {
    type Out<T> = ReportedFit<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> ReportedFit<T> {
        ReportedFit {
            what: word(&self.what),
            fit: self.fit.clone(),
        }
    }
}

impl<S> MapText<S> for PublishedFigure<S> {
    type Out<T> = PublishedFigure<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> PublishedFigure<T> {
        PublishedFigure {
            source: word(&self.source),
            claim: word(&self.claim),
            ours: word(&self.ours),
        }
    }
}

impl<S> MapText<S> for Analysis<S> {
    type Out<T> = Analysis<T>;
    fn map_text<T>(&self, word: &mut impl FnMut(&S) -> T) -> Analysis<T> {
        Analysis {
            headline: self.headline.map_text(word),
            secondary_headlines: self
                .secondary_headlines
                .iter()
                .map(|h| h.map_text(word))
                .collect(),
            findings: self.findings.iter().map(&mut *word).collect(),
            comparisons: self.comparisons.iter().map(|c| c.map_text(word)).collect(),
            fits: self.fits.iter().map(|f| f.map_text(word)).collect(),
            charts: self.charts.iter().map(|c| c.map_text(word)).collect(),
            published: self.published.iter().map(|p| p.map_text(word)).collect(),
            fix_table: self.fix_table.as_ref().map(|t| t.map_text(word)),
            fix_checks: self.fix_checks.clone(),
            breakdowns: self
                .breakdowns
                .iter()
                .map(|b| Breakdown {
                    id: b.id.clone(),
                    title: word(&b.title),
                    note: word(&b.note),
                    total_bytes: b.total_bytes,
                    rows: b.rows.clone(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versus_saves_against_the_baseline() {
        let h = Headline::versus(
            CommonKey::Number,
            Side::with_peak(CommonKey::StepPeak, 200.0),
            Side::with_peak(CommonKey::StepPeak, 150.0),
            Correctness::Passed,
            CommonKey::Number,
        )
        .timed_by("headline");
        assert_eq!(h.memory_saved_bytes, Some(50.0));
        assert_eq!(h.memory_saved_pct, Some(25.0));
        assert_eq!(h.timed_by.as_deref(), Some("headline"));
        assert_eq!(h.peak, Some(Text::said(CommonKey::StepPeak)));
    }
}

#[cfg(test)]
mod chart_point_tests {
    use super::ChartPoint;

    #[test]
    fn a_chart_point_of_a_diverged_loss_reads_back_as_nan() {
        let p = ChartPoint {
            x: 9.0,
            y: f64::NAN,
            y_low: None,
            y_high: None,
        };
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains("\"y\":null"), "{json}");
        let back: ChartPoint = serde_json::from_str(&json).unwrap();
        assert_eq!(back.x, 9.0);
        assert!(back.y.is_nan());
    }
}

#[cfg(test)]
mod error_summary_tests {
    use super::{Comparison, ErrorSummary};

    #[test]
    fn the_summary_reads_errors_against_the_measurement_and_a_bracket_as_met() {
        let high = Comparison::new("high", 110.0, 100.0, "");
        let low = Comparison::new("low", 95.0, 100.0, "");
        let inside = Comparison::new("inside", 120.0, 100.0, "").bracketed(Some(130.0));
        let above = Comparison::new("above", 150.0, 100.0, "").bracketed(Some(125.0));
        assert_eq!(high.error_pct(), 10.0);
        assert_eq!(inside.error_pct(), 0.0);
        assert_eq!(above.error_pct(), 20.0);
        let s = ErrorSummary::of([&high, &low, &inside, &above]).unwrap();
        assert_eq!(s.count, 4);
        assert_eq!(s.within, 3);
        assert_eq!(s.median_abs_pct, 7.5);
        assert_eq!(s.worst_pct, 20.0);
        assert_eq!(s.worst_quantity, "above");
        assert!(ErrorSummary::of([]).is_none());
    }
}
