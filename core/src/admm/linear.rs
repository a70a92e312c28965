//! Algorithm 1 of papers/rank-based-loss-admm.txt for linear scores `X w`, on the CPU.
//!
//! With `D = -diag(y) X` and the splitting `z = D w` (problem 9), one iteration is
//!
//! ```text
//! z^{k+1} = argmin_z Omega(z) + rho/2 ||z - D w^k + lambda^k / rho||^2        (PAVA, problem 10)
//! w^{k+1} = argmin_w rho/2 ||z^{k+1} - D w + lambda^k / rho||^2 + g(w) + r/2 ||w - w^k||^2
//! lambda^{k+1} = lambda^k + rho (z^{k+1} - D w^{k+1})
//! ```
//!
//! The w-step is solved exactly: in closed form for `g = 0` and `g = mu/2 ||w||^2` through one
//! eigendecomposition of `X^T X` (so every `rho` of a schedule costs `O(d^2)`), by FISTA with
//! warm start for l1 / elastic net / MCP / SCAD, and for sADMM (section 4) by L-BFGS on the
//! Moreau envelope `M_{g,gamma}`, reporting `w~ = prox_{g,gamma}(w)`. Since `D^T D = X^T X`, the
//! smooth part of the w-step only needs the `d x d` Gram matrix, not a pass over the data.

use std::time::Instant;

use crate::admm::schedule::{GammaSchedule, Progress, RhoSchedule};
use crate::math::vector::row_scores;

use crate::admm::certificate::{CERTIFY_EVERY, DualAverage, certifiable, subgradient};
use crate::admm::error::AdmmError;
use crate::admm::wstep::{Quadratic, SymEigen, fista, lbfgs};
use crate::math::loss::Loss;
use crate::math::pava::Pava;
use crate::math::regularizer::Regularizer;
use crate::math::vector::{dot, norm};
use crate::math::weights::{Sigma, Weights};

/// Settings of Algorithm 1.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdmmConfig {
    /// Individual loss `l`.
    pub loss: Loss,
    /// Weights `sigma` of the rank-based loss.
    pub weights: Weights,
    /// Regularizer `g`.
    pub reg: Regularizer,
    /// Penalty schedule; `None` picks [`RhoSchedule::default_for`] (a constant on the scale of
    /// the weights for convex problems, Table 6's EHRM rule for CPT weights, 2% growth per
    /// iteration for other nonconvex ones). Table 6's schedules are `RhoSchedule::SRM`, `AORR`,
    /// `EHRM`.
    pub rho: Option<RhoSchedule>,
    /// Proximal weight `r` of the w-step. For a weakly convex `g` it is raised to at least `2c`
    /// so that the w-step is strongly convex (Assumption 3 asks for an exact w-step).
    pub r: f64,
    /// Iteration cap (the paper: 300; the default, 10,000, lets the nonsmooth convex cases of
    /// Tables 1-2, hinge with l1 included, reach `tol`: about 3,100-3,500 iterations on
    /// australian).
    pub max_iter: usize,
    /// Relative tolerance of the stop test. Where [`crate::admm::certificate::certifiable`]
    /// holds (fixed nondecreasing weights, l1 / l2 / elastic net), on the certified duality gap
    /// `(P(w) - bound) / P(w)`, checked every [`crate::admm::certificate::CERTIFY_EVERY`]
    /// iterations and whenever the residuals pass; otherwise on the primal residual
    /// `||z - D w||` and the dual residual `rho ||D (w^{k+1} - w^k)||`, relative to their scales.
    pub tol: f64,
    /// `Some` for sADMM: `g` is replaced by its Moreau envelope with this `gamma_k`.
    pub smoothing: Option<GammaSchedule>,
    /// Iteration cap of the inner FISTA / L-BFGS.
    pub inner_max_iter: usize,
    /// Relative tolerance of the inner solver.
    pub inner_tol: f64,
}

impl Default for AdmmConfig {
    /// Logistic ERM with `g = 0.005 ||w||^2`, the default penalty, at most 10,000 iterations.
    fn default() -> Self {
        AdmmConfig {
            loss: Loss::Logistic,
            weights: Weights::Erm,
            reg: Regularizer::L2 { mu: 0.01 },
            rho: None,
            r: 1e-6,
            max_iter: 10_000,
            tol: 1e-6,
            smoothing: None,
            inner_max_iter: 1000,
            inner_tol: 1e-10,
        }
    }
}

/// One row of the iteration history.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct IterRecord {
    /// Iteration (1-based).
    pub iter: usize,
    /// Objective (1) at `w^{k+1}` (at `w~` for sADMM).
    pub objective: f64,
    /// `||z^{k+1} - D w^{k+1}||`.
    pub primal_residual: f64,
    /// `rho ||D (w^{k+1} - w^k)||`.
    pub dual_residual: f64,
    /// Penalty used in this iteration.
    pub rho: f64,
    /// Blocks of the PAVA solution.
    pub pava_blocks: usize,
    /// Inner iterations of the w-step (0 for the closed form).
    pub inner_iterations: usize,
    /// Seconds since the start.
    pub seconds: f64,
}

/// What the solver returns.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AdmmResult {
    /// The model: the iterate `w^k` (`w~^k = prox_{g,gamma}(w^k)` for sADMM) with the lowest
    /// objective (1) over iterations `k >= 0`, the starting point `w^0` included. On convex
    /// problems this is the last iterate up to rounding; on nonconvex ones (AoRR, CPT, MCP,
    /// SCAD) ADMM is not monotone, so the best iterate is kept and the solver never returns a
    /// point worse than the one it started from.
    pub w: Vec<f64>,
    /// Objective (1) at the last iterate.
    pub final_objective: f64,
    /// Final split variable `z`.
    pub z: Vec<f64>,
    /// Final multipliers `lambda`.
    pub lambda: Vec<f64>,
    /// Objective (1) at `w`.
    pub objective: f64,
    /// Iteration (1-based) at which `w` was reached; 0 when no iterate improved on `w^0`.
    pub best_iteration: usize,
    /// Iterations run.
    pub iterations: usize,
    /// Whether the run stopped before the cap: the certified relative gap [`AdmmResult::gap`]
    /// at most the tolerance where a certificate applies, both relative residuals otherwise.
    pub converged: bool,
    /// The last certified relative duality gap `(P(w) - bound) / P(w)`, an upper bound of the
    /// relative distance of `w` to the optimum ([`crate::admm::certificate`]); `None` where no
    /// certificate applies (nonconvex problems, `g = 0`) or before the first check.
    pub gap: Option<f64>,
    /// The last iteration's primal residual relative to its scale,
    /// `||z - D w|| / max(||z||, ||D w||, 1)` (converged when `<= tol`; NaN before any).
    pub primal_relative: f64,
    /// The last iteration's dual residual relative to its scale,
    /// `rho ||D (w^{k+1} - w^k)|| / max(||lambda||, 1)` (converged when `<= tol`).
    pub dual_relative: f64,
    /// One record per iteration.
    pub history: Vec<IterRecord>,
}

/// The data of problem (1): `X` row-major `n x d`, labels in {-1, +1}.
#[derive(Debug, Clone, Copy)]
pub struct LinearData<'a> {
    /// Features, row-major.
    pub x: &'a [f64],
    /// Labels.
    pub y: &'a [f64],
    /// Number of features.
    pub d: usize,
}

impl<'a> LinearData<'a> {
    /// Check shapes, finiteness, labels.
    ///
    /// # Errors
    /// [`AdmmError::Empty`], [`AdmmError::Shape`], [`AdmmError::NonFiniteFeature`] or
    /// [`AdmmError::BadLabel`] naming the problem.
    pub fn new(x: &'a [f64], y: &'a [f64], d: usize) -> Result<Self, AdmmError> {
        let n = y.len();
        if n == 0 || d == 0 {
            return Err(AdmmError::Empty { rows: n, d });
        }
        if x.len() != n * d {
            return Err(AdmmError::Shape {
                values: x.len(),
                rows: n,
                d,
            });
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(AdmmError::NonFiniteFeature {
                row: i / d,
                feature: i % d,
            });
        }
        if let Some(i) = y.iter().position(|&v| v != 1.0 && v != -1.0) {
            return Err(AdmmError::BadLabel {
                row: i,
                value: y[i],
            });
        }
        Ok(LinearData { x, y, d })
    }

    /// Number of rows.
    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// `u = D w = -y .* (X w)`.
    pub fn d_times(&self, w: &[f64], u: &mut [f64]) {
        for (i, ui) in u.iter_mut().enumerate() {
            *ui = -self.y[i] * dot(&self.x[i * self.d..(i + 1) * self.d], w);
        }
    }

    /// `out = D^T v = -sum_i y_i v_i x_i`.
    pub fn dt_times(&self, v: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for ((row, &yi), &vi) in self.x.chunks_exact(self.d).zip(self.y).zip(v) {
            let c = -yi * vi;
            for (o, &xij) in out.iter_mut().zip(row) {
                *o += c * xij;
            }
        }
    }

    /// `X^T X` (= `D^T D`), row-major `d x d`.
    pub fn gram(&self) -> Vec<f64> {
        let d = self.d;
        let mut g = vec![0.0; d * d];
        for i in 0..self.n() {
            let row = &self.x[i * d..(i + 1) * d];
            for a in 0..d {
                let ra = row[a];
                for b in a..d {
                    g[a * d + b] += ra * row[b];
                }
            }
        }
        for a in 0..d {
            for b in 0..a {
                g[a * d + b] = g[b * d + a];
            }
        }
        g
    }

    /// Scores `X w`.
    pub fn scores(&self, w: &[f64]) -> Vec<f64> {
        row_scores(self.x, self.d, w)
    }
}

/// Objective (1): `sum_i sigma_i l((D w)_[i]) + g(w)`.
pub fn objective(
    data: &LinearData<'_>,
    loss: &Loss,
    sigma: &Sigma,
    reg: &Regularizer,
    w: &[f64],
) -> f64 {
    let mut u = vec![0.0; data.n()];
    data.d_times(w, &mut u);
    sigma.rank_loss(loss, &u) + reg.value(w)
}

/// Run Algorithm 1 (ADMM, or sADMM when `cfg.smoothing` is set) from `w0` (zeros by default).
///
/// # Errors
/// [`AdmmError`] for unusable data or settings (invalid weights, `k > n`, `gamma >= 1/c`, ...).
pub fn solve(
    data: &LinearData<'_>,
    cfg: &AdmmConfig,
    w0: Option<&[f64]>,
) -> Result<AdmmResult, AdmmError> {
    let (n, d) = (data.n(), data.d);
    cfg.loss.validate()?;
    cfg.reg.validate()?;
    let sigma = cfg.weights.sigma(n)?;
    let convex = cfg.reg.weak_convexity() == 0.0
        && matches!(&sigma, Sigma::Fixed(s) if s.windows(2).all(|p| p[0] <= p[1]));
    let schedule = cfg
        .rho
        .unwrap_or_else(|| RhoSchedule::default_for(&sigma, convex));
    schedule.validate()?;
    let (r, tol) = (cfg.r, cfg.tol);
    for (name, ok, requirement, got) in [
        ("r", r.is_finite() && r >= 0.0, ">= 0", r),
        ("tol", tol.is_finite() && tol > 0.0, "> 0", tol),
        ("max_iter", cfg.max_iter > 0, "at least 1", 0.0),
    ] {
        if !ok {
            return Err(AdmmError::Setting {
                name,
                requirement: requirement.into(),
                got: got.to_string(),
            });
        }
    }
    if let Some(gs) = &cfg.smoothing
        && !(gs.gamma0 > 0.0 && gs.floor > 0.0 && gs.gamma0 < cfg.reg.max_gamma())
    {
        return Err(AdmmError::Setting {
            name: "sADMM gamma",
            requirement: format!("0 < gamma < 1/c = {}", cfg.reg.max_gamma()),
            got: format!("gamma0 = {}, floor = {}", gs.gamma0, gs.floor),
        });
    }
    let mut w = match w0 {
        Some(w0) if w0.len() == d => w0.to_vec(),
        Some(w0) => {
            return Err(AdmmError::StartLength { got: w0.len(), d });
        }
        None => vec![0.0; d],
    };

    let gram = data.gram();
    let eig = SymEigen::new(&gram, d);
    let lambda_max = eig.values.iter().cloned().fold(0.0, f64::max);
    let r = cfg.r.max(2.0 * cfg.reg.weak_convexity());
    let (quad_mu, closed_form) = match cfg.reg {
        Regularizer::None => (0.0, cfg.smoothing.is_none()),
        Regularizer::L2 { mu } => (mu, cfg.smoothing.is_none()),
        _ => (0.0, false),
    };

    let start = Instant::now();
    let mut pava = Pava::new();
    let mut u = vec![0.0; n];
    data.d_times(&w, &mut u);
    let mut z = u.clone();
    let mut lambda = vec![0.0; n];
    let mut m = vec![0.0; n];
    let mut c = vec![0.0; n];
    let mut b = vec![0.0; d];
    let mut rhs = vec![0.0; d];
    let mut u_new = vec![0.0; n];
    let mut rho = schedule.initial();
    let mut history = Vec::new();
    let mut converged = false;
    let mut gap = None;
    let certify = certifiable(&sigma, &cfg.reg);
    let mut averages = DualAverage::default();
    let (mut primal_relative, mut dual_relative) = (f64::NAN, f64::NAN);
    let mut w_report = w.clone();
    let mut best = (
        objective(data, &cfg.loss, &sigma, &cfg.reg, &w_report),
        0,
        w_report.clone(),
    );
    for k in 0..cfg.max_iter {
        // z-step: problem (10) with m = D w^k - lambda^k / rho.
        for i in 0..n {
            m[i] = u[i] - lambda[i] / rho;
        }
        let z_old = z.clone();
        let stats = pava.solve(&cfg.loss, &sigma, rho, &m, &mut z)?;
        let sampled = certify
            .then(|| averages.sample(k, || subgradient(&cfg.loss, &sigma, rho, &m, &z)))
            .flatten();
        // w-step.
        for i in 0..n {
            c[i] = z[i] + lambda[i] / rho;
        }
        data.dt_times(&c, &mut b);
        let w_old = w.clone();
        let inner_iterations;
        if closed_form {
            for j in 0..d {
                rhs[j] = rho * b[j] + r * w_old[j];
            }
            eig.solve_shifted(rho, quad_mu + r, &rhs, &mut w);
            inner_iterations = 0;
        } else {
            let q = Quadratic {
                gram: &gram,
                b: &b,
                w_k: &w_old,
                rho,
                r,
            };
            match &cfg.smoothing {
                None => {
                    let lipschitz = rho * lambda_max + r;
                    inner_iterations = fista(
                        &q,
                        &cfg.reg,
                        lipschitz,
                        &mut w,
                        cfg.inner_max_iter,
                        cfg.inner_tol,
                    );
                }
                Some(gs) => {
                    let gamma = gs.at(k);
                    let reg = cfg.reg;
                    let mut env_grad = vec![0.0; d];
                    let f = |v: &[f64], grad: &mut [f64]| {
                        let value = q.value_grad(v, grad) + reg.moreau(v, gamma);
                        let mut eg = vec![0.0; v.len()];
                        reg.moreau_grad(v, gamma, &mut eg);
                        for (g, e) in grad.iter_mut().zip(&eg) {
                            *g += e;
                        }
                        value
                    };
                    inner_iterations = lbfgs(&f, &mut w, cfg.inner_max_iter, cfg.inner_tol);
                    reg.prox(&w, gamma, &mut env_grad);
                    w_report.copy_from_slice(&env_grad);
                }
            }
        }
        if cfg.smoothing.is_none() {
            w_report.copy_from_slice(&w);
        }
        // dual step
        data.d_times(&w, &mut u_new);
        let mut primal2 = 0.0;
        let mut dual2 = 0.0;
        let mut dz2 = 0.0;
        for i in 0..n {
            let res = z[i] - u_new[i];
            lambda[i] += rho * res;
            primal2 += res * res;
            dual2 += (u_new[i] - u[i]).powi(2);
            dz2 += (z[i] - z_old[i]).powi(2);
        }
        let primal = primal2.sqrt();
        let dual = rho * dual2.sqrt();
        std::mem::swap(&mut u, &mut u_new);
        let objective = sigma.rank_loss(&cfg.loss, &{
            let mut ur = vec![0.0; n];
            data.d_times(&w_report, &mut ur);
            ur
        }) + cfg.reg.value(&w_report);
        if objective < best.0 {
            best = (objective, k + 1, w_report.clone());
        }
        history.push(IterRecord {
            iter: k + 1,
            objective,
            primal_residual: primal,
            dual_residual: dual,
            rho,
            pava_blocks: stats.blocks,
            inner_iterations,
            seconds: start.elapsed().as_secs_f64(),
        });
        let scale_p = norm(&z).max(norm(&u)).max(1.0);
        let scale_d = norm(&lambda).max(1.0);
        (primal_relative, dual_relative) = (primal / scale_p, dual / scale_d);
        let residuals_met = primal <= cfg.tol * scale_p && dual <= cfg.tol * scale_d && k > 0;
        if certify && (residuals_met || (k + 1).is_multiple_of(CERTIFY_EVERY)) {
            // Where a certificate exists it decides: residuals can be small relative to their
            // floors while the objective is not (the multipliers are O(1/sqrt(n))), and large
            // while the objective is certified.
            let dt_times = |v: &[f64]| {
                let mut s = vec![0.0; d];
                data.dt_times(v, &mut s);
                s
            };
            let (v, conj) = sampled.unwrap_or_else(|| subgradient(&cfg.loss, &sigma, rho, &m, &z));
            let bound = averages.bound(dt_times, &sigma, &cfg.reg, &v, conj);
            let relative = (best.0 - bound) / best.0.abs().max(f64::MIN_POSITIVE);
            gap = Some(relative);
            if relative <= cfg.tol {
                converged = true;
                break;
            }
        } else if !certify && residuals_met {
            converged = true;
            break;
        }
        let dw_norm = w
            .iter()
            .zip(&w_old)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>()
            .sqrt();
        let progress = Progress {
            primal_residual: primal,
            dual_residual: dual,
            dz_norm: dz2.sqrt(),
            dw_norm,
            d_norm: lambda_max.sqrt(),
            z_norm: norm(&z),
            primal_relative,
            dual_relative,
        };
        rho = schedule.next(k, rho, &progress);
        if !(rho.is_finite() && rho > 0.0) {
            return Err(AdmmError::Schedule {
                rho,
                iteration: k + 1,
            });
        }
    }
    let final_objective = history.last().map_or_else(
        || objective(data, &cfg.loss, &sigma, &cfg.reg, &w_report),
        |h| h.objective,
    );
    let (objective, best_iteration, w_best) = best;
    Ok(AdmmResult {
        w: w_best,
        final_objective,
        best_iteration,
        z,
        lambda,
        objective,
        iterations: history.len(),
        converged,
        gap,
        primal_relative,
        dual_relative,
        history,
    })
}
