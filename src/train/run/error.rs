//! Why an image run stopped, and the mapping of a non-finite value found during training to
//! [`RunError::Diverged`].

use std::path::PathBuf;

use rankrisk_datasets::DataError;
use rankrisk_models::checkpoint::CheckpointError;

use crate::device::bridge::BridgeError;
use crate::metrics::MetricError;
use crate::pauc::PaucError;
use crate::plot::PlotError;
use crate::train::checkpoint::{LockError, TrainCheckpointError};
use crate::train::objective::TrainError;
use crate::train::parallel::ParallelError;

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad data or an unreadable image.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The objective refused a batch or a setting.
    #[error(transparent)]
    Train(#[from] TrainError),
    /// AGD-SBCD refused its settings, its scores or a saved state.
    #[error(transparent)]
    Pauc(#[from] PaucError),
    /// Training diverged: a non-finite score, loss or evaluation score. The run stops; the
    /// checkpoints of earlier evaluation points, if any were written, are kept.
    #[error(
        "training diverged at step {step}: {quantity} (nothing after it is saved; the \
         checkpoints of earlier evaluation points, if any, are kept; lower lr)"
    )]
    Diverged {
        /// Steps done when it was seen.
        step: usize,
        /// What was not finite, with its value.
        quantity: String,
    },
    /// Scores could not be read back or a gradient not attached at a training step.
    #[error("step {step}: {source}")]
    Bridge {
        /// Steps done.
        step: usize,
        /// What the bridge reported.
        source: BridgeError,
    },
    /// Scores of an evaluation set could not be read back.
    #[error("scoring: {0}")]
    Scoring(BridgeError),
    /// A metric of an evaluation set could not be computed (one class only).
    #[error("{set} set: {source}")]
    Metric {
        /// The set (`test`, `val`).
        set: String,
        /// What the metric reported.
        source: MetricError,
    },
    /// Another run holds the output folder.
    #[error(transparent)]
    Locked(#[from] LockError),
    /// The training checkpoint could not be written or read.
    #[error(transparent)]
    Checkpoint(#[from] TrainCheckpointError),
    /// The best model could not be written.
    #[error("best model: {0}")]
    BestModel(#[from] CheckpointError),
    /// The model to start from (`init_model`) could not be read, or does not fit the task's
    /// network.
    #[error("init_model: {0}")]
    InitModel(CheckpointError),
    /// A metrics, summary or report file could not be written.
    #[error("{path}: {source}")]
    Output {
        /// The file or folder.
        path: PathBuf,
        /// What the file system reported.
        source: std::io::Error,
    },
    /// A plot could not be drawn.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The budget ended before the first evaluation point. (A budget too small for one
    /// period is refused as [`RunError::Setting`] on `epochs` before this.)
    #[error("no evaluation point was reached: the budget (epochs) allowed no training period")]
    NothingRun,
    /// A resumed run differs from the run that wrote its checkpoint in a setting that changes
    /// the computation, or in its data.
    #[error(
        "cannot resume the run in {out}: its checkpoint was written by a run with other \
         settings or data ({}); resume with the same settings, or start a new run in another \
         output folder",
        differences.join("; ")
    )]
    ResumeMismatch {
        /// The run's output folder.
        out: PathBuf,
        /// Each difference, as `key: VALUE then, VALUE now`.
        differences: Vec<String>,
    },
    /// A setting outside its range (named as the flag or config key without `--`).
    #[error("{key}: {message}")]
    Setting {
        /// The setting.
        key: &'static str,
        /// What is wrong and what is allowed.
        message: String,
    },
}

impl RunError {
    /// [`RunError::Output`] for `path`.
    pub fn output(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> RunError {
        let path = path.into();
        move |source| RunError::Output { path, source }
    }
}

/// [`RunError::Diverged`] for a non-finite quantity found after `step` steps (a training
/// score, a loss gradient entry, an SBCD block score); other errors as they are.
pub(crate) fn diverged(step: usize) -> impl Fn(RunError) -> RunError {
    move |e| {
        let quantity = match &e {
            RunError::Train(
                TrainError::NonFiniteScore { index, value }
                | TrainError::Bridge(BridgeError::NonFiniteScore { index, value }),
            )
            | RunError::Bridge {
                source: BridgeError::NonFiniteScore { index, value },
                ..
            } => format!("training score {index} of the step is {value}"),
            RunError::Train(TrainError::Bridge(BridgeError::NonFiniteGradient {
                index,
                value,
            }))
            | RunError::Bridge {
                source: BridgeError::NonFiniteGradient { index, value },
                ..
            } => {
                format!("the loss gradient of training score {index} is {value}")
            }
            RunError::Pauc(PaucError::NonFinite { .. })
            | RunError::Train(TrainError::Pauc(PaucError::NonFinite { .. })) => e.to_string(),
            _ => return e,
        };
        RunError::Diverged { step, quantity }
    }
}

/// A training step's error (one device or several) as the run reports it: a non-finite score
/// or gradient is [`RunError::Diverged`] at `step`.
pub(crate) fn step_error(step: usize) -> impl Fn(ParallelError<RunError>) -> RunError {
    move |e| match e {
        ParallelError::Bridge(source) => bridge_error(step)(source),
        ParallelError::Objective(e) => e,
    }
}

/// A bridge error of training step `step`: [`RunError::Diverged`] for a non-finite value,
/// else [`RunError::Bridge`].
pub(crate) fn bridge_error(step: usize) -> impl Fn(BridgeError) -> RunError {
    move |source| diverged(step)(RunError::Bridge { step, source })
}

impl From<crate::train::recipe::RecipeError> for RunError {
    /// A recipe setting that cannot run is a setting of the run, named by its key.
    fn from(e: crate::train::recipe::RecipeError) -> Self {
        RunError::Setting {
            key: e.key,
            message: e.message,
        }
    }
}
