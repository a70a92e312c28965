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
            PairLoss::Logistic => crate::loss::Loss::Logistic.value(-t),
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
            PairLoss::Logistic => -crate::loss::sigmoid(-t),
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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "logistic" => Ok(PairLoss::Logistic),
            "sqhinge" | "squared_hinge" | "squared-hinge" => Ok(PairLoss::SquaredHinge),
            other => Err(format!(
                "unknown pairwise surrogate '{other}': expected logistic, sqhinge"
            )),
        }
    }
}

/// The rank range `[lo, hi]` (in units of one negative) of an FPR range `[alpha, beta]` over
/// `n_neg` negatives, and the weight of each descending rank.
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
    /// A message unless `0 <= alpha < beta <= 1` and `n_neg > 0`.
    pub fn from_fpr(alpha: f64, beta: f64, n_neg: usize) -> Result<Self, String> {
        if !(alpha.is_finite() && beta.is_finite() && 0.0 <= alpha && alpha < beta && beta <= 1.0) {
            return Err(format!(
                "FPR range needs 0 <= alpha < beta <= 1, got alpha = {alpha}, beta = {beta}"
            ));
        }
        if n_neg == 0 {
            return Err("no negatives: the pAUC needs both classes".into());
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

/// Value of eq. (3) (`F` of eq. 5 divided by `N+ (n - m)`) at the given scores, and its gradient
/// with respect to every score (positives first, then negatives, in the input order).
///
/// # Errors
/// A message for an empty class, a bad range, or a NaN/infinite score.
pub fn objective_and_score_grad(
    pos: &[f64],
    neg: &[f64],
    loss: PairLoss,
    alpha: f64,
    beta: f64,
) -> Result<(f64, Vec<f64>, Vec<f64>), String> {
    if pos.is_empty() {
        return Err("no positives: the pAUC needs both classes".into());
    }
    let range = RankRange::from_fpr(alpha, beta, neg.len())?;
    if let Some(i) = pos.iter().chain(neg).position(|s| !s.is_finite()) {
        return Err(format!("score {i} is not finite"));
    }
    let mut order: Vec<usize> = (0..neg.len()).collect();
    order.sort_by(|&a, &b| neg[b].total_cmp(&neg[a]).then(a.cmp(&b)));
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
/// A message unless `m < n <= S.len()` and every entry is finite.
pub fn sorr(losses: &[f64], m: usize, n: usize) -> Result<f64, String> {
    if !(m < n && n <= losses.len()) {
        return Err(format!(
            "SoRR needs m < n <= {}, got m = {m}, n = {n}",
            losses.len()
        ));
    }
    if losses.iter().any(|v| !v.is_finite()) {
        return Err("a loss is not finite".into());
    }
    let mut sorted = losses.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
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
