//! Measuring one tensor operation: the shared loop of the experiments that compare ways of
//! writing the same computation (`in-place`, `views-vs-clones`) rather than training steps.
//!
//! Each repeat builds a fresh input outside the clock, then runs the operation as one metered
//! phase: its peak above what was live before (the input included) is what the operation added,
//! and what is still held after it, above what was live before the input was made, is what it
//! leaves behind. The timed region is the operation and then the freeing of everything it
//! returned (the meter's own readings excluded), so that two ways of writing a computation are
//! timed with the same allocations and the same frees, whichever of them frees inside the
//! operation and whichever after it.

use std::time::Instant;

use burn::tensor::{Distribution, Tensor, TensorData};
use results::{Check, Metric, MetricKey, Metrics, PhaseKey, PointResult, PutMetric, Timing};

use crate::harness::probe::{
    bracketed_step, delta_spread_bytes, last_repeat, MemoryProbe, PhaseMemory, PhaseMeter,
    ProbeInfo,
};
use crate::harness::profile::Repeats;
use burn::tensor::Device;

/// What the repeats of one operation measured.
#[derive(Debug, Clone)]
pub struct OpMeasurement {
    /// The phase of the last repeat (named by the caller).
    pub phase: PhaseMemory,
    /// Bytes in use before the last repeat's input was made.
    pub before_input_bytes: u64,
    /// Samples (rows) one run of the operation processes.
    pub rows: usize,
    /// Time of the operation and of freeing what it returned, input construction excluded.
    pub timing: Timing,
    /// Largest difference between repeats in the bytes the operation added.
    pub repeat_delta_spread_bytes: u64,
}

impl OpMeasurement {
    /// Bytes the operation added at its peak, above everything live before it (input included).
    pub fn added_peak_bytes(&self) -> u64 {
        self.phase.delta_bytes()
    }

    /// Bytes still held once the operation returned, above what was live before its input was
    /// made: the output, plus whatever the output keeps alive.
    pub fn held_bytes(&self) -> u64 {
        self.phase
            .live_after_bytes
            .saturating_sub(self.before_input_bytes)
    }

    /// The point's result: the operation's phase and time, its rows as the samples of one
    /// operation, the bytes it added at its peak as `added_metric`, what it left held
    /// (`held_bytes`), the experiment's own `metrics`, and the check.
    pub fn into_result(
        self,
        probe: ProbeInfo,
        added_metric: impl MetricKey,
        mut metrics: Metrics,
        check: Check,
    ) -> PointResult {
        metrics.put(added_metric, self.added_peak_bytes() as f64);
        metrics.put(Metric::HeldBytes, self.held_bytes() as f64);
        metrics.put(
            Metric::RepeatDeltaSpreadBytes,
            self.repeat_delta_spread_bytes as f64,
        );
        PointResult {
            metrics,
            checks: vec![check],
            ..PointResult::new(probe, vec![self.phase], self.timing, self.rows as u64)
        }
    }
}

/// Fresh `[rows, cols]` inputs of standard normal values from the backend's seeded generator,
/// drawn once and copied for each call: drawing costs about ten times the operations measured,
/// which every repeat would pay.
pub fn normal_inputs(rows: usize, cols: usize, device: &Device) -> impl Fn() -> Tensor<2> + '_ {
    let drawn: TensorData =
        Tensor::<2>::random([rows, cols], Distribution::Normal(0.0, 1.0), device).into_data();
    move || Tensor::from_data(drawn.clone(), device)
}

/// Runs `op` on a fresh input from `make_input`, warmed up and measured as `repeats` says; each
/// run processes `rows` samples. `sync` waits for the device; it runs before each
/// clock read. On a probe without an exact peak (CubeCL), the phase's memory comes from one more
/// run after the timed ones, its peak bracketed (see [`bracketed_step`]). After the warm-up the
/// operation is offered to an installed
/// [`StepTimer`](crate::harness::timing::StepTimer), its input made outside the clock as here.
#[allow(clippy::too_many_arguments)]
pub fn measure_op<I, O>(
    probe: &dyn MemoryProbe,
    sync: &dyn Fn(),
    phase: impl PhaseKey,
    repeats: Repeats,
    rows: usize,
    mut make_input: impl FnMut() -> I,
    mut op: impl FnMut(I) -> O,
) -> OpMeasurement {
    // One run: bytes in use before the input, the time of the operation alone, its phase.
    let mut run = || {
        // The meter's bookkeeping is allocated before the first reading: what the operation
        // leaves held is the operation's alone.
        let mut meter = PhaseMeter::with_capacity(probe, sync, 1);
        sync();
        let before = probe.read().in_use_bytes;
        let input = make_input();
        let start = Instant::now();
        let output = meter.phase(phase, || op(input));
        let op_time = start.elapsed();
        let phases = meter.finish();
        let freed = Instant::now();
        drop(output);
        sync();
        (before, op_time + freed.elapsed(), phases)
    };
    repeats.warm_up(|| {
        run();
    });
    let repeats = repeats.repeats;
    crate::harness::timing::offer(rows as u64, &mut || run().1);
    let mut runs: Vec<Vec<PhaseMemory>> = Vec::with_capacity(repeats.max(1));
    let mut samples_s = Vec::with_capacity(repeats.max(1));
    let mut before_input_bytes = 0;
    for _ in 0..repeats.max(1) {
        let (before, elapsed, phases) = run();
        samples_s.push(elapsed.as_secs_f64());
        runs.push(phases);
        before_input_bytes = before;
    }
    // On a probe without an exact peak, one more run, bracketed and not timed, gives the
    // phase's memory.
    let bracketed = bracketed_step(probe, |runs| runs.push(run().2));
    let phase = bracketed
        .unwrap_or_else(|| last_repeat(&runs))
        .into_iter()
        .next()
        .expect("one phase per repeat");
    OpMeasurement {
        phase,
        before_input_bytes,
        rows,
        timing: Timing::from_samples(samples_s),
        repeat_delta_spread_bytes: delta_spread_bytes(&runs),
    }
}
