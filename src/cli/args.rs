//! The command line's argument types: the flags of the examples and the keys of a `rankrisk
//! train` config (one type each, so that both accept the same settings with the same
//! defaults), and their translation into the library's settings ([`RunConfig`], the tasks).

use std::path::{Path, PathBuf};

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::device::backend::{BackendError, BackendKind};
use crate::device::remote::DeviceSpec;
use crate::pauc::sbcd::DualInit;
use crate::tasks::chexpert::ChexpertTask;
use crate::tasks::long_tailed::{LongTailedTask, LtData};
use crate::tasks::tabular::TabularTask;
use crate::tasks::{ImageTask, TaskError};
use crate::train::run::{Method, RunConfig, RunSummary};

/// The backend choice shared by every training command.
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct BackendArg {
    /// Backend: wgpu, ndarray, flex, or cuda / cuda:N in a build with the `cuda` feature
    /// (default: $BURN_DEVICE, else flex).
    #[arg(long)]
    pub backend: Option<BackendKind>,
}

impl BackendArg {
    /// The flag, else `BURN_DEVICE`, else the default backend.
    ///
    /// # Errors
    /// [`BackendError`] for an unknown `BURN_DEVICE` value.
    pub fn resolve(&self) -> Result<BackendKind, BackendError> {
        match self.backend {
            Some(kind) => Ok(kind),
            None => BackendKind::from_env().map(Option::unwrap_or_default),
        }
    }
}

/// The flags every task shares: method, budget, FPR range, backend, seed, resume.
#[derive(Debug, Clone, PartialEq, Args, Serialize)]
pub struct TrainingArgs {
    /// Training method. The default is SOTA-s, the one pAUC objective in the top group of test
    /// pAUC[0.05, 0.5] on both full Fashion-MNIST-LT and MNIST-LT over three seeds; AGD-SBCD
    /// (`sbcd`), the previous default, was last on both (docs/RESULTS.md).
    #[arg(long, value_enum, default_value = "sota-s")]
    pub method: Method,
    /// Budget in passes over the training set.
    #[arg(long, default_value_t = 2)]
    pub epochs: usize,
    /// Samples per step (the paper: 32).
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Learning rate (c of AGD-SBCD); default per method.
    #[arg(long)]
    pub lr: Option<f64>,
    /// AGD-SBCD: `T_k = t_scale (k+1)^2` SBCD steps per call (paper: 50).
    #[arg(long, default_value_t = 50)]
    pub t_scale: usize,
    /// AGD-SBCD: `mu = mu_scale / (N+ N-)` (paper: 1e3).
    #[arg(long, default_value_t = 1e3)]
    pub mu_scale: f64,
    /// AGD-SBCD: `gamma = gamma_scale / (N+ N-)` (paper: tuned in {0.1, 1, 2} x 1e3).
    #[arg(long, default_value_t = 1e3)]
    pub gamma_scale: f64,
    /// AGD-SBCD: training-mode forward passes after each AGD step that re-estimate the
    /// batch-norm statistics for the new parameters.
    #[arg(long, default_value_t = 30)]
    pub bn_refresh: usize,
    /// AGD-SBCD: dual step constant, `theta = c_dual / ((k+1) N-)` (default: the lr c, as
    /// Algorithm 2's schedule).
    #[arg(long)]
    pub c_dual: Option<f64>,
    /// AGD-SBCD: how the duals start (exact: eq. (19) at the initial model; mean: the pair
    /// loss of the mean scores).
    #[arg(long, value_enum, default_value = "exact")]
    pub dual_init: DualInit,
    /// AGD-SBCD: re-set the duals to eq. (19) before every outer iteration (one scoring pass
    /// of the training set each).
    #[arg(long)]
    pub dual_refresh: bool,
    /// AGD-SBCD: the m- and n-calls of an outer iteration draw the same blocks.
    #[arg(long)]
    pub common_blocks: bool,
    /// SOPA, SOPA-s, SOTA-s: margin of the squared-hinge pair loss on sigmoid scores
    /// (LibAUC's default).
    #[arg(long, default_value_t = 1.0)]
    pub margin: f64,
    /// SOPA: step size of the per-positive thresholds (LibAUC's `eta`).
    #[arg(long, default_value_t = 0.1)]
    pub sopa_eta: f64,
    /// SOPA-s, SOTA-s: KL weight over the negatives (LibAUC's `Lambda`).
    #[arg(long, default_value_t = 1.0)]
    pub dro_lambda: f64,
    /// Clamp every gradient element to [-C, C] before the optimizer's update, as LibAUC's
    /// optimizers do (C = 1; 2 for SOPAs); 0 turns it off. Default: 1 for SOPA (measured on
    /// three seeds: at or above the unclamped runs), off for the other methods.
    #[arg(long, value_name = "C")]
    pub grad_clip: Option<f64>,
    /// SOTA-s: KL weight over the positives (LibAUC's `tau`).
    #[arg(long, default_value_t = 1.0)]
    pub dro_tau: f64,
    /// SOPA-s, SOTA-s: moving-average weight of the new batch (LibAUC's `gamma`).
    #[arg(long, default_value_t = 0.9)]
    pub dro_gamma: f64,
    /// Stratified bootstrap resamples of the test pAUC's 95% interval at every evaluation point
    /// (0: none).
    #[arg(long, default_value_t = 2000)]
    pub bootstrap: usize,
    /// FPR range start.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// FPR range end.
    #[arg(long, default_value_t = 0.5)]
    pub beta: f64,
    /// Keep at most this many training images (evenly spaced, so the class profile stays;
    /// 0 = all), for quick runs.
    #[arg(long, default_value_t = 0)]
    pub limit: usize,
    /// The backend.
    #[command(flatten)]
    #[serde(flatten)]
    pub backend: BackendArg,
    /// Data-parallel devices, comma-separated (`flex,flex`, `wgpu,flex`, `cuda:0,cuda:1`,
    /// `flex,remote:ws://HOST:PORT` with the `remote` feature): each batch is split over them,
    /// the objective's state stays one; the first, a backend of this machine, is the run's
    /// backend (it overrides `--backend`).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceSpec>,
    /// Seed of the split, the initialization, the samplers and the augmentation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Continue from the checkpoint in the output folder.
    #[arg(long)]
    pub resume: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

impl TrainingArgs {
    /// The run settings for output folder `out`.
    pub fn run_config(&self, out: &Path) -> RunConfig {
        let mut cfg = RunConfig::new(self.method, out.to_path_buf());
        cfg.epochs = self.epochs;
        cfg.batch = self.batch;
        if let Some(lr) = self.lr {
            cfg.lr = lr;
        }
        (cfg.alpha, cfg.beta, cfg.seed) = (self.alpha, self.beta, self.seed);
        (cfg.t_scale, cfg.mu_scale, cfg.gamma_scale) =
            (self.t_scale, self.mu_scale, self.gamma_scale);
        cfg.refresh_steps = self.bn_refresh;
        (cfg.c_dual, cfg.dual_init) = (self.c_dual, self.dual_init);
        (cfg.dual_refresh, cfg.common_blocks) = (self.dual_refresh, self.common_blocks);
        (cfg.margin, cfg.sopa_eta) = (self.margin, self.sopa_eta);
        (cfg.dro_lambda, cfg.dro_tau, cfg.dro_gamma) =
            (self.dro_lambda, self.dro_tau, self.dro_gamma);
        if let Some(c) = self.grad_clip {
            cfg.grad_clip = (c != 0.0).then_some(c);
        }
        cfg.bootstrap = self.bootstrap;
        cfg.devices = self.devices.clone();
        cfg.resume = self.resume;
        cfg.progress = !self.quiet;
        cfg
    }
}

/// The flags of an image task: the task, the run's settings and the output folder.
pub trait ImageArgs {
    /// The task.
    type Task: ImageTask;

    /// The task these flags describe.
    fn task(&self) -> Self::Task;

    /// The method, budget and run settings.
    fn training(&self) -> &TrainingArgs;

    /// The output folder.
    fn out(&self) -> &Path;

    /// The run settings.
    fn run_config(&self) -> RunConfig {
        self.training().run_config(self.out())
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
    #[arg(long, default_value_t = 0.01)]
    pub imbalance: f64,
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
    pub training: TrainingArgs,
}

impl ImageArgs for LongTailedArgs {
    type Task = LongTailedTask;

    fn task(&self) -> LongTailedTask {
        LongTailedTask {
            data: self.data,
            data_dir: self.data_dir.clone(),
            positive: self.positive.clone(),
            imbalance: self.imbalance,
            limit: self.training.limit,
            test_limit: self.test_limit,
            seed: self.training.seed,
        }
    }

    fn training(&self) -> &TrainingArgs {
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
    /// Output folder.
    #[arg(long, default_value = "out/chexpert")]
    pub out: PathBuf,
    /// Method, budget and run settings.
    #[command(flatten)]
    #[serde(flatten)]
    pub training: TrainingArgs,
}

impl ImageArgs for ChexpertArgs {
    type Task = ChexpertTask;

    fn task(&self) -> ChexpertTask {
        ChexpertTask {
            data_dir: self.data_dir.clone(),
            task: self.task.clone(),
            pretrained: self.pretrained.clone(),
            size: self.size,
            limit: self.training.limit,
            seed: self.training.seed,
        }
    }

    fn training(&self) -> &TrainingArgs {
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
    #[arg(long, default_value_t = 0.6)]
    pub train_share: f64,
    /// CVaR level q of the second ADMM objective (at q = 0.5 the optimum on phoneme and
    /// titanic is w = 0, test AUC 0.5).
    #[arg(long, default_value_t = 0.3)]
    pub q: f64,
    /// Strength mu of the squared l2 regularizer (mu/2 ||w||^2).
    #[arg(long, default_value_t = 0.01)]
    pub mu: f64,
    /// FPR range start of AGD-SBCD and of the test pAUC.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// FPR range end.
    #[arg(long, default_value_t = 0.5)]
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
