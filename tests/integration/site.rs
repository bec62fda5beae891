//! Snapshots of the rendered `<main>` of every page, from the committed fixture records.

use guide::context::SiteContext;
use guide::{HtmlRenderer, Renderer};
use results::record::load_dir;

use crate::main_element;

#[test]
fn index_main() {
    let records = crate::fixture_pages();
    let html = crate::without_terms(
        &HtmlRenderer
            .index_html(&SiteContext::new(&records, None))
            .unwrap(),
    );
    insta::assert_snapshot!("index_main", main_element(&html));
}

#[test]
fn experiment_pages_main() {
    let records = crate::fixture_pages();
    let context = SiteContext::new(&records, None);
    for (i, page) in context.pages.iter().enumerate() {
        let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, i).unwrap());
        insta::assert_snapshot!(format!("page_{}_main", page.id), main_element(&html));
    }
}

#[test]
fn failed_points_are_shown_with_their_stderr() {
    let mut records = load_dir(&crate::fixtures()).unwrap();
    // In the guide's order, so that records[0] is the first page.
    records.sort_by_key(|r| results::TechniqueId::from_id(&r.experiment).map(|t| t.position()));
    let record = &mut records[0];
    record.points[0].outcome = results::Outcome::Failed {
        reason: "the child was killed by signal 9".into(),
        stderr_tail: "memory allocation of 17179869184 bytes failed".into(),
    };
    let context = SiteContext::new(&crate::worded(records.clone()), None);
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, 0).unwrap());
    assert!(html.contains("Points without a result"));
    assert!(html.contains("(failed): the child was killed by signal 9"));
    assert!(html.contains("memory allocation of 17179869184 bytes failed"));
    let index = crate::without_terms(&HtmlRenderer.index_html(&context).unwrap());
    assert!(index.contains("1 failed points"));

    // Not supported and out of memory are answers: shown with what happened, not counted as
    // failures.
    record_answers(&mut records);
    let context = SiteContext::new(&crate::worded(records.clone()), None);
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, 0).unwrap());
    assert!(html.contains("(not supported on this device): the device has no bf16"));
    assert!(html.contains("(out of memory): memory allocation of 99 bytes failed (asked for 99 B)"));
    assert!(html.contains("Out of memory at 1 of"));
    assert!(html.contains("the technique stops fitting on this device at"));
    assert!(html.contains("(the first in the order run, asking for 99 B)"));
    let index = crate::without_terms(&HtmlRenderer.index_html(&context).unwrap());
    assert!(!index.contains("failed points"), "answers are not failures");
    // An interrupted record says so on its page and in the index.
    records[0].incomplete = Some("interrupted by SIGINT after 1 of 8 points".into());
    let context = SiteContext::new(&crate::worded(records.clone()), None);
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, 0).unwrap());
    assert!(html.contains("Incomplete:</strong> interrupted by SIGINT after 1 of 8 points"));
    assert!(
        crate::without_terms(&HtmlRenderer.index_html(&context).unwrap())
            .contains("(incomplete: interrupted)")
    );
    // A resumed record says which points came from which run, and what was measured again.
    records[0].incomplete = None;
    let kept = records[0].points[2].point.id.clone();
    records[0].resumed = Some(results::Resumed {
        run_started_at: "2026-12-02T11:00:00Z".into(),
        kept: vec![results::KeptFromRun {
            run_started_at: "2026-12-02T10:00:00Z".into(),
            git_commit: "0123456789abcdef".into(),
            points: vec![kept.clone()],
            comparisons: Vec::new(),
        }],
        measured_again: vec![results::MeasuredAgain {
            id: "other".into(),
            reason: "its configuration has changed".into(),
        }],
    });
    let context = SiteContext::new(&crate::worded(records.clone()), None);
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, 0).unwrap());
    assert!(html.contains(&format!(
        "Kept from the earlier run started 2026-12-02T10:00:00Z (commit 0123456): 1 point(s) \
         ({kept})"
    )));
    assert!(html.contains("Measured by the resumed run started 2026-12-02T11:00:00Z"));
    assert!(html.contains(
        "Measured again, not kept from the journal: other (its configuration has changed)"
    ));
    assert!(html.contains("in the resumed run; what it kept took its time in the earlier run"));
    // A record the resumed run kept whole says it measured nothing more, not "the other 0".
    let all: Vec<String> = records[0]
        .points
        .iter()
        .map(|p| p.point.id.clone())
        .collect();
    let comparisons: Vec<String> = records[0]
        .comparisons
        .iter()
        .map(|c| c.spec.id.clone())
        .collect();
    if let Some(resumed) = records[0].resumed.as_mut() {
        resumed.kept[0].points = all;
        resumed.kept[0].comparisons = comparisons;
        resumed.measured_again.clear();
    }
    let context = SiteContext::new(&crate::worded(records.clone()), None);
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, 0).unwrap());
    assert!(html.contains(
        "The resumed run started 2026-12-02T11:00:00Z measured nothing more here: all of it was kept."
    ));
    assert!(!html.contains("Measured by the resumed run"));
}

fn record_answers(records: &mut [results::ExperimentRecord]) {
    let record = &mut records[0];
    record.points[0].outcome = results::Outcome::Unsupported {
        lacks: "bf16".into(),
    };
    record.points[1].outcome = results::Outcome::OutOfMemory {
        reason: "memory allocation of 99 bytes failed".into(),
        requested_bytes: Some(99),
        stderr_tail: String::new(),
    };
}

#[test]
fn pages_make_no_network_request() {
    let records = crate::fixture_pages();
    let context = SiteContext::new(&records, None);
    let mut pages = vec![crate::without_terms(
        &HtmlRenderer.index_html(&context).unwrap(),
    )];
    for i in 0..context.pages.len() {
        pages.push(crate::without_terms(
            &HtmlRenderer.experiment_html(&context, i).unwrap(),
        ));
    }
    for html in pages {
        for attr in [
            "src=\"http",
            "href=\"http",
            "src=\"//",
            "href=\"//",
            "@import",
        ] {
            assert!(!html.contains(attr), "remote reference {attr}");
        }
    }
}

#[test]
fn a_device_result_set_sits_beside_the_cpu_one() {
    use guide::Renderer;
    use results::DeviceKind;

    let cpu = load_dir(&crate::fixtures()).unwrap();
    let mut device = cpu.clone();
    for record in &mut device {
        record.device.kind = DeviceKind::Wgpu;
        record.device.backend = DeviceKind::Wgpu.backend().into();
        record.device.identity = Some(results::DeviceIdentity {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            driver: None,
            total_memory_bytes: None,
            free_memory_bytes: None,
            software: true,
            cubecl: Some(results::CubeclSettings {
                autotune_level: "minimal".into(),
                autotune_cache: "/w/target".into(),
                kernel_cache: None,
            }),
        });
    }
    let mut both = cpu.clone();
    both.extend(device);
    let both = crate::analysed(both);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    HtmlRenderer.render(&both, None, &out).unwrap();

    let page = crate::without_terms(&std::fs::read_to_string(out.join("batch-size.html")).unwrap());
    assert!(page.contains("Measured on <strong>cpu (Flex"));
    assert!(page.contains("Measured on <strong>wgpu: llvmpipe"));
    assert!(page.contains("id=\"wgpu\""));
    // minijinja escapes the path's slashes (`&#x2f;`).
    assert!(page.contains("autotune level minimal, its results kept in &#x2f;w&#x2f;target"));
    assert!(out.join("data/batch-size.json").exists());
    assert!(out.join("data/wgpu/batch-size.json").exists());
    let batch_size = both.iter().find(|r| r.experiment == "batch-size").unwrap();
    let chart = &batch_size.analysis.charts[0].id;
    assert!(out.join(format!("charts/batch-size--{chart}.svg")).exists());
    assert!(out
        .join(format!("charts/batch-size--wgpu--{chart}.svg"))
        .exists());
    let index = crate::without_terms(&std::fs::read_to_string(out.join("index.html")).unwrap());
    assert!(index.contains("batch-size.html#wgpu"));

    // The written guide's data/ folder holds both sets: rendering it again gives the same pages.
    let again = crate::analysed(load_dir(&out.join("data")).unwrap());
    assert_eq!(again.len(), both.len());
    let out2 = dir.path().join("again");
    std::fs::create_dir(&out2).unwrap();
    HtmlRenderer.render(&again, None, &out2).unwrap();
    assert_eq!(
        page,
        crate::without_terms(&std::fs::read_to_string(out2.join("batch-size.html")).unwrap())
    );
}

#[test]
fn a_chart_with_nothing_measured_is_left_out_and_a_software_driver_is_named() {
    use guide::Renderer;
    use results::DeviceKind;

    let mut records = crate::fixture_analyses();
    let record = records
        .iter_mut()
        .find(|r| r.experiment == "checkpointing")
        .unwrap();
    // As on a software driver: no comparison timed, so the time-cost charts have no point.
    record.record.comparisons.clear();
    record.record.device.kind = DeviceKind::Wgpu;
    record.record.device.identity = Some(results::DeviceIdentity {
        name: "llvmpipe (LLVM 15.0.6, 256 bits) (Cpu, Vulkan)".into(),
        driver: None,
        total_memory_bytes: None,
        free_memory_bytes: None,
        software: true,
        cubecl: None,
    });
    for chart in record.analysis.charts.iter_mut() {
        if chart.id.starts_with("overhead") {
            for series in chart.series.iter_mut() {
                for point in series.points.iter_mut() {
                    point.y = f64::NAN;
                }
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    HtmlRenderer.render(&records, None, dir.path()).unwrap();
    let page = crate::without_terms(
        &std::fs::read_to_string(dir.path().join("checkpointing.html")).unwrap(),
    );
    assert!(!page.contains("overhead-vs-depth"));
    assert!(page.contains("a software driver&#x27;s times (on the CPU) are not a GPU&#x27;s"));
}

#[test]
fn training_pages_show_time_per_phase_against_the_calibration() {
    let records = crate::fixture_pages();
    let context = SiteContext::new(&records, None);
    let calibration = records
        .iter()
        .find(|r| r.experiment == "batch-size")
        .and_then(|r| r.calibration.as_ref())
        .expect("a run records its calibration");
    assert!(calibration.matmul_gflop_s > 0.0 && calibration.copy_gb_s > 0.0);
    let i = context
        .pages
        .iter()
        .position(|p| p.id == "batch-size")
        .unwrap();
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, i).unwrap());
    assert!(
        html.contains("<h3>Time per phase</h3>"),
        "no phase-time table"
    );
    for phase in ["forward", "backward", "optimizer"] {
        assert!(
            html.contains(&format!("<th>{phase}</th>")),
            "no {phase} column"
        );
    }
    assert!(html.contains("% of matmul)"), "no share of the matmul rate");
    // minijinja escapes the slash.
    let rate = format!("{:.1} GFLOP&#x2f;s", calibration.matmul_gflop_s);
    assert!(html.contains(&rate), "no calibration {rate}");
    // Where the phases come from: every training point's phase times sum to at most its step.
    for p in records.iter().flat_map(|r| &r.points) {
        // A point Burn refused (QLoRA) has no result.
        let Some(r) = p.result() else { continue };
        let phases: f64 = r.phase_times.iter().map(|t| t.timing.median_s).sum();
        assert!(
            phases <= r.step.median_s * 1.5,
            "{}: {phases} s of phases",
            p.point.id
        );
    }
}

/// The fixture folder's "What fits" record (a real `--quick` run: no `fit` searches), beside
/// the estimator's tables.
fn capacity_fixture() -> results::AnalysedCapacity {
    workbench::analyse::analyse_capacity(
        results::CapacityRecord::load(&crate::fixtures().join(results::CAPACITY_FILE)).unwrap(),
    )
}

#[test]
fn what_fits_main() {
    let records = crate::fixture_pages();
    let capacity = capacity_fixture();
    let context = SiteContext::new(&records, Some(&capacity));
    let html = crate::without_terms(&HtmlRenderer.what_fits_html(&context).unwrap());
    insta::assert_snapshot!("what_fits_main", main_element(&html));
}

#[test]
fn the_what_fits_page_is_linked_and_written_with_its_record() {
    let records = crate::fixture_analyses();
    let capacity = capacity_fixture();
    let dir = tempfile::tempdir().unwrap();
    HtmlRenderer
        .render(&records, Some(&capacity), dir.path())
        .unwrap();
    let page =
        crate::without_terms(&std::fs::read_to_string(dir.path().join("what-fits.html")).unwrap());
    for preset in [
        "mlp-8x1024",
        "gpt2-124m",
        "tinyllama-1.1b",
        "llama-2-7b",
        "llama-2-70b",
    ] {
        assert!(page.contains(&format!("id=\"{preset}\"")), "{preset}");
    }
    assert!(page.contains("does not fit"));
    assert!(page.contains("ZeRO-3"));
    // The 7B table: 16, 8 and 4 bits, in the guide's one unit.
    assert!(page.contains("12.55 GiB") && page.contains("6.28 GiB") && page.contains("3.14 GiB"));
    // A quick run measures no fit and says so.
    assert!(page.contains("Not measured in this run"));
    let index =
        crate::without_terms(&std::fs::read_to_string(dir.path().join("index.html")).unwrap());
    assert!(index.contains("href=\"what-fits.html\""));
    assert!(index.contains("The estimator&#x27;s step peak, set beside"));
    let back = results::CapacityRecord::load(&dir.path().join("data/what-fits.json")).unwrap();
    assert_eq!(back, capacity.record);
    // Without the record, no page and no link.
    let bare = tempfile::tempdir().unwrap();
    HtmlRenderer.render(&records, None, bare.path()).unwrap();
    assert!(!bare.path().join("what-fits.html").exists());
    let index =
        crate::without_terms(&std::fs::read_to_string(bare.path().join("index.html")).unwrap());
    assert!(!index.contains("what-fits.html"));
}

#[test]
fn every_training_page_sets_the_estimator_beside_its_steps() {
    let records = crate::fixture_pages();
    for id in [
        "batch-size",
        "accumulation",
        "mixed-precision",
        "checkpointing",
        "sequence-length",
    ] {
        let record = records.iter().find(|r| r.experiment == id).unwrap();
        assert!(!record.estimator.is_empty(), "{id}: no estimator rows");
        let summary = results::ErrorSummary::of(&record.estimator).unwrap();
        assert_eq!(summary.count, record.estimator.len(), "{id}");
        // Each row says what the estimator was asked and where the miss lies.
        for c in &record.estimator {
            assert!(c.note.starts_with("asked: batch "), "{id}: {}", c.note);
            assert!(
                c.note.contains("estimated less measured"),
                "{id}: {}",
                c.note
            );
        }
    }
    let context = SiteContext::new(&records, None);
    let i = context
        .pages
        .iter()
        .position(|p| p.id == "batch-size")
        .unwrap();
    let html = crate::without_terms(&HtmlRenderer.experiment_html(&context, i).unwrap());
    assert!(html.contains("The estimator on this run's training steps"));
    // Points that are not training steps have none.
    let views = records
        .iter()
        .find(|r| r.experiment == "views-vs-clones")
        .unwrap();
    assert!(views.estimator.is_empty());
}

#[test]
fn the_landing_page_orders_the_fixes_by_their_figures() {
    let records = crate::fixture_pages();
    let verdicts = guide::verdicts::SiteVerdicts::new(&records);
    let order = guide::fix_order::FixOrder::new(&records, &verdicts).expect("an order");
    let tiers = [
        "saves memory, passes its own check, no slowdown resolved",
        "saves memory and passes its own check, at a measured cost in time",
        "saves memory; its time was not compared in pairs",
        "saves memory, but its correctness check failed",
        "does not lower this peak on this device",
    ];
    let ranks: Vec<usize> = order
        .rows
        .iter()
        .map(|r| {
            tiers
                .iter()
                .position(|t| *t == r.why)
                .expect("a known tier")
        })
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{ranks:?}");
    assert_eq!(
        order.rows.iter().map(|r| r.rank).collect::<Vec<_>>(),
        (1..=order.rows.len()).collect::<Vec<_>>()
    );
    // Every headline of the first device's records is in the order once.
    let headlines: usize = records
        .iter()
        .filter(|r| r.device.kind == records[0].device.kind)
        .map(|r| 1 + r.analysis.secondary_headlines.len())
        .sum();
    assert_eq!(order.rows.len(), headlines);
    for row in &order.rows {
        assert!(!row.change.is_empty(), "{}: nothing to change", row.title);
    }
    let html = crate::without_terms(
        &HtmlRenderer
            .index_html(&SiteContext::new(&records, None))
            .unwrap(),
    );
    // First the triage, then the order at the card's out-of-memory point, then the measured
    // table; each technique's own headline (each on its own base) is folded below them.
    let title = html.find("Fix it in this order").unwrap();
    let triage = html.find("Inference or evaluation?").unwrap();
    let projected = html.find("out-of-memory point</h2>").unwrap();
    let measured = html.find("Every fix on the same step, measured").unwrap();
    let folded = html
        .find("<summary>Each technique's own headline, on its own base")
        .unwrap();
    let fix = folded + html[folded..].find(&order.rows[0].title).unwrap();
    assert!(title < triage && triage < projected && projected < measured && measured < folded);
    assert!(folded < fix);
    let table = html.find("Every technique on every device").unwrap();
    assert!(fix < table);
    assert!(html.contains("Measure first"));
    assert!(html.contains("Where these figures come from"));
}

#[test]
fn every_result_set_is_written_as_json_and_csv_and_linked() {
    let records = crate::fixture_analyses();
    let dir = tempfile::tempdir().unwrap();
    HtmlRenderer.render(&records, None, dir.path()).unwrap();
    let index =
        crate::without_terms(&std::fs::read_to_string(dir.path().join("index.html")).unwrap());
    // minijinja escapes a slash in an attribute as `&#x2f;`, which the browser reads back.
    let href = |path: &str| format!("href=\"{}\"", path.replace('/', "&#x2f;"));
    for record in &records {
        let csv_path = guide::context::csv_path(record);
        let csv = std::fs::read_to_string(dir.path().join(&csv_path)).unwrap();
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("experiment,device,profile,point_id,label,status,peak_bytes"));
        assert_eq!(lines.count(), record.points.len(), "{csv_path}");
        assert!(index.contains(&href(&csv_path)), "{csv_path}");
        assert!(index.contains(&href(&record.data_path())));
        let page = crate::without_terms(
            &std::fs::read_to_string(dir.path().join(format!("{}.html", record.experiment)))
                .unwrap(),
        );
        assert!(page.contains(&href(&csv_path)));
        assert!(page.contains(&format!("<code>workbench run {}", record.experiment)));
    }
}

#[test]
fn training_pages_draw_one_step_s_memory_timeline() {
    let records = crate::fixture_pages();
    for id in [
        "batch-size",
        "accumulation",
        "checkpointing",
        "sequence-length",
    ] {
        let record = records.iter().find(|r| r.experiment == id).unwrap();
        let chart = record
            .analysis
            .charts
            .iter()
            .find(|c| c.id == "memory-timeline")
            .unwrap_or_else(|| panic!("{id}: no timeline"));
        // Two steps, each with its peak marked in the line's own colour.
        assert_eq!(chart.series.len(), 2, "{id}");
        for series in &chart.series {
            assert_eq!(series.marked.len(), 1, "{id}: {}", series.name);
        }
        assert!(
            chart.series[0].points.len() > 20,
            "{id}: a timeline of events"
        );
        assert!(record
            .analysis
            .findings
            .iter()
            .any(|f| f.starts_with("Memory timeline, ")));
        // The allocator's timeline of one more step peaks where the measured steps did (an
        // exact probe: within the repeats' spread).
        for p in record.points.iter().filter_map(|p| p.result()) {
            let bytes = p.trace(results::Trace::MemoryTimelineBytes);
            let top = bytes.iter().copied().fold(0.0, f64::max);
            let peak = p.peak_bytes() as f64;
            assert!(
                (top - peak).abs() <= peak * 0.01,
                "{id}: timeline {top}, peak {peak}"
            );
            assert_eq!(
                p.trace(results::Trace::MemoryTimelinePhaseStart).len(),
                p.trace(results::Trace::MemoryTimelinePhaseKind).len()
            );
        }
    }
}

/// Every file under `root`, by its path relative to `root`.
fn files_under(root: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let name = path.strip_prefix(root).unwrap().display().to_string();
                files.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// The committed guide is a pure render of its records: `workbench render` over `site/data`
/// (the CPU's records and the device sets beside them), against `baselines/burn-0.21.0` where the
/// guide has its "Changes" page, gives every file of `site/` byte for byte, so a page, chart
/// or record left stale by a change of wording or analysis fails here. The render runs in a
/// folder laid out as the repository is (`baselines/` linked in, `--out site`), so that the
/// folders the Changes page names read as they do in the committed one.
#[test]
fn the_committed_site_is_a_render_of_its_records() {
    let site = crate::repo().join("site");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let mut render = crate::workbench();
    render
        .current_dir(dir.path())
        .args(["render", "--results"])
        .arg(site.join("data"))
        .args(["--out", "site"]);
    if site.join("changes.html").exists() {
        std::os::unix::fs::symlink(
            crate::repo().join("baselines"),
            dir.path().join("baselines"),
        )
        .unwrap();
        render.args(["--baseline", "baselines/burn-0.21.0"]);
    }
    render.assert().success();
    let (committed, rendered) = (files_under(&site), files_under(&out));
    let only = |a: &std::collections::BTreeMap<String, Vec<u8>>,
                b: &std::collections::BTreeMap<String, Vec<u8>>| {
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(
        only(&committed, &rendered).is_empty() && only(&rendered, &committed).is_empty(),
        "only in site/: {:?}; only in the render: {:?} (re-render: `workbench render \
         --results site/data --baseline baselines/burn-0.21.0 --out site`)",
        only(&committed, &rendered),
        only(&rendered, &committed)
    );
    let stale: Vec<&String> = committed
        .iter()
        .filter(|(name, bytes)| rendered[*name] != **bytes)
        .map(|(name, _)| name)
        .collect();
    assert!(
        stale.is_empty(),
        "stale in site/ (re-render: `workbench render --results site/data --baseline \
         baselines/burn-0.21.0 --out site`): {stale:?}"
    );
}

#[test]
fn the_runs_page_names_each_result_set_s_run() {
    let records = crate::fixture_analyses();
    let dir = tempfile::tempdir().unwrap();
    HtmlRenderer.render(&records, None, dir.path()).unwrap();
    let page =
        crate::without_terms(&std::fs::read_to_string(dir.path().join("runs.html")).unwrap());
    let first = &records[0].provenance;
    assert!(page.contains(&first.git_commit), "{page}");
    assert!(page.contains(&first.started_at[..10]), "{page}");
    assert!(page.contains("<dt>Calibration</dt>"), "{page}");
    let index =
        crate::without_terms(&std::fs::read_to_string(dir.path().join("index.html")).unwrap());
    assert!(index.contains("href=\"runs.html\""));
    // Every record is in exactly one run's list of experiments.
    for record in &records {
        assert!(page.contains(&record.experiment), "{}", record.experiment);
    }
}

#[test]
fn every_text_of_every_analysis_has_its_words() {
    // The fixtures and the committed records, each on the CPU and on wgpu: every key a
    // technique says has a sentence in the guide, with every argument it quotes.
    let site = crate::repo().join("site/data");
    let mut records = load_dir(&crate::fixtures()).unwrap();
    records.extend(load_dir(&site).unwrap());
    for record in crate::worded(records) {
        let a = &record.analysis;
        let mut texts: Vec<&String> = vec![&a.headline.compared, &a.headline.correctness_detail];
        for h in &a.secondary_headlines {
            texts.extend([&h.compared, &h.correctness_detail]);
        }
        texts.extend(&a.findings);
        for c in a.comparisons.iter().chain(&record.estimator) {
            texts.extend([&c.quantity, &c.note]);
        }
        texts.extend(a.fits.iter().map(|f| &f.what));
        for c in &a.charts {
            texts.extend([&c.title, &c.x_label, &c.y_label]);
            texts.extend(c.series.iter().map(|s| &s.name));
        }
        for p in &a.published {
            texts.extend([&p.source, &p.claim, &p.ours]);
        }
        for t in texts {
            assert!(
                !t.contains("[no words:") && !t.contains("[no argument "),
                "{} on {}: {t}",
                record.experiment,
                record.device.kind.name()
            );
        }
    }
}

/// A mixed-precision set interrupted before its yardstick run (f32 from other initial weights)
/// has nothing to judge a 16-bit curve's drift by: its verdict is "unknown", never "failed",
/// and the pages say the yardstick was not measured instead of quoting a NaN tolerance. With the
/// yardstick, the same record's 16-bit storage row is judged (passed or failed).
#[test]
fn a_mixed_precision_set_without_its_yardstick_judges_no_drift() {
    use results::Correctness;

    let record = load_dir(&crate::fixtures())
        .unwrap()
        .into_iter()
        .find(|r| r.experiment == "mixed-precision")
        .unwrap();
    let storage_verdict = |record: results::ExperimentRecord| {
        let analysed = crate::worded(vec![record]).remove(0);
        let row = analysed
            .analysis
            .secondary_headlines
            .first()
            .expect("a 16-bit storage row")
            .correctness;
        (row, analysed.analysis.findings.join(" "))
    };
    let (judged, _) = storage_verdict(record.clone());
    assert_ne!(judged, Correctness::Unknown);
    let mut without = record;
    without
        .points
        .retain(|p| !p.point.id.ends_with("other-init"));
    let (verdict, words) = storage_verdict(without);
    assert_eq!(verdict, Correctness::Unknown);
    assert!(words.contains("was not measured"), "{words}");
    assert!(!words.contains("NaN%"), "{words}");
}
