//! The byte model of in-place operations, from reading Flex's rules: an op writes in place
//! when its (left) input is uniquely owned and contiguous; `square()` is `x * x` and so always
//! allocates; a row reduction allocates one value per row.

use super::{Case, InPlaceConfig, Style};
use crate::estimate::F32_BYTES;

/// Predicted bytes the computation adds at its peak above its input.
pub fn added_peak_bytes(config: &InPlaceConfig) -> f64 {
    let (rows, cols) = (config.rows, config.cols);
    let tensor = (rows * cols) as u64 * F32_BYTES;
    let row_values = rows as u64 * F32_BYTES;
    (match (config.case, config.style) {
        // The first op allocates the result; the three after it run in place on it.
        (Case::Chain, Style::KeepClone) => tensor,
        (Case::Chain, Style::Consume) => 0,
        // centered (new, x is shared) + square + the variance's row values.
        (Case::LayerNorm, Style::KeepClone) => 2 * tensor + row_values,
        // centered is x's buffer; square + the variance's row values.
        (Case::LayerNorm, Style::Consume) => tensor + row_values,
        // The result, in a new buffer; in x's.
        (Case::Touch, Style::KeepClone) => tensor,
        (Case::Touch, Style::Consume) => 0,
    }) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consuming_saves_one_tensor_in_both_cases() {
        for case in super::super::CASES {
            let at = |style| {
                added_peak_bytes(&InPlaceConfig {
                    case,
                    style,
                    rows: 8,
                    cols: 16,
                    seed: 0,
                })
            };
            assert_eq!(
                at(Style::KeepClone) - at(Style::Consume),
                (8 * 16 * 4) as f64
            );
        }
    }
}
