//! The same weights give the same scores on every backend: a model is built on flex, written
//! to a burnpack checkpoint, and read back on ndarray and wgpu (lavapipe in CI; set
//! RANKRISK_SKIP_WGPU=1 on a machine without any Vulkan driver). Inference mode, so batch norm
//! uses its running statistics, which are set to non-trivial values first.
//!
//! One training step too gives the same scores, loss and gradients on every backend (the
//! `*_training_step_*` tests, read back on the autodiff devices; wgpu with whichever of Burn's
//! GPU features the build has: the default build has neither fusion nor autotune). The step is the run driver's: scores in
//! training mode (batch norm on the batch's statistics), the surrogate `sum_i s_i g_i` with a
//! fixed CPU gradient `g`, one backward pass. wgpu runs Burn's ops, so it is compared with flex
//! on Burn's ops ([`with_burn_ops`]); ndarray runs rankrisk-models' CPU kernels, as flex does
//! by default, and is compared with that. The gradients of these networks at initialization
//! can be ill-conditioned (a ReLU input within rounding of zero; DenseNet121's batch norms of
//! 2 x 2 maps, see models/tests/kernels.rs), so two f32 implementations summing in different
//! orders need not agree to 1e-3: the bound is 10 times the move of flex's own gradients when
//! the input moves by 1e-7, 1e-6 or 1e-5 (relative), and at least 1e-3 (relative L2 over all
//! gradients together).

use burn::module::RunningState;
use burn::nn::BatchNorm;
use burn::optim::GradientsParams;
use burn::tensor::{Device, Tensor, TensorData};
use rankrisk::backend::{BackendKind, autodiff_device, device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk_models::checkpoint;
use rankrisk_models::kernels::with_burn_ops;
use rankrisk_models::{DenseNet121Config, ResNet20Config, Scorer};

#[path = "common/gradients.rs"]
mod gradients;

fn wgpu_skipped() -> bool {
    !rankrisk::backend::BackendKind::WGPU_COMPILED
        || std::env::var_os("RANKRISK_SKIP_WGPU").is_some_and(|v| v == "1")
}

/// Every model's initialization draws from flex's one generator, the seeded ones and those
/// a checkpoint then overwrites alike: the tests here run one at a time, so that each seed
/// gives the same weights on every run.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());
    RNG.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn kinds() -> Vec<BackendKind> {
    let mut k = vec![BackendKind::Ndarray, BackendKind::Flex];
    if !wgpu_skipped() {
        k.push(BackendKind::Wgpu);
    }
    k
}

fn input(device: &Device, b: usize, c: usize, hw: usize) -> Tensor<4> {
    let n = b * c * hw * hw;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    Tensor::from_data(TensorData::new(v, [b, c, hw, hw]), device)
}

fn scores(t: Tensor<1>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_into_vec().unwrap()
}

fn set_stats(bn: &mut BatchNorm, k: f32, device: &Device) {
    let c = bn.gamma.dims()[0];
    let mean: Vec<f32> = (0..c)
        .map(|i| ((i as f32) * 0.37 + k).sin() * 0.1)
        .collect();
    let var: Vec<f32> = (0..c)
        .map(|i| 1.0 + ((i as f32) * 0.11 + k).cos() * 0.5)
        .collect();
    bn.running_mean = RunningState::new(Tensor::from_data(TensorData::new(mean, [c]), device));
    bn.running_var = RunningState::new(Tensor::from_data(TensorData::new(var, [c]), device));
}

fn assert_close(name: &str, kind: BackendKind, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-4 * scale,
            "{name} on {kind}: {got:?} vs flex {want:?}"
        );
    }
}

#[test]
fn resnet20_scores_agree_across_backends() {
    let _rng = one_at_a_time();
    let flex = Device::flex();
    flex.seed(21);
    let mut model = ResNet20Config::new().init(&flex);
    for (i, block) in model.blocks.iter_mut().enumerate() {
        set_stats(&mut block.bn1, i as f32, &flex);
        set_stats(&mut block.bn2, i as f32 + 0.5, &flex);
    }
    let dir = std::env::temp_dir().join(format!("rankrisk-xb-resnet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("resnet20.bpk");
    checkpoint::save(&model, &path).unwrap();
    let want = scores(model.score(input(&flex, 4, 3, 32)));
    assert!(want.iter().any(|v| v.abs() > 1e-3));
    for kind in kinds() {
        let dev = device(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let m = checkpoint::load(ResNet20Config::new().init(&dev), &path).unwrap();
        assert_close(
            "ResNet-20",
            kind,
            &scores(m.score(input(&dev, 4, 3, 32))),
            &want,
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn densenet121_scores_agree_across_backends() {
    let _rng = one_at_a_time();
    let flex = Device::flex();
    flex.seed(22);
    let mut model = DenseNet121Config::new().init(&flex);
    set_stats(&mut model.norm0, 0.0, &flex);
    set_stats(&mut model.norm5, 1.0, &flex);
    for (b, block) in model.blocks.iter_mut().enumerate() {
        for layer in block.layers.iter_mut() {
            set_stats(&mut layer.norm1, b as f32, &flex);
            set_stats(&mut layer.norm2, b as f32 + 0.5, &flex);
        }
    }
    let dir = std::env::temp_dir().join(format!("rankrisk-xb-densenet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("densenet121.bpk");
    checkpoint::save(&model, &path).unwrap();
    let want = scores(model.score(input(&flex, 2, 3, 64)));
    assert!(want.iter().any(|v| v.abs() > 1e-3));
    for kind in kinds() {
        let dev = device(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let m = checkpoint::load(DenseNet121Config::new().init(&dev), &path).unwrap();
        assert_close(
            "DenseNet121",
            kind,
            &scores(m.score(input(&dev, 2, 3, 64))),
            &want,
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Scores, the surrogate's value, and the parameter gradients of a step.
type Step = (Vec<f64>, f32, Vec<gradients::Gradient>);

/// The surrogate's value and the parameter gradients of one step of `model` on `x`.
fn step<M: Scorer>(model: &M, x: Tensor<4>) -> Step {
    let scores = model.score(x);
    let cpu = scores_to_cpu(scores.clone()).unwrap();
    let g: Vec<f32> = (0..cpu.len())
        .map(|i| [0.3, -0.5, 0.7, -0.2][i % 4])
        .collect();
    let loss = surrogate(scores, &g).unwrap();
    let value = loss
        .clone()
        .into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .unwrap()[0];
    let grads = GradientsParams::from_grads(loss.backward(), model);
    (cpu, value, gradients::parameter_gradients(model, &grads))
}

/// `||a - b|| / ||b||` over the two steps' gradients together.
fn relative_l2(a: &Step, b: &Step) -> f64 {
    gradients::relative_l2(&a.2, &b.2)
}

/// Scores within `tol` of the largest, the loss within `tol` (relative), the same tensors.
fn assert_forward_close(what: &str, got: &Step, want: &Step, tol: f64) {
    let scale = want.0.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.0.iter().zip(&want.0).enumerate() {
        assert!((g - w).abs() <= tol * scale, "{what}: score {i} {g} vs {w}");
    }
    let (g, w) = (f64::from(got.1), f64::from(want.1));
    assert!(
        (g - w).abs() <= tol * w.abs().max(1.0),
        "{what}: loss {g} vs {w}"
    );
    assert_eq!(got.2.len(), want.2.len(), "{what}: tensors");
}

/// One training step of the model `fresh` builds on flex seeded with `seed` (so that the
/// weights are the same on every run), compared across backends.
fn check_step<M: Scorer>(name: &str, seed: u64, fresh: impl Fn(&Device) -> M, shape: [usize; 4]) {
    let _rng = one_at_a_time();
    let seeded = Device::flex();
    seeded.seed(seed);
    let model = fresh(&seeded);
    let dir = std::env::temp_dir().join(format!("rankrisk-step-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.bpk");
    checkpoint::save(&model, &path).unwrap();
    let [b, c, h, _] = shape;
    let flex = autodiff_device(BackendKind::Flex).unwrap();
    let on_flex = checkpoint::load(fresh(&flex), &path).unwrap();
    let x = |d: &Device| input(d, b, c, h);
    let kernels = step(&on_flex, x(&flex));
    let burns = with_burn_ops(|| step(&on_flex, x(&flex)));
    let with_grad = burns.2.len();
    assert!(with_grad > 10, "{name}: {with_grad} gradients");
    let sensitivity = [1e-7f32, 1e-6, 1e-5]
        .into_iter()
        .map(|eps| {
            let moved = with_burn_ops(|| step(&on_flex, x(&flex).mul_scalar(1.0 + eps)));
            relative_l2(&moved, &burns)
        })
        .fold(0.0f64, f64::max);
    let bound = (10.0 * sensitivity).max(1e-3);
    eprintln!("{name}: flex's gradients move by {sensitivity:.2e} (bound {bound:.2e})");

    assert_forward_close(&format!("{name}: kernels on flex"), &kernels, &burns, 1e-4);
    let d = relative_l2(&kernels, &burns);
    eprintln!("{name}: kernels on flex {d:.2e} from Burn's ops");
    assert!(
        d <= bound,
        "{name}: kernels on flex {d:.2e} from Burn's ops (bound {bound:.2e})"
    );

    let ndarray = autodiff_device(BackendKind::Ndarray).unwrap();
    let got = step(
        &checkpoint::load(fresh(&ndarray), &path).unwrap(),
        x(&ndarray),
    );
    assert_forward_close(&format!("{name} on ndarray"), &got, &kernels, 1e-4);
    let d = relative_l2(&got, &kernels);
    assert!(
        d <= 1e-4,
        "{name}: ndarray {d:.2e} from flex (the same kernels)"
    );

    if !wgpu_skipped() {
        let wgpu = autodiff_device(BackendKind::Wgpu).unwrap_or_else(|e| panic!("wgpu: {e}"));
        let got = step(&checkpoint::load(fresh(&wgpu), &path).unwrap(), x(&wgpu));
        assert_forward_close(&format!("{name} on wgpu"), &got, &burns, 1e-4);
        let d = relative_l2(&got, &burns);
        eprintln!("{name}: wgpu {d:.2e} from flex on Burn's ops");
        assert!(
            d <= bound,
            "{name}: wgpu {d:.2e} from flex on Burn's ops (bound {bound:.2e})"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn resnet20_training_step_agrees_across_backends() {
    // Seed 1 is well-conditioned (flex's own gradients move by 1.3e-6, so the bound is its
    // 1e-3 floor); at seeds 3, 4, 6 and 31 a ReLU input lies within rounding of zero and they
    // move by 5e-4 to 1e-2.
    check_step(
        "resnet20",
        1,
        |d| ResNet20Config::new().init(d),
        [4, 3, 32, 32],
    );
}

#[test]
fn densenet121_training_step_agrees_across_backends() {
    check_step(
        "densenet121",
        32,
        |d| DenseNet121Config::new().init(d),
        [4, 3, 64, 64],
    );
}
