//! The stratified bootstrap's resamples (`super::bootstrap`) evaluated on several threads:
//! each resample is drawn from its own stream (`super::draws`), so any thread can take any
//! resample and the replicates do not depend on the number of threads.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::auc::MetricError;
use super::resample::{Columns, Scratch};

/// Resamples per task: few enough that the threads finish together, enough that taking a task
/// costs nothing beside it.
const PER_TASK: usize = 4;

/// Runs `task(thread, i)` for every `i` in `0..tasks` on up to `threads` threads, the calling
/// thread among them (it is thread 0), each taking the next task as it finishes one, and
/// returns each task's result with its number. A thread that cannot be started leaves its
/// share to the others, so that the work is done (on fewer threads) whatever the system allows.
fn run_tasks<R, F>(threads: usize, tasks: usize, task: F) -> Vec<(usize, R)>
where
    R: Send,
    F: Fn(usize, usize) -> R + Sync,
{
    let next = AtomicUsize::new(0);
    let work = |thread: usize| {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= tasks {
                return done;
            }
            done.push((i, task(thread, i)));
        }
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads.min(tasks))
            .filter_map(|t| {
                let work = &work;
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || work(t))
                    .ok()
            })
            .collect();
        let mut all = work(0);
        for h in handles {
            // A worker's panic is passed on as the scope would.
            match h.join() {
                Ok(done) => all.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    })
}

/// Every resample `b` in `0..resamples` evaluated ([`Columns::evaluate`]) on up to `threads`
/// threads, each with its own buffers: `out[2 c][b]` our pAUC of column `c`, `out[2 c + 1][b]`
/// its two-way pAUC.
pub(crate) fn run_resamples(
    work: &Columns<'_>,
    resamples: usize,
    threads: usize,
    out: &mut [Vec<f64>],
) -> Result<(), MetricError> {
    let n = work.classes.0 + work.classes.1;
    let tasks = resamples.div_ceil(PER_TASK);
    let threads = threads.clamp(1, tasks.max(1));
    let scratches = (0..threads)
        .map(|_| Scratch::new(n, work.columns.len()).map(Mutex::new))
        .collect::<Result<Vec<_>, _>>()?;
    let results = run_tasks(threads, tasks, |thread, i| {
        let mut scratch = scratches[thread].lock().unwrap_or_else(|p| p.into_inner());
        let mut values = Vec::with_capacity(2 * work.columns.len());
        let range = i * PER_TASK..((i + 1) * PER_TASK).min(resamples);
        range
            .map(|b| {
                work.evaluate(&mut scratch, b, &mut values);
                values.clone()
            })
            .collect::<Vec<_>>()
    });
    for (i, values) in results {
        for (k, v) in values.into_iter().enumerate() {
            for (column, x) in out.iter_mut().zip(v) {
                column[i * PER_TASK + k] = x;
            }
        }
    }
    Ok(())
}
