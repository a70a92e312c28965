//! The recipe's rates against their formulas (and Burn's own step scheduler), its optimizers'
//! steps against hand-computed ones on a tiny model, and its refusals by key.

use burn::nn::{Linear, LinearConfig};
use burn::optim::GradientsParams;
use burn::optim::lr_scheduler::step::StepLrSchedulerConfig;
use burn::tensor::{Device, Tensor, TensorData};

use super::*;
use crate::device::backend::{BackendKind, autodiff_device};

/// The first `n` rates of `recipe`'s scheduler for base rate `lr`.
fn rates(recipe: &Recipe, lr: f64, steps_per_epoch: usize, budget: usize, n: usize) -> Vec<f64> {
    let mut s = recipe.init_scheduler(lr, steps_per_epoch, budget).unwrap();
    (0..n).map(|_| s.step().base()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-12)
}

#[test]
fn the_constant_schedule_is_the_rate_itself() {
    let r = rates(&Recipe::default(), 0.003, 10, 50, 50);
    assert!(r.iter().all(|&x| x == 0.003), "{r:?}");
}

#[test]
fn step_decay_divides_the_rate_at_the_given_epochs() {
    let recipe = Recipe {
        lr_schedule: Schedule::Step,
        decay_epochs: vec![2, 5],
        decay_factor: 10.0,
        ..Recipe::default()
    };
    // 10 steps an epoch: steps 1-20 at lr, 21-50 at lr / 10, then lr / 100.
    let r = rates(&recipe, 0.1, 10, 80, 80);
    for (i, &x) in r.iter().enumerate() {
        let k = i + 1;
        let want = match k {
            1..=20 => 0.1,
            21..=50 => 0.1 / 10.0,
            _ => 0.1 / 100.0,
        };
        assert_eq!(x, want, "step {k}");
    }
    // Evenly spaced decays equal Burn's StepLR (every 5 epochs by gamma 0.1) to rounding.
    let even = Recipe {
        decay_epochs: vec![5, 10, 15],
        ..recipe
    };
    let mut burn_step = StepLrSchedulerConfig::new(0.1, 50)
        .with_gamma(0.1)
        .init()
        .unwrap();
    for (k, x) in rates(&even, 0.1, 10, 200, 200).into_iter().enumerate() {
        let b = burn_step.step().base();
        assert!(close(x, b), "step {}: {x} against Burn's {b}", k + 1);
    }
}

#[test]
fn warm_up_rises_linearly_then_the_schedule_starts() {
    let recipe = Recipe {
        warmup_steps: 4,
        lr_schedule: Schedule::Step,
        decay_epochs: vec![1],
        ..Recipe::default()
    };
    let r = rates(&recipe, 0.5, 10, 30, 30);
    for k in 1..=4 {
        assert!(
            close(r[k - 1], 0.5 * k as f64 / 5.0),
            "step {k}: {}",
            r[k - 1]
        );
    }
    // The decay stays at epoch 1's end (step 10), counted from the run's start.
    assert!(r[4..10].iter().all(|&x| x == 0.5), "{r:?}");
    assert!(r[10..].iter().all(|&x| x == 0.05), "{r:?}");
}

#[test]
fn cosine_anneals_over_the_budget_after_the_warm_up() {
    let recipe = Recipe {
        lr_schedule: Schedule::Cosine,
        lr_min: 0.01,
        warmup_steps: 5,
        ..Recipe::default()
    };
    let (lr, budget, w) = (0.4, 45, 5);
    let r = rates(&recipe, lr, 9, budget, budget);
    for (j, &x) in r[w..].iter().enumerate() {
        let t = (budget - w) as f64;
        let want = 0.01 + 0.5 * (lr - 0.01) * (1.0 + (std::f64::consts::PI * j as f64 / t).cos());
        assert!(close(x, want), "step {}: {x} against {want}", w + j + 1);
    }
    assert_eq!(r[w], lr);
}

#[test]
fn inverse_sqrt_is_kar_et_al_s_step() {
    let recipe = Recipe {
        lr_schedule: Schedule::InverseSqrt,
        ..Recipe::default()
    };
    for (i, x) in rates(&recipe, 0.3, 7, 100, 100).into_iter().enumerate() {
        let want = 0.3 / ((i + 1) as f64).sqrt();
        assert!(close(x, want), "step {}: {x} against {want}", i + 1);
    }
}

#[test]
fn a_replayed_scheduler_continues_where_the_run_stopped() {
    let recipe = Recipe {
        lr_schedule: Schedule::Step,
        decay_epochs: vec![3],
        warmup_steps: 2,
        ..Recipe::default()
    };
    let whole = rates(&recipe, 0.2, 6, 40, 40);
    let mut resumed = recipe.scheduler_at(0.2, 6, 40, 17).unwrap();
    let rest: Vec<f64> = (17..40).map(|_| resumed.step().base()).collect();
    assert_eq!(rest, whole[17..]);
}

/// The step schedule with decays after `decay_epochs`, every other setting at its default.
fn step(decay_epochs: Vec<usize>) -> Recipe {
    Recipe {
        lr_schedule: Schedule::Step,
        decay_epochs,
        ..Recipe::default()
    }
}

fn refused(recipe: &Recipe, kind: OptimizerKind, epochs: usize, lr: f64) -> &'static str {
    recipe.validate(kind, epochs, lr).unwrap_err().key
}

#[test]
fn settings_that_cannot_run_are_refused_by_key() {
    let sgd = OptimizerKind::Sgd;
    assert!(step(vec![5]).validate(sgd, 10, 0.1).is_ok());
    // Beyond the run, at its end, at 0, not increasing, missing, without the step schedule.
    for bad in [vec![10], vec![12], vec![0], vec![5, 5], vec![6, 3], vec![]] {
        assert_eq!(refused(&step(bad), sgd, 10, 0.1), "decay_epochs");
    }
    let e = step(vec![12]).validate(sgd, 10, 0.1).unwrap_err();
    assert!(
        e.to_string().contains("12") && e.to_string().contains("epochs = 10"),
        "{e}"
    );
    let without = Recipe {
        decay_epochs: vec![3],
        ..Recipe::default()
    };
    assert_eq!(refused(&without, sgd, 10, 0.1), "decay_epochs");
}

/// The default recipe with `f` applied.
fn changed(f: impl FnOnce(&mut Recipe)) -> Recipe {
    let mut r = Recipe::default();
    f(&mut r);
    r
}

#[test]
fn bad_values_are_refused_by_key() {
    let (sgd, adam) = (OptimizerKind::Sgd, OptimizerKind::Adam);
    let cases: [(Recipe, &str, OptimizerKind); 10] = [
        (
            Recipe {
                decay_factor: -10.0,
                ..step(vec![5])
            },
            "decay_factor",
            sgd,
        ),
        (
            Recipe {
                decay_factor: 0.0,
                ..step(vec![5])
            },
            "decay_factor",
            sgd,
        ),
        (
            changed(|r| r.weight_decay = Some(-1e-4)),
            "weight_decay",
            sgd,
        ),
        (changed(|r| r.momentum = 0.9), "momentum", adam),
        (changed(|r| r.momentum = 1.0), "momentum", sgd),
        (changed(|r| r.nesterov = true), "nesterov", sgd),
        (changed(|r| r.epoch_decay = 0.0), "epoch_decay", sgd),
        (changed(|r| r.adam_epsilon = 0.0), "adam_epsilon", sgd),
        (changed(|r| r.eval_every = Some(0)), "eval_every", sgd),
        (
            changed(|r| (r.lr_schedule, r.lr_min) = (Schedule::Cosine, 0.5)),
            "lr_min",
            sgd,
        ),
    ];
    for (recipe, key, kind) in cases {
        assert_eq!(refused(&recipe, kind, 10, 0.1), key, "{recipe:?}");
    }
    let cosine = changed(|r| r.lr_schedule = Schedule::Cosine);
    assert_eq!(refused(&cosine, sgd, 10, 2.0), "lr");
}

#[test]
fn a_warm_up_that_reaches_the_end_or_a_decay_is_refused() {
    // The step counts: a warm-up as long as the run, or reaching the first decay.
    let warm = Recipe {
        warmup_steps: 50,
        ..Recipe::default()
    };
    assert_eq!(
        warm.init_scheduler(0.1, 10, 50).err().map(|e| e.key),
        Some("warmup_steps")
    );
    let warm_step = Recipe {
        warmup_steps: 20,
        ..step(vec![2])
    };
    assert_eq!(
        warm_step.init_scheduler(0.1, 10, 50).err().map(|e| e.key),
        Some("warmup_steps")
    );
}

#[test]
fn an_unknown_optimizer_or_schedule_is_named() {
    let e = serde_json::from_str::<Recipe>(r#"{"optimizer": "rmsprop"}"#).unwrap_err();
    assert!(e.to_string().contains("rmsprop"), "{e}");
    let e = serde_json::from_str::<Recipe>(r#"{"lr_schedule": "cyclic"}"#).unwrap_err();
    assert!(e.to_string().contains("cyclic"), "{e}");
    // A recipe saved before the settings existed reads as the recipe every run had.
    assert_eq!(
        serde_json::from_str::<Recipe>("{}").unwrap(),
        Recipe::default()
    );
}

/// A 2 x 1 linear layer at weights `w0` (no bias), and the gradient of `sum(x W)`: `x`.
fn tiny(w0: [f32; 2], device: &Device) -> Linear {
    let mut layer = LinearConfig::new(2, 1).with_bias(false).init(device);
    let w = Tensor::<2>::from_data(TensorData::new(w0.to_vec(), [2, 1]), device);
    layer.weight = burn::module::Param::from_tensor(w);
    layer
}

fn grads(layer: &Linear, x: [f32; 2]) -> GradientsParams {
    let input = Tensor::<2>::from_data(TensorData::new(x.to_vec(), [1, 2]), &layer.weight.device());
    GradientsParams::from_grads(layer.forward(input).sum().backward(), layer)
}

fn weights(layer: &Linear) -> Vec<f64> {
    let v = layer.weight.val().into_data().try_to_vec::<f32>().unwrap();
    v.into_iter().map(f64::from).collect()
}

/// The tiny layer's starting weights and the loss's gradient.
const W0: [f32; 2] = [0.5, -2.0];
const X: [f32; 2] = [1.5, 0.25];

/// `steps` optimizer steps of `recipe` (its optimizer `kind`, weight decay `wd`) at rate `lr`
/// on the tiny layer, the gradient of the loss `x` at every step.
fn trained(recipe: &Recipe, kind: OptimizerKind, wd: f64, lr: f64, steps: usize) -> Vec<f64> {
    let device: Device = autodiff_device(BackendKind::Ndarray).unwrap();
    let (w0, x) = (W0, X);
    let mut layer = tiny(w0, &device);
    let mut optim = recipe.init_optimizer(kind, wd, None);
    for _ in 0..steps {
        let g = grads(&layer, x);
        layer = optim.step(lr, layer, g);
    }
    weights(&layer)
}

fn assert_near(got: &[f64], want: &[f64]) {
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "{got:?} against {want:?}"
        );
    }
}

#[test]
fn sgd_with_weight_decay_and_momentum_steps_as_written() {
    let (w0, x, lr, wd, mu) = (W0, X, 0.1, 0.01, 0.9);
    for nesterov in [false, true] {
        let recipe = Recipe {
            momentum: mu,
            nesterov,
            ..Recipe::default()
        };
        // PyTorch's SGD: g = dL/dw + wd w; v = g at the first step, then mu v + g; the step
        // along v (or g + mu v with Nesterov).
        let mut want = Vec::new();
        for j in 0..2 {
            let (mut w, mut v) = (f64::from(w0[j]), 0.0);
            for t in 0..3 {
                let g = f64::from(x[j]) + wd * w;
                v = if t == 0 { g } else { mu * v + g };
                w -= lr * if nesterov { g + mu * v } else { v };
            }
            want.push(w);
        }
        assert_near(&trained(&recipe, OptimizerKind::Sgd, wd, lr, 3), &want);
    }
}

#[test]
fn adam_decays_through_the_gradient_and_adamw_apart_from_it() {
    let (w0, x, lr, wd) = (W0, X, 0.01, 0.1);
    let eps = Recipe::default().adam_epsilon;
    // One step: m / (sqrt(v) + eps) with bias correction is g / (|g| + eps).
    let adam: Vec<f64> = (0..2)
        .map(|j| {
            let w = f64::from(w0[j]);
            let g = f64::from(x[j]) + wd * w;
            w - lr * g / (g.abs() + eps)
        })
        .collect();
    assert_near(
        &trained(&Recipe::default(), OptimizerKind::Adam, wd, lr, 1),
        &adam,
    );
    let adamw: Vec<f64> = (0..2)
        .map(|j| {
            let (w, g) = (f64::from(w0[j]), f64::from(x[j]));
            w * (1.0 - lr * wd) - lr * g / (g.abs() + eps)
        })
        .collect();
    assert_near(
        &trained(&Recipe::default(), OptimizerKind::Adamw, wd, lr, 1),
        &adamw,
    );
    // Without weight decay the two agree.
    assert_near(
        &trained(&Recipe::default(), OptimizerKind::Adamw, 0.0, lr, 2),
        &trained(&Recipe::default(), OptimizerKind::Adam, 0.0, lr, 2),
    );
}
