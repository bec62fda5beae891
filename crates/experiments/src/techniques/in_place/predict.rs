//! The byte model of in-place operations, per backend. Flex's rules, read before measuring: an
//! op writes in place when its (left) input is uniquely owned and contiguous; `square()` is
//! `x * x` and so always allocates; a row reduction allocates one value per row.
//! burn-cubecl's ([`Allocator::CubeCl`]), written after the wgpu measurements bracketed the
//! peaks (explanations, not predictions): a lone op runs in place on a uniquely owned buffer
//! as on Flex (`can_mut()` in burn-cubecl's kernels); fusion writes a chain of element-wise ops
//! in one kernel into a buffer of its own, so the chain's intermediates never exist and
//! consuming its input does not let it reuse the input's buffer (the pool reserved a second
//! tensor's page during the consuming chain); layer norm's centring and squaring are read
//! inside its two row reductions, which keep a value per row each (mean and variance), and its
//! normalised output is a new tensor whether the input is consumed or kept.

use super::{Case, InPlaceConfig, Style};
use estimator::estimate::{Allocator, F32_BYTES};

/// Predicted bytes the computation adds at its peak above its input, under `allocator`'s
/// rules.
pub fn added_peak_bytes(config: &InPlaceConfig, allocator: Allocator) -> f64 {
    let (rows, cols) = (config.rows, config.cols);
    let tensor = (rows * cols) as u64 * F32_BYTES;
    let row_values = rows as u64 * F32_BYTES;
    if allocator == Allocator::CubeCl {
        return (match (config.case, config.style) {
            // The fused chain's output, in a buffer of its own, beside its input.
            (Case::Chain, _) => tensor,
            // The normalised output, and the mean's and variance's values per row.
            (Case::LayerNorm, _) => tensor + 2 * row_values,
            (Case::Touch, Style::KeepClone) => tensor,
            (Case::Touch, Style::Consume) => 0,
        }) as f64;
    }
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
    fn consuming_saves_one_tensor_on_flex_in_every_case() {
        for case in super::super::CASES {
            let at = |style| {
                added_peak_bytes(
                    &InPlaceConfig {
                        case,
                        style,
                        rows: 8,
                        cols: 16,
                        seed: 0,
                    },
                    Allocator::Flex,
                )
            };
            assert_eq!(
                at(Style::KeepClone) - at(Style::Consume),
                (8 * 16 * 4) as f64
            );
        }
    }
}
