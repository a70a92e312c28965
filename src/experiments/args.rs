//! The command line's argument types: the flags of the examples and the keys of a `rankrisk
//! train` config (one type each, so that both accept the same settings with the same
//! defaults): each image task's own flags, with the library's [`RunConfig`] flattened in as
//! the run's settings, and the tasks they describe.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::device::remote::DeviceSpec;
use crate::tasks::chexpert::ChexpertTask;
use crate::tasks::long_tailed::{LongTailedTask, LtData};
use crate::tasks::tabular::TabularTask;
use crate::tasks::{ImageTask, TaskError};
use crate::train::run::config::finite_f64;
use crate::train::run::{RunConfig, RunSummary};

/// The flags of an image task: the task, the run's settings and the output folder.
pub trait ImageArgs {
    /// The task.
    type Task: ImageTask;

    /// The task these flags describe.
    fn task(&self) -> Self::Task;

    /// The method, budget and run settings (the output folder is the task's flag).
    fn training(&self) -> &RunConfig;

    /// The output folder.
    fn out(&self) -> &Path;

    /// The run settings, writing into the task's output folder, with the per-method defaults
    /// filled in.
    fn run_config(&self) -> RunConfig {
        let mut cfg = self.training().clone();
        cfg.out = self.out().to_path_buf();
        cfg.resolved()
    }

    /// Check the run's settings and the task's (files included), reading no data.
    ///
    /// # Errors
    /// [`TaskError`] naming the setting or the missing file.
    fn validate(&self) -> Result<(), TaskError> {
        self.run_config().validate()?;
        self.task().validate()
    }

    /// Build the task and train on it.
    ///
    /// # Errors
    /// As [`ImageTask::run`]; an unknown `BURN_DEVICE`.
    fn run(&self) -> Result<RunSummary, TaskError> {
        let backend = match self.training().devices.first() {
            Some(&DeviceSpec::Local(first)) => first,
            _ => self.training().backend.resolve()?,
        };
        self.task().run(&self.run_config(), backend)
    }
}

/// Flags of a long-tailed run (the `cifar_lt` example's, and a `long-tailed` run of
/// `rankrisk train`).
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct LongTailedArgs {
    /// Data set.
    #[arg(long, value_enum, default_value = "fashion-mnist")]
    pub data: LtData,
    /// Folder with the data set's files (default: the fetched test data for Fashion-MNIST and
    /// MNIST).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Positive classes, comma-separated (default: 3, the cats of CIFAR-10; birds for
    /// Tiny-ImageNet).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub positive: Vec<u16>,
    /// Imbalance factor of the long-tailed profile (the rarest class keeps this share of the
    /// most frequent one; 1 keeps every image).
    #[arg(long, default_value_t = 0.01, value_parser = finite_f64)]
    pub imbalance: f64,
    /// Keep at most this many training images (evenly spaced, so the class profile stays;
    /// 0 = all), for quick runs.
    #[arg(long, default_value_t = 0)]
    pub limit: usize,
    /// Keep at most this many test images (evenly spaced; 0 = all), for quick runs.
    #[arg(long, default_value_t = 0)]
    pub test_limit: usize,
    /// Output folder: metrics.csv, metrics.json, summary.json, roc.png, curves.png,
    /// best.bpk and checkpoint/.
    #[arg(long, default_value = "out/long_tailed")]
    pub out: PathBuf,
    /// Method, budget and run settings.
    #[command(flatten)]
    #[serde(flatten)]
    pub training: RunConfig,
}

impl ImageArgs for LongTailedArgs {
    type Task = LongTailedTask;

    fn task(&self) -> LongTailedTask {
        LongTailedTask {
            data: self.data,
            data_dir: self.data_dir.clone(),
            positive: self.positive.clone(),
            imbalance: self.imbalance,
            limit: self.limit,
            test_limit: self.test_limit,
            seed: self.training.seed,
        }
    }

    fn training(&self) -> &RunConfig {
        &self.training
    }

    fn out(&self) -> &Path {
        &self.out
    }
}

/// Flags of a CheXpert run (the `chexpert` example's, and a `chexpert` run of
/// `rankrisk train`).
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct ChexpertArgs {
    /// Folder that holds CheXpert-v1.0-small/ (or that folder itself).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// Task: cardiomegaly, edema, consolidation, atelectasis, pleural-effusion, or `all` (the
    /// five at once: DenseNet121 with five outputs, mean AUC and pAUC over the tasks;
    /// `task_name` in a `rankrisk train` config, where `task` names the kind of run).
    #[arg(long, default_value = "edema")]
    #[serde(rename = "task_name")]
    pub task: String,
    /// torchvision DenseNet-121 ImageNet weights (`densenet121-a639ec97.pth`) to start from.
    #[arg(long)]
    pub pretrained: Option<PathBuf>,
    /// Image side in pixels.
    #[arg(long, default_value_t = 224)]
    pub size: usize,
    /// Keep at most this many training images (evenly spaced; 0 = all), for quick runs.
    #[arg(long, default_value_t = 0)]
    pub limit: usize,
    /// Output folder.
    #[arg(long, default_value = "out/chexpert")]
    pub out: PathBuf,
    /// Method, budget and run settings.
    #[command(flatten)]
    #[serde(flatten)]
    pub training: RunConfig,
}

impl ImageArgs for ChexpertArgs {
    type Task = ChexpertTask;

    fn task(&self) -> ChexpertTask {
        ChexpertTask {
            data_dir: self.data_dir.clone(),
            task: self.task.clone(),
            pretrained: self.pretrained.clone(),
            size: self.size,
            limit: self.limit,
            seed: self.training.seed,
        }
    }

    fn training(&self) -> &RunConfig {
        &self.training
    }

    fn out(&self) -> &Path {
        &self.out
    }
}

/// Flags of the tabular task (the `tabular` example's, and a `tabular` run of `rankrisk train`).
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
pub struct TabularArgs {
    /// Built-in data sets, comma-separated (australian, phoneme, titanic, monks-3, splice,
    /// utkface).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "australian,phoneme,titanic,splice"
    )]
    pub sets: Vec<String>,
    /// Share of each set used for training; the rest is the test set.
    #[arg(long, default_value_t = 0.6, value_parser = finite_f64)]
    pub train_share: f64,
    /// CVaR level q of the second ADMM objective (at q = 0.5 the optimum on phoneme and
    /// titanic is w = 0, test AUC 0.5).
    #[arg(long, default_value_t = 0.3, value_parser = finite_f64)]
    pub q: f64,
    /// Strength mu of the squared l2 regularizer (mu/2 ||w||^2).
    #[arg(long, default_value_t = 0.01, value_parser = finite_f64)]
    pub mu: f64,
    /// FPR range start of AGD-SBCD and of the test pAUC.
    #[arg(long, default_value_t = 0.05, value_parser = finite_f64)]
    pub alpha: f64,
    /// FPR range end.
    #[arg(long, default_value_t = 0.5, value_parser = finite_f64)]
    pub beta: f64,
    /// AGD-SBCD outer iterations (T_k = 50 (k+1)^2 SBCD steps each; 5 and 10 give the same
    /// test AUC to 0.003 on these sets, 10 takes 7x longer).
    #[arg(long, default_value_t = 5)]
    pub outer: usize,
    /// Seed of the split and of AGD-SBCD's sampler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl TabularArgs {
    /// The task these flags describe.
    pub fn task(&self) -> TabularTask {
        TabularTask {
            sets: self.sets.clone(),
            train_share: self.train_share,
            q: self.q,
            mu: self.mu,
            alpha: self.alpha,
            beta: self.beta,
            outer: self.outer,
            seed: self.seed,
        }
    }
}
