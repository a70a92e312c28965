//! A score column sorted once, and every ranking figure `rankrisk metrics` prints computed from
//! it by one pass over its groups of tied scores: the AUC with DeLong's components, our pAUC
//! over FPR `[alpha, beta]` (eq. 2 of papers/partial-auc-fpr-range-agd-sbcd.txt), the McClish
//! pAUC and LibAUC's two-way pAUC (`super::conventions`). The stratified bootstrap
//! (`super::bootstrap`) walks the same sorted column with a resample's counts (how often each
//! sample was drawn), so that a resample costs one pass and no sort.
//!
//! Each figure equals, to the last bit, the function that sorts the raw scores itself
//! ([`super::ci::DeLong::new`], [`super::auc::pauc`], [`super::conventions::mcclish_pauc`],
//! [`super::conventions::libauc_two_way_pauc`]): the counts are the same integers and the
//! floating-point steps are taken in the same order (`tests/metrics.rs` holds them to it).

use super::auc::{CreditSum, MetricError, RankRange, checked_positives, normalized};
use super::ci::{DeLong, Placements, try_with_capacity};
use super::conventions::libauc_kept;
use super::threads;
use crate::math::order::order_key;

/// Marks the last sample of a group of tied scores in a sorted column.
pub(crate) const LAST: u32 = 1 << 31;

/// The most samples a sorted column holds: slots are 31-bit.
pub(crate) const MAX_SAMPLES: usize = LAST as usize - 1;

/// A score column sorted once: its samples in descending order of score (tied scores,
/// `-0.0` and `0.0` included, in one group), each named by its slot, `k` for the `k`-th
/// positive and `N+ + k` for the `k`-th negative in index order, a flag bit on the last of
/// each group.
#[derive(Debug, Clone)]
pub struct RankedColumn {
    pub(crate) order: Vec<u32>,
    pub(crate) positives: usize,
    pub(crate) negatives: usize,
}

/// The figures of one column at once ([`RankedColumn::figures`]).
#[derive(Debug, Clone)]
pub struct ColumnFigures {
    /// AUC (ties 1/2) with DeLong's variance and components (for paired tests).
    pub placements: Placements,
    /// Our pAUC over the FPR range (eq. 2).
    pub pauc: f64,
    /// The McClish-standardized pAUC over FPR `[0, max_fpr]`.
    pub mcclish: f64,
    /// LibAUC's two-way pAUC (TPR >= `min_tpr`, FPR <= `max_fpr`).
    pub two_way: f64,
}

/// What [`RankedColumn::figures`] and the bootstrap compute: our pAUC's rank range and the
/// samples the two-way pAUC keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureSettings {
    /// Our pAUC's FPR range `[alpha, beta]`.
    pub fpr: (f64, f64),
    /// The McClish and two-way upper FPR.
    pub max_fpr: f64,
    /// The two-way lower TPR.
    pub min_tpr: f64,
}

/// LibAUC's two-way pAUC from groups in descending order: the `kp` lowest-scored positives
/// (those whose descending rank among the positives is above `N+ - kp`) against the `kn`
/// highest-scored negatives (the first `kn` met), each pair counted in half-pairs (2 for a
/// positive above the negative, 1 for a tie). Once the `kn` negatives are met, every kept
/// positive still to come lies below all of them and adds nothing.
#[derive(Debug, Clone)]
pub(crate) struct KeptPairs {
    kp: u64,
    kn: u64,
    /// Positives before the kept ones: `N+ - kp`.
    skip: u64,
    pos_seen: u64,
    neg_kept: u64,
    half_pairs: u128,
}

impl KeptPairs {
    pub(crate) fn new(positives: usize, (kp, kn): (usize, usize)) -> Self {
        KeptPairs {
            kp: kp as u64,
            kn: kn as u64,
            skip: (positives - kp) as u64,
            pos_seen: 0,
            neg_kept: 0,
            half_pairs: 0,
        }
    }

    /// Add the next group of `pos` positives and `neg` negatives. False once the kept
    /// negatives are all met.
    #[inline]
    pub(crate) fn push(&mut self, pos: u64, neg: u64) -> bool {
        let tied = neg.min(self.kn - self.neg_kept);
        let (from, to) = (self.pos_seen.max(self.skip), self.pos_seen + pos);
        // Without a branch (the bootstrap pushes a group per sorted sample).
        let each = 2 * (self.kn - self.neg_kept - tied) + tied;
        self.half_pairs += u128::from(to.saturating_sub(from)) * u128::from(each);
        self.neg_kept += tied;
        self.pos_seen += pos;
        self.neg_kept < self.kn
    }

    pub(crate) fn value(&self) -> f64 {
        0.5 * self.half_pairs as f64 / (self.kp as f64 * self.kn as f64)
    }
}

/// A sum of squares or products over `n` samples as a sample (co)variance of their mean:
/// divided by `n - 1` and by `n` (0 for a single sample).
pub(super) fn per_sample(sum: f64, n: u64) -> f64 {
    if n < 2 {
        0.0
    } else {
        sum / (n - 1) as f64 / n as f64
    }
}

impl RankedColumn {
    /// Sort `scores` (labels > 0 positive).
    ///
    /// # Errors
    /// As [`super::auc::auc`]: mismatched lengths, a non-finite score, a missing class;
    /// [`MetricError::OutOfMemory`] for more than `2^31 - 1` samples or when the buffers
    /// cannot be allocated.
    pub fn new(scores: &[f64], labels: &[f64]) -> Result<Self, MetricError> {
        let positives = checked_positives(scores, labels)?;
        let n = scores.len();
        if n > MAX_SAMPLES {
            return Err(MetricError::OutOfMemory {
                what: "samples in one sorted column (at most 2^31 - 1)",
                count: n,
            });
        }
        // Keys in one u128 each: the score's order (descending) above the slot (ascending),
        // so that a plain integer sort gives the order of `descending` with ties by slot. Built
        // by chunks on every core, each chunk's slots starting after the positives and
        // negatives of the chunks before it.
        const CHUNK: usize = 1 << 16;
        let mut before =
            threads::map_chunks(labels, CHUNK, |_, c| c.iter().filter(|&&y| y > 0.0).count());
        let mut seen = 0;
        for b in &mut before {
            (*b, seen) = (seen, seen + *b);
        }
        let mut keyed: Vec<u128> = try_with_capacity(n, "sorted scores")?;
        keyed.resize(n, 0);
        threads::for_each_chunk_mut(&mut keyed, CHUNK, |k, out| {
            let (mut p, mut q) = (before[k], positives + k * CHUNK - before[k]);
            let from = k * CHUNK;
            let rows = scores[from..].iter().zip(&labels[from..]);
            for (key, (&s, &y)) in out.iter_mut().zip(rows) {
                let slot = if y > 0.0 {
                    p += 1;
                    p - 1
                } else {
                    q += 1;
                    q - 1
                };
                *key = (u128::from(!order_key(s)) << 32) | slot as u128;
            }
        });
        // On the metrics' pool (every core; the order is the same on any number of threads).
        threads::sort_unstable(&mut keyed);
        let mut order: Vec<u32> = try_with_capacity(n, "sorted scores")?;
        order.resize(n, 0);
        let keyed = &keyed;
        threads::for_each_chunk_mut(&mut order, CHUNK, |k, out| {
            for (j, e) in out.iter_mut().enumerate() {
                let at = k * CHUNK + j;
                let key = keyed[at];
                let last = keyed.get(at + 1).is_none_or(|next| next >> 32 != key >> 32);
                let slot = key as u32;
                *e = if last { slot | LAST } else { slot };
            }
        });
        Ok(RankedColumn {
            order,
            positives,
            negatives: n - positives,
        })
    }

    /// The AUC and DeLong's variance from the tied groups' counts alone, in two sequential
    /// passes over the sorted column and no per-sample buffer: every positive of a group has
    /// the same `V10` and every negative the same `V01`, so the sample variances are sums over
    /// the groups, `S10 = sum_g gp (V10_g - AUC)^2 / (N+ - 1)` and `S01` alike; the AUC is the
    /// exact count of half-pairs divided once.
    pub fn delong(&self) -> DeLong {
        let (np, nn) = (self.positives as u64, self.negatives as u64);
        let mut half_pairs = 0u128;
        let mut fp = 0u64;
        self.for_each_group(|gp, gn| {
            let below = nn - fp - gn;
            half_pairs += u128::from(gp) * u128::from(2 * below + gn);
            fp += gn;
        });
        let (fnp, fnn) = (np as f64, nn as f64);
        let auc = half_pairs as f64 / (2.0 * fnp * fnn);
        let (mut s10, mut s01) = (0.0, 0.0);
        let (mut tp, mut fp) = (0u64, 0u64);
        self.for_each_group(|gp, gn| {
            let (v10, v01) = self.placement_values(gp, gn, tp, fp);
            s10 += gp as f64 * (v10 - auc) * (v10 - auc);
            s01 += gn as f64 * (v01 - auc) * (v01 - auc);
            tp += gp;
            fp += gn;
        });
        DeLong {
            auc,
            variance: per_sample(s10, np) + per_sample(s01, nn),
        }
    }

    /// Calls `f(gp, gn)` on every group of tied scores, in descending order of score, with its
    /// counts of positives and negatives.
    fn for_each_group(&self, mut f: impl FnMut(u64, u64)) {
        let np = self.positives as u32;
        let (mut all, mut neg) = (0u64, 0u64);
        for &e in &self.order {
            all += 1;
            neg += u64::from(e & !LAST >= np);
            if e & LAST != 0 {
                f(all - neg, neg);
                (all, neg) = (0, 0);
            }
        }
    }

    /// Each group of tied scores, in descending order of score: `f(members, gp, gn, tp, fp)`
    /// with its entries of `order` (flag bit included), its positives and negatives, and the
    /// positives and negatives scored above it.
    pub(super) fn for_each_group_members(&self, mut f: impl FnMut(&[u32], u64, u64, u64, u64)) {
        let np = self.positives as u32;
        let (mut tp, mut fp, mut start) = (0u64, 0u64, 0);
        for (k, &e) in self.order.iter().enumerate() {
            if e & LAST == 0 {
                continue;
            }
            let group = &self.order[start..=k];
            start = k + 1;
            let gn = group.iter().filter(|&&e| e & !LAST >= np).count() as u64;
            let gp = group.len() as u64 - gn;
            f(group, gp, gn, tp, fp);
            tp += gp;
            fp += gn;
        }
    }

    /// DeLong's placement values of a group of `gp` positives and `gn` negatives below `tp`
    /// positives and `fp` negatives: `(V10, V01)`, the value of each of its positives and of
    /// each of its negatives.
    pub(super) fn placement_values(&self, gp: u64, gn: u64, tp: u64, fp: u64) -> (f64, f64) {
        let (np, nn) = (self.positives as u64, self.negatives as u64);
        let below = nn - fp - gn;
        (
            (below as f64 + 0.5 * gn as f64) / nn as f64,
            (tp as f64 + 0.5 * gp as f64) / np as f64,
        )
    }

    /// Every figure of the column in one pass over its groups.
    ///
    /// # Errors
    /// [`MetricError::BadRange`] for a bad FPR range, [`MetricError::BadTwoWay`] for a bad
    /// two-way corner.
    pub fn figures(&self, settings: &FigureSettings) -> Result<ColumnFigures, MetricError> {
        let (np, nn) = (self.positives, self.negatives);
        let (alpha, beta) = settings.fpr;
        let range = RankRange::from_fpr(alpha, beta, nn)?;
        let kept = libauc_kept(np, nn, settings.min_tpr, settings.max_fpr)?;
        let max_fpr = settings.max_fpr;
        let mut sum = CreditSum::new(range);
        let mut full = CreditSum::new(RankRange::from_fpr(0.0, 1.0, nn)?);
        let mut two = KeptPairs::new(np, kept);
        let (fnn, fnp) = (nn as f64, np as f64);
        // The ROC's area up to `max_fpr` as `pauc_roc_area` sums it: trapezoids between the
        // points after each group, clipped to the range.
        let mut area = 0.0;
        let (v10, v01) = self.components(|gp, gn, tp, fp| {
            sum.push(gp, gn);
            full.push(gp, gn);
            two.push(gp, gn);
            let (a, b) = (
                (fp as f64 / fnn, tp as f64 / fnp),
                ((fp + gn) as f64 / fnn, (tp + gp) as f64 / fnp),
            );
            let (x0, x1) = (a.0.max(0.0), b.0.min(max_fpr));
            if x1 > x0 && b.0 != a.0 {
                let at = |x: f64| a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0);
                area += 0.5 * (at(x0) + at(x1)) * (x1 - x0);
            }
        })?;
        let mcclish = if max_fpr == 1.0 {
            normalized(full.total(), np, RankRange::from_fpr(0.0, 1.0, nn)?)
        } else {
            let area = (area / max_fpr).clamp(0.0, 1.0) * max_fpr;
            let (min_area, max_area) = (0.5 * max_fpr * max_fpr, max_fpr);
            (0.5 * (1.0 + (area - min_area) / (max_area - min_area))).clamp(0.0, 1.0)
        };
        Ok(ColumnFigures {
            placements: Placements {
                delong: self.delong(),
                v10,
                v01,
            },
            pauc: normalized(sum.total(), np, range),
            mcclish,
            two_way: two.value(),
        })
    }
}

impl DeLong {
    /// The AUC of `scores` against `labels` (> 0 positive) and its DeLong variance: one integer
    /// sort and passes over the tied groups ([`RankedColumn::delong`]).
    ///
    /// # Errors
    /// [`MetricError`] for mismatched lengths, non-finite scores or a missing class.
    pub fn new(scores: &[f64], labels: &[f64]) -> Result<Self, MetricError> {
        // Here rather than in ci.rs, so that the two files do not import each other.
        Ok(RankedColumn::new(scores, labels)?.delong())
    }
}

impl Placements {
    /// DeLong's components of `scores` against `labels` (> 0 positive) with the AUC and its
    /// variance ([`RankedColumn::placements`]).
    ///
    /// # Errors
    /// As [`DeLong::new`]; [`MetricError::OutOfMemory`] when the components cannot be
    /// allocated.
    pub fn new(scores: &[f64], labels: &[f64]) -> Result<Self, MetricError> {
        RankedColumn::new(scores, labels)?.placements()
    }
}

/// What a resample's walk feeds, group by group: our pAUC's credit sum and, when asked,
/// LibAUC's two-way pairs, each until it can no longer change.
pub(crate) struct GroupSink<'a> {
    sum: &'a mut CreditSum,
    two: Option<&'a mut KeptPairs>,
    pauc_open: bool,
    two_open: bool,
}

impl<'a> GroupSink<'a> {
    pub(crate) fn new(sum: &'a mut CreditSum, two: Option<&'a mut KeptPairs>) -> Self {
        let two_open = two.is_some();
        GroupSink {
            sum,
            two,
            pauc_open: true,
            two_open,
        }
    }

    /// Add the next group, `pos` drawn positives and `neg` drawn negatives, to each statistic
    /// still open (a group with nothing drawn changes nothing, and is pushed without a branch
    /// on it: about a third of a resample's one-sample groups). False once neither is open.
    #[inline]
    pub(crate) fn push(&mut self, pos: u64, neg: u64) -> bool {
        if self.pauc_open {
            self.pauc_open = self.sum.push(pos, neg);
        }
        if let Some(t) = self.two.as_deref_mut().filter(|_| self.two_open) {
            self.two_open = t.push(pos, neg);
        }
        self.pauc_open || self.two_open
    }
}

/// One resample's walk down a sorted column: our pAUC's credit sum and, when asked, LibAUC's
/// two-way pAUC, fed each group's counts of drawn positives and negatives; the walk stops once
/// neither can change.
#[inline]
pub(crate) fn walk<C: Copy + Default + Into<u64>>(
    order: &[u32],
    counts: &[C],
    positives: usize,
    sink: &mut GroupSink<'_>,
) {
    const CHUNK: usize = 2048;
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
                if !sink.push(all - neg, neg) {
                    break 'walk;
                }
                (all, neg) = (0, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::order::{ascending, descending};

    #[test]
    fn the_integer_key_orders_as_the_scores_do() {
        let v = [-3.5, -1e-300, -0.0, 0.0, 1e-300, 2.0, f64::MAX, f64::MIN];
        for a in v {
            for b in v {
                assert_eq!(
                    order_key(a).cmp(&order_key(b)),
                    ascending(&a, &b),
                    "{a} vs {b}"
                );
                assert_eq!(order_key(b).cmp(&order_key(a)), descending(&a, &b));
            }
        }
    }
}
