//! burn-train metrics of the ranking figures rankrisk's objectives train for, computed over a
//! whole split at the end of each epoch (an AUC of a batch is not a piece of the epoch's AUC):
//! [`RankingMetric::auroc`], [`RankingMetric::pauc`] (over FPR `[alpha, beta]`, eq. (2) of the
//! FPR-range paper) and [`RankingMetric::two_way_pauc`] (LibAUC's two-way pAUC).
//!
//! Register them with `SupervisedTraining::metric_valid_numeric` (the Learner's dashboard and
//! logs show them) and choose the best checkpoint by one with
//! `MetricCheckpointingStrategy::new(&metric, Aggregate::Mean, Direction::Highest,
//! Split::Valid)`. They read the [`ScoreOutput`] of
//! [`ObjectiveModel`](super::ObjectiveModel)'s steps.

use std::sync::Arc;

use burn::tensor::{ExecutionError, Tensor, TensorReadError};
use burn::train::ItemLazy;
use burn::train::metric::{
    Adaptor, LossInput, Metric, MetricMetadata, MetricName, Numeric, NumericEntry, SerializedEntry,
};

use crate::metrics::auc::{auc, pauc};
use crate::metrics::conventions::libauc_two_way_pauc;

/// What [`ObjectiveModel`](super::ObjectiveModel)'s training and validation steps give the
/// Learner: the batch loss, the scores and the labels.
pub struct ScoreOutput {
    /// The batch loss, `[1]` (the objective's in training, the logistic loss in validation).
    pub loss: Tensor<1>,
    /// The scores, `[batch]`.
    pub scores: Tensor<1>,
    /// The labels, +1 positive and -1 negative.
    pub labels: Vec<f64>,
}

impl ItemLazy for ScoreOutput {
    fn sync(self) -> Result<Self, ExecutionError> {
        self.loss.device().flush()?;
        Ok(ScoreOutput {
            loss: self.loss.without_autodiff(),
            scores: self.scores.without_autodiff(),
            labels: self.labels,
        })
    }
}

impl Adaptor<LossInput> for ScoreOutput {
    fn adapt(&self) -> LossInput {
        LossInput::new(self.loss.clone())
    }
}

/// The input of the ranking metrics: a batch's scores and labels.
pub struct ScoreInput {
    scores: Tensor<1>,
    labels: Vec<f64>,
}

impl Adaptor<ScoreInput> for ScoreOutput {
    fn adapt(&self) -> ScoreInput {
        ScoreInput {
            scores: self.scores.clone(),
            labels: self.labels.clone(),
        }
    }
}

/// The scores and labels of the split so far, and the last epoch's value.
#[derive(Clone, Default)]
struct Accumulated {
    scores: Vec<f64>,
    labels: Vec<f64>,
    value: Option<f64>,
}

impl Accumulated {
    fn update(&mut self, input: &ScoreInput) -> Result<(), TensorReadError> {
        let scores = input.scores.clone().try_into_data()?;
        self.scores.extend(scores.iter::<f64>());
        self.labels.extend_from_slice(&input.labels);
        Ok(())
    }

    /// The figure over the split, or `None` where it is undefined (one class, a NaN score).
    fn compute(&mut self, figure: impl Fn(&[f64], &[f64]) -> Option<f64>) -> Option<f64> {
        let defined = self.scores.iter().all(|s| s.is_finite())
            && self.labels.iter().any(|&y| y > 0.0)
            && self.labels.iter().any(|&y| y < 0.0);
        self.value = if defined {
            figure(&self.scores, &self.labels)
        } else {
            None
        };
        self.value
    }

    fn clear(&mut self) {
        self.scores.clear();
        self.labels.clear();
    }
}

/// The entry of an epoch's figure: `Final`, so that the Learner logs it as the epoch's value;
/// N/A where it is undefined.
fn entry(value: Option<f64>) -> SerializedEntry {
    match value {
        Some(v) => SerializedEntry::new(format!("{v:.4}"), NumericEntry::Final(v).serialize()),
        None => SerializedEntry::not_available(None),
    }
}

/// Which figure a [`RankingMetric`] computes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Figure {
    Auc,
    Pauc { alpha: f64, beta: f64 },
    TwoWay { min_tpr: f64, max_fpr: f64 },
}

impl Figure {
    fn of(self, scores: &[f64], labels: &[f64]) -> Option<f64> {
        match self {
            Figure::Auc => auc(scores, labels).ok(),
            Figure::Pauc { alpha, beta } => pauc(scores, labels, alpha, beta).ok(),
            Figure::TwoWay { min_tpr, max_fpr } => {
                libauc_two_way_pauc(scores, labels, min_tpr, max_fpr).ok()
            }
        }
    }
}

/// A ranking figure over a whole split, as a burn-train numeric metric: AUROC, the pAUC over
/// an FPR range, or LibAUC's two-way pAUC (one type, one constructor per figure).
#[derive(Clone)]
pub struct RankingMetric {
    name: MetricName,
    figure: Figure,
    state: Accumulated,
}

impl RankingMetric {
    fn with(name: String, figure: Figure) -> Self {
        RankingMetric {
            name: Arc::new(name),
            figure,
            state: Accumulated::default(),
        }
    }

    /// AUROC (ties count one half), named `AUROC`.
    pub fn auroc() -> Self {
        Self::with("AUROC".into(), Figure::Auc)
    }

    /// The normalized pAUC over FPR `[alpha, beta]` (eq. (2) of the FPR-range paper, what
    /// `rankrisk train` reports), named `pAUC [ALPHA, BETA]`.
    ///
    /// # Panics
    /// Unless `0 <= alpha < beta <= 1`, when the metric is built (as Burn's configs check
    /// their settings), instead of logging N/A for every epoch.
    pub fn pauc(alpha: f64, beta: f64) -> Self {
        assert!(
            (0.0..1.0).contains(&alpha) && alpha < beta && beta <= 1.0,
            "RankingMetric::pauc({alpha}, {beta}): the FPR range needs 0 <= alpha < beta <= 1"
        );
        Self::with(
            format!("pAUC [{alpha}, {beta}]"),
            Figure::Pauc { alpha, beta },
        )
    }

    /// LibAUC's two-way pAUC, TPR `>= min_tpr` and FPR `<= max_fpr` (LibAUC's
    /// `pauc_roc_score` with `min_tpr`), named `two-way pAUC [tpr MIN_TPR, fpr MAX_FPR]`.
    ///
    /// # Panics
    /// Unless `0 <= min_tpr < 1` and `0 < max_fpr <= 1`, when the metric is built.
    pub fn two_way_pauc(min_tpr: f64, max_fpr: f64) -> Self {
        assert!(
            (0.0..1.0).contains(&min_tpr) && max_fpr > 0.0 && max_fpr <= 1.0,
            "RankingMetric::two_way_pauc({min_tpr}, {max_fpr}): needs 0 <= min_tpr < 1 and \
             0 < max_fpr <= 1"
        );
        Self::with(
            format!("two-way pAUC [tpr {min_tpr}, fpr {max_fpr}]"),
            Figure::TwoWay { min_tpr, max_fpr },
        )
    }
}

impl Metric for RankingMetric {
    type Input = ScoreInput;

    fn name(&self) -> MetricName {
        self.name.clone()
    }

    /// Keeps the batch's scores and labels; the figure is the split's, at the end of the epoch.
    fn update(
        &mut self,
        input: &ScoreInput,
        _metadata: &MetricMetadata,
    ) -> Result<SerializedEntry, TensorReadError> {
        self.state.update(input)?;
        Ok(SerializedEntry::not_available(None))
    }

    fn compute(&mut self) -> Result<SerializedEntry, TensorReadError> {
        let figure = self.figure;
        Ok(entry(self.state.compute(|s, y| figure.of(s, y))))
    }

    fn clear(&mut self) {
        self.state.clear();
    }
}

impl Numeric for RankingMetric {
    fn value(&self) -> Option<NumericEntry> {
        self.state.value.map(NumericEntry::Final)
    }

    fn running_value(&self) -> Option<NumericEntry> {
        None
    }

    /// The last epoch's figure; NaN before the first epoch or where it was undefined.
    fn final_value(&self) -> NumericEntry {
        NumericEntry::Final(self.state.value.unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "the FPR range needs 0 <= alpha < beta <= 1")]
    fn a_reversed_fpr_range_is_refused_when_the_metric_is_built() {
        let _ = RankingMetric::pauc(0.5, 0.05);
    }

    #[test]
    #[should_panic(expected = "needs 0 <= min_tpr < 1")]
    fn a_bad_two_way_corner_is_refused_when_the_metric_is_built() {
        let _ = RankingMetric::two_way_pauc(1.0, 0.5);
    }
}
