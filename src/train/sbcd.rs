//! AGD-SBCD (papers/partial-auc-fpr-range-agd-sbcd.txt, Algorithms 1-2) for any Burn model.
//!
//! The model is `w`; each outer iteration k runs Algorithm 1 twice, for the levels m = N- alpha
//! and n = N- beta, each from `v^(0) = w` for `T_k = t_scale (k+1)^2` steps, and then takes the
//! AGD step `w <- w - gamma/mu (v_bar_m - v_bar_n)`. One SBCD step:
//!
//! 1. draw I positives and J negatives ([`BlockSampler`]);
//! 2. score them with the current `v` on the device, read the scores back once;
//! 3. on the CPU ([`block_step`]): the indicators `1(l(s_i - s_j) > lambda_i)`, the score
//!    coefficients of the stochastic subgradient `G_v`, and the dual update (15) of the
//!    sampled positives' `lambda_i`;
//! 4. on the device: `G_v` by one backward pass through the surrogate, then the closed-form
//!    update (14) `v <- (v/eta + w/mu - G_v) / (1/eta + 1/mu)` parameter by parameter, and
//!    the running sum for `v_bar`.
//!
//! Defaults are section 6.1's: mini-batches of 32 (16 positives and 16 negatives),
//! `T_k = 50 (k+1)^2`, `mu = 1e3 / (N+ N-)`, `gamma = 1e3 / (N+ N-)`,
//! `eta = c / ((k+1) N+ N-)`, `theta = c / ((k+1) N-)` with `c = 0.1`.
//!
//! What is ours and not Algorithm 2's, each a [`DeepSbcdConfig`] field:
//! - `dual_init = Exact` (the default): both levels' duals start at eq. (19) for the initial
//!   model, so that about alpha and beta of the pairs are active from the first step
//!   (Algorithm 2 takes any start; a common start for both levels made the two calls see the
//!   same active pairs). `Mean` is the earlier start.
//! - `dual_refresh`: eq. (19) again before every outer iteration (one scoring pass each).
//! - `common_blocks`: the m- and n-calls draw the same blocks.
//! - `c_dual`: a dual step constant apart from `c`.
//! - `refresh_steps`: batch-norm statistics re-estimated for `w^(k+1)` and for `v_bar_n^(k)`.
//!
//! Every outer iteration returns both candidates Algorithm 2 allows, `w^(k+1)` and
//! `v_bar_n^(k)` (its output), so that the run driver can keep the better one by validation.

use std::collections::HashMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::tensor::Tensor;
use rankrisk_datasets::sampler::BlockSampler;
use serde::{Deserialize, Serialize};

use crate::bridge::{scores_to_cpu, surrogate};
use crate::pauc::objective::{PairLoss, RankRange};
use crate::pauc::sbcd::{
    CallStats, DualInit, DualState, OuterDiagnostics, block_step, start_duals,
};
use crate::train::objective::TrainError;

/// Settings of the deep AGD-SBCD.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeepSbcdConfig {
    /// FPR range start alpha.
    pub alpha: f64,
    /// FPR range end beta.
    pub beta: f64,
    /// Pairwise surrogate `l`.
    pub loss: PairLoss,
    /// `T_k = t_scale (k+1)^2` SBCD steps per call (paper: 50).
    pub t_scale: usize,
    /// Step-size constant c of `eta` and `theta`.
    pub c: f64,
    /// `mu = mu_scale / (N+ N-)` (paper: 1e3).
    pub mu_scale: f64,
    /// `gamma = gamma_scale / (N+ N-)` (paper: tuned in {0.1, 1, 2} x 1e3).
    pub gamma_scale: f64,
    /// Positives per step I.
    pub i: usize,
    /// Negatives per step J.
    pub j: usize,
    /// Seed of the block sampler.
    pub seed: u64,
    /// Training-mode forward passes over sampled blocks after each AGD step, so that buffers
    /// such as batch-norm running statistics are re-estimated for the new `w` (not part of
    /// the paper's algorithm: the AGD step combines three models' parameters and no model's
    /// statistics fit the result). Skipped for models without buffers.
    pub refresh_steps: usize,
    /// `theta = c_dual / ((k+1) N-)` when set, else `c` (Algorithm 2's shared constant).
    pub c_dual: Option<f64>,
    /// How the duals start (see [`DualInit`]).
    pub dual_init: DualInit,
    /// Re-set the duals to eq. (19) at `w^(k)` before every outer iteration (the driver
    /// scores the training set once per iteration for it). Ours, not Algorithm 2's.
    pub dual_refresh: bool,
    /// The m- and n-calls of an outer iteration draw the same blocks. Ours, not Algorithm 2's.
    pub common_blocks: bool,
}

impl DeepSbcdConfig {
    /// Section 6.1's settings for the FPR range `[alpha, beta]`, with `c = 0.1` (the paper tunes
    /// c in 1e-5..1 for deep models; on Fashion-MNIST shirts-vs-rest with an MLP, c = 1
    /// diverges within two outer iterations while c = 0.1 lifts the training pAUC[0.05, 0.5]
    /// from 0.35 to 0.88).
    pub fn paper(alpha: f64, beta: f64, seed: u64) -> Self {
        DeepSbcdConfig {
            alpha,
            beta,
            loss: PairLoss::Logistic,
            t_scale: 50,
            c: 0.1,
            mu_scale: 1e3,
            gamma_scale: 1e3,
            i: 16,
            j: 16,
            seed,
            refresh_steps: 30,
            c_dual: None,
            dual_init: DualInit::Exact,
            dual_refresh: false,
            common_blocks: false,
        }
    }
}

/// The CPU state of the deep AGD-SBCD (what a checkpoint must hold besides the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SbcdState {
    /// Duals of the level-m problem, one per positive.
    pub duals_m: DualState,
    /// Duals of the level-n problem.
    pub duals_n: DualState,
    /// Outer iterations done.
    pub k: usize,
    /// Position of the block sampler.
    pub sampler_step: u64,
}

/// What an outer iteration reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SbcdRecord {
    /// Outer iteration (1-based).
    pub k: usize,
    /// SBCD steps run in this iteration (both levels).
    pub steps: usize,
    /// Mean over the steps of the sampled block's objective estimate of the level-n problem.
    pub sampled_loss: f64,
    /// Seconds spent in the CPU part (indicators, gradients, dual updates).
    pub cpu_seconds: f64,
    /// Active shares, dual gap and step sizes of this iteration.
    pub diagnostics: OuterDiagnostics,
}

/// Float parameters of a module as flat plain (non-autodiff) tensors, by id.
type ParamMap = HashMap<ParamId, Tensor<1>>;

fn flat_plain<const D: usize>(t: Tensor<D>) -> Tensor<1> {
    let n = t.shape().num_elements();
    t.inner().reshape([n])
}

/// The trainable float parameters (those that require a gradient); buffers such as
/// batch-norm running statistics are left out: they are not variables of the problem.
fn collect(module: &impl Module) -> ParamMap {
    struct Take<'a>(&'a mut ParamMap);
    impl ModuleVisitor for Take<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let t = param.val();
            if t.is_require_grad() {
                self.0.insert(param.id, flat_plain(t.detach()));
            }
        }
    }
    let mut out = HashMap::new();
    module.visit(&mut Take(&mut out));
    out
}

/// A block's sample ids in scoring order: its positives, then its negatives.
fn block_ids(pos: &[usize], neg: &[usize]) -> Vec<usize> {
    pos.iter().chain(neg).copied().collect()
}

/// Whether a module holds float tensors that are not trained (batch-norm running statistics).
fn has_buffers(module: &impl Module) -> bool {
    struct Any(bool);
    impl ModuleVisitor for Any {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0 |= !param.val().is_require_grad();
        }
    }
    let mut any = Any(false);
    module.visit(&mut any);
    any.0
}

/// Replace every trainable float parameter by `f(id, current flat plain value)`, keeping ids;
/// buffers (batch-norm running statistics) keep their values.
struct Rewrite<F: FnMut(ParamId, Tensor<1>) -> Tensor<1>>(F);

impl<F: FnMut(ParamId, Tensor<1>) -> Tensor<1>> ModuleMapper for Rewrite<F> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, tensor, mapper) = param.consume();
        if !tensor.is_require_grad() {
            return Param::from_mapped_value(id, tensor, mapper);
        }
        let shape = tensor.shape();
        let flat = flat_plain(tensor.detach());
        let new: Tensor<D> = (self.0)(id, flat).reshape(shape);
        Param::from_mapped_value(id, Tensor::from_inner(new).require_grad(), mapper)
    }
}

/// Deep AGD-SBCD: duals and sampler on the CPU, parameter updates on the device.
#[derive(Debug, Clone)]
pub struct DeepSbcd {
    cfg: DeepSbcdConfig,
    range: RankRange,
    n_pos: usize,
    n_neg: usize,
    /// Position of each sample among the positives (None for negatives).
    pos_index: Vec<Option<usize>>,
    sampler: BlockSampler,
    /// The resumable state.
    pub state: SbcdState,
}

impl DeepSbcd {
    /// State for a training set with `labels` in {-1, +1} (id order); `initial_scores` (the
    /// model's scores before training, id order) set the duals as
    /// [`DeepSbcdConfig::dual_init`] says: eq. (19) at these scores, or the pair loss of the
    /// mean positive and mean negative score.
    ///
    /// # Errors
    /// [`TrainError::Settings`] for a bad FPR range, one class only, blocks larger than a
    /// class, or non-positive scales.
    pub fn new(
        cfg: DeepSbcdConfig,
        labels: &[f64],
        initial_scores: &[f64],
    ) -> Result<Self, TrainError> {
        let settings = |e: String| TrainError::Settings(e);
        let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
        let n_pos = positive.iter().filter(|&&p| p).count();
        let n_neg = labels.len() - n_pos;
        let range = RankRange::from_fpr(cfg.alpha, cfg.beta, n_neg).map_err(settings)?;
        let c_dual = cfg.c_dual.unwrap_or(cfg.c);
        if !(cfg.c > 0.0
            && c_dual > 0.0
            && cfg.mu_scale > 0.0
            && cfg.gamma_scale > 0.0
            && cfg.t_scale > 0)
        {
            return Err(settings(
                "c, c_dual, mu_scale, gamma_scale and t_scale must be positive".to_string(),
            ));
        }
        let sampler = BlockSampler::new(&positive, cfg.i, cfg.j, cfg.seed)
            .map_err(|e| settings(e.to_string()))?;
        let mut next = 0;
        let pos_index = positive
            .iter()
            .map(|&p| {
                p.then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let mut sbcd = DeepSbcd {
            cfg,
            range,
            n_pos,
            n_neg,
            pos_index,
            sampler,
            state: SbcdState {
                duals_m: DualState::new(n_pos, 0.0),
                duals_n: DualState::new(n_pos, 0.0),
                k: 0,
                sampler_step: 0,
            },
        };
        sbcd.init_duals(initial_scores)?;
        Ok(sbcd)
    }

    /// Set the duals of both levels from the model's scores (one per training sample, id
    /// order) as [`DeepSbcdConfig::dual_init`] says.
    ///
    /// # Errors
    /// [`TrainError::Settings`] for a wrong count or a non-finite score.
    pub fn init_duals(&mut self, scores: &[f64]) -> Result<(), TrainError> {
        self.set_duals(self.cfg.dual_init, scores)
    }

    /// Set both levels' duals to the exact solution of eq. (19) at the model that gave
    /// `scores` (one per training sample, id order): see [`crate::pauc::sbcd::exact_duals`].
    ///
    /// # Errors
    /// [`TrainError::Settings`] for a wrong count or a non-finite score.
    pub fn reset_duals(&mut self, scores: &[f64]) -> Result<(), TrainError> {
        self.set_duals(DualInit::Exact, scores)
    }

    fn set_duals(&mut self, init: DualInit, scores: &[f64]) -> Result<(), TrainError> {
        if scores.len() != self.pos_index.len() || scores.iter().any(|s| !s.is_finite()) {
            return Err(TrainError::Settings(format!(
                "{} scores for {} training samples, all finite",
                scores.len(),
                self.pos_index.len()
            )));
        }
        let (mut sp, mut sn) = (Vec::with_capacity(self.n_pos), Vec::new());
        for (s, p) in scores.iter().zip(&self.pos_index) {
            if p.is_some() {
                sp.push(*s)
            } else {
                sn.push(*s)
            }
        }
        let range = (self.range.lo, self.range.hi);
        (self.state.duals_m.lambda, self.state.duals_n.lambda) =
            start_duals(init, self.cfg.loss, &sp, &sn, range);
        Ok(())
    }

    /// Whether the duals are re-set from a scoring pass before every outer iteration.
    pub fn refreshes_duals(&self) -> bool {
        self.cfg.dual_refresh
    }

    /// [`DeepSbcdConfig::refresh_steps`] training-mode forward passes of `model` over sampled
    /// blocks, so that its buffers (batch-norm running statistics) fit its parameters; nothing
    /// for a model without buffers.
    ///
    /// # Errors
    /// The caller's error from `forward`.
    pub fn refresh_buffers<M: Module, E>(
        &mut self,
        model: &M,
        forward: &mut impl FnMut(&M, &[usize]) -> Result<Tensor<1>, E>,
    ) -> Result<(), E> {
        if has_buffers(model) {
            for _ in 0..self.cfg.refresh_steps {
                let (pos, neg) = self.sampler.next_block();
                drop(forward(model, &block_ids(&pos, &neg))?);
            }
            self.state.sampler_step = self.sampler.step;
        }
        Ok(())
    }

    /// Calls of Algorithm 1 per outer iteration: 2 (levels m and n), or 1 when the FPR range
    /// starts at 0 (m = 0).
    pub fn calls(&self) -> usize {
        if self.range.lo > 0.0 { 2 } else { 1 }
    }

    /// Restore a saved state.
    ///
    /// # Errors
    /// [`TrainError::Settings`] when it holds duals for another number of positives.
    pub fn restore(&mut self, state: SbcdState) -> Result<(), TrainError> {
        if state.duals_m.lambda.len() != self.n_pos || state.duals_n.lambda.len() != self.n_pos {
            return Err(TrainError::Settings(format!(
                "saved SBCD state holds {} duals, this run has {} positives",
                state.duals_n.lambda.len(),
                self.n_pos
            )));
        }
        self.sampler.step = state.sampler_step;
        self.state = state;
        Ok(())
    }

    /// Algorithm 1 from `w` for the level m (`upper = false`) or n: returns `v_bar` as a module
    /// (float parameters averaged over the T iterates, the rest from the last iterate), the
    /// mean sampled loss, the CPU seconds and what the call did.
    fn sbcd<M: Module, E: From<TrainError>>(
        &mut self,
        w: &M,
        upper: bool,
        iters: usize,
        forward: &mut impl FnMut(&M, &[usize]) -> Result<Tensor<1>, E>,
    ) -> Result<(M, f64, f64, CallStats), E> {
        let k1 = (self.state.k + 1) as f64;
        let pairs = self.n_pos as f64 * self.n_neg as f64;
        let mut cpu = 0.0;
        let eta = self.cfg.c / (k1 * pairs);
        let theta = self.cfg.c_dual.unwrap_or(self.cfg.c) / (k1 * self.n_neg as f64);
        let mut stats = CallStats {
            eta,
            theta,
            ..CallStats::default()
        };
        let mu = self.cfg.mu_scale / pairs;
        let level = if upper { self.range.hi } else { self.range.lo };
        let w_vals = collect(w);
        let mut v = w.clone();
        let mut v_sum: ParamMap = HashMap::new();
        let mut loss_sum = 0.0;
        let denom = 1.0 / eta + 1.0 / mu;
        for _ in 0..iters {
            for (id, t) in collect(&v) {
                let e = v_sum.remove(&id);
                v_sum.insert(id, e.map_or(t.clone(), |s| s + t));
            }
            let duals = if upper {
                &mut self.state.duals_n
            } else {
                &mut self.state.duals_m
            };
            duals.accumulate();
            let (pos, neg) = self.sampler.next_block();
            let scores = forward(&v, &block_ids(&pos, &neg))?;
            let cpu_scores = scores_to_cpu(scores.clone()).map_err(|e| {
                TrainError::Settings(format!("SBCD step {}: {e}", self.sampler.step))
            })?;
            let t_cpu = std::time::Instant::now();
            let (sp, sn) = cpu_scores.split_at(pos.len());
            let pos_idx: Vec<usize> = pos
                .iter()
                .map(|&i| self.pos_index[i].expect("the sampler draws positives"))
                .collect();
            let grads = block_step(
                self.cfg.loss,
                sp,
                sn,
                &pos_idx,
                duals,
                level,
                theta,
                self.n_pos,
                self.n_neg,
            );
            stats.record(grads.active, sp.len() * sn.len());
            loss_sum += sp
                .iter()
                .flat_map(|a| sn.iter().map(move |b| (a, b)))
                .map(|(a, b)| self.cfg.loss.value(a - b))
                .sum::<f64>()
                / (sp.len() * sn.len()) as f64;
            let g: Vec<f32> = grads
                .pos
                .iter()
                .chain(&grads.neg)
                .map(|&x| x as f32)
                .collect();
            cpu += t_cpu.elapsed().as_secs_f64();
            let loss = surrogate(scores, &g)
                .map_err(|e| TrainError::Settings(format!("SBCD surrogate: {e}")))?;
            let gp = GradientsParams::from_grads(loss.backward(), &v);
            let mut gmap: ParamMap = HashMap::new();
            struct Grads<'a>(&'a GradientsParams, &'a mut ParamMap);
            impl ModuleVisitor for Grads<'_> {
                fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                    if let Some(g) = self.0.get::<D>(param.id) {
                        let n = g.shape().num_elements();
                        self.1.insert(param.id, g.reshape([n]));
                    }
                }
            }
            v.visit(&mut Grads(&gp, &mut gmap));
            // Update (14): v = (v/eta + w/mu - G) / (1/eta + 1/mu).
            v = v.map(&mut Rewrite(|id, cur: Tensor<1>| {
                let wv = w_vals.get(&id).cloned().unwrap_or_else(|| cur.clone());
                let mut num = cur.div_scalar(eta) + wv.div_scalar(mu);
                if let Some(g) = gmap.get(&id) {
                    num = num - g.clone();
                }
                num.div_scalar(denom)
            }));
        }
        self.state.sampler_step = self.sampler.step;
        let t = iters as f64;
        let v_bar = v.map(&mut Rewrite(|id, cur: Tensor<1>| {
            v_sum.get(&id).map_or(cur, |s| s.clone().div_scalar(t))
        }));
        Ok((v_bar, loss_sum / t, cpu, stats))
    }

    /// One outer iteration of Algorithm 2. `forward(model, ids)` must return the scores of the
    /// samples `ids` (in that order) on the autodiff device, in training mode, or the caller's
    /// error (e.g. an unreadable image). Only trainable parameters are variables of the
    /// problem; the new model's buffers (batch-norm statistics) are re-estimated by
    /// [`DeepSbcdConfig::refresh_steps`] forward passes. Returns `w^(k+1)`, the other
    /// candidate output of Algorithm 2, `v_bar_n^(k)` (as an inference copy whose buffers were
    /// re-estimated for it), and the record.
    ///
    /// # Errors
    /// The caller's error, or [`TrainError`] (converted) when scores are NaN/inf or the
    /// surrogate refuses a gradient.
    pub fn outer_step<M: Module, E: From<TrainError>>(
        &mut self,
        w: M,
        forward: impl FnMut(&M, &[usize]) -> Result<Tensor<1>, E>,
    ) -> Result<(M, M, SbcdRecord), E> {
        self.outer_step_within(w, usize::MAX, forward)
    }

    /// [`DeepSbcd::outer_step`] with at most `budget` SBCD steps in all: when the iteration's
    /// `T_k` per call does not fit, each call runs `budget / calls` steps (at least one), so
    /// that methods can be compared at an equal number of samples.
    ///
    /// # Errors
    /// As [`DeepSbcd::outer_step`].
    pub fn outer_step_within<M: Module, E: From<TrainError>>(
        &mut self,
        w: M,
        budget: usize,
        mut forward: impl FnMut(&M, &[usize]) -> Result<Tensor<1>, E>,
    ) -> Result<(M, M, SbcdRecord), E> {
        let calls = self.calls();
        let t_k = self.cfg.t_scale * (self.state.k + 1) * (self.state.k + 1);
        let iters = t_k.min((budget / calls).max(1));
        let ratio = self.cfg.gamma_scale / self.cfg.mu_scale;
        let mut cpu = 0.0;
        let first_block = self.sampler.step;
        let (v_m, stats_m) = if calls == 2 {
            self.state.duals_m.reset_average();
            let (v, _, c, stats) = self.sbcd(&w, false, iters, &mut forward)?;
            cpu += c;
            self.state.duals_m.lambda = self.state.duals_m.average();
            (Some(collect(&v)), Some(stats))
        } else {
            (None, None)
        };
        let after_m = self.sampler.step;
        if self.cfg.common_blocks {
            // The n-call draws the blocks the m-call drew.
            self.sampler.step = first_block;
        }
        self.state.duals_n.reset_average();
        let (v_n, sampled_loss, c, stats_n) = self.sbcd(&w, true, iters, &mut forward)?;
        cpu += c;
        self.sampler.step = self.sampler.step.max(after_m);
        self.state.duals_n.lambda = self.state.duals_n.average();
        // The candidate v_bar_n with its own statistics, copied out before the shared buffers
        // are re-estimated for w^(k+1).
        self.refresh_buffers(&v_n, &mut forward)?;
        let candidate = v_n.valid();
        let w_vals = collect(&w);
        let vn_vals = collect(&v_n);
        // w <- w - gamma/mu (v_bar_m - v_bar_n); with m = 0, v_bar_m = w (prox of f^0 = 0).
        let new_w = v_n.map(&mut Rewrite(|id, cur: Tensor<1>| {
            let wv = w_vals.get(&id).cloned().unwrap_or_else(|| cur.clone());
            let vm = v_m
                .as_ref()
                .and_then(|m| m.get(&id).cloned())
                .unwrap_or_else(|| wv.clone());
            let vn = vn_vals.get(&id).cloned().unwrap_or(cur);
            wv - (vm - vn).mul_scalar(ratio)
        }));
        self.refresh_buffers(&new_w, &mut forward)?;
        self.state.k += 1;
        let diagnostics = OuterDiagnostics::new(
            stats_m,
            stats_n,
            &self.state.duals_m,
            &self.state.duals_n,
            ratio,
        );
        Ok((
            new_w,
            candidate,
            SbcdRecord {
                k: self.state.k,
                steps: calls * iters,
                sampled_loss,
                cpu_seconds: cpu,
                diagnostics,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendKind, autodiff_device};
    use burn::module::RunningState;
    use burn::nn::{BatchNorm, BatchNormConfig, LinearConfig};

    fn values(t: Tensor<1>) -> Vec<f32> {
        t.into_data().try_into_vec::<f32>().unwrap()
    }

    #[test]
    fn the_sbcd_and_agd_updates_leave_batch_norm_statistics_alone() {
        let device = autodiff_device(BackendKind::Ndarray).unwrap();
        let mut bn: BatchNorm = BatchNormConfig::new(3).init(&device);
        bn.running_mean = RunningState::new(Tensor::from_floats([0.5, -1.0, 2.0], &device));
        bn.running_var = RunningState::new(Tensor::from_floats([0.1, 4.0, 9.0], &device));
        assert!(has_buffers(&bn));
        assert!(!has_buffers(&LinearConfig::new(3, 1).init(&device)));
        // gamma and beta are the variables; the running statistics are not.
        assert_eq!(collect(&bn).len(), 2);
        let moved = bn
            .clone()
            .map(&mut Rewrite(|_, t: Tensor<1>| t.add_scalar(1.0)));
        assert_eq!(values(moved.gamma.val()), vec![2.0; 3]);
        assert_eq!(values(moved.beta.val()), vec![1.0; 3]);
        assert!(moved.gamma.val().is_require_grad());
        assert_eq!(values(moved.running_mean.value()), vec![0.5, -1.0, 2.0]);
        assert_eq!(values(moved.running_var.value()), vec![0.1, 4.0, 9.0]);
    }
}
