//! The device path on wgpu (run here on a software Vulkan driver, which uses the same CubeCL
//! memory manager as CUDA): the probe's byte counts, a `--quick` run, `memory-summary`, and a
//! clear refusal when there is no driver.

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use experiments::harness::probe::cube::{CubeProbe, Pool};
use experiments::harness::probe::MemoryProbe;
use experiments::techniques::cache_release::{Counter, Moment};
use results::record::load_dir;
use results::Metric;

use crate::workbench;

#[test]
fn a_tensor_of_n_f32_raises_bytes_in_use_by_4n() {
    // Usage is per stream and a stream is per thread: this test's thread sees only its own.
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let probe = CubeProbe::new(&device, Pool::Adaptive);
    let sync = || device.sync().unwrap();
    for n in [1000usize, 1 << 20] {
        sync();
        let before = probe.summary();
        let t = Tensor::<1>::from_data(TensorData::new(vec![1f32; n], [n]), &device);
        sync();
        let during = probe.summary();
        assert_eq!(
            during.in_use_bytes - before.in_use_bytes,
            4 * n as u64,
            "n = {n}"
        );
        // Padding to the allocator's alignment is counted apart, and is less than one page.
        let padding = during.padding_bytes.unwrap() - before.padding_bytes.unwrap();
        assert!(padding < 4096, "n = {n}: padding {padding}");
        assert!(
            during.reserved_bytes.unwrap() >= during.in_use_bytes + during.padding_bytes.unwrap()
        );
        drop(t);
        sync();
        assert_eq!(
            probe.summary().in_use_bytes,
            before.in_use_bytes,
            "freed, n = {n}"
        );
    }
}

#[test]
fn memory_summary_shows_reserved_memory_released_by_cleanup() {
    let out = workbench()
        .args([
            "memory-summary",
            "--device",
            "wgpu",
            "--tensor-mib",
            "16",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let summary: experiments::harness::summary::DeviceSummary =
        serde_json::from_slice(&out).unwrap();
    assert_eq!(summary.probe.kind, "cubecl-memory-manager");
    let at = |i: usize| summary.rows[i].memory;
    let (start, alive, dropped, cleaned) = (at(0), at(1), at(2), at(3));
    assert_eq!(alive.in_use_bytes - start.in_use_bytes, 16 << 20);
    // Dropping the tensor frees its bytes but keeps the page reserved; cleanup returns it.
    assert_eq!(dropped.in_use_bytes, start.in_use_bytes);
    assert!(dropped.reserved_bytes.unwrap() >= 16 << 20);
    assert!(cleaned.reserved_bytes.unwrap() < dropped.reserved_bytes.unwrap());
}

#[test]
fn quick_run_on_wgpu_measures_what_the_cpu_measures() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    workbench()
        .args([
            "run",
            "batch-size",
            "no-grad",
            "cache-release",
            "--quick",
            "--device",
            "wgpu",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    // A device's records go to data/<device>/, as render expects them beside the CPU's.
    assert!(out.join("data/wgpu/batch-size.json").exists());
    assert!(!out.join("data/batch-size.json").exists());
    let records = load_dir(&out.join("data")).unwrap();
    let cpu = load_dir(&crate::fixtures()).unwrap();
    for record in &records {
        assert_eq!(record.failed_points(), 0, "{}", record.experiment);
        assert_eq!(
            record.device.probe.as_ref().unwrap().kind,
            "cubecl-memory-manager"
        );
        assert!(record.device.identity.as_ref().unwrap().name.len() > 1);
        // lavapipe is a software driver: memory measured, times not compared.
        assert!(record.device.identity.as_ref().unwrap().software);
        assert!(record.comparisons.is_empty(), "{}", record.experiment);
    }
    // Every phase of a training or evaluation point is bracketed: boundary <= lower <= upper,
    // the upper bound read from the exclusive-pages pool.
    for record in records.iter().filter(|r| r.experiment != "cache-release") {
        for p in &record.points {
            for phase in &p.result().unwrap().phases {
                let b = phase.bracket.as_ref().unwrap_or_else(|| {
                    panic!(
                        "{} {} {}: no bracket",
                        record.experiment, p.point.id, phase.phase
                    )
                });
                assert_eq!(b.pool, "exclusive-pages");
                assert_eq!(phase.peak_bytes, b.lower_bytes());
                assert!(b.boundary_peak_bytes <= b.lower_bytes());
                assert!(b.lower_bytes() <= b.upper_bytes, "{} {:?}", p.point.id, b);
            }
        }
    }
    // Bytes per sample that the forward pass leaves for backward agree with the CPU backend's:
    // the same tensors are kept. The device probe reads at phase boundaries, so what it sees of
    // the forward pass is what is live at its end: the CPU's `graph_bytes`. (The CPU's exact
    // peak is one width per sample higher: the loss's square, alive only inside the pass.)
    // Padding is per allocation, not per sample.
    let slope = |rs: &[results::ExperimentRecord], metric: Metric| -> f64 {
        let r = rs.iter().find(|r| r.experiment == "batch-size").unwrap();
        let points: Vec<(f64, f64)> = r
            .points
            .iter()
            // The MLP's points (the transformer's have their own shape).
            .filter(|p| p.point.config["shape"].get("width").is_some())
            .map(|p| {
                let batch = p.point.config["batch"].as_f64().unwrap();
                (batch, p.result().unwrap().metric(metric))
            })
            .collect();
        results::LinearFit::fit(&points).unwrap().slope
    };
    let device = slope(&records, Metric::GraphBytes);
    let host = slope(&cpu, Metric::GraphBytes);
    assert!(
        (device - host).abs() / host < 0.02,
        "bytes per sample left by the forward pass: wgpu {device}, cpu {host}"
    );
    // The CPU's exact forward peak per sample (the loss's square included), carried to the
    // device's largest batch, falls inside the device's bracket of that phase.
    let cpu_per_sample = slope(&cpu, Metric::ActivationBytes);
    let batch_size = records
        .iter()
        .find(|r| r.experiment == "batch-size")
        .unwrap();
    let largest = batch_size
        .points
        .iter()
        .filter(|p| p.point.config["shape"].get("width").is_some())
        .max_by_key(|p| p.point.config["batch"].as_u64().unwrap())
        .unwrap();
    let forward = largest
        .result()
        .unwrap()
        .phase(results::Phase::Forward)
        .unwrap();
    let b = forward.bracket.as_ref().unwrap();
    let carried = forward.live_before_bytes as f64
        + cpu_per_sample * largest.point.config["batch"].as_f64().unwrap();
    assert!(
        carried >= b.lower_bytes() as f64 * 0.995 && carried <= b.upper_bytes as f64,
        "the CPU's forward peak carried to wgpu, {carried}, outside [{}, {}]",
        b.lower_bytes(),
        b.upper_bytes
    );
    let page = crate::without_terms(&std::fs::read_to_string(out.join("batch-size.html")).unwrap());
    assert!(page.contains("cubecl-memory-manager"));
    assert!(page.contains("backward phase: read at its boundaries"));

    // Cache release on a real CubeCL pool: a tensor's bytes exactly, its pages kept reserved
    // after the drop, returned by memory_cleanup().
    let cache = records
        .iter()
        .find(|r| r.experiment == "cache-release")
        .unwrap();
    for p in &cache.points {
        let r = p.result().unwrap();
        let bytes = p.point.config["tensor_bytes"].as_f64().unwrap();
        let above = |moment: Moment, counter: Counter| {
            r.metric(counter.at(moment)) - r.metric(counter.at(Moment::Start))
        };
        assert_eq!(r.metric(Metric::HasCache), 1.0);
        assert_eq!(
            above(Moment::Alive, Counter::InUse),
            bytes,
            "{}",
            p.point.id
        );
        assert_eq!(
            above(Moment::Dropped, Counter::InUse),
            0.0,
            "{}",
            p.point.id
        );
        assert!(
            above(Moment::Dropped, Counter::Reserved) >= bytes,
            "{}",
            p.point.id
        );
        assert!(
            above(Moment::Released, Counter::Reserved) < above(Moment::Dropped, Counter::Reserved),
            "{}",
            p.point.id
        );
        assert_eq!(r.phases[0].delta_bytes() as f64, bytes, "{}", p.point.id);
    }
}

#[test]
fn offload_on_wgpu_moves_adams_state_off_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    workbench()
        .args(["run", "offload", "--quick", "--device", "wgpu", "--out"])
        .arg(&out)
        .assert()
        .success();
    let records = load_dir(&out.join("data")).unwrap();
    let points = &records[0].points;
    let point = |id: &str| {
        points
            .iter()
            .find(|p| p.point.id == id)
            .unwrap()
            .result()
            .unwrap()
    };
    let (usual, offloaded) = (point("optimizer-on-device"), point("optimizer-on-host"));
    let params = usual.metric(Metric::NumParams);
    // The device no longer keeps Adam's two moments between steps: 8 B per parameter. On Burn
    // 0.21 exactly; on 0.22 the usual step's device also keeps a few buffers of CubeCL's own
    // beside them (48 B per random-initialised tensor, fusion's), which vary from run to run:
    // 24 and 53 KB over two runs of this 263,168-parameter MLP, 1.1% and 2.5% of the moments.
    let saved =
        usual.metric(Metric::LiveBeforeStepBytes) - offloaded.metric(Metric::LiveBeforeStepBytes);
    assert!(
        saved >= 8.0 * params && saved <= 8.0 * params * 1.03,
        "saved {saved} B for {params} parameters"
    );
    assert!(offloaded.peak_bytes() < usual.peak_bytes());
    assert_eq!(
        offloaded.metric(experiments::techniques::offload::OffloadMetric::TransferBytes),
        8.0 * params
    );
    // The host keeps the master weights and the moments, 12 B per parameter, within 5%.
    let host = offloaded.metric(experiments::techniques::offload::OffloadMetric::HostStateBytes);
    assert!((host / (12.0 * params) - 1.0).abs() < 0.05, "host: {host}");
    // Adam on Flex and Adam on wgpu give the same parameters within f32 rounding.
    assert!(offloaded.checks[0].passed, "{:?}", offloaded.checks[0]);
}

#[test]
fn wgpu_without_a_vulkan_driver_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = workbench()
        .args(["run", "all", "--quick", "--device", "wgpu", "--out"])
        .arg(dir.path().join("site"))
        // The Vulkan loader then finds no driver at all. Mesa's device-select layer stays
        // installed and, without a session, prints its own complaint about XDG_RUNTIME_DIR
        // (a machine without mesa has no such layer): switch it off.
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .env("NODEVICE_SELECT", "1")
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no Vulkan driver found"), "{err}");
    assert!(!dir.path().join("site").exists());
}

/// The calibration times work the device did: its element-wise add on lavapipe, which runs on
/// this machine's cores and memory, cannot stream much faster than the CPU backend's add on the
/// same memory. With the add's output dropped before the sync, Burn's fusion skipped it and
/// lavapipe read 425 GB/s against the CPU's 16.
#[test]
fn the_calibration_on_wgpu_times_work_that_ran() {
    let calibrate = |device: &str| -> results::Calibration {
        let out = workbench()
            .args(["calibrate", "--device", device])
            .envs(workbench::runner::MEASURING_ENV)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    let (cpu, wgpu) = (calibrate("cpu"), calibrate("wgpu"));
    assert_eq!(wgpu.copy_output_held, Some(true), "a new record says so");
    assert!(
        wgpu.copy_gb_s < 10.0 * cpu.copy_gb_s,
        "wgpu's add at {:.1} GB/s against the CPU's {:.1}",
        wgpu.copy_gb_s,
        cpu.copy_gb_s
    );
}
