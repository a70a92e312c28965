//! One CheXpert-v1.0-small task with DenseNet121: train.csv split 9:1 (seeded) into training
//! and validation (augmented training images), the official valid.csv as the test set, the
//! pAUC over an FPR range as the paper reports it.

use std::path::PathBuf;
use std::sync::Arc;

use burn::tensor::Device;
use rankrisk_datasets::ImageSource;
use rankrisk_datasets::batcher::ChexpertBatcher;
use rankrisk_datasets::chexpert::{Chexpert, ChexpertConfig, Task};
use rankrisk_datasets::transform::XrayTransform;
use rankrisk_models::pretrained::{Head, load_torchvision_densenet121};
use rankrisk_models::{DenseNet121, DenseNet121Config};

use crate::device::backend::BackendKind;
use crate::tasks::{ImageTask, TaskError, TaskSets, thin};

/// A CheXpert task: where the data is, which of the five competition tasks, the image size and
/// optional ImageNet weights.
#[derive(Debug, Clone, PartialEq)]
pub struct ChexpertTask {
    /// Folder that holds CheXpert-v1.0-small/ (or that folder itself).
    pub data_dir: PathBuf,
    /// Task: cardiomegaly, edema, consolidation, atelectasis, pleural-effusion, or `all` for
    /// the five at once (a multi-label model with five outputs, as LibAUC's CheXpert recipe).
    pub task: String,
    /// torchvision DenseNet-121 ImageNet weights (`densenet121-a639ec97.pth`) to start from.
    pub pretrained: Option<PathBuf>,
    /// Image side in pixels.
    pub size: usize,
    /// Keep at most this many images of train.csv (evenly spaced; 0 = all).
    pub limit: usize,
    /// Seed of the split and of the augmentation.
    pub seed: u64,
}

impl ChexpertTask {
    /// Which rows and labels: one task, or the five competition tasks for `all`.
    ///
    /// # Errors
    /// [`TaskError::Data`] for an unknown task name.
    pub fn config(&self) -> Result<ChexpertConfig, TaskError> {
        if self.task.trim().eq_ignore_ascii_case("all") {
            return Ok(ChexpertConfig::five_tasks());
        }
        let task: Task = self.task.parse()?;
        Ok(ChexpertConfig::single(task))
    }
}

impl ImageTask for ChexpertTask {
    type Source = ChexpertBatcher;
    type Model = DenseNet121;

    /// E.g. `CheXpert edema 224px`, `CheXpert all 5 tasks 224px`.
    fn label(&self) -> String {
        match self.config().map(|c| c.tasks.len()) {
            Ok(k) if k > 1 => format!("CheXpert {} {k} tasks {}px", self.task, self.size),
            _ => format!("CheXpert {} {}px", self.task, self.size),
        }
    }

    /// The task name, the image size, and that the data folder and the pretrained weights
    /// exist.
    fn validate(&self) -> Result<(), TaskError> {
        self.config().map_err(|e| TaskError::Setting {
            key: "task_name",
            message: e.to_string(),
        })?;
        if self.size < 32 {
            return Err(TaskError::Setting {
                key: "size",
                message: format!("at least 32 pixels, got {}", self.size),
            });
        }
        for (key, path, what) in [
            (
                "data_dir",
                Some(&self.data_dir),
                "the data folder does not exist: it must hold CheXpert-v1.0-small/ (train.csv, \
                 valid.csv and the images), the small version of Stanford's CheXpert \
                 (https://stanfordmlgroup.github.io/competitions/chexpert/)",
            ),
            (
                "pretrained",
                self.pretrained.as_ref(),
                "the pretrained weights do not exist: `pretrained` (--pretrained) takes \
                 torchvision's densenet121-a639ec97.pth (https://download.pytorch.org/models/)",
            ),
        ] {
            if let Some(p) = path.filter(|p| !p.exists()) {
                return Err(TaskError::Setting {
                    key,
                    message: format!("{}: {what}", p.display()),
                });
            }
        }
        Ok(())
    }

    /// train.csv split 9:1 (seeded; the training part augmented), valid.csv as the test set.
    fn build(&self) -> Result<TaskSets<ChexpertBatcher>, TaskError> {
        let cfg = self.config()?;
        let all = Chexpert::open(&self.data_dir, "train.csv", &cfg)?;
        let all = all.subset(&thin(all.len(), self.limit));
        let (train, val) = all.split(0.9, self.seed)?;
        let test = Chexpert::open(&self.data_dir, "valid.csv", &cfg)?;
        let seed = self.seed;
        Ok(TaskSets {
            train: ChexpertBatcher::new(Arc::new(train), XrayTransform::train(self.size), seed),
            val: ChexpertBatcher::new(Arc::new(val), XrayTransform::eval(self.size), seed),
            test: ChexpertBatcher::new(Arc::new(test), XrayTransform::eval(self.size), seed),
        })
    }

    /// DenseNet121 with one output per task, from the ImageNet weights when given.
    fn model(
        &self,
        _sets: &TaskSets<ChexpertBatcher>,
        device: &Device,
    ) -> Result<DenseNet121, TaskError> {
        let outputs = self.config()?.tasks.len();
        let mut model = DenseNet121Config::new()
            .with_num_outputs(outputs)
            .init(device);
        if let Some(p) = &self.pretrained {
            let report = load_torchvision_densenet121(&mut model, p, Head::Replace, None)?;
            eprintln!("pretrained weights: {report}");
        }
        Ok(model)
    }

    fn describe(&self, sets: &TaskSets<ChexpertBatcher>, backend: BackendKind) -> String {
        let positives = |b: &ChexpertBatcher| b.labels().iter().filter(|&&y| y > 0.0).count();
        format!(
            "{}: {} training images ({} positive), {} validation, {} test; DenseNet121 on {backend}",
            self.label(),
            sets.train.len(),
            positives(&sets.train),
            sets.val.len(),
            sets.test.len()
        )
    }
}
