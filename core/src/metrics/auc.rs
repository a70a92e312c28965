//! Ranking metrics of papers/partial-auc-fpr-range-agd-sbcd.txt: AUC (eq. 1, ties count 1/2),
//! the empirical partial AUC with FPR in `[alpha, beta]` (eq. 2), its ROC-area form, the
//! two-way partial AUC, and ROC curve points.
//!
//! # Non-integer `N- alpha`, `N- beta`
//! Eq. (2) assumes `m = N- alpha` and `n = N- beta` are integers. In general the j-th largest
//! negative score covers the FPR interval `[(j-1)/N-, j/N-]`; it enters with the weight
//! `|[(j-1), j] ∩ [N- alpha, N- beta]|` (its overlap with the range, in units of one negative),
//! so a boundary negative counts fractionally, and the sum is normalized by
//! `N+ (N- beta - N- alpha)`. With integer `m, n` this is exactly eq. (2). Tied negatives share
//! one score, so which of them falls in the range does not change the value.
//!
//! # Cost and rounding
//! Every metric here sorts each class once and counts by merging or binary search,
//! `O((N+ + N-) log(N+ + N-))`; no pair of samples is visited. Pairs are counted exactly (as
//! integers of half-pairs), the few fractional boundary weights are multiplied in floating
//! point, and each partial AUC is clamped to `[0, 1]`, which in exact arithmetic it never
//! leaves, against the rounding of its normalization.

use super::threads;

use crate::math::order::{ascending, descending, from_order_key, order_key};

/// Why a metric could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricError {
    /// Scores and labels differ in length.
    #[error("{scores} scores for {labels} labels")]
    LengthMismatch {
        /// Number of scores.
        scores: usize,
        /// Number of labels.
        labels: usize,
    },
    /// A score is NaN or infinite.
    #[error("score {index} is not finite ({value})")]
    NonFinite {
        /// Position.
        index: usize,
        /// Value.
        value: f64,
    },
    /// A class is missing.
    #[error("the data has {positives} positives and {negatives} negatives: AUC needs both classes")]
    OneClass {
        /// Number of positives.
        positives: usize,
        /// Number of negatives.
        negatives: usize,
    },
    /// The FPR range is invalid.
    #[error("FPR range needs 0 <= alpha < beta <= 1, got alpha = {alpha}, beta = {beta}")]
    BadRange {
        /// Lower FPR.
        alpha: f64,
        /// Upper FPR.
        beta: f64,
    },
    /// The two-way pAUC's corner is invalid.
    #[error(
        "two-way pAUC needs 0 <= min_tpr < 1 and 0 < max_fpr <= 1, got min_tpr = {min_tpr}, \
         max_fpr = {max_fpr}"
    )]
    BadTwoWay {
        /// Lower TPR.
        min_tpr: f64,
        /// Upper FPR.
        max_fpr: f64,
    },
    /// An FPR range over no negatives.
    #[error("no negatives: the pAUC needs both classes")]
    NoNegatives,
    /// A confidence level outside (0, 1).
    #[error("confidence level must lie in (0, 1), got {0}")]
    BadLevel(f64),
    /// A bootstrap with fewer than 2 resamples.
    #[error("a bootstrap needs at least 2 resamples, got {0}")]
    TooFewResamples(usize),
    /// A buffer could not be allocated (the input or the number of resamples is too large).
    #[error("not enough memory for {count} {what}")]
    OutOfMemory {
        /// What the buffer holds.
        what: &'static str,
        /// How many of them.
        count: usize,
    },
}

/// Scores split by class (labels > 0 are positive), checked: equal lengths, finite scores,
/// both classes.
///
/// # Errors
/// [`MetricError`] naming the first problem.
pub(crate) fn split_checked(
    scores: &[f64],
    labels: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), MetricError> {
    checked_positives(scores, labels)?;
    let pos: Vec<f64> = scores
        .iter()
        .zip(labels)
        .filter(|(_, y)| **y > 0.0)
        .map(|(s, _)| *s)
        .collect();
    let neg: Vec<f64> = scores
        .iter()
        .zip(labels)
        .filter(|(_, y)| **y <= 0.0)
        .map(|(s, _)| *s)
        .collect();
    if pos.is_empty() || neg.is_empty() {
        return Err(MetricError::OneClass {
            positives: pos.len(),
            negatives: neg.len(),
        });
    }
    Ok((pos, neg))
}

/// The number of positives (labels > 0), checked as [`split_checked`] checks, without copying
/// the scores.
///
/// # Errors
/// [`MetricError`] naming the first problem.
pub(crate) fn checked_positives(scores: &[f64], labels: &[f64]) -> Result<usize, MetricError> {
    if scores.len() != labels.len() {
        return Err(MetricError::LengthMismatch {
            scores: scores.len(),
            labels: labels.len(),
        });
    }
    if let Some(index) = scores.iter().position(|s| !s.is_finite()) {
        return Err(MetricError::NonFinite {
            index,
            value: scores[index],
        });
    }
    let positives = labels.iter().filter(|&&y| y > 0.0).count();
    if positives == 0 || positives == labels.len() {
        return Err(MetricError::OneClass {
            positives,
            negatives: labels.len() - positives,
        });
    }
    Ok(positives)
}

fn check_range(alpha: f64, beta: f64) -> Result<(), MetricError> {
    if alpha.is_finite() && beta.is_finite() && 0.0 <= alpha && alpha < beta && beta <= 1.0 {
        Ok(())
    } else {
        Err(MetricError::BadRange { alpha, beta })
    }
}

/// The rank range `[lo, hi]` (in units of one negative) of an FPR range `[alpha, beta]` over
/// `n_neg` negatives (`m = N- alpha` and `n = N- beta` of eq. (2)), and the weight of each
/// descending rank under the fractional rule of the module docs. The metric and the pAUC
/// objective (`crate::pauc::objective`) weight the negatives with it alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankRange {
    /// `N- alpha` (the paper's m).
    pub lo: f64,
    /// `N- beta` (the paper's n).
    pub hi: f64,
}

impl RankRange {
    /// The range for FPRs `[alpha, beta]` and `n_neg` negatives.
    ///
    /// # Errors
    /// [`MetricError::BadRange`] unless `0 <= alpha < beta <= 1`,
    /// [`MetricError::NoNegatives`] for `n_neg = 0`.
    pub fn from_fpr(alpha: f64, beta: f64, n_neg: usize) -> Result<Self, MetricError> {
        check_range(alpha, beta)?;
        if n_neg == 0 {
            return Err(MetricError::NoNegatives);
        }
        Ok(RankRange {
            lo: alpha * n_neg as f64,
            hi: beta * n_neg as f64,
        })
    }

    /// Weight of the (0-based) `j`-th largest negative: its overlap with `[lo, hi]`.
    #[inline]
    pub fn weight(&self, j: usize) -> f64 {
        (self.hi.min((j + 1) as f64) - self.lo.max(j as f64)).max(0.0)
    }

    /// Descending ranks with a nonzero weight.
    pub fn ranks(&self) -> std::ops::Range<usize> {
        (self.lo.floor() as usize)..(self.hi.ceil() as usize)
    }
}

/// The credit sum `sum_j weight(j) credit(j)` of eq. (2), fed one group of tied scores at a
/// time in [`descending`] order of score: the negatives of a group hold consecutive descending
/// ranks and share the credit `#{pos > s} + #{pos = s} / 2` of their score `s` (ties 1/2).
///
/// Sorting once and merging makes eq. (2) `O((N+ + N-) log)`; the stratified bootstrap
/// (`super::bootstrap`) feeds the groups of a resample by their counts, `O(N+ + N-)` per
/// resample. The sum is exact but for the at most two boundary ranks of fractional weight: a
/// rank strictly inside `[lo, hi]` has weight 1 and a half-integer credit, so those are summed
/// as integers (twice the credit); only `floor(lo)` and `floor(hi)`, when `lo` or `hi` is not
/// an integer, are multiplied by their weight in floating point.
#[derive(Debug, Clone)]
pub(crate) struct CreditSum {
    range: RankRange,
    /// The ranks of weight 1: `[ceil(lo), floor(hi))`.
    inner: (u64, u64),
    /// The ranks of fractional weight, `u64::MAX` for none: `floor(lo)` when `lo` is not an
    /// integer, `floor(hi)` when `hi` is not (and it is another rank).
    edges: [u64; 2],
    /// `ceil(hi)`: no rank from here on has weight.
    end: u64,
    /// Positives in the groups pushed so far (all scored above the next group).
    pos_above: u64,
    /// Negatives in the groups pushed so far: the first descending rank of the next group.
    neg_above: u64,
    /// Twice the credit summed over the inner ranks.
    inner_twice: u128,
    /// `weight(j) credit(j)` of each edge rank.
    edge_credit: [f64; 2],
}

impl CreditSum {
    /// An empty sum over the ranks of `range`.
    pub(crate) fn new(range: RankRange) -> Self {
        let (lo, hi) = (range.lo, range.hi);
        let first = if lo.ceil() > lo {
            lo.floor() as u64
        } else {
            u64::MAX
        };
        let second = if hi.floor() < hi && hi.floor() as u64 != first {
            hi.floor() as u64
        } else {
            u64::MAX
        };
        CreditSum {
            range,
            inner: (lo.ceil() as u64, hi.floor() as u64),
            edges: [first, second],
            end: hi.ceil() as u64,
            pos_above: 0,
            neg_above: 0,
            inner_twice: 0,
            edge_credit: [0.0; 2],
        }
    }

    /// Add the next group, `pos` positives and `neg` negatives of one score (scored below every
    /// group pushed before). False once no later group can carry weight.
    ///
    /// Without a branch but at the two edge ranks (the bootstrap pushes a group per sorted
    /// sample, its class and count unpredictable): a group without negatives covers no rank and
    /// one without samples changes nothing.
    #[inline]
    pub(crate) fn push(&mut self, pos: u64, neg: u64) -> bool {
        let (start, stop) = (self.neg_above, self.neg_above + neg);
        let twice = 2 * self.pos_above + pos;
        let inside = stop
            .min(self.inner.1)
            .saturating_sub(start.max(self.inner.0));
        self.inner_twice += u128::from(twice) * u128::from(inside);
        for (k, &j) in self.edges.iter().enumerate() {
            if start <= j && j < stop {
                self.edge_credit[k] = self.range.weight(j as usize) * (0.5 * twice as f64);
            }
        }
        self.neg_above = stop;
        self.pos_above += pos;
        self.neg_above < self.end
    }

    /// `sum_j weight(j) credit(j)` over the groups pushed.
    pub(crate) fn total(&self) -> f64 {
        0.5 * self.inner_twice as f64 + self.edge_credit[0] + self.edge_credit[1]
    }
}

/// [`CreditSum`] over `pos` and `neg`, [`descending_keys`] of the two classes sorted
/// ascending, by one merge.
fn credit_sum(pos: &[u64], neg: &[u64], range: RankRange) -> f64 {
    let mut sum = CreditSum::new(range);
    let (mut i, mut j) = (0, 0);
    while j < neg.len() {
        let k = if i < pos.len() {
            pos[i].min(neg[j])
        } else {
            neg[j]
        };
        let (i0, j0) = (i, j);
        while i < pos.len() && pos[i] == k {
            i += 1;
        }
        while j < neg.len() && neg[j] == k {
            j += 1;
        }
        if !sum.push((i - i0) as u64, (j - j0) as u64) {
            break;
        }
    }
    sum.total()
}

/// Integer keys of `scores` whose ascending order is the scores' [`descending`] order
/// (`!order_key`), sorted on the metrics' pool: an integer sort, a few times faster than a
/// sort of floats by a comparison function.
fn descending_keys(scores: Vec<f64>) -> Vec<u64> {
    let mut keys: Vec<u64> = scores.into_iter().map(|s| !order_key(s)).collect();
    threads::sort_unstable(&mut keys);
    keys
}

/// Eq. (2)'s normalization `total / (N+ (hi - lo))`, clamped to `[0, 1]`.
///
/// In exact arithmetic `0 <= total <= N+ (hi - lo)`: every credit is at most `N+` and the
/// weights sum to `hi - lo`. In floating point `lo = alpha N-`, `hi = beta N-`, the boundary
/// weights and the product `N+ (hi - lo)` are rounded, and a perfect ranking came out above 1
/// (a run summary printed `val_pauc = 1.0000000000000002`): with `N+ = 3`, `N- = 9` and FPR
/// `[0.05, 0.5]` the weights are 0.55, 1, 1, 1 and 0.5, the credit sum of a perfect ranking is
/// `3 (0.55 + 3 + 0.5) = 12.15` while `3 * (4.5 - 0.45)` rounds to 12.149999999999999. The clamp
/// removes such an excess of a few ulps and nothing else.
pub(crate) fn normalized(total: f64, positives: usize, range: RankRange) -> f64 {
    (total / (positives as f64 * (range.hi - range.lo))).clamp(0.0, 1.0)
}

/// AUC of eq. (1) with ties counted 1/2: the fraction of (positive, negative) pairs ranked
/// correctly. One sort per class and a merge, `O((N+ + N-) log)`; the count is exact (an
/// integer of half-pairs), so the AUC is never above 1.
///
/// # Errors
/// [`MetricError`] for mismatched lengths, NaN/infinite scores or a missing class.
pub fn auc(scores: &[f64], labels: &[f64]) -> Result<f64, MetricError> {
    pauc(scores, labels, 0.0, 1.0)
}

/// Normalized partial AUC with FPR in `[alpha, beta]` (eq. 2, ties 1/2, the fractional rule of
/// the module docs). `alpha = 0, beta = 1` gives the AUC. One sort per class and a merge,
/// `O((N+ + N-) log)`; the sum of credits is exact but for the two boundary ranks, and the
/// value is clamped to `[0, 1]` against the rounding of `N+ (beta - alpha) N-`.
///
/// # Errors
/// As [`auc`], plus [`MetricError::BadRange`] unless `0 <= alpha < beta <= 1`.
pub fn pauc(scores: &[f64], labels: &[f64], alpha: f64, beta: f64) -> Result<f64, MetricError> {
    check_range(alpha, beta)?;
    let (pos, neg) = split_checked(scores, labels)?;
    let range = RankRange::from_fpr(alpha, beta, neg.len())?;
    let (pos, neg) = (descending_keys(pos), descending_keys(neg));
    Ok(normalized(credit_sum(&pos, &neg, range), pos.len(), range))
}

/// One point of the ROC curve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RocPoint {
    /// False positive rate.
    pub fpr: f64,
    /// True positive rate.
    pub tpr: f64,
    /// Score threshold: samples with score `>= threshold` are predicted positive.
    pub threshold: f64,
}

/// ROC curve points, from (0, 0) (threshold +inf) to (1, 1), one point per distinct score.
///
/// # Errors
/// As [`auc`].
pub fn roc_curve(scores: &[f64], labels: &[f64]) -> Result<Vec<RocPoint>, MetricError> {
    let (pos, neg) = split_checked(scores, labels)?;
    let (np, nn) = (pos.len() as f64, neg.len() as f64);
    // One integer per sample: the score's descending key above a negative's flag bit, so that
    // an unstable integer sort groups the tied scores (equal integers are interchangeable).
    let key = |s: f64, negative: bool| (u128::from(!order_key(s)) << 1) | u128::from(negative);
    let mut all: Vec<u128> = pos
        .iter()
        .map(|&s| key(s, false))
        .chain(neg.iter().map(|&s| key(s, true)))
        .collect();
    drop((pos, neg));
    threads::sort_unstable(&mut all);
    let mut points = vec![RocPoint {
        fpr: 0.0,
        tpr: 0.0,
        threshold: f64::INFINITY,
    }];
    let (mut tp, mut fp) = (0.0, 0.0);
    let mut i = 0;
    while i < all.len() {
        let group = all[i] >> 1;
        while i < all.len() && all[i] >> 1 == group {
            if all[i] & 1 == 0 {
                tp += 1.0;
            } else {
                fp += 1.0;
            }
            i += 1;
        }
        points.push(RocPoint {
            fpr: fp / nn,
            tpr: tp / np,
            threshold: from_order_key(!(group as u64)),
        });
    }
    Ok(points)
}

/// The area under the (piecewise linear) ROC curve between FPR `alpha` and `beta`, divided by
/// `beta - alpha`. Ties give diagonal segments (1/2 per tied pair), so this equals [`pauc`]
/// except when `alpha` or `beta` falls inside a run of tied scores that holds both classes:
/// there the ROC interpolates linearly inside the run while eq. (2) gives every tied negative
/// the same credit. One sort, `O((N+ + N-) log)`; clamped to `[0, 1]` against rounding.
///
/// # Errors
/// As [`pauc`].
pub fn pauc_roc_area(
    scores: &[f64],
    labels: &[f64],
    alpha: f64,
    beta: f64,
) -> Result<f64, MetricError> {
    check_range(alpha, beta)?;
    let roc = roc_curve(scores, labels)?;
    let mut area = 0.0;
    for seg in roc.windows(2) {
        let (a, b) = (seg[0], seg[1]);
        let (x0, x1) = (a.fpr.max(alpha), b.fpr.min(beta));
        if x1 <= x0 || b.fpr == a.fpr {
            continue;
        }
        let at = |x: f64| a.tpr + (b.tpr - a.tpr) * (x - a.fpr) / (b.fpr - a.fpr);
        area += 0.5 * (at(x0) + at(x1)) * (x1 - x0);
    }
    // The trapezoids lie under TPR 1 on `[alpha, beta]`, so the exact area is at most
    // `beta - alpha`; the interpolated TPRs and the sum are rounded, and a perfect ranking can
    // come out a few ulps above 1. The clamp removes that and nothing else.
    Ok((area / (beta - alpha)).clamp(0.0, 1.0))
}

/// Two-way partial AUC (Yang et al. 2019): the area of the ROC region with `TPR >= tpr_min` and
/// `FPR <= fpr_max`, normalized by `(1 - tpr_min) fpr_max`; empirically the pairs between the
/// lowest-scored `(1 - tpr_min) N+` positives and the highest-scored `fpr_max N-` negatives
/// (fractional boundary weights as in [`pauc`], ties 1/2).
///
/// `O((N+ + N-) log)`: one sort per class and, for each kept positive, two binary searches
/// among the negatives. With the negatives in descending order, `j < a` scored above the
/// positive, `a <= j < b` tied, the rest below, and the weights of the first `m` negatives
/// summing to `min(m, fpr_max N-)`, the positive's weighted credit is
/// `k - min(a, k) / 2 - min(b, k) / 2` with `k = fpr_max N-`. The sum over positives of weight 1
/// is exact (integers and one multiple of `k`'s fraction); the value is clamped to `[0, 1]`
/// against the rounding of the rest.
///
/// # Errors
/// As [`auc`], plus [`MetricError::BadRange`] unless `0 <= tpr_min < 1` and `0 < fpr_max <= 1`.
pub fn two_way_pauc(
    scores: &[f64],
    labels: &[f64],
    tpr_min: f64,
    fpr_max: f64,
) -> Result<f64, MetricError> {
    check_range(0.0, fpr_max)?;
    check_range(tpr_min, 1.0)?;
    let (mut pos, mut neg) = split_checked(scores, labels)?;
    let (np, nn) = (pos.len() as f64, neg.len() as f64);
    threads::sort_unstable_by(&mut pos, ascending); // lowest-scored positives first
    threads::sort_unstable_by(&mut neg, descending); // highest-scored negatives first
    let (kp, kn) = ((1.0 - tpr_min) * np, fpr_max * nn);
    // The negatives' weights: 1 for the first `whole` ones, `frac` for the next (exact: `kn`
    // minus its integer part).
    let whole = kn.floor() as u64;
    let frac = kn - kn.floor();
    // Twice a positive's weighted credit, `2 k - min(a, k) - min(b, k)`, as an integer part and
    // a multiple of `frac`.
    let twice = |sp: f64| -> (u64, u64) {
        let a = neg.partition_point(|sn| ascending(sn, &sp).is_gt()) as u64;
        let b = neg.partition_point(|sn| ascending(sn, &sp).is_ge()) as u64;
        (
            2 * whole - a.min(whole) - b.min(whole),
            2 - u64::from(a > whole) - u64::from(b > whole),
        )
    };
    let full = kp.floor() as usize; // positives of weight 1
    let (mut ints, mut fracs) = (0u128, 0u128);
    for &sp in &pos[..full.min(pos.len())] {
        let (i, f) = twice(sp);
        ints += u128::from(i);
        fracs += u128::from(f);
    }
    let mut total = 0.5 * (ints as f64 + frac * fracs as f64);
    let edge = kp - kp.floor(); // the weight of the next positive
    if edge > 0.0 && full < pos.len() {
        let (i, f) = twice(pos[full]);
        total += edge * (0.5 * (i as f64 + frac * f as f64));
    }
    Ok((total / (kp * kn)).clamp(0.0, 1.0))
}
