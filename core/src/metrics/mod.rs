//! Evaluation metrics: accuracy and the fairness metrics of Appendix B.6 of
//! papers/rank-based-loss-admm.txt (SPD, DI, EOD, AOD, TI, FNRD); the ranking metrics (AUC,
//! partial AUC over an FPR range, ROC) are in [`auc`], other libraries' partial-AUC conventions
//! in [`conventions`], confidence intervals and paired tests in [`ci`], the stratified bootstrap
//! of our pAUC at scale (sorted once, resamples as counts) in [`bootstrap`] (their pictures, ROC
//! curves with the FPR range shaded, are the root crate's `rankrisk::plot`). Every ranking
//! metric costs `O(n log n)` for `n` scores; the bootstrap `O(n log n + B n)` for `B` resamples.
//!
//! Labels are in {-1, +1}; a score predicts +1 when it is positive. For the fairness metrics
//! "positive outcome" means a +1 prediction, group 0 is the privileged group G1 and group 1
//! the unprivileged group G2.

pub mod auc;
pub mod bootstrap;
pub mod ci;
pub mod conventions;
mod draws;
mod paired;
pub mod ranked;
mod resample;
mod tasks;
mod threads;

pub use auc::{
    MetricError, RankRange, RocPoint, auc as roc_auc, pauc, pauc_roc_area, roc_curve, two_way_pauc,
};

/// Fraction of samples whose score has the sign of their label (a zero score predicts -1).
pub fn accuracy(scores: &[f64], y: &[f64]) -> f64 {
    if scores.is_empty() {
        return f64::NAN;
    }
    let correct = scores
        .iter()
        .zip(y)
        .filter(|&(&s, &t)| (s > 0.0) == (t > 0.0))
        .count();
    correct as f64 / scores.len() as f64
}

/// The fairness metrics of Appendix B.6 (definitions of Lee et al. as used in the paper).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Fairness {
    /// Statistical parity difference `P(Yhat = 1 | G2) - P(Yhat = 1 | G1)`.
    pub spd: f64,
    /// Disparate impact `P(Yhat = 1 | G2) / P(Yhat = 1 | G1)`.
    pub di: f64,
    /// Equal opportunity difference `TPR(G2) - TPR(G1)`.
    pub eod: f64,
    /// Average odds difference `((FPR(G2) - FPR(G1)) + (TPR(G2) - TPR(G1))) / 2`.
    pub aod: f64,
    /// Theil index of the benefits `b_i = yhat_i - y_i + 1` (labels as 0/1).
    pub ti: f64,
    /// False negative rate difference `FNR(G2) - FNR(G1)`.
    pub fnrd: f64,
}

#[derive(Default)]
struct Counts {
    n: f64,
    pred_pos: f64,
    tp: f64,
    pos: f64,
    fp: f64,
    neg: f64,
}

impl Counts {
    fn rate(a: f64, b: f64) -> f64 {
        if b > 0.0 { a / b } else { f64::NAN }
    }
    fn selection(&self) -> f64 {
        Self::rate(self.pred_pos, self.n)
    }
    fn tpr(&self) -> f64 {
        Self::rate(self.tp, self.pos)
    }
    fn fpr(&self) -> f64 {
        Self::rate(self.fp, self.neg)
    }
}

/// The fairness metrics for scores, labels (+1/-1) and groups (0 = G1 privileged, 1 = G2).
/// A rate over an empty group is NaN.
pub fn fairness(scores: &[f64], y: &[f64], group: &[u8]) -> Fairness {
    let mut counts = [Counts::default(), Counts::default()];
    let mut benefits = Vec::with_capacity(scores.len());
    for ((&s, &t), &g) in scores.iter().zip(y).zip(group) {
        let c = &mut counts[usize::from(g.min(1))];
        let pred = s > 0.0;
        let actual = t > 0.0;
        c.n += 1.0;
        c.pred_pos += f64::from(u8::from(pred));
        if actual {
            c.pos += 1.0;
            c.tp += f64::from(u8::from(pred));
        } else {
            c.neg += 1.0;
            c.fp += f64::from(u8::from(pred));
        }
        benefits.push(f64::from(u8::from(pred)) - f64::from(u8::from(actual)) + 1.0);
    }
    let [g1, g2] = &counts;
    let mu = benefits.iter().sum::<f64>() / benefits.len() as f64;
    let ti = benefits
        .iter()
        .map(|&b| {
            if b > 0.0 {
                (b / mu) * (b / mu).ln()
            } else {
                0.0
            }
        })
        .sum::<f64>()
        / benefits.len() as f64;
    Fairness {
        spd: g2.selection() - g1.selection(),
        di: g2.selection() / g1.selection(),
        eod: g2.tpr() - g1.tpr(),
        aod: 0.5 * ((g2.fpr() - g1.fpr()) + (g2.tpr() - g1.tpr())),
        ti,
        fnrd: (1.0 - g2.tpr()) - (1.0 - g1.tpr()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_counts_signs() {
        assert_eq!(
            accuracy(&[1.0, -2.0, 0.0, 3.0], &[1.0, -1.0, -1.0, -1.0]),
            0.75
        );
    }

    #[test]
    fn fairness_on_a_hand_made_case() {
        // G1: 4 samples, labels + + - -, predictions + - + -  -> sel 0.5, TPR 0.5, FPR 0.5
        // G2: 4 samples, labels + + - -, predictions + + - -  -> sel 0.5, TPR 1, FPR 0
        let scores = [1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0];
        let y = [1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, -1.0];
        let g = [0, 0, 0, 0, 1, 1, 1, 1];
        let f = fairness(&scores, &y, &g);
        assert_eq!(f.spd, 0.0);
        assert_eq!(f.di, 1.0);
        assert_eq!(f.eod, 0.5);
        assert_eq!(f.aod, 0.5 * (-0.5 + 0.5));
        assert_eq!(f.fnrd, -0.5);
        // benefits: G1 1,0,2,1 ; G2 1,1,1,1 -> mu = 1; TI = (2 ln 2) / 8
        assert!((f.ti - 2.0 * 2f64.ln() / 8.0).abs() < 1e-15);
    }
}
