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

use std::cmp::Ordering;

use crate::order::{ascending, descending};

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
    /// An FPR range over no negatives.
    #[error("no negatives: the pAUC needs both classes")]
    NoNegatives,
    /// A confidence level outside (0, 1).
    #[error("confidence level must lie in (0, 1), got {0}")]
    BadLevel(f64),
    /// A bootstrap with fewer than 2 resamples.
    #[error("a bootstrap needs at least 2 resamples, got {0}")]
    TooFewResamples(usize),
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

/// For each negative score sorted descending, the credit `#{pos > s} + #{pos = s} / 2` from the
/// positives, computed by one merge over the sorted positives.
fn credits_desc(pos: &mut [f64], neg: &mut [f64]) -> Vec<f64> {
    pos.sort_by(descending);
    neg.sort_by(descending);
    let mut out = Vec::with_capacity(neg.len());
    let (mut above, mut equal_end) = (0usize, 0usize);
    for &s in neg.iter() {
        while above < pos.len() && pos[above] > s {
            above += 1;
        }
        equal_end = equal_end.max(above);
        while equal_end < pos.len() && pos[equal_end] == s {
            equal_end += 1;
        }
        out.push(above as f64 + 0.5 * (equal_end - above) as f64);
    }
    out
}

/// AUC of eq. (1) with ties counted 1/2: the fraction of (positive, negative) pairs ranked
/// correctly. `O((N+ + N-) log)`.
///
/// # Errors
/// [`MetricError`] for mismatched lengths, NaN/infinite scores or a missing class.
pub fn auc(scores: &[f64], labels: &[f64]) -> Result<f64, MetricError> {
    let (mut pos, mut neg) = split_checked(scores, labels)?;
    let (np, nn) = (pos.len() as f64, neg.len() as f64);
    Ok(credits_desc(&mut pos, &mut neg).iter().sum::<f64>() / (np * nn))
}

/// Normalized partial AUC with FPR in `[alpha, beta]` (eq. 2, ties 1/2, the fractional rule of
/// the module docs). `alpha = 0, beta = 1` gives the AUC.
///
/// # Errors
/// As [`auc`], plus [`MetricError::BadRange`] unless `0 <= alpha < beta <= 1`.
pub fn pauc(scores: &[f64], labels: &[f64], alpha: f64, beta: f64) -> Result<f64, MetricError> {
    check_range(alpha, beta)?;
    let (mut pos, mut neg) = split_checked(scores, labels)?;
    let range = RankRange::from_fpr(alpha, beta, neg.len())?;
    let credits = credits_desc(&mut pos, &mut neg);
    let total: f64 = range.ranks().map(|j| range.weight(j) * credits[j]).sum();
    Ok(total / (pos.len() as f64 * (range.hi - range.lo)))
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
    let mut all: Vec<(f64, bool)> = pos
        .iter()
        .map(|&s| (s, true))
        .chain(neg.iter().map(|&s| (s, false)))
        .collect();
    all.sort_by(|a, b| descending(&a.0, &b.0));
    let mut points = vec![RocPoint {
        fpr: 0.0,
        tpr: 0.0,
        threshold: f64::INFINITY,
    }];
    let (mut tp, mut fp) = (0.0, 0.0);
    let mut i = 0;
    while i < all.len() {
        let s = all[i].0;
        while i < all.len() && ascending(&all[i].0, &s) == Ordering::Equal {
            if all[i].1 {
                tp += 1.0;
            } else {
                fp += 1.0;
            }
            i += 1;
        }
        points.push(RocPoint {
            fpr: fp / nn,
            tpr: tp / np,
            threshold: crate::order::canonical(s),
        });
    }
    Ok(points)
}

/// The area under the (piecewise linear) ROC curve between FPR `alpha` and `beta`, divided by
/// `beta - alpha`. Ties give diagonal segments (1/2 per tied pair), so this equals [`pauc`]
/// except when `alpha` or `beta` falls inside a run of tied scores that holds both classes:
/// there the ROC interpolates linearly inside the run while eq. (2) gives every tied negative
/// the same credit.
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
    Ok(area / (beta - alpha))
}

/// Two-way partial AUC (Yang et al. 2019): the area of the ROC region with `TPR >= tpr_min` and
/// `FPR <= fpr_max`, normalized by `(1 - tpr_min) fpr_max`; empirically the pairs between the
/// lowest-scored `(1 - tpr_min) N+` positives and the highest-scored `fpr_max N-` negatives
/// (fractional boundary weights as in [`pauc`]).
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
    pos.sort_by(ascending); // ascending: lowest-scored positives first
    neg.sort_by(descending); // descending: highest-scored negatives first
    let (kp, kn) = ((1.0 - tpr_min) * np, fpr_max * nn);
    let weight = |j: usize, k: f64| (k.min((j + 1) as f64) - j as f64).clamp(0.0, 1.0);
    let mut total = 0.0;
    for (i, &sp) in pos.iter().enumerate() {
        let wp = weight(i, kp);
        if wp == 0.0 {
            break;
        }
        for (j, &sn) in neg.iter().enumerate() {
            let wn = weight(j, kn);
            if wn == 0.0 {
                break;
            }
            let credit = match ascending(&sp, &sn) {
                Ordering::Greater => 1.0,
                Ordering::Equal => 0.5,
                Ordering::Less => 0.0,
            };
            total += wp * wn * credit;
        }
    }
    Ok(total / (kp * kn))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Brute force over pairs: negatives sorted descending with ties broken by index, each
    /// weighted by its overlap with [alpha N-, beta N-].
    fn brute_pauc(scores: &[f64], labels: &[f64], alpha: f64, beta: f64) -> f64 {
        let pos: Vec<f64> = scores
            .iter()
            .zip(labels)
            .filter(|p| *p.1 > 0.0)
            .map(|p| *p.0)
            .collect();
        let mut neg: Vec<f64> = scores
            .iter()
            .zip(labels)
            .filter(|p| *p.1 <= 0.0)
            .map(|p| *p.0)
            .collect();
        neg.sort_by(|a, b| b.partial_cmp(a).unwrap());
        let nn = neg.len() as f64;
        let mut total = 0.0;
        for (j, &sn) in neg.iter().enumerate() {
            let w = ((beta * nn).min(j as f64 + 1.0) - (alpha * nn).max(j as f64)).max(0.0);
            for &sp in &pos {
                total += w * if sp > sn {
                    1.0
                } else if sp == sn {
                    0.5
                } else {
                    0.0
                };
            }
        }
        total / (pos.len() as f64 * (beta - alpha) * nn)
    }

    #[test]
    fn matches_brute_force_pair_counting_with_ties() {
        let mut rng = StdRng::seed_from_u64(11);
        for _ in 0..400 {
            let n = rng.random_range(2..80);
            let mut labels: Vec<f64> = (0..n)
                .map(|_| if rng.random::<f64>() < 0.3 { 1.0 } else { -1.0 })
                .collect();
            labels[0] = 1.0;
            labels[1] = -1.0;
            // few distinct values: many ties
            let scores: Vec<f64> = (0..n)
                .map(|_| f64::from(rng.random_range(0..6)) * 0.5)
                .collect();
            let alpha = rng.random_range(0.0..0.6);
            let beta = rng.random_range(alpha + 0.05..1.0f64).min(1.0);
            let a = pauc(&scores, &labels, alpha, beta).unwrap();
            let b = brute_pauc(&scores, &labels, alpha, beta);
            assert!((a - b).abs() < 1e-12, "{a} vs brute {b}");
            // Without ties the ROC area is the same number.
            let distinct: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();
            let a = pauc(&distinct, &labels, alpha, beta).unwrap();
            let c = pauc_roc_area(&distinct, &labels, alpha, beta).unwrap();
            assert!((a - c).abs() < 1e-12, "{a} vs roc area {c}");
            // With ties, equal when the range does not cut a tie run: the full range.
            let c_full = pauc_roc_area(&scores, &labels, 0.0, 1.0).unwrap();
            assert!((c_full - auc(&scores, &labels).unwrap()).abs() < 1e-12);
            let full = auc(&scores, &labels).unwrap();
            assert!((pauc(&scores, &labels, 0.0, 1.0).unwrap() - full).abs() < 1e-12);
            assert!((brute_pauc(&scores, &labels, 0.0, 1.0) - full).abs() < 1e-12);
        }
    }

    #[test]
    fn hand_made_cases() {
        // perfect ranking
        let y = [1.0, 1.0, -1.0, -1.0, -1.0, -1.0];
        let s = [0.9, 0.8, 0.3, 0.2, 0.1, 0.0];
        assert_eq!(auc(&s, &y).unwrap(), 1.0);
        assert_eq!(pauc(&s, &y, 0.25, 0.5).unwrap(), 1.0);
        // all scores equal: every pair is a tie
        let flat = [0.5; 6];
        assert_eq!(auc(&flat, &y).unwrap(), 0.5);
        assert_eq!(pauc(&flat, &y, 0.05, 0.5).unwrap(), 0.5);
        // N- = 4, FPR [0.25, 0.5]: only the 2nd largest negative (0.2) counts;
        // positives 0.9 and 0.15 -> credits 1 + 0 -> 0.5
        let s2 = [0.9, 0.15, 0.3, 0.2, 0.1, 0.0];
        assert_eq!(pauc(&s2, &y, 0.25, 0.5).unwrap(), 0.5);
        // fractional: [0.125, 0.375] covers half of negative 1 (0.3) and half of negative 2 (0.2)
        // positives: 0.9 beats both; 0.15 beats neither -> (0.5 + 0.5) * 1 / (2 * 1) = 0.5
        assert_eq!(pauc(&s2, &y, 0.125, 0.375).unwrap(), 0.5);
        assert_eq!(two_way_pauc(&s, &y, 0.0, 1.0).unwrap(), 1.0);
        assert_eq!(two_way_pauc(&flat, &y, 0.5, 0.5).unwrap(), 0.5);
        let roc = roc_curve(&s, &y).unwrap();
        assert_eq!(roc.first().map(|p| (p.fpr, p.tpr)), Some((0.0, 0.0)));
        assert_eq!(roc.last().map(|p| (p.fpr, p.tpr)), Some((1.0, 1.0)));
    }

    #[test]
    fn bad_input_is_an_error() {
        let y = [1.0, -1.0];
        assert!(matches!(
            auc(&[0.1, f64::NAN], &y),
            Err(MetricError::NonFinite { index: 1, .. })
        ));
        assert!(matches!(
            auc(&[0.1, 0.2], &[1.0, 1.0]),
            Err(MetricError::OneClass { .. })
        ));
        assert!(matches!(
            auc(&[0.1], &y),
            Err(MetricError::LengthMismatch { .. })
        ));
        assert!(matches!(
            pauc(&[0.1, 0.2], &y, 0.5, 0.5),
            Err(MetricError::BadRange { .. })
        ));
        assert!(matches!(
            pauc(&[0.1, 0.2], &y, 0.6, 0.5),
            Err(MetricError::BadRange { .. })
        ));
        assert!(pauc(&[0.1, 0.2], &y, -0.1, 0.5).is_err());
    }
}
