//! The competitors of the rank-based paper's experiments (section 5, Appendix B.6), on the
//! same objective (1) as the ADMM:
//!
//! - SGD: mini-batch stochastic subgradient of the rank-based loss (each batch of 64 is ranked
//!   on its own with the batch-size weights), Mehta et al. 2023;
//! - LSVRG (Mehta et al. 2023): at each epoch start the losses at a checkpoint are ranked and
//!   the full subgradient there is stored; a step samples one example, uniformly (`LSVRG(U)`,
//!   direction `n sigma_rank(i) (grad l_i(w) - grad l_i(w_ck)) + g_ck`) or by rank with
//!   probability `sigma_j` (`LSVRG(NU)`, direction `grad l_i(w) - grad l_i(w_ck) + g_ck`);
//! - DCA for AoRR in Hu et al.'s form (Hu et al. 2020): `phi_k - phi_m` with `phi_k` the sum of
//!   the k largest losses; each outer step linearizes `phi_m` and runs subgradient steps on the
//!   convex rest.
//!
//! `l2` enters through its gradient, a nonsmooth `g` through its proximal map with the step size
//! (the paper replaces the l1 gradient by soft-thresholding).

use std::time::Instant;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::admm::error::AdmmError;
use crate::admm::linear::LinearData;
use crate::math::loss::Loss;
use crate::math::order::{indices_ascending, indices_descending};
use crate::math::regularizer::Regularizer;
use crate::math::vector::dot;
use crate::math::weights::{Sigma, Weights};

/// Which stochastic method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Method {
    /// Mini-batch stochastic subgradient.
    Sgd,
    /// LSVRG sampling examples uniformly.
    LsvrgUniform,
    /// LSVRG sampling ranks with probability `sigma_j`.
    LsvrgNonUniform,
}

/// Settings of SGD / LSVRG (Appendix B.6: 2000 epochs, batch 64, epoch length 100).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StochasticConfig {
    /// Method.
    pub method: Method,
    /// Learning rate.
    pub lr: f64,
    /// Number of epochs.
    pub epochs: usize,
    /// Steps per epoch.
    pub epoch_len: usize,
    /// Mini-batch size (SGD only).
    pub batch: usize,
    /// Seed of the sampling.
    pub seed: u64,
}

impl StochasticConfig {
    /// The paper's settings for `method` with learning rate `lr`.
    pub fn paper(method: Method, lr: f64, seed: u64) -> Self {
        StochasticConfig {
            method,
            lr,
            epochs: 2000,
            epoch_len: 100,
            batch: 64,
            seed,
        }
    }

    /// Check the settings: a positive finite learning rate and at least one epoch, one step
    /// per epoch and one sample per batch ([`stochastic`] runs this).
    ///
    /// # Errors
    /// [`AdmmError::Setting`] naming the setting.
    pub fn validate(&self) -> Result<(), AdmmError> {
        positive_rate("lr", self.lr)?;
        at_least_one("epochs", self.epochs)?;
        at_least_one("epoch_len", self.epoch_len)?;
        at_least_one("batch", self.batch)
    }
}

/// [`AdmmError::Setting`] unless `value` is a positive finite number.
fn positive_rate(name: &'static str, value: f64) -> Result<(), AdmmError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(AdmmError::Setting {
            name,
            requirement: "a positive finite number".into(),
            got: value.to_string(),
        })
    }
}

/// [`AdmmError::Setting`] unless `count` is at least 1.
fn at_least_one(name: &'static str, count: usize) -> Result<(), AdmmError> {
    if count >= 1 {
        Ok(())
    } else {
        Err(AdmmError::Setting {
            name,
            requirement: "at least 1".into(),
            got: count.to_string(),
        })
    }
}

/// One row of a baseline's history.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct EpochRecord {
    /// Epoch (1-based).
    pub epoch: usize,
    /// Objective (1).
    pub objective: f64,
    /// Seconds since the start.
    pub seconds: f64,
}

/// A baseline's result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BaselineResult {
    /// Final weights.
    pub w: Vec<f64>,
    /// Objective (1) at `w`.
    pub objective: f64,
    /// History, one record per epoch (per outer iteration for DCA).
    pub history: Vec<EpochRecord>,
}

/// The objective (1) problem shared by the baselines.
pub struct Problem<'a> {
    /// Data.
    pub data: LinearData<'a>,
    /// Loss.
    pub loss: Loss,
    /// Weights.
    pub weights: Weights,
    /// Regularizer.
    pub reg: Regularizer,
}

impl Problem<'_> {
    fn margins(&self, w: &[f64]) -> Vec<f64> {
        let mut u = vec![0.0; self.data.n()];
        self.data.d_times(w, &mut u);
        u
    }

    /// Objective (1) at `w`.
    ///
    /// # Errors
    /// The weight family's error (e.g. `k > n`).
    pub fn objective(&self, w: &[f64]) -> Result<f64, AdmmError> {
        let sigma = self.weights.sigma(self.data.n())?;
        Ok(sigma.rank_loss(&self.loss, &self.margins(w)) + self.reg.value(w))
    }

    /// Add `coef * grad_w l(u_i)` = `coef * l'(u_i) a_i` with `a_i = -y_i x_i` to `out`.
    fn add_grad(&self, i: usize, u: f64, coef: f64, out: &mut [f64]) {
        let d = self.data.d;
        let c = -coef * self.loss.derivative(u) * self.data.y[i];
        for (o, &x) in out.iter_mut().zip(&self.data.x[i * d..(i + 1) * d]) {
            *o += c * x;
        }
    }

    fn margin(&self, i: usize, w: &[f64]) -> f64 {
        let d = self.data.d;
        -self.data.y[i] * dot(&self.data.x[i * d..(i + 1) * d], w)
    }

    /// `w <- w - lr * direction`, then the regularizer: gradient for smooth `g`, prox otherwise.
    fn update(&self, w: &mut [f64], direction: &[f64], lr: f64) {
        let smooth = self.reg.is_smooth();
        for (j, wj) in w.iter_mut().enumerate() {
            let mut step = direction[j];
            if let Regularizer::L2 { mu } = self.reg {
                step += mu * *wj;
            }
            *wj -= lr * step;
            if !smooth {
                *wj = self.reg.prox_1d(*wj, lr);
            }
        }
    }
}

/// Weight of each sample given the ranks of the margins `u` (ascending).
fn rank_weights(sigma: &Sigma, u: &[f64], order: &mut Vec<usize>) -> Vec<f64> {
    indices_ascending(u, order);
    let mut weight = vec![0.0; u.len()];
    for (rank, &i) in order.iter().enumerate() {
        weight[i] = sigma.weight(rank, u[i]);
    }
    weight
}

/// Run SGD or LSVRG from `w = 0`.
///
/// # Errors
/// [`AdmmError::Setting`] for settings [`StochasticConfig::validate`] refuses, the weight
/// family's error (e.g. `k > n`, or a batch smaller than `k` for top-k/AoRR SGD), and
/// [`AdmmError::Diverged`] when the objective leaves the finite numbers.
pub fn stochastic(
    problem: &Problem<'_>,
    cfg: &StochasticConfig,
) -> Result<BaselineResult, AdmmError> {
    cfg.validate()?;
    let (n, d) = (problem.data.n(), problem.data.d);
    let sigma = problem.weights.sigma(n)?;
    let batch_sigma = match cfg.method {
        Method::Sgd => Some(
            problem
                .weights
                .sigma(cfg.batch.min(n))
                .map_err(AdmmError::BatchWeights)?,
        ),
        _ => None,
    };
    let mut rng = StdRng::seed_from_u64(cfg.seed);
    let mut w = vec![0.0; d];
    let mut history = Vec::with_capacity(cfg.epochs);
    let start = Instant::now();
    let mut order = Vec::with_capacity(n);
    let mut perm: Vec<usize> = (0..n).collect();
    let mut dir = vec![0.0; d];
    // SGD draws its batches from a fresh permutation every epoch.
    let sgd_steps = (n / cfg.batch.max(1)).max(1).min(cfg.epoch_len);
    // LSVRG(NU): cumulative sigma for sampling ranks.
    let cumulative: Vec<f64> = match &sigma {
        Sigma::Fixed(s) => s
            .iter()
            .scan(0.0, |acc, &v| {
                *acc += v;
                Some(*acc)
            })
            .collect(),
        Sigma::Cpt { .. } => Vec::new(),
    };
    for epoch in 1..=cfg.epochs {
        match cfg.method {
            Method::Sgd => {
                perm.shuffle(&mut rng);
                let bs = batch_sigma.as_ref().expect("SGD has batch weights");
                for step in 0..sgd_steps {
                    let idx = &perm[step * cfg.batch..((step + 1) * cfg.batch).min(n)];
                    let u: Vec<f64> = idx.iter().map(|&i| problem.margin(i, &w)).collect();
                    let weight = rank_weights(bs, &u, &mut order);
                    dir.fill(0.0);
                    for (k, &i) in idx.iter().enumerate() {
                        if weight[k] != 0.0 {
                            problem.add_grad(i, u[k], weight[k], &mut dir);
                        }
                    }
                    problem.update(&mut w, &dir, cfg.lr);
                }
            }
            Method::LsvrgUniform | Method::LsvrgNonUniform => {
                let w_ck = w.clone();
                let u_ck = problem.margins(&w_ck);
                let weight = rank_weights(&sigma, &u_ck, &mut order);
                let mut g_ck = vec![0.0; d];
                for i in 0..n {
                    if weight[i] != 0.0 {
                        problem.add_grad(i, u_ck[i], weight[i], &mut g_ck);
                    }
                }
                for _ in 0..cfg.epoch_len {
                    dir.copy_from_slice(&g_ck);
                    let (i, coef) = if cfg.method == Method::LsvrgUniform || cumulative.is_empty() {
                        let i = rng.random_range(0..n);
                        (i, n as f64 * weight[i])
                    } else {
                        let t = rng.random::<f64>() * cumulative[n - 1];
                        let rank = cumulative.partition_point(|&c| c <= t).min(n - 1);
                        (order[rank], 1.0)
                    };
                    if coef != 0.0 {
                        problem.add_grad(i, problem.margin(i, &w), coef, &mut dir);
                        problem.add_grad(i, u_ck[i], -coef, &mut dir);
                    }
                    problem.update(&mut w, &dir, cfg.lr);
                }
            }
        }
        let objective =
            sigma.rank_loss(&problem.loss, &problem.margins(&w)) + problem.reg.value(&w);
        if !objective.is_finite() {
            return Err(AdmmError::Diverged { epoch, lr: cfg.lr });
        }
        history.push(EpochRecord {
            epoch,
            objective,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    let objective = final_objective(&history)?;
    Ok(BaselineResult {
        w,
        objective,
        history,
    })
}

/// The objective of the last record (the validated settings give at least one).
fn final_objective(history: &[EpochRecord]) -> Result<f64, AdmmError> {
    history
        .last()
        .map(|h| h.objective)
        .ok_or(AdmmError::Setting {
            name: "epochs",
            requirement: "at least 1".into(),
            got: "0".into(),
        })
}

/// The paper's learning-rate grid `{1e-2, 1e-3, 1e-4, 1/n, 1/(n d)}`.
pub fn lr_grid(n: usize, d: usize) -> [f64; 5] {
    [1e-2, 1e-3, 1e-4, 1.0 / n as f64, 1.0 / (n * d) as f64]
}

/// Pick the rate of the grid with the lowest final objective in one run with `seed`
/// (Appendix B.6), skipping rates that diverge.
///
/// # Errors
/// The error of the last rate when every rate fails.
pub fn select_lr(problem: &Problem<'_>, base: &StochasticConfig) -> Result<f64, AdmmError> {
    let mut best: Option<(f64, f64)> = None;
    let mut last_err = None;
    for lr in lr_grid(problem.data.n(), problem.data.d) {
        match stochastic(problem, &StochasticConfig { lr, ..base.clone() }) {
            Ok(r) if best.is_none_or(|(_, o)| r.objective < o) => best = Some((lr, r.objective)),
            Ok(_) => {}
            Err(e) => last_err = Some(e),
        }
    }
    match (best, last_err) {
        (Some((lr, _)), _) => Ok(lr),
        (None, Some(e)) => Err(e),
        (None, None) => unreachable!("the grid has five rates"),
    }
}

/// Settings of DCA for AoRR (Tables 8-9: outer epochs, inner epochs, learning rate).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DcaConfig {
    /// Outer (linearization) iterations.
    pub outer: usize,
    /// Full-batch subgradient steps per outer iteration.
    pub inner: usize,
    /// Learning rate, in Hu et al.'s scale (their loss is averaged over n, ours over k - m).
    pub lr: f64,
}

impl DcaConfig {
    /// Check the settings: a positive finite learning rate, at least one outer and one inner
    /// iteration ([`dca_aorr`] runs this).
    ///
    /// # Errors
    /// [`AdmmError::Setting`] naming the setting (`outer` is `fit-linear`'s `--epochs`).
    pub fn validate(&self) -> Result<(), AdmmError> {
        positive_rate("lr", self.lr)?;
        at_least_one("outer", self.outer)?;
        at_least_one("inner", self.inner)
    }
}

/// DCA for AoRR in Hu et al.'s form (`Weights::Aorr`), from `w = 0`.
///
/// # Errors
/// When the weights are not `Weights::Aorr` or `k > n`, [`AdmmError::Setting`] for settings
/// [`DcaConfig::validate`] refuses, [`AdmmError::Diverged`] when the objective leaves the
/// finite numbers.
pub fn dca_aorr(problem: &Problem<'_>, cfg: &DcaConfig) -> Result<BaselineResult, AdmmError> {
    let Weights::Aorr { m, k } = problem.weights else {
        return Err(AdmmError::DcaNeedsAorr);
    };
    cfg.validate()?;
    let (n, d) = (problem.data.n(), problem.data.d);
    let sigma = problem.weights.sigma(n)?;
    let scale = 1.0 / (k - m) as f64;
    let step = cfg.lr * (k - m) as f64 / n as f64;
    let mut w = vec![0.0; d];
    let mut history = Vec::with_capacity(cfg.outer);
    let start = Instant::now();
    let mut order = Vec::with_capacity(n);
    let top = |u: &[f64], count: usize, order: &mut Vec<usize>| -> Vec<usize> {
        indices_descending(u, order);
        order[..count].to_vec()
    };
    let mut g = vec![0.0; d];
    for outer in 1..=cfg.outer {
        // Linearize phi_m at w_t.
        let u = problem.margins(&w);
        let mut g_m = vec![0.0; d];
        for i in top(&u, m, &mut order) {
            problem.add_grad(i, u[i], scale, &mut g_m);
        }
        for _ in 0..cfg.inner {
            let u = problem.margins(&w);
            g.iter_mut().zip(&g_m).for_each(|(a, b)| *a = -b);
            for i in top(&u, k, &mut order) {
                problem.add_grad(i, u[i], scale, &mut g);
            }
            problem.update(&mut w, &g, step);
        }
        let objective =
            sigma.rank_loss(&problem.loss, &problem.margins(&w)) + problem.reg.value(&w);
        if !objective.is_finite() {
            return Err(AdmmError::Diverged {
                epoch: outer,
                lr: cfg.lr,
            });
        }
        history.push(EpochRecord {
            epoch: outer,
            objective,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    let objective = final_objective(&history)?;
    Ok(BaselineResult {
        w,
        objective,
        history,
    })
}
