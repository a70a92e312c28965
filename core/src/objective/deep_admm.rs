//! Algorithm 1 of the rank-based paper for any model `h_w` (a Burn module in rankrisk): the splitting variable
//! `z_i` and multiplier `lambda_i` of every training sample live on the CPU, with
//! `u_i = -y_i h_w(x_i)` (so `u = D w` for the linear model). One outer iteration:
//!
//! 1. a scoring pass over the training set (no autodiff) gives `u`;
//! 2. after the first iteration, the dual step `lambda += rho (z - u)` and the rho schedule;
//! 3. the z-step `z = PAVA(u - lambda / rho)` (problem 10);
//! 4. the w-step, inexact: mini-batch steps of a Burn optimizer on
//!    `rho/2 ||z - u(w) + lambda/rho||^2 + g(w) + r/2 ||w - w_k||^2`, whose gradient in the
//!    score of sample i is `rho y_i (z_i - u_i + lambda_i / rho)` ([`DeepAdmm`] as an
//!    [`Objective`]); `g(w) = mu/2 ||w||^2` and the proximal term are a face's, built on its
//!    device from [`DeepAdmm::parameter_terms`].
//!
//! The exact linear solver ([`crate::admm::linear`]) is the reference it is tested against.

use serde::{Deserialize, Serialize};

use crate::admm::AdmmError;
use crate::admm::schedule::{Progress, RhoSchedule};
use crate::math::loss::Loss;
use crate::math::pava::Pava;
use crate::math::weights::{Sigma, Weights};
use crate::objective::{
    BatchGradient, Objective, ParameterTerms, Provenance, State, TrainError, check_batch,
    evaluation_batch, unknown_state,
};

config! {
    /// Settings of the deep rank-based ADMM (Algorithm 1 of the rank-based paper with the
    /// w-step by mini-batch steps of the model's optimizer): the rank-based loss of eq. (1) with
    /// `g(w) = mu/2 ||w||^2`. LibAUC has no such method.
    pub struct DeepAdmmConfig {
        required {
            /// Weights `sigma` of the rank-based loss (eq. 1).
            weights: Weights,
        }
        defaults {
            /// Individual loss `l` (default logistic).
            loss: Loss = Loss::Logistic,
            /// Penalty schedule; `None` picks [`RhoSchedule::default_for`].
            rho: Option<RhoSchedule> = None,
            /// `mu` of `g(w) = mu/2 ||w||^2` over every parameter (default 0: none).
            l2: f64 = 0.0,
            /// Proximal weight `r` of the w-step (default 0: no term).
            r: f64 = 0.0,
        }
    }
}

/// The CPU state of the deep ADMM: what a checkpoint must hold to resume without loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdmmState {
    /// Splitting variable, one per training sample (id order).
    pub z: Vec<f64>,
    /// Multipliers, one per training sample.
    pub lambda: Vec<f64>,
    /// Current penalty.
    pub rho: f64,
    /// Outer iterations started.
    pub k: usize,
    /// `u` of the last scoring pass (for the dual residual of the adaptive schedules).
    pub u_prev: Vec<f64>,
    /// `||z_k - z_{k-1}||` of the last z-step.
    pub dz_norm: f64,
}

/// What an outer iteration reports.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OuterRecord {
    /// Outer iteration (1-based).
    pub k: usize,
    /// `sum_i sigma_i l(u_[i])` at the scored model (eq. 1 without `g`).
    pub rank_loss: f64,
    /// `||z - u||` before this iteration's dual step (0 on the first).
    pub primal_residual: f64,
    /// Penalty used by this iteration's z- and w-steps.
    pub rho: f64,
}

/// Deep rank-based ADMM: CPU state and the w-step objective.
#[derive(Debug, Clone)]
pub struct DeepAdmm {
    cfg: DeepAdmmConfig,
    sigma: Sigma,
    schedule: RhoSchedule,
    labels: Vec<f64>,
    u: Vec<f64>,
    pava: Pava,
    /// The resumable state.
    pub state: AdmmState,
    /// What it was built from.
    provenance: Provenance,
}

impl DeepAdmmConfig {
    /// State for a training set with `labels` (in {-1, +1}, id order).
    ///
    /// # Errors
    /// [`TrainError::Spec`] for invalid weights, loss or schedule, [`TrainError::Setting`] for
    /// `l2 < 0` or `r < 0`, [`TrainError::BadLabel`] for labels outside {-1, +1}.
    pub fn init(&self, labels: &[f64]) -> Result<DeepAdmm, TrainError> {
        let cfg = self.clone();
        let n = labels.len();
        cfg.loss.validate()?;
        let sigma = cfg.weights.sigma(n)?;
        if let Some(index) = labels.iter().position(|&y| y != 1.0 && y != -1.0) {
            return Err(TrainError::BadLabel {
                index,
                value: labels[index],
            });
        }
        for (name, value) in [("l2", cfg.l2), ("r", cfg.r)] {
            if value.is_nan() || value < 0.0 {
                return Err(TrainError::Setting {
                    name,
                    requirement: ">= 0",
                    got: value.to_string(),
                });
            }
        }
        let convex = matches!(&sigma, Sigma::Fixed(s) if s.windows(2).all(|p| p[0] <= p[1]));
        let schedule = cfg
            .rho
            .unwrap_or_else(|| RhoSchedule::default_for(&sigma, convex));
        schedule.validate()?;
        let rho = schedule.initial();
        Ok(DeepAdmm {
            cfg,
            sigma,
            schedule,
            labels: labels.to_vec(),
            u: vec![0.0; n],
            pava: Pava::new(),
            state: AdmmState {
                z: vec![0.0; n],
                lambda: vec![0.0; n],
                rho,
                k: 0,
                u_prev: vec![0.0; n],
                dz_norm: 0.0,
            },
            provenance: Provenance::new(self, labels)?,
        })
    }
}

impl DeepAdmm {
    /// Restore a saved state (for resuming).
    ///
    /// # Errors
    /// [`TrainError::State`] when the state is for another number of samples or its penalty is
    /// not positive.
    pub fn restore(&mut self, state: AdmmState) -> Result<(), TrainError> {
        let n = self.labels.len();
        if state.z.len() != n
            || state.lambda.len() != n
            || state.u_prev.len() != n
            || !state.rho.is_finite()
            || state.rho <= 0.0
        {
            return Err(TrainError::State {
                saved: state.z.len(),
                rho: state.rho,
                n,
            });
        }
        self.state = state;
        Ok(())
    }

    /// Number of training samples.
    pub fn n(&self) -> usize {
        self.labels.len()
    }

    /// Steps 1-3 of an outer iteration, given the scores of the whole training set in id
    /// order: dual step and penalty update (after the first iteration), then the z-step.
    ///
    /// # Errors
    /// [`TrainError`] for a wrong length or NaN/inf scores.
    pub fn outer_step(&mut self, scores: &[f64]) -> Result<OuterRecord, TrainError> {
        let n = self.n();
        let ids: Vec<usize> = (0..scores.len()).collect();
        check_batch(scores, &self.labels, &ids, Some(n))?;
        for (u, (&s, &y)) in self.u.iter_mut().zip(scores.iter().zip(&self.labels)) {
            *u = -y * s;
        }
        let rank_loss = self.sigma.rank_loss(&self.cfg.loss, &self.u);
        let st = &mut self.state;
        let mut primal = 0.0;
        if st.k > 0 {
            let (mut primal2, mut dual2) = (0.0, 0.0);
            for i in 0..n {
                let r = st.z[i] - self.u[i];
                st.lambda[i] += st.rho * r;
                primal2 += r * r;
                dual2 += (self.u[i] - st.u_prev[i]).powi(2);
            }
            primal = primal2.sqrt();
            let l2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
            let z_norm = l2(&st.z);
            let dual = st.rho * dual2.sqrt();
            let progress = Progress {
                primal_residual: primal,
                dual_residual: dual,
                dz_norm: st.dz_norm,
                dw_norm: 0.0,
                d_norm: 1.0,
                z_norm,
                primal_relative: primal / z_norm.max(l2(&self.u)).max(1.0),
                dual_relative: dual / l2(&st.lambda).max(1.0),
            };
            st.rho = self.schedule.next(st.k - 1, st.rho, &progress);
            if !(st.rho.is_finite() && st.rho > 0.0) {
                return Err(AdmmError::Schedule {
                    rho: st.rho,
                    iteration: st.k,
                }
                .into());
            }
        }
        st.u_prev.clone_from(&self.u);
        let z_old = st.z.clone();
        let m: Vec<f64> = (0..n).map(|i| self.u[i] - st.lambda[i] / st.rho).collect();
        self.pava
            .solve(&self.cfg.loss, &self.sigma, st.rho, &m, &mut st.z)
            .map_err(AdmmError::from)?;
        st.dz_norm =
            st.z.iter()
                .zip(&z_old)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt();
        st.k += 1;
        Ok(OuterRecord {
            k: st.k,
            rank_loss,
            primal_residual: primal,
            rho: st.rho,
        })
    }

    /// The w-step's terms over the model's parameters, `mu/2 ||w||^2 + r/2 ||w - w_k||^2`
    /// (`w_k` the snapshot taken after [`DeepAdmm::outer_step`]), which a face builds on its
    /// device.
    pub fn parameter_terms(&self) -> ParameterTerms {
        ParameterTerms {
            norm: 0.5 * self.cfg.l2,
            distance: 0.5 * self.cfg.r,
        }
    }
}

impl Objective for DeepAdmm {
    /// The w-step's augmented term on a batch, scaled by `n / b` so that its expectation over
    /// uniform batches is the full sum: loss `n/b sum_i rho/2 (z_i - u_i + lambda_i/rho)^2`,
    /// gradient `n/b rho y_i (z_i - u_i + lambda_i/rho)`.
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        check_batch(scores, labels, ids, Some(self.n()))?;
        if let Some(k) = (0..ids.len()).find(|&k| labels[k] != self.labels[ids[k]]) {
            return Err(TrainError::LabelDisagrees {
                index: k,
                id: ids[k],
                value: labels[k],
                training: self.labels[ids[k]],
            });
        }
        let st = &self.state;
        let scale = self.n() as f64 / ids.len() as f64;
        let mut loss = 0.0;
        let grad = ids
            .iter()
            .zip(scores.iter().zip(labels))
            .map(|(&i, (&s, &y))| {
                let r = st.z[i] + y * s + st.lambda[i] / st.rho;
                loss += 0.5 * st.rho * r * r;
                (scale * st.rho * y * r) as f32
            })
            .collect();
        Ok(BatchGradient {
            loss: scale * loss,
            grad,
        })
    }

    /// The batch's rank-based risk, eq. (1) of the rank-based paper over its `b` losses
    /// `l(-y_i s_i)` with the weights `sigma` for `b` samples (the risk the w-steps drive down;
    /// `z` and `lambda` are the training set's and take no part).
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let (signs, _) = evaluation_batch(scores, labels)?;
        let margins: Vec<f64> = scores.iter().zip(&signs).map(|(&s, &y)| -y * s).collect();
        let sigma = self.cfg.weights.sigma(margins.len())?;
        Ok(sigma.rank_loss(&self.cfg.loss, &margins))
    }

    fn name(&self) -> &'static str {
        "deep ADMM"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    /// `z`, `lambda`, `u_prev` per sample and `[rho, k, dz_norm]`.
    fn state(&self) -> State {
        let st = &self.state;
        vec![
            ("admm_z", st.z.clone()),
            ("admm_lambda", st.lambda.clone()),
            ("admm_u_prev", st.u_prev.clone()),
            ("admm_scalars", vec![st.rho, st.k as f64, st.dz_norm]),
        ]
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        let mut next = self.state.clone();
        for (name, values) in state {
            match (name, values.as_slice()) {
                ("admm_z", _) => next.z = values,
                ("admm_lambda", _) => next.lambda = values,
                ("admm_u_prev", _) => next.u_prev = values,
                ("admm_scalars", &[rho, k, dz_norm]) => {
                    (next.rho, next.k, next.dz_norm) = (rho, k as usize, dz_norm);
                }
                (other, _) => return Err(unknown_state(self.name(), other)),
            }
        }
        self.restore(next)
    }
}
