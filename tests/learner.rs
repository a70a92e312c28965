//! The objectives under burn-train's Learner (issue 40): the objective's state is part of the
//! module's record, so a run stopped after its first epoch and resumed from the Learner's
//! checkpoint ends where an uninterrupted run ends (LibAUC's issue #64 was this state
//! restarting from scratch); a bad batch stops the run with the objective's message (cleanly
//! when the run listens to the model's interrupter, by a panic with the message when not).

use std::sync::Arc;

use burn::data::dataloader::{DataLoader, DataLoaderBuilder};
use burn::data::dataset::InMemDataset;
use burn::module::Param;
use burn::optim::AdamConfig;
use burn::tensor::{Device, Tensor};
use burn::train::{Learner, SupervisedTraining};
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::train::learner::ObjectiveModel;
use rankrisk::train::{MiniBatchPaucConfig, Objective, SopaConfig};
use rankrisk_datasets::BinaryImageSet;
use rankrisk_datasets::batcher::{ImageBatch, ImageBatcher};
use rankrisk_models::{LinearScorer, LinearScorerConfig};

/// 600 Fashion-MNIST training images, shirts (class 6) positive; `None` without the data.
fn shirts() -> Option<(Arc<BinaryImageSet>, ImageBatcher)> {
    let dir = rankrisk_datasets::fetched::require("fashion-mnist")?;
    let all = rankrisk_datasets::idx::read_mnist_style(&dir, true).unwrap();
    let task = Arc::new(
        all.subset(&(0..600).collect::<Vec<_>>())
            .binary(&[6])
            .unwrap(),
    );
    let batcher = ImageBatcher::new(task.clone(), &[0.2860], &[0.3530]).unwrap();
    Some((task, batcher))
}

/// The sample ids in a fixed order whose every batch of 50 holds both classes (the loader does
/// not shuffle, so a resumed epoch sees the batches an uninterrupted one does).
fn interleaved(labels: &[f64]) -> Vec<usize> {
    let (pos, neg): (Vec<usize>, Vec<usize>) = (0..labels.len()).partition(|&i| labels[i] > 0.0);
    let mut order = Vec::with_capacity(labels.len());
    let mut p = pos.iter().cycle();
    for (k, &n) in neg.iter().enumerate() {
        if k % 9 == 0 {
            order.push(*p.next().unwrap());
        }
        order.push(n);
    }
    order
}

/// Batches of 50 of the images `ids`, in that order (no shuffle), on `device`.
fn image_loader(
    batcher: &ImageBatcher,
    device: &Device,
    ids: Vec<usize>,
) -> Arc<dyn DataLoader<ImageBatch>> {
    DataLoaderBuilder::new(batcher.clone())
        .batch_size(50)
        .set_device(device.clone())
        .build(InMemDataset::new(ids))
}

/// The tests seed the device's one random generator before building a model: one at a time.
static SEEDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn scorer(device: &Device, seed: u64) -> LinearScorer {
    device.seed(seed);
    LinearScorerConfig::new(784)
        .with_hidden(Some(16))
        .with_bias(true)
        .init(device)
}

fn weights(m: &LinearScorer) -> Vec<f32> {
    let flat = |p: &Param<Tensor<2>>| -> Vec<f32> { p.val().into_data().try_into_vec().unwrap() };
    let mut v = flat(&m.output.weight);
    v.extend(flat(&m.hidden.as_ref().unwrap().weight));
    v
}

/// Train SOPA under the Learner in `dir` for `epochs` epochs, resuming from the checkpoint of
/// epoch `from` when given; the model starts from `seed`'s initialization, SOPA's FPR bound
/// is `beta`.
fn run_sopa(
    dir: &std::path::Path,
    epochs: usize,
    from: Option<usize>,
    seed: u64,
    beta: f64,
) -> Option<(Vec<f32>, Vec<f64>)> {
    let (task, batcher) = shirts()?;
    let labels = task.signed_labels();
    let device = autodiff_device(BackendKind::Ndarray).unwrap();
    let order = interleaved(&labels);
    let loader = |ids: Vec<usize>| image_loader(&batcher, &device, ids);
    let sopa = SopaConfig::new(beta).with_eta(0.5).init(&labels).unwrap();
    let model = ObjectiveModel::new(scorer(&device, seed), sopa);
    let objective = model.objective.clone();
    let learner = Learner::new(model, AdamConfig::new().init(), 1e-3);
    let mut training =
        SupervisedTraining::new(dir, loader(order.clone()), loader(order[..100].to_vec()))
            .num_epochs(epochs)
            .with_default_checkpointers();
    if let Some(epoch) = from {
        training = training.checkpoint(epoch);
    }
    let result = training.launch(learner);
    assert!(result.error.is_none() && result.interrupted.is_none());
    // The single-device strategy forks on one thread: no per-device pairs.
    assert_eq!(objective.workers(), 1);
    let thresholds = objective.lock().state()[0].1.clone();
    Some((weights(&result.model.model), thresholds))
}

#[test]
fn a_learner_run_resumed_from_its_checkpoint_ends_as_an_uninterrupted_one() {
    let _one_at_a_time = SEEDING.lock().unwrap_or_else(|p| p.into_inner());
    let base = std::env::temp_dir().join(format!("rankrisk-learner-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let Some((w_full, t_full)) = run_sopa(&base.join("full"), 2, None, 1, 0.5) else {
        return;
    };
    let (_, t_first) = run_sopa(&base.join("split"), 1, None, 1, 0.5).unwrap();
    // A fresh process's state: another initialization, SOPA's thresholds at 0; the checkpoint
    // of epoch 1 brings back both.
    let (w_resumed, t_resumed) = run_sopa(&base.join("split"), 2, Some(1), 99, 0.5).unwrap();
    assert!(
        t_first.iter().any(|&t| t != 0.0),
        "the thresholds moved in epoch 1"
    );
    assert_ne!(t_first, t_full, "epoch 2 moved them again");
    assert_eq!(t_resumed, t_full, "SOPA's thresholds");
    assert_eq!(w_resumed, w_full, "the network's weights");
    // The checkpoint holds SOPA's settings: resuming it with another beta is refused, the
    // setting named (a panic, as Burn's own loader panics on a record that does not fit).
    let refused = std::panic::catch_unwind(|| run_sopa(&base.join("split"), 2, Some(1), 99, 0.1));
    let payload = refused.expect_err("a checkpoint of other settings did not load");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("`beta` is 0.5 in the record, 0.1 in this SOPA"),
        "{message}"
    );
    std::fs::remove_dir_all(&base).ok();
}

/// `DualLoader` under the Learner: at batch 4 with 10% positives, where two uniform batches in
/// three hold one class, every batch of the DualSampler order holds both, so an unwired SOPA
/// run trains through its epochs with no refused batch.
#[test]
fn a_dual_loader_gives_the_learner_both_classes_in_every_batch() {
    use rankrisk_datasets::loader::DualLoader;
    use rankrisk_datasets::sampler::DualSampler;

    let _one_at_a_time = SEEDING.lock().unwrap_or_else(|p| p.into_inner());
    let Some((task, batcher)) = shirts() else {
        return;
    };
    let labels = task.signed_labels();
    let device = autodiff_device(BackendKind::Ndarray).unwrap();
    let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
    let share = positive.iter().filter(|&&p| p).count() as f64 / labels.len() as f64;
    assert!(share < 0.15, "shirts are {share} of the set");
    let sampler = DualSampler::new(&positive, 4, 0.25, 7).unwrap();
    let train = Arc::new(DualLoader::new(sampler, batcher.clone(), &device));
    let valid = image_loader(&batcher, &device, interleaved(&labels)[..100].to_vec());
    let sopa = SopaConfig::new(0.5).init(&labels).unwrap();
    let model = ObjectiveModel::new(scorer(&device, 2), sopa);
    let objective = model.objective.clone();
    let learner = Learner::new(model, AdamConfig::new().init(), 1e-3);
    let dir = std::env::temp_dir().join(format!("rankrisk-learner-dual-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = SupervisedTraining::new(&dir, train, valid)
        .num_epochs(2)
        .launch(learner);
    assert!(result.error.is_none() && result.interrupted.is_none());
    assert!(result.model.error().is_none());
    let thresholds = objective.lock().state()[0].1.clone();
    assert!(
        thresholds.iter().all(|&t| t != 0.0),
        "every positive was seen"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_batch_stops_the_learner_with_the_objectives_message() {
    let _one_at_a_time = SEEDING.lock().unwrap_or_else(|p| p.into_inner());
    let Some((task, batcher)) = shirts() else {
        return;
    };
    let labels = task.signed_labels();
    let device = autodiff_device(BackendKind::Ndarray).unwrap();
    // Negatives only: a pairwise objective cannot use such a batch.
    let negatives: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] < 0.0).collect();
    let loader = |ids: Vec<usize>| image_loader(&batcher, &device, ids);
    let mb = MiniBatchPaucConfig::new(0.05, 0.5).init(&labels).unwrap();
    let model = ObjectiveModel::new(scorer(&device, 3), mb);
    let interrupter = model.interrupter();
    let learner = Learner::new(model, AdamConfig::new().init(), 1e-3);
    let dir = std::env::temp_dir().join(format!("rankrisk-learner-bad-{}", std::process::id()));
    let result = SupervisedTraining::new(&dir, loader(negatives.clone()), loader(negatives))
        .num_epochs(2)
        .with_interrupter(interrupter)
        .launch(learner);
    let reason = result
        .interrupted
        .and_then(|i| i.reason)
        .expect("the run was stopped");
    assert!(
        reason.contains("mini-batch pAUC") && reason.contains("both classes"),
        "{reason}"
    );
    assert!(reason.contains("refused training batch 1"), "{reason}");
    assert!(result.model.error().is_some());
    std::fs::remove_dir_all(&dir).ok();
}

/// Without the interrupter wired, a refused batch does not pass silently (empty gradients, a
/// run that ends `Ok` with checkpoints written): the step panics with the objective's message,
/// and the run writes no checkpoint past it.
#[test]
fn a_bad_batch_stops_an_unwired_learner_with_the_objectives_message() {
    let _one_at_a_time = SEEDING.lock().unwrap_or_else(|p| p.into_inner());
    let Some((task, batcher)) = shirts() else {
        return;
    };
    let labels = task.signed_labels();
    let device = autodiff_device(BackendKind::Ndarray).unwrap();
    // Two batches with both classes, then one of negatives only.
    let mut order = interleaved(&labels)[..100].to_vec();
    order.extend((0..labels.len()).filter(|&i| labels[i] < 0.0).take(50));
    let loader = |ids: Vec<usize>| image_loader(&batcher, &device, ids);
    let sopa = SopaConfig::new(0.5).init(&labels).unwrap();
    let model = ObjectiveModel::new(scorer(&device, 3), sopa);
    let learner = Learner::new(model, AdamConfig::new().init(), 1e-3);
    let dir = std::env::temp_dir().join(format!("rankrisk-learner-unwired-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let training = SupervisedTraining::new(&dir, loader(order.clone()), loader(order))
        .num_epochs(2)
        .with_default_checkpointers();
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| training.launch(learner)));
    let payload = outcome
        .err()
        .expect("the run did not go on past the refused batch");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("SOPA refused training batch 3") && message.contains("both classes"),
        "{message}"
    );
    assert!(message.contains("with_interrupter"), "{message}");
    assert!(
        !dir.join("checkpoint/model-1.bpk").exists(),
        "no checkpoint of the epoch with the refused batch"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The ranking metrics under the Learner: registered for validation, they log each epoch's
/// figure over the whole validation split (the value of `metrics::auc` on the final model's
/// scores), and the best checkpoint is chosen by the pAUC.
#[test]
fn the_learner_reports_auroc_and_pauc_and_keeps_the_best_by_pauc() {
    use burn::module::Module;
    use burn::train::checkpoint::{
        ComposedCheckpointingStrategy, KeepLastNCheckpoints, MetricCheckpointingStrategy,
    };
    use burn::train::metric::store::{Aggregate, Direction, Split};
    use rankrisk::metrics::auc::{auc, pauc};
    use rankrisk::train::learner::RankingMetric;
    use rankrisk_models::Scorer;

    let _one_at_a_time = SEEDING.lock().unwrap_or_else(|p| p.into_inner());
    let Some((task, batcher)) = shirts() else {
        return;
    };
    let labels = task.signed_labels();
    let device = autodiff_device(BackendKind::Ndarray).unwrap();
    let order = interleaved(&labels);
    let (train_ids, valid_ids) = (order[..400].to_vec(), order[400..].to_vec());
    let loader = |ids: Vec<usize>| image_loader(&batcher, &device, ids);
    let sopa = SopaConfig::new(0.5).init(&labels).unwrap();
    let model = ObjectiveModel::new(scorer(&device, 5), sopa.clone());
    let objective_loss = model.validation_loss();
    let learner = Learner::new(model, AdamConfig::new().init(), 1e-3);
    let dir = std::env::temp_dir().join(format!("rankrisk-learner-metrics-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let by_pauc = RankingMetric::pauc(0.05, 0.5);
    let result = SupervisedTraining::new(&dir, loader(train_ids), loader(valid_ids.clone()))
        .num_epochs(2)
        .metric_valid_numeric(RankingMetric::auroc())
        .metric_valid_numeric(by_pauc.clone())
        .metric_valid_numeric(RankingMetric::two_way_pauc(0.8, 0.2))
        .metric_valid_numeric(objective_loss)
        .metric_valid_numeric(burn::train::metric::AurocMetric::binary())
        .with_default_checkpointers()
        .with_checkpointing_strategy(
            ComposedCheckpointingStrategy::builder()
                .add(KeepLastNCheckpoints::new(1))
                .add(MetricCheckpointingStrategy::new(
                    &by_pauc,
                    Aggregate::Mean,
                    Direction::Highest,
                    Split::Valid,
                ))
                .build(),
        )
        .launch(learner);
    assert!(result.error.is_none());
    let b = batcher.try_batch(&valid_ids, &device).unwrap();
    let scores = rankrisk::scores_to_cpu(result.model.model.valid().score(b.inputs)).unwrap();
    let y: Vec<f64> = valid_ids.iter().map(|&i| labels[i]).collect();
    let logged = |name: &str| -> f64 {
        let path = dir
            .join("valid/epoch-2")
            .join(format!("{}.log", name.replace(' ', "_")));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let last = text.lines().last().unwrap();
        last.split(',').next().unwrap().parse().unwrap()
    };
    // In percent, as Burn's own AUROC, which reads the same steps' output and agrees.
    let (a, p) = (logged("AUROC"), logged("pAUC [0.05, 0.5]"));
    assert!(
        (a - 100.0 * auc(&scores, &y).unwrap()).abs() < 1e-4,
        "AUROC {a}"
    );
    assert!(
        (p - 100.0 * pauc(&scores, &y, 0.05, 0.5).unwrap()).abs() < 1e-4,
        "pAUC {p}"
    );
    assert!(a > 50.0 && p > 0.0, "trained: AUROC {a}, pAUC {p}");
    let burns = logged("AUROC [Macro]");
    assert!((burns - a).abs() < 1e-3, "Burn's AUROC {burns}, ours {a}");
    let two_way = logged("two-way pAUC [tpr 0.8, fpr 0.2]");
    assert!((0.0..=100.0).contains(&two_way));
    // The validation loss is SOPA's own value over the split, read-only.
    let objective = logged("SOPA objective");
    let want = sopa.evaluate(&scores, &y).unwrap();
    assert!(
        (objective - want).abs() < 1e-6,
        "SOPA objective {objective}, {want}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Any batch type through `LearnerBatch`: tabular rows (australian, built in) train an MLP
/// (`Scorer<2>`) with SOTA-s under the Learner, whose AUROC is logged and whose state moved.
#[test]
fn the_learner_trains_on_tabular_rows() {
    use burn::module::Module;
    use rankrisk::metrics::auc::auc;
    use rankrisk::train::SotaSConfig;
    use rankrisk::train::learner::RankingMetric;
    use rankrisk_datasets::batcher::{TabularBatch, TabularBatcher};
    use rankrisk_models::Scorer;

    let _one_at_a_time = SEEDING.lock().unwrap_or_else(|p| p.into_inner());
    let mut set = rankrisk_datasets::load_builtin("australian").unwrap();
    set.standardize();
    let set = Arc::new(set);
    let batcher = TabularBatcher::new(set.clone());
    let device = autodiff_device(BackendKind::Ndarray).unwrap();
    let ids: Vec<usize> = (0..set.n()).collect();
    let loader = |ids: Vec<usize>| {
        DataLoaderBuilder::new(batcher.clone())
            .batch_size(64)
            .set_device(device.clone())
            .build(InMemDataset::new(ids))
    };
    device.seed(4);
    let mlp = LinearScorerConfig::new(set.d)
        .with_hidden(Some(8))
        .init(&device);
    let auc_of = |m: &LinearScorer| {
        let b = batcher.try_batch(&ids, &device).unwrap();
        auc(
            &rankrisk::scores_to_cpu(m.valid().score(b.inputs)).unwrap(),
            &set.y,
        )
        .unwrap()
    };
    let before = auc_of(&mlp);
    let sota = SotaSConfig::new().init(&set.y).unwrap();
    let model: ObjectiveModel<_, _, TabularBatch> = ObjectiveModel::new(mlp, sota);
    let objective = model.objective.clone();
    let learner = Learner::new(model, AdamConfig::new().init(), 1e-2);
    let dir = std::env::temp_dir().join(format!("rankrisk-learner-tab-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let result = SupervisedTraining::new(&dir, loader(ids.clone()), loader(ids.clone()))
        .num_epochs(10)
        .metric_valid_numeric(RankingMetric::auroc())
        .launch(learner);
    assert!(result.error.is_none() && result.interrupted.is_none());
    let moved = objective.lock().state();
    assert!(moved.iter().any(|(_, v)| v.iter().any(|&x| x != 0.0)));
    let after = auc_of(&result.model.model);
    assert!(
        after > 0.85 && after > before + 0.05,
        "training AUROC {before} -> {after}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
