//! rankrisk's objectives inside burn-train's Learner: `ObjectiveModel` wraps the scorer and the
//! objective, whose state (here SOPA's thresholds, one per positive) is part of the module's
//! record, so the Learner's checkpoints save it with the weights and `--resume-from EPOCH`
//! restores both. SOPA trains an MLP on real Fashion-MNIST images (shirts vs the rest); the
//! test AUC and pAUC[0.05, 0.5] are printed at the end. A batch SOPA cannot use stops the run
//! with SOPA's message.
//!
//! `cargo run --release --example learner -- [--backend flex] [--epochs 2] [--devices flex,flex]
//! [--resume-from 1]`
//!
//! The training recipe is rankrisk's `Recipe`, the same settings as `rankrisk train`'s:
//! `--lr 1e-3 --optimizer adamw --weight-decay 5e-4 --lr-schedule step --decay-epochs 1` (or
//! `cosine`, `inverse-sqrt`, `--warmup-steps N`); the Learner steps its scheduler once per
//! batch and keeps it in its checkpoints, so `--resume-from` continues the schedule.
//!
//! The Learner's loader reshuffles from its seed when a run is resumed, so a resumed epoch
//! sees its batches in another order than an uninterrupted run would (with a fixed order it
//! ends bit for bit where the uninterrupted run ends: tests/learner.rs).
//!
//! With `--devices`, burn-train's own multi-device strategy runs the step of each device on
//! its own batches; the objective's state stays one (`SharedObjective`), but a pairwise
//! objective then pairs the samples of each device's batch only, and the devices' gradients
//! are summed (the run driver's `--devices` splits one batch instead: see docs/BACKENDS.md).

use std::sync::Arc;

use burn::data::dataloader::DataLoaderBuilder;
use burn::train::{
    ExecutionStrategy, Learner, MultiDeviceOptim, SupervisedTraining, TrainingStrategy,
};
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::train::SopaConfig;
use rankrisk::train::learner::{ObjectiveModel, RankingMetric};
use rankrisk::train::recipe::{OptimizerKind, Recipe};
use rankrisk::train::run::score_all;
use rankrisk_datasets::batcher::{ImageBatcher, SampleIds};
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_models::LinearScorerConfig;

#[derive(Parser)]
#[command(about = "SOPA under burn-train's Learner on Fashion-MNIST, resumable")]
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
    /// Output folder of the Learner (logs, metrics, checkpoints).
    #[arg(long, default_value = "out/learner")]
    out: std::path::PathBuf,
    /// Resume from the Learner's checkpoint of this epoch in `--out` (the network, the
    /// optimizer and SOPA's thresholds).
    #[arg(long)]
    resume_from: Option<usize>,
    /// The base learning rate (LibAUC's default for SOPA).
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    /// The optimizer and schedule (Adam at a constant rate unless set).
    #[command(flatten)]
    recipe: Recipe,
}

/// Batches of the Learner's loaders.
const BATCH: usize = 256;

/// The Learner's checkpoint files of `epoch` in `out` (burn-train's default checkpointers write
/// `checkpoint/model-E.bpk` and `checkpoint/optim-E.bpk`), checked before burn-train is handed
/// the epoch (it unwraps a missing file).
fn check_checkpoint(out: &std::path::Path, epoch: usize) -> Result<(), String> {
    let dir = out.join("checkpoint");
    let missing: Vec<String> = ["model", "optim"]
        .iter()
        .map(|name| dir.join(format!("{name}-{epoch}.bpk")))
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut saved: Vec<usize> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_prefix("model-")?
                .strip_suffix(".bpk")?
                .parse()
                .ok()
        })
        .collect();
    saved.sort_unstable();
    let found = if saved.is_empty() {
        format!("{} holds none", dir.display())
    } else {
        let list: Vec<String> = saved.iter().map(usize::to_string).collect();
        format!("epochs saved: {}", list.join(", "))
    };
    Err(format!(
        "--resume-from {epoch}: no checkpoint of epoch {epoch} ({} missing; {found})",
        missing.join(", ")
    ))
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    // Checked before burn-train gets them: it panics on a missing checkpoint and on an output
    // path that is a file.
    rankrisk::experiments::paths::check_folder(&args.out, "--out")?;
    if let Some(epoch) = args.resume_from {
        check_checkpoint(&args.out, epoch)?;
    }
    let device = autodiff_device(args.devices.first().copied().unwrap_or(args.backend))?;
    let train = Arc::new(read_mnist_style(&args.data_dir, true)?.binary(&[6])?);
    let test = Arc::new(read_mnist_style(&args.data_dir, false)?.binary(&[6])?);
    let tb = ImageBatcher::new(train.clone(), &[0.286], &[0.353])?;
    let sb = ImageBatcher::new(test.clone(), &[0.286], &[0.353])?;
    let loader = |b: &ImageBatcher, n: usize, seed| {
        DataLoaderBuilder::new(b.clone())
            .batch_size(BATCH)
            .shuffle(seed)
            .set_device(device.clone())
            .build(SampleIds::new(n))
    };
    let scorer = LinearScorerConfig::new(784)
        .with_hidden(Some(64))
        .with_bias(true)
        .init(&device);
    // SOPA over FPR [0, 0.5] with LibAUC's margin and threshold step; Adam at LibAUC's rate.
    let objective = SopaConfig::new(0.5).init(&train.signed_labels())?;
    let model = ObjectiveModel::new(scorer, objective);
    let interrupter = model.interrupter();
    // SOPA's own value over the validation split (read-only), the loss trained.
    let validation_loss = model.validation_loss();
    // The recipe's optimizer (Adam unless set) and its schedule over the run's batches.
    let recipe = &args.recipe;
    let kind = recipe.optimizer_or(OptimizerKind::Adam);
    recipe.validate(kind, args.epochs, args.lr)?;
    if recipe.eval_every.is_some() {
        return Err("--eval-every: burn-train's Learner validates once an epoch".into());
    }
    let steps_per_epoch = train.positive.len().div_ceil(BATCH);
    let optim = recipe.init_optimizer(kind, recipe.weight_decay.unwrap_or(0.0), None);
    let schedule =
        recipe.init_scheduler(args.lr, steps_per_epoch, args.epochs * steps_per_epoch)?;
    let learner = Learner::new(model, optim, schedule);
    let mut training = SupervisedTraining::new(
        &args.out,
        loader(&tb, train.positive.len(), 1),
        loader(&sb, test.positive.len(), 2),
    )
    .num_epochs(args.epochs)
    // The dashboard and the logs show the split's AUROC and pAUC (in percent) and SOPA's
    // value after every epoch.
    .metric_valid_numeric(RankingMetric::auroc())
    .metric_valid_numeric(RankingMetric::pauc(0.05, 0.5))
    .metric_valid_numeric(validation_loss)
    .with_default_checkpointers()
    .with_interrupter(interrupter);
    if let Some(epoch) = args.resume_from {
        training = training.checkpoint(epoch);
    }
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
    if let Some(e) = result.model.error() {
        return Err(format!("training stopped: {e}").into());
    }
    let scores = score_all(&result.model.model, &sb, &device)?;
    let labels = test.signed_labels();
    println!(
        "test AUC {:.4}, pAUC[0.05, 0.5] {:.4}",
        rankrisk::metrics::auc::auc(&scores, &labels)?,
        rankrisk::metrics::auc::pauc(&scores, &labels, 0.05, 0.5)?
    );
    Ok(())
}
