//! The long-tailed binary image tasks of the pAUC experiments, ready to train: CIFAR-10-LT /
//! CIFAR-100-LT (official binary files), Tiny-ImageNet-200 (birds positive), and the
//! MNIST-style sets we have for real (Fashion-MNIST, MNIST). The training split is made
//! long-tailed (exponential profile), one or more classes are positive, 10% of it (seeded) is
//! held out for validation and the official test split is the test set. The model is ResNet-20
//! with as many input channels as the images have.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use burn::tensor::Device;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rankrisk_datasets::batcher::ImageBatcher;
use rankrisk_datasets::cifar::{Cifar, read_cifar};
use rankrisk_datasets::folder::{TINY_IMAGENET_BIRDS, read_tiny_imagenet};
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_datasets::{DataError, ImageSet};
use rankrisk_models::{ResNet20, ResNet20Config};

use crate::device::backend::BackendKind;
use crate::tasks::{ImageTask, TaskError, TaskSets, thin};

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

impl LtData {
    /// The name on the command line and in configs (`fashion-mnist`, `cifar10`, ...).
    pub fn name(self) -> &'static str {
        match self {
            LtData::FashionMnist => "fashion-mnist",
            LtData::Mnist => "mnist",
            LtData::Cifar10 => "cifar10",
            LtData::Cifar100 => "cifar100",
            LtData::TinyImagenet => "tiny-imagenet",
        }
    }

    /// Classes of the data set (labels `0..classes`): 10, CIFAR-100's 100 fine labels,
    /// Tiny-ImageNet-200's 200.
    pub fn classes(self) -> usize {
        match self {
            LtData::FashionMnist | LtData::Mnist | LtData::Cifar10 => 10,
            LtData::Cifar100 => 100,
            LtData::TinyImagenet => 200,
        }
    }
}

/// A long-tailed binary task: which data, which classes are positive, how imbalanced, and how
/// much of it to keep.
#[derive(Debug, Clone, PartialEq)]
pub struct LongTailedTask {
    /// Data set.
    pub data: LtData,
    /// Folder with the data set's files (None: the fetched test data for Fashion-MNIST and
    /// MNIST).
    pub data_dir: Option<PathBuf>,
    /// Positive classes (empty: 3, the cats of CIFAR-10; birds for Tiny-ImageNet).
    pub positive: Vec<u16>,
    /// Imbalance factor of the long-tailed profile (the rarest class keeps this share of the
    /// most frequent one; 1 keeps every image).
    pub imbalance: f64,
    /// Keep at most this many training images (evenly spaced; 0 = all).
    pub limit: usize,
    /// Keep at most this many test images (evenly spaced; 0 = all).
    pub test_limit: usize,
    /// Seed of the validation split.
    pub seed: u64,
}

/// What a data folder must hold for `data`, and where the files come from.
fn expected_contents(data: LtData) -> &'static str {
    match data {
        LtData::FashionMnist => {
            "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and \
             t10k-labels-idx1-ubyte (plain or .gz), Fashion-MNIST's IDX files: `bash \
             datasets/fetch-test-data.sh` puts them in datasets/test-data/fashion-mnist, the \
             default folder"
        }
        LtData::Mnist => {
            "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and \
             t10k-labels-idx1-ubyte (plain or .gz), MNIST's IDX files: `bash \
             datasets/fetch-test-data.sh` puts them in datasets/test-data/mnist, the default \
             folder"
        }
        LtData::Cifar10 => {
            "data_batch_1.bin ... data_batch_5.bin and test_batch.bin: the folder \
             cifar-10-batches-bin of cifar-10-binary.tar.gz \
             (https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz)"
        }
        LtData::Cifar100 => {
            "train.bin and test.bin: the folder cifar-100-binary of cifar-100-binary.tar.gz \
             (https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz)"
        }
        LtData::TinyImagenet => {
            "wnids.txt, train/ and val/: the folder tiny-imagenet-200 of tiny-imagenet-200.zip \
             (http://cs231n.stanford.edu/tiny-imagenet-200.zip)"
        }
    }
}

fn default_dir(data: LtData) -> Result<PathBuf, DataError> {
    let root = rankrisk_datasets::fetched::root();
    match data {
        LtData::FashionMnist => Ok(root.join("fashion-mnist")),
        LtData::Mnist => Ok(root.join("mnist")),
        other => Err(DataError::invalid(
            other.name(),
            format!(
                "give --data-dir (data_dir in a config): a folder with {}",
                expected_contents(other)
            ),
        )),
    }
}

impl LongTailedTask {
    /// The data folder: `data_dir`, or the fetched test data.
    ///
    /// # Errors
    /// [`DataError::Invalid`] naming what to download for a set without a default folder.
    pub fn dir(&self) -> Result<PathBuf, DataError> {
        match &self.data_dir {
            Some(d) => Ok(d.clone()),
            None => default_dir(self.data),
        }
    }
}

impl ImageTask for LongTailedTask {
    type Source = ImageBatcher;
    type Model = ResNet20;

    /// E.g. `fashion-mnist-LT 0.01 (+3)`.
    fn label(&self) -> String {
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

    /// The imbalance factor, the positive classes (each a class of the data set, not all of
    /// them) and the data folder.
    fn validate(&self) -> Result<(), TaskError> {
        if !(self.imbalance > 0.0 && self.imbalance <= 1.0) {
            return Err(TaskError::Setting {
                key: "imbalance",
                message: format!("must be in (0, 1], got {}", self.imbalance),
            });
        }
        let classes = self.data.classes();
        if let Some(c) = self.positive.iter().find(|&&c| usize::from(c) >= classes) {
            return Err(TaskError::Setting {
                key: "positive",
                message: format!(
                    "class {c} does not exist: {} has classes 0..{}",
                    self.data.name(),
                    classes - 1
                ),
            });
        }
        let mut distinct = self.positive.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() == classes {
            return Err(TaskError::Setting {
                key: "positive",
                message: format!(
                    "all {classes} classes of {} are positive: the binary task has no negatives",
                    self.data.name()
                ),
            });
        }
        let dir = self.dir().map_err(|e| TaskError::Setting {
            key: "data_dir",
            message: e.to_string(),
        })?;
        if !dir.is_dir() {
            return Err(TaskError::Setting {
                key: "data_dir",
                message: format!(
                    "{}: the data folder does not exist: it must hold {}",
                    dir.display(),
                    expected_contents(self.data)
                ),
            });
        }
        Ok(())
    }

    /// The long-tailed training split less 10% (seeded) for validation, the official test
    /// split; a positive class that leaves a set one-class is an error.
    fn build(&self) -> Result<TaskSets<ImageBatcher>, TaskError> {
        let dir = self.dir()?;
        let positive: Vec<u16> = match (self.positive.is_empty(), self.data) {
            (false, _) => self.positive.clone(),
            (true, LtData::TinyImagenet) => TINY_IMAGENET_BIRDS.to_vec(),
            (true, _) => vec![3],
        };
        let train_all = load(self.data, &dir, true)?.long_tailed(self.imbalance)?;
        let mut idx = thin(train_all.len(), self.limit);
        idx.shuffle(&mut StdRng::seed_from_u64(self.seed));
        let n_val = (idx.len() / 10).max(1);
        let (val_idx, train_idx) = idx.split_at(n_val);
        let (mut tr, mut va) = (train_idx.to_vec(), val_idx.to_vec());
        tr.sort_unstable();
        va.sort_unstable();
        let test_all = load(self.data, &dir, false)?;
        let test_idx = thin(test_all.len(), self.test_limit);
        let (mean, std) = normalization(self.data);
        let batcher = |set: ImageSet| -> Result<ImageBatcher, DataError> {
            ImageBatcher::new(Arc::new(set.binary(&positive)?), &mean, &std)
        };
        // Each split named in its errors (the validation split is cut from the training set
        // and would otherwise carry its name).
        let split = |split: &'static str, set: ImageSet| {
            let images = set.len();
            batcher(set).map_err(|e| TaskError::Split {
                split,
                images,
                source: Box::new(e),
            })
        };
        Ok(TaskSets {
            train: split("training", train_all.subset(&tr))?,
            val: split("validation", train_all.subset(&va))?,
            test: split("test", test_all.subset(&test_idx))?,
        })
    }

    /// ResNet-20 with as many input channels as the images have.
    fn model(&self, sets: &TaskSets<ImageBatcher>, device: &Device) -> Result<ResNet20, TaskError> {
        Ok(ResNet20Config::new()
            .with_in_channels(sets.train.set().images.channels)
            .init(device))
    }

    fn describe(&self, sets: &TaskSets<ImageBatcher>, backend: BackendKind) -> String {
        let (tr, va, te) = (sets.train.set(), sets.val.set(), sets.test.set());
        format!(
            "{}: {} training images ({} positive), {} validation, {} test; ResNet-20 on {backend}",
            tr.images.name,
            tr.positive.len(),
            tr.positives(),
            va.positive.len(),
            te.positive.len()
        )
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

fn load(data: LtData, dir: &Path, train: bool) -> Result<ImageSet, DataError> {
    match data {
        LtData::FashionMnist | LtData::Mnist => read_mnist_style(dir, train),
        LtData::Cifar10 => read_cifar(dir, Cifar::Ten, train),
        LtData::Cifar100 => read_cifar(dir, Cifar::Hundred, train),
        LtData::TinyImagenet => read_tiny_imagenet(dir, train),
    }
}
