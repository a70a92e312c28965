//! The stratified bootstrap of our pAUC over FPR `[alpha, beta]` (eq. 2 of
//! papers/partial-auc-fpr-range-agd-sbcd.txt) at scale, in pROC's convention (Robin et al.
//! 2011; see [`super::ci`]): the same resamples as [`super::ci::bootstrap_interval`] draws and,
//! to the last bit, the same replicates as
//! `bootstrap_interval(scores, labels, boot, |s, y| pauc(s, y, alpha, beta))`, in
//! `O(n log n + B n)` for `B` resamples of `n` scores instead of `O(B n log n)`:
//!
//! - each score column is sorted once: its samples in descending order of score (tied scores,
//!   `-0.0` and `0.0` included, in one group), each named by its slot, `k` for the `k`-th
//!   positive and `N+ + k` for the `k`-th negative in index order;
//! - a resample is drawn as slots, from the one seeded `StdRng` in the old order (positives
//!   first, each draw `random_range(0..class size)`, read a block of words at a time by
//!   `super::draws`), then counted: how often each slot was drawn;
//! - its pAUC is one pass over the sorted column that feeds each group's counts of drawn
//!   positives and negatives to the credit sum of eq. (2) (`super::auc`'s `CreditSum`, the same
//!   arithmetic as [`super::auc::pauc`]), stopping at the last negative rank of weight;
//! - the draws come from one thread, in order, as the seeded stream must be read; counting and
//!   the passes run on worker threads ([`bootstrap_threads`]: `RAYON_NUM_THREADS`, else one per
//!   core), which leaves the draws (about 2e9 random numbers for 2000 resamples of 10^6 scores)
//!   as the only sequential part. The replicates do not depend on the number of threads.

use std::sync::{Mutex, mpsc};

use super::auc::{CreditSum, MetricError, RankRange, normalized, pauc, split_checked};
use super::ci::{
    Bootstrap, Interval, PairedTest, compare_replicates, interval_of_replicates, resampled,
    try_with_capacity, z_of_level,
};
use super::draws::{Stream, draw};
use crate::math::order::{ascending, descending};

/// Marks the last sample of a group of tied scores in a sorted column.
const LAST: u32 = 1 << 31;

/// Below this many draws (`n B`) the bootstrap runs on the calling thread alone.
const THREADED_FROM: usize = 1 << 22;

/// The slots of `col` in descending order of score, [`LAST`] on the last of each tie group.
fn sort_column(col: &[f64], pos: &[usize], neg: &[usize]) -> Result<Vec<u32>, MetricError> {
    let n = pos.len() + neg.len();
    let mut keyed: Vec<(f64, u32)> = try_with_capacity(n, "sorted scores")?;
    keyed.extend(
        pos.iter()
            .chain(neg)
            .enumerate()
            .map(|(slot, &i)| (col[i], slot as u32)),
    );
    keyed.sort_unstable_by(|a, b| descending(&a.0, &b.0).then(a.1.cmp(&b.1)));
    let mut order = try_with_capacity(n, "sorted scores")?;
    order.extend(keyed.iter().enumerate().map(|(k, &(s, slot))| {
        let last = keyed
            .get(k + 1)
            .is_none_or(|next| ascending(&next.0, &s).is_ne());
        if last { slot | LAST } else { slot }
    }));
    Ok(order)
}

/// How often each slot was drawn.
enum Counts<'a> {
    /// Every count below 256 (one byte per slot keeps the counts in cache).
    Narrow(&'a [u8]),
    /// Some slot drawn 256 times or more.
    Wide(&'a [u32]),
}

/// The count buffers of one thread.
struct Counter {
    narrow: Vec<u8>,
    wide: Vec<u32>,
}

impl Counter {
    fn new(slots: usize) -> Result<Self, MetricError> {
        let mut narrow = try_with_capacity(slots, "resample counts")?;
        narrow.resize(slots, 0);
        Ok(Counter {
            narrow,
            wide: Vec::new(),
        })
    }

    /// Count `draws`, in bytes unless a count wraps.
    fn count(&mut self, draws: &[u32]) -> Counts<'_> {
        self.narrow.fill(0);
        let mut wrapped = false;
        for &s in draws {
            let c = &mut self.narrow[s as usize];
            *c = c.wrapping_add(1);
            wrapped |= *c == 0;
        }
        if !wrapped {
            return Counts::Narrow(&self.narrow);
        }
        self.wide.clear();
        self.wide.resize(self.narrow.len(), 0);
        for &s in draws {
            self.wide[s as usize] += 1;
        }
        Counts::Wide(&self.wide)
    }
}

/// The pAUC of one resample: one pass over the sorted column with the resample's counts.
fn resample_pauc<C: Copy + Default + Into<u64>>(
    order: &[u32],
    counts: &[C],
    positives: usize,
    range: RankRange,
) -> f64 {
    const CHUNK: usize = 2048;
    let mut sum = CreditSum::new(range);
    // The group's draws, and its draws of negatives (without a branch on the class, which
    // alternates unpredictably along the sorted column).
    let (mut all, mut neg) = (0u64, 0u64);
    // The counts of a chunk are gathered first, in a loop without branches, so that their
    // scattered loads overlap instead of waiting behind the groups' branches.
    let mut gathered = [C::default(); CHUNK];
    'walk: for chunk in order.chunks(CHUNK) {
        for (g, &e) in gathered.iter_mut().zip(chunk) {
            *g = counts[(e & !LAST) as usize];
        }
        for (&g, &e) in gathered.iter().zip(chunk) {
            let c: u64 = g.into();
            all += c;
            neg += c & 0u64.wrapping_sub(u64::from((e & !LAST) as usize >= positives));
            if e & LAST != 0 {
                if all > 0 && !sum.push(all - neg, neg) {
                    break 'walk;
                }
                (all, neg) = (0, 0);
            }
        }
    }
    normalized(sum.total(), positives, range)
}

/// What every resample is evaluated against.
struct Columns<'a> {
    orders: &'a [Vec<u32>],
    positives: usize,
    range: RankRange,
}

impl Columns<'_> {
    /// The pAUC of every column on one resample.
    fn evaluate(&self, counter: &mut Counter, draws: &[u32], out: &mut Vec<f64>) {
        out.clear();
        let counts = counter.count(draws);
        out.extend(self.orders.iter().map(|order| match counts {
            Counts::Narrow(c) => resample_pauc(order, c, self.positives, self.range),
            Counts::Wide(c) => resample_pauc(order, c, self.positives, self.range),
        }));
    }
}

/// The threads the bootstrap evaluates its resamples on: `RAYON_NUM_THREADS` when it is set to
/// a positive number (the knob of the CPU kernels' pool), else the available parallelism.
pub fn bootstrap_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&t| t > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
}

/// The pAUC over FPR `[alpha, beta]` of each of `boot.resamples` stratified resamples, for every
/// score column at once (paired comparisons see the same resamples): the replicates of
/// [`super::ci::bootstrap_interval`] with `|s, y| pauc(s, y, alpha, beta)`, bit for bit, in
/// `O(n log n + B n)`, on [`bootstrap_threads`] threads. `out[c][b]` is column `c` on resample
/// `b`.
///
/// # Errors
/// [`MetricError::TooFewResamples`] for fewer than 2 resamples; as [`pauc`] for a column
/// (lengths, non-finite scores, a missing class, the range); [`MetricError::OutOfMemory`] when
/// the buffers cannot be allocated.
pub fn pauc_replicates(
    columns: &[&[f64]],
    labels: &[f64],
    boot: &Bootstrap,
    alpha: f64,
    beta: f64,
) -> Result<Vec<Vec<f64>>, MetricError> {
    pauc_replicates_on(columns, labels, boot, (alpha, beta), bootstrap_threads())
}

/// [`pauc_replicates`] of the FPR range `(alpha, beta)` on `threads` threads (one: all on the
/// calling thread). The replicates are the same for every number of threads.
///
/// # Errors
/// As [`pauc_replicates`].
pub fn pauc_replicates_on(
    columns: &[&[f64]],
    labels: &[f64],
    boot: &Bootstrap,
    (alpha, beta): (f64, f64),
    threads: usize,
) -> Result<Vec<Vec<f64>>, MetricError> {
    if boot.resamples < 2 {
        return Err(MetricError::TooFewResamples(boot.resamples));
    }
    for c in columns {
        split_checked(c, labels)?;
    }
    if columns.is_empty() {
        return Ok(Vec::new());
    }
    let pos: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] > 0.0).collect();
    let neg: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] <= 0.0).collect();
    let range = RankRange::from_fpr(alpha, beta, neg.len())?;
    let n = labels.len();
    if n >= LAST as usize {
        // Slots do not fit the sorted columns' 31 bits: copy each resample instead.
        return resampled(columns, labels, boot, &|s: &[f64], y: &[f64]| {
            pauc(s, y, alpha, beta)
        });
    }
    let orders = columns
        .iter()
        .map(|c| sort_column(c, &pos, &neg))
        .collect::<Result<Vec<_>, _>>()?;
    let work = Columns {
        orders: &orders,
        positives: pos.len(),
        range,
    };
    let mut out = Vec::with_capacity(columns.len());
    for _ in columns {
        let mut values = try_with_capacity(boot.resamples, "bootstrap replicates")?;
        values.resize(boot.resamples, f64::NAN);
        out.push(values);
    }
    let mut rng = Stream::new(boot.seed);
    let threaded_here = threads > 1 && n.saturating_mul(boot.resamples) >= THREADED_FROM;
    if !(threaded_here && threaded(&work, &mut rng, (pos.len(), neg.len()), threads, &mut out)?) {
        let mut counter = Counter::new(n)?;
        let mut draws = try_with_capacity(n, "resample draws")?;
        let mut values = Vec::with_capacity(columns.len());
        for b in 0..boot.resamples {
            draw(&mut rng, pos.len(), neg.len(), &mut draws);
            work.evaluate(&mut counter, &draws, &mut values);
            for (column, v) in out.iter_mut().zip(&values) {
                column[b] = *v;
            }
        }
    }
    Ok(out)
}

/// One resample handed to a worker: its number and its draws.
type Job = (usize, Vec<u32>);
/// A worker's answer: the resample's number, its pAUC per column, the draws' buffer back.
type Done = (usize, Vec<f64>, Vec<u32>);

/// The resamples of [`pauc_replicates`] with the draws on this thread and the evaluations on
/// `workers` threads; at most `workers + 2` resamples' draws are held at a time. False, with
/// nothing drawn, when no thread could be started.
fn threaded(
    work: &Columns<'_>,
    rng: &mut Stream,
    (positives, negatives): (usize, usize),
    workers: usize,
    out: &mut [Vec<f64>],
) -> Result<bool, MetricError> {
    let n = positives + negatives;
    let resamples = out[0].len();
    let counters = (0..workers)
        .map(|_| Counter::new(n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut store = |(b, values, draws): Done, free: &mut Vec<Vec<u32>>| {
        for (c, v) in values.into_iter().enumerate() {
            out[c][b] = v;
        }
        free.push(draws);
    };
    let (job_tx, job_rx) = mpsc::channel::<Job>();
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    std::thread::scope(|scope| {
        let mut started = 0;
        for mut counter in counters {
            let (job_rx, done_tx) = (&job_rx, done_tx.clone());
            let worker = move || {
                let mut values = Vec::new();
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((b, draws)) = job else { return };
                    work.evaluate(&mut counter, &draws, &mut values);
                    if done_tx
                        .send((b, std::mem::take(&mut values), draws))
                        .is_err()
                    {
                        return;
                    }
                }
            };
            // A thread that cannot be started leaves its share to the others.
            started += usize::from(
                std::thread::Builder::new()
                    .spawn_scoped(scope, worker)
                    .is_ok(),
            );
        }
        drop(done_tx);
        if started == 0 {
            return Ok(false);
        }
        let (mut free, mut held, mut finished) = (Vec::new(), 0usize, 0usize);
        for b in 0..resamples {
            while let Ok(done) = done_rx.try_recv() {
                store(done, &mut free);
                finished += 1;
            }
            if free.is_empty() && held < workers + 2 {
                held += 1;
                free.push(try_with_capacity(n, "resample draws")?);
            }
            if free.is_empty() {
                // Every buffer is out: wait for a worker to hand one back. (No answer means
                // every worker panicked; the scope passes that on.)
                let Ok(done) = done_rx.recv() else { break };
                store(done, &mut free);
                finished += 1;
            }
            let mut draws = free.pop().unwrap_or_default();
            draw(rng, positives, negatives, &mut draws);
            if job_tx.send((b, draws)).is_err() {
                break;
            }
        }
        drop(job_tx);
        while finished < resamples {
            let Ok(done) = done_rx.recv() else { break };
            store(done, &mut free);
            finished += 1;
        }
        Ok(true)
    })
}

/// [`super::ci::bootstrap_interval`] of our pAUC over FPR `[alpha, beta]`, the same interval to
/// the last bit, by [`pauc_replicates`].
///
/// # Errors
/// [`MetricError::BadLevel`] for a level outside (0, 1); as [`pauc_replicates`].
pub fn bootstrap_pauc_interval(
    scores: &[f64],
    labels: &[f64],
    boot: &Bootstrap,
    alpha: f64,
    beta: f64,
) -> Result<Interval, MetricError> {
    z_of_level(boot.level)?;
    let estimate = pauc(scores, labels, alpha, beta)?;
    let b = pauc_replicates(&[scores], labels, boot, alpha, beta)?.remove(0);
    interval_of_replicates(estimate, b, boot.level)
}

/// [`super::ci::bootstrap_compare`] of our pAUC over FPR `[alpha, beta]` between two scorers of
/// the same samples, the same test to the last bit, by [`pauc_replicates`].
///
/// # Errors
/// As [`pauc_replicates`].
pub fn bootstrap_pauc_compare(
    first: &[f64],
    second: &[f64],
    labels: &[f64],
    boot: &Bootstrap,
    alpha: f64,
    beta: f64,
) -> Result<PairedTest, MetricError> {
    let difference = pauc(first, labels, alpha, beta)? - pauc(second, labels, alpha, beta)?;
    let b = pauc_replicates(&[first, second], labels, boot, alpha, beta)?;
    Ok(compare_replicates(difference, &b[0], &b[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_that_wraps_a_byte_is_counted_again_wide() {
        let mut counter = Counter::new(3).unwrap();
        let mut draws = vec![1u32; 300];
        draws.push(2);
        match counter.count(&draws) {
            Counts::Wide(c) => assert_eq!(c, &[0, 300, 1]),
            Counts::Narrow(_) => panic!("300 draws of one slot fit no byte"),
        }
        match counter.count(&[0, 0, 2]) {
            Counts::Narrow(c) => assert_eq!(c, &[2, 0, 1]),
            Counts::Wide(_) => panic!("small counts are narrow"),
        }
    }

    #[test]
    fn narrow_and_wide_counts_give_the_same_pauc() {
        // 3 positives (slots 0-2), 4 negatives (3-6); scores 0.9 0.5 0.5 | 0.5 0.7 0.1 0.5.
        let col = [0.9, 0.5, 0.5, 0.5, 0.7, 0.1, 0.5];
        let labels = [1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0];
        let (pos, neg) = ((0..3).collect::<Vec<_>>(), (3..7).collect::<Vec<_>>());
        let order = sort_column(&col, &pos, &neg).unwrap();
        let range = RankRange::from_fpr(0.1, 0.8, 4).unwrap();
        let draws = [0u32, 1, 1, 3, 4, 4, 6];
        let mut narrow = [0u8; 7];
        let mut wide = [0u32; 7];
        for &d in &draws {
            narrow[d as usize] += 1;
            wide[d as usize] += 1;
        }
        let a = resample_pauc(&order, &narrow, 3, range);
        let b = resample_pauc(&order, &wide, 3, range);
        // The resample as scores: positives 0.9 0.5 0.5, negatives 0.5 0.7 0.7 0.5.
        let s = [0.9, 0.5, 0.5, 0.5, 0.7, 0.7, 0.5];
        let want = pauc(&s, &labels, 0.1, 0.8).unwrap();
        assert_eq!(a.to_bits(), want.to_bits());
        assert_eq!(b.to_bits(), want.to_bits());
    }
}
