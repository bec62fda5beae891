//! `workbench run --quick` end to end: every experiment measured in child processes, the guide
//! written (HTML, SVG, JSON), and the same byte counts from a second run.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use results::record::load_dir;
use results::ExperimentRecord;
use results::{DeviceKind, Metric, Outcome, Point, Profile, Trace};
use workbench::runner::Runner;

use crate::workbench;

/// Text as plotters writes it into SVG.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\'', "&apos;")
        .replace('"', "&quot;")
}

fn run_quick(out: &Path, ids: &[&str]) -> Vec<ExperimentRecord> {
    workbench()
        .arg("run")
        .args(ids)
        .args(["--quick", "--out"])
        .arg(out)
        .assert()
        .success();
    load_dir(&out.join("data")).expect("the run's records load")
}

/// Byte counts of every phase of every point, by experiment and point id.
fn byte_counts(records: &[ExperimentRecord]) -> BTreeMap<String, Vec<(String, u64, u64)>> {
    records
        .iter()
        .flat_map(|r| {
            // Every quick point is measured, but those Burn refuses (QLoRA), checked below.
            r.points.iter().filter_map(move |p| {
                let result = p.result()?;
                Some((
                    format!("{}/{}", r.experiment, p.point.id),
                    result
                        .phases
                        .iter()
                        .map(|ph| (ph.phase.to_string(), ph.live_before_bytes, ph.peak_bytes))
                        .collect(),
                ))
            })
        })
        .collect()
}

#[test]
fn quick_run_writes_the_whole_guide() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let records = run_quick(&out, &["all"]);
    let analysed = crate::worded(records.clone());

    assert_eq!(records.len(), experiments::all().len());
    let index = crate::without_terms(&std::fs::read_to_string(out.join("index.html")).unwrap());
    for record in &analysed {
        assert_eq!(
            record.failed_points(),
            0,
            "{} had failures",
            record.experiment
        );
        assert_eq!(record.device.kind, DeviceKind::Cpu);
        assert_eq!(record.provenance.burn_version, "0.22.1");
        assert!(record.device.probe.as_ref().unwrap().kind == "host-counting-allocator");
        assert!(index.contains(&format!("href=\"{}.html\"", record.experiment)));

        let page = crate::without_terms(
            &std::fs::read_to_string(out.join(format!("{}.html", record.experiment))).unwrap(),
        );
        assert!(
            page.contains("Predicted against measured")
                || page.contains("The estimator on this run's training steps"),
            "{}: no prediction beside a measurement",
            record.experiment
        );
        assert!(page.contains("host-counting-allocator"));
        // Each index row's time is a paired comparison of this record, measured, on the page;
        // a row may state no time (a sweep of sizes: sequence length's), but every record
        // times at least one of its rows.
        let rows =
            std::iter::once(&record.analysis.headline).chain(&record.analysis.secondary_headlines);
        let mut timed_rows = 0;
        for headline in rows {
            let Some(id) = headline.timed_by.as_deref() else {
                continue;
            };
            let timed = results::paired::find(&record.comparisons, id);
            let timing = timed.and_then(|c| c.timing());
            assert!(
                timing.is_some(),
                "{}: row timed by {id}: {:?}",
                record.experiment,
                timed.map(guide::words::paired::cost_phrase)
            );
            assert!(page.contains(&xml_escape(&guide::words::paired::interval(
                &timing.unwrap().control
            ))));
            timed_rows += 1;
        }
        // Allocator settings has nothing to time on the CPU: it has no pool to set (and on a
        // device a pool is chosen once per process, so two settings never share one). Memory
        // over many steps ranks its loops by bytes, not time: it times in pairs what a loop
        // adds to the step (memory_cleanup(), the monitor), beside its rows.
        if record.experiment == "memory-over-steps" {
            assert_eq!(record.comparisons.len(), 2);
            for c in &record.comparisons {
                let timing = c.timing().expect("timed in pairs");
                assert!(page.contains(&xml_escape(&guide::words::paired::interval(&timing.cost))));
            }
        }
        if !["allocator-settings", "memory-over-steps"].contains(&record.experiment.as_str()) {
            assert!(timed_rows > 0, "{}: no row is timed", record.experiment);
            assert!(page.contains("Time, measured as a comparison"));
        }
        assert!(!record.analysis.charts.is_empty());
        for chart in &record.analysis.charts {
            let file = format!("charts/{}--{}.svg", record.experiment, chart.id);
            // minijinja escapes '/' in attributes as &#x2f;, which browsers decode.
            assert!(
                page.contains(&file.replace('/', "&#x2f;")),
                "{file} not linked"
            );
            let svg = std::fs::read_to_string(out.join(&file)).unwrap();
            assert!(svg.starts_with("<svg"), "{file} is not SVG");
            assert!(
                svg.contains(&xml_escape(&chart.title)),
                "{file} has no title"
            );
            assert!(svg.contains(&xml_escape(&chart.x_label)));
            assert!(svg.contains(&xml_escape(&chart.y_label)));
            // The legend wraps a long entry over lines: its words, in order.
            let words = svg.split_whitespace().collect::<Vec<_>>().join(" ");
            for series in &chart.series {
                let name = xml_escape(&series.name);
                let wrapped = name.split_whitespace().collect::<Vec<_>>();
                let found = wrapped.iter().all(|w| words.contains(w));
                assert!(found, "{file}: no legend entry {name}");
            }
        }
        for point in &record.points {
            // QLoRA's points are Burn's refusal, an answer with no measurement.
            let Some(result) = point.result() else {
                let refused = matches!(point.outcome, results::Outcome::NotInBurn { .. });
                assert!(refused, "{}: {:?}", point.point.id, point.outcome);
                continue;
            };
            assert!(result.step.median_s > 0.0);
            assert_eq!(result.step.samples_s.len(), point.point.repeats);
            // A point read per step (memory over many steps) has no phases: its readings.
            assert!(
                result.peak_bytes() > 0
                    || !result.trace(results::Trace::InUseBytesByStep).is_empty()
            );
        }
    }
    assert!(out.join(".workbench").exists());
    assert!(out.join("style.css").exists());
    // No partial folder is left beside the output.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty());

    // The batch-size sweep spans at least 6 sizes over a 32x range.
    let batch = records
        .iter()
        .find(|r| r.experiment == "batch-size")
        .unwrap();
    assert!(batch.points.len() >= 6);
    // The techniques compute the same thing: no-grad outputs, accumulated and checkpointed
    // gradients, both ways of writing a computation, views and their host reference, and bf16's
    // loss curve within its drift tolerance of f32's.
    for id in [
        "no-grad",
        "accumulation",
        "checkpointing",
        "in-place",
        "views-vs-clones",
        "mixed-precision",
    ] {
        let record = analysed.iter().find(|r| r.experiment == id).unwrap();
        assert_eq!(
            record.analysis.headline.correctness,
            results::Correctness::Passed,
            "{id}: {}",
            record.analysis.headline.correctness_detail
        );
    }

    techniques_save_what_they_predict(&records);

    // `render` rebuilds the same pages from the saved records, running nothing.
    let rendered = dir.path().join("rendered");
    workbench()
        .args(["render", "--results"])
        .arg(out.join("data"))
        .arg("--out")
        .arg(&rendered)
        .assert()
        .success();
    for page in ["index.html"]
        .into_iter()
        .map(String::from)
        .chain(records.iter().map(|r| format!("{}.html", r.experiment)))
    {
        assert_eq!(
            std::fs::read_to_string(out.join(&page)).unwrap(),
            std::fs::read_to_string(rendered.join(&page)).unwrap(),
            "{page} differs after render"
        );
    }

    // Memory on the CPU is deterministic up to the autodiff graph's bookkeeping: a second run
    // gives the same byte counts within results::diff::bookkeeping_tolerance_bytes (which
    // `workbench diff` allows too; see the README).
    let again = run_quick(&dir.path().join("again"), &["all"]);
    let (first, second) = (byte_counts(&records), byte_counts(&again));
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>()
    );
    for (point, phases) in &first {
        for (a, b) in phases.iter().zip(&second[point]) {
            assert_eq!(a.0, b.0);
            for (x, y) in [(a.1, b.1), (a.2, b.2)] {
                assert!(
                    x.abs_diff(y) <= results::diff::bookkeeping_tolerance_bytes(x.max(y)),
                    "{point} {}: {x} against {y} bytes",
                    a.0
                );
            }
        }
    }
}

/// The quick run's own figures show each technique doing what its page says it does.
fn techniques_save_what_they_predict(records: &[ExperimentRecord]) {
    let record = |id: &str| records.iter().find(|r| r.experiment == id).unwrap();
    fn metric(p: &results::MeasuredPoint, metric: impl results::MetricKey) -> f64 {
        p.result().unwrap().metric(metric)
    }
    let point = |id: &str, point: &str| {
        record(id)
            .points
            .iter()
            .find(|p| p.point.id == point)
            .unwrap_or_else(|| panic!("{id} has no point {point}"))
            .clone()
    };
    // Tensor handles and bookkeeping: well under 1 KiB per operation.
    const HANDLES: f64 = 1024.0;

    // quantization: every format's weights within 1% of the byte model, plus a KiB of
    // bookkeeping per tensor (seen: 446 B on Burn 0.21, 902 B on 0.22.1, f32 and quantized
    // alike: Flex's tensor layout on the heap); 4-bit values take a
    // byte each on Flex, as 8-bit ones; a quantized pass holds a layer's weight dequantized to
    // f32 on top of what the f32 pass holds.
    {
        use estimator::estimate::Allocator;
        use experiments::harness::models::MlpShape;
        use experiments::techniques::quantization::{predict, QuantConfig};
        for p in &record("quantization").points {
            let config: QuantConfig = serde_json::from_value(p.point.config.clone()).unwrap();
            let predicted = predict::weight_bytes(config.shape, config.format, Allocator::Flex);
            let measured = metric(
                p,
                experiments::techniques::quantization::QuantMetric::WeightBytes,
            );
            let tensors = 2 * config.shape.depth;
            assert!(
                (measured - predicted).abs() < 0.01 * predicted + 1024.0 * tensors as f64,
                "{}: {measured} against {predicted}",
                p.point.id
            );
        }
        let bytes = |id: &str| {
            metric(
                &point("quantization", id),
                experiments::techniques::quantization::QuantMetric::WeightBytes,
            )
        };
        assert_eq!(bytes("q4-block-32"), bytes("q8-block-32"));
        assert!(bytes("q8-tensor") < 0.26 * bytes("f32"));
        let config: QuantConfig =
            serde_json::from_value(point("quantization", "f32").point.config).unwrap();
        let MlpShape { width, .. } = config.shape;
        let eval = |id: &str| metric(&point("quantization", id), Metric::EvalBytes);
        assert!(eval("q8-block-32") - eval("f32") >= (width * width * 4) as f64);
    }

    // offload on the CPU: nothing moves, so the offloaded step holds one more copy of the
    // weights (the host's) between steps, within 1% and 4 KiB of bookkeeping per tensor (seen:
    // about 2.7 KiB per tensor, +21.6 KB at the quick size); each step copies every gradient
    // and every weight (8 B per parameter); Adam on the host computes the very same
    // parameters as Adam beside the model (the same backend: no rounding to differ).
    {
        let (usual, offloaded) = (
            point("offload", "optimizer-on-device"),
            point("offload", "optimizer-on-host"),
        );
        let params = metric(&usual, Metric::NumParams);
        let held = |p: &results::MeasuredPoint| metric(p, Metric::LiveBeforeStepBytes);
        let extra = held(&offloaded) - held(&usual);
        let config: experiments::techniques::offload::OffloadConfig =
            serde_json::from_value(usual.point.config.clone()).unwrap();
        let tensors = 2.0 * config.train.shape.depth() as f64;
        assert!(
            (extra - 4.0 * params).abs() < 0.01 * 4.0 * params + 4.0 * HANDLES * tensors,
            "offload's second copy: {extra} B for {params} parameters"
        );
        assert_eq!(
            metric(
                &offloaded,
                experiments::techniques::offload::OffloadMetric::TransferBytes
            ),
            8.0 * params
        );
        let proof = &offloaded.result().unwrap().checks[0];
        assert!(proof.passed && proof.max_abs_diff == 0.0, "{proof:?}");
    }

    // in-place: consuming the input saves exactly one tensor's elements (up to its handle).
    for p in &record("in-place").points {
        if let Some(rest) = p.point.id.strip_prefix("chain-keep-clone-") {
            let consumed = point("in-place", &format!("chain-consume-{rest}"));
            let saved = metric(
                p,
                experiments::techniques::in_place::InPlaceMetric::AddedPeakBytes,
            ) - metric(
                &consumed,
                experiments::techniques::in_place::InPlaceMetric::AddedPeakBytes,
            );
            let tensor = metric(p, Metric::TensorBytes);
            assert!(
                (saved - tensor).abs() < HANDLES,
                "{}: {saved} vs {tensor}",
                p.point.id
            );
        }
    }
    // views-vs-clones: views copy nothing, a reshape of a transpose copies the parent, a row view
    // holds the whole parent and a row copy does not.
    for p in &record("views-vs-clones").points {
        let parent = metric(p, experiments::techniques::views::ViewsMetric::ParentBytes);
        let copied = metric(p, experiments::techniques::views::ViewsMetric::CopiedBytes);
        let op = p.point.id.split("-rows-").next().unwrap();
        match op {
            "slice-rows" | "slice-columns" | "narrow" | "transpose" | "reshape" | "expand" => {
                assert!(copied < HANDLES, "{}: {copied}", p.point.id)
            }
            "reshape-transposed" => assert!((copied - parent).abs() < HANDLES, "{}", p.point.id),
            "row-view" => assert!(metric(p, Metric::HeldBytes) >= parent, "{}", p.point.id),
            "row-copy" => assert!(
                metric(p, Metric::HeldBytes) < parent / 64.0,
                "{}",
                p.point.id
            ),
            _ => {}
        }
    }
    // checkpointing: the balanced forward pass keeps less than the plain one, at every point.
    for p in &record("checkpointing").points {
        if let Some(rest) = p.point.id.strip_suffix("-plain") {
            let balanced = point("checkpointing", &format!("{rest}-balanced"));
            assert!(
                metric(&balanced, Metric::ActivationBytes) < metric(p, Metric::ActivationBytes),
                "{rest}"
            );
        }
    }
    // mixed-precision: the task is learned in f32, and bf16 storage halves the weights.
    let f32_run = point("mixed-precision", "f32");
    let losses = &f32_run.result().unwrap().traces[&Trace::LossByStep];
    assert!(losses.len() >= 50);
    assert!(losses.last().unwrap() < &(0.5 * losses[0]), "{losses:?}");
    let bf16 = point("mixed-precision", "bf16");
    assert!(metric(&bf16, Metric::ParamBytes) < 0.6 * metric(&f32_run, Metric::ParamBytes));
}

fn fake_child(dir: &Path, script: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-workbench");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn point() -> Point {
    Point {
        id: "p".into(),
        label: "p".into(),
        warmup: 0,
        repeats: 1,
        config: serde_json::json!({}),
    }
}

fn runner(exe: std::path::PathBuf, timeout: Duration) -> Runner {
    Runner {
        exe,
        device: DeviceKind::Cpu,
        profile: Profile::Quick,
        point_timeout: timeout,
        compare_times: true,
        journal: None,
        memory_bytes: None,
    }
}

#[cfg(unix)]
#[test]
fn crashing_child_is_a_failed_point_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fake_child(
        dir.path(),
        "echo 'thread main panicked: index out of bounds' >&2; exit 101",
    );
    match runner(exe, Duration::from_secs(30)).run_point("batch-size", &point()) {
        Outcome::Failed {
            reason,
            stderr_tail,
        } => {
            assert!(reason.contains("status 101"), "{reason}");
            assert!(stderr_tail.contains("index out of bounds"), "{stderr_tail}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn a_child_out_of_memory_is_an_outcome_with_the_bytes_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    // std's allocation error handler on the host, then an abort.
    let exe = fake_child(
        dir.path(),
        "echo 'memory allocation of 104857599998951424 bytes failed' >&2; kill -ABRT $$",
    );
    match runner(exe, Duration::from_secs(30)).run_point("batch-size", &point()) {
        Outcome::OutOfMemory {
            reason,
            requested_bytes,
            ..
        } => {
            assert_eq!(requested_bytes, Some(104_857_599_998_951_424));
            assert!(reason.contains("signal 6"), "{reason}");
        }
        other => panic!("expected out of memory, got {other:?}"),
    }
    // A device allocator's error, as a panic: out of memory, bytes not said.
    let dir = tempfile::tempdir().unwrap();
    let exe = fake_child(
        dir.path(),
        "echo 'thread main panicked: called Result::unwrap() on an Err value: OutOfMemory' >&2; \
         exit 101",
    );
    let outcome = runner(exe, Duration::from_secs(30)).run_point("batch-size", &point());
    assert!(
        matches!(
            outcome,
            Outcome::OutOfMemory {
                requested_bytes: None,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert!(!outcome.is_failure());
    // The counting allocator under a budget (`fit`'s children): the bytes asked for, and what
    // was in use in the reason.
    let dir = tempfile::tempdir().unwrap();
    let exe = fake_child(
        dir.path(),
        "echo 'out of memory: tried to allocate 4194304 bytes; 1000 bytes in use; budget 2000000 \
         bytes' >&2; kill -ABRT $$",
    );
    match runner(exe, Duration::from_secs(30)).run_point("batch-size", &point()) {
        Outcome::OutOfMemory {
            reason,
            requested_bytes,
            ..
        } => {
            assert_eq!(requested_bytes, Some(4_194_304));
            assert!(reason.contains("1000 bytes in use"), "{reason}");
        }
        other => panic!("expected out of memory, got {other:?}"),
    }
}

/// A point whose estimated step peak exceeds the device's memory is recorded as out of memory
/// without a child being started (the runner's binary here does not exist).
#[test]
fn a_point_larger_than_the_device_is_refused_up_front() {
    let experiment = experiments::find("batch-size").unwrap();
    let points = experiment.points(Profile::Quick, DeviceKind::Cpu);
    let training = points
        .iter()
        .find(|p| experiment.estimated_peak_bytes(p).is_some())
        .expect("batch-size has training-step points");
    let estimate = experiment.estimated_peak_bytes(training).unwrap();
    let mut small = runner("/no/such/workbench".into(), Duration::from_secs(5));
    small.memory_bytes = Some((estimate / 2.0) as u64);
    match small.refuse_up_front(experiment, training) {
        Some(Outcome::OutOfMemory {
            reason,
            requested_bytes,
            ..
        }) => {
            assert!(reason.starts_with("not run: the estimator"), "{reason}");
            assert_eq!(requested_bytes, Some(estimate as u64));
        }
        other => panic!("expected out of memory up front, got {other:?}"),
    }
    // Room enough: it runs.
    small.memory_bytes = Some((estimate * 2.0) as u64);
    assert!(small.refuse_up_front(experiment, training).is_none());
    small.memory_bytes = None;
    assert!(small.refuse_up_front(experiment, training).is_none());
}

#[test]
fn a_point_the_device_cannot_run_is_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fake_child(
        dir.path(),
        "echo 'error: mixed-precision: bf16: not supported on this device: the device has no bf16' >&2; exit 3",
    );
    match runner(exe, Duration::from_secs(30)).run_point("batch-size", &point()) {
        Outcome::Unsupported { lacks } => assert_eq!(lacks, "bf16"),
        other => panic!("expected not supported, got {other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn hanging_child_is_killed_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fake_child(dir.path(), "echo started >&2; sleep 30");
    let started = std::time::Instant::now();
    match runner(exe, Duration::from_millis(300)).run_point("batch-size", &point()) {
        Outcome::Failed { reason, .. } => assert!(reason.contains("timed out"), "{reason}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[cfg(unix)]
#[test]
fn child_printing_garbage_is_a_failed_point() {
    let dir = tempfile::tempdir().unwrap();
    let exe = fake_child(dir.path(), "cat >/dev/null; echo 'not json'");
    match runner(exe, Duration::from_secs(30)).run_point("batch-size", &point()) {
        Outcome::Failed { reason, .. } => assert!(reason.contains("no valid result"), "{reason}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}
