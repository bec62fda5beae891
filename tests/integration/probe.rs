//! The host probe is exact: a tensor of N f32 raises the peak by 4N bytes, no more, no less.
//!
//! Byte-exact tests cannot share the process with other test threads that allocate, so each
//! re-runs this test binary on itself alone (`--exact`), with `PROBE_CHILD` set.

use std::process::Command;

use burn::backend::Flex;
use burn::tensor::{Tensor, TensorData};
use experiments::probe::host::HostProbe;
use experiments::probe::{MemoryProbe, PhaseMeter};

/// Runs `test` (this module's test of that name) alone in a child process; true in the child.
fn in_child(test: &str) -> bool {
    if std::env::var_os("PROBE_CHILD").is_some() {
        return true;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            &format!("probe::{test}"),
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("PROBE_CHILD", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    false
}

#[test]
fn buffer_of_n_f32_raises_peak_by_exactly_4n() {
    if !in_child("buffer_of_n_f32_raises_peak_by_exactly_4n") {
        return;
    }
    assert!(HostProbe::is_installed());
    let probe = HostProbe;
    for n in [1usize, 1000, 1 << 20] {
        let before = probe.read();
        probe.reset_peak();
        let v = std::hint::black_box(vec![0f32; n]);
        let during = probe.read();
        assert_eq!(
            during.peak_in_use_bytes - before.in_use_bytes,
            4 * n as u64,
            "n = {n}"
        );
        drop(v);
        assert_eq!(
            probe.read().in_use_bytes,
            before.in_use_bytes,
            "freed, n = {n}"
        );
    }
}

/// Peak and live rise of making one Flex tensor of `n` f32 from its values, which must be equal
/// (the values move into the tensor without a copy).
fn tensor_rise(probe: &HostProbe, n: usize) -> u64 {
    let device = Default::default();
    let before = probe.read();
    probe.reset_peak();
    let t = Tensor::<Flex, 1>::from_data(TensorData::new(vec![0f32; n], [n]), &device);
    let during = probe.read();
    let peak = during.peak_in_use_bytes - before.in_use_bytes;
    assert_eq!(
        during.in_use_bytes - before.in_use_bytes,
        peak,
        "no transient, n = {n}"
    );
    drop(t);
    assert_eq!(
        probe.read().in_use_bytes,
        before.in_use_bytes,
        "freed, n = {n}"
    );
    peak
}

#[test]
fn tensor_of_n_f32_raises_peak_by_4n_plus_fixed_bookkeeping() {
    if !in_child("tensor_of_n_f32_raises_peak_by_4n_plus_fixed_bookkeeping") {
        return;
    }
    let probe = HostProbe;
    // The first tensor fixes the device's settings; measure from the second on.
    let warm = Tensor::<Flex, 1>::zeros([8], &Default::default());
    // A Flex tensor is its data buffer plus a few bytes of bookkeeping (shared-buffer header,
    // layout) that do not depend on its size: N more f32 raise the peak by exactly 4N.
    let bookkeeping = tensor_rise(&probe, 1) - 4;
    assert!(
        bookkeeping < 256,
        "{bookkeeping} bytes of bookkeeping per tensor"
    );
    for n in [1000usize, 1 << 20, 3 << 20] {
        assert_eq!(
            tensor_rise(&probe, n),
            4 * n as u64 + bookkeeping,
            "n = {n}"
        );
    }
    println!("bookkeeping per Flex tensor: {bookkeeping} bytes");
    drop(warm);
}

#[test]
fn phase_meter_separates_phases() {
    if !in_child("phase_meter_separates_phases") {
        return;
    }
    let probe = HostProbe;
    let sync = || {};
    let n = 1 << 18;
    let mut meter = PhaseMeter::new(&probe, &sync);
    let kept = meter.phase("allocate", || vec![0f32; n]);
    meter.phase("transient", || drop(std::hint::black_box(vec![0u8; 3 * n])));
    drop(kept);
    let phases = meter.finish();
    assert_eq!(phases[0].phase, "allocate");
    assert_eq!(phases[0].delta_bytes(), 4 * n as u64);
    assert_eq!(
        phases[0].live_after_bytes - phases[0].live_before_bytes,
        4 * n as u64
    );
    // The second phase starts with the first's vector live and peaks 3n above it.
    assert_eq!(phases[1].live_before_bytes, phases[0].live_after_bytes);
    assert_eq!(phases[1].delta_bytes(), 3 * n as u64);
    assert_eq!(phases[1].live_after_bytes, phases[1].live_before_bytes);
}

#[test]
fn realloc_is_counted_as_the_size_change() {
    if !in_child("realloc_is_counted_as_the_size_change") {
        return;
    }
    let probe = HostProbe;
    let mut v: Vec<u8> = Vec::with_capacity(1000);
    let before = probe.read().in_use_bytes;
    v.reserve_exact(5000);
    let grown = probe.read().in_use_bytes;
    assert_eq!(grown - before, v.capacity() as u64 - 1000);
    v.shrink_to(10);
    assert_eq!(
        probe.read().in_use_bytes,
        before - 1000 + v.capacity() as u64
    );
}
