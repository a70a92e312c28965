//! The refined PAVA against independent oracles: a naive pool-one-pair-at-a-time solver with a
//! bisection block minimizer, brute force over block partitions for n <= 7, and the KKT
//! conditions of problem (10). Seeded random loops, thousands of cases.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rankrisk::loss::Loss;
use rankrisk::pava::{Pava, PavaError, objective, solve};
use rankrisk::weights::{Sigma, Weights};

const LOSSES: [Loss; 5] = [
    Loss::Logistic,
    Loss::Hinge,
    Loss::Exponential,
    Loss::SquaredHinge,
    Loss::SmoothedHinge { delta: 0.6 },
];

fn normal(rng: &mut StdRng) -> f64 {
    let u: f64 = rng.random_range(1e-12..1.0);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Random m with some exact ties.
fn random_m(rng: &mut StdRng, n: usize, scale: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let x = scale * normal(rng);
            if rng.random::<f64>() < 0.2 {
                (x * 2.0).round() / 2.0
            } else {
                x
            }
        })
        .collect()
}

fn random_weights(rng: &mut StdRng, n: usize) -> Weights {
    loop {
        let w = match rng.random_range(0..10) {
            0 => Weights::Erm,
            1 => Weights::Cvar {
                q: rng.random_range(0.0..0.95),
            },
            2 => Weights::Extremile {
                r: rng.random_range(1.0..4.0),
            },
            3 => Weights::Esrm {
                rho: rng.random_range(0.1..6.0),
            },
            4 => Weights::TopK {
                k: rng.random_range(1..=n),
            },
            5 | 6 => {
                let k = rng.random_range(1..=n);
                let m = rng.random_range(0..k);
                if rng.random() {
                    Weights::Aorr { m, k }
                } else {
                    Weights::AorrLiteral { m, k }
                }
            }
            7 => Weights::Ehrm {
                a: rng.random_range(0.0..1.0),
                b: rng.random_range(0.5..1.0),
            },
            8 => Weights::Cvar {
                q: (rng.random_range(0..n) as f64) / n as f64,
            },
            _ => Weights::Explicit {
                sigma: (0..n)
                    .map(|_| {
                        if rng.random::<f64>() < 0.3 {
                            0.0
                        } else {
                            rng.random::<f64>()
                        }
                    })
                    .collect(),
            },
        };
        if w.sigma(n).is_ok() {
            return w;
        }
    }
}

fn fixed(sigma: &Sigma) -> &[f64] {
    match sigma {
        Sigma::Fixed(s) => s,
        Sigma::Cpt { .. } => panic!("fixed weights expected"),
    }
}

fn sorted(m: &[f64]) -> Vec<f64> {
    let mut s = m.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Minimizer of `S l(v) + rho/2 sum (v - m_j)^2` by 300 bisection steps on its (left) derivative.
fn bisect_block(loss: &Loss, s: f64, rho: f64, ms: &[f64]) -> f64 {
    let len = ms.len() as f64;
    let mean = ms.iter().sum::<f64>() / len;
    let max = ms.iter().cloned().fold(f64::MIN, f64::max);
    let d = |v: f64| s * loss.derivative(v) + rho * ms.iter().map(|m| v - m).sum::<f64>();
    let mut lo = mean - s * loss.derivative(max) / (rho * len) - 1.0;
    let mut hi = mean + 1.0;
    for _ in 0..300 {
        let mid = 0.5 * (lo + hi);
        if d(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Naive PAVA: repeatedly pool the first adjacent out-of-order pair, rescanning from the left.
fn naive_pava(loss: &Loss, sigma: &[f64], rho: f64, ms: &[f64]) -> Vec<f64> {
    let n = ms.len();
    let mut blocks: Vec<(usize, usize, f64)> = (0..n)
        .map(|i| (i, i + 1, bisect_block(loss, sigma[i], rho, &ms[i..=i])))
        .collect();
    while let Some(i) = (0..blocks.len().saturating_sub(1)).find(|&i| blocks[i].2 > blocks[i + 1].2)
    {
        let (a, _, _) = blocks[i];
        let (_, b, _) = blocks[i + 1];
        let s: f64 = sigma[a..b].iter().sum();
        blocks[i] = (a, b, bisect_block(loss, s, rho, &ms[a..b]));
        blocks.remove(i + 1);
    }
    let mut z = vec![0.0; n];
    for (a, b, v) in blocks {
        z[a..b].fill(v);
    }
    z
}

/// Objective of (10) for sorted m and z in the same (sorted) order.
fn sorted_objective(loss: &Loss, sigma: &[f64], rho: f64, ms: &[f64], z: &[f64]) -> f64 {
    (0..ms.len())
        .map(|i| sigma[i] * loss.value(z[i]) + 0.5 * rho * (z[i] - ms[i]).powi(2))
        .sum()
}

/// Brute force: every partition of 0..n into consecutive blocks, each at its own minimizer;
/// the best partition whose block values are nondecreasing.
fn brute_force(loss: &Loss, sigma: &[f64], rho: f64, ms: &[f64]) -> f64 {
    let n = ms.len();
    let mut best = f64::INFINITY;
    for cuts in 0u32..(1 << (n - 1)) {
        let mut z = vec![0.0; n];
        let mut start = 0;
        let mut last = f64::NEG_INFINITY;
        let mut feasible = true;
        for end in 1..=n {
            if end == n || cuts & (1 << (end - 1)) != 0 {
                let s: f64 = sigma[start..end].iter().sum();
                let v = bisect_block(loss, s, rho, &ms[start..end]);
                if v < last - 1e-12 {
                    feasible = false;
                    break;
                }
                last = v;
                z[start..end].fill(v);
                start = end;
            }
        }
        if feasible {
            best = best.min(sorted_objective(loss, sigma, rho, ms, &z));
        }
    }
    best
}

/// KKT residual of (10) for sorted m: per block, choose subgradients g_j in
/// [sigma_j l'_-(v), sigma_j l'_+(v)] + rho (v - m_j) greedily (lowest first, raised from the right
/// end to close the block sum); the residual is the block-sum violation plus any positive prefix
/// sum (a negative multiplier) plus any order violation.
fn kkt_residual(loss: &Loss, sigma: &[f64], rho: f64, ms: &[f64], z: &[f64]) -> f64 {
    let n = ms.len();
    let mut res: f64 = 0.0;
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && z[end] == z[start] {
            end += 1;
        }
        if end < n {
            res = res.max(z[start] - z[end]);
        }
        let v = z[start];
        let (dl_lo, dl_hi) = loss.subdifferential(v);
        let mut g: Vec<f64> = (start..end)
            .map(|j| sigma[j] * dl_lo + rho * (v - ms[j]))
            .collect();
        let room: Vec<f64> = (start..end).map(|j| sigma[j] * (dl_hi - dl_lo)).collect();
        let mut deficit = -g.iter().sum::<f64>();
        for k in (0..g.len()).rev() {
            if deficit <= 0.0 {
                break;
            }
            let up = room[k].min(deficit);
            g[k] += up;
            deficit -= up;
        }
        let mut prefix = 0.0;
        for (k, gk) in g.iter().enumerate() {
            prefix += gk;
            if k + 1 < g.len() {
                res = res.max(prefix);
            }
        }
        res = res.max(prefix.abs());
        start = end;
    }
    res
}

#[test]
fn zero_weights_return_m_unchanged() {
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..200 {
        let n = rng.random_range(0..50);
        let m = random_m(&mut rng, n, 3.0);
        for loss in LOSSES {
            let (z, stats) = solve(&loss, &Sigma::Fixed(vec![0.0; n]), 0.7, &m).unwrap();
            assert_eq!(z, m);
            assert_eq!(stats.blocks, n);
        }
    }
}

#[test]
fn matches_the_naive_pool_one_pair_solver() {
    let mut rng = StdRng::seed_from_u64(2);
    let mut pava = Pava::new();
    let mut cases = 0;
    let mut support_cases = 0;
    for _ in 0..700 {
        let n = rng.random_range(1..60);
        let m = random_m(&mut rng, n, 3.0);
        let rho = 10f64.powf(rng.random_range(-1.0..1.0));
        let weights = random_weights(&mut rng, n);
        let sigma = weights.sigma(n).unwrap();
        for loss in LOSSES {
            let mut z = vec![0.0; n];
            let stats = pava.solve(&loss, &sigma, rho, &m, &mut z).unwrap();
            support_cases += usize::from(stats.constant_support);
            let z_sorted = sorted(&z);
            let oracle = naive_pava(&loss, fixed(&sigma), rho, &sorted(&m));
            for (i, (a, b)) in z_sorted.iter().zip(&oracle).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-8 * (1.0 + b.abs()),
                    "{loss} {weights} rho={rho} n={n}: z[{i}] = {a}, oracle {b}"
                );
            }
            cases += 1;
        }
    }
    assert!(
        cases >= 3000 && support_cases > 500,
        "{cases} cases, {support_cases} via Prop. 3"
    );
}

#[test]
fn small_problems_reach_the_brute_force_minimum() {
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..500 {
        let n = rng.random_range(1..=7);
        let m = random_m(&mut rng, n, 2.0);
        let rho = 10f64.powf(rng.random_range(-1.0..1.0));
        let weights = random_weights(&mut rng, n);
        let sigma = weights.sigma(n).unwrap();
        for loss in LOSSES {
            let (z, _) = solve(&loss, &sigma, rho, &m).unwrap();
            // z is sorted like m
            for i in 0..n {
                for j in 0..n {
                    if m[i] < m[j] {
                        assert!(z[i] <= z[j], "{loss} {weights}: order broken");
                    }
                }
            }
            let ms = sorted(&m);
            let got = sorted_objective(&loss, fixed(&sigma), rho, &ms, &sorted(&z));
            let best = brute_force(&loss, fixed(&sigma), rho, &ms);
            assert!(
                (got - best).abs() <= 1e-9 * best.abs().max(1.0),
                "{loss} {weights} rho={rho} m={m:?}: pava {got}, brute force {best}"
            );
            assert!(
                (objective(&loss, &sigma, rho, &m, &z) - got).abs() <= 1e-9 * got.abs().max(1.0)
            );
        }
    }
}

#[test]
fn kkt_residual_is_tiny_for_every_loss_and_family() {
    let mut rng = StdRng::seed_from_u64(4);
    let families = |n: usize, rng: &mut StdRng| {
        let k = rng.random_range(1..=n);
        let mm = rng.random_range(0..k);
        vec![
            Weights::Erm,
            Weights::Cvar { q: 0.8 },
            Weights::Cvar { q: 0.63 },
            Weights::Extremile { r: 2.0 },
            Weights::Esrm { rho: 2.0 },
            Weights::TopK { k },
            Weights::Aorr { m: mm, k },
            Weights::AorrLiteral { m: mm, k },
            Weights::Ehrm { a: 0.4, b: 0.7 },
        ]
    };
    for _ in 0..150 {
        let n = rng.random_range(1..200);
        let m = random_m(&mut rng, n, 4.0);
        let rho = 10f64.powf(rng.random_range(-1.5..1.5));
        for weights in families(n, &mut rng) {
            let sigma = weights.sigma(n).unwrap();
            for loss in LOSSES {
                let (z, _) = solve(&loss, &sigma, rho, &m).unwrap();
                let r = kkt_residual(&loss, fixed(&sigma), rho, &sorted(&m), &sorted(&z));
                assert!(
                    r < 1e-8,
                    "{loss} {weights} n={n} rho={rho}: KKT residual {r}"
                );
            }
        }
    }
}

#[test]
fn cpt_solution_satisfies_the_first_order_condition() {
    let mut rng = StdRng::seed_from_u64(5);
    let mut both_sides = 0;
    for _ in 0..400 {
        let n = rng.random_range(1..120);
        let m = random_m(&mut rng, n, 3.0);
        let rho = 10f64.powf(rng.random_range(-1.0..1.0));
        let b = rng.random_range(-2.0..2.0);
        let weights = Weights::Cpt {
            gamma: 0.61,
            delta: 0.69,
            b,
        };
        let sigma = weights.sigma(n).unwrap();
        let Sigma::Cpt { minus, plus, .. } = &sigma else {
            panic!()
        };
        for loss in [
            Loss::Logistic,
            Loss::Hinge,
            Loss::SquaredHinge,
            Loss::Exponential,
        ] {
            let (z, stats) = solve(&loss, &sigma, rho, &m).unwrap();
            assert!(!stats.constant_support);
            let (ms, zs) = (sorted(&m), sorted(&z));
            // Condition (11): with the weights of the side each value lies on, z is a KKT point
            // of (10). Blocks sitting exactly on b are boundary points of both pieces and are
            // left out of the stationarity check.
            let side: Vec<f64> = (0..n)
                .map(|i| if zs[i] <= b { minus[i] } else { plus[i] })
                .collect();
            let on_b: Vec<bool> = zs.iter().map(|&v| v == b).collect();
            let keep: Vec<usize> = (0..n).filter(|&i| !on_b[i]).collect();
            let r = kkt_residual(
                &loss,
                &keep.iter().map(|&i| side[i]).collect::<Vec<_>>(),
                rho,
                &keep.iter().map(|&i| ms[i]).collect::<Vec<_>>(),
                &keep.iter().map(|&i| zs[i]).collect::<Vec<_>>(),
            );
            assert!(r < 1e-8, "{loss} b={b} n={n}: first-order residual {r}");
            assert!(zs.windows(2).all(|w| w[0] <= w[1]));
            if zs.iter().any(|&v| v < b) && zs.iter().any(|&v| v > b) {
                both_sides += 1;
            }
        }
    }
    assert!(both_sides > 200, "too few cases straddle b: {both_sides}");
}

#[test]
fn edge_cases() {
    let loss = Loss::Logistic;
    // n = 0 and 1
    let (z, s) = solve(&loss, &Sigma::Fixed(vec![]), 1.0, &[]).unwrap();
    assert!(z.is_empty() && s.blocks == 0);
    let (z, _) = solve(&loss, &Sigma::Fixed(vec![1.0]), 2.0, &[0.5]).unwrap();
    let (expect, _) = loss.prox(0.5, 0.5);
    assert!((z[0] - expect).abs() < 1e-14);
    // ties keep the order of m and give equal values
    let m = [1.0, 1.0, 1.0, -2.0];
    let sigma = Weights::Cvar { q: 0.5 }.sigma(4).unwrap();
    let (z, _) = solve(&loss, &sigma, 1.0, &m).unwrap();
    assert!(z[3] <= z[0] && z[0] <= z[1] && z[1] <= z[2]);
    // |m| = 1e6: finite, no overflow, every loss
    for l in LOSSES {
        let m = [1e6, -1e6, 3.0, 1e6 - 1.0];
        let sigma = Weights::Erm.sigma(4).unwrap();
        let (z, _) = solve(&l, &sigma, 0.5, &m).unwrap();
        assert!(z.iter().all(|v| v.is_finite()), "{l}: {z:?}");
        assert!(z[1] <= z[2] && z[2] <= z[3] && z[3] <= z[0]);
    }
    // bad input
    let sigma = Weights::Erm.sigma(2).unwrap();
    assert!(matches!(
        solve(&loss, &sigma, 1.0, &[0.0, f64::NAN]),
        Err(PavaError::NonFinite { index: 1, .. })
    ));
    assert!(matches!(
        solve(&loss, &sigma, 1.0, &[f64::INFINITY, 0.0]),
        Err(PavaError::NonFinite { index: 0, .. })
    ));
    assert_eq!(
        solve(&loss, &sigma, 0.0, &[0.0, 1.0]).unwrap_err(),
        PavaError::BadRho(0.0)
    );
    assert!(solve(&loss, &sigma, -1.0, &[0.0, 1.0]).is_err());
    assert!(solve(&loss, &sigma, f64::NAN, &[0.0, 1.0]).is_err());
    assert!(matches!(
        solve(&loss, &sigma, 1.0, &[0.0]),
        Err(PavaError::LengthMismatch { .. })
    ));
}

#[test]
fn workspace_reuse_gives_identical_results() {
    let mut rng = StdRng::seed_from_u64(6);
    let mut pava = Pava::new();
    for _ in 0..50 {
        let n = rng.random_range(1..300);
        let m = random_m(&mut rng, n, 3.0);
        let sigma = Weights::Cvar { q: 0.7 }.sigma(n).unwrap();
        let mut z = vec![0.0; n];
        pava.solve(&Loss::Logistic, &sigma, 0.3, &m, &mut z)
            .unwrap();
        let (fresh, _) = solve(&Loss::Logistic, &sigma, 0.3, &m).unwrap();
        assert_eq!(z, fresh);
    }
}
