//! The naive mini-batch pAUC method (Kar et al. 2014), a deep baseline of the pAUC paper's
//! Tables 2-3, as an [`Objective`]: the pAUC surrogate (eq. 3) of each mini-batch on its own.

use serde::{Deserialize, Serialize};

use crate::objective::{
    BatchGradient, Objective, Provenance, State, TrainError, check_batch, no_state, stateless_value,
};
use crate::pauc::objective::{PairLoss, objective_and_score_grad};

config! {
    /// Settings of [`MiniBatchPauc`]: the FPR range `[alpha, beta]` of eq. (3) of the pAUC paper
    /// and its pairwise surrogate. LibAUC has no such method.
    pub struct MiniBatchPaucConfig {
        required {
            /// FPR range start alpha, `0 <= alpha < beta`.
            alpha: f64,
            /// FPR range end beta, `beta <= 1`.
            beta: f64,
        }
        defaults {
            /// Pairwise surrogate (default logistic, the run driver's).
            loss: PairLoss = PairLoss::Logistic,
        }
    }
}

impl MiniBatchPaucConfig {
    /// The objective for a training set with `labels` (id order; +1 positive, -1 or 0
    /// negative), which its record fingerprints (mini-batch pAUC keeps no state).
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 <= alpha < beta <= 1`; [`TrainError::BadLabel`] for
    /// a label other than +1, -1 or 0.
    pub fn init(&self, labels: &[f64]) -> Result<MiniBatchPauc, TrainError> {
        let (alpha, beta) = (self.alpha, self.beta);
        if !((0.0..1.0).contains(&alpha) && beta > alpha && beta <= 1.0) {
            return Err(TrainError::Setting {
                name: "mini-batch pAUC's alpha, beta",
                requirement: "0 <= alpha < beta <= 1",
                got: format!("[{alpha}, {beta}]"),
            });
        }
        Ok(MiniBatchPauc {
            alpha,
            beta,
            loss: self.loss,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// The naive mini-batch pAUC method (Kar et al. 2014): eq. (3) of the pAUC paper evaluated on
/// each batch alone, FPR range `[alpha, beta]` over the batch's negatives. No state. Built by
/// [`MiniBatchPaucConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MiniBatchPauc {
    alpha: f64,
    beta: f64,
    loss: PairLoss,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

impl Objective for MiniBatchPauc {
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        check_batch(scores, labels, ids, None)?;
        let (mut pos, mut neg, mut where_) = (Vec::new(), Vec::new(), Vec::new());
        for (&s, &y) in scores.iter().zip(labels) {
            if y > 0.0 {
                where_.push((true, pos.len()));
                pos.push(s);
            } else {
                where_.push((false, neg.len()));
                neg.push(s);
            }
        }
        if pos.is_empty() || neg.is_empty() {
            return Err(TrainError::OneClassBatch {
                positives: pos.len(),
                negatives: neg.len(),
            });
        }
        let (value, gp, gn) =
            objective_and_score_grad(&pos, &neg, self.loss, self.alpha, self.beta)?;
        let grad = where_
            .iter()
            .map(|&(is_pos, k)| if is_pos { gp[k] } else { gn[k] } as f32)
            .collect();
        Ok(BatchGradient { loss: value, grad })
    }

    /// The batch value, as [`Objective::batch_gradient`] gives it (no state).
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        stateless_value(self, scores, labels)
    }

    fn name(&self) -> &'static str {
        "mini-batch pAUC"
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
    use crate::objective::check_fd;

    #[test]
    fn minibatch_pauc_gradients_match_finite_differences() {
        let s = [0.3, -1.2, 2.0, 0.1, -0.4, 0.9, -2.5, 1.4];
        let y = [1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0];
        let mb = MiniBatchPaucConfig::new(0.0, 0.6).init(&y).unwrap();
        check_fd(&mb, &s, &y);
    }

    #[test]
    fn a_batch_of_one_class_is_refused() {
        let labels = [1.0, -1.0];
        let mut mb = MiniBatchPaucConfig::new(0.05, 0.5).init(&labels).unwrap();
        assert!(MiniBatchPaucConfig::new(0.5, 0.5).init(&labels).is_err());
        let err = mb
            .batch_gradient(&[0.1, 0.2], &[-1.0, -1.0], &[0, 1])
            .unwrap_err();
        assert!(err.to_string().contains("both classes"), "{err}");
    }
}
