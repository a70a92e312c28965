//! AUC-M (Yuan et al. 2021), a deep baseline of the pAUC paper's Tables 2-3, as an
//! [`Objective`]: the AUC min-max margin loss, whose scalars `a`, `b` and `alpha` live here on
//! the CPU and follow PESG's updates (descent for `a`, `b` with the proximal pull towards the
//! epoch's reference, projected ascent for `alpha`); the model's part of PESG is plain SGD on
//! the score gradient plus [`AucM::parameter_terms`], which a face adds on its
//! device.

use serde::{Deserialize, Serialize};

use crate::math::loss::sigmoid;
use crate::objective::{
    BatchGradient, Objective, ParameterTerms, Provenance, State, TrainError, check_batch,
    evaluation_batch, training_positives, unknown_state,
};

config! {
    /// Settings of [`AucM`] (Yuan et al. 2021, the AUC-M loss trained by PESG); the defaults are
    /// LibAUC 2.0.1's `AUCMLoss` and `PESG`.
    pub struct AucMConfig {
        required {
        }
        defaults {
            /// Share of positives `p` in the samples the loss averages over (LibAUC's `imratio`);
            /// `None` takes the training labels' share. With a class-balancing sampler give the
            /// sampler's share.
            imratio: Option<f64> = None,
            /// Margin `m` (LibAUC's default 1.0).
            margin: f64 = 1.0,
            /// PESG step size of `a`, `b`, `alpha` (LibAUC's default 0.1; the model's optimizer must
            /// use the same).
            lr: f64 = 0.1,
            /// PESG's gamma, the proximal pull `1/gamma (x - x_ref)` (LibAUC's `epoch_decay` 2e-3,
            /// that is gamma = 500; the paper tunes it in {100, 500, 1000}).
            gamma: f64 = 500.0,
            /// Weight decay of the model parameters (LibAUC's default 1e-5).
            weight_decay: f64 = 1e-5,
        }
    }
}

impl AucMConfig {
    /// AUC-M for a training set with `labels` (+1 positive, -1 or 0 negative), `a = b =
    /// alpha = 0`.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 < p < 1`, `margin > 0`, `lr > 0`, `gamma > 0`,
    /// `weight_decay >= 0`; [`TrainError::BadLabel`] for another label value.
    pub fn init(&self, labels: &[f64]) -> Result<AucM, TrainError> {
        let share = training_positives(labels)? as f64 / labels.len() as f64;
        let p = self.imratio.unwrap_or(share);
        let AucMConfig {
            margin,
            lr,
            gamma,
            weight_decay,
            ..
        } = *self;
        for (ok, name, requirement, value) in [
            (p > 0.0 && p < 1.0, "AUC-M's p", "0 < p < 1", p),
            (
                margin > 0.0 && margin.is_finite(),
                "AUC-M's margin",
                "> 0",
                margin,
            ),
            (lr > 0.0 && lr.is_finite(), "AUC-M's lr", "lr > 0", lr),
            (gamma > 0.0, "AUC-M's gamma", "gamma > 0", gamma),
            (
                weight_decay >= 0.0 && weight_decay.is_finite(),
                "AUC-M's weight decay",
                ">= 0",
                weight_decay,
            ),
        ] {
            if !ok {
                return Err(TrainError::Setting {
                    name,
                    requirement,
                    got: value.to_string(),
                });
            }
        }
        Ok(AucM {
            p,
            margin,
            lr,
            gamma,
            weight_decay,
            a: 0.0,
            b: 0.0,
            alpha: 0.0,
            a_ref: 0.0,
            b_ref: 0.0,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// AUC-M with PESG's scalar updates. Built by [`AucMConfig::init`].
///
/// With `h = sigmoid(s)` and `p` the share of positives in the training set, the batch loss is
/// `(1-p) mean[(h-a)^2 1(y=1)] + p mean[(h-b)^2 1(y=-1)]
///  + 2 alpha (p(1-p) m + mean[p h 1(y=-1) - (1-p) h 1(y=1)]) - p(1-p) alpha^2`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AucM {
    p: f64,
    margin: f64,
    /// PESG step size (decayed by [`AucM::decay`]; the device optimizer must use the same).
    pub lr: f64,
    gamma: f64,
    weight_decay: f64,
    /// Mean score target of the positives.
    pub a: f64,
    /// Mean score target of the negatives.
    pub b: f64,
    /// Dual variable, kept >= 0.
    pub alpha: f64,
    a_ref: f64,
    b_ref: f64,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

impl AucM {
    /// PESG's epoch decay: divide the step size by `factor` and make the current point the
    /// new reference (a face takes a new snapshot of the model's parameters too).
    pub fn decay(&mut self, factor: f64) {
        self.lr /= factor;
        self.a_ref = self.a;
        self.b_ref = self.b;
    }

    /// PESG's terms over the model's parameters `w`,
    /// `weight_decay/2 ||w||^2 + 1/(2 gamma) ||w - w_ref||^2` (`w_ref` the snapshot taken at
    /// the last [`AucM::decay`]), which a face builds on its device.
    pub fn parameter_terms(&self) -> ParameterTerms {
        ParameterTerms {
            norm: 0.5 * self.weight_decay,
            distance: 0.5 / self.gamma,
        }
    }
}

impl Objective for AucM {
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        check_batch(scores, labels, ids, None)?;
        let (p, bsz) = (self.p, scores.len() as f64);
        let (mut loss, mut ga, mut gb, mut mean_term) = (0.0, 0.0, 0.0, 0.0);
        let grad = scores
            .iter()
            .zip(labels)
            .map(|(&s, &y)| {
                let h = sigmoid(s);
                let dh = if y > 0.0 {
                    loss += (1.0 - p) * (h - self.a).powi(2);
                    ga -= 2.0 * (1.0 - p) * (h - self.a);
                    mean_term -= (1.0 - p) * h;
                    2.0 * (1.0 - p) * (h - self.a) - 2.0 * self.alpha * (1.0 - p)
                } else {
                    loss += p * (h - self.b).powi(2);
                    gb -= 2.0 * p * (h - self.b);
                    mean_term += p * h;
                    2.0 * p * (h - self.b) + 2.0 * self.alpha * p
                };
                (dh * h * (1.0 - h) / bsz) as f32
            })
            .collect();
        let pp = p * (1.0 - p);
        let mean_term = mean_term / bsz;
        let loss = loss / bsz + 2.0 * self.alpha * (pp * self.margin + mean_term)
            - pp * self.alpha * self.alpha;
        let g_alpha = 2.0 * (pp * self.margin + mean_term) - 2.0 * pp * self.alpha;
        self.a -= self.lr * (ga / bsz + (self.a - self.a_ref) / self.gamma);
        self.b -= self.lr * (gb / bsz + (self.b - self.b_ref) / self.gamma);
        self.alpha = (self.alpha + self.lr * g_alpha).max(0.0);
        Ok(BatchGradient { loss, grad })
    }

    /// The loss at its saddle point in `a`, `b`, `alpha` on this batch: `a` and `b` the mean
    /// sigmoid score of the batch's positives and negatives, `alpha = max(0, m + mean[p h
    /// 1(y=-1) - (1-p) h 1(y=1)] / (p(1-p)))`, which adds `c^2 / (p(1-p))` for `c = p(1-p) m +
    /// mean[...]` when `c > 0`.
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let (signs, _) = evaluation_batch(scores, labels)?;
        let (p, bsz) = (self.p, scores.len() as f64);
        let h: Vec<f64> = scores.iter().map(|&s| sigmoid(s)).collect();
        let class_mean = |positive: bool| {
            let v: Vec<f64> = h
                .iter()
                .zip(&signs)
                .filter(|&(_, &y)| (y > 0.0) == positive)
                .map(|(&x, _)| x)
                .collect();
            v.iter().sum::<f64>() / (v.len().max(1)) as f64
        };
        let (a, b) = (class_mean(true), class_mean(false));
        let (mut squares, mut mean_term) = (0.0, 0.0);
        for (&x, &y) in h.iter().zip(&signs) {
            if y > 0.0 {
                squares += (1.0 - p) * (x - a).powi(2);
                mean_term -= (1.0 - p) * x;
            } else {
                squares += p * (x - b).powi(2);
                mean_term += p * x;
            }
        }
        let pp = p * (1.0 - p);
        let c = pp * self.margin + mean_term / bsz;
        Ok(squares / bsz + if c > 0.0 { c * c / pp } else { 0.0 })
    }

    fn name(&self) -> &'static str {
        "AUC-M"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    /// `[a, b, alpha, a_ref, b_ref, lr]` (the step size moves with PESG's epoch decay).
    fn state(&self) -> State {
        vec![(
            "aucm_scalars",
            vec![self.a, self.b, self.alpha, self.a_ref, self.b_ref, self.lr],
        )]
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        for (name, values) in state {
            match (name, values.as_slice()) {
                ("aucm_scalars", &[a, b, alpha, a_ref, b_ref, lr]) => {
                    [self.a, self.b, self.alpha, self.a_ref, self.b_ref, self.lr] =
                        [a, b, alpha, a_ref, b_ref, lr];
                }
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

    #[test]
    fn aucm_gradients_match_finite_differences() {
        let s = [0.3, -1.2, 2.0, 0.1, -0.4, 0.9, -2.5, 1.4];
        let y = [1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0];
        let mut m = AucMConfig::new()
            .with_imratio(Some(0.3))
            .with_weight_decay(1e-4)
            .init(&y)
            .unwrap();
        (m.a, m.b, m.alpha) = (0.6, 0.2, 0.4);
        check_fd(&m, &s, &y);
    }

    #[test]
    fn pesg_moves_the_scalars_and_keeps_alpha_nonnegative() {
        let mut m = AucMConfig::new()
            .with_imratio(Some(0.5))
            .with_lr(0.5)
            .with_gamma(100.0)
            .with_weight_decay(0.0)
            .init(&[1.0, -1.0])
            .unwrap();
        let ids = [0, 1, 2, 3];
        // Positives scored above negatives: alpha's gradient p(1-p) m + mean[...] stays > 0
        // only while the margin is not met.
        for _ in 0..50 {
            m.batch_gradient(&[3.0, 3.0, -3.0, -3.0], &[1.0, 1.0, -1.0, -1.0], &ids)
                .unwrap();
        }
        assert!(m.a > 0.5 && m.b < 0.5, "a {} b {}", m.a, m.b);
        assert!(m.alpha >= 0.0);
        assert!(
            AucMConfig::new()
                .with_imratio(Some(1.0))
                .init(&[1.0, -1.0])
                .is_err()
        );
    }
}
