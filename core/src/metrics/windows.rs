//! The stratified bootstrap's resamples (`super::bootstrap`) made, decoded and evaluated in
//! windows of several resamples on several threads, with memory bounded whatever the number of
//! threads asked for.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::auc::MetricError;
use super::ci::{Bootstrap, try_with_capacity};
use super::draws::{Keystream, decode_resamples};
use super::resample::{Columns, Counter};

/// The most memory the bootstrap's buffers take (a window of resamples' draws and each
/// thread's counts): fewer resamples per window, and fewer threads, when more would not fit,
/// whatever the number of threads asked for.
pub(crate) const WORKER_MEMORY: usize = 512 << 20;

/// How [`run_windows`] splits the work: threads, resamples per window, words per window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WindowPlan {
    /// Threads (the calling one among them).
    pub(crate) threads: usize,
    /// Resamples per window.
    pub(crate) window: usize,
    /// Words of the stream made per window (more when they run short).
    pub(crate) len: usize,
}

/// The plan for `resamples` resamples of `n` samples on up to `threads` threads: at least one
/// resample per thread and window, more when they are small (fewer rounds of thread starts), as
/// many as [`WORKER_MEMORY`] holds (three windows of 4 bytes per draw, and one byte of counts
/// per slot and thread); a window's words with a slack of 1/64 and a block for second words
/// (one in `2^32 / class size` draws).
pub(crate) fn window_plan(n: usize, threads: usize, resamples: usize) -> WindowPlan {
    let by_memory = (WORKER_MEMORY / (13 * n).max(1)).max(1);
    let per_thread = ((1 << 22) / n.max(1)).max(1);
    let threads = threads.min(by_memory).max(1);
    let window = (threads * per_thread).min(by_memory).min(resamples).max(1);
    WindowPlan {
        threads,
        window,
        len: window * n + window * n / 64 + 4096,
    }
}

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

/// The words of one window of resamples: made from stream position `pos` on, the window's
/// draws starting at word `start` (at or after `pos`: the words are made before the end of the
/// window before is known, from a lower bound of it).
struct Window {
    words: Vec<u32>,
    pos: u128,
    start: u128,
}

impl Window {
    /// Room for `len` words.
    fn new(len: usize) -> Result<Self, MetricError> {
        let mut words = try_with_capacity(len, "resample draws")?;
        words.resize(len, 0);
        Ok(Window {
            words,
            pos: 0,
            start: 0,
        })
    }

    /// Decode `count` resamples from word `start` on, in place: the draws of resample `r`
    /// become `self.draws(r)`. When the words made run short (a window's slack for second
    /// words ran out, or its lower bound was too far below `start`), the stream is made again
    /// from `start`, longer, on this thread. Returns the words taken.
    fn decode(
        &mut self,
        keystream: &Keystream,
        count: usize,
        classes: (usize, usize),
    ) -> Result<usize, MetricError> {
        loop {
            let offset = (self.start - self.pos) as usize;
            if offset < self.words.len()
                && let Some(taken) = decode_resamples(&mut self.words[offset..], count, classes)
            {
                return Ok(taken);
            }
            let more = self.words.len() / 8 + 4096;
            let len = self.words.len() + more;
            self.words
                .try_reserve(more)
                .map_err(|_| MetricError::OutOfMemory {
                    what: "resample draws",
                    count: len,
                })?;
            self.words.resize(len, 0);
            self.pos = self.start;
            keystream.words_at(self.pos, &mut self.words);
        }
    }

    /// The draws of resample `r` (after [`Window::decode`]) of `n` samples.
    fn draws(&self, r: usize, n: usize) -> &[u32] {
        let offset = (self.start - self.pos) as usize;
        &self.words[offset + r * n..offset + (r + 1) * n]
    }
}

/// One task of a round of [`run_windows`].
enum Task {
    /// Decode the next window.
    Decode,
    /// Make stretch `i` of the words of the window after next.
    Make(usize),
    /// Evaluate resample `r` of the current window.
    Evaluate(usize),
}

/// The resamples of [`replicates`] in windows of several at a time, three windows in flight:
/// in each round, `threads` threads evaluate the current window's resamples (each thread with
/// its own counts), one of them decodes the next window's words into draws in order
/// ([`decode_resamples`]: where a draw starts depends on every draw before it), and the others
/// make the words of the window after that ([`Keystream::words_at`], in stretches, from a lower
/// bound of where it starts). Nothing waits on a single thread but the first window. The
/// buffers take at most about [`WORKER_MEMORY`] (fewer resamples per window, and fewer threads,
/// when `n` is large), whatever the number of threads asked for; the replicates do not depend
/// on it.
pub(crate) fn run_windows(
    work: &Columns<'_>,
    boot: &Bootstrap,
    classes: (usize, usize),
    plan: WindowPlan,
    out: &mut [Vec<f64>],
) -> Result<(), MetricError> {
    let n = classes.0 + classes.1;
    let WindowPlan {
        threads,
        window,
        len,
    } = plan;
    let counts: Vec<usize> = (0..boot.resamples)
        .step_by(window)
        .map(|b| window.min(boot.resamples - b))
        .collect();
    let counters = (0..threads)
        .map(|_| Counter::new(n).map(Mutex::new))
        .collect::<Result<Vec<_>, _>>()?;
    let keystream = Keystream::new(boot.seed);
    let mut ring = [Window::new(len)?, Window::new(len)?, Window::new(len)?];
    keystream.words_at(0, &mut ring[0].words);
    let taken = ring[0].decode(&keystream, counts[0], classes)?;
    // Where the next window to decode starts (known once the window before it is decoded).
    let mut next_start = taken as u128;
    if counts.len() > 1 {
        ring[1].pos = next_start;
        ring[1].start = next_start;
        keystream.words_at(next_start, &mut ring[1].words);
    }
    let mut b = 0;
    for k in 0..counts.len() {
        let [w0, w1, w2] = &mut ring;
        let (current, decoded, made) = match k % 3 {
            0 => (&*w0, w1, w2),
            1 => (&*w1, w2, w0),
            _ => (&*w2, w0, w1),
        };
        let decode = counts.get(k + 1).copied();
        let make = counts.get(k + 2).is_some();
        if let Some(c) = decode {
            decoded.start = next_start;
            if make {
                made.pos = next_start + (c * n) as u128; // each draw takes a word at least
                made.words.truncate(len);
            }
        }
        let stretch = len.div_ceil(threads);
        let made_pos = made.pos;
        let parts: Vec<Mutex<&mut [u32]>> = if make {
            made.words.chunks_mut(stretch).map(Mutex::new).collect()
        } else {
            Vec::new()
        };
        let decoded = Mutex::new(decoded);
        let mut tasks = Vec::new();
        tasks.extend(decode.map(|_| Task::Decode));
        tasks.extend((0..parts.len()).map(Task::Make));
        tasks.extend((0..counts[k]).map(Task::Evaluate));
        let results = run_tasks(threads, tasks.len(), |thread, i| match tasks[i] {
            Task::Decode => {
                let mut w = decoded.lock().unwrap_or_else(|p| p.into_inner());
                Some(Err(w.decode(&keystream, decode.unwrap_or(0), classes)))
            }
            Task::Make(part) => {
                if let Ok(mut words) = parts[part].lock() {
                    keystream.words_at(made_pos + (part * stretch) as u128, &mut words);
                }
                None
            }
            Task::Evaluate(r) => {
                let mut values = Vec::with_capacity(2 * work.columns.len());
                let mut counter = counters[thread].lock().unwrap_or_else(|p| p.into_inner());
                work.evaluate(&mut counter, current.draws(r, n), &mut values);
                Some(Ok((r, values)))
            }
        });
        drop(parts);
        for result in results.into_iter().filter_map(|(_, v)| v) {
            match result {
                Ok((r, values)) => {
                    for (column, v) in out.iter_mut().zip(values) {
                        column[b + r] = v;
                    }
                }
                Err(taken) => next_start += taken? as u128,
            }
        }
        b += counts[k];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_made_from_below_its_start_or_too_short_decodes_what_the_stream_holds() {
        let classes = (5, 9);
        let n = 14;
        let keystream = Keystream::new(3);
        let mut all = vec![0; 10 * n + 100];
        keystream.words_at(0, &mut all);
        let mut want = all.clone();
        let start = 11u128;
        let taken = decode_resamples(&mut want[11..], 4, classes).unwrap();
        for (pos, len) in [(11u128, 4 * n + 50), (4, 4 * n + 50), (0, 3), (2, 4 * n)] {
            let mut w = Window::new(len).unwrap();
            w.pos = pos;
            w.start = start;
            keystream.words_at(pos, &mut w.words);
            assert_eq!(w.decode(&keystream, 4, classes).unwrap(), taken);
            for r in 0..4 {
                assert_eq!(
                    w.draws(r, n),
                    &want[11 + r * n..11 + (r + 1) * n],
                    "{pos} {len}"
                );
            }
        }
    }
}
