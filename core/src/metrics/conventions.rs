//! The partial-AUC conventions of other libraries, so that figures compare with theirs:
//!
//! - one-way pAUC over FPR `[0, beta]`, McClish-standardized (McClish 1989): scikit-learn's
//!   `roc_auc_score(max_fpr=beta)`, which LibAUC's `pauc_roc_score(max_fpr=beta)` calls;
//! - two-way pAUC, TPR `>= min_tpr` and FPR `<= max_fpr` (Yang et al. 2019), as LibAUC's
//!   `pauc_roc_score(max_fpr, min_tpr)` computes it: the AUC of the `round(N+ (1 - min_tpr))`
//!   lowest-scored positives against the `round(N- max_fpr)` highest-scored negatives.
//!
//! Our own pAUC over `[alpha, beta]` (eq. 2 of the pAUC paper, [`super::auc::pauc`]) is
//! normalized to `[0, 1]` by `beta - alpha` and counts boundary negatives fractionally; the
//! two-way form with fractional boundaries is [`super::auc::two_way_pauc`].
//!
//! Both sort once, `O((N+ + N-) log(N+ + N-))`, and count pairs by binary search; both values
//! lie in `[0, 1]` (the McClish value is clamped against the rounding of its area, the two-way
//! value is an exact count over an exact count).

use super::auc::{MetricError, auc, pauc_roc_area, split_checked};
use super::threads;
use crate::math::order::{ascending, descending};

/// The McClish-standardized partial AUC over FPR `[0, beta]`:
/// `1/2 (1 + (A - beta^2 / 2) / (beta - beta^2 / 2))` with `A` the area under the ROC curve
/// (linear between its points, ties as diagonal segments) up to FPR `beta`. It is 1/2 for a
/// random scorer and 1 for a perfect one; at `beta = 1` it is the AUC. Equal to
/// scikit-learn's `roc_auc_score(y, s, max_fpr=beta)` (but clamped to `[0, 1]`, which in exact
/// arithmetic it never leaves: the area lies between 0 and `beta`, and the rounding of the
/// area's trapezoids could push a perfect ranking a few ulps above 1). One sort,
/// `O((N+ + N-) log)`.
///
/// # Errors
/// As [`auc`], plus [`MetricError::BadRange`] unless `0 < beta <= 1`.
pub fn mcclish_pauc(scores: &[f64], labels: &[f64], beta: f64) -> Result<f64, MetricError> {
    if !(beta > 0.0 && beta <= 1.0) {
        return Err(MetricError::BadRange { alpha: 0.0, beta });
    }
    if beta == 1.0 {
        return auc(scores, labels);
    }
    let area = pauc_roc_area(scores, labels, 0.0, beta)? * beta;
    let (min_area, max_area) = (0.5 * beta * beta, beta);
    Ok((0.5 * (1.0 + (area - min_area) / (max_area - min_area))).clamp(0.0, 1.0))
}

/// Python's `round` (half to even), which LibAUC uses for its counts.
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// How many of `positives` and `negatives` LibAUC's two-way pAUC keeps:
/// `max(1, round(N+ (1 - min_tpr)))` lowest-scored positives and `max(1, round(N- max_fpr))`
/// highest-scored negatives (Python's rounding, half to even).
///
/// # Errors
/// [`MetricError::BadTwoWay`] unless `0 <= min_tpr < 1` and `0 < max_fpr <= 1`.
pub(crate) fn libauc_kept(
    positives: usize,
    negatives: usize,
    min_tpr: f64,
    max_fpr: f64,
) -> Result<(usize, usize), MetricError> {
    if !((0.0..1.0).contains(&min_tpr) && max_fpr > 0.0 && max_fpr <= 1.0) {
        return Err(MetricError::BadTwoWay { min_tpr, max_fpr });
    }
    let keep = |n: usize, share: f64| (round_half_even(n as f64 * share) as usize).clamp(1, n);
    Ok((keep(positives, 1.0 - min_tpr), keep(negatives, max_fpr)))
}

/// LibAUC's two-way partial AUC (`pauc_roc_score(max_fpr, min_tpr)` with `min_tpr > 0`): the
/// AUC (ties 1/2) of the `max(1, round(N+ (1 - min_tpr)))` lowest-scored positives against the
/// `max(1, round(N- max_fpr))` highest-scored negatives.
///
/// One sort per class, then for each kept positive two binary searches among the kept
/// negatives: `O((N+ + N-) log)`. The count of half-pairs is an exact integer, so the value is
/// LibAUC's to the last bit (for fewer than `2^53` pairs) and never above 1.
///
/// # Errors
/// As [`auc`], plus [`MetricError::BadTwoWay`] unless `0 <= min_tpr < 1` and
/// `0 < max_fpr <= 1`.
pub fn libauc_two_way_pauc(
    scores: &[f64],
    labels: &[f64],
    min_tpr: f64,
    max_fpr: f64,
) -> Result<f64, MetricError> {
    let (mut pos, mut neg) = split_checked(scores, labels)?;
    let (kp, kn) = libauc_kept(pos.len(), neg.len(), min_tpr, max_fpr)?;
    threads::sort_unstable_by(&mut pos, ascending);
    threads::sort_unstable_by(&mut neg, descending);
    let kept = &neg[..kn]; // descending: above, tied, below a positive's score
    let half_pairs: u128 = pos[..kp]
        .iter()
        .map(|sp| {
            let above = kept.partition_point(|sn| ascending(sn, sp).is_gt());
            let at_or_above = kept.partition_point(|sn| ascending(sn, sp).is_ge());
            u128::from((2 * (kn - at_or_above) + (at_or_above - above)) as u64)
        })
        .sum();
    Ok(0.5 * half_pairs as f64 / (kp as f64 * kn as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_rounding_is_half_to_even() {
        for (x, want) in [
            (0.5, 0.0),
            (1.5, 2.0),
            (2.5, 2.0),
            (3.5, 4.0),
            (2.4, 2.0),
            (2.6, 3.0),
        ] {
            assert_eq!(round_half_even(x), want, "{x}");
        }
    }

    #[test]
    fn mcclish_is_half_for_a_random_ranking_and_one_for_a_perfect_one() {
        let labels = [1.0, 1.0, -1.0, -1.0];
        assert_eq!(
            mcclish_pauc(&[4.0, 3.0, 2.0, 1.0], &labels, 0.3).unwrap(),
            1.0
        );
        // All tied: the ROC is the diagonal, the standardized area 1/2.
        let half = mcclish_pauc(&[1.0; 4], &labels, 0.3).unwrap();
        assert!((half - 0.5).abs() < 1e-12, "{half}");
        assert!(mcclish_pauc(&[1.0; 4], &labels, 0.0).is_err());
        assert!(libauc_two_way_pauc(&[1.0; 4], &labels, 1.0, 0.5).is_err());
    }
}
