//! The first-order baselines of section 5 of papers/pdprox-primal-dual-nonsmooth.txt, on the
//! same problems as [`crate::pdprox::solver`], batch (full data) unless said otherwise:
//!
//! - `gd`: subgradient descent, `w+ = w - eta_t (g_f + g_R)`, `eta_t = eta / sqrt(t)`;
//! - `fobos` (Duchi and Singer 2009): `w+ = prox_{eta_t R}(w - eta_t g_f)`, `eta_t = eta / sqrt(t)`;
//! - `rda` (Xiao 2009): `w+ = argmin <g_bar_t, w> + R(w) + sqrt(t)/(2 eta t) ||w||^2`, i.e.
//!   `prox_{eta sqrt(t) R}(-eta sqrt(t) g_bar_t)`, `g_bar_t` the mean of the subgradients so far;
//! - `agd` (accelerated composite gradient, Chen et al. 2009): FISTA's momentum with the
//!   subgradient of the loss term in place of a gradient, constant step `eta`;
//! - `nest` (Nesterov 2005): the loss term smoothed as `max_alpha L(w, alpha) - mu/2 ||alpha||^2`,
//!   whose gradient `G_w(Pi_Q(G_alpha(w) / mu))` is `c/mu`-Lipschitz, minimized with R by FISTA
//!   at step `mu/c`;
//! - `pegasos` (Shalev-Shwartz et al. 2007), for `R = lambda/2 ||w||^2` and ERM: `w+ = (1 -
//!   1/t) w - g_f / (lambda t)` with `g_f` from a sample of the rows (with replacement; each
//!   sampled row costs two of its own products, counted as `2 m / n` passes), projected onto
//!   the ball of radius `1/sqrt(lambda)`.
//!
//! `g_f = G_w(alpha*(w))` with `alpha*` a maximizer of `G_alpha(w)^T alpha` over `Q`: a
//! subgradient of the loss term. The paper tunes each method over 21 values `2^-10..2^10` times
//! its theoretical step (or smoothing) and shows the best: [`tuned`] does that. The base values
//! here: `eta = 1 / ||g_f(0)||` (the first step moves `w` by 1), `mu` such that the smoothing
//! bias `mu/2 max ||alpha||^2` equals 1e-3 of `P(0)`.

use std::time::Instant;

use crate::math::regularizer::Regularizer;
use crate::pdprox::error::PdproxError;
use crate::pdprox::linear::LinearProblem;
use crate::pdprox::penalty::Penalty;

/// A baseline of section 5.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// Subgradient descent.
    Gd,
    /// Forward-backward splitting.
    Fobos,
    /// Regularized dual averaging (batch).
    Rda,
    /// Accelerated composite (sub)gradient.
    Agd,
    /// Nesterov's smoothing with FISTA.
    Nest,
    /// Pegasos (l2^2 only) on a fraction of the rows per iteration.
    Pegasos {
        /// Fraction of the rows sampled per iteration, in `(0, 1]`.
        sample: f64,
    },
}

/// One run's curve and result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BaselineRun {
    /// The method.
    pub method: Baseline,
    /// The multiplier of the base step (or smoothing) used.
    pub scale: f64,
    /// The best primal objective seen and its iterate.
    pub objective: f64,
    /// The iterate with that objective.
    pub w: Vec<f64>,
    /// `(iteration, passes, seconds, best objective so far)` every `record_every` iterations.
    pub curve: Vec<(usize, f64, f64, f64)>,
}

/// A maximizer of the loss term's dual at `w` and the subgradient `g_f = G_w(alpha*)`.
struct Oracle<'p, 'a> {
    problem: &'p LinearProblem<'a>,
    scores: Vec<f64>,
    g_alpha: Vec<f64>,
    alpha: Vec<f64>,
}

impl<'p, 'a> Oracle<'p, 'a> {
    fn new(problem: &'p LinearProblem<'a>) -> Self {
        Oracle {
            problem,
            scores: vec![0.0; problem.n()],
            g_alpha: vec![0.0; problem.dual_len()],
            alpha: vec![0.0; problem.dual_len()],
        }
    }

    /// `(loss term at w, g_f)` (two passes).
    fn subgradient(&mut self, w: &[f64], g: &mut [f64]) -> f64 {
        self.problem.scores(w, &mut self.scores);
        self.problem.dual_gradient(&self.scores, &mut self.g_alpha);
        self.problem
            .domain()
            .maximizer(&self.g_alpha, &mut self.alpha);
        self.problem.primal_gradient(&self.alpha, g);
        self.g_alpha
            .iter()
            .zip(&self.alpha)
            .map(|(a, b)| a * b)
            .sum()
    }

    /// The smoothed loss term's gradient `G_w(Pi_Q(G_alpha(w) / mu))` (two passes).
    fn smoothed(
        &mut self,
        w: &[f64],
        mu: f64,
        g: &mut [f64],
        domain: &mut crate::pdprox::DualDomain,
    ) -> Result<(), PdproxError> {
        self.problem.scores(w, &mut self.scores);
        self.problem.dual_gradient(&self.scores, &mut self.g_alpha);
        self.alpha
            .iter_mut()
            .zip(&self.g_alpha)
            .for_each(|(a, x)| *a = x / mu);
        domain.project(&mut self.alpha)?;
        self.problem.primal_gradient(&self.alpha, g);
        Ok(())
    }
}

/// Run `method` for `iterations` from `w = 0` with the base step times `scale`, recording the
/// best objective every `record_every` iterations.
///
/// # Errors
/// [`PdproxError::Unsupported`] for Pegasos without an l2^2 regularizer or with a bias,
/// [`PdproxError::Setting`] for a bad sample fraction, the projection's errors.
pub fn run(
    problem: &mut LinearProblem<'_>,
    penalty: &Penalty,
    method: Baseline,
    scale: f64,
    iterations: usize,
    record_every: usize,
    seed: u64,
) -> Result<BaselineRun, PdproxError> {
    let start = Instant::now();
    let p = problem.primal_len();
    let reg_len = p - usize::from(problem.has_bias());
    let mut domain = problem.domain().clone();
    let problem: &LinearProblem<'_> = problem;
    let mut oracle = Oracle::new(problem);
    let objective_of = |oracle: &mut Oracle<'_, '_>, w: &[f64], scratch: &mut [f64]| {
        oracle.subgradient(w, scratch) + penalty.value(&w[..reg_len])
    };
    let mut g = vec![0.0; p];
    let mut g_reg = vec![0.0; p];
    // The point a composite mapping is applied to.
    let mut v = vec![0.0; p];
    let mut w = vec![0.0; p];
    let p0 = objective_of(&mut oracle, &w, &mut g);
    let g0 = g
        .iter()
        .map(|x| x * x)
        .sum::<f64>()
        .sqrt()
        .max(f64::MIN_POSITIVE);
    let eta = scale / g0;
    let prox = |v: &[f64], t: f64, out: &mut [f64]| {
        penalty.prox(&v[..reg_len], t, &mut out[..reg_len]);
        if p > reg_len {
            out[reg_len] = v[reg_len];
        }
    };
    let mut best = (p0, w.clone());
    let mut curve = vec![(0, 0.0, 0.0, p0)];
    let mut passes = 2.0;
    // State of the methods that keep more than w.
    let mut g_sum = vec![0.0; p];
    let (mut y, mut w_prev, mut momentum) = (vec![0.0; p], vec![0.0; p], 1.0f64);
    let c = problem.lipschitz(crate::pdprox::StepBound::Exact)?;
    // Smoothing mu: bias mu/2 max ||alpha||^2 = 1e-3 P(0), max ||alpha||^2 read off a vertex.
    let mut vertex = vec![0.0; problem.dual_len()];
    domain.maximizer(&vec![1.0; problem.dual_len()], &mut vertex);
    let radius = vertex.iter().map(|a| a * a).sum::<f64>().max(1.0);
    let mu = scale * 2e-3 * p0.max(f64::MIN_POSITIVE) / radius;
    let lambda = match (method, penalty) {
        (Baseline::Pegasos { sample }, Penalty::Elementwise(Regularizer::L2 { mu })) => {
            if !(sample > 0.0 && sample <= 1.0) {
                return Err(PdproxError::Setting {
                    name: "pegasos' sample fraction",
                    expected: "in (0, 1]",
                    value: sample,
                });
            }
            if problem.has_bias() {
                return Err(PdproxError::Unsupported("pegasos here has no bias".into()));
            }
            *mu
        }
        (Baseline::Pegasos { .. }, _) => {
            return Err(PdproxError::Unsupported(
                "pegasos minimizes the l2^2-regularized loss (--reg l2:MU)".into(),
            ));
        }
        _ => 0.0,
    };
    let mut rng = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    for t in 1..=iterations {
        let tf = t as f64;
        match method {
            Baseline::Gd | Baseline::Fobos | Baseline::Rda => {
                oracle.subgradient(&w, &mut g);
                let step = eta / tf.sqrt();
                match method {
                    Baseline::Gd => {
                        penalty.subgradient(&w[..reg_len], &mut g_reg[..reg_len]);
                        for ((wi, gi), ri) in w.iter_mut().zip(&g).zip(&g_reg) {
                            *wi -= step * (gi + ri);
                        }
                    }
                    Baseline::Fobos => {
                        for ((vi, a), b) in v.iter_mut().zip(&w).zip(&g) {
                            *vi = a - step * b;
                        }
                        prox(&v, step, &mut w);
                    }
                    _ => {
                        g_sum.iter_mut().zip(&g).for_each(|(s, x)| *s += x);
                        let k = eta * tf.sqrt();
                        for (vi, s) in v.iter_mut().zip(&g_sum) {
                            *vi = -k * s / tf;
                        }
                        prox(&v, k, &mut w);
                    }
                }
                passes += 2.0;
            }
            Baseline::Agd | Baseline::Nest => {
                // FISTA from y: w_t = prox(y - step grad(y)), momentum on w.
                let step = if method == Baseline::Nest {
                    mu / c.max(f64::MIN_POSITIVE)
                } else {
                    eta
                };
                if method == Baseline::Nest {
                    oracle.smoothed(&y, mu, &mut g, &mut domain)?;
                } else {
                    oracle.subgradient(&y, &mut g);
                }
                w_prev.copy_from_slice(&w);
                for ((vi, a), b) in v.iter_mut().zip(&y).zip(&g) {
                    *vi = a - step * b;
                }
                prox(&v, step, &mut w);
                let next = (1.0 + (1.0 + 4.0 * momentum * momentum).sqrt()) / 2.0;
                let beta = (momentum - 1.0) / next;
                momentum = next;
                for ((yi, wi), wp) in y.iter_mut().zip(&w).zip(&w_prev) {
                    *yi = wi + beta * (wi - wp);
                }
                passes += 2.0;
            }
            Baseline::Pegasos { sample } => {
                // The subgradient on a sample of rows (with replacement), as an estimate of the
                // mean over all rows.
                let n = problem.n();
                let m = ((sample * n as f64).round() as usize).clamp(1, n);
                let rows: Vec<usize> = (0..m)
                    .map(|_| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        (rng % n as u64) as usize
                    })
                    .collect();
                g.fill(0.0);
                problem.sampled_subgradient(&w, &rows, &mut g)?;
                let step = scale / (lambda * tf);
                for (wi, gi) in w.iter_mut().zip(&g) {
                    *wi = (1.0 - scale / tf).max(0.0) * *wi - step * gi;
                }
                let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
                let radius = 1.0 / lambda.sqrt();
                if norm > radius {
                    w.iter_mut().for_each(|x| *x *= radius / norm);
                }
                passes += 2.0 * m as f64 / n as f64;
            }
        }
        if t % record_every == 0 || t == iterations {
            let value = objective_of(&mut oracle, &w, &mut g_reg);
            if !value.is_finite() {
                return Err(PdproxError::Diverged { iteration: t });
            }
            if value < best.0 {
                best = (value, w.clone());
            }
            curve.push((t, passes, start.elapsed().as_secs_f64(), best.0));
        }
    }
    Ok(BaselineRun {
        method,
        scale,
        objective: best.0,
        w: best.1,
        curve,
    })
}

/// The paper's tuning: [`tuned_over`] the multipliers `2^-10, ..., 2^10` of the base step.
///
/// # Errors
/// As [`run`], when every multiplier fails.
pub fn tuned(
    problem: &mut LinearProblem<'_>,
    penalty: &Penalty,
    method: Baseline,
    iterations: usize,
    record_every: usize,
    seed: u64,
) -> Result<BaselineRun, PdproxError> {
    let scales: Vec<f64> = (-10..=10).map(|e| 2f64.powi(e)).collect();
    tuned_over(
        problem,
        penalty,
        method,
        &scales,
        iterations,
        record_every,
        seed,
    )
}

/// [`run`] with the base step times each of `scales`, the run with the lowest final objective
/// kept (the first of equals; a run that diverges is skipped).
///
/// # Errors
/// As [`run`], when every multiplier fails.
pub fn tuned_over(
    problem: &mut LinearProblem<'_>,
    penalty: &Penalty,
    method: Baseline,
    scales: &[f64],
    iterations: usize,
    record_every: usize,
    seed: u64,
) -> Result<BaselineRun, PdproxError> {
    let mut best: Option<BaselineRun> = None;
    let mut last_err = None;
    for &scale in scales {
        match run(
            problem,
            penalty,
            method,
            scale,
            iterations,
            record_every,
            seed,
        ) {
            Ok(r) if best.as_ref().is_none_or(|b| r.objective < b.objective) => best = Some(r),
            Ok(_) => {}
            Err(PdproxError::Diverged { .. }) => {}
            Err(e) => last_err = Some(e),
        }
    }
    best.ok_or_else(|| {
        last_err.unwrap_or(PdproxError::Diverged {
            iteration: iterations,
        })
    })
}
