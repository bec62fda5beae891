//! The `workbench` binary. It installs the counting global allocator, so that the CPU backend's
//! memory is measured in every child process it spawns, then hands over to the CLI.
//!
//! The feature `uncounted-allocator` leaves the system allocator in place: a binary that can only
//! time, built to measure what the counting costs (`scripts/probe-overhead.sh`).

#[cfg(not(feature = "uncounted-allocator"))]
#[global_allocator]
static ALLOCATOR: experiments::harness::probe::host::CountingAllocator =
    experiments::harness::probe::host::CountingAllocator;

fn main() -> std::process::ExitCode {
    workbench::cli::main()
}
