//! A training step crosses between host and device once each way (besides the batch's own
//! upload): one read of the scores, one upload of the CPU gradient `dL/ds`, on flex and on wgpu
//! (lavapipe in CI; RANKRISK_SKIP_WGPU=1 skips it), counted by `bridge::transfers` around the
//! run driver's step (`Shards::step`, one device) and around `Objective::forward` with the
//! targets and ids on the device. The only test here that runs a model: the counters are
//! process-wide.
//!
//! The counters see the bridge's transfers only; that nothing else in the step reads from the
//! device is checked on the sources by `no_other_read_in_the_step_path` below.

use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Int, Tensor, TensorData};
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::transfers;
use rankrisk::train::parallel::Shards;
use rankrisk::train::{BurnObjective, ErmConfig, Objective};
use rankrisk_datasets::batcher::HostBatch;
use rankrisk_models::{ResNet20Config, Scorer};

fn host_batch() -> HostBatch {
    let shape = [4, 1, 8, 8];
    HostBatch {
        pixels: (0..4 * 64)
            .map(|i| ((i * 37) % 17) as f32 / 8.0 - 1.0)
            .collect(),
        shape,
        targets: vec![1.0, -1.0, 1.0, -1.0],
        tasks: 1,
        ids: vec![0, 1, 2, 3],
    }
}

#[test]
fn a_step_reads_the_scores_once_and_uploads_the_gradient_once() {
    let mut kinds = vec![BackendKind::Flex];
    if BackendKind::WGPU_COMPILED && std::env::var_os("RANKRISK_SKIP_WGPU").is_none_or(|v| v != "1")
    {
        kinds.push(BackendKind::Wgpu);
    }
    for kind in kinds {
        let device = autodiff_device(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let mut model = ResNet20Config::new().with_in_channels(1).init(&device);
        let mut optim = AdamConfig::new().init();
        let mut erm = ErmConfig::new().init(&host_batch().targets).unwrap();
        let host = host_batch();
        let shards = Shards::one(device.clone());
        for step in 0..3 {
            let before = transfers();
            let s = shards
                .step(
                    &model,
                    &host,
                    |scores| erm.batch_gradient(scores, &host.targets, &host.ids),
                    |_| None,
                )
                .unwrap();
            model = optim.step(1e-3, model, s.grads);
            let after = transfers();
            assert_eq!(
                (
                    after.to_host - before.to_host,
                    after.to_device - before.to_device
                ),
                (1, 1),
                "{kind}: the run driver's step {step}"
            );
        }
        // Objective::forward, targets and ids on the device: still one read.
        let batch = host.clone().to_device(&device);
        let targets =
            Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 0, 1, 0], [4]), &device);
        let ids = Tensor::<1, Int>::from_data(TensorData::new(vec![0i64, 1, 2, 3], [4]), &device);
        let before = transfers();
        let loss = erm
            .forward(model.score(batch.inputs), targets, ids)
            .unwrap();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let _model = optim.step(1e-3, model, grads);
        let after = transfers();
        assert_eq!(
            (
                after.to_host - before.to_host,
                after.to_device - before.to_device
            ),
            (1, 1),
            "{kind}: Objective::forward"
        );
    }
}

/// The calls that read a tensor back to the host, or that Burn's GPU backends run through the
/// host (sort, mask_select, nonzero, argwhere: burn-backend 0.22.1's defaults, which
/// burn-cubecl does not override).
const READS: [&str; 12] = [
    "into_data(",
    "to_data(",
    "into_scalar(",
    "try_into_data(",
    "Transaction::",
    ".sort(",
    "argsort(",
    "sort_with_indices(",
    "mask_select(",
    "nonzero(",
    "argwhere(",
    ".sync()",
];

#[test]
fn no_other_read_in_the_step_path() {
    // The files of a training step on a GPU backend: the run driver's step, the objective's
    // Burn-facing side, the models' forward passes (their CPU kernels are left out: they run
    // on flex and ndarray only, where the data is on the host already).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = [
        "src/train/parallel.rs",
        "src/train/run/batches.rs",
        "src/train/run/prefetch.rs",
        "src/train/objectives/objective.rs",
        "src/train/learner/mod.rs",
        "models/src/resnet20.rs",
        "models/src/densenet.rs",
        "models/src/scorer.rs",
        "models/src/linear.rs",
        "datasets/src/batcher.rs",
    ];
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        // Tests at the end of a file may read freely.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap();
            if let Some(call) = READS.iter().find(|r| line.contains(*r)) {
                panic!(
                    "{file}:{}: `{call}` in the step path reads from the device",
                    n + 1
                );
            }
        }
    }
}
