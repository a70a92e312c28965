//! Algorithms 1 (Pdprox-dual) and 2 (Pdprox-primal) of papers/pdprox-primal-dual-nonsmooth.txt
//! on a [`LinearProblem`], with the duality gap of the averaged iterates as the stop.
//!
//! ```text
//! Pdprox-dual, w_0 = beta_0 = 0:
//!   alpha_t = Pi_Q[beta_{t-1} + gamma G_alpha(w_{t-1})]
//!   w_t     = prox_{gamma R}(w_{t-1} - gamma G_w(alpha_t))
//!   beta_t  = Pi_Q[beta_{t-1} + gamma G_alpha(w_t)]
//! Pdprox-primal, u_0 = alpha_0 = 0:
//!   w_t     = prox_{gamma R}(u_{t-1} - gamma G_w(alpha_{t-1}))
//!   alpha_t = Pi_Q[alpha_{t-1} + gamma G_alpha(w_t)]
//!   u_t     = w_t + gamma (G_w(alpha_{t-1}) - G_w(alpha_t))
//! output the averages w^_T = sum_t w_t / T, alpha^_T = sum_t alpha_t / T
//! ```
//!
//! `gamma = 1/sqrt(2c)` with `c >= ||H||^2` (Lemma 3). Both cost one `X w` and one `X^T alpha`
//! per iteration (Algorithm 1 reuses `G_alpha(w_t)` of its beta step as the next alpha step's).
//! The gap `P(w^) - D(alpha^)` bounds the suboptimality of `w^`; Theorems 11 and 14 bound it by
//! `(||w*||^2 + ||alpha*||^2) / (2 gamma T)`. The run also evaluates the last iterates
//! `(w_T, alpha_T)` and stops when the better primal value is within `tol` of the better dual
//! value: on polyhedral problems the last iterates converge much faster than the averages.
//!
//! Corrections to the paper's text: the bounds of Theorems 11 and 14 and Corollary 15 print
//! the denominator `sqrt((2/c) T)`; summing the per-step inequality of their proofs gives
//! `2 gamma T = sqrt(2/c) T`. Lemma 4's "`<= 1`" test should read `<= rho`.
//!
//! A bias `b` is the last primal coordinate, unregularized (the paper's domain `Q_b` is the
//! whole line). The dual function is finite only where `G_b(alpha) = 0`, so the gap is taken at
//! the averaged duals scaled down on the heavier side ([`LinearProblem::balance`]). Lemma 3's
//! constant includes the bias column, so the step stays `1/sqrt(2c)` (the paper's
//! `sqrt(1/c)/2` is the same step for `c` computed without the bias column and unit rows).

use std::time::Instant;

use crate::pdprox::error::PdproxError;
use crate::pdprox::linear::{LinearProblem, StepBound};
use crate::pdprox::penalty::Penalty;

/// Which of the paper's two algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Algorithm 1: two dual copies (`alpha`, `beta`), two projections per iteration.
    Dual,
    /// Algorithm 2: two primal copies (`w`, `u`), one projection per iteration.
    Primal,
}

/// Settings of a Pdprox run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PdproxConfig {
    /// Algorithm 1 or 2.
    pub algorithm: Algorithm,
    /// How `c` (and with it `gamma = 1/sqrt(2c)`) is set.
    pub step_bound: StepBound,
    /// Stop when the duality gap of the averages is at most this (section 5.5: 1e-4).
    pub tol: f64,
    /// Iteration cap; reaching it reports `converged: false`.
    pub max_iter: usize,
    /// Evaluate the gap every this many iterations (each check costs four passes over the
    /// data: `P` and `D` at the averages and at the last iterates).
    pub check_every: usize,
}

impl Default for PdproxConfig {
    /// Pdprox-dual, the exact `c`, gap 1e-4, at most 100,000 iterations, a check every 10.
    fn default() -> Self {
        PdproxConfig {
            algorithm: Algorithm::Dual,
            step_bound: StepBound::Exact,
            tol: 1e-4,
            max_iter: 100_000,
            check_every: 10,
        }
    }
}

/// One gap check.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GapRecord {
    /// Iterations done.
    pub iter: usize,
    /// Passes over the data so far (two per iteration, four per check).
    pub passes: usize,
    /// Primal objective `P(w^)` of the averaged primal.
    pub objective: f64,
    /// Primal objective of the last iterate `w_t`.
    pub last_objective: f64,
    /// The better of the dual values at `alpha^` and `alpha_t`.
    pub dual: f64,
    /// `min(P(w^), P(w_t))` minus the dual value.
    pub gap: f64,
    /// Seconds since the start.
    pub seconds: f64,
}

/// What a run returns.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PdproxResult {
    /// The averaged primal `w^_T` (the paper's output; the bias last when there is one).
    pub w: Vec<f64>,
    /// The last primal iterate `w_T`.
    pub w_last: Vec<f64>,
    /// The averaged dual `alpha^_T`.
    pub alpha: Vec<f64>,
    /// `P(w^)`.
    pub objective: f64,
    /// `P(w_T)`.
    pub last_objective: f64,
    /// The larger dual value of the feasible points built from `alpha^` and `alpha_T` (a lower
    /// bound of the optimum).
    pub dual: f64,
    /// `min(P(w^), P(w_T)) - dual`: an upper bound of the suboptimality of the better of the
    /// two primal iterates ([`PdproxResult::best`]).
    pub gap: f64,
    /// Iterations run.
    pub iterations: usize,
    /// Passes over the data (each `X w` or `X^T alpha` counts one).
    pub passes: usize,
    /// Whether `gap` reached `tol` before `max_iter`.
    pub converged: bool,
    /// The step `gamma`.
    pub gamma: f64,
    /// Lemma 3's constant `c`.
    pub c: f64,
    /// Wall time.
    pub seconds: f64,
    /// One record per gap check.
    pub history: Vec<GapRecord>,
}

impl PdproxResult {
    /// Whether the last iterate has the strictly lower objective, so that [`PdproxResult::best`]
    /// is `w_T` rather than the average.
    pub fn last_is_better(&self) -> bool {
        self.last_objective < self.objective
    }

    /// The primal iterate with the lower objective, the average `w^_T` (the paper's output) or
    /// the last `w_T`, with that objective. On polyhedral problems (hinge with l1) the last
    /// iterate often converges much faster than the average's `O(1/T)`.
    pub fn best(&self) -> (&[f64], f64) {
        if self.last_is_better() {
            (&self.w_last, self.last_objective)
        } else {
            (&self.w, self.objective)
        }
    }
}

/// Workspace and evaluation of `P` and `D` for one problem and penalty.
struct Objective<'p, 'a> {
    problem: &'p LinearProblem<'a>,
    penalty: &'p Penalty,
    scores: Vec<f64>,
    dual_scratch: Vec<f64>,
    primal_scratch: Vec<f64>,
    /// `a = G_alpha(0)`.
    offset: &'p [f64],
}

impl<'p, 'a> Objective<'p, 'a> {
    fn new(problem: &'p LinearProblem<'a>, penalty: &'p Penalty, offset: &'p [f64]) -> Self {
        Objective {
            problem,
            penalty,
            scores: vec![0.0; problem.n()],
            dual_scratch: vec![0.0; problem.dual_len()],
            primal_scratch: vec![0.0; problem.primal_len()],
            offset,
        }
    }

    fn regularized<'w>(&self, w: &'w [f64]) -> &'w [f64] {
        let p = self.problem.primal_len() - usize::from(self.problem.has_bias());
        &w[..p]
    }

    /// `P(w) = max_{alpha in Q} L(w, alpha) + R(w)` (one pass).
    fn primal(&mut self, w: &[f64]) -> f64 {
        self.problem.scores(w, &mut self.scores);
        self.problem.loss_term(&self.scores, &mut self.dual_scratch)
            + self.penalty.value(self.regularized(w))
    }

    /// `D(s alpha') = s a^T alpha' - R*(-s G_w(alpha'))` with `alpha'` the balanced `alpha`
    /// when there is a bias, at the largest `s` in `[0, 1]` that makes it finite (one pass).
    fn dual(&mut self, alpha: &[f64]) -> f64 {
        let mut alpha = alpha.to_vec();
        if self.problem.has_bias() {
            self.problem.balance(&mut alpha);
        }
        self.problem
            .primal_gradient(&alpha, &mut self.primal_scratch);
        let p = self.problem.primal_len() - usize::from(self.problem.has_bias());
        let g = &self.primal_scratch[..p];
        let (s, conj) = self.penalty.dual_bound(g);
        let linear: f64 = self.offset.iter().zip(&alpha).map(|(a, x)| a * x).sum();
        s * linear + conj
    }
}

/// Running mean of iterates.
fn accumulate(mean: &mut [f64], x: &[f64], t: usize) {
    let k = 1.0 / t as f64;
    for (m, v) in mean.iter_mut().zip(x) {
        *m += (v - *m) * k;
    }
}

/// `prox_{gamma R}` on the regularized coordinates; the bias passes unchanged.
fn composite(
    problem: &LinearProblem<'_>,
    penalty: &Penalty,
    gamma: f64,
    v: &[f64],
    out: &mut [f64],
) {
    let p = problem.primal_len() - usize::from(problem.has_bias());
    penalty.prox(&v[..p], gamma, &mut out[..p]);
    if problem.has_bias() {
        out[p] = v[p];
    }
}

/// Run Algorithm 1 or 2 from zero.
///
/// # Errors
/// [`PdproxError::Setting`] for bad settings or a penalty of another shape,
/// [`PdproxError::Diverged`] if the iterates stop being finite, and the projection's errors.
pub fn solve(
    problem: &mut LinearProblem<'_>,
    penalty: &Penalty,
    cfg: &PdproxConfig,
) -> Result<PdproxResult, PdproxError> {
    let setting = |ok: bool, name, expected, value: f64| {
        if ok {
            Ok(())
        } else {
            Err(PdproxError::Setting {
                name,
                expected,
                value,
            })
        }
    };
    setting(
        cfg.tol.is_finite() && cfg.tol >= 0.0,
        "tol",
        "finite and >= 0",
        cfg.tol,
    )?;
    setting(
        cfg.max_iter > 0,
        "max_iter",
        "at least 1",
        cfg.max_iter as f64,
    )?;
    setting(
        cfg.check_every > 0,
        "check_every",
        "at least 1",
        cfg.check_every as f64,
    )?;
    penalty.validate(problem.primal_len() - usize::from(problem.has_bias()))?;
    let start = Instant::now();
    let c = problem.lipschitz(cfg.step_bound)?;
    // c = 0 (all features zero): any step works; keep it finite.
    let gamma = 1.0 / (2.0 * c.max(f64::MIN_POSITIVE)).sqrt();
    let (p, m) = (problem.primal_len(), problem.dual_len());
    let n = problem.n();

    let mut w = vec![0.0; p];
    let mut w_next = vec![0.0; p];
    let mut u = vec![0.0; p]; // Algorithm 2's u; Algorithm 1's step point
    let mut alpha = vec![0.0; m];
    let mut beta = vec![0.0; m]; // Algorithm 1's beta
    let mut g_alpha = vec![0.0; m];
    let mut g_w = vec![0.0; p];
    let mut g_w_prev = vec![0.0; p];
    let mut scores = vec![0.0; n];
    let (mut w_avg, mut alpha_avg) = (vec![0.0; p], vec![0.0; m]);
    let mut history = Vec::new();
    let mut passes = 0;

    // w_0 = 0 scores 0, so G_alpha(w_0) = a (no pass); G_w(alpha_0 = 0) = 0 is g_w_prev.
    problem.dual_gradient(&scores, &mut g_alpha);
    let offset = g_alpha.clone();

    let mut iterations = 0;
    let mut converged = false;
    let (mut objective, mut last_objective, mut dual, mut gap) =
        (f64::NAN, f64::NAN, f64::NAN, f64::INFINITY);
    for t in 1..=cfg.max_iter {
        match cfg.algorithm {
            Algorithm::Dual => {
                // alpha_t = Pi[beta + gamma G_alpha(w_{t-1})] (G_alpha(w_{t-1}) is current).
                for ((a, b), g) in alpha.iter_mut().zip(&beta).zip(&g_alpha) {
                    *a = b + gamma * g;
                }
                problem.domain_mut().project(&mut alpha)?;
                problem.primal_gradient(&alpha, &mut g_w);
                for ((x, wi), g) in u.iter_mut().zip(&w).zip(&g_w) {
                    *x = wi - gamma * g;
                }
                composite(problem, penalty, gamma, &u, &mut w_next);
                std::mem::swap(&mut w, &mut w_next);
                problem.scores(&w, &mut scores);
                problem.dual_gradient(&scores, &mut g_alpha);
                for (b, g) in beta.iter_mut().zip(&g_alpha) {
                    *b += gamma * g;
                }
                problem.domain_mut().project(&mut beta)?;
            }
            Algorithm::Primal => {
                // w_t = prox(u_{t-1} - gamma G_w(alpha_{t-1})), G_w(alpha_{t-1}) in g_w_prev.
                for ((x, ui), g) in w_next.iter_mut().zip(&u).zip(&g_w_prev) {
                    *x = ui - gamma * g;
                }
                composite(problem, penalty, gamma, &w_next, &mut w);
                problem.scores(&w, &mut scores);
                problem.dual_gradient(&scores, &mut g_alpha);
                for (a, g) in alpha.iter_mut().zip(&g_alpha) {
                    *a += gamma * g;
                }
                problem.domain_mut().project(&mut alpha)?;
                problem.primal_gradient(&alpha, &mut g_w);
                for (((ui, wi), gp), g) in u.iter_mut().zip(&w).zip(&g_w_prev).zip(&g_w) {
                    *ui = wi + gamma * (gp - g);
                }
                std::mem::swap(&mut g_w, &mut g_w_prev);
            }
        }
        passes += 2;
        iterations = t;
        accumulate(&mut w_avg, &w, t);
        accumulate(&mut alpha_avg, &alpha, t);
        if !w.iter().chain(&alpha).all(|v| v.is_finite()) {
            return Err(PdproxError::Diverged { iteration: t });
        }
        if t % cfg.check_every == 0 || t == cfg.max_iter {
            let mut obj = Objective::new(problem, penalty, &offset);
            objective = obj.primal(&w_avg);
            last_objective = obj.primal(&w);
            dual = obj.dual(&alpha_avg).max(obj.dual(&alpha));
            gap = objective.min(last_objective) - dual;
            passes += 4;
            history.push(GapRecord {
                iter: t,
                passes,
                objective,
                last_objective,
                dual,
                gap,
                seconds: start.elapsed().as_secs_f64(),
            });
            if gap <= cfg.tol {
                converged = true;
                break;
            }
        }
    }
    Ok(PdproxResult {
        w: w_avg,
        w_last: w,
        alpha: alpha_avg,
        objective,
        last_objective,
        dual,
        gap,
        iterations,
        passes,
        converged,
        gamma,
        c,
        seconds: start.elapsed().as_secs_f64(),
        history,
    })
}
