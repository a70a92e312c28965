//! Keeping freed tensor memory in the process, so that the next tensor of the same size reuses
//! it instead of faulting fresh pages in.
//!
//! glibc's `malloc` serves blocks above its mmap threshold (128 KiB at start, raised
//! dynamically up to 32 MiB) with fresh `mmap` pages and returns freed memory above the trim
//! threshold at the heap's top to the OS. A training step on the CPU allocates and frees the
//! same few hundred activation and gradient tensors (ResNet-20 at 28 x 28 and batch 32: up to
//! 1.6 MB each) every step, and each fresh page costs a fault and the kernel's zeroing of it:
//! 267,000 page faults in `bench_step`'s run, about 9% of a step's time (`perf`: page faults,
//! `clear_page`, `munmap`). With the mmap threshold fixed at 32 MiB (glibc's largest allowed
//! value) and the trim threshold at 1 GiB, the same run has 16,500 page faults and its step
//! takes 58-60 ms against 64-67 (six alternated runs each). Tensors above 32 MiB (DenseNet121's
//! activations at 224 x 224) are still mapped fresh; a process keeps up to 1 GiB of freed heap
//! memory instead of returning it (its peak resident set does not change).

use std::sync::OnceLock;

static APPLIED: OnceLock<bool> = OnceLock::new();

/// glibc's mmap threshold set by [`reuse_freed_memory`]: its largest accepted value on 64-bit
/// targets (half of a heap's 64 MiB maximum).
pub const MMAP_THRESHOLD: usize = 32 << 20;

/// glibc's trim threshold set by [`reuse_freed_memory`].
pub const TRIM_THRESHOLD: usize = 1 << 30;

/// Set glibc's mmap and trim thresholds to [`MMAP_THRESHOLD`] and [`TRIM_THRESHOLD`], once
/// per process (later calls do nothing). The layer functions call it when they first run a
/// kernel; a program may call it earlier. Returns whether both settings took effect: `false`
/// on targets without glibc, where the allocator is left as it is.
pub fn reuse_freed_memory() -> bool {
    *APPLIED.get_or_init(set_thresholds)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() -> bool {
    let value = |v: usize| libc::c_int::try_from(v).expect("thresholds fit a C int");
    // SAFETY: `mallopt` only changes the allocator's parameters; both values are in the
    // ranges glibc documents for them.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, value(MMAP_THRESHOLD)) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, value(TRIM_THRESHOLD)) == 1
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_both_thresholds() {
        assert!(reuse_freed_memory());
        // Once per process: a second call reports the first one's outcome.
        assert!(reuse_freed_memory());
    }
}
