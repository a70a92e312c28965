//! Partial AUC by distributionally robust optimization (Zhu et al., "When AUC meets DRO:
//! Optimizing Partial AUC for Deep Learning with Non-Convex Convergence Guarantee", ICML 2022),
//! the one-way pAUC over FPR `[0, beta]` and the two-way pAUC that LibAUC 2.0.1 trains, as
//! [`Objective`](crate::objective::Objective)s with their per-positive state on the CPU:
//!
//! - [`Sopa`]: the exact estimator, CVaR-DRO over each positive's pair losses,
//!   `F(w, s) = 1/N+ sum_i (s_i + 1/(beta N-) sum_j (L_ij - s_i)_+)`, with one threshold `s_i`
//!   per positive updated by a stochastic subgradient step (SOPA);
//! - [`SopaS`]: KL-DRO smoothing, `F(w) = 1/N+ sum_i lambda log(1/N- sum_j exp(L_ij / lambda))`,
//!   the inner mean tracked per positive by a moving average `u_i` (SOPA-s);
//! - [`SotaS`]: the two-way pAUC (TPR `>= alpha`, FPR `<= beta` handled through `lambda` and
//!   `tau`), `F(w) = tau log(1/N+ sum_i (1/N- sum_j exp(L_ij / lambda))^(lambda / tau))`, with
//!   the per-positive `u_i` and one outer moving average `v` (SOTA-s);
//! - [`Staco`]: the exact two-way pAUC that LibAUC 2.0 added (TPR `>= 1 - theta_0`, FPR
//!   `<= theta_1`), a CVaR over each positive's pair losses inside a CVaR over the positives,
//!   with a dual and a threshold per positive and one global threshold (STACO; Zhou et al.,
//!   TMLR 2025).
//!
//! `L_ij = max(m - (h_i - h_j), 0)^2` is the squared hinge with margin `m` on the sigmoid
//! scores `h = sigmoid(s)`, the surrogate and the score map of LibAUC's implementation; the
//! returned gradient is with respect to the logits `s`.
//!
//! What is a special case of the pAUC objective of the FPR-range paper (`pauc::objective`):
//! at its optimal thresholds, SOPA's `F` is eq. (3) with `alpha = 0`, the mean of each
//! positive's `beta N-` largest pair losses (the thresholds `s_i` are the duals `lambda_{n,i}`
//! of SBCD, and SOPA's threshold step is SBCD's dual step (15) divided by `beta N-`); as
//! `lambda -> infinity`, SOPA-s's weights become uniform and it trains the full AUC surrogate,
//! eq. (3) over `[0, 1]`; as `tau -> infinity`, SOTA-s's weights become SOPA-s's. The tests
//! check each.

mod cvar;
mod kl;
mod staco;

use serde::{Deserialize, Serialize};

use crate::math::loss::sigmoid;
use crate::objective::{TrainError, check_batch, evaluation_batch, training_positives};

pub use cvar::{Sopa, SopaConfig};
pub use kl::{SopaS, SopaSConfig, SotaS, SotaSConfig};
pub use staco::{Staco, StacoConfig};

/// The squared hinge `max(m - t, 0)^2` of `t = h_i - h_j` and its derivative in `t`.
pub(super) fn squared_hinge(margin: f64, t: f64) -> (f64, f64) {
    let r = (margin - t).max(0.0);
    (r * r, -2.0 * r)
}

/// A batch split for the pair objectives: sigmoid scores of the positives (with their
/// positions in the batch and their positive index) and of the negatives.
pub(super) struct Pairs {
    pub(super) pos: Vec<(usize, usize, f64)>,
    pub(super) neg: Vec<(usize, f64)>,
}

/// Where each sample of the training set sits among the positives (None for negatives).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct PositiveIndex {
    of: Vec<Option<usize>>,
    pub(super) count: usize,
}

impl PositiveIndex {
    /// The index of a training set's `labels` (+1 for a positive, -1 or 0 for a negative, so
    /// that both the {-1, +1} and Burn's {0, 1} conventions work), which must hold both
    /// classes.
    pub(super) fn new(labels: &[f64]) -> Result<Self, TrainError> {
        let positives = training_positives(labels)?;
        if positives == 0 || positives == labels.len() {
            return Err(TrainError::Setting {
                name: "the training labels",
                requirement: "both classes (a pairwise objective pairs positives with negatives)",
                got: format!(
                    "{positives} positives, {} negatives",
                    labels.len() - positives
                ),
            });
        }
        let mut count = 0;
        let of = labels
            .iter()
            .map(|&y| {
                (y > 0.0).then(|| {
                    count += 1;
                    count - 1
                })
            })
            .collect();
        Ok(PositiveIndex { of, count })
    }

    /// The batch's pairs; a batch without both classes is refused, as is a label that differs
    /// from the training set's.
    pub(super) fn pairs(
        &self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<Pairs, TrainError> {
        check_batch(scores, labels, ids, Some(self.of.len()))?;
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for (k, ((&s, &y), &id)) in scores.iter().zip(labels).zip(ids).enumerate() {
            match (y > 0.0, self.of[id]) {
                (true, Some(p)) => pos.push((k, p, sigmoid(s))),
                (false, None) => neg.push((k, sigmoid(s))),
                (true, None) => {
                    return Err(TrainError::LabelDisagrees {
                        index: k,
                        id,
                        value: y,
                        training: -1.0,
                    });
                }
                (false, Some(_)) => {
                    return Err(TrainError::LabelDisagrees {
                        index: k,
                        id,
                        value: y,
                        training: 1.0,
                    });
                }
            }
        }
        if pos.is_empty() || neg.is_empty() {
            return Err(TrainError::OneClassBatch {
                positives: pos.len(),
                negatives: neg.len(),
            });
        }
        Ok(Pairs { pos, neg })
    }
}

/// An [`Objective::evaluate`](crate::objective::Objective::evaluate) batch split into its pairs by
/// its labels alone (no ids: any data set), each positive indexed by its rank among the
/// batch's positives.
///
/// # Errors
/// As [`evaluation_batch`]; [`TrainError::OneClassBatch`] for a batch of one class.
pub(super) fn evaluation_pairs(scores: &[f64], labels: &[f64]) -> Result<Pairs, TrainError> {
    let (signs, _) = evaluation_batch(scores, labels)?;
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for (k, (&s, &y)) in scores.iter().zip(&signs).enumerate() {
        if y > 0.0 {
            pos.push((k, pos.len(), sigmoid(s)));
        } else {
            neg.push((k, sigmoid(s)));
        }
    }
    if pos.is_empty() || neg.is_empty() {
        return Err(TrainError::OneClassBatch {
            positives: pos.len(),
            negatives: neg.len(),
        });
    }
    Ok(Pairs { pos, neg })
}

/// `min_t t + 1/(share n) sum_k (v_k - t)_+` over the `n` values `v`, the CVaR of their top
/// `share` (the mean of the `share n` largest when `share n` is whole): the minimum of the
/// convex piecewise-linear function sits at its `ceil(share n)`-th largest value, where its
/// slope `1 - #{v_k > t} / (share n)` changes sign.
pub(super) fn cvar(values: &[f64], share: f64) -> f64 {
    let n = values.len();
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let k = ((share * n as f64).ceil() as usize).clamp(1, n);
    let t = sorted[k - 1];
    t + values.iter().map(|&v| (v - t).max(0.0)).sum::<f64>() / (share * n as f64)
}

/// Add `w * dL/ds` of the pair (positive at batch position `a`, negative at `b`) to `grad`,
/// through the sigmoid of each score.
pub(super) fn add_pair(grad: &mut [f64], (a, ha): (usize, f64), (b, hb): (usize, f64), w_dl: f64) {
    grad[a] += w_dl * ha * (1.0 - ha);
    grad[b] -= w_dl * hb * (1.0 - hb);
}

pub(super) fn settings(
    name: &'static str,
    requirement: &'static str,
    ok: bool,
    v: f64,
) -> Result<(), TrainError> {
    if ok {
        Ok(())
    } else {
        Err(TrainError::Setting {
            name,
            requirement,
            got: v.to_string(),
        })
    }
}

/// A batch of 4 positives and 6 negatives (training ids 0..10, positives first), for the
/// tests of both files.
#[cfg(test)]
pub(super) fn test_batch() -> (Vec<f64>, Vec<f64>, Vec<usize>) {
    let s = vec![0.3, -1.2, 2.0, 0.1, -0.4, 0.9, -2.5, 1.4, 0.2, -0.7];
    let y = vec![1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0];
    (s, y, (0..10).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CVaR against a brute-force minimum over a fine grid of thresholds.
    #[test]
    fn the_cvar_is_the_minimum_over_thresholds() {
        let v = [0.3, 2.0, -1.0, 0.7, 0.7, 1.4, 0.05];
        for share in [0.1, 1.0 / 7.0, 0.3, 0.5, 3.0 / 7.0, 0.9, 1.0] {
            let f = |t: f64| t + v.iter().map(|&x| (x - t).max(0.0)).sum::<f64>() / (share * 7.0);
            let brute = (0..=40_000)
                .map(|i| f(-2.0 + i as f64 * 1e-4))
                .fold(f64::INFINITY, f64::min);
            let got = cvar(&v, share);
            assert!(
                got <= brute + 1e-12 && brute - got < 1e-3,
                "share {share}: {got} vs {brute}"
            );
        }
        // The mean of the top k when share n is whole.
        assert!((cvar(&v, 2.0 / 7.0) - 1.7).abs() < 1e-12);
        assert!((cvar(&v, 1.0) - v.iter().sum::<f64>() / 7.0).abs() < 1e-12);
    }
}
