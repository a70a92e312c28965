//! PAUCI / UPAUCI trained by the paper's ASGDA against plain stochastic gradient
//! descent-ascent (SGDA: the scalars' projected steps, the network on Adam), the same passes,
//! in a hand-written Burn loop: shirts against the rest of long-tailed Fashion-MNIST (the
//! harder task), an MLP scorer. ASGDA evaluates every batch twice, at the current and at the
//! moved point (`train::storm`'s module docs give the step).
//!
//! `cargo run --release --example asgda -- [--method upauci] [--epochs 3] [--seed 0]`

use std::sync::Arc;

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams, SgdConfig};
use burn::tensor::Device;
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk::metrics::auc::pauc;
use rankrisk::metrics::conventions::libauc_two_way_pauc;
use rankrisk::train::instance_pauc::GammaStep;
use rankrisk::train::{
    AsgdaConfig, InstanceWise, MinMaxGradient, PauciConfig, StormDirection, UpauciConfig,
};
use rankrisk_datasets::batcher::ImageBatcher;
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_datasets::sampler::DualSampler;
use rankrisk_models::{LinearScorer, LinearScorerConfig, Scorer};

#[derive(Parser)]
#[command(about = "PAUCI / UPAUCI by ASGDA against SGDA on Fashion-MNIST-LT shirts")]
struct Args {
    /// pauci or upauci.
    #[arg(long, default_value = "pauci")]
    method: String,
    /// Passes over the training set (each solver).
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    /// Seed of the model and the batches.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// ASGDA's step sizes `nu = lambda`.
    #[arg(long, default_value_t = 0.035)]
    nu: f64,
    /// ASGDA's `m` of `eta_t = k / (m + t)^(1/3)`.
    #[arg(long, default_value_t = 1000.0)]
    m: f64,
    /// Folder with the Fashion-MNIST IDX files.
    #[arg(long, default_value = "datasets/test-data/fashion-mnist")]
    data_dir: std::path::PathBuf,
}

/// The objective of `method` over TPR >= 0.7, FPR <= 0.3.
fn objective(
    method: &str,
    labels: &[f64],
) -> Result<Box<dyn InstanceWise>, Box<dyn std::error::Error>> {
    Ok(match method {
        // The paper's form: its Algorithm 1 moves `gamma` by ascent (GUIDE's figures).
        "pauci" => Box::new(
            PauciConfig::new()
                .with_alpha(0.3)
                .with_gamma_step(GammaStep::Ascent)
                .init(labels)?,
        ),
        "upauci" => Box::new(UpauciConfig::new().with_alpha(0.3).init(labels)?),
        other => return Err(format!("--method {other}: pauci or upauci").into()),
    })
}

/// The batch's gradients at the model's and the objective's current point, nothing moved.
fn gradients(
    model: &LinearScorer,
    o: &dyn InstanceWise,
    batch: &rankrisk_datasets::batcher::ImageBatch,
) -> Result<(GradientsParams, MinMaxGradient), Box<dyn std::error::Error>> {
    let scores = model.score(batch.inputs.clone());
    let s = scores_to_cpu(scores.clone())?;
    let (g, minmax) = o.gradients(&s, &batch.targets, &batch.ids)?;
    let loss = surrogate(scores, &g.grad)?;
    Ok((GradientsParams::from_grads(loss.backward(), model), minmax))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let device = autodiff_device(BackendKind::Flex)?;
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
    let asgda = AsgdaConfig::new()
        .with_m(args.m)
        .with_nu(args.nu)
        .with_lambda(args.nu);
    asgda.check()?;
    let fresh = |device: &Device| {
        device.seed(args.seed);
        LinearScorerConfig::new(784)
            .with_hidden(Some(64))
            .with_bias(true)
            .init(device)
    };
    let evaluate = |m: &LinearScorer| -> Result<(f64, f64), Box<dyn std::error::Error>> {
        let ids: Vec<usize> = (0..test.positive.len()).collect();
        let s = ids
            .chunks(1024)
            .map(|c| {
                Ok(scores_to_cpu(
                    m.valid().score(sb.try_batch(c, &device)?.inputs),
                )?)
            })
            .collect::<Result<Vec<Vec<f64>>, Box<dyn std::error::Error>>>()?
            .concat();
        let y = test.signed_labels();
        Ok((
            pauc(&s, &y, 0.0, 0.3)?,
            libauc_two_way_pauc(&s, &y, 0.7, 0.3)?,
        ))
    };
    println!("| solver | pass | test pAUC[0, 0.3] | test two-way pAUC (TPR >= 0.7, FPR <= 0.3) |");
    println!("|---|---|---|---|");
    // SGDA: the objective's own projected steps, Adam on the network.
    {
        let (mut model, mut o) = (fresh(&device), objective(&args.method, &labels)?);
        let mut optim = AdamConfig::new().init();
        let mut sampler = DualSampler::new(&train.positive, 64, 0.5, args.seed)?;
        for epoch in 1..=args.epochs {
            for _ in 0..sampler.batches_per_epoch() {
                let batch = tb.try_batch(&sampler.next_batch(), &device)?;
                let scores = model.score(batch.inputs.clone());
                let g =
                    o.batch_gradient(&scores_to_cpu(scores.clone())?, &batch.targets, &batch.ids)?;
                let grads =
                    GradientsParams::from_grads(surrogate(scores, &g.grad)?.backward(), &model);
                model = optim.step(1e-3, model, grads);
            }
            let (p, two) = evaluate(&model)?;
            println!("| SGDA + Adam | {epoch} | {p:.4} | {two:.4} |");
        }
    }
    // ASGDA: two evaluations of every batch, the STORM directions, plain steps along them.
    {
        let (mut model, mut o) = (fresh(&device), objective(&args.method, &labels)?);
        let mut sgd = SgdConfig::new().init();
        let mut v = StormDirection::new();
        let mut sampler = DualSampler::new(&train.positive, 64, 0.5, args.seed)?;
        let mut t = 0;
        for epoch in 1..=args.epochs {
            for _ in 0..sampler.batches_per_epoch() {
                let batch = tb.try_batch(&sampler.next_batch(), &device)?;
                let (net_old, sc_old) = gradients(&model, o.as_ref(), &batch)?;
                let eta = asgda.eta(t);
                if !v.is_started() {
                    // The first batch: the directions start at its gradient, then move.
                    v.update(&model, net_old, None, 0.0);
                    o.correct_directions(&sc_old, None, 0.0, 0.0);
                    let direction = v.gradients(&model);
                    model = sgd.step(eta * asgda.nu, model, direction);
                    o.asgda_move(eta, asgda.nu, asgda.lambda);
                } else {
                    // Move along v_t, then correct it with the same batch at both points.
                    let direction = v.gradients(&model);
                    model = sgd.step(eta * asgda.nu, model, direction);
                    o.asgda_move(eta, asgda.nu, asgda.lambda);
                    let (net_new, sc_new) = gradients(&model, o.as_ref(), &batch)?;
                    let (rho, xi) = (asgda.rho(t + 1), asgda.xi(t + 1));
                    v.update(&model, net_new, Some(net_old), rho);
                    o.correct_directions(&sc_new, Some(&sc_old), rho, xi);
                }
                t += 1;
            }
            let (p, two) = evaluate(&model)?;
            println!("| ASGDA | {epoch} | {p:.4} | {two:.4} |");
        }
    }
    Ok(())
}
