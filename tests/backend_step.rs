//! One training step gives the same scores, loss and gradients on every backend: ResNet-20 and
//! DenseNet121 are built on flex, written to a burnpack checkpoint and read back on the autodiff
//! devices of ndarray and wgpu (lavapipe in CI, with Burn's kernel fusion and autotune on, as
//! the default build has them; set RANKRISK_SKIP_WGPU=1 on a machine without any Vulkan
//! driver). The step is the run driver's: scores in training mode (batch norm on the batch's
//! statistics), the surrogate `sum_i s_i g_i` with a fixed CPU gradient `g`, one backward pass.
//!
//! wgpu runs Burn's ops, so it is compared with flex on Burn's ops ([`with_burn_ops`]); ndarray
//! runs rankrisk-models' CPU kernels, as flex does by default, and is compared with that. The
//! gradients of these networks at initialization can be ill-conditioned (a ReLU input within
//! rounding of zero; DenseNet121's batch norms of 2 x 2 maps, see models/tests/kernels.rs), so
//! two f32 implementations summing in different orders need not agree to 1e-3: the bound is
//! 10 times the move of flex's own gradients when the input moves by 1e-7, 1e-6 or 1e-5
//! (relative), and at least 1e-3 (relative L2 over all gradients together).

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Tensor, TensorData};
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk_models::checkpoint;
use rankrisk_models::kernels::with_burn_ops;
use rankrisk_models::{DenseNet121Config, ResNet20Config, Scorer};

fn wgpu_skipped() -> bool {
    std::env::var_os("RANKRISK_SKIP_WGPU").is_some_and(|v| v == "1")
}

fn input(device: &Device, b: usize, c: usize, hw: usize) -> Tensor<4> {
    let n = b * c * hw * hw;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    Tensor::from_data(TensorData::new(v, [b, c, hw, hw]), device)
}

/// Every parameter's gradient, flattened, in the module's visiting order; for the tensors
/// without one (batch norm's running statistics, which the training step updates), their
/// value after the step.
fn gradients<M: Module>(model: &M, grads: &GradientsParams) -> Vec<(String, Vec<f32>)> {
    struct Collect<'a>(&'a GradientsParams, Vec<(String, Vec<f32>)>);
    impl ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let (what, t) = match self.0.get::<D>(param.id) {
                Some(g) => ("gradient", g),
                None => ("value", param.val()),
            };
            let v = t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap();
            let label = format!("{what} of tensor {} {:?}", self.1.len(), param.shape());
            self.1.push((label, v));
        }
    }
    let mut c = Collect(grads, Vec::new());
    model.visit(&mut c);
    c.1
}

/// Scores, the surrogate's value, and the gradients (running statistics' values) of a step.
type Step = (Vec<f64>, f32, Vec<(String, Vec<f32>)>);

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
    (cpu, value, gradients(model, &grads))
}

/// `||a - b|| / ||b||` over the gradients together (running statistics left out).
fn relative_l2(a: &Step, b: &Step) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for ((label, x), (want_label, y)) in a.2.iter().zip(&b.2) {
        assert_eq!(label, want_label);
        if label.starts_with("gradient") {
            for (u, v) in x.iter().zip(y) {
                num += (f64::from(*u) - f64::from(*v)).powi(2);
                den += f64::from(*v).powi(2);
            }
        }
    }
    (num / den.max(1e-300)).sqrt()
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

fn check<M: Scorer>(name: &str, model: M, fresh: impl Fn(&Device) -> M, shape: [usize; 4]) {
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
    let with_grad = burns
        .2
        .iter()
        .filter(|(l, _)| l.starts_with("gradient"))
        .count();
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

/// The two tests draw their initializations from one generator: one at a time.
static SEEDED_INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn resnet20_training_step_agrees_across_backends() {
    let flex = Device::flex();
    let model = {
        let _seeded = SEEDED_INIT.lock().unwrap_or_else(|e| e.into_inner());
        flex.seed(31);
        ResNet20Config::new().init(&flex)
    };
    check(
        "resnet20",
        model,
        |d| ResNet20Config::new().init(d),
        [4, 3, 32, 32],
    );
}

#[test]
fn densenet121_training_step_agrees_across_backends() {
    let flex = Device::flex();
    let model = {
        let _seeded = SEEDED_INIT.lock().unwrap_or_else(|e| e.into_inner());
        flex.seed(32);
        DenseNet121Config::new().init(&flex)
    };
    check(
        "densenet121",
        model,
        |d| DenseNet121Config::new().init(d),
        [4, 3, 64, 64],
    );
}
