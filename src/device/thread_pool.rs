//! The CPU backends' thread pool (rayon's global pool, which Burn's CPU kernels and ours share),
//! started on purpose before the first kernel runs, so that a pool that cannot start is an
//! error that says why (exit 2) instead of a panic inside a kernel ("The global thread pool has
//! not been initialized") or an abort.

use std::sync::OnceLock;

use rankrisk_core::threads_requested;

use super::error::BackendError;

/// The variable that sets the pool's size (rayon's own), read by the core crate's
/// [`threads_requested`] alone.
pub use rankrisk_core::THREADS_ENV;

/// The most threads per core the pool is started with: more only adds stacks and switches.
pub const MAX_THREADS_PER_CORE: usize = 64;

static STARTED: OnceLock<Result<usize, BackendError>> = OnceLock::new();

/// Start the pool once per process (later calls return the first answer): `RAYON_NUM_THREADS`
/// threads when it is set to a positive number, else one per core. Returns the pool's size.
///
/// # Errors
/// [`BackendError::ThreadPool`] when `RAYON_NUM_THREADS` is not a number, asks for more than
/// [`MAX_THREADS_PER_CORE`] threads per core, or the threads cannot be started (a thread or
/// memory limit), each naming the variable and the count.
pub fn start() -> Result<usize, BackendError> {
    STARTED.get_or_init(start_once).clone()
}

fn start_once() -> Result<usize, BackendError> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let asked = match threads_requested() {
        Ok(n) => n.map(|n| (n, std::env::var(THREADS_ENV).unwrap_or_default())),
        Err(v) => {
            return Err(BackendError::ThreadPool {
                setting: format!("{THREADS_ENV}={v}"),
                message: "not a number of threads".into(),
            });
        }
    };
    let threads = asked.as_ref().map_or(cores, |(n, _)| *n);
    let setting = match &asked {
        Some((_, v)) => format!("{THREADS_ENV}={v}"),
        None => format!("{threads} threads, one per core ({THREADS_ENV} unset)"),
    };
    if threads > MAX_THREADS_PER_CORE * cores {
        return Err(BackendError::ThreadPool {
            setting,
            message: format!(
                "more than {MAX_THREADS_PER_CORE} threads per core ({cores} cores); leave \
                 {THREADS_ENV} unset for one per core"
            ),
        });
    }
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
    {
        Ok(()) => Ok(threads),
        // Started already (by a kernel that ran first, or by the embedding program): in use.
        // rayon names that case only in its message (`ThreadPoolBuildError` has no public
        // kind); every other failure is its threads not starting.
        Err(e) if e.to_string().contains("already been initialized") => {
            Ok(rayon::current_num_threads())
        }
        Err(e) => Err(BackendError::ThreadPool {
            setting,
            message: format!("the threads cannot be started ({e}); set {THREADS_ENV} lower"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_starts_once_and_answers_the_same_after() {
        let first = start();
        assert_eq!(format!("{:?}", start()), format!("{first:?}"));
        assert!(first.is_ok_and(|n| n >= 1));
    }
}
