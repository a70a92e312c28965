//! rankrisk's objectives inside burn-train's Learner: `ObjectiveModel` wraps the scorer and
//! keeps the objective's CPU state in a `#[module(skip)]` field; here the mini-batch pAUC
//! objective trains an MLP on real Fashion-MNIST images (shirts vs the rest).
//!
//! `cargo run --release --example learner -- [--backend flex] [--epochs 2] [--devices flex,flex]`
//!
//! With `--devices`, burn-train's own multi-device strategy runs the step of each device on
//! its own batches; the objective's state stays one (`SharedObjective`), but a pairwise
//! objective then pairs the samples of each device's batch only, and the devices' gradients
//! are summed (the run driver's `--devices` splits one batch instead: see docs/BACKENDS.md).

use std::sync::Arc;

use burn::data::dataloader::DataLoaderBuilder;
use burn::optim::SgdConfig;
use burn::train::{
    ExecutionStrategy, Learner, MultiDeviceOptim, SupervisedTraining, TrainingStrategy,
};
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::train::MiniBatchPaucConfig;
use rankrisk::train::learner::ObjectiveModel;
use rankrisk::train::run::score_all;
use rankrisk_datasets::batcher::{ImageBatcher, SampleIds};
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_models::LinearScorerConfig;

#[derive(Parser)]
#[command(about = "The mini-batch pAUC objective under burn-train's Learner on Fashion-MNIST")]
struct Args {
    /// Backend: flex, ndarray or wgpu.
    #[arg(long, default_value = "flex")]
    backend: BackendKind,
    /// Several devices (comma-separated, the first is the main one): burn-train's
    /// multi-device strategy; overrides `--backend`.
    #[arg(long, value_delimiter = ',')]
    devices: Vec<BackendKind>,
    /// Epochs.
    #[arg(long, default_value_t = 2)]
    epochs: usize,
    /// Folder with the Fashion-MNIST IDX files.
    #[arg(long, default_value = "datasets/test-data/fashion-mnist")]
    data_dir: std::path::PathBuf,
    /// Output folder of the Learner (logs, metrics).
    #[arg(long, default_value = "out/learner")]
    out: std::path::PathBuf,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let device = autodiff_device(args.devices.first().copied().unwrap_or(args.backend))?;
    let train = Arc::new(read_mnist_style(&args.data_dir, true)?.binary(&[6])?);
    let test = Arc::new(read_mnist_style(&args.data_dir, false)?.binary(&[6])?);
    let tb = ImageBatcher::new(train.clone(), &[0.286], &[0.353])?;
    let sb = ImageBatcher::new(test.clone(), &[0.286], &[0.353])?;
    let loader = |b: &ImageBatcher, n: usize, seed| {
        DataLoaderBuilder::new(b.clone())
            .batch_size(256)
            .shuffle(seed)
            .set_device(device.clone())
            .build(SampleIds::new(n))
    };
    let scorer = LinearScorerConfig::new(784)
        .with_hidden(Some(64))
        .with_bias(true)
        .init(&device);
    let objective = MiniBatchPaucConfig::new(0.05, 0.5).init().unwrap();
    let learner = Learner::new(
        ObjectiveModel::new(scorer, objective),
        SgdConfig::new().init(),
        0.1,
    );
    let mut training = SupervisedTraining::new(
        &args.out,
        loader(&tb, train.positive.len(), 1),
        loader(&sb, test.positive.len(), 2),
    )
    .num_epochs(args.epochs);
    if args.devices.len() > 1 {
        let devices = args
            .devices
            .iter()
            .map(|&k| autodiff_device(k))
            .collect::<Result<Vec<_>, _>>()?;
        training = training.with_training_strategy(TrainingStrategy::Default(
            ExecutionStrategy::multi(devices, MultiDeviceOptim::OptimMainDevice),
        ));
    }
    let result = training.launch(learner);
    let scores = score_all(&result.model.model, &sb, &device)?;
    let labels = test.signed_labels();
    println!(
        "test AUC {:.4}, pAUC[0.05, 0.5] {:.4}",
        rankrisk::metrics::auc::auc(&scores, &labels)?,
        rankrisk::metrics::auc::pauc(&scores, &labels, 0.05, 0.5)?
    );
    Ok(())
}
