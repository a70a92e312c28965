//! burn-train metrics of the ranking figures rankrisk's objectives train for, computed over a
//! whole split at the end of each epoch (an AUC of a batch is not a piece of the epoch's AUC):
//! [`RankingMetric::auroc`], [`RankingMetric::pauc`] (over FPR `[alpha, beta]`, eq. (2) of the
//! FPR-range paper) and [`RankingMetric::two_way_pauc`] (LibAUC's two-way pAUC), in percent as
//! Burn's own AUROC; and the objective's own value over the split
//! ([`ObjectiveModel::validation_loss`](super::ObjectiveModel::validation_loss)).
//!
//! Register them with `SupervisedTraining::metric_valid_numeric` (the Learner's dashboard and
//! logs show them) and choose the best checkpoint by one with
//! `MetricCheckpointingStrategy::new(&metric, Aggregate::Mean, Direction::Highest,
//! Split::Valid)` (`Direction::Lowest` for the objective). They read the [`ScoreOutput`] of
//! [`ObjectiveModel`](super::ObjectiveModel)'s training steps and the [`ValidScores`] of its
//! validation steps; both feed Burn's own `AurocMetric::binary()` too (through
//! `ConfusionStatsInput`). The validation steps give no loss tensor: the logistic loss they
//! used to give under Burn's name "Loss" was not the loss trained, and Burn's default best
//! checkpoint went by it.

use std::sync::Arc;

use burn::tensor::{Bool, ExecutionError, Tensor, TensorData, TensorReadError};
use burn::train::ItemLazy;
use burn::train::metric::{
    Adaptor, ConfusionStatsInput, LossInput, Metric, MetricAttributes, MetricMetadata, MetricName,
    Numeric, NumericAttributes, NumericEntry, SerializedEntry,
};

use crate::metrics::auc::{auc, pauc};
use crate::metrics::conventions::libauc_two_way_pauc;
use crate::train::objective::TrainError;

/// What [`ObjectiveModel`](super::ObjectiveModel)'s training steps give the Learner: the
/// objective's batch loss (Burn's `LossMetric` reads it), the scores and the labels.
pub struct ScoreOutput {
    /// The objective's batch loss, `[1]`.
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

/// What [`ObjectiveModel`](super::ObjectiveModel)'s validation steps give the Learner: the
/// scores and the labels, for the ranking metrics (the objective's value among them) and Burn's
/// `AurocMetric`.
pub struct ValidScores {
    /// The scores, `[batch]`.
    pub scores: Tensor<1>,
    /// The labels, +1 positive and -1 negative.
    pub labels: Vec<f64>,
}

impl ItemLazy for ValidScores {
    fn sync(self) -> Result<Self, ExecutionError> {
        self.scores.device().flush()?;
        Ok(ValidScores {
            scores: self.scores.without_autodiff(),
            labels: self.labels,
        })
    }
}

impl Adaptor<ScoreInput> for ValidScores {
    fn adapt(&self) -> ScoreInput {
        ScoreInput {
            scores: self.scores.clone(),
            labels: self.labels.clone(),
        }
    }
}

/// Burn's binary classification input: the scores as `[batch, 1]` predictions (a rank-based
/// metric such as Burn's `AurocMetric` needs no threshold) and the positives as `[batch, 1]`
/// targets.
fn confusion(scores: &Tensor<1>, labels: &[f64]) -> ConfusionStatsInput {
    let n = labels.len();
    let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
    let targets = Tensor::<1, Bool>::from_data(TensorData::new(positive, [n]), &scores.device());
    ConfusionStatsInput::new(scores.clone().unsqueeze_dim(1), targets.unsqueeze_dim(1))
}

impl Adaptor<ConfusionStatsInput> for ScoreOutput {
    fn adapt(&self) -> ConfusionStatsInput {
        confusion(&self.scores, &self.labels)
    }
}

impl Adaptor<ConfusionStatsInput> for ValidScores {
    fn adapt(&self) -> ConfusionStatsInput {
        confusion(&self.scores, &self.labels)
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

/// The entry of an epoch's figure: `Final`, so that the Learner logs it as the epoch's value,
/// shown with `unit`; N/A where it is undefined.
fn entry(value: Option<f64>, unit: &str) -> SerializedEntry {
    match value {
        Some(v) => SerializedEntry::new(
            format!("epoch {v:.4}{unit} - batch N/A"),
            NumericEntry::Final(v).serialize(),
        ),
        None => SerializedEntry::not_available(None),
    }
}

/// The objective's read-only value on a split (an
/// [`Objective::evaluate`](crate::train::Objective::evaluate) of its scores and labels).
pub(crate) type Evaluation = Arc<dyn Fn(&[f64], &[f64]) -> Result<f64, TrainError> + Send + Sync>;

/// Which figure a [`RankingMetric`] computes.
#[derive(Clone)]
enum Figure {
    Auc,
    Pauc {
        alpha: f64,
        beta: f64,
    },
    TwoWay {
        min_tpr: f64,
        max_fpr: f64,
    },
    /// The trained objective's own value (lower is better, no unit).
    Objective(Evaluation),
}

impl Figure {
    /// The figure: the ranking ones in percent (as Burn's `AurocMetric` reports), the
    /// objective as it is.
    fn of(&self, scores: &[f64], labels: &[f64]) -> Option<f64> {
        let fraction = match self {
            Figure::Auc => auc(scores, labels).ok(),
            Figure::Pauc { alpha, beta } => pauc(scores, labels, *alpha, *beta).ok(),
            Figure::TwoWay { min_tpr, max_fpr } => {
                libauc_two_way_pauc(scores, labels, *min_tpr, *max_fpr).ok()
            }
            Figure::Objective(evaluate) => return evaluate(scores, labels).ok(),
        };
        fraction.map(|f| 100.0 * f)
    }

    /// The ranking figures are percents to maximize, the objective a value to minimize.
    fn is_ranking(&self) -> bool {
        !matches!(self, Figure::Objective(_))
    }
}

/// A figure over a whole split, as a burn-train numeric metric: AUROC, the pAUC over an FPR
/// range, or LibAUC's two-way pAUC (one type, one constructor per figure), in percent as
/// Burn's `AurocMetric` (`pAUC [0.05, 0.5]` 61.2 is a normalized pAUC of 0.612); or the trained
/// objective's own value over the split, computed at the end of each epoch by
/// [`Objective::evaluate`](crate::train::Objective::evaluate) (read-only: its state does not
/// move), the validation loss that is the loss trained, named for the objective (`SOPA
/// objective`), lower is better (`Direction::Lowest` for a checkpointing strategy); that one is
/// built by [`ObjectiveModel::validation_loss`](super::ObjectiveModel::validation_loss).
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

    /// The objective's value by `evaluate`, named `OBJECTIVE objective`.
    pub(crate) fn objective(objective: &str, evaluate: Evaluation) -> Self {
        Self::with(
            format!("{objective} objective"),
            Figure::Objective(evaluate),
        )
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
        let figure = &self.figure;
        let unit = if figure.is_ranking() { " %" } else { "" };
        Ok(entry(self.state.compute(|s, y| figure.of(s, y)), unit))
    }

    fn clear(&mut self) {
        self.state.clear();
    }

    fn attributes(&self) -> MetricAttributes {
        let ranking = self.figure.is_ranking();
        NumericAttributes {
            unit: ranking.then(|| "%".into()),
            higher_is_better: ranking,
        }
        .into()
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
