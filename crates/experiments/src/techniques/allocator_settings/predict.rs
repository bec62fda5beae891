//! The byte model of the growing sequence: what its live tensors hold after each allocation
//! (exact on every backend: the last [`KEEP`] tensors, `i` times the base each),
//! and, as a reference line rather than a prediction, what a pool would hold that never reused
//! a freed page for a larger tensor: every tensor of the sequence so far. No rule here predicts
//! a pool's reserved bytes: they depend on its page sizes, its running average of allocation
//! sizes (cubecl-runtime's `ExclusiveMemoryPool` makes pages of at least that) and when it frees
//! unused pages, which the page measures instead.

use super::KEEP;

/// Bytes of live tensors after allocation `i` (1-based) of a sequence whose tensor `j` has
/// `j * base` bytes.
pub fn in_use_after(i: u64, base: u64) -> f64 {
    let first = i.saturating_sub(KEEP as u64 - 1).max(1);
    ((first..=i).sum::<u64>() * base) as f64
}

/// Bytes of every tensor allocated up to allocation `i`: what a pool that reuses no freed page
/// for a larger tensor, and frees none, would hold.
pub fn never_reused_after(i: u64, base: u64) -> f64 {
    ((1..=i).sum::<u64>() * base) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_two_tensors_are_live() {
        assert_eq!(in_use_after(1, 10), 10.0);
        assert_eq!(in_use_after(2, 10), 30.0);
        assert_eq!(in_use_after(5, 10), 90.0);
        assert_eq!(never_reused_after(5, 10), 150.0);
    }
}
