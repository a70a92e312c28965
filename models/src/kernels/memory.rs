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
//!
//! Threads other than the main one allocate from their own glibc arenas, whose 64 MiB heaps
//! are unmapped whenever they fall empty, whatever the trim threshold. The training loop runs
//! on a worker of Rayon's pool ([`on_pool`](super::on_pool)), so DenseNet121's step at
//! 224 x 224 faulted 6.2 million pages in `bench_step`'s 5 steps and ran at 5.6-6.0 s.
//! [`reuse_freed_memory`] therefore also limits glibc to one arena (`M_ARENA_MAX`), which
//! glibc honours only where no second arena exists yet: [`on_pool`](super::on_pool), the
//! `rankrisk` binary and the examples call it before Rayon's pool starts. With one arena the same run faulted
//! 1.9 million pages and its step took 4.9-5.0 s, its peak resident set 4.5 GB against 4.7;
//! ResNet-20's step did not change (66-68 ms against 65-66, 16,000 page faults either way), as
//! its tensors fit the threads' heaps without emptying them.
//!
//! A process that sets glibc's own malloc parameters keeps them: when any of the environment
//! variables in [`GLIBC_MALLOC_VARIABLES`] is set, or `GLIBC_TUNABLES` names a `glibc.malloc`
//! tunable, nothing is changed (`MALLOC_MMAP_THRESHOLD_=131072` restores glibc's start value,
//! for instance).

use std::sync::OnceLock;

static APPLIED: OnceLock<bool> = OnceLock::new();

/// glibc's mmap threshold set by [`reuse_freed_memory`]: its largest accepted value on 64-bit
/// targets (half of a heap's 64 MiB maximum).
pub const MMAP_THRESHOLD: usize = 32 << 20;

/// glibc's trim threshold set by [`reuse_freed_memory`].
pub const TRIM_THRESHOLD: usize = 1 << 30;

/// The environment variables by which glibc reads its malloc parameters at start; when one is
/// set, [`reuse_freed_memory`] leaves the allocator as the user configured it.
pub const GLIBC_MALLOC_VARIABLES: [&str; 5] = [
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_MMAP_MAX_",
    "MALLOC_ARENA_MAX",
];

/// glibc's arena limit set by [`reuse_freed_memory`]: every thread allocates from the main
/// arena.
pub const ARENA_MAX: usize = 1;

/// Set glibc's mmap and trim thresholds to [`MMAP_THRESHOLD`] and [`TRIM_THRESHOLD`] and its
/// arena limit to [`ARENA_MAX`], once per process (later calls do nothing). The layer
/// functions call it when they first run a kernel, [`on_pool`](super::on_pool) before it
/// enters Rayon's pool; a program may call it earlier, and should call it before it starts
/// threads that allocate, as glibc ignores the arena limit once a thread has an arena of its
/// own. Returns whether the settings took effect: `false` on targets without glibc, and when
/// the user set glibc's malloc parameters ([`user_configured_malloc`]), where the allocator is
/// left as it is.
pub fn reuse_freed_memory() -> bool {
    *APPLIED.get_or_init(|| !user_configured_malloc(process_variable) && set_thresholds())
}

/// Whether the environment (`lookup` returns a variable's value, `None` when unset) sets one
/// of glibc's malloc parameters: one of [`GLIBC_MALLOC_VARIABLES`], or a `glibc.malloc.`
/// tunable in `GLIBC_TUNABLES`. A variable whose value is not UTF-8 counts as set.
pub fn user_configured_malloc(
    lookup: impl Fn(&str) -> Option<Result<String, std::ffi::OsString>>,
) -> bool {
    GLIBC_MALLOC_VARIABLES
        .iter()
        .any(|name| lookup(name).is_some())
        || match lookup("GLIBC_TUNABLES") {
            Some(Ok(tunables)) => tunables.contains("glibc.malloc."),
            Some(Err(_)) => true,
            None => false,
        }
}

/// An environment variable of this process, as [`user_configured_malloc`] reads it.
fn process_variable(name: &str) -> Option<Result<String, std::ffi::OsString>> {
    std::env::var_os(name).map(std::ffi::OsString::into_string)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() -> bool {
    let value = |v: usize| libc::c_int::try_from(v).expect("thresholds fit a C int");
    // SAFETY: `mallopt` only changes the allocator's parameters; both values are in the
    // ranges glibc documents for them.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, value(MMAP_THRESHOLD)) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, value(TRIM_THRESHOLD)) == 1
            && libc::mallopt(libc::M_ARENA_MAX, value(ARENA_MAX)) == 1
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
        if user_configured_malloc(process_variable) {
            // The test runner's environment sets glibc's parameters: they are kept.
            assert!(!reuse_freed_memory());
            return;
        }
        assert!(reuse_freed_memory());
        // Once per process: a second call reports the first one's outcome.
        assert!(reuse_freed_memory());
    }

    #[test]
    fn malloc_settings_of_the_user_are_recognized() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| Ok(v.to_string()))
            }
        };
        assert!(!user_configured_malloc(env(&[])));
        assert!(!user_configured_malloc(env(&[("MALLOC_ARENA", "2")])));
        assert!(user_configured_malloc(env(&[("MALLOC_ARENA_MAX", "4")])));
        assert!(user_configured_malloc(env(&[(
            "MALLOC_MMAP_THRESHOLD_",
            "131072"
        )])));
        assert!(user_configured_malloc(env(&[(
            "MALLOC_TRIM_THRESHOLD_",
            "0"
        )])));
        assert!(user_configured_malloc(env(&[(
            "GLIBC_TUNABLES",
            "glibc.malloc.mmap_threshold=131072"
        )])));
        // Tunables of other glibc parts leave the choice to us.
        assert!(!user_configured_malloc(env(&[(
            "GLIBC_TUNABLES",
            "glibc.cpu.hwcaps=-AVX512F"
        )])));
    }
}
