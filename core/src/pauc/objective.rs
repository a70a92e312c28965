//! The pAUC objective of papers/partial-auc-fpr-range-agd-sbcd.txt: `F = f^n - f^m` (eq. 5-6)
//! with `f^l = sum_i phi_l(S_i)`, `phi_l` the sum of the `l` largest entries (eq. 4) and
//! `S_i = (l(h(x_i+) - h(x_j-)))_j` for a nonincreasing pairwise surrogate `l`; and the SoRR
//! objective `phi_n(S) - phi_m(S)` (eq. 7).
//!
//! Because `l` is nonincreasing, the `j`-th largest entry of every `S_i` pairs positive `i` with
//! the `j`-th highest-scored negative, so `F` needs one sort of the negative scores:
//! `O(N- log N- + N+ (n - m))`. Non-integer `m = N- alpha`, `n = N- beta` use the fractional
//! boundary weights of [`crate::metrics::auc`].

use std::fmt;
use std::str::FromStr;

use crate::math::order::{descending, indices_descending};
use crate::math::spec::{SpecError, SpecKind};
use crate::metrics::RankRange;
use crate::pauc::error::PaucError;

/// A pairwise surrogate `l(t)` of the indicator `1(t <= 0)`, `t = h(x+) - h(x-)`; convex and
/// nonincreasing.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairLoss {
    /// `log(1 + e^{-t})`, the paper's choice.
    Logistic,
    /// `max(0, 1 - t)^2`.
    SquaredHinge,
}

impl PairLoss {
    /// `l(t)`.
    #[inline]
    pub fn value(&self, t: f64) -> f64 {
        match self {
            PairLoss::Logistic => crate::math::loss::Loss::Logistic.value(-t),
            PairLoss::SquaredHinge => {
                let h = (1.0 - t).max(0.0);
                h * h
            }
        }
    }

    /// `l'(t)` (`<= 0`).
    #[inline]
    pub fn derivative(&self, t: f64) -> f64 {
        match self {
            PairLoss::Logistic => -crate::math::loss::sigmoid(-t),
            PairLoss::SquaredHinge => -2.0 * (1.0 - t).max(0.0),
        }
    }
}

impl fmt::Display for PairLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PairLoss::Logistic => "logistic",
            PairLoss::SquaredHinge => "sqhinge",
        })
    }
}

impl FromStr for PairLoss {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "logistic" => Ok(PairLoss::Logistic),
            "sqhinge" | "squared_hinge" | "squared-hinge" => Ok(PairLoss::SquaredHinge),
            other => Err(SpecError::Unknown {
                kind: SpecKind::PairLoss,
                name: other.to_string(),
                expected: "logistic, sqhinge",
            }),
        }
    }
}

/// Value of eq. (3) (`F` of eq. 5 divided by `N+ (n - m)`) at the given scores, and its gradient
/// with respect to every score (positives first, then negatives, in the input order).
///
/// # Errors
/// [`PaucError::OneClass`] for an empty class, [`PaucError::Range`] for a bad range,
/// [`PaucError::NonFiniteScore`] for a NaN/infinite score.
pub fn objective_and_score_grad(
    pos: &[f64],
    neg: &[f64],
    loss: PairLoss,
    alpha: f64,
    beta: f64,
) -> Result<(f64, Vec<f64>, Vec<f64>), PaucError> {
    if pos.is_empty() || neg.is_empty() {
        return Err(PaucError::OneClass {
            positives: pos.len(),
            negatives: neg.len(),
        });
    }
    let range = RankRange::from_fpr(alpha, beta, neg.len())?;
    if let Some((index, &value)) = pos
        .iter()
        .chain(neg)
        .enumerate()
        .find(|(_, s)| !s.is_finite())
    {
        return Err(PaucError::NonFiniteScore { index, value });
    }
    let mut order = Vec::new();
    indices_descending(neg, &mut order);
    let norm = pos.len() as f64 * (range.hi - range.lo);
    let mut value = 0.0;
    let mut g_pos = vec![0.0; pos.len()];
    let mut g_neg = vec![0.0; neg.len()];
    for rank in range.ranks() {
        let w = range.weight(rank);
        if w == 0.0 {
            continue;
        }
        let j = order[rank];
        for (i, &sp) in pos.iter().enumerate() {
            let t = sp - neg[j];
            value += w * loss.value(t);
            let d = w * loss.derivative(t) / norm;
            g_pos[i] += d;
            g_neg[j] -= d;
        }
    }
    Ok((value / norm, g_pos, g_neg))
}

/// The SoRR loss `phi_n(S) - phi_m(S)` (eq. 7): the sum of the (m+1)-th .. n-th largest entries.
///
/// # Errors
/// [`PaucError::SorrRanks`] unless `m < n <= S.len()`, [`PaucError::NonFiniteScore`] for a
/// NaN/infinite entry.
pub fn sorr(losses: &[f64], m: usize, n: usize) -> Result<f64, PaucError> {
    if !(m < n && n <= losses.len()) {
        return Err(PaucError::SorrRanks {
            m,
            n,
            len: losses.len(),
        });
    }
    if let Some((index, &value)) = losses.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(PaucError::NonFiniteScore { index, value });
    }
    let mut sorted = losses.to_vec();
    sorted.sort_by(descending);
    Ok(sorted[m..n].iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: for each positive, sort its pair losses descending and sum ranks m..n.
    fn brute(pos: &[f64], neg: &[f64], loss: PairLoss, m: usize, n: usize) -> f64 {
        let mut total = 0.0;
        for &sp in pos {
            let mut s: Vec<f64> = neg.iter().map(|&sn| loss.value(sp - sn)).collect();
            s.sort_by(|a, b| b.partial_cmp(a).unwrap());
            total += s[m..n].iter().sum::<f64>();
        }
        total / (pos.len() * (n - m)) as f64
    }

    #[test]
    fn objective_matches_sorting_each_row_and_gradient_matches_fd() {
        let pos = [0.3, -0.2, 1.1, 0.05];
        let neg = [0.0, 0.4, -1.0, 0.2, 0.9, -0.3, 0.1, 0.6, -0.5, 0.25];
        for loss in [PairLoss::Logistic, PairLoss::SquaredHinge] {
            let (v, gp, gn) = objective_and_score_grad(&pos, &neg, loss, 0.2, 0.7).unwrap();
            assert!((v - brute(&pos, &neg, loss, 2, 7)).abs() < 1e-12, "{loss}");
            let h = 1e-6;
            for i in 0..pos.len() {
                let mut p = pos;
                p[i] += h;
                let up = objective_and_score_grad(&p, &neg, loss, 0.2, 0.7)
                    .unwrap()
                    .0;
                p[i] -= 2.0 * h;
                let down = objective_and_score_grad(&p, &neg, loss, 0.2, 0.7)
                    .unwrap()
                    .0;
                assert!(((up - down) / (2.0 * h) - gp[i]).abs() < 1e-6);
            }
            for j in 0..neg.len() {
                let mut q = neg;
                q[j] += h;
                let up = objective_and_score_grad(&pos, &q, loss, 0.2, 0.7)
                    .unwrap()
                    .0;
                q[j] -= 2.0 * h;
                let down = objective_and_score_grad(&pos, &q, loss, 0.2, 0.7)
                    .unwrap()
                    .0;
                assert!(((up - down) / (2.0 * h) - gn[j]).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn sorr_and_errors() {
        assert_eq!(sorr(&[1.0, 5.0, 3.0, 4.0], 1, 3).unwrap(), 7.0);
        assert!(sorr(&[1.0, 2.0], 2, 2).is_err());
        assert!(objective_and_score_grad(&[], &[1.0], PairLoss::Logistic, 0.0, 1.0).is_err());
        assert!(objective_and_score_grad(&[1.0], &[], PairLoss::Logistic, 0.0, 1.0).is_err());
        assert!(objective_and_score_grad(&[1.0], &[0.0], PairLoss::Logistic, 0.5, 0.5).is_err());
        assert!(
            objective_and_score_grad(&[f64::NAN], &[0.0], PairLoss::Logistic, 0.0, 1.0).is_err()
        );
    }
}
