//! AGD-SBCD (papers/partial-auc-fpr-range-agd-sbcd.txt, Algorithms 1-2) once, for any model.
//!
//! [`AgdSbcd`] holds everything that does not depend on the model: the settings
//! ([`AgdSbcdConfig`]: section 6.1's deep settings by default, Appendix E.2's linear ones by
//! [`AgdSbcdConfig::paper_linear`]), the per-positive duals of both levels, the block sampler and
//! the schedules of Appendix E.2 (`T_k = t_scale (k+1)^2`, `eta = c / ((k+1) N+ N-)`,
//! `theta = c / ((k+1) N-)`, `mu = mu_scale / (N+ N-)`, `gamma = gamma_scale / (N+ N-)`).
//! A model enters through [`SbcdModel`]: it scores a block at a point `v`, applies update (14)
//! given the score coefficients of `G_v` (step 5), and forms linear combinations of points
//! (the average `v_bar` of step 10 and the AGD step of Algorithm 2, line 5). The linear model
//! ([`crate::pauc::linear`]) and a Burn module (`train::deep_sbcd`) are the two
//! implementations; both run these same iterations.
//!
//! What is ours and not Algorithm 2's (each a field of [`AgdSbcdConfig`], documented there):
//! the exact dual start (on by default), `dual_refresh`, `common_blocks`, `c_dual`, and, for
//! models with buffers, `refresh_steps`.

use crate::sampler::BlockSampler;
use serde::{Deserialize, Serialize};

use crate::metrics::RankRange;
use crate::pauc::error::PaucError;
use crate::pauc::objective::PairLoss;
use crate::pauc::sbcd::{
    CallStats, DualInit, DualState, OuterDiagnostics, block_step, start_duals,
};

config! {
    /// Settings of AGD-SBCD (pAUC paper, Algorithms 1-2), for linear and deep models alike.
    /// `new(alpha, beta)` gives section 6.1's settings for deep models: mini-batches of 32
    /// (I = J = 16), `T_k = 50 (k+1)^2` SBCD steps per call, `mu = 1e3 / (N+ N-)`,
    /// `gamma = 1e3 / (N+ N-)` (tuned there in {0.1, 1, 2} x 1e3), c = 0.1 (tuned in 1e-5..1),
    /// the logistic pair loss and 30 batch-norm refresh passes (on Fashion-MNIST shirts-vs-rest
    /// with an MLP, c = 1 diverges within two outer iterations while c = 0.1 lifts the training
    /// pAUC[0.05, 0.5] from 0.35 to 0.88); [`AgdSbcdConfig::paper_linear`] gives Appendix E.2's
    /// for the linear model. A deep run: `AgdSbcdConfig::new(alpha, beta).init(&labels)?` in
    /// rankrisk (its `DeepSbcdInit`).
    #[derive(Copy)]
    pub struct AgdSbcdConfig {
        required {
            /// FPR range start alpha (level `m = alpha N-`), `0 <= alpha < beta`.
            alpha: f64,
            /// FPR range end beta (level `n = beta N-`), `beta <= 1`.
            beta: f64,
        }
        defaults {
            /// Pairwise surrogate `l` (section 6.1: logistic).
            loss: PairLoss = PairLoss::Logistic,
            /// `T_k = t_scale (k+1)^2` SBCD steps per call (section 6.1 and Appendix E.2: 50).
            t_scale: usize = 50,
            /// Step constant c: `eta = c / ((k+1) N+ N-)` (and `theta` unless `c_dual` is set).
            c: f64 = 0.1,
            /// `theta = c_dual / ((k+1) N-)` when set; None uses `c` as Appendix E.2 does. Ours.
            c_dual: Option<f64> = None,
            /// `mu = mu_scale / (N+ N-)` (section 6.1: 1e3).
            mu_scale: f64 = 1e3,
            /// `gamma = gamma_scale / (N+ N-)` (section 6.1: 1e3).
            gamma_scale: f64 = 1e3,
            /// Positives per step I (section 6.1: 16).
            i: usize = 16,
            /// Negatives per step J (section 6.1: 16).
            j: usize = 16,
            /// Seed of the block sampler.
            seed: u64 = 0,
            /// How the duals start ([`DualInit::Exact`]: eq. (19) at `w^(0)`, so that alpha and
            /// beta of the pairs are active from the first step; Algorithm 2 leaves the start
            /// open).
            dual_init: DualInit = DualInit::Exact,
            /// Re-set both levels' duals to eq. (19) at `w^(k)` before every outer iteration (one
            /// scoring pass each). Ours; Algorithm 2 carries `lambda_bar^(k)` over.
            dual_refresh: bool = false,
            /// The m- and n-calls of an outer iteration draw the same blocks (common random
            /// numbers). Ours; Algorithm 2 samples each call independently.
            common_blocks: bool = false,
            /// For models with buffers (batch-norm running statistics): training-mode forward
            /// passes over sampled blocks that re-estimate them for each new point (ours: no
            /// model's statistics fit a combination of three models' parameters; section 6.1's
            /// runs: 30). Ignored by linear models.
            refresh_steps: usize = 30,
        }
    }
}

impl AgdSbcdConfig {
    /// Appendix E.2 (linear model on CheXpert features): I = J = 100, `T_k = 50 (k+1)^2`,
    /// c = 1, `mu = 1e3 / (N+ N-)`, `gamma = 2e3 / (N+ N-)`, logistic loss. These scales suit
    /// the paper's 1,024 CheXpert features; on standardized tabular data they overshoot, and
    /// `mu_scale = 1`, `gamma_scale = 2`, c = 10 (same ratio) decrease the objective steadily
    /// (measured on phoneme; `rankrisk train`'s tabular task uses them).
    pub fn paper_linear(alpha: f64, beta: f64, seed: u64) -> Self {
        AgdSbcdConfig {
            alpha,
            beta,
            loss: PairLoss::Logistic,
            t_scale: 50,
            c: 1.0,
            c_dual: None,
            mu_scale: 1e3,
            gamma_scale: 2e3,
            i: 100,
            j: 100,
            seed,
            dual_init: DualInit::Exact,
            dual_refresh: false,
            common_blocks: false,
            refresh_steps: 0,
        }
    }

    /// The dual step constant in use (`c_dual`, else `c`).
    pub fn dual_constant(&self) -> f64 {
        self.c_dual.unwrap_or(self.c)
    }

    /// Check the settings for a training set with `n_neg` negatives; returns the rank range
    /// `[m, n]`.
    ///
    /// # Errors
    /// [`PaucError::Range`] for a bad FPR range or no negatives, [`PaucError::NotPositive`] for a
    /// non-positive constant, scale, length or block size.
    pub fn validate(&self, n_neg: usize) -> Result<RankRange, PaucError> {
        let range = RankRange::from_fpr(self.alpha, self.beta, n_neg)?;
        for (name, value) in [
            ("c", self.c),
            ("c_dual", self.dual_constant()),
            ("mu_scale", self.mu_scale),
            ("gamma_scale", self.gamma_scale),
            ("t_scale", self.t_scale as f64),
            ("i", self.i as f64),
            ("j", self.j as f64),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(PaucError::NotPositive { name, value });
            }
        }
        Ok(range)
    }
}

/// SBCD steps of `outer` outer iterations of `calls` calls each at `T_k = t_scale (k+1)^2`
/// steps per call (`calls t_scale sum_{k=1..outer} k^2`), or `None` when that is beyond the
/// integers: a schedule no run can finish, refused before its first step.
pub fn schedule_steps(t_scale: usize, outer: usize, calls: usize) -> Option<usize> {
    let k = outer as u128;
    let squares = k.checked_mul(k + 1)?.checked_mul(2 * k + 1)? / 6;
    let total = squares
        .checked_mul(t_scale as u128)?
        .checked_mul(calls as u128)?;
    usize::try_from(total).ok()
}

/// [`PaucError::Setting`] (`t_scale`) for a schedule [`schedule_steps`] finds beyond the
/// integers.
pub fn schedule_overflow(t_scale: usize, outer: usize) -> PaucError {
    PaucError::Setting {
        name: "t_scale",
        message: format!(
            "{outer} outer iterations of T_k = t_scale (k+1)^2 = {t_scale} (k+1)^2 steps per call \
             overflow the step count (lower t_scale or the outer iterations)"
        ),
    }
}

/// The CPU state of AGD-SBCD (what a checkpoint must hold besides the model).
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

impl SbcdState {
    /// The state as named `f64` vectors, the form of the objectives' records: each level's
    /// duals, their running sum and count, the outer iteration and the sampler's position (the
    /// integers exactly: they stay below 2^53).
    pub fn vectors(&self) -> Vec<(&'static str, Vec<f64>)> {
        let (sum_m, count_m) = self.duals_m.average_parts();
        let (sum_n, count_n) = self.duals_n.average_parts();
        vec![
            ("sbcd_lambda_m", self.duals_m.lambda.clone()),
            ("sbcd_sum_m", sum_m.to_vec()),
            ("sbcd_count_m", vec![count_m as f64]),
            ("sbcd_lambda_n", self.duals_n.lambda.clone()),
            ("sbcd_sum_n", sum_n.to_vec()),
            ("sbcd_count_n", vec![count_n as f64]),
            ("sbcd_k", vec![self.k as f64]),
            ("sbcd_sampler_step", vec![self.sampler_step as f64]),
        ]
    }

    /// The state back from [`SbcdState::vectors`]' form.
    ///
    /// # Errors
    /// [`SbcdStateError`] naming the vector that is missing, of another length than its
    /// partner, or (for a count) not a whole number in `[0, 2^53]`.
    pub fn from_vectors(vectors: Vec<(&'static str, Vec<f64>)>) -> Result<Self, SbcdStateError> {
        let take = |name: &str| {
            vectors
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| SbcdStateError::Missing(name.to_string()))
        };
        let whole = |name: String, v: Vec<f64>| match v.as_slice() {
            [x] if *x >= 0.0 && *x <= 2f64.powi(53) && x.fract() == 0.0 => Ok(*x as u64),
            _ => Err(SbcdStateError::NotWhole { name, values: v }),
        };
        let level = |l: &str| -> Result<DualState, SbcdStateError> {
            let lambda = take(&format!("sbcd_lambda_{l}"))?;
            let sum = take(&format!("sbcd_sum_{l}"))?;
            if sum.len() != lambda.len() {
                return Err(SbcdStateError::Length {
                    name: format!("sbcd_sum_{l}"),
                    values: sum.len(),
                    duals: lambda.len(),
                });
            }
            let count_name = format!("sbcd_count_{l}");
            let count = whole(count_name.clone(), take(&count_name)?)?;
            Ok(DualState::from_parts(lambda, sum, count))
        };
        let (duals_m, duals_n) = (level("m")?, level("n")?);
        let k = whole("sbcd_k".into(), take("sbcd_k")?)?;
        let sampler_step = whole("sbcd_sampler_step".into(), take("sbcd_sampler_step")?)?;
        Ok(SbcdState {
            duals_m,
            duals_n,
            k: usize::try_from(k).map_err(|_| SbcdStateError::NotWhole {
                name: "sbcd_k".into(),
                values: vec![k as f64],
            })?,
            sampler_step,
        })
    }
}

/// Why [`SbcdState::from_vectors`] refused a saved state; each names its vector.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SbcdStateError {
    /// A vector of the state is absent.
    #[error("no vector `{0}`")]
    Missing(String),
    /// A dual sum of another length than its duals.
    #[error("`{name}` holds {values} values for {duals} duals")]
    Length {
        /// The vector.
        name: String,
        /// Its length.
        values: usize,
        /// The duals' length.
        duals: usize,
    },
    /// A count that is not one whole number in `[0, 2^53]`.
    #[error("`{name}` is not one whole number in [0, 2^53]: {values:?}")]
    NotWhole {
        /// The vector.
        name: String,
        /// What it holds.
        values: Vec<f64>,
    },
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
    /// Seconds spent in the CPU part (indicators, coefficients, dual updates).
    pub cpu_seconds: f64,
    /// Active shares, dual gap and step sizes of this iteration.
    pub diagnostics: OuterDiagnostics,
}

/// A model as AGD-SBCD sees it: points `v` (its parameters), scores of sample ids at a point,
/// update (14) and linear combinations of points.
pub trait SbcdModel {
    /// A point of the parameter space (the model's parameters).
    type Point: Clone;
    /// The model's error; it must carry the solver's.
    type Error: From<PaucError>;

    /// Scores of the samples `ids` (training-set ids) at `v`, in that order. A model that
    /// needs the forward pass for the gradient keeps it for the next
    /// [`SbcdModel::prox_step`].
    ///
    /// # Errors
    /// The model's own (e.g. an unreadable input).
    fn scores(&mut self, v: &Self::Point, ids: &[usize]) -> Result<Vec<f64>, Self::Error>;

    /// Update (14) after the last [`SbcdModel::scores`] call at `v`:
    /// `v <- (v/eta + w/mu - G) / (1/eta + 1/mu)` with `G = sum_k coef[k] grad s_{ids[k]}(v)`.
    ///
    /// # Errors
    /// The model's own (e.g. a failed backward pass).
    fn prox_step(
        &mut self,
        v: Self::Point,
        w: &Self::Point,
        coef: &[f64],
        eta: f64,
        mu: f64,
    ) -> Result<Self::Point, Self::Error>;

    /// `sum_k a_k p_k` over the trainable parameters (`terms` is not empty); anything else a
    /// point holds (buffers) comes from the first term.
    fn combine(&self, terms: &[(f64, &Self::Point)]) -> Self::Point;
}

/// Both candidates of an outer iteration and its record.
#[derive(Debug, Clone)]
pub struct OuterStep<P> {
    /// `w^(k+1) = w^(k) - gamma/mu (v_bar_m - v_bar_n)` (Algorithm 2, line 5).
    pub w: P,
    /// `v_bar_n^(k)`, the output of Algorithm 2 when `k` is the sampled iteration.
    pub v_bar_n: P,
    /// What the iteration did.
    pub record: SbcdRecord,
}

/// AGD-SBCD's model-free state and iterations (Algorithms 1-2).
#[derive(Debug, Clone)]
pub struct AgdSbcd {
    cfg: AgdSbcdConfig,
    range: RankRange,
    n_pos: usize,
    n_neg: usize,
    /// Position of each sample among the positives (None for negatives).
    pos_index: Vec<Option<usize>>,
    sampler: BlockSampler,
    /// The resumable state.
    pub state: SbcdState,
}

impl AgdSbcd {
    /// The solver for a training set with these labels (`positive[id]`); the duals are zero
    /// until [`AgdSbcd::init_duals`] sets them from the initial model's scores.
    ///
    /// # Errors
    /// [`PaucError`] for bad settings, one class only or blocks larger than a class.
    pub fn new(cfg: AgdSbcdConfig, positive: &[bool]) -> Result<Self, PaucError> {
        let n_pos = positive.iter().filter(|&&p| p).count();
        let n_neg = positive.len() - n_pos;
        if n_pos == 0 || n_neg == 0 {
            return Err(PaucError::OneClass {
                positives: n_pos,
                negatives: n_neg,
            });
        }
        let range = cfg.validate(n_neg)?;
        let sampler =
            BlockSampler::new(positive, cfg.i, cfg.j, cfg.seed).map_err(|_| PaucError::Blocks {
                i: cfg.i,
                j: cfg.j,
                positives: n_pos,
                negatives: n_neg,
            })?;
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
        Ok(AgdSbcd {
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
        })
    }

    /// The settings.
    pub fn config(&self) -> &AgdSbcdConfig {
        &self.cfg
    }

    /// Set both levels' duals from a model's scores (one per training sample, id order) as
    /// [`AgdSbcdConfig::dual_init`] says.
    ///
    /// # Errors
    /// [`PaucError::Scores`] for a wrong count or a non-finite score.
    pub fn init_duals(&mut self, scores: &[f64]) -> Result<(), PaucError> {
        self.set_duals(self.cfg.dual_init, scores)
    }

    /// Set both levels' duals to eq. (19) at the model that gave `scores` (see
    /// [`crate::pauc::sbcd::exact_duals`]).
    ///
    /// # Errors
    /// [`PaucError::Scores`] for a wrong count or a non-finite score.
    pub fn reset_duals(&mut self, scores: &[f64]) -> Result<(), PaucError> {
        self.set_duals(DualInit::Exact, scores)
    }

    fn set_duals(&mut self, init: DualInit, scores: &[f64]) -> Result<(), PaucError> {
        if scores.len() != self.pos_index.len() || scores.iter().any(|s| !s.is_finite()) {
            return Err(PaucError::Scores {
                got: scores.len(),
                want: self.pos_index.len(),
                non_finite: scores.iter().filter(|s| !s.is_finite()).count(),
            });
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

    /// Calls of Algorithm 1 per outer iteration: 2 (levels m and n), or 1 when the FPR range
    /// starts at 0 (m = 0, whose prox is `w` itself).
    pub fn calls(&self) -> usize {
        if self.range.lo > 0.0 { 2 } else { 1 }
    }

    /// Samples one SBCD step visits (I + J).
    pub fn samples_per_step(&self) -> usize {
        self.cfg.i + self.cfg.j
    }

    /// The ids of the next block (positives, then negatives), for passes that re-estimate a
    /// model's buffers.
    pub fn next_block(&mut self) -> Vec<usize> {
        let (pos, neg) = self.sampler.next_block();
        self.state.sampler_step = self.sampler.step;
        pos.into_iter().chain(neg).collect()
    }

    /// Restore a saved state.
    ///
    /// # Errors
    /// [`PaucError::State`] when it holds duals for another number of positives.
    pub fn restore(&mut self, state: SbcdState) -> Result<(), PaucError> {
        for saved in [state.duals_m.lambda.len(), state.duals_n.lambda.len()] {
            if saved != self.n_pos {
                return Err(PaucError::State {
                    saved,
                    positives: self.n_pos,
                });
            }
        }
        self.sampler.step = state.sampler_step;
        self.state = state;
        Ok(())
    }

    /// Algorithm 1 from `w` for the level m (`upper = false`) or n, `iters` steps: returns
    /// `v_bar` (the mean of the iterates `v^(0) = w, ..., v^(T-1)`), the mean sampled level-l
    /// loss, the CPU seconds and what the call did; the duals' average is left in the state.
    ///
    /// # Errors
    /// The model's error, or [`PaucError::NonFinite`] for a non-finite score.
    pub fn algorithm1<S: SbcdModel>(
        &mut self,
        model: &mut S,
        w: &S::Point,
        upper: bool,
        iters: usize,
    ) -> Result<(S::Point, f64, f64, CallStats), S::Error> {
        let k1 = (self.state.k + 1) as f64;
        let pairs = self.n_pos as f64 * self.n_neg as f64;
        let eta = self.cfg.c / (k1 * pairs);
        let theta = self.cfg.dual_constant() / (k1 * self.n_neg as f64);
        let mu = self.cfg.mu_scale / pairs;
        let level = if upper { self.range.hi } else { self.range.lo };
        let mut stats = CallStats {
            eta,
            theta,
            ..CallStats::default()
        };
        let duals = if upper {
            &mut self.state.duals_n
        } else {
            &mut self.state.duals_m
        };
        duals.reset_average();
        let mut v = w.clone();
        let mut v_sum: Option<S::Point> = None;
        let (mut loss_sum, mut cpu) = (0.0, 0.0);
        for _ in 0..iters {
            v_sum = Some(match v_sum {
                None => v.clone(),
                Some(s) => model.combine(&[(1.0, &s), (1.0, &v)]),
            });
            duals.accumulate();
            let (pos, neg) = self.sampler.next_block();
            let ids: Vec<usize> = pos.iter().chain(&neg).copied().collect();
            let scores = model.scores(&v, &ids)?;
            if let Some(&bad) = scores.iter().find(|s| !s.is_finite()) {
                return Err(PaucError::NonFinite {
                    step: self.sampler.step,
                    value: bad,
                }
                .into());
            }
            let t_cpu = std::time::Instant::now();
            let (sp, sn) = scores.split_at(pos.len());
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
                .flat_map(|a| sn.iter().map(move |b| a - b))
                .map(|t| self.cfg.loss.value(t))
                .sum::<f64>()
                / (sp.len() * sn.len()) as f64;
            let coef: Vec<f64> = grads.pos.iter().chain(&grads.neg).copied().collect();
            cpu += t_cpu.elapsed().as_secs_f64();
            v = model.prox_step(v, w, &coef, eta, mu)?;
        }
        self.state.sampler_step = self.sampler.step;
        let v_bar = match v_sum {
            Some(s) => model.combine(&[(1.0 / iters as f64, &s)]),
            None => v,
        };
        Ok((v_bar, loss_sum / iters.max(1) as f64, cpu, stats))
    }

    /// One outer iteration of Algorithm 2 from `w` with at most `budget` SBCD steps in all:
    /// when `T_k` per call does not fit, each call runs `budget / calls` steps (at least
    /// one), so that methods compare at an equal number of samples.
    ///
    /// # Errors
    /// As [`AgdSbcd::algorithm1`]; [`PaucError::Setting`] when `T_k` overflows the integers
    /// and no budget (`usize::MAX`) bounds the call.
    pub fn outer_step<S: SbcdModel>(
        &mut self,
        model: &mut S,
        w: &S::Point,
        budget: usize,
    ) -> Result<OuterStep<S::Point>, S::Error> {
        let calls = self.calls();
        let k1 = self.state.k + 1;
        let cap = (budget / calls).max(1);
        let iters = match k1
            .checked_mul(k1)
            .and_then(|kk| self.cfg.t_scale.checked_mul(kk))
        {
            Some(t_k) => t_k.min(cap),
            // T_k beyond the integers: a finite budget still bounds the call.
            None if budget < usize::MAX => cap,
            None => {
                return Err(PaucError::Setting {
                    name: "t_scale",
                    message: format!(
                        "T_k = t_scale (k+1)^2 = {} x {k1}^2 SBCD steps overflows the step \
                         count at outer iteration {k1}",
                        self.cfg.t_scale
                    ),
                }
                .into());
            }
        };
        let ratio = self.cfg.gamma_scale / self.cfg.mu_scale;
        let first_block = self.sampler.step;
        let mut cpu = 0.0;
        let (v_m, stats_m) = if calls == 2 {
            let (v, _, c, stats) = self.algorithm1(model, w, false, iters)?;
            cpu += c;
            self.state.duals_m.lambda = self.state.duals_m.average();
            (Some(v), Some(stats))
        } else {
            (None, None)
        };
        let after_m = self.sampler.step;
        if self.cfg.common_blocks {
            // The n-call draws the blocks the m-call drew.
            self.sampler.step = first_block;
        }
        let (v_n, sampled_loss, c, stats_n) = self.algorithm1(model, w, true, iters)?;
        cpu += c;
        self.sampler.step = self.sampler.step.max(after_m);
        self.state.sampler_step = self.sampler.step;
        self.state.duals_n.lambda = self.state.duals_n.average();
        // Line 5; with m = 0, v_bar_m = w (the prox of f^0 = 0).
        let w_next = match &v_m {
            Some(v_m) => model.combine(&[(1.0, w), (-ratio, v_m), (ratio, &v_n)]),
            None => model.combine(&[(1.0 - ratio, w), (ratio, &v_n)]),
        };
        self.state.k += 1;
        let diagnostics = OuterDiagnostics::new(
            stats_m,
            stats_n,
            &self.state.duals_m,
            &self.state.duals_n,
            ratio,
        );
        Ok(OuterStep {
            w: w_next,
            v_bar_n: v_n,
            record: SbcdRecord {
                k: self.state.k,
                steps: calls * iters,
                sampled_loss,
                cpu_seconds: cpu,
                diagnostics,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbcd_state_survives_its_vector_form_and_refuses_bad_counts() {
        let mut duals_m = DualState::new(3, 0.25);
        duals_m.accumulate();
        duals_m.lambda[1] = -1.5e-7;
        duals_m.accumulate();
        let state = SbcdState {
            duals_m,
            duals_n: DualState::new(3, 2.0),
            k: 4,
            sampler_step: (1 << 40) + 3,
        };
        let back = SbcdState::from_vectors(state.vectors()).unwrap();
        assert_eq!(back, state);
        // A fractional or negative count, a missing vector, a sum of another length.
        for (name, bad) in [
            ("sbcd_k", vec![2.5]),
            ("sbcd_count_m", vec![-1.0]),
            ("sbcd_sampler_step", vec![1.0, 2.0]),
            ("sbcd_sum_n", vec![0.0]),
        ] {
            let mut v = state.vectors();
            v.iter_mut().find(|(n, _)| *n == name).unwrap().1 = bad;
            let err = SbcdState::from_vectors(v).unwrap_err().to_string();
            assert!(err.contains(name), "{err}");
        }
        let mut v = state.vectors();
        v.retain(|(n, _)| *n != "sbcd_lambda_n");
        assert!(
            SbcdState::from_vectors(v).unwrap_err()
                == SbcdStateError::Missing("sbcd_lambda_n".into())
        );
    }
}
