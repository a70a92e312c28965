//! STACO: the exact two-way pAUC (TPR `>= 1 - theta_0`, FPR `<= theta_1`) by a CVaR over the
//! hardest negatives of each positive inside a CVaR over the easiest positives (Zhou, Wang,
//! Thai, Yang, "Stochastic Primal-Dual Double Block-Coordinate for Two-way Partial AUC
//! Maximization", TMLR 2025), with the per-positive duals and thresholds and the global
//! threshold that LibAUC 2.0.1's `tpAUC_CVaR_loss` keeps.
//!
//! The objective (LibAUC's docstring, `libauc/losses/auc.py:734-740`):
//!
//! `min_{w, s', s} max_{y in [0,1]^{N+}} 1/N+ sum_i y_i (g_i(w, s_i) - s') / theta_0 + s'`,
//! `g_i(w, s_i) = 1/N- sum_j (s_i + (L_ij - s_i)_+ / theta_1)`,
//!
//! `L_ij = max(m - (h_i - h_j), 0)^2` on the sigmoid scores `h`, as the rest of the family.
//! Maximizing over `y` makes the outer term `s' + 1/theta_0 mean_i (g_i - s')_+`, a CVaR over
//! the positives of the largest `g_i` (the lowest-scored positives, since `g_i` falls as `h_i`
//! rises), and minimizing over `s_i` makes `g_i` the mean of positive `i`'s `theta_1 N-`
//! largest pair losses (those with the highest-scored negatives): at the optimum, the mean pair
//! loss over the two-way region.
//!
//! One step on a batch (LibAUC's order, `auc.py:832-851`), with `B+`, `B-` the batch's
//! positives and negatives and `a_ij = 1[L_ij > s_i]` at the old thresholds:
//!
//! 1. `u_i = mean_j (s_i + (L_ij - s_i)_+ / theta_1)`, the batch's `g_i`;
//! 2. the dual, projected ascent: `y_i <- clip(y_i + alpha (u_i - s') / theta_0, 0, 1)`;
//! 3. the gradient in the scores, at the new duals: pair `(i, j)` weighs
//!    `y_i a_ij / (theta_0 theta_1 B+ B-)` in `dL_ij/ds`;
//! 4. the thresholds: `s_i <- s_i - beta_0 (y_i / theta_0) (1 - mean_j a_ij / theta_1)`;
//! 5. the global threshold: `s' <- s' - beta_1 (1 - mean_i y_i / theta_0)`.
//!
//! With `theta_0 = 1` and the duals held at 1 (`alpha = 0`), steps 3 and 4 are SOPA's with
//! `beta = theta_1` and `eta = beta_0` (a test checks it step by step).
//!
//! Where LibAUC's code departs from the paper's algorithm as its optimizer's docstring states
//! it (`libauc/optimizers/staco.py:9-16`), this follows the code, which is what LibAUC's users
//! run: one batch for the dual and the primal steps (the docstring draws two), and the
//! thresholds starting at 0 (the docstring starts them at 1). A positive that appears twice in
//! a batch gets one update, as LibAUC's indexed assignment gives; its pairs count twice in the
//! gradient.

use serde::{Deserialize, Serialize};

use super::{Pairs, PositiveIndex, add_pair, cvar, evaluation_pairs, settings, squared_hinge};
use crate::objective::Provenance;
use crate::objective::State;
use crate::objective::{BatchGradient, Objective, TrainError, unknown_state};

config! {
    /// Settings of [`Staco`]; the defaults are LibAUC 2.0.1's `tpAUC_CVaR_loss`
    /// (`libauc/losses/auc.py:790-799`). In LibAUC `theta_0` and `theta_1` set the region and
    /// `alpha`, `beta_0`, `beta_1` are step sizes.
    pub struct StacoConfig {
        required {
        }
        defaults {
            /// Share of the positives kept, the lowest-scored: the region's TPR `>= 1 - theta_0`,
            /// `0 < theta_0 <= 1` (LibAUC's default 0.5).
            theta_0: f64 = 0.5,
            /// The region's FPR `<= theta_1`, `0 < theta_1 <= 1` (LibAUC's default 0.5).
            theta_1: f64 = 0.5,
            /// Margin `m` of the squared hinge (LibAUC's `threshold`, default 0.5).
            margin: f64 = 0.5,
            /// Step size `alpha` of the duals `y_i` (LibAUC's default 0.1; 0 holds them).
            alpha: f64 = 0.1,
            /// Step size `beta_0` of the per-positive thresholds `s_i` (LibAUC's default 0.1).
            beta_0: f64 = 0.1,
            /// Step size `beta_1` of the global threshold `s'` (LibAUC's default 0.1).
            beta_1: f64 = 0.1,
        }
    }
}

impl StacoConfig {
    /// STACO for a training set with `labels` (id order; +1 positive, -1 or 0 negative): the
    /// duals at 1, the thresholds at 0, as LibAUC's.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 < theta_0, theta_1 <= 1`, `margin > 0`, the step sizes
    /// are finite and `>= 0`, and both classes are present; [`TrainError::BadLabel`] for
    /// another label value.
    pub fn init(&self, labels: &[f64]) -> Result<Staco, TrainError> {
        let share = |v: f64| v > 0.0 && v <= 1.0;
        settings(
            "STACO's theta_0",
            "0 < theta_0 <= 1",
            share(self.theta_0),
            self.theta_0,
        )?;
        settings(
            "STACO's theta_1",
            "0 < theta_1 <= 1",
            share(self.theta_1),
            self.theta_1,
        )?;
        settings(
            "STACO's margin",
            "> 0",
            self.margin > 0.0 && self.margin.is_finite(),
            self.margin,
        )?;
        for (name, v) in [
            ("STACO's alpha", self.alpha),
            ("STACO's beta_0", self.beta_0),
            ("STACO's beta_1", self.beta_1),
        ] {
            settings(name, ">= 0 and finite", v >= 0.0 && v.is_finite(), v)?;
        }
        let index = PositiveIndex::new(labels)?;
        Ok(Staco {
            theta_0: self.theta_0,
            theta_1: self.theta_1,
            margin: self.margin,
            alpha: self.alpha,
            beta_0: self.beta_0,
            beta_1: self.beta_1,
            duals: vec![1.0; index.count],
            thresholds: vec![0.0; index.count],
            global: 0.0,
            index,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// STACO: the two-way pAUC by a CVaR in a CVaR, with a dual `y_i` and a threshold `s_i` per
/// positive and a global threshold `s'`. Built by [`StacoConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Staco {
    theta_0: f64,
    theta_1: f64,
    margin: f64,
    alpha: f64,
    beta_0: f64,
    beta_1: f64,
    /// The duals `y_i in [0, 1]`, one per positive (start at 1).
    pub duals: Vec<f64>,
    /// The inner thresholds `s_i`, one per positive (start at 0).
    pub thresholds: Vec<f64>,
    /// The outer threshold `s'` (starts at 0).
    pub global: f64,
    index: PositiveIndex,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

impl Staco {
    /// Each batch positive's pair losses `L_ij` with their derivatives in `h_i - h_j`.
    fn losses(&self, p: &Pairs) -> Vec<Vec<(f64, f64)>> {
        p.pos
            .iter()
            .map(|&(_, _, hp)| {
                p.neg
                    .iter()
                    .map(|&(_, hn)| squared_hinge(self.margin, hp - hn))
                    .collect()
            })
            .collect()
    }
}

impl Objective for Staco {
    /// The module docs' five steps; the loss is the batch's min-max objective at the new
    /// duals and the old thresholds, `1/B+ sum_i y_i (u_i - s') / theta_0 + s'`, whose
    /// gradient in the scores (duals held) is the one returned.
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        let p = self.index.pairs(scores, labels, ids)?;
        let (nb, pb) = (p.neg.len() as f64, p.pos.len() as f64);
        let (t0, t1) = (self.theta_0, self.theta_1);
        let losses = self.losses(&p);
        let mut grad = vec![0.0; scores.len()];
        let mut loss = self.global;
        let mut dual_sum = 0.0;
        let mut updates = Vec::with_capacity(p.pos.len());
        for (&(a, i, hp), row) in p.pos.iter().zip(&losses) {
            let s = self.thresholds[i];
            let excess: f64 = row.iter().map(|&(l, _)| (l - s).max(0.0)).sum();
            let u = s + excess / (t1 * nb);
            let y = (self.duals[i] + self.alpha * (u - self.global) / t0).clamp(0.0, 1.0);
            loss += y * (u - self.global) / (t0 * pb);
            dual_sum += y;
            let mut active = 0usize;
            for (&(b, hn), &(l, dl)) in p.neg.iter().zip(row) {
                if l > s {
                    active += 1;
                    add_pair(&mut grad, (a, hp), (b, hn), y * dl / (t0 * t1 * pb * nb));
                }
            }
            let step = self.beta_0 * (y / t0) * (1.0 - active as f64 / (t1 * nb));
            updates.push((i, y, s - step));
        }
        for (i, y, s) in updates {
            self.duals[i] = y;
            self.thresholds[i] = s;
        }
        self.global -= self.beta_1 * (1.0 - dual_sum / pb / t0);
        Ok(BatchGradient {
            loss,
            grad: grad.into_iter().map(|g| g as f32).collect(),
        })
    }

    /// `CVaR_theta_0` over the positives of `g_i = CVaR_theta_1(L_i.)` over the negatives:
    /// the objective at the duals and thresholds that solve it on this batch, the mean pair
    /// loss over the two-way region (the module docs' optimum).
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let p = evaluation_pairs(scores, labels)?;
        let g: Vec<f64> = self
            .losses(&p)
            .iter()
            .map(|row| {
                let l: Vec<f64> = row.iter().map(|&(l, _)| l).collect();
                cvar(&l, self.theta_1)
            })
            .collect();
        Ok(cvar(&g, self.theta_0))
    }

    fn name(&self) -> &'static str {
        "STACO"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        vec![
            ("staco_duals", self.duals.clone()),
            ("staco_thresholds", self.thresholds.clone()),
            ("staco_global", vec![self.global]),
        ]
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        for (name, values) in state {
            match (name, values.as_slice()) {
                ("staco_duals", _) if values.len() == self.duals.len() => self.duals = values,
                ("staco_thresholds", _) if values.len() == self.thresholds.len() => {
                    self.thresholds = values;
                }
                ("staco_global", &[g]) => self.global = g,
                (other, _) => return Err(unknown_state(self.name(), other)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::SopaConfig;
    use super::super::test_batch as batch;
    use super::*;
    use crate::math::loss::sigmoid;
    use crate::objective::check_fd;

    fn staco(theta_0: f64, theta_1: f64, alpha: f64, y: &[f64]) -> Staco {
        StacoConfig::new()
            .with_theta_0(theta_0)
            .with_theta_1(theta_1)
            .with_alpha(alpha)
            .with_margin(1.0)
            .init(y)
            .unwrap()
    }

    #[test]
    fn staco_gradient_matches_finite_differences_at_held_duals() {
        let (s, y, _) = batch();
        for (t0, t1) in [(0.5, 0.5), (0.25, 1.0 / 3.0), (1.0, 1.0)] {
            let mut o = staco(t0, t1, 0.0, &y);
            o.duals = vec![0.3, 1.0, 0.0, 0.7];
            o.thresholds = vec![0.3, 0.9, 0.05, 0.5];
            o.global = 0.2;
            check_fd(&o, &s, &y);
        }
    }

    #[test]
    fn staco_with_theta_0_one_and_held_duals_is_sopa() {
        let (s, y, ids) = batch();
        let mut two_way = StacoConfig::new()
            .with_theta_0(1.0)
            .with_theta_1(0.5)
            .with_alpha(0.0)
            .with_beta_0(0.2)
            .with_margin(1.0)
            .init(&y)
            .unwrap();
        let mut one_way = SopaConfig::new(0.5)
            .with_eta(0.2)
            .with_margin(1.0)
            .init(&y)
            .unwrap();
        let mut scores = s.clone();
        for step in 0..5 {
            let a = two_way.batch_gradient(&scores, &y, &ids).unwrap();
            let b = one_way.batch_gradient(&scores, &y, &ids).unwrap();
            assert_eq!(a.grad, b.grad, "step {step}");
            assert_eq!(two_way.thresholds, one_way.thresholds, "step {step}");
            assert!(two_way.duals.iter().all(|&d| d == 1.0));
            // Move the scores as a training step would.
            for (v, g) in scores.iter_mut().zip(&a.grad) {
                *v -= 5.0 * f64::from(*g);
            }
        }
    }

    #[test]
    fn one_step_follows_the_written_updates() {
        // Positive 0 of the batch by hand: u, the projected dual, s_0 and s'.
        let (s, y, ids) = batch();
        let (t0, t1, alpha, b0, b1) = (0.5, 0.5, 0.3, 0.2, 0.1);
        let mut o = StacoConfig::new()
            .with_theta_0(t0)
            .with_theta_1(t1)
            .with_alpha(alpha)
            .with_beta_0(b0)
            .with_beta_1(b1)
            .with_margin(1.0)
            .init(&y)
            .unwrap();
        o.thresholds = vec![0.2, 0.4, 0.1, 0.3];
        o.global = 0.05;
        o.duals = vec![0.9, 0.2, 1.0, 0.5];
        let before = o.clone();
        o.batch_gradient(&s, &y, &ids).unwrap();
        let h: Vec<f64> = s.iter().map(|&v| sigmoid(v)).collect();
        let mut dual_sum = 0.0;
        for i in 0..4 {
            let si = before.thresholds[i];
            let l: Vec<f64> = h[4..]
                .iter()
                .map(|&hn| squared_hinge(1.0, h[i] - hn).0)
                .collect();
            let u = l.iter().map(|&v| si + (v - si).max(0.0) / t1).sum::<f64>() / 6.0;
            let yi = (before.duals[i] + alpha * (u - before.global) / t0).clamp(0.0, 1.0);
            let active = l.iter().filter(|&&v| v > si).count() as f64;
            let s_new = si - b0 * yi / t0 * (1.0 - active / 6.0 / t1);
            assert!((o.duals[i] - yi).abs() < 1e-15, "dual {i}");
            assert!((o.thresholds[i] - s_new).abs() < 1e-15, "threshold {i}");
            dual_sum += yi;
        }
        let g = before.global - b1 * (1.0 - dual_sum / 4.0 / t0);
        assert!((o.global - g).abs() < 1e-15);
    }

    #[test]
    fn state_round_trips_and_bad_settings_are_refused() {
        let (s, y, ids) = batch();
        let mut a = staco(0.5, 0.5, 0.1, &y);
        a.batch_gradient(&s, &y, &ids).unwrap();
        let mut b = staco(0.5, 0.5, 0.1, &y);
        b.set_state(a.state()).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            a.batch_gradient(&s, &y, &ids).unwrap(),
            b.batch_gradient(&s, &y, &ids).unwrap()
        );
        assert!(b.set_state(vec![("staco_duals", vec![1.0])]).is_err());
        for bad in [
            StacoConfig::new().with_theta_0(0.0),
            StacoConfig::new().with_theta_1(1.5),
            StacoConfig::new().with_margin(-1.0),
            StacoConfig::new().with_alpha(f64::NAN),
            StacoConfig::new().with_beta_1(-0.1),
        ] {
            assert!(bad.init(&y).is_err(), "{bad:?}");
        }
    }
}
