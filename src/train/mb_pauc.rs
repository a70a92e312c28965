//! The naive mini-batch pAUC method (Kar et al. 2014), a deep baseline of the pAUC paper's
//! Tables 2-3, as an [`Objective`]: the pAUC surrogate (eq. 3) of each mini-batch on its own.

use serde::{Deserialize, Serialize};

use crate::pauc::objective::{PairLoss, objective_and_score_grad};
use crate::train::objective::{BatchGradient, Objective, TrainError, check_batch};

/// The naive mini-batch pAUC method (Kar et al. 2014): eq. (3) of the pAUC paper evaluated on
/// each batch alone, FPR range `[alpha, beta]` over the batch's negatives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MiniBatchPauc {
    /// FPR range start.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
    /// Pairwise surrogate.
    pub loss: PairLoss,
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::objective::check_fd;

    #[test]
    fn minibatch_pauc_gradients_match_finite_differences() {
        let s = [0.3, -1.2, 2.0, 0.1, -0.4, 0.9, -2.5, 1.4];
        let y = [1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0];
        let mb = MiniBatchPauc {
            alpha: 0.0,
            beta: 0.6,
            loss: PairLoss::Logistic,
        };
        check_fd(&mb, &s, &y);
    }

    #[test]
    fn a_batch_of_one_class_is_refused() {
        let mut mb = MiniBatchPauc {
            alpha: 0.05,
            beta: 0.5,
            loss: PairLoss::Logistic,
        };
        let err = mb
            .batch_gradient(&[0.1, 0.2], &[-1.0, -1.0], &[0, 1])
            .unwrap_err();
        assert!(err.to_string().contains("both classes"), "{err}");
    }
}
