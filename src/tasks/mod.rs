//! The tasks of the papers' experiments, ready to train: a data set with its split and
//! preprocessing, the model that fits it, and the run. The command line (`rankrisk train`, the
//! examples) fills their settings; a program can build them directly.
//!
//! - [`long_tailed`]: CIFAR-10/100-LT, Tiny-ImageNet-200, Fashion-MNIST-LT, MNIST-LT with
//!   ResNet-20 (the pAUC paper's section 6.1);
//! - [`chexpert`]: one CheXpert-v1.0-small task with DenseNet121;
//! - [`tabular`]: the linear solvers on the vendored tabular sets;
//! - [`report`]: one results row per trained model and their markdown table;
//! - [`error`]: the one error of the tasks, [`TaskError`].

pub mod chexpert;
pub mod error;
pub mod long_tailed;
pub mod report;
pub mod tabular;

use burn::tensor::Device;
use rankrisk_datasets::ImageSource;
use rankrisk_models::Scorer;

use crate::device::backend::{BackendKind, autodiff_device};
use crate::train::run::{RunConfig, RunSummary, train_image_task};

pub use error::TaskError;

/// A task's three sets, ready to batch: for the long-tailed tasks the long-tailed training
/// split less 10% (seeded) held out for validation, and the official test split; for CheXpert
/// 90% of train.csv (augmented), the other 10%, and valid.csv.
pub struct TaskSets<B> {
    /// Training set.
    pub train: B,
    /// Validation set (model selection).
    pub val: B,
    /// Test set.
    pub test: B,
}

impl<B: ImageSource> TaskSets<B> {
    /// Train `model` on these sets with `cfg` (see [`train_image_task`]).
    ///
    /// # Errors
    /// As [`train_image_task`].
    pub fn train<M: Scorer>(
        &self,
        model: M,
        device: &Device,
        cfg: &RunConfig,
    ) -> Result<RunSummary, TaskError> {
        Ok(train_image_task(
            model,
            &self.train,
            &self.val,
            Some(&self.test),
            device,
            cfg,
        )?)
    }
}

/// An image task: a data set split into training, validation and test sets, and the model that
/// fits its images.
pub trait ImageTask {
    /// The sets' batch source.
    type Source: ImageSource;
    /// The model.
    type Model: Scorer;

    /// A short name of the task for tables.
    fn label(&self) -> String;

    /// Check the settings and that the files exist, without reading any data (what
    /// `rankrisk train --dry-run` checks).
    ///
    /// # Errors
    /// [`TaskError`] naming the setting or the missing file.
    fn validate(&self) -> Result<(), TaskError>;

    /// Read the data and build the three sets.
    ///
    /// # Errors
    /// [`TaskError::Data`] for missing or malformed data.
    fn build(&self) -> Result<TaskSets<Self::Source>, TaskError>;

    /// The model for these sets, on `device`.
    ///
    /// # Errors
    /// [`TaskError::Pretrained`] for starting weights that do not fit.
    fn model(
        &self,
        sets: &TaskSets<Self::Source>,
        device: &Device,
    ) -> Result<Self::Model, TaskError>;

    /// One line on the sets and the model, printed before a run that shows progress.
    fn describe(&self, sets: &TaskSets<Self::Source>, backend: BackendKind) -> String;

    /// Check, build the sets and the model on `backend` (its initialization seeded by
    /// `cfg.seed`), and train with `cfg`.
    ///
    /// # Errors
    /// [`TaskError`] for a bad setting, missing or malformed data, a backend that cannot
    /// start, starting weights that do not fit, or a failed run.
    fn run(&self, cfg: &RunConfig, backend: BackendKind) -> Result<RunSummary, TaskError> {
        cfg.validate()?;
        self.validate()?;
        let sets = self.build()?;
        let device = seeded_device(backend, cfg.seed)?;
        let model = self.model(&sets, &device)?;
        if !cfg.quiet {
            eprintln!("{}", self.describe(&sets, backend));
        }
        sets.train(model, &device, cfg)
    }
}

/// The autodiff device of `backend`, seeded with `seed` (the model's initialization draws
/// from it).
///
/// # Errors
/// [`TaskError::Backend`] for a backend that cannot start.
pub fn seeded_device(backend: BackendKind, seed: u64) -> Result<Device, TaskError> {
    let device = autodiff_device(backend)?;
    device.seed(seed);
    Ok(device)
}

/// Indices `0..len` thinned to `limit` evenly spaced ones (all when `limit` is 0 or not smaller
/// than `len`): quick runs keep the class profile.
pub fn thin(len: usize, limit: usize) -> Vec<usize> {
    if limit == 0 || limit >= len {
        return (0..len).collect();
    }
    let step = len as f64 / limit as f64;
    (0..limit).map(|k| (k as f64 * step) as usize).collect()
}
