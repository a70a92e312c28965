//! The interface between a training loop and an objective: scores, labels and sample ids of a
//! batch in, the per-sample gradient `dL/ds` and the loss value out. The surrogate bridge
//! ([`crate::bridge::surrogate`]) turns the gradient into parameter gradients on the device.

use crate::loss::Loss;

/// Why an objective refused a batch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainError {
    /// Scores, labels and ids disagree in length, or the batch is empty.
    #[error("batch: {scores} scores, {labels} labels, {ids} ids (they must agree and be > 0)")]
    Shape {
        /// Number of scores.
        scores: usize,
        /// Number of labels.
        labels: usize,
        /// Number of ids.
        ids: usize,
    },
    /// A sample id is not below the size of the training set the state was built for.
    #[error("sample id {id} out of range: the objective holds state for {n} samples")]
    IdOutOfRange {
        /// The id.
        id: usize,
        /// The number of samples.
        n: usize,
    },
    /// A score is NaN or infinite.
    #[error("score {index} is not finite ({value}): the model diverged or its input holds NaN")]
    NonFiniteScore {
        /// Position in the batch.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A label is not -1 or +1.
    #[error("label {index} is {value}, expected -1 or +1")]
    BadLabel {
        /// Position in the batch.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// The objective cannot be built from these settings or this data.
    #[error("{0}")]
    Settings(String),
    /// AGD-SBCD's settings, duals or scores.
    #[error(transparent)]
    Sbcd(#[from] crate::pauc::agd::SbcdError),
    /// Scores could not be read back or a gradient could not be attached.
    #[error(transparent)]
    Bridge(#[from] crate::bridge::BridgeError),
}

/// What an objective returns for a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchGradient {
    /// The objective's value on the batch (for logging).
    pub loss: f64,
    /// `dL/ds_i` for each score of the batch, in batch order (f32, as the device wants it).
    pub grad: Vec<f32>,
}

/// An objective that turns a batch's scores into per-sample gradients, keeping whatever
/// per-sample state it needs on the CPU (indexed by sample id).
pub trait Objective {
    /// The gradient of the objective's batch loss with respect to the scores.
    ///
    /// # Errors
    /// [`TrainError`] for mismatched lengths, ids out of range, NaN/inf scores, bad labels.
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError>;
}

/// Check a batch: lengths, finiteness, labels in {-1, +1}, ids below `n` (if given).
///
/// # Errors
/// The first problem found, as a [`TrainError`].
pub fn check_batch(
    scores: &[f64],
    labels: &[f64],
    ids: &[usize],
    n: Option<usize>,
) -> Result<(), TrainError> {
    if scores.is_empty() || scores.len() != labels.len() || scores.len() != ids.len() {
        return Err(TrainError::Shape {
            scores: scores.len(),
            labels: labels.len(),
            ids: ids.len(),
        });
    }
    if let Some(index) = scores.iter().position(|s| !s.is_finite()) {
        return Err(TrainError::NonFiniteScore {
            index,
            value: scores[index],
        });
    }
    if let Some(index) = labels.iter().position(|&y| y != 1.0 && y != -1.0) {
        return Err(TrainError::BadLabel {
            index,
            value: labels[index],
        });
    }
    if let Some(n) = n
        && let Some(&id) = ids.iter().find(|&&i| i >= n)
    {
        return Err(TrainError::IdOutOfRange { id, n });
    }
    Ok(())
}

/// Empirical risk `mean_i l(-y_i s_i)` over the batch (eq. 1 with sigma_i = 1/n): no state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Erm {
    /// The individual loss.
    pub loss: Loss,
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
}
