//! Pdprox on matrices (section 5.3 of papers/pdprox-primal-dual-nonsmooth.txt): trace-norm
//! max-margin matrix factorization (the all-threshold hinge) and matrix completion (absolute
//! loss) on observed entries. Checked against the dense selection matrix the entries stand
//! for, and against an independent objective (the 2 x 2 trace norm in closed form,
//! `||W||_* = sqrt(||W||_F^2 + 2 |det W|)`, and the losses written out) evaluated at many random
//! points: none may beat the certified lower bound `P - gap`.

use rankrisk::pdprox::{Algorithm, Design, DualLoss, LinearProblem, PdproxConfig, Penalty, solve};
use rankrisk::weights::Weights;

use super::Lcg;

const THETA: [f64; 4] = [0.0, 3.0, 6.0, 9.0];

/// The all-threshold hinge written out: thresholds below the rating should lie under the
/// score by a margin of 1, the others above it.
fn all_threshold(s: f64, rating: f64) -> f64 {
    THETA
        .iter()
        .enumerate()
        .map(|(k, &t)| {
            if ((k + 1) as f64) < rating {
                (1.0 - (s - t)).max(0.0)
            } else {
                (1.0 - (t - s)).max(0.0)
            }
        })
        .sum()
}

/// `P(W)` of a 2 x 2 problem, independently of the library.
fn objective_2x2(loss: DualLoss, obs: &[(usize, usize, f64)], mu: f64, w: &[f64]) -> f64 {
    let mean = obs
        .iter()
        .map(|&(i, j, y)| {
            let s = w[i * 2 + j];
            match loss {
                DualLoss::Absolute => (s - y).abs(),
                _ => all_threshold(s, y),
            }
        })
        .sum::<f64>()
        / obs.len() as f64;
    let frob: f64 = w.iter().map(|v| v * v).sum();
    let det = w[0] * w[3] - w[1] * w[2];
    mean + mu * (frob + 2.0 * det.abs()).sqrt()
}

#[test]
fn the_all_threshold_loss_is_its_written_out_form_and_parses() {
    let loss: DualLoss = "all-threshold".parse().unwrap();
    assert_eq!(loss, DualLoss::AllThreshold { theta: THETA });
    assert_eq!(loss.to_string().parse::<DualLoss>().unwrap(), loss);
    for rating in 1..=5 {
        for k in -40..=120 {
            let s = k as f64 * 0.1;
            let (a, b) = (
                loss.value(s, rating as f64),
                all_threshold(s, rating as f64),
            );
            assert!((a - b).abs() < 1e-12, "rating {rating}, s {s}: {a} vs {b}");
        }
    }
    assert!("all-threshold:t1=3,t2=0".parse::<DualLoss>().is_err());
}

#[test]
fn entries_solve_as_their_dense_selection_matrix() {
    let (rows, cols) = (4, 5);
    let mut rng = Lcg(3);
    let (mut r, mut c, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..rows {
        for j in 0..cols {
            if (i + 2 * j) % 3 != 0 {
                r.push(i);
                c.push(j);
                y.push((1.0 + (rng.next() * 5.0).floor()).min(5.0));
            }
        }
    }
    let d = rows * cols;
    let mut x = vec![0.0; r.len() * d];
    for k in 0..r.len() {
        x[k * d + r[k] * cols + c[k]] = 1.0;
    }
    let penalty = Penalty::Trace {
        mu: 0.05,
        rows,
        cols,
    };
    for loss in [DualLoss::AllThreshold { theta: THETA }, DualLoss::Absolute] {
        for algorithm in [Algorithm::Dual, Algorithm::Primal] {
            let cfg = PdproxConfig {
                algorithm,
                tol: 0.0,
                max_iter: 200,
                ..PdproxConfig::default()
            };
            let entries = Design::Entries {
                row: &r,
                col: &c,
                rows,
                cols,
            };
            let mut a =
                LinearProblem::with_design(entries, &y, loss, &Weights::Erm, None, false).unwrap();
            let mut b = LinearProblem::new(&x, &y, d, loss, &Weights::Erm, None, false).unwrap();
            let (ra, rb) = (
                solve(&mut a, &penalty, &cfg).unwrap(),
                solve(&mut b, &penalty, &cfg).unwrap(),
            );
            assert!(
                (ra.c - rb.c).abs() < 1e-12 * rb.c,
                "{loss}: c {} vs {}",
                ra.c,
                rb.c
            );
            for (p, q) in ra.w.iter().zip(&rb.w) {
                assert!((p - q).abs() < 1e-9, "{loss} {algorithm:?}: {p} vs {q}");
            }
            assert!(
                (ra.gap - rb.gap).abs() < 1e-9,
                "{loss}: {} vs {}",
                ra.gap,
                rb.gap
            );
        }
    }
}

#[test]
fn no_point_beats_the_certified_bound_on_2x2_problems() {
    // All four entries, one twice; and three entries (the fourth is left to the trace norm).
    let cases: [&[(usize, usize, f64)]; 2] = [
        &[
            (0, 0, 5.0),
            (0, 1, 4.0),
            (1, 0, 2.0),
            (1, 1, 1.0),
            (0, 0, 4.0),
        ],
        &[(0, 0, 5.0), (0, 1, 1.0), (1, 0, 3.0)],
    ];
    let mut rng = Lcg(11);
    for obs in cases {
        let r: Vec<usize> = obs.iter().map(|o| o.0).collect();
        let c: Vec<usize> = obs.iter().map(|o| o.1).collect();
        let y: Vec<f64> = obs.iter().map(|o| o.2).collect();
        for loss in [DualLoss::AllThreshold { theta: THETA }, DualLoss::Absolute] {
            for mu in [0.01, 0.3] {
                let design = Design::Entries {
                    row: &r,
                    col: &c,
                    rows: 2,
                    cols: 2,
                };
                let mut problem =
                    LinearProblem::with_design(design, &y, loss, &Weights::Erm, None, false)
                        .unwrap();
                let penalty = Penalty::Trace {
                    mu,
                    rows: 2,
                    cols: 2,
                };
                let cfg = PdproxConfig {
                    tol: 1e-6,
                    max_iter: 200_000,
                    ..PdproxConfig::default()
                };
                let res = solve(&mut problem, &penalty, &cfg).unwrap();
                assert!(res.converged, "{loss} mu {mu}: gap {}", res.gap);
                let (w, reported) = res.best();
                let mine = objective_2x2(loss, obs, mu, w);
                assert!(
                    (mine - reported).abs() < 1e-9,
                    "{loss} mu {mu}: the library's P {reported} against {mine}"
                );
                let bound = reported - res.gap;
                let mut lowest = objective_2x2(loss, obs, mu, &[0.0; 4]);
                for scale in [3.0, 1.0, 0.1, 0.01, 1e-3] {
                    for _ in 0..20_000 {
                        let p: Vec<f64> = w
                            .iter()
                            .map(|v| v + scale * (2.0 * rng.next() - 1.0))
                            .collect();
                        lowest = lowest.min(objective_2x2(loss, obs, mu, &p));
                    }
                }
                assert!(
                    lowest >= bound - 1e-12,
                    "{loss} mu {mu}: a point at {lowest} is below the bound {bound}"
                );
                assert!(reported - lowest <= res.gap + 1e-12);
            }
        }
    }
}

#[test]
fn matrix_settings_it_cannot_solve_are_refused_with_the_reason() {
    let (r, c) = ([0usize, 1], [1usize, 0]);
    let design = Design::Entries {
        row: &r,
        col: &c,
        rows: 2,
        cols: 2,
    };
    let loss = DualLoss::AllThreshold { theta: THETA };
    let err = LinearProblem::with_design(design, &[3.0, 2.5], loss, &Weights::Erm, None, false)
        .unwrap_err();
    assert!(err.to_string().contains("ratings 1, 2, 3, 4 or 5"), "{err}");
    let err = LinearProblem::with_design(design, &[3.0, 6.0], loss, &Weights::Erm, None, false)
        .unwrap_err();
    assert!(err.to_string().contains("row 1 is 6"), "{err}");
    let err = LinearProblem::with_design(design, &[3.0, 2.0], loss, &Weights::Erm, None, true)
        .unwrap_err();
    assert!(err.to_string().contains("bias"), "{err}");
    let err = LinearProblem::with_design(
        design,
        &[3.0, 2.0],
        loss,
        &Weights::Cvar { q: 0.5 },
        None,
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("4 duals"), "{err}");
    let outside = Design::Entries {
        row: &r,
        col: &[1, 2],
        rows: 2,
        cols: 2,
    };
    let err = LinearProblem::with_design(
        outside,
        &[1.0, 2.0],
        DualLoss::Absolute,
        &Weights::Erm,
        None,
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("(1, 2)"), "{err}");
}
