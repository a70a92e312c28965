//! Data parallelism with one CPU state (`train::parallel`): a step split over several devices
//! gives the one-device step's gradients and, after several optimizer steps, its parameters,
//! within floating-point summation order, for the plain ERM (CE), a pairwise objective
//! (mini-batch pAUC, whose `dL/ds` couples samples across shards), the deep rank-based
//! ADMM (per-sample state) and AGD-SBCD (duals and blocks); on several copies of the flex
//! device and on flex with ndarray.
//! The model is an MLP (no batch norm: a batch-norm layer normalizes each shard by its own
//! statistics, which data parallelism changes by design).

use std::sync::Arc;

use burn::optim::{GradientsParams, SgdConfig};
use burn::tensor::{Device, Tensor};
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk::train::deep_admm::DeepAdmmConfig;
use rankrisk::train::parallel::Shards;
use rankrisk::train::{BatchGradient, Erm, ErmConfig, MiniBatchPaucConfig, Objective, TrainError};
use rankrisk::weights::Weights;
use rankrisk_datasets::batcher::{HostBatch, ImageBatcher};
use rankrisk_datasets::{ImageSet, ImageSource};
use rankrisk_models::{LinearScorer, LinearScorerConfig, Scorer};

/// 40 images of 1 x 3 x 3 pixels, every fourth positive.
fn source() -> ImageBatcher {
    let n = 40;
    let set = ImageSet {
        name: "t".into(),
        channels: 1,
        height: 3,
        width: 3,
        pixels: (0..n * 9).map(|i| ((i * 7919) % 251) as u8).collect(),
        labels: (0..n).map(|i| u16::from(i % 4 == 0)).collect(),
        source: (0..n).collect(),
        num_classes: 2,
    };
    ImageBatcher::new(Arc::new(set.binary(&[1]).unwrap()), &[0.5], &[0.25]).unwrap()
}

fn model(device: &Device) -> LinearScorer {
    device.seed(3);
    LinearScorerConfig::new(9)
        .with_hidden(Some(6))
        .with_bias(true)
        .init(device)
}

fn params(m: &LinearScorer) -> Vec<f32> {
    let hidden = m.hidden.as_ref().unwrap();
    let mut v: Vec<f32> = hidden.weight.val().into_data().try_into_vec().unwrap();
    v.extend(
        hidden
            .bias
            .as_ref()
            .unwrap()
            .val()
            .into_data()
            .try_into_vec::<f32>()
            .unwrap(),
    );
    v.extend(
        m.output
            .weight
            .val()
            .into_data()
            .try_into_vec::<f32>()
            .unwrap(),
    );
    v
}

/// The largest difference relative to the larger magnitude, floored at 1e-2: a parameter near 0
/// after the step is a difference of terms of size ~0.1 whose f32 rounding (~1e-8) is the
/// same for both paths' summation orders (with a 1e-3 floor the sharded step failed about one
/// run in twenty at 1.42e-5, a 1.4e-8 difference on such a parameter).
fn max_rel(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / x.abs().max(y.abs()).max(1e-2))
        .fold(0.0, f32::max)
}

/// The one-device step: forward, read-back, objective, surrogate, backward.
fn single<O: Objective>(
    m: &LinearScorer,
    host: &HostBatch,
    device: &Device,
    o: &mut O,
) -> (BatchGradient, GradientsParams) {
    let b = host.clone().to_device(device);
    let s = m.score(b.inputs);
    let g = o
        .batch_gradient(&scores_to_cpu(s.clone()).unwrap(), &host.targets, &host.ids)
        .unwrap();
    let grads = GradientsParams::from_grads(surrogate(s, &g.grad).unwrap().backward(), m);
    (g, grads)
}

/// `steps` SGD steps of the one-device loop, and of the data-parallel loop over `shards`,
/// both from `start`, each with its own copy of the objective; returns the final parameters
/// of both. (One start model, cloned: two seeded inits could differ when another test thread
/// draws from the device's generator in between.)
fn train_both<O: Objective + Clone>(
    start: &LinearScorer,
    objective: &O,
    shards: &Shards,
    steps: usize,
) -> (Vec<f32>, Vec<f32>) {
    let src = source();
    let main = shards.main().clone();
    let (mut a, mut b) = (start.clone(), start.clone());
    let (mut oa, mut ob) = (objective.clone(), objective.clone());
    let (mut opt_a, mut opt_b) = (SgdConfig::new().init(), SgdConfig::new().init());
    for step in 0..steps {
        // Balanced batches of 8: 2 positives, 6 negatives, different ones each step.
        let ids: Vec<usize> = (0..8).map(|k| (step * 8 + k * 5) % 40).collect();
        let host = src.host_batch(&ids).unwrap();
        let (_, ga) = single(&a, &host, &main, &mut oa);
        a = opt_a.step(0.5, a, ga);
        let out = shards
            .step(
                &b,
                &host,
                |s: &[f64]| -> Result<BatchGradient, TrainError> {
                    ob.batch_gradient(s, &host.targets, &host.ids)
                },
                |_| None::<Tensor<1>>,
            )
            .unwrap();
        b = opt_b.step(0.5, b, out.grads);
    }
    (params(&a), params(&b))
}

fn device_sets() -> Vec<(&'static str, Vec<Device>)> {
    let flex = autodiff_device(BackendKind::Flex).unwrap();
    let ndarray = autodiff_device(BackendKind::Ndarray).unwrap();
    vec![
        ("flex x2", vec![flex.clone(), flex.clone()]),
        ("flex x3", vec![flex.clone(), flex.clone(), flex.clone()]),
        ("flex + ndarray", vec![flex, ndarray]),
    ]
}

#[test]
fn shards_split_rows_evenly_and_in_order() {
    let flex = autodiff_device(BackendKind::Flex).unwrap();
    let s = Shards::new(vec![flex.clone(), flex.clone(), flex]).unwrap();
    assert_eq!(s.rows(8), vec![vec![0, 3, 6], vec![1, 4, 7], vec![2, 5]]);
    assert_eq!(s.rows(2), vec![vec![0], vec![1]]);
    // A class-ordered batch (16 positives, then 16 negatives, as the dual sampler assembles
    // it): every shard holds both classes in the batch's proportion, so batch norm does not
    // normalize one class apart from the other.
    let two = Shards::new(vec![s.main().clone(), s.main().clone()]).unwrap();
    for shard in two.rows(32) {
        assert_eq!(shard.iter().filter(|&&r| r < 16).count(), 8, "{shard:?}");
        assert_eq!(shard.len(), 16);
    }
    assert!(Shards::new(Vec::new()).is_err());
    let host = source().host_batch(&[5, 1, 9, 2]).unwrap();
    let part = host.select(&[3, 1]);
    assert_eq!(part.ids, vec![2, 1]);
    assert_eq!(part.targets, vec![host.targets[3], host.targets[1]]);
    assert_eq!(part.pixels[..9], host.pixels[27..36]);
    assert_eq!(part.pixels[9..], host.pixels[9..18]);
}

#[test]
fn a_sharded_step_gives_the_one_device_gradient() {
    let src = source();
    let host = src
        .host_batch(&[0, 3, 4, 7, 8, 13, 21, 22, 30, 39])
        .unwrap();
    for (name, devices) in device_sets() {
        let shards = Shards::new(devices).unwrap();
        let m = model(shards.main());
        let mut mb = MiniBatchPaucConfig::new(0.0, 0.5)
            .init(&src.labels())
            .unwrap();
        let (ga, grads_a) = single(&m, &host, shards.main(), &mut mb.clone());
        let out = shards
            .step(
                &m,
                &host,
                |s| mb.batch_gradient(s, &host.targets, &host.ids),
                |_| None,
            )
            .unwrap();
        assert_eq!(
            ga.grad, out.gradient.grad,
            "{name}: dL/ds is computed once, alike"
        );
        // Compare the parameter gradients through one SGD step of each.
        let (mut oa, mut ob) = (SgdConfig::new().init(), SgdConfig::new().init());
        let a = oa.step(1.0, m.clone(), grads_a);
        let b = ob.step(1.0, m.clone(), out.grads);
        let d = max_rel(&params(&a), &params(&b));
        assert!(d < 1e-5, "{name}: relative difference {d}");
    }
}

/// CE, MB and deep ADMM: 5 SGD steps over `shards` end where 5 steps on their first device do.
fn check_training(name: &str, shards: &Shards) {
    let labels = source().labels();
    let start = model(shards.main());
    let erm = ErmConfig::new().init(&labels).unwrap();
    let (a, b) = train_both(&start, &erm, shards, 5);
    let d = max_rel(&a, &b);
    assert!(d < 1e-4, "{name}, CE: relative difference {d}");
    let mb = MiniBatchPaucConfig::new(0.05, 0.5).init(&labels).unwrap();
    let (a, b) = train_both(&start, &mb, shards, 5);
    let d = max_rel(&a, &b);
    assert!(d < 1e-4, "{name}, MB: relative difference {d}");
    let mut admm = DeepAdmmConfig::new(Weights::Cvar { q: 0.5 })
        .with_l2(0.0)
        .init(&labels)
        .unwrap();
    // The z-step at the start: the state both copies continue from.
    admm.outer_step(&vec![0.1; labels.len()]).unwrap();
    let (a, b) = train_both(&start, &admm, shards, 5);
    let d = max_rel(&a, &b);
    assert!(d < 1e-4, "{name}, deep ADMM: relative difference {d}");
    assert!(a != params(&start), "{name}: the steps moved the model");
}

#[test]
fn data_parallel_training_matches_one_device_for_ce_mb_and_deep_admm() {
    for (name, devices) in device_sets() {
        check_training(name, &Shards::new(devices).unwrap());
    }
}

/// A device served by `rankrisk serve`'s server on loopback (Burn's remote device over
/// WebSocket) as the second shard: the same training as on one device.
#[cfg(feature = "remote")]
#[test]
fn a_remote_device_on_loopback_trains_like_one_device() {
    use rankrisk::remote::{DeviceSpec, autodiff_device_of, serve};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    // Serves until the test process ends.
    std::thread::spawn(move || serve(BackendKind::Flex, listener));
    let remote = autodiff_device_of(&DeviceSpec::Remote(url)).unwrap();
    let flex = autodiff_device(BackendKind::Flex).unwrap();
    check_training(
        "flex + remote flex",
        &Shards::new(vec![flex, remote]).unwrap(),
    );
}

/// AGD-SBCD with its blocks split over the shards: the scores of a block are gathered for the
/// CPU core (indicators, dual update (15), score coefficients), the shards' gradients of
/// `G_v` are summed for update (14); two outer iterations end at the one-device iterates.
#[test]
fn data_parallel_agd_sbcd_matches_one_device() {
    use rankrisk::pauc::agd::AgdSbcdConfig;
    use rankrisk::train::deep_sbcd::DeepSbcdInit;

    let src = source();
    let labels = src.labels();
    let cfg = AgdSbcdConfig::new(0.05, 0.5)
        .with_t_scale(2)
        .with_i(4)
        .with_j(6)
        .with_c(1.0)
        .with_mu_scale(10.0)
        .with_gamma_scale(10.0)
        .with_seed(5);
    let forward = |m: &LinearScorer, ids: &[usize], d: &Device| {
        Ok::<_, TrainError>(m.score(src.host_batch(ids).unwrap().to_device(d).inputs))
    };
    let all: Vec<usize> = (0..labels.len()).collect();
    for (name, devices) in device_sets() {
        let shards = Shards::new(devices).unwrap();
        let main = shards.main().clone();
        let one = Shards::one(main.clone());
        let start = model(&main);
        let s0 = scores_to_cpu(forward(&start, &all, &main).unwrap()).unwrap();
        let mut a = cfg.init(&labels).unwrap();
        a.init_duals(&s0).unwrap();
        let mut b = a.clone();
        let (mut wa, mut wb) = (start.clone(), start.clone());
        for k in 0..2 {
            let (w, va, ra) = a.outer_step(wa, &one, forward).unwrap();
            wa = w;
            let (w, vb, rb) = b.outer_step(wb, &shards, forward).unwrap();
            wb = w;
            assert_eq!(ra.steps, rb.steps);
            let d = max_rel(&params(&va), &params(&vb));
            assert!(
                d < 1e-4,
                "{name}, iteration {k}, v_bar_n: relative difference {d}"
            );
        }
        let d = max_rel(&params(&wa), &params(&wb));
        assert!(d < 1e-4, "{name}, w: relative difference {d}");
        for (x, y) in [
            (&a.state().duals_n.lambda, &b.state().duals_n.lambda),
            (&a.state().duals_m.lambda, &b.state().duals_m.lambda),
        ] {
            let gap = x
                .iter()
                .zip(y)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max);
            assert!(gap < 1e-4, "{name}: duals differ by {gap}");
        }
        assert!(
            max_rel(&params(&wa), &params(&start)) > 1e-3,
            "{name}: the iterations moved the model"
        );
    }
}

/// An objective that records the ids it was asked about (and is otherwise the logistic ERM).
#[derive(Debug, Clone)]
struct Recording {
    erm: Erm,
    seen: Vec<usize>,
}

impl Objective for Recording {
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        self.seen.extend_from_slice(ids);
        self.erm.batch_gradient(scores, labels, ids)
    }

    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        self.erm.evaluate(scores, labels)
    }

    fn name(&self) -> &'static str {
        "recording ERM"
    }

    fn state(&self) -> rankrisk::train::state_record::State {
        self.erm.state()
    }

    fn set_state(&mut self, state: rankrisk::train::state_record::State) -> Result<(), TrainError> {
        self.erm.set_state(state)
    }
}

/// The Learner path: burn-train's own multi-device strategy runs `ObjectiveModel` on two
/// devices, each with its own batches; the objective's CPU state is one (every sample of the
/// epoch passes through the same state, once) and the model trains.
#[test]
fn burn_learner_multi_device_shares_one_objective_state() {
    use burn::data::dataloader::DataLoaderBuilder;
    use burn::train::{
        ExecutionStrategy, Learner, MultiDeviceOptim, SupervisedTraining, TrainingStrategy,
    };
    use rankrisk::train::learner::ObjectiveModel;
    use rankrisk_datasets::batcher::SampleIds;

    let flex = autodiff_device(BackendKind::Flex).unwrap();
    let src = source();
    let scorer = model(&flex);
    let start = params(&scorer);
    let objective = Recording {
        erm: ErmConfig::new().init(&src.labels()).unwrap(),
        seen: Vec::new(),
    };
    let wrapped = ObjectiveModel::new(scorer, objective);
    let state = wrapped.objective.clone();
    let loader = |seed| {
        DataLoaderBuilder::new(src.clone())
            .batch_size(5)
            .shuffle(seed)
            .set_device(flex.clone())
            .build(SampleIds::new(40))
    };
    let out = std::env::temp_dir().join(format!("rankrisk-multi-{}", std::process::id()));
    let learner = Learner::new(wrapped, SgdConfig::new().init(), 0.1);
    let result = SupervisedTraining::new(&out, loader(1), loader(2))
        .with_training_strategy(TrainingStrategy::Default(ExecutionStrategy::multi(
            vec![flex.clone(), flex.clone()],
            MultiDeviceOptim::OptimMainDevice,
        )))
        .num_epochs(1)
        .launch(learner);
    // Each device's worker forked the module besides the main thread (the message about
    // per-device pairs).
    assert!(state.workers() > 2, "{} threads forked it", state.workers());
    let mut seen = state.lock().seen.clone();
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..40).collect::<Vec<_>>(),
        "every sample once, in the one state"
    );
    let trained = params(&result.model.model);
    assert!(max_rel(&trained, &start) > 1e-4, "the model trained");
    std::fs::remove_dir_all(&out).ok();
}
