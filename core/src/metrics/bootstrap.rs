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
//! - a resample is each class's counts (how often each sample is drawn), drawn in the first
//!   column's rank order block by block ([`DRAW_SCHEME`], `super::draws`: exactly the
//!   multinomial of drawing each class with replacement, from a seeded stream of its own per
//!   resample);
//! - its pAUC is one pass down the sorted column that feeds each group's counts of drawn
//!   positives and negatives to the credit sum of eq. (2) (`super::auc`'s `CreditSum`, the same
//!   arithmetic as [`super::auc::pauc`]), stopping at the last negative rank of weight, and the
//!   draws stop with it; with several columns (paired tests) each sample's count is written
//!   once and every column's pass reads them;
//! - the resamples run on [`bootstrap_threads`] threads (`RAYON_NUM_THREADS`, else one per
//!   core), any resample on any thread: the replicates do not depend on the number of threads.

use super::auc::{MetricError, RankRange, pauc};
use super::ci::{
    Bootstrap, Interval, PairedTest, compare_replicates, interval_of_replicates, resampled,
    try_with_capacity, z_of_level,
};
use super::conventions::libauc_kept;
pub use super::draws::DRAW_SCHEME;
use super::ranked::{MAX_SAMPLES, RankedColumn};
use super::resample::{Columns, Statistics};
use super::tasks::run_resamples;
pub use super::threads::bootstrap_threads;

/// Below this many draws (`n B`) the bootstrap runs on the calling thread alone.
const THREADED_FROM: usize = 1 << 22;

/// The replicates of a stratified bootstrap of several score columns, sorted once
/// ([`RankedColumn`]): `pauc[c][b]` our pAUC of column `c` on resample `b`, `two_way[c][b]`
/// LibAUC's two-way pAUC (empty when not asked).
#[derive(Debug, Clone, PartialEq)]
pub struct Replicates {
    /// Our pAUC over the FPR range, per column and resample.
    pub pauc: Vec<Vec<f64>>,
    /// LibAUC's two-way pAUC, per column and resample; empty when not asked.
    pub two_way: Vec<Vec<f64>>,
}

/// The bootstrap replicates of our pAUC over FPR `fpr = (alpha, beta)` and, with
/// `two_way = Some((min_tpr, max_fpr))`, of LibAUC's two-way pAUC, for every column at once
/// (paired comparisons see the same resamples), on `threads` threads. Each replicate equals, to
/// the last bit, what [`super::ci::bootstrap_interval`] computes with [`pauc`] or
/// [`super::conventions::libauc_two_way_pauc`] on the copied resample.
///
/// # Errors
/// [`MetricError::TooFewResamples`] for fewer than 2 resamples; [`MetricError::BadRange`] /
/// [`MetricError::BadTwoWay`] for the settings; [`MetricError::LengthMismatch`] for columns of
/// other samples; [`MetricError::OutOfMemory`] when the buffers cannot be allocated.
pub fn replicates(
    columns: &[RankedColumn],
    boot: &Bootstrap,
    fpr: (f64, f64),
    two_way: Option<(f64, f64)>,
    threads: usize,
) -> Result<Replicates, MetricError> {
    replicates_planned(columns, boot, fpr, two_way, |n| {
        // Small bootstraps run on the calling thread alone.
        if n.saturating_mul(boot.resamples) >= THREADED_FROM {
            threads
        } else {
            1
        }
    })
}

/// [`replicates`] on the threads `threads(n)` gives for `n` samples.
fn replicates_planned(
    columns: &[RankedColumn],
    boot: &Bootstrap,
    fpr: (f64, f64),
    two_way: Option<(f64, f64)>,
    threads: impl FnOnce(usize) -> usize,
) -> Result<Replicates, MetricError> {
    if boot.resamples < 2 {
        return Err(MetricError::TooFewResamples(boot.resamples));
    }
    let Some(first) = columns.first() else {
        return Ok(Replicates {
            pauc: Vec::new(),
            two_way: Vec::new(),
        });
    };
    let (positives, negatives) = (first.positives, first.negatives);
    if let Some(c) = columns
        .iter()
        .find(|c| (c.positives, c.negatives) != (positives, negatives))
    {
        return Err(MetricError::LengthMismatch {
            scores: c.positives + c.negatives,
            labels: positives + negatives,
        });
    }
    let stats = Statistics {
        range: RankRange::from_fpr(fpr.0, fpr.1, negatives)?,
        kept: two_way
            .map(|(min_tpr, max_fpr)| libauc_kept(positives, negatives, min_tpr, max_fpr))
            .transpose()?,
    };
    let work = Columns {
        columns,
        classes: (positives, negatives),
        stats,
        seed: boot.seed,
    };
    let n = positives + negatives;
    let mut out = Vec::with_capacity(2 * columns.len());
    for _ in 0..2 * columns.len() {
        let mut values = try_with_capacity(boot.resamples, "bootstrap replicates")?;
        values.resize(boot.resamples, f64::NAN);
        out.push(values);
    }
    run_resamples(&work, boot.resamples, threads(n), &mut out)?;
    let (mut pauc, mut two) = (Vec::new(), Vec::new());
    for (k, values) in out.into_iter().enumerate() {
        if k % 2 == 0 {
            pauc.push(values);
        } else if two_way.is_some() {
            two.push(values);
        }
    }
    Ok(Replicates { pauc, two_way: two })
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
    if labels.len() > MAX_SAMPLES {
        // Slots do not fit the sorted columns' 31 bits: copy each resample instead (the same
        // draws, along the same order).
        return resampled(columns, labels, boot, &|s: &[f64], y: &[f64]| {
            pauc(s, y, alpha, beta)
        });
    }
    let ranked = columns
        .iter()
        .map(|c| RankedColumn::new(c, labels))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(replicates(&ranked, boot, (alpha, beta), None, threads)?.pauc)
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
    fn any_number_of_threads_gives_the_same_replicates() {
        // 9000 samples with ties (blocks of both classes), 41 resamples, two columns and one:
        // one thread against two, three and eight.
        let n = 9000;
        let labels: Vec<f64> = (0..n)
            .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
            .collect();
        let a: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 * 0.5).collect();
        let b: Vec<f64> = (0..n).map(|i| ((i * 13) % 17) as f64 - 0.0).collect();
        let columns = [
            RankedColumn::new(&a, &labels).unwrap(),
            RankedColumn::new(&b, &labels).unwrap(),
        ];
        let boot = Bootstrap {
            resamples: 41,
            seed: 5,
            level: 0.9,
        };
        let run = |columns: &[RankedColumn], threads| {
            replicates_planned(columns, &boot, (0.1, 0.6), Some((0.3, 0.7)), |_| threads).unwrap()
        };
        let one = run(&columns, 1);
        assert_eq!(one.pauc.len(), 2);
        assert_eq!(one.two_way.len(), 2);
        for threads in [2, 3, 8] {
            assert_eq!(run(&columns, threads), one, "{threads} threads");
        }
        // The first column alone draws the resamples it drew in the pair.
        let alone = run(&columns[..1], 3);
        assert_eq!(alone.pauc[0], one.pauc[0]);
        assert_eq!(alone.two_way[0], one.two_way[0]);
    }
}
