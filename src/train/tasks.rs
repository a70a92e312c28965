//! The long-tailed binary image tasks of the pAUC experiments, ready to train: CIFAR-10-LT /
//! CIFAR-100-LT (official binary files), Tiny-ImageNet-200 (birds positive), and the
//! MNIST-style sets we have for real (Fashion-MNIST, MNIST). The training split is made
//! long-tailed (exponential profile), one or more classes are positive, 10% of it (seeded) is
//! held out for validation and the official test split is the test set. The model is ResNet-20
//! with as many input channels as the images have.

use crate::pauc::sbcd::DualInit;
use std::path::PathBuf;
use std::sync::Arc;

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rankrisk_datasets::batcher::{ChexpertBatcher, ImageBatcher};
use rankrisk_datasets::chexpert::{Chexpert, ChexpertConfig, Task};
use rankrisk_datasets::cifar::{Cifar, read_cifar};
use rankrisk_datasets::folder::{TINY_IMAGENET_BIRDS, read_tiny_imagenet};
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_datasets::transform::XrayTransform;
use rankrisk_datasets::{DataError, ImageSet};
use rankrisk_models::DenseNet121Config;
use rankrisk_models::ResNet20Config;
use rankrisk_models::pretrained::{Head, load_torchvision_densenet121};

use burn::tensor::Device;

use crate::backend::{BackendKind, autodiff_device};
use crate::cli::BackendArg;
use crate::train::image::{ImageSource, Method, RunConfig, RunError, RunSummary, train_image_task};
use crate::train::learner::ImageScorer;

/// Which data set.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum LtData {
    /// Fashion-MNIST (IDX files; `datasets/fetch-test-data.sh` fetches them).
    FashionMnist,
    /// MNIST (IDX files; fetched too).
    Mnist,
    /// CIFAR-10 binary files (`data_batch_1.bin` ... `test_batch.bin`).
    Cifar10,
    /// CIFAR-100 binary files (`train.bin`, `test.bin`).
    Cifar100,
    /// Tiny-ImageNet-200 folder (birds positive).
    TinyImagenet,
}

/// The flags every task shares: method, budget, FPR range, backend, seed, resume.
#[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize)]
pub struct TrainingArgs {
    /// Training method.
    #[arg(long, value_enum, default_value = "sbcd")]
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
    pub fn run_config(&self, out: &std::path::Path) -> RunConfig {
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
        cfg.resume = self.resume;
        cfg.progress = !self.quiet;
        cfg
    }

    /// The autodiff device of the chosen backend, seeded.
    ///
    /// # Errors
    /// [`RunError::Io`] for an unknown `BURN_DEVICE` or a backend that cannot start.
    pub fn device(&self) -> Result<(BackendKind, Device), RunError> {
        let kind = self.backend.resolve().map_err(RunError::Io)?;
        let device = autodiff_device(kind).map_err(|e| RunError::Io(e.to_string()))?;
        device.seed(self.seed);
        Ok((kind, device))
    }

    /// Training indices `0..len` thinned by `limit`.
    fn kept(&self, len: usize) -> Vec<usize> {
        thin(len, self.limit)
    }
}

/// Indices `0..len` thinned to `limit` evenly spaced ones (all when `limit` is 0 or not smaller
/// than `len`).
fn thin(len: usize, limit: usize) -> Vec<usize> {
    if limit == 0 || limit >= len {
        return (0..len).collect();
    }
    let step = len as f64 / limit as f64;
    (0..limit).map(|k| (k as f64 * step) as usize).collect()
}

/// Settings of a long-tailed run (the `cifar_lt` example's flags).
#[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize)]
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

fn default_dir(data: LtData) -> Result<PathBuf, DataError> {
    let root = rankrisk_datasets::fetched::root();
    match data {
        LtData::FashionMnist => Ok(root.join("fashion-mnist")),
        LtData::Mnist => Ok(root.join("mnist")),
        other => Err(DataError::invalid(
            format!("{other:?}"),
            "give --data-dir: the folder with the official files (CIFAR-10: data_batch_1.bin ... test_batch.bin from cifar-10-binary.tar.gz; CIFAR-100: train.bin, test.bin; Tiny-ImageNet: the tiny-imagenet-200 folder)",
        )),
    }
}

/// Per-channel mean and std of each data set's training images.
fn normalization(data: LtData) -> (Vec<f32>, Vec<f32>) {
    match data {
        LtData::FashionMnist => (vec![0.2860], vec![0.3530]),
        LtData::Mnist => (vec![0.1307], vec![0.3081]),
        LtData::Cifar10 => (vec![0.4914, 0.4822, 0.4465], vec![0.2470, 0.2435, 0.2616]),
        LtData::Cifar100 => (vec![0.5071, 0.4865, 0.4409], vec![0.2673, 0.2564, 0.2762]),
        LtData::TinyImagenet => (vec![0.485, 0.456, 0.406], vec![0.229, 0.224, 0.225]),
    }
}

fn load(data: LtData, dir: &std::path::Path, train: bool) -> Result<ImageSet, DataError> {
    match data {
        LtData::FashionMnist | LtData::Mnist => read_mnist_style(dir, train),
        LtData::Cifar10 => read_cifar(dir, Cifar::Ten, train),
        LtData::Cifar100 => read_cifar(dir, Cifar::Hundred, train),
        LtData::TinyImagenet => read_tiny_imagenet(dir, train),
    }
}

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
    pub fn train<M: ImageScorer>(
        &self,
        model: M,
        device: &Device,
        cfg: &RunConfig,
    ) -> Result<RunSummary, RunError> {
        train_image_task(model, &self.train, &self.val, Some(&self.test), device, cfg)
    }
}

impl LongTailedArgs {
    /// A short name of the task for tables, e.g. `fashion-mnist-LT 0.01 (+3)`.
    pub fn label(&self) -> String {
        let name = clap::ValueEnum::to_possible_value(&self.data)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        let positive: Vec<String> = self.positive.iter().map(u16::to_string).collect();
        let positive = if positive.is_empty() {
            "default".to_string()
        } else {
            positive.join(",")
        };
        format!("{name}-LT {} (+{positive})", self.imbalance)
    }
}

/// Read the data set and build the task's training, validation and test sets.
///
/// # Errors
/// [`RunError`] for missing or malformed data (the message says what to download and where to
/// put it) or a positive class that leaves a set one-class.
pub fn build_long_tailed(args: &LongTailedArgs) -> Result<TaskSets<ImageBatcher>, RunError> {
    let dir = match &args.data_dir {
        Some(d) => d.clone(),
        None => default_dir(args.data)?,
    };
    let positive: Vec<u16> = match (args.positive.is_empty(), args.data) {
        (false, _) => args.positive.clone(),
        (true, LtData::TinyImagenet) => TINY_IMAGENET_BIRDS.to_vec(),
        (true, _) => vec![3],
    };
    let train_all = load(args.data, &dir, true)?.long_tailed(args.imbalance)?;
    let mut idx = args.training.kept(train_all.len());
    idx.shuffle(&mut StdRng::seed_from_u64(args.training.seed));
    let n_val = (idx.len() / 10).max(1);
    let (val_idx, train_idx) = idx.split_at(n_val);
    let (mut tr, mut va) = (train_idx.to_vec(), val_idx.to_vec());
    tr.sort_unstable();
    va.sort_unstable();
    let test_all = load(args.data, &dir, false)?;
    let test_idx = thin(test_all.len(), args.test_limit);
    let (mean, std) = normalization(args.data);
    let batcher = |set: ImageSet| -> Result<ImageBatcher, DataError> {
        ImageBatcher::new(Arc::new(set.binary(&positive)?), &mean, &std)
    };
    Ok(TaskSets {
        train: batcher(train_all.subset(&tr))?,
        val: batcher(train_all.subset(&va))?,
        test: batcher(test_all.subset(&test_idx))?,
    })
}

impl LongTailedArgs {
    /// Check every setting and that the data folder exists, without reading any data (what
    /// `rankrisk train --dry-run` checks).
    ///
    /// # Errors
    /// [`RunError::Setting`] for a bad setting, [`RunError::Data`] for a missing folder.
    pub fn validate(&self) -> Result<(), RunError> {
        self.training.run_config(&self.out).validate()?;
        if !(self.imbalance > 0.0 && self.imbalance <= 1.0) {
            return Err(RunError::Setting {
                key: "imbalance",
                message: format!("must be in (0, 1], got {}", self.imbalance),
            });
        }
        let dir = match &self.data_dir {
            Some(d) => d.clone(),
            None => default_dir(self.data)?,
        };
        if !dir.is_dir() {
            return Err(DataError::invalid(
                dir.display().to_string(),
                "the data folder does not exist (bash datasets/fetch-test-data.sh fetches \
                 Fashion-MNIST and MNIST)",
            )
            .into());
        }
        Ok(())
    }
}

/// ResNet-20 for the task's images, on `device`.
pub fn long_tailed_model(
    task: &TaskSets<ImageBatcher>,
    device: &Device,
) -> rankrisk_models::ResNet20 {
    ResNet20Config::new()
        .with_in_channels(task.train.set().images.channels)
        .init(device)
}

/// Build the task and train on it.
///
/// # Errors
/// [`RunError`] for missing or malformed data (the message says what to download and where to
/// put it), a bad setting, or an unwritable output folder.
pub fn run_long_tailed(args: &LongTailedArgs) -> Result<RunSummary, RunError> {
    args.validate()?;
    let task = build_long_tailed(args)?;
    let (kind, device) = args.training.device()?;
    let model = long_tailed_model(&task, &device);
    let cfg = args.training.run_config(&args.out);
    if !args.training.quiet {
        let (tr, va, te) = (task.train.set(), task.val.set(), task.test.set());
        eprintln!(
            "{}: {} training images ({} positive), {} validation, {} test; ResNet-20 on {kind}",
            tr.images.name,
            tr.positive.len(),
            tr.positives(),
            va.positive.len(),
            te.positive.len()
        );
    }
    task.train(model, &device, &cfg)
}

/// Settings of a CheXpert run (the `chexpert` example's flags).
#[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize)]
pub struct ChexpertArgs {
    /// Folder that holds CheXpert-v1.0-small/ (or that folder itself).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// Task: cardiomegaly, edema, consolidation, atelectasis, pleural-effusion (`task_name` in
    /// a `rankrisk train` config, where `task` names the kind of run).
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

impl ChexpertArgs {
    /// Check every setting, the task name, and that the data folder and the pretrained
    /// weights exist, without reading any image (what `rankrisk train --dry-run` checks).
    ///
    /// # Errors
    /// [`RunError::Setting`] for a bad setting, [`RunError::Data`] for an unknown task or a
    /// missing file.
    pub fn validate(&self) -> Result<(), RunError> {
        self.training.run_config(&self.out).validate()?;
        let _: Task = self.task.parse()?;
        if self.size < 32 {
            return Err(RunError::Setting {
                key: "size",
                message: format!("at least 32 pixels, got {}", self.size),
            });
        }
        for (path, what) in [
            (Some(&self.data_dir), "the data folder"),
            (self.pretrained.as_ref(), "the pretrained weights"),
        ] {
            if let Some(p) = path.filter(|p| !p.exists()) {
                return Err(DataError::invalid(
                    p.display().to_string(),
                    format!("{what} do not exist"),
                )
                .into());
            }
        }
        Ok(())
    }

    /// A short name of the task for tables.
    pub fn label(&self) -> String {
        format!("CheXpert {} {}px", self.task, self.size)
    }
}

/// Read the CSV files and build the task's sets (train.csv split 9:1, valid.csv as the test
/// set).
///
/// # Errors
/// [`RunError`] for a missing data folder (the message says what to download), malformed CSV
/// rows or an unknown task.
pub fn build_chexpert(args: &ChexpertArgs) -> Result<TaskSets<ChexpertBatcher>, RunError> {
    let task: Task = args.task.parse()?;
    let cfg = ChexpertConfig::single(task);
    let all = Chexpert::open(&args.data_dir, "train.csv", &cfg)?;
    let all = all.subset(&args.training.kept(all.len()));
    let (train, val) = all.split(0.9, args.training.seed)?;
    let test = Chexpert::open(&args.data_dir, "valid.csv", &cfg)?;
    let seed = args.training.seed;
    Ok(TaskSets {
        train: ChexpertBatcher::new(Arc::new(train), XrayTransform::train(args.size), seed),
        val: ChexpertBatcher::new(Arc::new(val), XrayTransform::eval(args.size), seed),
        test: ChexpertBatcher::new(Arc::new(test), XrayTransform::eval(args.size), seed),
    })
}

/// DenseNet121 on one CheXpert task: train.csv split 9:1 (seeded) into training and
/// validation, the official valid.csv as the test set, pAUC over FPR [0.05, 0.5].
///
/// # Errors
/// [`RunError`] for a missing data folder (the message says what to download), unreadable
/// images, a bad setting, or pretrained weights that do not fit.
pub fn run_chexpert(args: &ChexpertArgs) -> Result<RunSummary, RunError> {
    args.validate()?;
    let task = build_chexpert(args)?;
    let (_, device) = args.training.device()?;
    let mut model = DenseNet121Config::new().init(&device);
    if let Some(p) = &args.pretrained {
        let report = load_torchvision_densenet121(&mut model, p, Head::Replace, None)
            .map_err(|e| RunError::Io(e.to_string()))?;
        eprintln!("pretrained weights: {report}");
    }
    task.train(model, &device, &args.training.run_config(&args.out))
}
