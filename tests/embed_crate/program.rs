//! A Burn program of its own, outside rankrisk's repository, that embeds SOPA (rankrisk's
//! one-way pAUC objective): an MLP on a tabular CSV (label in the last column) trained with
//! `SopaConfig` + `forward` + a Burn optimizer; SOPA's state saved as a Burn record, loaded
//! into a fresh SOPA, and training continued. In this repository it is the example
//! `embed_sopa` (`cargo run --release --example embed_sopa -- TRAIN.csv`), which
//! `tests/embed_crate.rs` runs; in a crate of your own with the README's `[dependencies]`,
//! `cargo run --release -- TRAIN.csv`.

use std::sync::Arc;

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::store::ModuleRecord;
use rankrisk::metrics::auc::{auc, pauc};
use rankrisk::prelude::*;
use rankrisk_datasets::batcher::TabularBatcher;
use rankrisk_datasets::sampler::DualSampler;
use rankrisk_datasets::{LabelColumn, Labels, read_table};
use rankrisk_models::{LinearScorer, LinearScorerConfig, Scorer};

/// `epochs` passes of SOPA steps on batches of 64 holding both classes.
fn train(
    mut model: LinearScorer,
    optim: &mut ModuleOptimizer,
    sopa: &mut Sopa,
    batcher: &TabularBatcher,
    sampler: &mut DualSampler,
    epochs: usize,
) -> Result<LinearScorer, Box<dyn std::error::Error>> {
    let device = model.devices()[0].clone();
    for _ in 0..epochs * sampler.batches_per_epoch() {
        let b = batcher.try_batch(&sampler.next_batch(), &device)?;
        let loss = sopa.forward(model.score(b.inputs), b.classes, b.sample_ids)?;
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-3, model, grads);
    }
    Ok(model)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let csv = std::env::args()
        .nth(1)
        .ok_or("usage: embed_sopa TRAIN.csv (a CSV with the 0/1 label in its last column)")?;
    let (mut table, _) = read_table(csv.as_ref(), None, None, LabelColumn::Last, Labels::Binary)?;
    table.standardize();
    let device = autodiff_device(BackendKind::Flex)?;
    device.seed(0);
    let positive: Vec<bool> = table.y.iter().map(|&y| y > 0.0).collect();
    let batcher = TabularBatcher::new(Arc::new(table.clone()));
    let mut sampler = DualSampler::new(&positive, 64, 0.5, 0)?;
    let model = LinearScorerConfig::new(table.d)
        .with_hidden(Some(16))
        .with_bias(true)
        .init(&device);
    let mut optim = AdamConfig::new().init();
    let mut sopa = SopaConfig::new(0.5).init(&table.y)?; // FPR [0, 0.5], LibAUC's defaults
    let model = train(model, &mut optim, &mut sopa, &batcher, &mut sampler, 5)?;

    // SOPA's thresholds as a Burn record beside the model's, then into a fresh SOPA.
    let dir = std::env::temp_dir().join(format!("embed-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    sopa.clone().into_record().save(dir.join("sopa.bpk"))?;
    let mut reloaded = SopaConfig::new(0.5)
        .init(&table.y)?
        .try_load_record(ModuleRecord::load(dir.join("sopa.bpk"))?)?;
    println!("reloaded SOPA equals the saved one: {}", reloaded == sopa);
    let model = train(model, &mut optim, &mut reloaded, &batcher, &mut sampler, 5)?;
    std::fs::remove_dir_all(&dir)?;

    let all = batcher.try_batch(&(0..table.n()).collect::<Vec<_>>(), &device)?;
    let scores = scores_to_cpu(model.valid().score(all.inputs))?;
    println!(
        "training AUC {:.4}, pAUC[0, 0.5] {:.4}",
        auc(&scores, &table.y)?,
        pauc(&scores, &table.y, 0.0, 0.5)?
    );
    Ok(())
}
