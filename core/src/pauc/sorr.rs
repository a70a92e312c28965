//! SoRR loss minimization (papers/partial-auc-fpr-range-agd-sbcd.txt, eq. 7 and Appendix A):
//! `phi_n(S(w)) - phi_m(S(w))`, the sum of the (m+1)-th .. n-th largest individual losses, by
//! AGD with the stochastic subgradient inner solver of Algorithm 3 (a scalar dual `lambda`),
//! and by DCA with constant or changing step sizes (Appendix E.1).

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::index::sample;

use crate::math::loss::Loss;
use crate::math::order::indices_descending;
use crate::math::vector::dot;
use crate::pauc::agd::{schedule_overflow, schedule_steps};
use crate::pauc::error::PaucError;
use crate::pauc::sbcd::prox_update;

/// A SoRR problem: rows, labels (+1/-1), the individual loss of the margin `-y w.x`, range.
#[derive(Debug, Clone)]
pub struct SorrProblem<'a> {
    /// Rows, row-major.
    pub x: &'a [f64],
    /// Labels.
    pub y: &'a [f64],
    /// Features.
    pub d: usize,
    /// Individual loss (logistic in the paper).
    pub loss: Loss,
    /// Losses skipped at the top.
    pub m: usize,
    /// Last rank summed.
    pub n: usize,
}

/// One history row.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SorrRecord {
    /// Outer iteration (1-based).
    pub iter: usize,
    /// Samples processed divided by N.
    pub epochs: f64,
    /// SoRR loss divided by `n - m`.
    pub objective: f64,
    /// Seconds since the start.
    pub seconds: f64,
}

impl SorrProblem<'_> {
    /// Check the range and shapes.
    ///
    /// # Errors
    /// [`PaucError::Shape`] when the shapes disagree, [`PaucError::SorrRanks`] unless
    /// `m < n <= N`.
    pub fn validate(&self) -> Result<(), PaucError> {
        let big_n = self.y.len();
        if self.d == 0 || self.x.len() != big_n * self.d {
            return Err(PaucError::Shape {
                values: self.x.len(),
                rows: big_n,
                d: self.d,
            });
        }
        if !(self.m < self.n && self.n <= big_n) {
            return Err(PaucError::SorrRanks {
                m: self.m,
                n: self.n,
                len: big_n,
            });
        }
        Ok(())
    }

    fn margin(&self, j: usize, w: &[f64]) -> f64 {
        -self.y[j] * dot(&self.x[j * self.d..(j + 1) * self.d], w)
    }

    fn losses(&self, w: &[f64]) -> Vec<f64> {
        (0..self.y.len())
            .map(|j| self.loss.value(self.margin(j, w)))
            .collect()
    }

    /// The SoRR loss at `w` divided by `n - m`.
    ///
    /// # Errors
    /// As [`crate::pauc::objective::sorr`].
    pub fn objective(&self, w: &[f64]) -> Result<f64, PaucError> {
        Ok(
            crate::pauc::objective::sorr(&self.losses(w), self.m, self.n)?
                / (self.n - self.m) as f64,
        )
    }

    /// Add `coef * grad s_j(w)` to `out`.
    fn add_grad(&self, j: usize, w: &[f64], coef: f64, out: &mut [f64]) {
        let c = -coef * self.loss.derivative(self.margin(j, w)) * self.y[j];
        for (o, &x) in out.iter_mut().zip(&self.x[j * self.d..(j + 1) * self.d]) {
            *o += c * x;
        }
    }

    /// Deterministic subgradient of `phi_l(S(w))`: the gradients of the `l` largest losses.
    fn top_subgradient(&self, w: &[f64], l: usize) -> Vec<f64> {
        let s = self.losses(w);
        let mut order = Vec::new();
        indices_descending(&s, &mut order);
        let mut g = vec![0.0; self.d];
        for &j in &order[..l] {
            self.add_grad(j, w, 1.0, &mut g);
        }
        g
    }
}

/// Settings of AGD with Algorithm 3 (Appendix E.1: J = 100, eta = theta = c/((k+1) N),
/// T_k = C (k+1)^2, mu in {2e2, 1e3}/N, gamma in {2e2 .. 2e4}/N).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SorrConfig {
    /// Outer iterations.
    pub outer: usize,
    /// `C` of `T_k`.
    pub t_scale: usize,
    /// `c` of the step sizes.
    pub c: f64,
    /// `mu * N`.
    pub mu_scale: f64,
    /// `gamma * N`.
    pub gamma_scale: f64,
    /// Samples per step J.
    pub j: usize,
    /// Seed.
    pub seed: u64,
}

impl SorrConfig {
    /// Check the settings: at least one outer iteration, `t_scale >= 1`, `J >= 1`, positive
    /// finite `c`, `mu_scale` and `gamma_scale` ([`agd_sorr`] runs this).
    ///
    /// # Errors
    /// [`PaucError::NotPositive`] naming the setting (`outer` is `fit-sorr`'s `--epochs`, `j`
    /// its `--batch`).
    pub fn validate(&self) -> Result<(), PaucError> {
        positive(&[
            ("outer", self.outer as f64),
            ("t_scale", self.t_scale as f64),
            ("j", self.j as f64),
            ("c", self.c),
            ("mu_scale", self.mu_scale),
            ("gamma_scale", self.gamma_scale),
        ])
    }
}

/// [`PaucError::NotPositive`] for the first setting that is not a positive finite number.
fn positive(settings: &[(&'static str, f64)]) -> Result<(), PaucError> {
    match settings.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
        Some(&(name, value)) => Err(PaucError::NotPositive { name, value }),
        None => Ok(()),
    }
}

/// `T_k = t_scale (k+1)^2` at outer iteration `k1 = k + 1`.
///
/// # Errors
/// [`PaucError::Setting`] when it overflows the integers.
fn t_k(t_scale: usize, k1: usize) -> Result<usize, PaucError> {
    k1.checked_mul(k1)
        .and_then(|kk| t_scale.checked_mul(kk))
        .ok_or_else(|| PaucError::Setting {
            name: "t_scale",
            message: format!(
                "T_k = t_scale (k+1)^2 = {t_scale} x {k1}^2 steps overflows the step count at \
                 outer iteration {k1}"
            ),
        })
}

/// The objective at an iterate `w`, or why the run diverged: [`PaucError::IterateDiverged`]
/// for a non-finite weight, [`PaucError::ObjectiveDiverged`] for a non-finite loss.
fn diverged_or(p: &SorrProblem<'_>, w: &[f64]) -> Result<f64, PaucError> {
    if let Some((index, &value)) = w.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(PaucError::IterateDiverged { index, value });
    }
    match p.objective(w) {
        Err(PaucError::NonFiniteScore { value, .. }) => Err(PaucError::ObjectiveDiverged { value }),
        other => other,
    }
}

/// Algorithm 3: approximately `prox_{mu phi_l(S)}(w)` with a scalar dual; returns `v_bar` and
/// updates `lambda` to its average.
#[allow(clippy::too_many_arguments)]
fn sgd_prox(
    p: &SorrProblem<'_>,
    w: &[f64],
    lambda: &mut f64,
    iters: usize,
    eta: f64,
    mu: f64,
    l: usize,
    jj: usize,
    rng: &mut StdRng,
) -> Vec<f64> {
    let big_n = p.y.len();
    let mut v = w.to_vec();
    let mut v_sum = vec![0.0; p.d];
    let mut lambda_sum = 0.0;
    let mut g = vec![0.0; p.d];
    for _ in 0..iters {
        for (s, &vk) in v_sum.iter_mut().zip(&v) {
            *s += vk;
        }
        lambda_sum += *lambda;
        let batch = sample(rng, big_n, jj.min(big_n)).into_vec();
        let scale = big_n as f64 / batch.len() as f64;
        g.iter_mut().for_each(|x| *x = 0.0);
        let mut active = 0usize;
        for &j in &batch {
            if p.loss.value(p.margin(j, &v)) > *lambda {
                active += 1;
                p.add_grad(j, &v, scale, &mut g);
            }
        }
        let g_lambda = l as f64 - scale * active as f64;
        prox_update(&mut v, w, &g, eta, mu);
        *lambda -= eta * g_lambda;
    }
    if iters == 0 {
        return v;
    }
    *lambda = lambda_sum / iters as f64;
    v_sum.iter().map(|s| s / iters as f64).collect()
}

/// AGD (Algorithm 2) with Algorithm 3 inner solves, from `w0`.
///
/// # Errors
/// [`PaucError`] for an invalid range, shapes or settings ([`SorrConfig::validate`]), a
/// `T_k` beyond the integers, or a non-finite loss.
pub fn agd_sorr(
    p: &SorrProblem<'_>,
    w0: &[f64],
    cfg: &SorrConfig,
) -> Result<(Vec<f64>, Vec<SorrRecord>), PaucError> {
    p.validate()?;
    cfg.validate()?;
    if schedule_steps(cfg.t_scale, cfg.outer, if p.m > 0 { 2 } else { 1 }).is_none() {
        return Err(schedule_overflow(cfg.t_scale, cfg.outer));
    }
    let big_n = p.y.len() as f64;
    let (mu, gamma) = (cfg.mu_scale / big_n, cfg.gamma_scale / big_n);
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let mut w = w0.to_vec();
    let init = {
        let s = p.losses(&w);
        s.iter().sum::<f64>() / s.len() as f64
    };
    let (mut lambda_m, mut lambda_n) = (init, init);
    let start = Instant::now();
    let mut samples = 0.0;
    let mut history = Vec::with_capacity(cfg.outer);
    for k in 0..cfg.outer {
        let iters = t_k(cfg.t_scale, k + 1)?;
        let eta = cfg.c / ((k + 1) as f64 * big_n);
        let v_m = if p.m > 0 {
            sgd_prox(p, &w, &mut lambda_m, iters, eta, mu, p.m, cfg.j, &mut rng)
        } else {
            w.clone()
        };
        let v_n = sgd_prox(p, &w, &mut lambda_n, iters, eta, mu, p.n, cfg.j, &mut rng);
        for ((wk, a), b) in w.iter_mut().zip(&v_m).zip(&v_n) {
            *wk -= gamma / mu * (a - b);
        }
        samples += if p.m > 0 { 2.0 } else { 1.0 } * (iters * cfg.j.min(p.y.len())) as f64;
        history.push(SorrRecord {
            iter: k + 1,
            epochs: samples / big_n,
            objective: diverged_or(p, &w)?,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    Ok((w, history))
}

/// Step-size rule of DCA for SoRR (Appendix E.1).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum DcaSteps {
    /// Hu et al.'s setting: the same step and iteration count for every outer iteration.
    Constant {
        /// Step size (paper grid: 0.01, 0.1, 0.5, 1).
        lr: f64,
        /// Inner iterations (paper grid: 2000, 3000).
        iters: usize,
    },
    /// The paper's improvement: `eta = c / ((k+1) N)`, `T = C (k+1)^2`.
    Changing {
        /// `c`.
        c: f64,
        /// `C`.
        t_scale: usize,
    },
}

/// DCA for SoRR: linearize `phi_m` at `w_k`, then stochastic subgradient steps (J samples, the
/// dual of `phi_n` as in Algorithm 4 with N+ = 1) on `phi_n(S(w)) - xi_k . w`.
///
/// # Errors
/// [`PaucError`] for an invalid range or shapes, a setting that is not positive (`outer`, `j`,
/// the step size and the iteration count), a `T_k` beyond the integers, or a non-finite loss.
pub fn dca_sorr(
    p: &SorrProblem<'_>,
    w0: &[f64],
    outer: usize,
    steps: DcaSteps,
    j: usize,
    seed: u64,
) -> Result<(Vec<f64>, Vec<SorrRecord>), PaucError> {
    p.validate()?;
    let (step, count) = match steps {
        DcaSteps::Constant { lr, iters } => (("lr", lr), ("inner", iters as f64)),
        DcaSteps::Changing { c, t_scale } => (("c", c), ("t_scale", t_scale as f64)),
    };
    positive(&[("outer", outer as f64), ("j", j as f64), step, count])?;
    if let DcaSteps::Changing { t_scale, .. } = steps
        && schedule_steps(t_scale, outer, 1).is_none()
    {
        return Err(schedule_overflow(t_scale, outer));
    }
    let big_n = p.y.len();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = w0.to_vec();
    let mut lambda = {
        let s = p.losses(&w);
        s.iter().sum::<f64>() / s.len() as f64
    };
    let start = Instant::now();
    let mut samples = 0.0;
    let mut history = Vec::with_capacity(outer);
    let mut g = vec![0.0; p.d];
    for k in 0..outer {
        let xi = p.top_subgradient(&w, p.m);
        let (eta, iters) = match steps {
            DcaSteps::Constant { lr, iters } => (lr / big_n as f64, iters),
            DcaSteps::Changing { c, t_scale } => {
                (c / ((k + 1) as f64 * big_n as f64), t_k(t_scale, k + 1)?)
            }
        };
        for _ in 0..iters {
            let batch = sample(&mut rng, big_n, j.min(big_n)).into_vec();
            let scale = big_n as f64 / batch.len() as f64;
            g.iter_mut().zip(&xi).for_each(|(a, b)| *a = -b);
            let mut active = 0usize;
            for &jj in &batch {
                if p.loss.value(p.margin(jj, &w)) > lambda {
                    active += 1;
                    p.add_grad(jj, &w, scale, &mut g);
                }
            }
            for (wk, gk) in w.iter_mut().zip(&g) {
                *wk -= eta * gk;
            }
            lambda -= eta * (p.n as f64 - scale * active as f64);
        }
        samples += (iters * j.min(big_n) + big_n) as f64;
        history.push(SorrRecord {
            iter: k + 1,
            epochs: samples / big_n as f64,
            objective: diverged_or(p, &w)?,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    Ok((w, history))
}
