//! SOPA: the exact one-way pAUC estimator over FPR `[0, beta]`, CVaR-DRO with one threshold
//! per positive (Zhu et al. 2022).

use serde::{Deserialize, Serialize};

use super::{Pairs, PositiveIndex, add_pair, cvar, evaluation_pairs, settings, squared_hinge};
use crate::objective::Provenance;
use crate::objective::State;
use crate::objective::{BatchGradient, Objective, TrainError, unknown_state};

config! {
    /// Settings of [`Sopa`] (Zhu et al. 2022, Algorithm SOPA for the one-way pAUC over FPR
    /// `[0, beta]`); the defaults are LibAUC 2.0.1's `pAUC_CVaR_Loss`.
    pub struct SopaConfig {
        required {
            /// FPR upper bound beta, `0 < beta <= 1` (LibAUC's default 0.2).
            beta: f64,
        }
        defaults {
            /// Margin `m` of the squared hinge `max(m - (h_i - h_j), 0)^2` (LibAUC's default 1.0).
            margin: f64 = 1.0,
            /// Step size `eta` of the thresholds (LibAUC's default 0.1).
            eta: f64 = 0.1,
        }
    }
}

impl SopaConfig {
    /// SOPA for a training set with `labels` (id order; +1 positive, -1 or 0 negative), its
    /// thresholds at 0 as LibAUC's.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 < beta <= 1`, `margin > 0`, `eta > 0` and both
    /// classes are present; [`TrainError::BadLabel`] for another label value.
    pub fn init(&self, labels: &[f64]) -> Result<Sopa, TrainError> {
        let (beta, margin, eta) = (self.beta, self.margin, self.eta);
        settings(
            "SOPA's beta",
            "0 < beta <= 1",
            beta > 0.0 && beta <= 1.0,
            beta,
        )?;
        settings(
            "SOPA's margin",
            "> 0",
            margin > 0.0 && margin.is_finite(),
            margin,
        )?;
        settings("SOPA's eta", "> 0", eta > 0.0 && eta.is_finite(), eta)?;
        let index = PositiveIndex::new(labels)?;
        Ok(Sopa {
            beta,
            margin,
            eta,
            thresholds: vec![0.0; index.count],
            index,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// SOPA: the one-way pAUC over FPR `[0, beta]` by CVaR-DRO with a threshold `s_i` per positive.
/// Built by [`SopaConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sopa {
    beta: f64,
    margin: f64,
    eta: f64,
    /// The thresholds, one per positive (start at 0, as LibAUC's).
    pub thresholds: Vec<f64>,
    index: PositiveIndex,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

impl Sopa {
    /// `F(w, s)` on a batch of scores for the current thresholds:
    /// `mean_i (s_i + 1/(beta B-) sum_j (L_ij - s_i)_+)`.
    fn value(&self, p: &Pairs) -> f64 {
        let nb = p.neg.len() as f64;
        p.pos
            .iter()
            .map(|&(_, i, hp)| {
                let s = self.thresholds[i];
                let excess: f64 = p
                    .neg
                    .iter()
                    .map(|&(_, hn)| (squared_hinge(self.margin, hp - hn).0 - s).max(0.0))
                    .sum();
                s + excess / (self.beta * nb)
            })
            .sum::<f64>()
            / p.pos.len() as f64
    }
}

impl Objective for Sopa {
    /// The gradient of `F(w, s)` at the current thresholds (the pairs whose loss exceeds its
    /// positive's threshold, weighted `1/(B+ beta B-)`), then the threshold step
    /// `s_i <- s_i - eta (1 - #{j: L_ij > s_i} / (beta B-))`.
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        let p = self.index.pairs(scores, labels, ids)?;
        let loss = self.value(&p);
        let (nb, pb) = (p.neg.len() as f64, p.pos.len() as f64);
        let mut grad = vec![0.0; scores.len()];
        let mut steps = Vec::with_capacity(p.pos.len());
        for &(a, i, hp) in &p.pos {
            let s = self.thresholds[i];
            let mut active = 0usize;
            for &(b, hn) in &p.neg {
                let (l, dl) = squared_hinge(self.margin, hp - hn);
                if l > s {
                    active += 1;
                    add_pair(&mut grad, (a, hp), (b, hn), dl / (pb * self.beta * nb));
                }
            }
            steps.push((i, self.eta * (1.0 - active as f64 / (self.beta * nb))));
        }
        for (i, step) in steps {
            self.thresholds[i] -= step;
        }
        Ok(BatchGradient {
            loss,
            grad: grad.into_iter().map(|g| g as f32).collect(),
        })
    }

    /// `mean_i CVaR_beta(L_i.)`: `F(w, s)` at the thresholds that minimize it on this
    /// batch, each positive's mean pair loss over its `beta` share of hardest negatives (the
    /// one-way pAUC surrogate over FPR `[0, beta]`).
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let p = evaluation_pairs(scores, labels)?;
        let total: f64 = p
            .pos
            .iter()
            .map(|&(_, _, hp)| {
                let row: Vec<f64> = p
                    .neg
                    .iter()
                    .map(|&(_, hn)| squared_hinge(self.margin, hp - hn).0)
                    .collect();
                cvar(&row, self.beta)
            })
            .sum();
        Ok(total / p.pos.len() as f64)
    }

    fn name(&self) -> &'static str {
        "SOPA"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        vec![("sopa_thresholds", self.thresholds.clone())]
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        for (name, values) in state {
            match name {
                "sopa_thresholds" if values.len() == self.thresholds.len() => {
                    self.thresholds = values;
                }
                other => return Err(unknown_state(self.name(), other)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::loss::sigmoid;
    use crate::objective::check_fd;
    use crate::pauc::objective::{PairLoss, objective_and_score_grad};

    use super::super::test_batch as batch;

    #[test]
    fn sopa_gradient_matches_finite_differences() {
        let (s, y, _) = batch();
        let mut sopa = SopaConfig::new(0.5)
            .with_margin(1.0)
            .with_eta(0.1)
            .init(&y)
            .unwrap();
        sopa.thresholds = vec![0.3, 0.9, 0.05, 0.5];
        check_fd(&sopa, &s, &y);
    }

    #[test]
    fn sopa_at_its_optimal_thresholds_is_the_fpr_range_objective_at_alpha_0() {
        let (s, y, ids) = batch();
        let h: Vec<f64> = s.iter().map(|&v| sigmoid(v)).collect();
        let (hp, hn) = h.split_at(4);
        for beta in [1.0 / 6.0, 0.5, 1.0] {
            let mut sopa = SopaConfig::new(beta)
                .with_margin(1.0)
                .with_eta(0.1)
                .init(&y)
                .unwrap();
            // The CVaR's minimizing threshold: each positive's k-th largest pair loss.
            let k = (beta * 6.0).round() as usize;
            for (i, &a) in hp.iter().enumerate() {
                let mut l: Vec<f64> = hn.iter().map(|&b| squared_hinge(1.0, a - b).0).collect();
                l.sort_by(|x, z| z.total_cmp(x));
                sopa.thresholds[i] = l[k - 1];
            }
            let got = sopa.batch_gradient(&s, &y, &ids).unwrap().loss;
            let (want, _, _) =
                objective_and_score_grad(hp, hn, PairLoss::SquaredHinge, 0.0, beta).unwrap();
            assert!((got - want).abs() < 1e-12, "beta {beta}: {got} vs {want}");
        }
    }

    #[test]
    fn sopas_threshold_step_is_sbcds_dual_step_scaled() {
        // SBCD's (15): lambda_i <- lambda_i - theta (l - N-/J #active) with l = beta N-; SOPA's
        // step is that divided by beta N- with theta = eta: s_i <- s_i - eta (1 - #active /
        // (beta J)). Positive 0 of the batch, J = N- = 6 negatives, beta = 0.5.
        let (s, y, ids) = batch();
        let mut sopa = SopaConfig::new(0.5)
            .with_margin(1.0)
            .with_eta(0.2)
            .init(&y)
            .unwrap();
        sopa.thresholds = vec![0.5; 4];
        let before = sopa.thresholds[0];
        sopa.batch_gradient(&s, &y, &ids).unwrap();
        let h: Vec<f64> = s.iter().map(|&v| sigmoid(v)).collect();
        let active = h[4..]
            .iter()
            .filter(|&&b| squared_hinge(1.0, h[0] - b).0 > before)
            .count() as f64;
        let (l, n_neg, j) = (0.5 * 6.0, 6.0, 6.0);
        let sbcd = before - 0.2 * (l - n_neg / j * active) / l;
        assert!((sopa.thresholds[0] - sbcd).abs() < 1e-12);
    }

    #[test]
    fn bad_settings_and_one_class_batches_are_refused() {
        let (s, y, _) = batch();
        assert!(
            SopaConfig::new(0.0)
                .with_margin(1.0)
                .with_eta(0.1)
                .init(&y)
                .is_err()
        );
        let mut sopa = SopaConfig::new(0.5)
            .with_margin(1.0)
            .with_eta(0.1)
            .init(&y)
            .unwrap();
        let err = sopa.batch_gradient(&s[..2], &y[..2], &[0, 1]).unwrap_err();
        assert!(err.to_string().contains("both classes"), "{err}");
        // A negative id given a positive label.
        assert!(sopa.batch_gradient(&s[..2], &[1.0, 1.0], &[0, 5]).is_err());
    }
}
