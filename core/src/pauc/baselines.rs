//! The pAUC baselines of papers/partial-auc-fpr-range-agd-sbcd.txt for linear models:
//! DCA (Appendix E.4, Algorithm 4, "DCA.Changing.lr"), proximal DCA (Appendix E.5), the naive
//! mini-batch method (Kar et al. 2014: the pAUC surrogate of each sampled batch, step
//! `eta0 / sqrt(t)`), and full-batch subgradient descent on `F`.

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::index::sample;

use crate::math::order::indices_descending;
use crate::metrics::RankRange;
use crate::pauc::agd::{schedule_overflow, schedule_steps};
use crate::pauc::error::PaucError;
use crate::pauc::linear::Budget;
use crate::pauc::objective::{PairLoss, objective_and_score_grad};
use crate::pauc::sbcd::{AgdRecord, DualState, PairData, PairSampler, block_step};

/// Which baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Baseline {
    /// DCA with SBCD subproblem solves (Algorithm 4).
    Dca,
    /// Proximal DCA: DCA with `L/2 ||w - w_k||^2` in the subproblem (38).
    ProxDca,
    /// Mini-batch pAUC (Kar et al. 2014).
    MiniBatch,
    /// Full-batch subgradient descent on F.
    Subgradient,
}

/// Settings shared by the baselines.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BaselineConfig {
    /// FPR range start.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
    /// Pairwise surrogate.
    pub loss: PairLoss,
    /// How long to run: [`Budget::Outer`] counts outer iterations (DCA) or passes
    /// (mini-batch, subgradient); [`Budget::Epochs`] stops every method when its sample visits
    /// reach that many passes over the training set (a DCA iteration's deterministic
    /// subgradient visits every sample once; its last inner loop is cut to fit).
    pub budget: Budget,
    /// DCA: `T_k = t_scale (k+1)^2` (paper: C in {100, 200, 500}).
    pub t_scale: usize,
    /// Step constant: DCA `eta = c / ((k+1) N+ N-)`, `theta = c / ((k+1) N-)`; mini-batch and
    /// subgradient `eta_t = c / sqrt(t)` on the normalized objective.
    pub c: f64,
    /// Proximal DCA's `L` (paper: 1e-5 .. 1).
    pub prox_l: f64,
    /// Positives / negatives per step (DCA and mini-batch).
    pub i: usize,
    /// Negatives per step.
    pub j: usize,
    /// Seed.
    pub seed: u64,
}

impl BaselineConfig {
    /// Check the settings of baseline `which`: the FPR range, the budget, a positive finite
    /// step constant, blocks of at least one sample of each class, and for DCA `t_scale >= 1`
    /// (proximal DCA: a positive finite `L`).
    ///
    /// # Errors
    /// [`PaucError::Range`], [`PaucError::NotPositive`] or [`PaucError::Setting`] naming the
    /// setting.
    pub fn validate(&self, which: Baseline) -> Result<(), PaucError> {
        RankRange::from_fpr(self.alpha, self.beta, 1)?;
        self.budget.validate()?;
        let dca = matches!(which, Baseline::Dca | Baseline::ProxDca);
        for (name, value, used) in [
            ("c", self.c, true),
            ("i", self.i as f64, which != Baseline::Subgradient),
            ("j", self.j as f64, which != Baseline::Subgradient),
            ("t_scale", self.t_scale as f64, dca),
            ("prox_l", self.prox_l, which == Baseline::ProxDca),
        ] {
            if used && !(value.is_finite() && value > 0.0) {
                return Err(PaucError::NotPositive { name, value });
            }
        }
        if !self.prox_l.is_finite() {
            return Err(PaucError::NotPositive {
                name: "prox_l",
                value: self.prox_l,
            });
        }
        Ok(())
    }
}

/// `xi = sum_i sum_j w_j grad s_ij(w)` over the top-`level` negatives (fractional boundary), the
/// deterministic subgradient of `f^level` at `w` (DCA's linearization).
fn top_subgradient(data: &PairData, loss: PairLoss, w: &[f64], level: f64) -> Vec<f64> {
    let d = data.d;
    let mut xi = vec![0.0; d];
    if level <= 0.0 {
        return xi;
    }
    let (sp, sn) = data.scores(w);
    let mut order = Vec::new();
    indices_descending(&sn, &mut order);
    let range = RankRange { lo: 0.0, hi: level };
    for rank in range.ranks() {
        let wj = range.weight(rank);
        let j = order[rank];
        for (i, &p) in sp.iter().enumerate() {
            let c = wj * loss.derivative(p - sn[j]);
            let (xp, xn) = (&data.pos[i * d..(i + 1) * d], &data.neg[j * d..(j + 1) * d]);
            for ((x, a), b) in xi.iter_mut().zip(xp).zip(xn) {
                *x += c * (a - b);
            }
        }
    }
    xi
}

fn record(
    data: &PairData,
    w: &[f64],
    cfg: &BaselineConfig,
    iter: usize,
    epochs: f64,
    start: &Instant,
) -> Result<AgdRecord, PaucError> {
    let (objective, pauc) = data.evaluate(w, cfg.loss, cfg.alpha, cfg.beta)?;
    Ok(AgdRecord {
        iter,
        epochs,
        objective,
        pauc,
        seconds: start.elapsed().as_secs_f64(),
        sbcd: None,
    })
}

/// Run a baseline from `w0`; returns the final `w` and one history record per outer iteration
/// (DCA) or epoch.
///
/// # Errors
/// [`PaucError`] for settings [`BaselineConfig::validate`] refuses, a budget that allows no
/// iteration, an iteration count beyond the integers, or a diverged iterate.
pub fn run(
    data: &PairData,
    w0: &[f64],
    which: Baseline,
    cfg: &BaselineConfig,
) -> Result<(Vec<f64>, Vec<AgdRecord>), PaucError> {
    cfg.validate(which)?;
    let (n_pos, n_neg) = (data.n_pos(), data.n_neg());
    let d = data.d;
    let range = RankRange::from_fpr(cfg.alpha, cfg.beta, n_neg)?;
    let pairs = n_pos as f64 * n_neg as f64;
    let n_total = (n_pos + n_neg) as f64;
    let mut w = w0.to_vec();
    let start = Instant::now();
    let mut history = Vec::new();
    let mut samples = 0.0;
    // Sample visits allowed in all (infinite: unbounded) and outer iterations allowed.
    let max_samples = cfg.budget.sample_visits(n_pos + n_neg)?;
    let max_outer = match cfg.budget {
        Budget::Outer(k) => k,
        Budget::Epochs(_) => usize::MAX,
    };
    if let (Baseline::Dca | Baseline::ProxDca, Budget::Outer(k)) = (which, cfg.budget)
        && schedule_steps(cfg.t_scale, k, 1).is_none()
    {
        return Err(schedule_overflow(cfg.t_scale, k));
    }
    match which {
        Baseline::Dca | Baseline::ProxDca => {
            let mut sampler = PairSampler::new(cfg.i, cfg.j, cfg.seed);
            let (sp, sn) = data.scores(&w);
            let init = cfg.loss.value(
                sp.iter().sum::<f64>() / sp.len() as f64 - sn.iter().sum::<f64>() / sn.len() as f64,
            );
            let mut duals = DualState::new(n_pos, init);
            let per_step = (sampler.i.min(n_pos) + sampler.j.min(n_neg)) as f64;
            let l_prox = if which == Baseline::ProxDca {
                cfg.prox_l
            } else {
                0.0
            };
            let mut g = vec![0.0; d];
            for k in 0..max_outer {
                let left = max_samples - samples - n_total;
                if left < per_step {
                    break;
                }
                let k1 = (k + 1) as f64;
                let xi = top_subgradient(data, cfg.loss, &w, range.lo);
                let w_k = w.clone();
                let cap = (left / per_step) as usize;
                let iters = match (k + 1)
                    .checked_mul(k + 1)
                    .and_then(|kk| cfg.t_scale.checked_mul(kk))
                {
                    Some(t_k) => t_k.min(cap),
                    None if left.is_finite() => cap,
                    None => return Err(t_k_overflow(cfg.t_scale, k + 1)),
                };
                let eta = cfg.c / (k1 * pairs);
                let theta = cfg.c / (k1 * n_neg as f64);
                for _ in 0..iters {
                    let (pi, nj) = sampler.draw(n_pos, n_neg);
                    let (sp, sn) = data.sampled_scores(&pi, &nj, &w);
                    let grads = block_step(
                        cfg.loss, &sp, &sn, &pi, &mut duals, range.hi, theta, n_pos, n_neg,
                    );
                    for (gk, (&xik, (&wk, &wkk))) in
                        g.iter_mut().zip(xi.iter().zip(w.iter().zip(&w_k)))
                    {
                        *gk = -xik + l_prox * (wk - wkk);
                    }
                    data.add_rows(&mut g, &pi, &grads.pos, &nj, &grads.neg);
                    for (wk, gk) in w.iter_mut().zip(&g) {
                        *wk -= eta * gk;
                    }
                }
                // the deterministic subgradient touches every sample once
                samples += iters as f64 * per_step + n_total;
                history.push(record(data, &w, cfg, k + 1, samples / n_total, &start)?);
            }
        }
        Baseline::MiniBatch => {
            let mut rng = StdRng::seed_from_u64(cfg.seed);
            let (bi, bj) = (cfg.i.min(n_pos), cfg.j.min(n_neg));
            let steps_per_epoch = ((n_total / (bi + bj) as f64).ceil() as usize).max(1);
            let per_step = (bi + bj) as f64;
            let total_steps = match cfg.budget {
                Budget::Outer(k) => k.checked_mul(steps_per_epoch).ok_or(PaucError::Setting {
                    name: "epochs",
                    message: format!(
                        "{k} epochs of {steps_per_epoch} steps overflow the step count"
                    ),
                })?,
                Budget::Epochs(_) => (max_samples / per_step) as usize,
            };
            let mut t = 0usize;
            for epoch in 0..total_steps.div_ceil(steps_per_epoch) {
                for _ in 0..steps_per_epoch.min(total_steps - t) {
                    t += 1;
                    let pi = sample(&mut rng, n_pos, bi).into_vec();
                    let nj = sample(&mut rng, n_neg, bj).into_vec();
                    let (sp, sn) = data.sampled_scores(&pi, &nj, &w);
                    let (_, gp, gn) =
                        objective_and_score_grad(&sp, &sn, cfg.loss, cfg.alpha, cfg.beta)?;
                    let step = cfg.c / (t as f64).sqrt();
                    let mut g = vec![0.0; d];
                    data.add_rows(&mut g, &pi, &gp, &nj, &gn);
                    for (wk, gk) in w.iter_mut().zip(&g) {
                        *wk -= step * gk;
                    }
                    samples += (bi + bj) as f64;
                }
                history.push(record(data, &w, cfg, epoch + 1, samples / n_total, &start)?);
            }
        }
        Baseline::Subgradient => {
            let passes = match cfg.budget {
                Budget::Outer(k) => k,
                Budget::Epochs(e) => e.floor() as usize,
            };
            for epoch in 0..passes {
                let (_, g) = data.objective_grad(&w, cfg.loss, cfg.alpha, cfg.beta)?;
                let step = cfg.c / ((epoch + 1) as f64).sqrt();
                for (wk, gk) in w.iter_mut().zip(&g) {
                    *wk -= step * gk;
                }
                samples += n_total;
                history.push(record(data, &w, cfg, epoch + 1, samples / n_total, &start)?);
            }
        }
    }
    if history.is_empty() {
        // Only a budget in passes can be smaller than one iteration.
        let passes = match cfg.budget {
            Budget::Epochs(e) => e,
            Budget::Outer(k) => k as f64,
        };
        let what = match which {
            Baseline::Dca | Baseline::ProxDca => "a DCA iteration (a full pass and one block)",
            Baseline::MiniBatch => "one mini-batch step",
            Baseline::Subgradient => "one full pass",
        };
        return Err(PaucError::Setting {
            name: "budget_epochs",
            message: format!("{passes} passes are fewer than {what}: nothing would run (raise it)"),
        });
    }
    Ok((w, history))
}

/// [`PaucError::Setting`] for `T_k = t_scale (k+1)^2` beyond the integers.
fn t_k_overflow(t_scale: usize, k1: usize) -> PaucError {
    PaucError::Setting {
        name: "t_scale",
        message: format!(
            "T_k = t_scale (k+1)^2 = {t_scale} x {k1}^2 steps overflows the step count at outer \
             iteration {k1}"
        ),
    }
}
