//! Empirical risk minimization, eq. (1) of the rank-based paper with `sigma_i = 1/n`, as an
//! [`Objective`]: with the logistic loss, the cross-entropy (CE) baseline of the pAUC paper's
//! Tables 2-3.

use crate::math::loss::Loss;
use crate::objective::{
    BatchGradient, Objective, Provenance, State, TrainError, check_batch, no_state, stateless_value,
};

config! {
    /// Settings of [`Erm`], the empirical risk of eq. (1) of the rank-based paper with
    /// `sigma_i = 1/n`; with the logistic loss it is the cross-entropy (CE) baseline of the pAUC
    /// paper's Tables 2-3 (LibAUC trains CE with PyTorch's `BCEWithLogitsLoss`, the same loss).
    pub struct ErmConfig {
        required {
        }
        defaults {
            /// The individual loss of the margin `-y s` (default logistic: binary cross-entropy on
            /// the logits).
            loss: Loss = Loss::Logistic,
        }
    }
}

impl ErmConfig {
    /// The objective for a training set with `labels` (id order; +1 positive, -1 or 0
    /// negative), which its record fingerprints (ERM keeps no state).
    ///
    /// # Errors
    /// [`TrainError::Spec`] for a loss whose parameters are out of range;
    /// [`TrainError::BadLabel`] for a label other than +1, -1 or 0.
    pub fn init(&self, labels: &[f64]) -> Result<Erm, TrainError> {
        self.loss.validate()?;
        Ok(Erm {
            loss: self.loss,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// Empirical risk `mean_i l(-y_i s_i)` over the batch (eq. 1 with sigma_i = 1/n): no state.
/// Built by [`ErmConfig::init`].
#[derive(Debug, Clone, PartialEq)]
pub struct Erm {
    loss: Loss,
    provenance: Provenance,
}

impl Erm {
    /// The individual loss.
    pub fn loss(&self) -> Loss {
        self.loss
    }
}

impl Objective for Erm {
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        check_batch(scores, labels, ids, None)?;
        let b = scores.len() as f64;
        let mut loss = 0.0;
        let grad = scores
            .iter()
            .zip(labels)
            .map(|(&s, &y)| {
                let u = -y * s;
                loss += self.loss.value(u);
                (-y * self.loss.derivative(u) / b) as f32
            })
            .collect();
        Ok(BatchGradient {
            loss: loss / b,
            grad,
        })
    }

    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        stateless_value(self, scores, labels)
    }

    fn name(&self) -> &'static str {
        "ERM"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        Vec::new()
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        no_state(self.name(), state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logistic_erm_gradient_matches_finite_differences() {
        let s = [0.3, -2.0, 40.0, -800.0];
        let y = [1.0, 1.0, -1.0, -1.0];
        let ids = [0, 1, 2, 3];
        let mut erm = ErmConfig::new().init(&y).unwrap();
        let g = erm.batch_gradient(&s, &y, &ids).unwrap();
        assert!(g.loss.is_finite());
        for i in 0..s.len() {
            let h = 1e-6;
            let mut sp = s;
            sp[i] += h;
            let mut sm = s;
            sm[i] -= h;
            let up = erm.batch_gradient(&sp, &y, &ids).unwrap().loss;
            let down = erm.batch_gradient(&sm, &y, &ids).unwrap().loss;
            let fd = (up - down) / (2.0 * h);
            assert!(
                (fd - f64::from(g.grad[i])).abs() < 1e-6,
                "{i}: {fd} vs {}",
                g.grad[i]
            );
        }
    }
}
