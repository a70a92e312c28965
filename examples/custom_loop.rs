//! The objectives in a hand-written Burn loop: the rank-based deep ADMM (CVaR of the logistic
//! losses) on real Fashion-MNIST images (shirts vs the rest, long-tailed), an MLP scorer, any
//! backend. The objective from its config (`DeepAdmmConfig`), then per step: forward on the
//! device, `Objective::forward` (one read-back, the objective on the CPU, the loss tensor),
//! its backward pass, a Burn optimizer step.
//!
//! The optimizer and its learning-rate schedule come from rankrisk's `Recipe` (Adam at 1e-3,
//! constant, unless set: `--optimizer sgd --momentum 0.9 --lr-schedule cosine`), stepped once
//! per batch as the run driver steps them.
//!
//! `cargo run --release --example custom_loop -- [--backend wgpu] [--outer 10]`

use std::sync::Arc;

use burn::module::Module;
use burn::optim::GradientsParams;
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::scores_to_cpu;
use rankrisk::metrics::auc::pauc;
use rankrisk::train::params::{DeviceTerms, Snapshot};
use rankrisk::train::recipe::{OptimizerKind, Recipe};
use rankrisk::train::{BurnObjective, DeepAdmmConfig};
use rankrisk::weights::Weights;
use rankrisk_datasets::batcher::ImageBatcher;
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_datasets::sampler::DualSampler;
use rankrisk_models::LinearScorerConfig;
use rankrisk_models::Scorer;

#[derive(Parser)]
#[command(about = "Deep rank-based ADMM in a hand-written Burn loop on Fashion-MNIST-LT")]
struct Args {
    /// Backend: flex, ndarray or wgpu.
    #[arg(long, default_value = "flex")]
    backend: BackendKind,
    /// Outer ADMM iterations (each: scoring pass, z-step, one pass of w-steps).
    #[arg(long, default_value_t = 5)]
    outer: usize,
    /// Folder with the Fashion-MNIST IDX files.
    #[arg(long, default_value = "datasets/test-data/fashion-mnist")]
    data_dir: std::path::PathBuf,
    /// The base learning rate of the w-steps.
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
    /// The w-steps' optimizer and schedule.
    #[command(flatten)]
    recipe: Recipe,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let device = autodiff_device(args.backend)?;
    let train = Arc::new(
        read_mnist_style(&args.data_dir, true)?
            .long_tailed(0.1)?
            .binary(&[6])?,
    );
    let test = Arc::new(read_mnist_style(&args.data_dir, false)?.binary(&[6])?);
    let (tb, sb) = (
        ImageBatcher::new(train.clone(), &[0.286], &[0.353])?,
        ImageBatcher::new(test.clone(), &[0.286], &[0.353])?,
    );
    let labels = train.signed_labels();
    let mut model = LinearScorerConfig::new(784)
        .with_hidden(Some(64))
        .with_bias(true)
        .init(&device);
    let mut admm = DeepAdmmConfig::new(Weights::Cvar { q: 0.9 })
        .with_l2(1e-4)
        .init(&labels)?;
    let mut sampler = DualSampler::new(&train.positive, 64, 0.5, 0)?;
    // The recipe's optimizer (Adam unless set) and schedule over the w-steps of every outer
    // iteration.
    let kind = args.recipe.optimizer_or(OptimizerKind::Adam);
    args.recipe.validate(kind, args.outer, args.lr)?;
    let weight_decay = args.recipe.weight_decay.unwrap_or(0.0);
    let mut optim = args.recipe.init_optimizer(kind, weight_decay, None);
    let steps = sampler.batches_per_epoch();
    let mut schedule = args
        .recipe
        .init_scheduler(args.lr, steps, args.outer * steps)?;
    let score = |m: &rankrisk_models::LinearScorer, b: &ImageBatcher, n: usize| {
        let ids: Vec<usize> = (0..n).collect();
        ids.chunks(1024)
            .map(|c| {
                scores_to_cpu(m.valid().score(b.try_batch(c, &device)?.inputs)).map_err(Into::into)
            })
            .collect::<Result<Vec<Vec<f64>>, Box<dyn std::error::Error>>>()
            .map(|v| v.concat())
    };
    for k in 0..args.outer {
        let record = admm.outer_step(&score(&model, &tb, labels.len())?)?; // dual + z-step (CPU)
        let anchor = Snapshot::of(&model);
        for _ in 0..sampler.batches_per_epoch() {
            let batch = tb.try_batch(&sampler.next_batch(), &device)?;
            // Forward on the device, the w-step's per-sample term on the CPU, one loss tensor.
            let mut loss =
                admm.forward(model.score(batch.inputs), batch.classes, batch.sample_ids)?;
            if let Some(terms) = admm.device_terms(&model, &anchor) {
                loss = loss + terms;
            }
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(schedule.step().base(), model, grads);
        }
        let test_pauc = pauc(
            &score(&model, &sb, test.positive.len())?,
            &test.signed_labels(),
            0.05,
            0.5,
        )?;
        println!(
            "outer {}: CVaR objective {:.4}, test pAUC[0.05, 0.5] {test_pauc:.4}",
            k + 1,
            record.rank_loss
        );
    }
    Ok(())
}
