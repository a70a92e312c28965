//! Pdprox (papers/pdprox-primal-dual-nonsmooth.txt) against independent oracles: the dual
//! projections against Dykstra's alternating projections onto every constraint and an
//! independent sort + isotonic regression, the support functions against far projections, the
//! regularizers' mappings against their optimality conditions, and the solvers against ADMM's
//! optima with the duality gap as an upper bound of the true suboptimality.

use rankrisk::admm::linear::{self, AdmmConfig, LinearData};
use rankrisk::loss::Loss;
use rankrisk::pdprox::domain::Spectral;
use rankrisk::pdprox::{
    Algorithm, DualDomain, DualLoss, LinearProblem, PdproxConfig, PdproxError, Penalty, StepBound,
    solve,
};
use rankrisk::regularizer::Regularizer;
use rankrisk::weights::{Sigma, Weights};

/// Trace-norm matrix factorization and completion (section 5.3).
#[path = "pdprox/matrix.rs"]
mod matrix;

/// A small deterministic generator (no dependency): uniform in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.next().max(1e-12), self.next());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Dykstra's projection of `y` onto the intersection of half-spaces `a^T x <= b`.
fn dykstra(y: &[f64], halfspaces: &[(Vec<f64>, f64)]) -> Vec<f64> {
    let mut x = y.to_vec();
    let mut incr = vec![vec![0.0; y.len()]; halfspaces.len()];
    for _ in 0..20_000 {
        for ((a, b), p) in halfspaces.iter().zip(incr.iter_mut()) {
            let z: Vec<f64> = x.iter().zip(p.iter()).map(|(x, p)| x + p).collect();
            let (dot, nn): (f64, f64) = (
                a.iter().zip(&z).map(|(a, z)| a * z).sum(),
                a.iter().map(|a| a * a).sum(),
            );
            let step = if dot > *b { (dot - b) / nn } else { 0.0 };
            for ((xi, pi), (zi, ai)) in x.iter_mut().zip(p.iter_mut()).zip(z.iter().zip(a)) {
                *xi = zi - step * ai;
                *pi = zi - *xi;
            }
        }
    }
    x
}

/// The half-spaces of `n Q_sigma` (signed: of `{|alpha| in n Q_sigma}`): every subset's
/// (signed) sum at most `n` times the sum of as many largest weights, and `alpha >= 0` unless
/// signed.
fn spectral_halfspaces(sigma: &[f64], signed: bool) -> Vec<(Vec<f64>, f64)> {
    let n = sigma.len();
    let mut desc = sigma.to_vec();
    desc.reverse();
    let mut out = Vec::new();
    for mask in 1u32..(1 << n) {
        let members: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        let bound = n as f64 * desc[..members.len()].iter().sum::<f64>();
        let patterns = if signed { 1u32 << members.len() } else { 1 };
        for signs in 0..patterns {
            let mut a = vec![0.0; n];
            for (k, &i) in members.iter().enumerate() {
                a[i] = if signs & (1 << k) != 0 { -1.0 } else { 1.0 };
            }
            out.push((a, bound));
        }
    }
    if !signed {
        for i in 0..n {
            let mut a = vec![0.0; n];
            a[i] = -1.0;
            out.push((a, 0.0));
        }
    }
    out
}

/// Sort + isotonic route: sort `y` descending, fit a non-increasing isotonic regression `v` to
/// `y_(j) - n s_j` (`s` descending), `alpha_(j) = max(0, y_(j) - max(v_j, 0))`.
fn isotonic_projection(y: &[f64], sigma: &[f64]) -> Vec<f64> {
    let n = y.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| y[b].total_cmp(&y[a]));
    let mut desc = sigma.to_vec();
    desc.reverse();
    let target: Vec<f64> = order
        .iter()
        .zip(&desc)
        .map(|(&i, s)| y[i] - n as f64 * s)
        .collect();
    // Pool adjacent violators for a non-increasing fit: blocks of (sum, count).
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    for &t in &target {
        blocks.push((t, 1));
        while blocks.len() > 1 {
            let (s1, c1) = blocks[blocks.len() - 2];
            let (s2, c2) = blocks[blocks.len() - 1];
            if s1 / c1 as f64 >= s2 / c2 as f64 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s1 + s2, c1 + c2);
        }
    }
    let fit: Vec<f64> = blocks
        .iter()
        .flat_map(|&(s, c)| std::iter::repeat_n(s / c as f64, c))
        .collect();
    let mut out = vec![0.0; n];
    for ((&i, &v), _) in order.iter().zip(&fit).zip(&target) {
        out[i] = (y[i] - v.max(0.0)).max(0.0);
    }
    out
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

fn weight_families() -> Vec<Weights> {
    [
        "erm",
        "cvar:q=0.5",
        "cvar:q=0.3",
        "topk:k=2",
        "extremile:r=2",
        "esrm:rho=2",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

#[test]
fn spectral_projection_equals_isotonic_route_and_brute_force() {
    let mut rng = Lcg(7);
    let mut cases = 0;
    for n in 2..=5 {
        for weights in weight_families() {
            let Ok(Sigma::Fixed(sigma)) = weights.sigma(n) else {
                continue;
            };
            for signed in [false, true] {
                let halfspaces = spectral_halfspaces(&sigma, signed);
                for _ in 0..4 {
                    let y: Vec<f64> = (0..n).map(|_| 3.0 * rng.normal()).collect();
                    let mut got = y.clone();
                    let mut domain = DualDomain::Spectral(
                        Spectral::new(Sigma::Fixed(sigma.clone()), signed).unwrap(),
                    );
                    domain.project(&mut got).unwrap();
                    let want = dykstra(&y, &halfspaces);
                    assert!(
                        close(&got, &want, 1e-6),
                        "{weights} signed={signed} y={y:?}: PAVA {got:?}, Dykstra {want:?}"
                    );
                    if !signed {
                        let iso = isotonic_projection(&y, &sigma);
                        assert!(close(&got, &iso, 1e-9), "{weights}: {got:?} vs {iso:?}");
                    }
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 150);
}

#[test]
fn box_budget_pairs_and_topk_projections_match_brute_force() {
    let mut rng = Lcg(11);
    for _ in 0..40 {
        let n = 4;
        let hi = 0.5 + rng.next();
        let v: Vec<f64> = (0..n)
            .map(|i| if i == 0 { 0.0 } else { rng.next() * 2.0 })
            .collect();
        let rho = rng.next() * 2.0;
        let y: Vec<f64> = (0..n).map(|_| 2.0 * rng.normal()).collect();
        let mut halfspaces = vec![(v.clone(), rho)];
        for i in 0..n {
            let mut a = vec![0.0; n];
            a[i] = 1.0;
            halfspaces.push((a.clone(), hi));
            a[i] = -1.0;
            halfspaces.push((a, 0.0));
        }
        let mut got = y.clone();
        DualDomain::BoxBudget {
            hi,
            v: v.clone(),
            rho,
        }
        .project(&mut got)
        .unwrap();
        let want = dykstra(&y, &halfspaces);
        assert!(close(&got, &want, 1e-6), "Lemma 4: {got:?} vs {want:?}");

        let pair = vec![
            (vec![1.0, 1.0], 1.0),
            (vec![-1.0, 0.0], 0.0),
            (vec![0.0, -1.0], 0.0),
        ];
        let mut got = y[..2].to_vec();
        DualDomain::PairSimplex.project(&mut got).unwrap();
        assert!(close(&got, &dykstra(&y[..2], &pair), 1e-6));
    }
    // top-k: n Q_sigma is Lemma 4's set {0 <= alpha <= n/k, sum alpha <= n}.
    let (n, k) = (7, 3);
    for _ in 0..20 {
        let y: Vec<f64> = (0..n).map(|_| 4.0 * rng.normal()).collect();
        let sigma = Weights::TopK { k }.sigma(n).unwrap();
        let mut a = y.clone();
        DualDomain::Spectral(Spectral::new(sigma, false).unwrap())
            .project(&mut a)
            .unwrap();
        let mut b = y.clone();
        DualDomain::BoxBudget {
            hi: n as f64 / k as f64,
            v: vec![1.0; n],
            rho: n as f64,
        }
        .project(&mut b)
        .unwrap();
        assert!(close(&a, &b, 1e-9), "{a:?} vs {b:?}");
    }
}

/// One domain of each kind over 6 duals (both boxes, pairs, Lemma 4 with a free component,
/// `n Q_sigma` of `weights` plain and signed).
fn every_domain(weights: &Weights) -> Vec<DualDomain> {
    let sigma = || weights.sigma(6).unwrap();
    vec![
        DualDomain::Box { lo: -1.0, hi: 1.0 },
        DualDomain::Box { lo: 0.0, hi: 1.0 },
        DualDomain::PairSimplex,
        DualDomain::BoxBudget {
            hi: 1.0,
            v: vec![1.0, 2.0, 0.0, 1.0, 0.5, 1.0],
            rho: 1.5,
        },
        DualDomain::Spectral(Spectral::new(sigma(), false).unwrap()),
        DualDomain::Spectral(Spectral::new(sigma(), true).unwrap()),
    ]
}

#[test]
fn support_functions_are_attained_by_far_projections() {
    let mut rng = Lcg(3);
    let n = 6;
    let mut domains = every_domain(&Weights::Extremile { r: 2.0 });
    for domain in &mut domains {
        for _ in 0..10 {
            let g: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let mut far: Vec<f64> = g.iter().map(|x| 1e7 * x).collect();
            domain.project(&mut far).unwrap();
            let attained: f64 = g.iter().zip(&far).map(|(a, b)| a * b).sum();
            let support = domain.support(&g);
            assert!(
                (support - attained).abs() <= 1e-6 * (1.0 + support.abs()),
                "{domain:?}: support {support}, at the far projection {attained}"
            );
        }
    }
}

/// `1/2 ||w - v||^2 + t R(w)`.
fn prox_objective(p: &Penalty, v: &[f64], t: f64, w: &[f64]) -> f64 {
    0.5 * w.iter().zip(v).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() + t * p.value(w)
}

#[test]
fn composite_mappings_minimize_their_objective() {
    let mut rng = Lcg(5);
    let penalties = [
        Penalty::elementwise(Regularizer::ElasticNet { l1: 0.3, l2: 0.2 }).unwrap(),
        Penalty::GroupLasso {
            mu: 0.4,
            group: vec![0, 0, 1, 1, 1, 2],
        },
        Penalty::L1Inf {
            mu: 0.5,
            rows: 3,
            cols: 2,
        },
        Penalty::Trace {
            mu: 0.6,
            rows: 2,
            cols: 3,
        },
    ];
    for p in &penalties {
        for _ in 0..10 {
            let v: Vec<f64> = (0..6).map(|_| rng.normal()).collect();
            let t = 0.5 + rng.next();
            let mut w = vec![0.0; 6];
            p.prox(&v, t, &mut w);
            let best = prox_objective(p, &v, t, &w);
            for scale in [1e-2, 1e-4] {
                for _ in 0..50 {
                    let moved: Vec<f64> = w.iter().map(|x| x + scale * rng.normal()).collect();
                    assert!(
                        prox_objective(p, &v, t, &moved) >= best - 1e-12,
                        "{p:?}: a move of {scale} lowers the composite objective"
                    );
                }
            }
        }
    }
}

/// Two Gaussian classes in `d` dimensions, rows scaled to norm at most 1.
fn classes(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Lcg(seed);
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let label = if i % 3 == 0 { 1.0 } else { -1.0 };
        let row: Vec<f64> = (0..d)
            .map(|j| rng.normal() + if j < 2 { 0.8 * label } else { 0.0 })
            .collect();
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt().max(1.0);
        x.extend(row.iter().map(|v| v / norm));
        y.push(label);
    }
    (x, y)
}

#[test]
fn both_algorithms_reach_admm_optima_and_the_gap_bounds_the_suboptimality() {
    let (n, d) = (60, 5);
    let (x, y) = classes(n, d, 1);
    let regs = [
        Regularizer::L2 { mu: 0.05 },
        Regularizer::L1 { mu: 0.01 },
        Regularizer::ElasticNet { l1: 0.01, l2: 0.02 },
    ];
    for weights in [
        Weights::Erm,
        Weights::Cvar { q: 0.7 },
        Weights::TopK { k: 10 },
        Weights::Extremile { r: 2.0 },
    ] {
        for reg in regs {
            let data = LinearData::new(&x, &y, d).unwrap();
            let admm = linear::solve(
                &data,
                &AdmmConfig {
                    loss: Loss::Hinge,
                    weights: weights.clone(),
                    reg,
                    max_iter: 50_000,
                    tol: 1e-9,
                    ..AdmmConfig::default()
                },
                None,
            )
            .unwrap();
            let penalty = Penalty::elementwise(reg).unwrap();
            for algorithm in [Algorithm::Dual, Algorithm::Primal] {
                let mut problem =
                    LinearProblem::new(&x, &y, d, DualLoss::Hinge, &weights, None, false).unwrap();
                let cfg = PdproxConfig {
                    algorithm,
                    ..PdproxConfig::default()
                };
                let res = solve(&mut problem, &penalty, &cfg).unwrap();
                assert!(
                    res.converged,
                    "{weights} {reg} {algorithm:?}: gap {}",
                    res.gap
                );
                let star = admm.objective.min(res.best().1);
                assert!(
                    res.dual <= star + 1e-12
                        && res.best().1 - star <= res.gap + 1e-12
                        && admm.objective - star <= 1e-5,
                    "{weights} {reg} {algorithm:?}: pdprox {} (gap {}), admm {}",
                    res.objective,
                    res.gap,
                    admm.objective
                );
                // An early stop: the gap still bounds the distance to the optimum.
                let mut problem =
                    LinearProblem::new(&x, &y, d, DualLoss::Hinge, &weights, None, false).unwrap();
                let early = solve(
                    &mut problem,
                    &penalty,
                    &PdproxConfig {
                        max_iter: 3,
                        check_every: 1,
                        ..cfg
                    },
                )
                .unwrap();
                assert!(!early.converged);
                assert!(early.dual <= star + 1e-12 && early.objective >= star - 1e-12);
                assert!(early.best().1 - star <= early.gap + 1e-12);
                assert!(early.gap > 0.0);
            }
        }
    }
}

#[test]
fn regression_losses_bias_and_budget_converge_with_a_shrinking_gap() {
    let (n, d) = (50, 4);
    let (x, labels) = classes(n, d, 2);
    let targets: Vec<f64> = x
        .chunks_exact(d)
        .zip(&labels)
        .map(|(r, l)| 2.0 * r[0] - r[1] + 0.3 * l + 0.5)
        .collect();
    let group = Penalty::GroupLasso {
        mu: 1e-3,
        group: vec![0, 0, 1, 1],
    };
    /// Loss, targets, weights, budget, bias.
    type Case<'a> = (DualLoss, &'a [f64], Weights, Option<f64>, bool);
    let cases: Vec<Case> = vec![
        (DualLoss::Absolute, &targets, Weights::Erm, None, true),
        (
            DualLoss::Absolute,
            &targets,
            Weights::Cvar { q: 0.5 },
            None,
            false,
        ),
        (
            DualLoss::EpsInsensitive { eps: 0.1 },
            &targets,
            Weights::Erm,
            None,
            true,
        ),
        (
            DualLoss::GeneralizedHinge { a: 2.0 },
            &labels,
            Weights::Erm,
            None,
            false,
        ),
        (DualLoss::Hinge, &labels, Weights::Erm, Some(10.0), false),
        (
            DualLoss::Hinge,
            &labels,
            Weights::Esrm { rho: 3.0 },
            None,
            true,
        ),
    ];
    for (loss, y, weights, budget, bias) in cases {
        let mut gaps = Vec::new();
        for max_iter in [100, 100_000] {
            let mut problem = LinearProblem::new(&x, y, d, loss, &weights, budget, bias).unwrap();
            let res = solve(
                &mut problem,
                &group,
                &PdproxConfig {
                    max_iter,
                    step_bound: StepBound::RowNorm,
                    ..PdproxConfig::default()
                },
            )
            .unwrap();
            assert!(res.gap >= -1e-12 && res.objective.is_finite());
            gaps.push((res.gap, res.converged));
        }
        assert!(gaps[1].1, "{loss} {weights}: gap {}", gaps[1].0);
        assert!(gaps[1].0 <= gaps[0].0 + 1e-12, "{loss} {weights}: {gaps:?}");
    }
}

#[test]
fn nonconvex_settings_and_bad_data_are_refused_with_the_reason() {
    let (x, y) = classes(20, 3, 4);
    let refused = |weights: Weights, loss: DualLoss| {
        LinearProblem::new(&x, &y, 3, loss, &weights, None, false).unwrap_err()
    };
    let decreasing = Weights::Explicit {
        sigma: (0..20).map(|i| (20 - i) as f64 / 210.0).collect(),
    };
    for w in [
        "aorr:m=2,k=8".parse().unwrap(),
        "ehrm:a=0.2,b=0.8".parse().unwrap(),
        "cpt:gamma=0.61,delta=0.69,b=0".parse().unwrap(),
        decreasing,
    ] {
        let err = refused(w.clone(), DualLoss::Hinge);
        assert!(
            matches!(err, PdproxError::Unsupported(ref m) if m.contains("convex") || m.contains("nonconvex")),
            "{w}: {err}"
        );
    }
    let err = refused(
        Weights::Cvar { q: 0.5 },
        DualLoss::EpsInsensitive { eps: 0.1 },
    );
    assert!(matches!(err, PdproxError::Unsupported(_)), "{err}");
    let err = Penalty::elementwise(Regularizer::Mcp {
        lambda: 0.1,
        theta: 3.0,
    })
    .unwrap_err();
    assert!(err.to_string().contains("nonconvex"), "{err}");
    let reals: Vec<f64> = y.iter().map(|v| v * 0.5).collect();
    let err =
        LinearProblem::new(&x, &reals, 3, DualLoss::Hinge, &Weights::Erm, None, false).unwrap_err();
    assert!(matches!(err, PdproxError::BadLabel { row: 0, .. }), "{err}");
    let mut nan = x.clone();
    nan[4] = f64::NAN;
    let err =
        LinearProblem::new(&nan, &y, 3, DualLoss::Hinge, &Weights::Erm, None, false).unwrap_err();
    assert!(
        matches!(err, PdproxError::NonFinite { row: 1, .. }),
        "{err}"
    );
    assert!(
        "logistic"
            .parse::<DualLoss>()
            .unwrap_err()
            .to_string()
            .contains("bilinear")
    );
}

#[test]
fn maximizers_attain_the_support_inside_the_domain() {
    let mut rng = Lcg(17);
    let n = 6;
    let mut domains = every_domain(&Weights::Esrm { rho: 2.0 });
    for domain in &mut domains {
        for _ in 0..20 {
            let g: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let mut a = vec![0.0; n];
            domain.maximizer(&g, &mut a);
            let value: f64 = g.iter().zip(&a).map(|(x, y)| x * y).sum();
            let support = domain.support(&g);
            assert!(
                (value - support).abs() <= 1e-12 * (1.0 + support.abs()),
                "{domain:?}"
            );
            let mut inside = a.clone();
            domain.project(&mut inside).unwrap();
            assert!(
                close(&inside, &a, 1e-9),
                "{domain:?}: {a:?} is not in the domain"
            );
        }
    }
}

#[test]
fn tuned_baselines_descend_and_never_beat_the_certified_optimum() {
    use rankrisk::pdprox::baselines::{Baseline, tuned};
    let (n, d) = (60, 5);
    let (x, y) = classes(n, d, 9);
    for reg in [Regularizer::L2 { mu: 0.05 }, Regularizer::L1 { mu: 0.01 }] {
        let penalty = Penalty::elementwise(reg).unwrap();
        let mut problem =
            LinearProblem::new(&x, &y, d, DualLoss::Hinge, &Weights::Erm, None, false).unwrap();
        let exact = solve(
            &mut problem,
            &penalty,
            &PdproxConfig {
                tol: 1e-9,
                max_iter: 200_000,
                ..PdproxConfig::default()
            },
        )
        .unwrap();
        assert!(exact.converged);
        let lower = exact.dual;
        let start = 1.0; // P(0) = mean hinge at w = 0
        let mut methods = vec![
            Baseline::Gd,
            Baseline::Fobos,
            Baseline::Rda,
            Baseline::Agd,
            Baseline::Nest,
        ];
        if matches!(reg, Regularizer::L2 { .. }) {
            methods.push(Baseline::Pegasos { sample: 1.0 });
            methods.push(Baseline::Pegasos { sample: 0.1 });
        }
        for method in methods {
            let run = tuned(&mut problem, &penalty, method, 2000, 100, 0).unwrap();
            assert!(
                run.objective >= lower - 1e-12,
                "{method:?} {reg}: {} below the certified lower bound {lower}",
                run.objective
            );
            assert!(
                run.objective < start - 0.05,
                "{method:?} {reg}: {} does not descend",
                run.objective
            );
            // The curve records the best objective so far: non-increasing.
            assert!(run.curve.windows(2).all(|p| p[1].3 <= p[0].3));
            if method == Baseline::Nest {
                assert!(
                    run.objective - exact.objective <= 2e-3,
                    "nest {reg}: {} vs {}",
                    run.objective,
                    exact.objective
                );
            }
        }
    }
    let penalty = Penalty::elementwise(Regularizer::L1 { mu: 0.01 }).unwrap();
    let mut problem =
        LinearProblem::new(&x, &y, d, DualLoss::Hinge, &Weights::Erm, None, false).unwrap();
    let err = tuned(
        &mut problem,
        &penalty,
        Baseline::Pegasos { sample: 1.0 },
        10,
        5,
        0,
    )
    .unwrap_err();
    assert!(err.to_string().contains("l2"), "{err}");
}
