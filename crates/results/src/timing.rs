//! Raw time samples of one measured operation and their summary.

use serde::{Deserialize, Serialize};

/// Raw samples of one timed operation and their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Every measured repeat, in seconds, in the order run (warm-up runs excluded).
    pub samples_s: Vec<f64>,
    /// Median of `samples_s`.
    pub median_s: f64,
    /// Fastest repeat.
    pub min_s: f64,
    /// Slowest repeat.
    pub max_s: f64,
    /// Median absolute deviation from the median, a spread robust to one slow outlier.
    pub mad_s: f64,
}

impl Timing {
    /// Summarises raw samples. Panics on an empty slice: a point is always repeated at least once.
    pub fn from_samples(samples_s: Vec<f64>) -> Self {
        assert!(!samples_s.is_empty(), "timing needs at least one sample");
        let median_s = median(&samples_s);
        let deviations: Vec<f64> = samples_s.iter().map(|s| (s - median_s).abs()).collect();
        Self {
            median_s,
            min_s: samples_s.iter().copied().fold(f64::INFINITY, f64::min),
            max_s: samples_s.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mad_s: median(&deviations),
            samples_s,
        }
    }

    /// Items per second at the median time.
    pub fn per_second(&self, items: f64) -> f64 {
        items / self.median_s
    }
}

/// Median of a non-empty slice (mean of the two middle values for an even length).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn summary_of_samples() {
        let t = Timing::from_samples(vec![1.0, 2.0, 10.0]);
        assert_eq!(t.median_s, 2.0);
        assert_eq!(t.min_s, 1.0);
        assert_eq!(t.max_s, 10.0);
        assert_eq!(t.mad_s, 1.0);
        assert_eq!(t.per_second(8.0), 4.0);
    }
}
