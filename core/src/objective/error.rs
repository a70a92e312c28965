//! Why an objective refused a batch, a setting or a record: [`TrainError`], the error of every
//! objective; and [`BridgeError`], why the scores could not cross between their device and the
//! CPU (the faces' side of a step: rankrisk's Burn bridge, the Python package's tensors).

use crate::admm::AdmmError;
use crate::math::spec::SpecError;
use crate::pauc::PaucError;

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
    /// A target of a face's forward (rankrisk's `BurnObjective::forward`) other than 0 or 1.
    #[error(
        "target {index} is {value}: forward takes Burn's classification targets, 1 for a \
         positive and 0 for a negative (batch_gradient takes labels -1 and +1)"
    )]
    BadTarget {
        /// Position in the batch.
        index: usize,
        /// Its value.
        value: i64,
    },
    /// A batch label that differs from the training set's label of the same sample.
    #[error(
        "label {index} (sample {id}) is {value}, but the training set the objective was built \
         for has {training} there: a batch of another data set, or a validation batch (ids \
         index the training set; evaluate other sets without the objective)"
    )]
    LabelDisagrees {
        /// Position in the batch.
        index: usize,
        /// The sample's id.
        id: usize,
        /// The batch's label.
        value: f64,
        /// The training set's label of that sample.
        training: f64,
    },
    /// A setting of the objective outside its range.
    #[error("{name} needs {requirement}, got {got}")]
    Setting {
        /// The setting.
        name: &'static str,
        /// The allowed range.
        requirement: &'static str,
        /// The value given.
        got: String,
    },
    /// A batch without one of the classes, for an objective that pairs them.
    #[error(
        "a pairwise objective (mini-batch pAUC, SOPA, SOPA-s, SOTA-s) needs both classes in \
         every batch ({positives} positives, {negatives} negatives); use a sampler that \
         guarantees them"
    )]
    OneClassBatch {
        /// Positives in the batch.
        positives: usize,
        /// Negatives in the batch.
        negatives: usize,
    },
    /// A saved state for another training set.
    #[error("saved ADMM state holds {saved} samples and rho {rho}, this run has {n}")]
    State {
        /// Samples in the saved state.
        saved: usize,
        /// Its penalty.
        rho: f64,
        /// Samples of this run.
        n: usize,
    },
    /// Update (14) was asked for before a block was scored (a caller's ordering mistake).
    #[error("update (14) before a block was scored")]
    UnscoredBlock,
    /// The loss, weights or schedule of the objective.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The rank-based solver's z-step or penalty schedule (deep ADMM).
    #[error(transparent)]
    Admm(#[from] AdmmError),
    /// AGD-SBCD's settings, duals or scores, or the pAUC objective.
    #[error(transparent)]
    Pauc(#[from] PaucError),
    /// Scores could not be read back or a gradient could not be attached.
    #[error(transparent)]
    Bridge(#[from] BridgeError),
    /// A record or saved state ([`Objective::set_state`](crate::objective::Objective::set_state),
    /// rankrisk's `try_load_record`) that does not fit this objective.
    #[error("{objective}'s record: {message}")]
    Record {
        /// The objective loading it.
        objective: &'static str,
        /// What does not fit.
        message: String,
    },
    /// The batch's targets or ids could not be read back from their device.
    #[error("batch {what}: {message}")]
    Readback {
        /// `targets` or `ids`.
        what: &'static str,
        /// The device's or the conversion's message.
        message: String,
    },
}

/// Why the bridge refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BridgeError {
    /// `scores` and `grad` disagree in length.
    #[error("surrogate: {scores} scores but {grad} gradient entries")]
    LengthMismatch {
        /// Number of scores.
        scores: usize,
        /// Number of gradient entries.
        grad: usize,
    },
    /// A gradient entry is NaN or infinite.
    #[error("surrogate: gradient entry {index} is not finite ({value})")]
    NonFiniteGradient {
        /// Position of the first bad entry.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// Reading tensor data back from the device failed.
    #[error("reading scores from the device failed: {0}")]
    Readback(String),
    /// A batch tensor on another device (or backend) than the scores.
    #[error(
        "the batch's {what} are on {device}, its scores on {scores}: build them on the scores' \
         device (the batcher's device), or move them with `.to_device(&scores.device())`"
    )]
    OtherDevice {
        /// `targets` or `ids`.
        what: &'static str,
        /// Their device.
        device: String,
        /// The scores' device.
        scores: String,
    },
    /// A score read back from the device is NaN or infinite.
    #[error("score {index} is not finite ({value}): the model diverged or its input holds NaN")]
    NonFiniteScore {
        /// Position of the first bad score.
        index: usize,
        /// Its value.
        value: f64,
    },
}
