//! SOPA-s and SOTA-s: the one-way and the two-way pAUC smoothed by KL-DRO, tracked by moving
//! averages per positive (Zhu et al. 2022).

use serde::{Deserialize, Serialize};

use super::{Pairs, PositiveIndex, add_pair, evaluation_pairs, settings, squared_hinge};
use crate::objective::Provenance;
use crate::objective::State;
use crate::objective::{BatchGradient, Objective, TrainError, unknown_state};

config! {
    /// Settings of [`SopaS`] (Zhu et al. 2022, SOPA-s: the one-way pAUC by KL-DRO smoothing);
    /// the defaults are LibAUC 2.0.1's `pAUC_DRO_Loss`.
    pub struct SopaSConfig {
        required {
        }
        defaults {
            /// KL weight lambda, `> 0` (LibAUC's `Lambda`, default 1.0; a small lambda focuses on the
            /// hardest negatives).
            lambda: f64 = 1.0,
            /// Moving-average weight gamma of the new batch, in (0, 1] (LibAUC's default 0.9).
            gamma: f64 = 0.9,
            /// Margin `m` of the squared hinge (LibAUC's default 1.0).
            margin: f64 = 1.0,
        }
    }
}

/// SOPA-s: the one-way pAUC by KL-DRO smoothing, a moving average `u_i` per positive. Built by
/// [`SopaSConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SopaS {
    lambda: f64,
    gamma: f64,
    margin: f64,
    /// `u_i`, the tracked `1/N- sum_j exp(L_ij / lambda)` (0 until a positive is first seen).
    pub u: Vec<f64>,
    index: PositiveIndex,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

/// `exp(L_ij / lambda)` and `dL_ij/dt` of every pair of positive `a` of `p`.
fn exp_row(p: &Pairs, hp: f64, margin: f64, lambda: f64) -> Vec<(f64, f64)> {
    p.neg
        .iter()
        .map(|&(_, hn)| {
            let (l, dl) = squared_hinge(margin, hp - hn);
            ((l / lambda).exp(), dl)
        })
        .collect()
}

impl SopaSConfig {
    /// SOPA-s for a training set with `labels` (id order; +1 positive, -1 or 0 negative), its
    /// `u_i` at 0 as LibAUC's.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `lambda > 0`, `0 < gamma <= 1`, `margin > 0` and both
    /// classes are present; [`TrainError::BadLabel`] for another label value.
    pub fn init(&self, labels: &[f64]) -> Result<SopaS, TrainError> {
        let (lambda, gamma, margin) = (self.lambda, self.gamma, self.margin);
        settings(
            "SOPA-s's lambda",
            "> 0",
            lambda > 0.0 && lambda.is_finite(),
            lambda,
        )?;
        settings(
            "SOPA-s's gamma",
            "0 < gamma <= 1",
            gamma > 0.0 && gamma <= 1.0,
            gamma,
        )?;
        settings(
            "SOPA-s's margin",
            "> 0",
            margin > 0.0 && margin.is_finite(),
            margin,
        )?;
        let index = PositiveIndex::new(labels)?;
        Ok(SopaS {
            lambda,
            gamma,
            margin,
            u: vec![0.0; index.count],
            index,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

impl Objective for SopaS {
    /// Update `u_i <- (1 - gamma) u_i + gamma mean_j exp(L_ij / lambda)`, then the gradient
    /// `1/B+ sum_i 1/B- sum_j exp(L_ij / lambda) / u_i dL_ij/ds`; the loss is the batch's
    /// `mean_i lambda log mean_j exp(L_ij / lambda)` (its gradient when `gamma = 1`).
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        let p = self.index.pairs(scores, labels, ids)?;
        let (nb, pb) = (p.neg.len() as f64, p.pos.len() as f64);
        let mut grad = vec![0.0; scores.len()];
        let mut loss = 0.0;
        for &(a, i, hp) in &p.pos {
            let row = exp_row(&p, hp, self.margin, self.lambda);
            let mean = row.iter().map(|e| e.0).sum::<f64>() / nb;
            loss += self.lambda * mean.ln();
            self.u[i] = (1.0 - self.gamma) * self.u[i] + self.gamma * mean;
            for (&(b, hn), &(e, dl)) in p.neg.iter().zip(&row) {
                add_pair(&mut grad, (a, hp), (b, hn), e / self.u[i] * dl / (pb * nb));
            }
        }
        Ok(BatchGradient {
            loss: loss / pb,
            grad: grad.into_iter().map(|g| g as f32).collect(),
        })
    }

    /// `mean_i lambda log mean_j exp(L_ij / lambda)`: the loss [`Objective::batch_gradient`]
    /// reports, each `u_i` at the batch's mean.
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let p = evaluation_pairs(scores, labels)?;
        let nb = p.neg.len() as f64;
        let total: f64 = p
            .pos
            .iter()
            .map(|&(_, _, hp)| {
                let row = exp_row(&p, hp, self.margin, self.lambda);
                self.lambda * (row.iter().map(|e| e.0).sum::<f64>() / nb).ln()
            })
            .sum();
        Ok(total / p.pos.len() as f64)
    }

    fn name(&self) -> &'static str {
        "SOPA-s"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        vec![("sopa_s_u", self.u.clone())]
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        for (name, values) in state {
            match name {
                "sopa_s_u" if values.len() == self.u.len() => self.u = values,
                other => return Err(unknown_state(self.name(), other)),
            }
        }
        Ok(())
    }
}

config! {
    /// Settings of [`SotaS`] (Zhu et al. 2022, SOTA-s: the two-way pAUC by KL-DRO over the
    /// negatives and over the positives); the defaults are LibAUC 2.0.1's `tpAUC_KL_Loss`.
    pub struct SotaSConfig {
        required {
        }
        defaults {
            /// KL weight over the negatives, lambda, `> 0` (LibAUC's `Lambda`, default 1.0).
            lambda: f64 = 1.0,
            /// KL weight over the positives, tau, `> 0` (LibAUC's default 1.0).
            tau: f64 = 1.0,
            /// Moving-average weight of `u_i`, in (0, 1] (LibAUC's `gammas[0]`, default 0.9).
            gamma_u: f64 = 0.9,
            /// Moving-average weight of `v`, in (0, 1] (LibAUC's `gammas[1]`, default 0.9).
            gamma_v: f64 = 0.9,
            /// Margin `m` of the squared hinge (LibAUC's default 1.0).
            margin: f64 = 1.0,
        }
    }
}

/// SOTA-s: the two-way pAUC by KL-DRO over the negatives (lambda) and over the positives
/// (tau), moving averages `u_i` per positive and `v` over the positives. Built by
/// [`SotaSConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SotaS {
    lambda: f64,
    tau: f64,
    gamma_u: f64,
    gamma_v: f64,
    margin: f64,
    /// `u_i`, the tracked `1/N- sum_j exp(L_ij / lambda)`.
    pub u: Vec<f64>,
    /// `v`, the tracked `1/N+ sum_i u_i^(lambda / tau)`.
    pub v: f64,
    index: PositiveIndex,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

impl SotaSConfig {
    /// SOTA-s for a training set with `labels` (id order; +1 positive, -1 or 0 negative), `u_i`
    /// and `v` at 0 as LibAUC's.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `lambda, tau > 0`, the gammas in (0, 1], `margin > 0`
    /// and both classes are present; [`TrainError::BadLabel`] for another label value.
    pub fn init(&self, labels: &[f64]) -> Result<SotaS, TrainError> {
        let (lambda, tau, margin) = (self.lambda, self.tau, self.margin);
        let (gamma_u, gamma_v) = (self.gamma_u, self.gamma_v);
        settings(
            "SOTA-s's lambda",
            "> 0",
            lambda > 0.0 && lambda.is_finite(),
            lambda,
        )?;
        settings("SOTA-s's tau", "> 0", tau > 0.0 && tau.is_finite(), tau)?;
        for (name, rule, g) in [
            ("SOTA-s's gamma_u", "0 < gamma_u <= 1", gamma_u),
            ("SOTA-s's gamma_v", "0 < gamma_v <= 1", gamma_v),
        ] {
            settings(name, rule, g > 0.0 && g <= 1.0, g)?;
        }
        settings(
            "SOTA-s's margin",
            "> 0",
            margin > 0.0 && margin.is_finite(),
            margin,
        )?;
        let index = PositiveIndex::new(labels)?;
        Ok(SotaS {
            lambda,
            tau,
            gamma_u,
            gamma_v,
            margin,
            u: vec![0.0; index.count],
            v: 0.0,
            index,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

impl Objective for SotaS {
    /// Update each `u_i` as SOPA-s does, then `v <- (1 - gamma_v) v + gamma_v mean_i
    /// u_i^(lambda/tau)` over the batch's positives, then the gradient
    /// `1/B+ sum_i 1/B- sum_j u_i^(lambda/tau - 1) exp(L_ij / lambda) / v dL_ij/ds`; the loss is
    /// the batch's `tau log mean_i (mean_j exp(L_ij / lambda))^(lambda / tau)` (its gradient
    /// when both gammas are 1).
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        let p = self.index.pairs(scores, labels, ids)?;
        let (nb, pb) = (p.neg.len() as f64, p.pos.len() as f64);
        let power = self.lambda / self.tau;
        let rows: Vec<Vec<(f64, f64)>> = p
            .pos
            .iter()
            .map(|&(_, _, hp)| exp_row(&p, hp, self.margin, self.lambda))
            .collect();
        let mut outer = 0.0;
        let mut powered = 0.0;
        for (&(_, i, _), row) in p.pos.iter().zip(&rows) {
            let mean = row.iter().map(|e| e.0).sum::<f64>() / nb;
            outer += mean.powf(power);
            self.u[i] = (1.0 - self.gamma_u) * self.u[i] + self.gamma_u * mean;
            powered += self.u[i].powf(power);
        }
        self.v = (1.0 - self.gamma_v) * self.v + self.gamma_v * powered / pb;
        let mut grad = vec![0.0; scores.len()];
        for (&(a, i, hp), row) in p.pos.iter().zip(&rows) {
            let weight = self.u[i].powf(power - 1.0) / self.v;
            for (&(b, hn), &(e, dl)) in p.neg.iter().zip(row) {
                add_pair(&mut grad, (a, hp), (b, hn), weight * e * dl / (pb * nb));
            }
        }
        Ok(BatchGradient {
            loss: self.tau * (outer / pb).ln(),
            grad: grad.into_iter().map(|g| g as f32).collect(),
        })
    }

    /// `tau log mean_i (mean_j exp(L_ij / lambda))^(lambda / tau)`: the loss
    /// [`Objective::batch_gradient`] reports, `u_i` and `v` at the batch's means.
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let p = evaluation_pairs(scores, labels)?;
        let (nb, pb) = (p.neg.len() as f64, p.pos.len() as f64);
        let power = self.lambda / self.tau;
        let outer: f64 = p
            .pos
            .iter()
            .map(|&(_, _, hp)| {
                let row = exp_row(&p, hp, self.margin, self.lambda);
                (row.iter().map(|e| e.0).sum::<f64>() / nb).powf(power)
            })
            .sum();
        Ok(self.tau * (outer / pb).ln())
    }

    fn name(&self) -> &'static str {
        "SOTA-s"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        vec![("sota_s_u", self.u.clone()), ("sota_s_v", vec![self.v])]
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        for (name, values) in state {
            match (name, values.as_slice()) {
                ("sota_s_u", _) if values.len() == self.u.len() => self.u = values,
                ("sota_s_v", &[v]) => self.v = v,
                (other, _) => return Err(unknown_state(self.name(), other)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::check_fd;
    use crate::pauc::objective::{PairLoss, objective_and_score_grad};

    use super::super::test_batch as batch;
    use crate::math::loss::sigmoid;

    #[test]
    fn kl_gradients_match_finite_differences() {
        let (s, y, _) = batch();
        // gamma = 1: u_i is the batch mean, so the gradient is the loss's.
        check_fd(
            &SopaSConfig::new()
                .with_lambda(0.7)
                .with_gamma(1.0)
                .with_margin(1.0)
                .init(&y)
                .unwrap(),
            &s,
            &y,
        );
        check_fd(
            &SotaSConfig::new()
                .with_lambda(0.7)
                .with_tau(1.3)
                .with_gamma_u(1.0)
                .with_gamma_v(1.0)
                .with_margin(1.0)
                .init(&y)
                .unwrap(),
            &s,
            &y,
        );
    }

    #[test]
    fn sopa_s_with_a_large_lambda_trains_the_full_auc_surrogate() {
        let (s, y, ids) = batch();
        let mut dro = SopaSConfig::new()
            .with_lambda(1e7)
            .with_gamma(1.0)
            .with_margin(1.0)
            .init(&y)
            .unwrap();
        let g = dro.batch_gradient(&s, &y, &ids).unwrap().grad;
        let h: Vec<f64> = s.iter().map(|&v| sigmoid(v)).collect();
        let (_, gp, gn) =
            objective_and_score_grad(&h[..4], &h[4..], PairLoss::SquaredHinge, 0.0, 1.0).unwrap();
        for (k, want) in gp.iter().chain(&gn).enumerate() {
            let want = want * h[k] * (1.0 - h[k]);
            assert!(
                (f64::from(g[k]) - want).abs() < 1e-6,
                "{k}: {} vs {want}",
                g[k]
            );
        }
    }

    #[test]
    fn sota_s_with_a_large_tau_is_sopa_s() {
        let (s, y, ids) = batch();
        let mut two_way = SotaSConfig::new()
            .with_lambda(0.7)
            .with_tau(1e9)
            .with_gamma_u(0.9)
            .with_gamma_v(1.0)
            .with_margin(1.0)
            .init(&y)
            .unwrap();
        let mut one_way = SopaSConfig::new()
            .with_lambda(0.7)
            .with_gamma(0.9)
            .with_margin(1.0)
            .init(&y)
            .unwrap();
        for _ in 0..3 {
            let a = two_way.batch_gradient(&s, &y, &ids).unwrap().grad;
            let b = one_way.batch_gradient(&s, &y, &ids).unwrap().grad;
            for (x, z) in a.iter().zip(&b) {
                assert!((x - z).abs() < 1e-5 * z.abs().max(1e-3), "{x} vs {z}");
            }
        }
    }

    #[test]
    fn bad_settings_are_refused() {
        let (_, y, _) = batch();
        assert!(
            SopaSConfig::new()
                .with_lambda(1.0)
                .with_gamma(1.5)
                .with_margin(1.0)
                .init(&y)
                .is_err()
        );
        assert!(
            SotaSConfig::new()
                .with_lambda(1.0)
                .with_tau(-1.0)
                .with_gamma_u(0.9)
                .with_gamma_v(0.9)
                .with_margin(1.0)
                .init(&y)
                .is_err()
        );
    }
}
