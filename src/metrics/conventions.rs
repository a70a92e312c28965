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

use std::cmp::Ordering;

use super::auc::{MetricError, auc, pauc_roc_area};
use crate::order::{ascending, descending};

/// The McClish-standardized partial AUC over FPR `[0, beta]`:
/// `1/2 (1 + (A - beta^2 / 2) / (beta - beta^2 / 2))` with `A` the area under the ROC curve
/// (linear between its points, ties as diagonal segments) up to FPR `beta`. It is 1/2 for a
/// random scorer and 1 for a perfect one; at `beta = 1` it is the AUC. Equal to
/// scikit-learn's `roc_auc_score(y, s, max_fpr=beta)`.
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
    Ok(0.5 * (1.0 + (area - min_area) / (max_area - min_area)))
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

/// LibAUC's two-way partial AUC (`pauc_roc_score(max_fpr, min_tpr)` with `min_tpr > 0`): the
/// AUC (ties 1/2) of the `max(1, round(N+ (1 - min_tpr)))` lowest-scored positives against the
/// `max(1, round(N- max_fpr))` highest-scored negatives.
///
/// # Errors
/// As [`auc`], plus [`MetricError::BadRange`] unless `0 <= min_tpr < 1` and
/// `0 < max_fpr <= 1`.
pub fn libauc_two_way_pauc(
    scores: &[f64],
    labels: &[f64],
    min_tpr: f64,
    max_fpr: f64,
) -> Result<f64, MetricError> {
    if !((0.0..1.0).contains(&min_tpr) && max_fpr > 0.0 && max_fpr <= 1.0) {
        return Err(MetricError::BadRange {
            alpha: min_tpr,
            beta: max_fpr,
        });
    }
    auc(scores, labels)?; // the checks: lengths, finiteness, both classes
    let mut pos: Vec<f64> = scores
        .iter()
        .zip(labels)
        .filter(|(_, y)| **y > 0.0)
        .map(|(s, _)| *s)
        .collect();
    let mut neg: Vec<f64> = scores
        .iter()
        .zip(labels)
        .filter(|(_, y)| **y <= 0.0)
        .map(|(s, _)| *s)
        .collect();
    let keep = |n: usize, share: f64| (round_half_even(n as f64 * share) as usize).clamp(1, n);
    let (kp, kn) = (keep(pos.len(), 1.0 - min_tpr), keep(neg.len(), max_fpr));
    pos.sort_by(ascending);
    neg.sort_by(descending);
    let mut credit = 0.0;
    for &sp in &pos[..kp] {
        for &sn in &neg[..kn] {
            credit += match ascending(&sp, &sn) {
                Ordering::Greater => 1.0,
                Ordering::Equal => 0.5,
                Ordering::Less => 0.0,
            };
        }
    }
    Ok(credit / (kp * kn) as f64)
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
