//! Deliberately wrong backward terms, switched on only by this crate's own tests: each
//! correctness check must fail when its op's backward drops a term (the checks can fail).
//! Outside `cargo test` of this crate the switches are constant `false` and compile away.

#[cfg(test)]
use std::sync::atomic::{AtomicU8, Ordering};
#[cfg(test)]
use std::sync::{Mutex, MutexGuard};

/// The mutant switched on (0: none). Global, not per thread, since Burn may run a backward
/// elsewhere; the tests hold [`exclusive`] so that no other check runs meanwhile.
#[cfg(test)]
static MUTANT: AtomicU8 = AtomicU8::new(0);
#[cfg(test)]
static CHECKS: Mutex<()> = Mutex::new(());

/// A wrong backward.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Mutant {
    /// Attention's backward without `- rowsum(P ∘ dP)`.
    SoftmaxDelta = 1,
    /// The cross-entropy's backward without `- onehot(target)`.
    TargetTerm = 2,
}

/// The tests' lock: one check at a time, so that a mutant reaches only its own check.
#[cfg(test)]
pub(crate) fn exclusive() -> MutexGuard<'static, ()> {
    CHECKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` with `mutant` switched on (the caller holds [`exclusive`]).
#[cfg(test)]
pub(crate) fn with<T>(mutant: Mutant, f: impl FnOnce() -> T) -> T {
    MUTANT.store(mutant as u8, Ordering::SeqCst);
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    MUTANT.store(0, Ordering::SeqCst);
    out.unwrap_or_else(|e| std::panic::resume_unwind(e))
}

#[cfg(test)]
fn is(mutant: Mutant) -> bool {
    MUTANT.load(Ordering::SeqCst) == mutant as u8
}

/// Whether attention's backward drops its softmax term (tests only).
pub(crate) fn drops_softmax_delta() -> bool {
    #[cfg(test)]
    return is(Mutant::SoftmaxDelta);
    #[cfg(not(test))]
    false
}

/// Whether the cross-entropy's backward drops its target term (tests only).
pub(crate) fn drops_target_term() -> bool {
    #[cfg(test)]
    return is(Mutant::TargetTerm);
    #[cfg(not(test))]
    false
}
