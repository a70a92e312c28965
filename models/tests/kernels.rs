//! The CPU kernels against Burn's own ops, through the public layer functions, on flex and
//! ndarray: outputs and every gradient (input, weight, bias, gamma, beta) within 1e-4 relative
//! in f32 on random shapes; the running statistics updated alike; ResNet-20's output and
//! parameter gradients equal to the Burn-op version within 1e-3 relative (a deep stack of f32
//! sums in different orders), DenseNet121's output within 1e-4 and its gradients within ten
//! times their own sensitivity to a 1e-6 change of the input (see that test for why a fixed
//! bound does not fit). The kernels' own unit tests check
//! them against the definitions (exact adjoints for the convolution, finite differences for
//! batch norm).

use burn::backend::ops::ConvOptions;
use burn::module::{Module, Param, RunningState};
use burn::nn::{BatchNorm, BatchNormConfig};
use burn::optim::GradientsParams;
use burn::tensor::activation;
use burn::tensor::{Device, Tensor, TensorData};
use rankrisk_models::kernels::{
    add_relu, batch_norm_layer, batch_norm_relu_layer, conv2d, with_burn_ops,
};
use rankrisk_models::{DenseNet121Config, ResNet20Config};

#[path = "../../tests/common/gradients.rs"]
mod gradients;
use gradients::{Gradient, parameter_gradients, relative_l2};

#[allow(deprecated)] // ndarray stays a supported CPU backend in rankrisk
fn devices() -> Vec<(&'static str, Device)> {
    vec![("flex", Device::flex()), ("ndarray", Device::ndarray())]
}

/// Held while a test seeds a device and initializes a model: the device's generator is shared
/// by the tests that run in parallel, so without it a seeded initialization is not repeatable.
static SEEDED_INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Deterministic pseudo-random values in [-1, 1) (a 64-bit LCG per seed).
fn values(n: usize, seed: usize) -> Vec<f32> {
    let mut state = (seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

fn tensor<const D: usize>(dims: [usize; D], seed: usize, device: &Device) -> Tensor<D> {
    let n = dims.iter().product();
    Tensor::from_data(TensorData::new(values(n, seed), dims), device)
}

fn vec_of<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_into_vec().unwrap()
}

/// `max |a - b| / max(max |b|, 1e-6)`.
fn relative(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-6);
    a.iter()
        .zip(b)
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

fn close(a: Vec<f32>, b: Vec<f32>, tol: f32, what: &str) {
    let r = relative(&a, &b);
    assert!(r <= tol, "{what}: relative difference {r:.2e} > {tol:.0e}");
}

/// Input `[B, C, H, W]`, weight `[C_out, C, kh, kw]`, stride, padding, bias.
type ConvCase = ([usize; 4], [usize; 4], usize, usize, bool);

#[test]
fn convolutions_match_burns_op_with_every_gradient() {
    // (input [B, C, H, W], weight [C_out, C, kh, kw], stride, padding, bias): ResNet-20's and
    // DenseNet121's shapes, scaled down, and odd ones.
    let cases: [ConvCase; 12] = [
        ([4, 3, 12, 12], [8, 3, 3, 3], 1, 1, false),
        ([4, 8, 12, 12], [16, 8, 3, 3], 2, 1, false),
        ([3, 16, 7, 7], [8, 16, 1, 1], 1, 0, false),
        ([3, 16, 8, 8], [8, 16, 1, 1], 2, 0, true),
        ([2, 3, 23, 21], [6, 3, 7, 7], 2, 3, false),
        ([2, 5, 9, 11], [4, 5, 3, 3], 1, 1, true),
        ([1, 2, 5, 6], [3, 2, 3, 3], 1, 0, true),
        ([3, 4, 20, 20], [5, 4, 3, 3], 1, 1, false),
        ([3, 6, 18, 18], [4, 6, 1, 1], 1, 0, true),
        // Stride 1 with 8 or more input channels: shifted windows, strips of several images.
        ([5, 16, 9, 9], [16, 16, 3, 3], 1, 1, false),
        ([3, 8, 10, 11], [6, 8, 3, 3], 1, 0, true),
        ([37, 8, 4, 4], [8, 8, 3, 3], 1, 1, false),
    ];
    for (name, device) in devices() {
        let device = device.autodiff();
        for (k, &(xs, ws, stride, pad, with_bias)) in cases.iter().enumerate() {
            let options = ConvOptions::new([stride; 2], [pad; 2], [1, 1], 1);
            let run = |kernels: bool| {
                let x = tensor(xs, k, &device).require_grad();
                let w = tensor(ws, k + 10, &device).require_grad();
                let b = with_bias.then(|| tensor([ws[0]], k + 20, &device).require_grad());
                let y = if kernels {
                    conv2d(x.clone(), w.clone(), b.clone(), options.clone())
                } else {
                    burn::tensor::module::conv2d(x.clone(), w.clone(), b.clone(), options.clone())
                };
                let r = tensor(y.dims(), k + 30, &device);
                let grads = (y.clone() * r).sum().backward();
                let mut out = vec![
                    vec_of(y),
                    vec_of(x.grad(&grads).unwrap()),
                    vec_of(w.grad(&grads).unwrap()),
                ];
                if let Some(b) = b {
                    out.push(vec_of(b.grad(&grads).unwrap()));
                }
                out
            };
            let (ours, burns) = (run(true), run(false));
            for (i, (a, b)) in ours.into_iter().zip(burns).enumerate() {
                let what = ["output", "input grad", "weight grad", "bias grad"][i];
                close(a, b, 1e-4, &format!("{name} case {k} {what}"));
            }
        }
    }
}

fn batch_norm(channels: usize, device: &Device) -> BatchNorm {
    let mut bn = BatchNormConfig::new(channels).init(device);
    bn.gamma = Param::from_tensor(tensor([channels], 3, device).add_scalar(1.5));
    bn.beta = Param::from_tensor(tensor([channels], 4, device));
    bn
}

#[test]
fn batch_norm_matches_burns_layer_in_training_and_inference() {
    for (name, device) in devices() {
        let ad = device.clone().autodiff();
        for (k, dims) in [[4, 3, 5, 5], [2, 16, 7, 7], [8, 5, 1, 1]]
            .into_iter()
            .enumerate()
        {
            let run = |kernels: bool, relu: bool| {
                let bn = batch_norm(dims[1], &ad);
                let x = tensor(dims, k, &ad)
                    .mul_scalar(3.0)
                    .add_scalar(0.7)
                    .require_grad();
                let y = match (kernels, relu) {
                    (true, false) => batch_norm_layer(&bn, x.clone()),
                    (true, true) => batch_norm_relu_layer(&bn, x.clone()),
                    (false, false) => bn.forward(x.clone()),
                    (false, true) => activation::relu(bn.forward(x.clone())),
                };
                let r = tensor(dims, k + 9, &ad);
                let grads = (y.clone() * r).sum().backward();
                let x_grad = vec_of(x.grad(&grads).unwrap());
                let params = GradientsParams::from_grads(grads, &bn);
                vec![
                    vec_of(y),
                    x_grad,
                    vec_of(params.get::<1>(bn.gamma.id).unwrap()),
                    vec_of(params.get::<1>(bn.beta.id).unwrap()),
                    vec_of(bn.running_mean.value()),
                    vec_of(bn.running_var.value()),
                ]
            };
            for relu in [false, true] {
                let (ours, burns) = (run(true, relu), run(false, relu));
                for (i, (a, b)) in ours.into_iter().zip(burns).enumerate() {
                    let what = ["output", "x grad", "gamma grad", "beta grad", "mean", "var"][i];
                    close(
                        a,
                        b,
                        1e-4,
                        &format!("{name} case {k} relu {relu} train {what}"),
                    );
                }
            }
            // Inference on the plain device, with non-trivial running statistics.
            let mut bn = batch_norm(dims[1], &device);
            bn.running_mean = RunningState::new(tensor([dims[1]], k + 6, &device));
            bn.running_var = RunningState::new(tensor([dims[1]], k + 7, &device).add_scalar(1.2));
            let x = tensor(dims, k + 5, &device);
            let ours = vec_of(batch_norm_layer(&bn, x.clone()));
            let burns = bn.forward(x.clone());
            close(
                ours,
                vec_of(burns.clone()),
                1e-5,
                &format!("{name} case {k} inference"),
            );
            let ours = vec_of(batch_norm_relu_layer(&bn, x.clone()));
            close(
                ours,
                vec_of(activation::relu(burns.clone())),
                1e-5,
                &format!("{name} case {k} inference relu"),
            );
            // The inference layer (`valid()`) given a batch on the autodiff device, as the run
            // driver evaluates: untracked, on the kernel; with a tracked input, through
            // Burn's ops, the gradient reaching the input.
            let bn_ad = bn.clone().fork(&ad).valid();
            let x_ad = tensor(dims, k + 5, &ad);
            assert!(x_ad.device().is_autodiff());
            for relu in [false, true] {
                let want = if relu {
                    activation::relu(burns.clone())
                } else {
                    burns.clone()
                };
                let layer = |x: Tensor<4>| {
                    if relu {
                        batch_norm_relu_layer(&bn_ad, x)
                    } else {
                        batch_norm_layer(&bn_ad, x)
                    }
                };
                let what = format!("{name} case {k} relu {relu} inference on autodiff");
                close(
                    vec_of(layer(x_ad.clone())),
                    vec_of(want.clone()),
                    1e-5,
                    &what,
                );
                let tracked = x_ad.clone().require_grad();
                let grads = layer(tracked.clone()).sum().backward();
                assert!(tracked.grad(&grads).is_some(), "{what}: no input gradient");
            }
        }
    }
}

#[test]
fn residual_join_matches_burns_add_and_relu() {
    for (name, device) in devices() {
        let ad = device.clone().autodiff();
        let dims = [3, 4, 6, 5];
        // Both operands tracked, then only the first (the other a constant).
        for both in [true, false] {
            let run = |kernels: bool| {
                let a = tensor(dims, 1, &ad).require_grad();
                let b = tensor(dims, 2, &ad);
                let b = if both { b.require_grad() } else { b };
                let y = if kernels {
                    add_relu(a.clone(), b.clone())
                } else {
                    activation::relu(a.clone() + b.clone())
                };
                let grads = (y.clone() * tensor(dims, 3, &ad)).sum().backward();
                let mut out = vec![vec_of(y), vec_of(a.grad(&grads).unwrap())];
                if both {
                    out.push(vec_of(b.grad(&grads).unwrap()));
                }
                out
            };
            for (i, (a, b)) in run(true).into_iter().zip(run(false)).enumerate() {
                assert_eq!(a, b, "{name} both {both} output/gradient {i}");
            }
        }
        let (a, b) = (tensor(dims, 4, &device), tensor(dims, 5, &device));
        assert_eq!(
            vec_of(add_relu(a.clone(), b.clone())),
            vec_of(activation::relu(a + b)),
            "{name} without autodiff"
        );
    }
}

/// Output and parameter gradients of `forward` on `x` for a weighted sum of the outputs.
fn outputs_and_grads<M: Module>(
    model: &M,
    forward: impl Fn(&M, Tensor<4>) -> Tensor<2>,
    x: Tensor<4>,
) -> (Vec<f32>, Vec<Gradient>) {
    let y = forward(model, x);
    let r = tensor(y.dims(), 77, &y.device());
    let grads = GradientsParams::from_grads((y.clone() * r).sum().backward(), model);
    (vec_of(y), parameter_gradients(model, &grads))
}

fn compare_models<M: Module>(
    name: &str,
    model: &M,
    forward: impl Fn(&M, Tensor<4>) -> Tensor<2> + Copy,
    x: Tensor<4>,
) {
    let (ya, ga) = outputs_and_grads(model, forward, x.clone());
    let (yb, gb) = with_burn_ops(|| outputs_and_grads(model, forward, x));
    close(ya, yb, 1e-3, &format!("{name} output"));
    assert_eq!(ga.len(), gb.len());
    assert!(!ga.is_empty());
    for (i, ((da, a), (db, b))) in ga.into_iter().zip(gb).enumerate() {
        assert_eq!(da, db, "{name} parameter {i}");
        close(a, b, 1e-3, &format!("{name} parameter {i} gradient"));
    }
}

/// The initialization is seeded: at 1 of 12 seeds (seed 6, both backends) one ReLU's input lies
/// within rounding of zero for this batch, and Burn's own parameter gradients jump by 1.8e-2
/// (max relative; 2.0e-3 over all parameters together) when the input moves by 1e-7 relative,
/// as ours do against Burn's; at the other 11 the two agree to 2.5e-6-6e-6. An unseeded
/// initialization made the test fail about once in ten runs, and so did a seeded one while the
/// DenseNet121 test drew from the same generator in parallel ([`SEEDED_INIT`]).
#[test]
fn resnet20_matches_its_burn_op_version() {
    for (name, device) in devices() {
        let ad = device.autodiff();
        let resnet = {
            let _seeded = SEEDED_INIT.lock().unwrap_or_else(|e| e.into_inner());
            ad.seed(0);
            ResNet20Config::new().with_in_channels(1).init(&ad)
        };
        let x = tensor([8, 1, 16, 16], 1, &ad);
        compare_models(
            &format!("{name} ResNet-20"),
            &resnet,
            |m, x| m.forward(x),
            x,
        );
    }
}

/// DenseNet121 at initialization is ill-conditioned at small sizes (its last batch norms
/// normalize 2 x 2 maps, and ReLU inputs lie within rounding of zero): moving the input by
/// 1e-7, 1e-6 or 1e-5 (relative) moves Burn's own parameter gradients by up to 0.2-3%
/// (relative, all parameters together; seeds 0-7, and which of the three moves is largest
/// varies from seed to seed: one move alone measured 6e-6 at one seed), so two f32
/// implementations that sum in different orders cannot agree to 1e-3 there. The kernels'
/// gradients must be within 10 times the largest of the three moves of Burn's (measured at
/// seeds 0-7: 0.1-1 times), the output within 1e-4, and the kernels on ndarray equal to the
/// kernels on flex. The initialization is seeded.
#[test]
#[allow(deprecated)] // ndarray stays a supported CPU backend in rankrisk
fn densenet121_matches_burns_ops_up_to_its_conditioning() {
    let flex = Device::flex().autodiff();
    let ndarray = Device::ndarray().autodiff();
    let (on_flex, on_ndarray) = {
        let _seeded = SEEDED_INIT.lock().unwrap_or_else(|e| e.into_inner());
        flex.seed(0);
        let on_flex = DenseNet121Config::new().init(&flex);
        let on_ndarray = DenseNet121Config::new()
            .init(&ndarray)
            .load_record(on_flex.clone().into_record());
        (on_flex, on_ndarray)
    };
    let forward = |m: &rankrisk_models::DenseNet121, x| m.forward(x);
    let x = |d: &Device| tensor([8, 3, 64, 64], 2, d);
    let (y_burn, g_burn) = with_burn_ops(|| outputs_and_grads(&on_flex, forward, x(&flex)));
    let sensitivity = [1e-7, 1e-6, 1e-5]
        .into_iter()
        .map(|eps| {
            let moved = x(&flex).mul_scalar(1.0 + eps);
            let (_, g_moved) = with_burn_ops(|| outputs_and_grads(&on_flex, forward, moved));
            relative_l2(&g_moved, &g_burn)
        })
        .fold(0.0f64, f64::max);
    let (y, g) = outputs_and_grads(&on_flex, forward, x(&flex));
    close(y, y_burn, 1e-4, "DenseNet121 output");
    let ours = relative_l2(&g, &g_burn);
    assert!(
        ours <= (10.0 * sensitivity).max(1e-3),
        "gradients {ours:.2e} from Burn's ops, whose own sensitivity is {sensitivity:.2e}"
    );
    let (_, g_nd) = outputs_and_grads(&on_ndarray, forward, x(&ndarray));
    let across = relative_l2(&g_nd, &g);
    assert!(across <= 1e-4, "kernels on ndarray {across:.2e} from flex");
}
