//! Whether a series of bytes grows: a least-squares line through it and the 95% interval of its
//! slope, and whether that growth is a pool settling (it slows) or a leak (it keeps its pace).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Growth below this many bytes per step is not called growth, whatever its interval: the
/// autodiff graph's bookkeeping moves by a few hundred bytes from step to step.
pub const NEGLIGIBLE_BYTES_PER_STEP: f64 = 4096.0;

/// Growth of a pool's reserved bytes below this many bytes per step, while memory in use is
/// flat, is not called a leak: CubeCL 0.11's adaptive pool on wgpu (lavapipe), under the
/// correct loop of the monitor's example, reserved a steady 8.3 KiB a step over steps 5 to 60
/// in one run (21.7 KiB in another) before it settles near step 250; the stream-per-thread
/// leak it is there for grows by whole tensors a step (the memory-over-steps page measures it).
pub const POOL_NEGLIGIBLE_BYTES_PER_STEP: f64 = 64.0 * 1024.0;

/// How a series of bytes moves from step to step after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    /// The fitted change per step, in bytes.
    pub bytes_per_step: f64,
    /// The 95% interval of that slope, in bytes per step.
    pub low_bytes_per_step: f64,
    /// Its upper end.
    pub high_bytes_per_step: f64,
    /// Steps fitted.
    pub steps: usize,
    /// The slopes over the first and the last third of the steps alone (`None` under 9 steps).
    pub thirds_bytes_per_step: Option<(f64, f64)>,
}

/// A growth whose last third climbs at under this share of its first third's slope is
/// settling. A leak keeps its pace: each step leaves the same behind. A pool adapting to the
/// loop's sizes slows: CubeCL 0.11's default (adaptive) pool on wgpu, under a correct loop of
/// the monitor's example, reserved 21.7 KiB a step over steps 5 to 60 and 4 KiB over 5 to 300,
/// then nothing from step 250 on.
pub const SETTLING_SHARE: f64 = 0.5;

/// The least-squares slope of `series` against the step, its standard error and its
/// residual degrees of freedom; `None` with fewer than 3 values.
fn fit(series: &[f64]) -> Option<(f64, f64, f64)> {
    let n = series.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mean_x = (nf - 1.0) / 2.0;
    let mean_y = series.iter().sum::<f64>() / nf;
    let sxx: f64 = (0..n).map(|i| (i as f64 - mean_x).powi(2)).sum();
    let sxy: f64 = series
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - mean_x) * (y - mean_y))
        .sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let sse: f64 = series
        .iter()
        .enumerate()
        .map(|(i, y)| (y - (slope * i as f64 + intercept)).powi(2))
        .sum();
    Some((slope, (sse / (nf - 2.0) / sxx).sqrt(), nf - 2.0))
}

impl Growth {
    /// The least-squares slope of `series` against the step and its 95% interval (Student's
    /// t with n - 2 degrees of freedom), and its first and last thirds' slopes; `None` with
    /// fewer than 3 values.
    pub fn of(series: &[f64]) -> Option<Self> {
        let (slope, se, df) = fit(series)?;
        let t = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975);
        let third = series.len() / 3;
        let slope_of = |part: &[f64]| fit(part).map(|(s, _, _)| s);
        let thirds = slope_of(&series[..third]).zip(slope_of(&series[series.len() - third..]));
        Some(Self {
            bytes_per_step: slope,
            low_bytes_per_step: slope - t * se,
            high_bytes_per_step: slope + t * se,
            steps: series.len(),
            thirds_bytes_per_step: thirds,
        })
    }

    /// Whether the growth slows: its last third's slope under [`SETTLING_SHARE`] of its first
    /// third's (a series whose first third rises).
    pub fn settling(&self) -> bool {
        self.thirds_bytes_per_step
            .is_some_and(|(first, last)| first > 0.0 && last < SETTLING_SHARE * first)
    }

    /// Whether the window rises: the whole interval above zero and the slope above
    /// [`NEGLIGIBLE_BYTES_PER_STEP`], settling or not.
    pub fn rises(&self) -> bool {
        self.low_bytes_per_step > 0.0 && self.bytes_per_step > NEGLIGIBLE_BYTES_PER_STEP
    }

    /// Whether it grows: it [rises](Growth::rises) and is not [settling](Growth::settling).
    pub fn grows(&self) -> bool {
        self.rises() && !self.settling()
    }

    /// `+1.00 MiB/step [+0.98 MiB, +1.02 MiB] over 45 steps`, and where it settles, its thirds'
    /// slopes.
    pub fn words(&self) -> String {
        let settling = match self.thirds_bytes_per_step.filter(|_| self.settling()) {
            Some((first, last)) => format!(
                ", settling: {}/step over the first third, {}/step over the last",
                signed_bytes(first),
                signed_bytes(last)
            ),
            None => String::new(),
        };
        format!(
            "{}/step [{}, {}] over {} steps{settling}",
            signed_bytes(self.bytes_per_step),
            signed_bytes(self.low_bytes_per_step),
            signed_bytes(self.high_bytes_per_step),
            self.steps
        )
    }
}

fn signed_bytes(b: f64) -> String {
    if b < 0.0 {
        format!("-{}", bytes(-b))
    } else {
        format!("+{}", bytes(b))
    }
}

/// Bytes in binary units, two decimals (`1.50 MiB`), bytes below 1 KiB.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = b;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_line_has_its_slope_and_noise_around_a_level_does_not_grow() {
        let line: Vec<f64> = (0..20).map(|i| 1000.0 + 65536.0 * i as f64).collect();
        let g = Growth::of(&line).unwrap();
        assert!(
            (g.bytes_per_step - 65536.0).abs() < 1e-6 && g.grows(),
            "{g:?}"
        );
        let noise: Vec<f64> = (0..60)
            .map(|i| 1e8 + if i % 2 == 0 { 3e4 } else { -3e4 })
            .collect();
        let g = Growth::of(&noise).unwrap();
        assert!(!g.grows(), "{g:?}");
        assert!(g.low_bytes_per_step <= 0.0 && g.high_bytes_per_step >= 0.0);
        assert!(Growth::of(&[1.0, 2.0]).is_none());
    }

    #[test]
    fn a_pool_that_slows_is_settling_and_a_leak_that_keeps_its_pace_grows() {
        // Reserved bytes approaching a level: the whole window climbs, its later half barely.
        let settling: Vec<f64> = (0..55)
            .map(|i| 1.4e7 + 3e6 * (1.0 - (-(i as f64) / 8.0).exp()))
            .collect();
        let g = Growth::of(&settling).unwrap();
        assert!(
            g.low_bytes_per_step > 0.0 && g.settling() && !g.grows(),
            "{g:?}"
        );
        assert!(g.words().contains("settling"), "{}", g.words());
        // A pool added every ten steps (a loader thread per epoch): steps, the same pace.
        let pools: Vec<f64> = (0..55).map(|i| 1e7 * (i / 10) as f64).collect();
        let g = Growth::of(&pools).unwrap();
        assert!(g.grows() && !g.settling(), "{g:?}");
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(bytes(3.0 * 1024.0 * 1024.0 * 1024.0), "3.00 GiB");
    }
}
