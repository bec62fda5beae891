//! The guide: records in, a static site out (HTML from embedded minijinja templates, SVG charts,
//! the raw JSON, one CSS file). It makes no network request and works from `file://`.
//!
//! It depends on the `results` schema alone, never on Burn: every page is rendered from analysed
//! records (`results::Analysed`: a record's measurements and what its technique derives from
//! them when the guide is rendered), so that a change of wording is a re-render. [`words`] holds
//! every sentence (a technique's analysis says keys and figures), [`context`] turns records into
//! view models of plain strings, [`charts`] draws a chart's data as SVG, and [`HtmlRenderer`]
//! writes the files.

pub mod changes;
pub mod charts;
pub mod claims;
pub mod context;
pub mod csv_export;
pub mod fix_order;
pub mod glossary;
pub mod index_row;
pub mod probe;
pub mod recommend;
pub mod runs;
pub mod verdicts;
pub mod what_fits;
pub mod words;
pub mod workload_table;

use std::path::Path;

use minijinja::Environment;

use context::SiteContext;
use results::{Analysed, AnalysedCapacity, Text};
use words::pages::{footer, Provenance};

const BASE: &str = include_str!("templates/base.html");
const INDEX: &str = include_str!("templates/index.html");
const EXPERIMENT: &str = include_str!("templates/experiment.html");
const WHAT_FITS: &str = include_str!("templates/what_fits.html");
const RUNS: &str = include_str!("templates/runs.html");
const CHANGES: &str = include_str!("templates/changes.html");
const CELLS: &str = include_str!("templates/cells.html");
const GLOSSARY: &str = include_str!("templates/glossary.html");
const STYLE: &str = include_str!("templates/style.css");

/// Errors while writing the site.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A template failed to render.
    #[error("template error: {0}")]
    Template(#[from] minijinja::Error),
    /// A chart failed to draw.
    #[error(transparent)]
    Chart(#[from] charts::ChartError),
    /// A record's points could not be written as CSV.
    #[error("cannot write a CSV: {0}")]
    Csv(#[from] csv::Error),
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// What was being written.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Turns records into files under a folder.
pub trait Renderer {
    /// Writes the rendering of `records` (their analyses worded by [`words`]), and of
    /// `capacity` where given, into `out` (an existing, empty folder).
    fn render(
        &self,
        records: &[Analysed<Text>],
        capacity: Option<&AnalysedCapacity>,
        out: &Path,
    ) -> Result<(), RenderError>;
}

/// The HTML guide.
#[derive(Debug, Default)]
pub struct HtmlRenderer;

fn write(path: &Path, contents: &str) -> Result<(), RenderError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| RenderError::Io {
            path: parent.display().to_string(),
            source,
        })?;
    }
    std::fs::write(path, contents).map_err(|source| RenderError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The template environment, with every template embedded.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    for (name, source) in [
        ("base.html", BASE),
        ("index.html", INDEX),
        ("experiment.html", EXPERIMENT),
        ("what_fits.html", WHAT_FITS),
        ("runs.html", RUNS),
        ("changes.html", CHANGES),
        ("cells.html", CELLS),
        ("glossary.html", GLOSSARY),
    ] {
        env.add_template(name, source)
            .expect("embedded templates parse");
    }
    env
}

/// The page with the first use of each glossary term in its `<main>` linked to its entry.
fn with_terms(html: String) -> String {
    match (html.find("<main>"), html.rfind("</main>")) {
        (Some(start), Some(end)) if start < end => {
            let inner = start + "<main>".len();
            format!(
                "{}{}{}",
                &html[..inner],
                glossary::link_first_uses(&html[inner..end]),
                &html[end..]
            )
        }
        _ => html,
    }
}

impl HtmlRenderer {
    /// Renders the index page to a string.
    pub fn index_html(&self, context: &SiteContext) -> Result<String, RenderError> {
        Ok(with_terms(
            environment().get_template("index.html")?.render(
                minijinja::context! { site => context, page_title => "Burn VRAM workbench", footer => footer(Provenance::Landing) },
            )?,
        ))
    }

    /// Renders the glossary page to a string.
    pub fn glossary_html(&self, context: &SiteContext) -> Result<String, RenderError> {
        Ok(environment()
            .get_template("glossary.html")?
            .render(minijinja::context! {
                site => context, glossary_page => true, page_title => "Glossary",
                footer => footer(Provenance::Definitions),
                terms => glossary::TERMS,
            })?)
    }

    /// Renders the "What fits" page to a string (the context must hold it).
    pub fn what_fits_html(&self, context: &SiteContext) -> Result<String, RenderError> {
        Ok(with_terms(environment().get_template("what_fits.html")?.render(
            minijinja::context! { site => context, what_fits_page => true, page_title => "What fits, and when to move to a bigger GPU", footer => footer(Provenance::Estimates) },
        )?))
    }

    /// Renders the "Runs" page to a string.
    pub fn runs_html(&self, context: &SiteContext) -> Result<String, RenderError> {
        Ok(with_terms(environment().get_template("runs.html")?.render(
            minijinja::context! { site => context, runs_page => true, page_title => "Runs: where each result set was measured", footer => footer(Provenance::Runs) },
        )?))
    }

    /// Renders the "Changes" page to a string (the context must hold it).
    pub fn changes_html(&self, context: &SiteContext) -> Result<String, RenderError> {
        let title = context.changes.as_ref().map(|c| c.title.as_str());
        Ok(with_terms(environment().get_template("changes.html")?.render(
            minijinja::context! { site => context, changes => &context.changes, runs_page => true, page_title => title.unwrap_or("Changes against a baseline"), footer => footer(Provenance::Runs) },
        )?))
    }

    /// Renders one experiment's page to a string.
    pub fn experiment_html(
        &self,
        context: &SiteContext,
        index: usize,
    ) -> Result<String, RenderError> {
        let page = &context.pages[index];
        Ok(with_terms(
            environment().get_template("experiment.html")?.render(
                minijinja::context! { site => context, page => page, page_title => &page.title, footer => footer(Provenance::Technique) },
            )?,
        ))
    }
}

impl Renderer for HtmlRenderer {
    fn render(
        &self,
        records: &[Analysed<Text>],
        capacity: Option<&AnalysedCapacity>,
        out: &Path,
    ) -> Result<(), RenderError> {
        self.render_against(records, capacity, None, out)
    }
}

impl HtmlRenderer {
    /// [`Renderer::render`], with the "Changes" page of `baseline` (this guide's sets against
    /// a baseline's) where given, linked from the "Runs" page.
    pub fn render_against(
        &self,
        records: &[Analysed<Text>],
        capacity: Option<&AnalysedCapacity>,
        baseline: Option<&results::diff::SetDiff>,
        out: &Path,
    ) -> Result<(), RenderError> {
        let records = &words::all(records);
        let mut context = SiteContext::new(records, capacity);
        context.changes = baseline.map(changes::ChangesPage::of);
        if context.changes.is_some() {
            write(&out.join(changes::HREF), &self.changes_html(&context)?)?;
        }
        write(&out.join("style.css"), STYLE)?;
        write(&out.join("index.html"), &self.index_html(&context)?)?;
        write(&out.join(runs::HREF), &self.runs_html(&context)?)?;
        write(&out.join(glossary::HREF), &self.glossary_html(&context)?)?;
        for record in records {
            for chart in &context::record_charts(record) {
                let svg = charts::render_svg(chart)?;
                write(&out.join(context::chart_file(record, &chart.id)), &svg)?;
                let narrow = charts::render_svg_in(chart, &charts::NARROW)?;
                write(
                    &out.join(context::narrow_chart_file(record, &chart.id)),
                    &narrow,
                )?;
            }
            write(&out.join(record.data_path()), &record.to_json())?;
            write(
                &out.join(context::csv_path(record)),
                &csv_export::points_csv(record)?,
            )?;
        }
        for (i, page) in context.pages.iter().enumerate() {
            write(&out.join(&page.href), &self.experiment_html(&context, i)?)?;
        }
        if let (Some(record), Some(page)) = (capacity, &context.what_fits) {
            write(&out.join(&page.href), &self.what_fits_html(&context)?)?;
            write(&out.join(&page.json_href), &record.record.to_json())?;
        }
        Ok(())
    }
}
