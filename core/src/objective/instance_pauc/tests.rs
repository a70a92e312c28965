//! The tests of PAUCI, UPAUCI and their side of ASGDA.

use super::batch::{Selection, step_scalars};
use super::*;
use crate::math::loss::sigmoid;
use crate::objective::check_fd;

/// Three positives and four negatives.
fn batch() -> (Vec<f64>, Vec<f64>) {
    (
        vec![0.8, -0.3, 1.7, 0.2, -1.1, 0.9, -2.0],
        vec![1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0],
    )
}

fn scalars() -> Scalars {
    Scalars {
        a: 0.7,
        b: 0.2,
        gamma: 0.3,
        s_pos: -0.4,
        s_neg: 0.6,
        theta_a: 0.05,
        theta_b: 0.1,
    }
}

#[test]
fn gradients_match_finite_differences() {
    let (s, y) = batch();
    for (alpha, beta) in [(1.0, 0.3), (0.5, 0.5), (0.3, 0.3)] {
        let mut p = PauciConfig::new()
            .with_alpha(alpha)
            .with_beta(beta)
            .with_omega(0.4)
            .init(&y)
            .unwrap();
        p.scalars = scalars();
        check_fd(&p, &s, &y);
        let mut u = UpauciConfig::new()
            .with_alpha(alpha)
            .with_beta(beta)
            .init(&y)
            .unwrap();
        u.scalars = scalars();
        u.weights = vec![0.9, 0.1, 0.5, 1.0, 0.0, 0.3, 0.7];
        check_fd(&u, &s, &y);
    }
}

#[test]
fn pauci_batch_loss_and_gradient_are_the_formula_by_hand() {
    // Two-way, one positive and one negative: every term written out.
    let (s, y, ids) = ([0.4, -0.7], [1.0, -1.0], [0, 1]);
    let (alpha, beta, kappa, omega) = (0.5, 0.25, 3.0, 0.2);
    // The paper's ascent in `gamma` (the default is the released code's descent, checked
    // below).
    let config = PauciConfig::new()
        .with_alpha(alpha)
        .with_beta(beta)
        .with_kappa(kappa)
        .with_omega(omega);
    let mut p = config
        .clone()
        .with_gamma_step(GammaStep::Ascent)
        .init(&y)
        .unwrap();
    let x = scalars();
    p.scalars = x;
    let out = p.batch_gradient(&s, &y, &ids).unwrap();
    let (fp, fn_) = (sigmoid(0.4), sigmoid(-0.7));
    let r = |v: f64| (1.0 + (kappa * v).exp()).ln() / kappa;
    let pp = (fp - x.a).powi(2) - 2.0 * (1.0 + x.gamma) * fp;
    let nn = (fn_ - x.b).powi(2) + 2.0 * (1.0 + x.gamma) * fn_;
    let want = x.s_pos + r(pp - x.s_pos) / alpha + x.s_neg + r(nn - x.s_neg) / beta
        - (1.0 + omega) * x.gamma * x.gamma
        - x.theta_b * (x.b - 1.0 - x.gamma)
        + x.theta_a * (x.a + x.gamma);
    assert!((out.loss - want).abs() < 1e-12, "{} vs {want}", out.loss);
    let q = sigmoid(kappa * (pp - x.s_pos));
    let gp = q * (2.0 * (fp - x.a) - 2.0 * (1.0 + x.gamma)) / alpha * fp * (1.0 - fp);
    assert!((f64::from(out.grad[0]) - gp).abs() < 1e-6);
    let q = sigmoid(kappa * (nn - x.s_neg));
    let gn = q * (2.0 * (fn_ - x.b) + 2.0 * (1.0 + x.gamma)) / beta * fn_ * (1.0 - fn_);
    assert!((f64::from(out.grad[1]) - gn).abs() < 1e-6);
    // gamma moved up its gradient, the thresholds down theirs, within their boxes.
    let dg = -2.0 * fp * sigmoid(kappa * (pp - x.s_pos)) / alpha + 2.0 * fn_ * q / beta
        - 2.0 * (1.0 + omega) * x.gamma
        + x.theta_b
        + x.theta_a;
    let lr = PauciConfig::new().lr;
    assert!((p.scalars.gamma - (x.gamma + lr * dg).clamp(-1.0, 1.0)).abs() < 1e-12);
    let ds = 1.0 - q / beta;
    assert!((p.scalars.s_neg - (x.s_neg - lr * ds).clamp(0.0, 5.0)).abs() < 1e-12);
    // The default, descent: gamma moves down the same gradient, the rest as before.
    let mut d = config.init(&y).unwrap();
    assert_eq!(d.gamma_step, GammaStep::Descent);
    d.scalars = x;
    let again = d.batch_gradient(&s, &y, &ids).unwrap();
    assert_eq!(again.loss, out.loss);
    assert!((d.scalars.gamma - (x.gamma - lr * dg).clamp(-1.0, 1.0)).abs() < 1e-12);
    assert_eq!(d.scalars.s_neg, p.scalars.s_neg);
}

#[test]
fn a_sharp_softplus_is_the_hinge_and_upauci_at_indicator_weights() {
    let (s, y) = batch();
    let ids: Vec<usize> = (0..s.len()).collect();
    for alpha in [1.0, 0.5] {
        let mut p = PauciConfig::new()
            .with_alpha(alpha)
            .with_kappa(1e5)
            .init(&y)
            .unwrap();
        p.scalars = scalars();
        let mut u = UpauciConfig::new()
            .with_alpha(alpha)
            .with_omega(0.0)
            .init(&y)
            .unwrap();
        u.scalars = scalars();
        // c = 1[instance loss > its threshold]: the hinge's own selection.
        let x = scalars();
        u.weights = s
            .iter()
            .zip(&y)
            .map(|(&v, &l)| {
                let f = sigmoid(v);
                let over = if l > 0.0 {
                    (f - x.a).powi(2) - 2.0 * (1.0 + x.gamma) * f > x.s_pos
                } else {
                    (f - x.b).powi(2) + 2.0 * (1.0 + x.gamma) * f > x.s_neg
                };
                f64::from(u8::from(over))
            })
            .collect();
        let a = p.batch_gradient(&s, &y, &ids).unwrap();
        let b = u.batch_gradient(&s, &y, &ids).unwrap();
        assert!((a.loss - b.loss).abs() < 1e-4, "{} vs {}", a.loss, b.loss);
        for (g, h) in a.grad.iter().zip(&b.grad) {
            assert!((g - h).abs() < 1e-5, "{g} vs {h}");
        }
    }
}

#[test]
fn upauci_weights_converge_to_the_hinges_indicator() {
    // Scalars held (lr 0): each weight climbs to 1 where its instance's loss exceeds the
    // threshold and falls to 0 where it does not.
    let (s, y) = batch();
    let ids: Vec<usize> = (0..s.len()).collect();
    let mut u = UpauciConfig::new()
        .with_alpha(0.5)
        .with_omega(0.0)
        .with_lr(0.0)
        .with_lr_weights(0.5)
        .with_initial_weight(0.5)
        .init(&y)
        .unwrap();
    u.scalars = scalars();
    for _ in 0..200 {
        u.batch_gradient(&s, &y, &ids).unwrap();
    }
    let x = scalars();
    for (k, (&v, &l)) in s.iter().zip(&y).enumerate() {
        let f = sigmoid(v);
        let excess = if l > 0.0 {
            (f - x.a).powi(2) - 2.0 * (1.0 + x.gamma) * f - x.s_pos
        } else {
            (f - x.b).powi(2) + 2.0 * (1.0 + x.gamma) * f - x.s_neg
        };
        let want = if excess > 0.0 { 1.0 } else { 0.0 };
        assert_eq!(u.weights[k], want, "instance {k}: excess {excess}");
    }
    assert_eq!(u.scalars, scalars());
}

#[test]
fn state_round_trips_and_bad_input_is_refused() {
    let (s, y) = batch();
    let ids: Vec<usize> = (0..s.len()).collect();
    let mut a = UpauciConfig::new().with_alpha(0.5).init(&y).unwrap();
    a.batch_gradient(&s, &y, &ids).unwrap();
    let mut b = UpauciConfig::new().with_alpha(0.5).init(&y).unwrap();
    b.set_state(a.state()).unwrap();
    assert_eq!(a, b);
    let mut p = PauciConfig::new().init(&y).unwrap();
    p.batch_gradient(&s, &y, &ids).unwrap();
    let mut q = PauciConfig::new().init(&y).unwrap();
    q.set_state(p.state()).unwrap();
    assert_eq!(p, q);
    assert!(q.set_state(vec![("pauci_scalars", vec![1.0])]).is_err());
    assert!(b.set_state(vec![("upauci_weights", vec![1.0])]).is_err());
    assert!(PauciConfig::new().with_beta(0.0).init(&y).is_err());
    assert!(PauciConfig::new().with_kappa(-1.0).init(&y).is_err());
    assert!(
        UpauciConfig::new()
            .with_initial_weight(2.0)
            .init(&y)
            .is_err()
    );
    assert!(UpauciConfig::new().init(&[]).is_err());
    // One class, and an id past the weights.
    assert!(b.batch_gradient(&s[..3], &y[..3], &ids[..3]).is_err());
    assert!(b.batch_gradient(&s, &y, &[0, 1, 2, 3, 4, 5, 7]).is_err());
}

#[test]
fn asgda_directions_follow_the_correction_and_decay_outside_the_batch() {
    let (s, y) = batch();
    let ids: Vec<usize> = (0..s.len()).collect();
    let mut u = UpauciConfig::new()
        .with_alpha(0.5)
        .init(&[y.to_vec(), vec![1.0, -1.0]].concat())
        .unwrap();
    u.scalars = scalars();
    let (_, g1) = u.gradients(&s, &y, &ids).unwrap();
    u.correct_directions(&g1, None, 0.2, 0.4);
    let d = u.directions.clone().unwrap();
    assert_eq!(d.scalars, g1.scalars);
    for &(id, g) in &g1.weights {
        assert_eq!(d.weights[id], g);
    }
    // A second batch without instances 7 and 8: theirs decay by 1 - xi; every other
    // follows new + (1 - rho) (v - old), xi for gamma and the weights.
    u.weights[7] = 0.5;
    u.directions.as_mut().unwrap().weights[7] = 2.0;
    let (_, g2) = u.gradients(&s, &y, &ids).unwrap();
    let s3: Vec<f64> = s.iter().map(|v| v + 0.3).collect();
    let (_, g3) = u.gradients(&s3, &y, &ids).unwrap();
    let before = u.directions.clone().unwrap();
    u.correct_directions(&g2, Some(&g3), 0.2, 0.4);
    let after = u.directions.clone().unwrap();
    let (v, n, o, w) = (
        before.scalars.values(),
        g2.scalars.values(),
        g3.scalars.values(),
        after.scalars.values(),
    );
    for i in 0..7 {
        let keep = if i == 2 { 0.6 } else { 0.8 };
        assert!(
            (w[i] - (n[i] + keep * (v[i] - o[i]))).abs() < 1e-12,
            "scalar {i}"
        );
    }
    assert!((after.weights[7] - 0.6 * 2.0).abs() < 1e-12);
    for k in 0..7 {
        let want = g2.weights[k].1 + 0.6 * (before.weights[k] - g3.weights[k].1);
        assert!((after.weights[k] - want).abs() < 1e-12, "weight {k}");
    }
}

#[test]
fn an_asgda_move_at_eta_one_is_the_projected_step() {
    let (s, y) = batch();
    let ids: Vec<usize> = (0..s.len()).collect();
    let mut a = PauciConfig::new()
        .with_alpha(0.5)
        .with_lr(0.3)
        .init(&y)
        .unwrap();
    a.scalars = scalars();
    let mut b = a.clone();
    // No direction yet: no move.
    b.asgda_move(0.5, 0.3, 0.3);
    assert_eq!(b.scalars, a.scalars);
    let (_, g) = b.gradients(&s, &y, &ids).unwrap();
    b.correct_directions(&g, None, 0.1, 0.1);
    b.asgda_move(1.0, 0.3, 0.3);
    a.batch_gradient(&s, &y, &ids).unwrap();
    assert_eq!(a.scalars, b.scalars);
    // A smaller eta moves part of the way, along the same direction.
    let mut c = a.clone();
    let start = c.scalars;
    c.correct_directions(&g, None, 0.1, 0.1);
    c.asgda_move(0.25, 0.3, 0.3);
    let mut full = start;
    step_scalars(&mut full, &g.scalars, (1.0, 0.3, 0.3), true, c.gamma_step);
    let (x0, x1, xc) = (start.values(), full.values(), c.scalars.values());
    for i in 0..7 {
        assert!(
            (xc[i] - (0.75 * x0[i] + 0.25 * x1[i])).abs() < 1e-12,
            "scalar {i}"
        );
    }
    // The directions are state: they survive a round trip.
    let mut d = PauciConfig::new().with_alpha(0.5).init(&y).unwrap();
    d.set_state(c.state()).unwrap();
    assert_eq!(d.directions, c.directions);
}

/// Fixed score distributions the size of MNIST-LT's training set (1,050 positives, 11,055
/// negatives; logits N(+1, 1) and N(-1, 1)): the labels and the scores by id.
fn mnist_lt_sized_scores() -> (Vec<f64>, Vec<f64>) {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    let (n_pos, n_neg) = (1_050, 11_055);
    let mut rng = StdRng::seed_from_u64(7);
    // Box-Muller.
    let mut normal = |mean: f64| {
        let (u, v): (f64, f64) = (rng.random(), rng.random());
        mean + (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let labels: Vec<f64> = (0..n_pos + n_neg)
        .map(|i| if i < n_pos { 1.0 } else { -1.0 })
        .collect();
    let scores: Vec<f64> = (0..n_pos + n_neg)
        .map(|i| normal(if i < n_pos { 1.0 } else { -1.0 }))
        .collect();
    (labels, scores)
}

/// 758 steps of balanced batches of 32 (two passes' worth at the run's budget) of `objective`
/// on fixed `scores`.
fn run_on_fixed_scores(objective: &mut dyn Objective, labels: &[f64], scores: &[f64]) {
    use crate::sampler::DualSampler;

    let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
    let mut sampler = DualSampler::new(&positive, 32, 0.5, 3).unwrap();
    for _ in 0..758 {
        let ids = sampler.next_batch();
        let s: Vec<f64> = ids.iter().map(|&i| scores[i]).collect();
        let y: Vec<f64> = ids.iter().map(|&i| labels[i]).collect();
        objective.batch_gradient(&s, &y, &ids).unwrap();
    }
}

/// The negatives' ids split into the top 30% by score and the rest.
fn top_and_rest(labels: &[f64], scores: &[f64]) -> (Vec<usize>, Vec<usize>) {
    let mut negatives: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] < 0.0).collect();
    negatives.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let rest = negatives.split_off((0.3 * negatives.len() as f64) as usize);
    (negatives, rest)
}

/// UPAUCI's weights after a run on [`mnist_lt_sized_scores`], one-way FPR <= 0.3, the
/// defaults otherwise: the mean weight of the top 30% of negatives by score, of the rest, and
/// `s'`.
fn selection_after_a_run(step: WeightStep) -> (f64, f64, f64) {
    let (labels, scores) = mnist_lt_sized_scores();
    let mut u = UpauciConfig::new()
        .with_weight_step(step)
        .init(&labels)
        .unwrap();
    run_on_fixed_scores(&mut u, &labels, &scores);
    let (top, rest) = top_and_rest(&labels, &scores);
    let mean = |ids: &[usize]| ids.iter().map(|&i| u.weights[i]).sum::<f64>() / ids.len() as f64;
    (mean(&top), mean(&rest), u.scalars.s_neg)
}

/// PAUCI after the same run, its defaults and `gamma` moved by `step`: `gamma` and the ratio
/// of the mean softplus selection weight `sigma(kappa (N_j - s'))` of the top 30% of negatives
/// to the rest's.
fn pauci_after_a_run(step: GammaStep) -> (f64, f64) {
    let (labels, scores) = mnist_lt_sized_scores();
    let mut p = PauciConfig::new()
        .with_gamma_step(step)
        .init(&labels)
        .unwrap();
    run_on_fixed_scores(&mut p, &labels, &scores);
    let sel = Softplus(p.kappa);
    let (top, rest) = top_and_rest(&labels, &scores);
    let mean = |ids: &[usize]| {
        ids.iter()
            .map(|&i| {
                let x = excess(&p.scalars, sigmoid(scores[i]), false);
                sel.select(x, i).0
            })
            .sum::<f64>()
            / ids.len() as f64
    };
    (p.scalars.gamma, mean(&top) / mean(&rest))
}

/// Issue 56: the paper's ascent in `gamma` drifts it negative, which flattens the softplus
/// selection; the released code's descent keeps `gamma` at its bound and selects more sharply.
#[test]
fn pauci_gamma_ascent_and_descent_on_fixed_scores() {
    let (gamma_up, ratio_up) = pauci_after_a_run(GammaStep::Ascent);
    eprintln!("ascent: gamma {gamma_up:.3}, top-30% / rest selection weight {ratio_up:.2}");
    let (gamma_down, ratio_down) = pauci_after_a_run(GammaStep::Descent);
    eprintln!("descent: gamma {gamma_down:.3}, top-30% / rest selection weight {ratio_down:.2}");
    assert!(gamma_up < 0.0, "ascent's gamma {gamma_up}");
    assert!(
        (gamma_down - 1.0).abs() < 1e-9,
        "descent's gamma {gamma_down}"
    );
    assert!(
        ratio_up > 1.0 && ratio_down > 2.0 * ratio_up,
        "{ratio_up} {ratio_down}"
    );
    // The direction is part of the objective's settings: a PAUCI of the other direction is
    // another run.
    let y = [1.0, -1.0];
    let descent = PauciConfig::new().with_gamma_step(GammaStep::Descent);
    assert_eq!(descent.init(&y).unwrap().gamma_step, GammaStep::Descent);
    // A PAUCI saved before the setting existed ran by ascent and reads so, whatever the
    // default; one saved with it reads as written.
    let saved = serde_json::to_value(descent.init(&y).unwrap()).unwrap();
    let back: Pauci = serde_json::from_value(saved.clone()).unwrap();
    assert_eq!(back.gamma_step, GammaStep::Descent);
    let mut old = saved;
    old.as_object_mut().unwrap().remove("gamma_step").unwrap();
    let back: Pauci = serde_json::from_value(old).unwrap();
    assert_eq!(back.gamma_step, GammaStep::Ascent);
    // So does a UPAUCI saved before its weight step was a setting: the paper's step.
    let mut old = serde_json::to_value(UpauciConfig::new().init(&y).unwrap()).unwrap();
    old.as_object_mut().unwrap().remove("weight_step").unwrap();
    let back: Upauci = serde_json::from_value(old).unwrap();
    assert_eq!(back.weight_step, WeightStep::Paper);
}

/// Issue 56: the paper's weight step leaves the weights where they start within a run's
/// budget (no selection, and `s'` climbs to its clip at 5), where the exact ascent selects
/// the top negatives and keeps `s'` inside its range.
#[test]
fn upauci_weights_select_the_top_negatives_with_the_exact_step_only() {
    let (top, rest, s_neg) = selection_after_a_run(WeightStep::Paper);
    eprintln!("paper step: top 30% {top:.3}, rest {rest:.3}, s' {s_neg:.3}");
    assert!(
        top - rest < 0.05,
        "the paper's step selected: {top} vs {rest}"
    );
    let (top, rest, s_neg) = selection_after_a_run(WeightStep::Exact);
    eprintln!("exact step: top 30% {top:.3}, rest {rest:.3}, s' {s_neg:.3}");
    assert!(
        top > rest + 0.3 && top > 2.0 * rest,
        "top 30% {top}, rest {rest}"
    );
    assert!(s_neg < 5.0 - 1e-9, "s' at its clip: {s_neg}");
}
