//! The surrogate bridge gives the same parameter gradients as a loss written directly in Burn,
//! on every backend (wgpu runs on lavapipe in CI; set RANKRISK_SKIP_WGPU=1 to skip it on a
//! machine without any Vulkan driver).

use burn::module::Param;
use burn::optim::GradientsParams;
use burn::tensor::activation::softplus;
use burn::tensor::{Device, Tensor, TensorData};
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{BridgeError, scores_to_cpu, surrogate};
use rankrisk::train::{ErmConfig, Objective};
use rankrisk_datasets::load_builtin;
use rankrisk_models::{LinearScorer, LinearScorerConfig};

fn wgpu_skipped() -> bool {
    !rankrisk::backend::BackendKind::WGPU_COMPILED
        || std::env::var_os("RANKRISK_SKIP_WGPU").is_some_and(|v| v == "1")
}

fn grad_values<const D: usize>(grads: &GradientsParams, param: &Param<Tensor<D>>) -> Vec<f32> {
    grads
        .get::<D>(param.id)
        .expect("parameter has a gradient")
        .into_data()
        .try_into_vec()
        .unwrap()
}

fn all_grads(grads: &GradientsParams, model: &LinearScorer) -> Vec<f32> {
    let hidden = model.hidden.as_ref().unwrap();
    let mut out = grad_values(grads, &hidden.weight);
    out.extend(grad_values(grads, hidden.bias.as_ref().unwrap()));
    out.extend(grad_values(grads, &model.output.weight));
    out.extend(grad_values(grads, model.output.bias.as_ref().unwrap()));
    out
}

fn check_backend(kind: BackendKind) {
    let device = autodiff_device(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
    let mut data = load_builtin("australian").unwrap();
    data.standardize();
    let data = data.subset(&(0..200).collect::<Vec<_>>());
    let (x, y, _) = data.to_tensors(&device);
    device.seed(3);
    let model = LinearScorerConfig::new(data.d)
        .with_hidden(Some(8))
        .with_bias(true)
        .init(&device);

    // Direct Burn loss: mean log(1 + exp(-y s)).
    let scores = model.forward(x.clone());
    let direct = softplus(scores.neg() * y, 1.0).mean();
    let direct_grads = GradientsParams::from_grads(direct.backward(), &model);

    // Bridge: the gradient of the same loss computed on the CPU, applied through sum(s * g).
    let scores = model.forward(x);
    let cpu = scores_to_cpu(scores.clone()).unwrap();
    let ids: Vec<usize> = (0..cpu.len()).collect();
    let g = ErmConfig::new()
        .init(&data.y)
        .unwrap()
        .batch_gradient(&cpu, &data.y, &ids)
        .unwrap()
        .grad;
    let bridge_grads =
        GradientsParams::from_grads(surrogate(scores, &g).unwrap().backward(), &model);

    let a = all_grads(&direct_grads, &model);
    let b = all_grads(&bridge_grads, &model);
    assert_eq!(a.len(), 14 * 8 + 8 + 8 + 1);
    let max_abs = a.iter().map(|v| v.abs()).fold(0.0f32, f32::max);
    assert!(
        max_abs > 1e-3,
        "{kind}: gradients are trivially small ({max_abs})"
    );
    for (i, (u, v)) in a.iter().zip(&b).enumerate() {
        assert!(
            (u - v).abs() <= 1e-5,
            "{kind}: gradient {i}: direct {u} vs bridge {v}"
        );
    }
}

#[test]
fn bridge_matches_direct_logistic_on_ndarray() {
    check_backend(BackendKind::Ndarray);
}

#[test]
fn bridge_matches_direct_logistic_on_flex() {
    check_backend(BackendKind::Flex);
}

#[test]
fn bridge_matches_direct_logistic_on_wgpu() {
    if wgpu_skipped() {
        eprintln!("RANKRISK_SKIP_WGPU=1: wgpu check skipped");
        return;
    }
    check_backend(BackendKind::Wgpu);
}

#[test]
fn bridge_refuses_bad_gradients_and_scores() {
    let device: Device = autodiff_device(BackendKind::Ndarray).unwrap();
    let s = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, 2.0], [2]), &device);
    assert_eq!(
        surrogate(s.clone(), &[1.0]).unwrap_err(),
        BridgeError::LengthMismatch { scores: 2, grad: 1 }
    );
    assert!(matches!(
        surrogate(s, &[1.0, f32::NAN]).unwrap_err(),
        BridgeError::NonFiniteGradient { index: 1, .. }
    ));
    let bad = Tensor::<1>::from_data(TensorData::new(vec![0.0f32, f32::INFINITY], [2]), &device);
    assert!(matches!(
        scores_to_cpu(bad).unwrap_err(),
        BridgeError::NonFiniteScore { index: 1, .. }
    ));
}

#[test]
fn smoke_run_lowers_the_loss_on_cpu_backends() {
    for kind in [BackendKind::Ndarray, BackendKind::Flex] {
        let r = rankrisk::experiments::smoke::run(kind, "australian", 30, 0.05).unwrap();
        assert!(
            r.final_loss < 0.6 * r.initial_loss.max(0.5),
            "{kind}: {r:?}"
        );
        assert!(r.accuracy > 0.8, "{kind}: {r:?}");
    }
}
