//! `-0.0` and `0.0` are the same number: the solvers and the tabular task must not tell them
//! apart. At `w = 0` a row's score `x . 0` is `-0.0` when all its terms are `-0.0` (a row of
//! non-positive features) and `0.0` otherwise, so an order that splits the two changes which
//! samples a rank-based or pAUC solver picks at its first step.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rankrisk::admm::baselines::{Method, Problem, StochasticConfig, stochastic};
use rankrisk::admm::linear::solve;
use rankrisk::admm::{AdmmConfig, LinearData};
use rankrisk::loss::Loss;
use rankrisk::pauc::agd::AgdSbcdConfig;
use rankrisk::pauc::baselines::{Baseline, BaselineConfig, run};
use rankrisk::pauc::linear::{Budget, agd_sbcd_linear};
use rankrisk::pauc::objective::PairLoss;
use rankrisk::pauc::sbcd::PairData;
use rankrisk::pauc::sorr::{SorrConfig, SorrProblem, agd_sorr};
use rankrisk::pava;
use rankrisk::regularizer::Regularizer;
use rankrisk::tasks::tabular::TabularTask;
use rankrisk::weights::Weights;

/// 60 rows of 4 features in {-1, -0.5, 0, 0.5, 1} (about one in three exactly zero, many rows
/// without a positive entry), labels +-1 with a signal in the first feature; and the same
/// rows with every `0.0` written `-0.0`.
fn data() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(5);
    let (n, d) = (60, 4);
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let label = if i % 3 == 0 { 1.0 } else { -1.0 };
        for j in 0..d {
            let mut v = f64::from(rng.random_range(-2i32..=2)) / 2.0;
            if j == 0 && label > 0.0 && v < 0.0 {
                v = -v;
            }
            if rng.random_bool(0.3) {
                v = 0.0;
            }
            x.push(v);
        }
        y.push(label);
    }
    let negative_zeros = x.iter().map(|&v| if v == 0.0 { -0.0 } else { v }).collect();
    (x, negative_zeros, y)
}

/// `a` and `b` hold the same numbers (`==`, so `-0.0` equals `0.0`).
fn same(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (u, v)) in a.iter().zip(b).enumerate() {
        assert!(u == v, "{what}: entry {i}: {u} vs {v}");
    }
}

#[test]
fn the_data_has_both_signs_of_zero_at_w_0() {
    let (x, xz, y) = data();
    let d = 4;
    let scores = |x: &[f64]| rankrisk_datasets::tabular::row_scores(x, d, &[0.0; 4]);
    let negative = |s: &[f64]| s.iter().filter(|v| v.is_sign_negative()).count();
    let (a, b) = (scores(&x), scores(&xz));
    // Rows without a positive feature score -0.0 in both versions; rows that also hold a zero
    // flip from 0.0 to -0.0 once their zeros are negative.
    assert!(negative(&a) > 0 && negative(&b) > negative(&a) + 5);
    assert!(y.iter().filter(|&&v| v > 0.0).count() == 20);
}

#[test]
fn pava_gives_the_same_z_when_m_holds_negative_zeros() {
    let m: Vec<f64> = (0..40)
        .map(|i| match i % 4 {
            0 => 0.0,
            1 => -0.0,
            2 => 0.1 * f64::from(i % 7) - 0.3,
            _ => 0.0,
        })
        .collect();
    let plus: Vec<f64> = m.iter().map(|&v| v + 0.0).collect();
    for weights in [
        Weights::Erm,
        Weights::Cvar { q: 0.3 },
        Weights::TopK { k: 7 },
    ] {
        let sigma = weights.sigma(m.len()).unwrap();
        for loss in [Loss::Hinge, Loss::Logistic] {
            let (a, _) = pava::solve(&loss, &sigma, 1.0, &m).unwrap();
            let (b, _) = pava::solve(&loss, &sigma, 1.0, &plus).unwrap();
            same(&a, &b, &format!("{weights:?} {loss:?}"));
        }
    }
}

#[test]
fn rank_based_solvers_ignore_the_sign_of_zero() {
    let (x, xz, y) = data();
    let d = 4;
    for weights in [
        Weights::Erm,
        Weights::Cvar { q: 0.3 },
        Weights::TopK { k: 9 },
    ] {
        let cfg = AdmmConfig {
            weights: weights.clone(),
            loss: Loss::Hinge,
            reg: Regularizer::L1 { mu: 0.01 },
            max_iter: 200,
            ..AdmmConfig::default()
        };
        let a = solve(&LinearData::new(&x, &y, d).unwrap(), &cfg, None).unwrap();
        let b = solve(&LinearData::new(&xz, &y, d).unwrap(), &cfg, None).unwrap();
        same(&a.w, &b.w, &format!("ADMM {weights:?} w"));
        same(&a.z, &b.z, &format!("ADMM {weights:?} z"));
        assert_eq!(a.objective, b.objective);
        assert_eq!(a.iterations, b.iterations);
        for method in [Method::Sgd, Method::LsvrgNonUniform] {
            let problem = |x| Problem {
                data: LinearData::new(x, &y, d).unwrap(),
                loss: Loss::Logistic,
                weights: weights.clone(),
                reg: Regularizer::L2 { mu: 0.01 },
            };
            let s = StochasticConfig {
                epochs: 5,
                epoch_len: 10,
                batch: 16,
                ..StochasticConfig::paper(method, 0.1, 3)
            };
            let a = stochastic(&problem(&x), &s).unwrap();
            let b = stochastic(&problem(&xz), &s).unwrap();
            same(&a.w, &b.w, &format!("{method:?} {weights:?}"));
        }
    }
}

#[test]
fn pauc_solvers_ignore_the_sign_of_zero() {
    let (x, xz, y) = data();
    let d = 4;
    let (pa, pb) = (
        PairData::new(&x, &y, d).unwrap(),
        PairData::new(&xz, &y, d).unwrap(),
    );
    let w0 = [0.0; 4];
    let agd = AgdSbcdConfig::paper_linear(0.05, 0.5, 1);
    let (a, ha) = agd_sbcd_linear(&pa, &w0, &agd, Budget::Outer(3)).unwrap();
    let (b, hb) = agd_sbcd_linear(&pb, &w0, &agd, Budget::Outer(3)).unwrap();
    same(&a, &b, "AGD-SBCD w");
    for (ra, rb) in ha.iter().zip(&hb) {
        assert_eq!((ra.objective, ra.pauc), (rb.objective, rb.pauc));
    }
    for which in [Baseline::Dca, Baseline::MiniBatch, Baseline::Subgradient] {
        let cfg = BaselineConfig {
            alpha: 0.05,
            beta: 0.5,
            loss: PairLoss::SquaredHinge,
            budget: Budget::Outer(3),
            t_scale: 20,
            c: 1.0,
            prox_l: 0.0,
            i: 4,
            j: 8,
            seed: 2,
        };
        let (a, _) = run(&pa, &w0, which, &cfg).unwrap();
        let (b, _) = run(&pb, &w0, which, &cfg).unwrap();
        same(&a, &b, &format!("{which:?}"));
    }
    let sorr = |x| SorrProblem {
        x,
        y: &y,
        d,
        loss: Loss::Logistic,
        m: 3,
        n: 20,
    };
    let cfg = SorrConfig {
        outer: 3,
        t_scale: 20,
        c: 1.0,
        mu_scale: 1.0,
        gamma_scale: 1.0,
        j: 8,
        seed: 4,
    };
    let (a, _) = agd_sorr(&sorr(&x), &w0, &cfg).unwrap();
    let (b, _) = agd_sorr(&sorr(&xz), &w0, &cfg).unwrap();
    same(&a, &b, "SoRR");
}

#[test]
fn a_linear_model_at_w_0_scores_one_half_in_the_tabular_task() {
    let task = TabularTask {
        sets: vec![],
        train_share: 0.7,
        q: 0.3,
        mu: 1e-3,
        alpha: 0.05,
        beta: 0.5,
        outer: 1,
        seed: 0,
    };
    let mut with_negative_zeros = 0;
    for name in ["australian", "phoneme", "titanic", "monks-3", "splice"] {
        let (_, test) = task.parts(name).unwrap();
        let w = vec![0.0; test.d];
        // The point of the test: rows without a positive standardized feature score -0.0.
        if test.scores(&w).iter().any(|s| s.is_sign_negative()) {
            with_negative_zeros += 1;
        }
        let row = task.evaluate(name, "w = 0", &test, &w, 0.0).unwrap();
        let [auc_lo, auc_hi] = row.test_auc_ci.unwrap();
        let [pauc_lo, pauc_hi] = row.test_pauc_ci.unwrap();
        for (what, v) in [
            ("AUC", row.test_auc),
            ("AUC lower", auc_lo),
            ("AUC upper", auc_hi),
            ("pAUC", row.test_pauc),
            ("pAUC lower", pauc_lo),
            ("pAUC upper", pauc_hi),
        ] {
            assert!((v - 0.5).abs() < 1e-12, "{name} {what}: {v}");
        }
    }
    assert!(
        with_negative_zeros >= 2,
        "{with_negative_zeros} sets with -0.0 scores"
    );
}
