//! Least-squares line fits, used to turn measured points into bytes-per-sample figures.

use serde::{Deserialize, Serialize};

/// `y = slope * x + intercept`, fitted by ordinary least squares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// Change in y per unit of x.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
    /// Coefficient of determination (1 for a perfect line).
    pub r_squared: f64,
    /// Number of points fitted.
    pub n: usize,
}

impl LinearFit {
    /// Fits a line through `(x, y)` pairs; `None` with fewer than two distinct x values.
    pub fn fit(points: &[(f64, f64)]) -> Option<Self> {
        let n = points.len();
        if n < 2 {
            return None;
        }
        let nf = n as f64;
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / nf;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / nf;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        if sxx == 0.0 {
            return None;
        }
        let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
        let slope = sxy / sxx;
        let intercept = mean_y - slope * mean_x;
        let ss_tot: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
        let ss_res: f64 = points
            .iter()
            .map(|p| (p.1 - (slope * p.0 + intercept)).powi(2))
            .sum();
        let r_squared = if ss_tot == 0.0 {
            1.0
        } else {
            1.0 - ss_res / ss_tot
        };
        Some(Self {
            slope,
            intercept,
            r_squared,
            n,
        })
    }

    /// The 95% interval of the slope fitted through `points` (Student's t with n - 2 degrees
    /// of freedom on the residuals); `None` with fewer than 3 points.
    pub fn slope_interval(&self, points: &[(f64, f64)]) -> Option<(f64, f64)> {
        use statrs::distribution::{ContinuousCDF, StudentsT};
        let n = points.len() as f64;
        if n < 3.0 {
            return None;
        }
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        let sse: f64 = points
            .iter()
            .map(|p| (p.1 - self.predict(p.0)).powi(2))
            .sum();
        let se = (sse / (n - 2.0) / sxx).sqrt();
        let t = StudentsT::new(0.0, 1.0, n - 2.0).ok()?.inverse_cdf(0.975);
        Some((self.slope - t * se, self.slope + t * se))
    }

    /// The fitted y at `x`.
    pub fn predict(&self, x: f64) -> f64 {
        self.slope * x + self.intercept
    }

    /// The x at which the line reaches `y`; `None` for a flat line.
    pub fn solve(&self, y: f64) -> Option<f64> {
        (self.slope != 0.0).then(|| (y - self.intercept) / self.slope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line() {
        let pts: Vec<(f64, f64)> = (1..=6).map(|x| (x as f64, 3.0 * x as f64 + 7.0)).collect();
        let fit = LinearFit::fit(&pts).unwrap();
        assert!((fit.slope - 3.0).abs() < 1e-12);
        assert!((fit.intercept - 7.0).abs() < 1e-12);
        assert!((fit.r_squared - 1.0).abs() < 1e-12);
        assert_eq!(fit.n, 6);
        assert!((fit.solve(22.0).unwrap() - 5.0).abs() < 1e-12);
    }

    #[test]
    fn noisy_line_has_r_squared_below_one() {
        let pts = [(0.0, 0.0), (1.0, 1.5), (2.0, 1.5), (3.0, 3.0)];
        let fit = LinearFit::fit(&pts).unwrap();
        // Hand-computed: mean x 1.5, mean y 1.5, sxx 5, sxy 4.5 -> slope 0.9, intercept 0.15.
        assert!((fit.slope - 0.9).abs() < 1e-12);
        assert!((fit.intercept - 0.15).abs() < 1e-12);
        // ss_tot 4.5, ss_res 0.45 -> r^2 0.9
        assert!((fit.r_squared - 0.9).abs() < 1e-12);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(LinearFit::fit(&[(1.0, 2.0)]).is_none());
        assert!(LinearFit::fit(&[(1.0, 2.0), (1.0, 3.0)]).is_none());
    }
}
