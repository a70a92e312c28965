//! The long-tailed binary image tasks of the pAUC experiments, ready to train: CIFAR-10-LT /
//! CIFAR-100-LT (official binary files), Tiny-ImageNet-200 (birds positive), and the
//! MNIST-style sets we have for real (Fashion-MNIST, MNIST). The training split is made
//! long-tailed (exponential profile), one or more classes are positive, 10% of it (seeded) is
//! held out for validation and the official test split is the test set. The model is ResNet-20
//! with as many input channels as the images have.

use std::path::PathBuf;
use std::sync::Arc;

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rankrisk_datasets::batcher::ImageBatcher;
use rankrisk_datasets::cifar::{Cifar, read_cifar};
use rankrisk_datasets::folder::{TINY_IMAGENET_BIRDS, read_tiny_imagenet};
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_datasets::{DataError, ImageSet};
use rankrisk_models::ResNet20Config;

use burn::tensor::Device;

use crate::backend::{BackendKind, autodiff_device};
use crate::cli::BackendArg;
use crate::train::image::{Method, RunConfig, RunError, RunSummary, train_image_task};

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
#[derive(Debug, Clone, clap::Args)]
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
    fn run_config(&self, out: &std::path::Path) -> RunConfig {
        let mut cfg = RunConfig::new(self.method, out.to_path_buf());
        cfg.epochs = self.epochs;
        cfg.batch = self.batch;
        if let Some(lr) = self.lr {
            cfg.lr = lr;
        }
        (cfg.alpha, cfg.beta, cfg.seed) = (self.alpha, self.beta, self.seed);
        cfg.resume = self.resume;
        cfg.progress = !self.quiet;
        cfg
    }

    /// The autodiff device of the chosen backend, seeded.
    fn device(&self) -> Result<(BackendKind, Device), RunError> {
        let kind = self.backend.resolve().map_err(RunError::Io)?;
        let device = autodiff_device(kind).map_err(|e| RunError::Io(e.to_string()))?;
        device.seed(self.seed);
        Ok((kind, device))
    }

    /// Indices `0..len` thinned to `limit` evenly spaced ones (all when `limit` is 0 or not
    /// smaller than `len`).
    fn kept(&self, len: usize) -> Vec<usize> {
        if self.limit == 0 || self.limit >= len {
            return (0..len).collect();
        }
        let step = len as f64 / self.limit as f64;
        (0..self.limit)
            .map(|k| (k as f64 * step) as usize)
            .collect()
    }
}

/// Settings of a long-tailed run (the `cifar_lt` example's flags).
#[derive(Debug, Clone, clap::Args)]
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
    /// Output folder: metrics.csv, metrics.json, summary.json, roc.png, curves.png,
    /// best.bpk and checkpoint/.
    #[arg(long, default_value = "out/long_tailed")]
    pub out: PathBuf,
    /// Method, budget and run settings.
    #[command(flatten)]
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

/// Build the task and train on it.
///
/// # Errors
/// [`RunError`] for missing or malformed data (the message says what to download and where to
/// put it), a bad setting, or an unwritable output folder.
pub fn run_long_tailed(args: &LongTailedArgs) -> Result<RunSummary, RunError> {
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
    let train = Arc::new(train_all.subset(&tr).binary(&positive)?);
    let val = Arc::new(train_all.subset(&va).binary(&positive)?);
    let test = Arc::new(load(args.data, &dir, false)?.binary(&positive)?);
    let (mean, std) = normalization(args.data);
    let tb = ImageBatcher::new(train.clone(), &mean, &std)?;
    let vb = ImageBatcher::new(val, &mean, &std)?;
    let sb = ImageBatcher::new(test, &mean, &std)?;
    let (kind, device) = args.training.device()?;
    let model = ResNet20Config::new()
        .with_in_channels(train.images.channels)
        .init(&device);
    let cfg = args.training.run_config(&args.out);
    if !args.training.quiet {
        eprintln!(
            "{}: {} training images ({} positive), {} validation, {} test; ResNet-20 on {kind}",
            train.images.name,
            train.positive.len(),
            train.positives(),
            vb.set().positive.len(),
            sb.set().positive.len()
        );
    }
    train_image_task(model, &tb, &vb, Some(&sb), &device, &cfg)
}

/// Settings of a CheXpert run (the `chexpert` example's flags).
#[derive(Debug, Clone, clap::Args)]
pub struct ChexpertArgs {
    /// Folder that holds CheXpert-v1.0-small/ (or that folder itself).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// Task: cardiomegaly, edema, consolidation, atelectasis, pleural-effusion.
    #[arg(long, default_value = "edema")]
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
    pub training: TrainingArgs,
}

/// DenseNet121 on one CheXpert task: train.csv split 9:1 (seeded) into training and
/// validation, the official valid.csv as the test set, pAUC over FPR [0.05, 0.5].
///
/// # Errors
/// [`RunError`] for a missing data folder (the message says what to download), unreadable
/// images, a bad setting, or pretrained weights that do not fit.
pub fn run_chexpert(args: &ChexpertArgs) -> Result<RunSummary, RunError> {
    use rankrisk_datasets::batcher::ChexpertBatcher;
    use rankrisk_datasets::chexpert::{Chexpert, ChexpertConfig, Task};
    use rankrisk_datasets::transform::XrayTransform;
    use rankrisk_models::DenseNet121Config;
    use rankrisk_models::pretrained::{Head, load_torchvision_densenet121};

    let task: Task = args.task.parse()?;
    let cfg = ChexpertConfig::single(task);
    let all = Chexpert::open(&args.data_dir, "train.csv", &cfg)?;
    let all = all.subset(&args.training.kept(all.len()));
    let (train, val) = all.split(0.9, args.training.seed)?;
    let test = Chexpert::open(&args.data_dir, "valid.csv", &cfg)?;
    let tb = ChexpertBatcher::new(
        Arc::new(train),
        XrayTransform::train(args.size),
        args.training.seed,
    );
    let vb = ChexpertBatcher::new(
        Arc::new(val),
        XrayTransform::eval(args.size),
        args.training.seed,
    );
    let sb = ChexpertBatcher::new(
        Arc::new(test),
        XrayTransform::eval(args.size),
        args.training.seed,
    );
    let (_, device) = args.training.device()?;
    let mut model = DenseNet121Config::new().init(&device);
    if let Some(p) = &args.pretrained {
        let report = load_torchvision_densenet121(&mut model, p, Head::Replace, None)
            .map_err(|e| RunError::Io(e.to_string()))?;
        eprintln!("pretrained weights: {report}");
    }
    let run = args.training.run_config(&args.out);
    train_image_task(model, &tb, &vb, Some(&sb), &device, &run)
}
