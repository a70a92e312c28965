//! The one error of the tasks: building a data set and its model, and running a task.

use rankrisk_datasets::DataError;
use rankrisk_models::pretrained::PretrainedError;

use crate::admm::AdmmError;
use crate::device::backend::BackendError;
use crate::metrics::MetricError;
use crate::pauc::PaucError;
use crate::train::run::RunError;

/// Why a task could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// Missing or malformed data, or a split that leaves a class out.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The image run stopped.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The backend could not be opened.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// Pretrained weights that do not fit the model.
    #[error(transparent)]
    Pretrained(#[from] PretrainedError),
    /// A rank-based linear solver refused its data or settings.
    #[error(transparent)]
    Admm(#[from] AdmmError),
    /// A partial-AUC linear solver refused its data or settings.
    #[error(transparent)]
    Pauc(#[from] PaucError),
    /// A test metric could not be computed.
    #[error("{data}: {source}")]
    Metric {
        /// The data set.
        data: String,
        /// What the metric reported.
        source: MetricError,
    },
    /// One split of a task's data (training, validation, test) refused.
    #[error("the {split} split ({images} images): {source}")]
    Split {
        /// Which split.
        split: &'static str,
        /// Its size.
        images: usize,
        /// What the data reported (boxed: the error type stays small).
        source: Box<DataError>,
    },
    /// A task setting outside its range (named as the flag or config key without `--`).
    #[error("{key}: {message}")]
    Setting {
        /// The setting.
        key: &'static str,
        /// What is wrong and what is allowed.
        message: String,
    },
}
