//! The training engine against references: the ERM objective through the bridge equals the
//! same loss written in Burn; the deep rank-based ADMM with the linear module reaches the exact
//! linear ADMM's objective; bad batches are errors. ndarray and wgpu (lavapipe in CI; set
//! RANKRISK_SKIP_WGPU=1 without a Vulkan driver).

use burn::module::Module;
use burn::optim::{GradientsParams, SgdConfig};
use burn::tensor::Device;
use burn::tensor::activation::softplus;
use rankrisk::admm::linear::{objective, solve};
use rankrisk::admm::{AdmmConfig, LinearData};
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk::loss::Loss;
use rankrisk::regularizer::Regularizer;
use rankrisk::train::params::Snapshot;
use rankrisk::train::rank_admm::{DeepAdmm, DeepAdmmConfig};
use rankrisk::train::{Erm, Objective, TrainError};
use rankrisk::weights::Weights;
use rankrisk_datasets::{Tabular, load_builtin};
use rankrisk_models::{LinearScorer, LinearScorerConfig};

fn kinds() -> Vec<BackendKind> {
    let mut k = vec![BackendKind::Ndarray];
    if std::env::var_os("RANKRISK_SKIP_WGPU").is_none_or(|v| v != "1") {
        k.push(BackendKind::Wgpu);
    }
    k
}

fn australian() -> Tabular {
    let mut t = load_builtin("australian").unwrap();
    t.standardize();
    t
}

fn weights_of(model: &LinearScorer) -> Vec<f64> {
    let w: Vec<f32> = model
        .output
        .weight
        .val()
        .into_data()
        .try_into_vec()
        .unwrap();
    w.into_iter().map(f64::from).collect()
}

#[test]
fn erm_objective_through_the_bridge_equals_the_direct_burn_loss() {
    let t = australian();
    for kind in kinds() {
        let device = autodiff_device(kind).unwrap();
        let (x, y, _) = t.to_tensors(&device);
        device.seed(4);
        let model = LinearScorerConfig::new(t.d).init(&device);
        let direct = softplus(model.forward(x.clone()).neg() * y, 1.0).mean();
        let want = GradientsParams::from_grads(direct.backward(), &model);
        let scores = model.forward(x);
        let cpu = scores_to_cpu(scores.clone()).unwrap();
        let ids: Vec<usize> = (0..t.n()).collect();
        let g = Erm {
            loss: Loss::Logistic,
        }
        .batch_gradient(&cpu, &t.y, &ids)
        .unwrap();
        let got =
            GradientsParams::from_grads(surrogate(scores, &g.grad).unwrap().backward(), &model);
        let id = model.output.weight.id;
        let a: Vec<f32> = want
            .get::<2>(id)
            .unwrap()
            .into_data()
            .try_into_vec()
            .unwrap();
        let b: Vec<f32> = got
            .get::<2>(id)
            .unwrap()
            .into_data()
            .try_into_vec()
            .unwrap();
        for (p, q) in a.iter().zip(&b) {
            assert!((p - q).abs() < 1e-5, "{kind}: {a:?} vs {b:?}");
        }
    }
}

/// Deep ADMM on the linear module: full-batch scoring, `inner` SGD steps per w-step.
fn deep_admm(
    kind: BackendKind,
    t: &Tabular,
    weights: &Weights,
    mu: f64,
    outer: usize,
    inner: usize,
) -> Vec<f64> {
    let device: Device = autodiff_device(kind).unwrap();
    let (x, _, _) = t.to_tensors(&device);
    device.seed(1);
    let mut model = LinearScorerConfig::new(t.d).init(&device);
    let mut optim = SgdConfig::new().init();
    let mut admm = DeepAdmm::new(DeepAdmmConfig::new(weights.clone(), mu), &t.y).unwrap();
    let ids: Vec<usize> = (0..t.n()).collect();
    for _ in 0..outer {
        // Scoring pass without autodiff, then the z-step on the CPU.
        let u = scores_to_cpu(model.valid().forward(x.clone())).unwrap();
        admm.outer_step(&u).unwrap();
        let snapshot = Snapshot::of(&model);
        for _ in 0..inner {
            let scores = model.forward(x.clone());
            let cpu = scores_to_cpu(scores.clone()).unwrap();
            let g = admm.batch_gradient(&cpu, &t.y, &ids).unwrap();
            let mut loss = surrogate(scores, &g.grad).unwrap();
            if let Some(extra) = admm.device_terms(&model, &snapshot) {
                loss = loss + extra;
            }
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(0.3, model, grads);
        }
    }
    weights_of(&model)
}

#[test]
fn deep_admm_with_the_linear_module_reaches_the_exact_objective() {
    let t = australian();
    let data = LinearData::new(&t.x, &t.y, t.d).unwrap();
    for weights in [Weights::Erm, Weights::Cvar { q: 0.5 }] {
        let cfg = AdmmConfig {
            weights: weights.clone(),
            loss: Loss::Logistic,
            reg: Regularizer::L2 { mu: 0.01 },
            max_iter: 2000,
            ..AdmmConfig::default()
        };
        let exact = solve(&data, &cfg, None).unwrap().objective;
        let sigma = weights.sigma(t.n()).unwrap();
        for kind in kinds() {
            let w = deep_admm(kind, &t, &weights, 0.01, 150, 5);
            let got = objective(&data, &Loss::Logistic, &sigma, &cfg.reg, &w);
            eprintln!("{weights} on {kind}: deep ADMM {got:.6}, exact {exact:.6}");
            assert!(
                got <= exact * 1.01,
                "{weights} on {kind}: deep {got} vs exact {exact}"
            );
        }
    }
}

#[test]
fn bad_batches_are_errors() {
    let mut admm =
        DeepAdmm::new(DeepAdmmConfig::new(Weights::Erm, 0.0), &[1.0, -1.0, 1.0]).unwrap();
    assert!(matches!(
        admm.outer_step(&[0.0, f64::NAN, 1.0]),
        Err(TrainError::NonFiniteScore { index: 1, .. })
    ));
    assert!(matches!(
        admm.outer_step(&[0.0, 1.0]),
        Err(TrainError::Shape { .. })
    ));
    admm.outer_step(&[0.1, 0.2, 0.3]).unwrap();
    assert!(matches!(
        admm.batch_gradient(&[0.1], &[1.0], &[3]),
        Err(TrainError::IdOutOfRange { id: 3, n: 3 })
    ));
    assert!(matches!(
        admm.batch_gradient(&[0.1], &[-1.0], &[0]),
        Err(TrainError::BadLabel { .. })
    ));
    assert!(DeepAdmm::new(DeepAdmmConfig::new(Weights::Erm, 0.0), &[1.0, 0.0]).is_err());
    assert!(
        DeepAdmm::new(
            DeepAdmmConfig::new(Weights::Cvar { q: 1.5 }, 0.0),
            &[1.0, -1.0]
        )
        .is_err()
    );
    let mut erm = Erm {
        loss: Loss::Logistic,
    };
    assert!(erm.batch_gradient(&[], &[], &[]).is_err());
    assert!(erm.batch_gradient(&[f64::INFINITY], &[1.0], &[0]).is_err());
    // A state saved for another training set is refused.
    let other = DeepAdmm::new(DeepAdmmConfig::new(Weights::Erm, 0.0), &[1.0, -1.0]).unwrap();
    assert!(admm.restore(other.state.clone()).is_err());
}
