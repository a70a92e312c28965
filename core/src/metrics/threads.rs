//! The metrics' threads: how many (the bootstrap's, the sorts'), and a pool of the metrics' own
//! for the sorts, so that a sort never starts rayon's global pool (whose size
//! `RAYON_NUM_THREADS` sets without a bound: `rankrisk metrics` must run whatever it says, and
//! a training program starts the global pool itself, with its own checks).

use std::cmp::Ordering;
use std::sync::OnceLock;

use rayon::iter::{IndexedParallelIterator, ParallelIterator};
use rayon::slice::{ParallelSlice, ParallelSliceMut};

/// The threads the bootstrap evaluates its resamples on: `RAYON_NUM_THREADS` when it is set to
/// a positive number (the knob of the CPU kernels' pool, read by
/// [`threads_requested`](crate::threads_requested)), else the available parallelism; never
/// more than the available parallelism (more threads than cores only add buffers). A value
/// that is not a number counts as unset here (the training binaries refuse it when they start
/// their pool).
pub fn bootstrap_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    crate::threads_requested()
        .ok()
        .flatten()
        .map_or(cores, |t| t.min(cores))
}

/// The metrics' sorting pool: [`bootstrap_threads`] threads, started at the first large sort;
/// `None` when it cannot start (the sorts then run on the calling thread).
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(bootstrap_threads())
            .thread_name(|i| format!("rankrisk-metrics-sort-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Below this many elements a sort runs on the calling thread.
const PARALLEL_FROM: usize = 1 << 16;

/// `v.sort_unstable_by(compare)`, on the metrics' pool for a large `v` (the order of unequal
/// elements is the same; equal ones may land in another order, as any unstable sort's).
pub(crate) fn sort_unstable_by<T: Send>(
    v: &mut [T],
    compare: impl Fn(&T, &T) -> Ordering + Sync + Send,
) {
    match pool().filter(|p| v.len() >= PARALLEL_FROM && p.current_num_threads() > 1) {
        Some(p) => p.install(|| v.par_sort_unstable_by(compare)),
        None => v.sort_unstable_by(compare),
    }
}

/// `v.sort_unstable()` of integer keys, on the metrics' pool for a large `v`.
pub(crate) fn sort_unstable<T: Ord + Send>(v: &mut [T]) {
    sort_unstable_by(v, T::cmp);
}

/// `f(k, chunk)` on each `size`-element chunk of `v` (the last may be shorter), on the metrics'
/// pool for a large `v`; the results in chunk order, whatever the threads.
pub(crate) fn map_chunks<T: Sync, R: Send>(
    v: &[T],
    size: usize,
    f: impl Fn(usize, &[T]) -> R + Sync + Send,
) -> Vec<R> {
    match pool().filter(|p| v.len() >= PARALLEL_FROM && p.current_num_threads() > 1) {
        Some(p) => p.install(|| {
            v.par_chunks(size)
                .enumerate()
                .map(|(k, c)| f(k, c))
                .collect()
        }),
        None => v.chunks(size).enumerate().map(|(k, c)| f(k, c)).collect(),
    }
}

/// `f(k, chunk)` on each `size`-element chunk of `v` (the last may be shorter), on the metrics'
/// pool for a large `v`.
pub(crate) fn for_each_chunk_mut<T: Send>(
    v: &mut [T],
    size: usize,
    f: impl Fn(usize, &mut [T]) + Sync + Send,
) {
    match pool().filter(|p| v.len() >= PARALLEL_FROM && p.current_num_threads() > 1) {
        Some(p) => p.install(|| {
            v.par_chunks_mut(size)
                .enumerate()
                .for_each(|(k, c)| f(k, c))
        }),
        None => v.chunks_mut(size).enumerate().for_each(|(k, c)| f(k, c)),
    }
}

/// `(f(), g())`, side by side on the metrics' pool when it has more than one thread.
pub(crate) fn join<A: Send, B: Send>(
    f: impl FnOnce() -> A + Send,
    g: impl FnOnce() -> B + Send,
) -> (A, B) {
    match pool().filter(|p| p.current_num_threads() > 1) {
        Some(p) => p.install(|| rayon::join(f, g)),
        None => (f(), g()),
    }
}
