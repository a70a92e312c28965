//! Instance-wise partial AUC by learned thresholds (Jiang, Xu, Shao, Yang, Bao, Cao, Huang,
//! "Towards Unbiased Partial AUC Optimization", arXiv 2512.01213, 2025, which re-derives the
//! NeurIPS 2022 PAUCI in its section 4.3.1): the one-way pAUC (FPR `<= beta`) and the
//! two-way pAUC (the `alpha` share of lowest-scored positives against the `beta` share of
//! highest-scored negatives, TPR `>= 1 - alpha`) of the square surrogate rewritten as a
//! min-max problem over a few scalars, at a cost linear in the batch instead of pairwise.
//!
//! With the sigmoid scores `f`, per instance (eq. (8), Theorem 1):
//!
//! `P_i = (f_i - a)^2 - 2 (1 + gamma) f_i` (a positive), `N_j = (f_j - b)^2 + 2 (1 + gamma) f_j`
//! (a negative);
//!
//! the top-`beta` negatives are selected by a threshold `s'` through the average-top-k identity
//! (eq. (10)) and, two-way, the bottom-`alpha` positives by `s` (eq. (47)); on a batch with
//! `B+` positives and `B-` negatives the objective is
//!
//! - one-way (`alpha = 1`, eq. (12)): `mean_i P_i + s' + 1/(beta B-) sum_j sel(N_j - s')
//!   - (1 + omega) gamma^2 - theta_b (b - 1 - gamma)`;
//! - two-way (eq. (23) / (25)): `s + 1/(alpha B+) sum_i sel(P_i - s) + s' + 1/(beta B-) sum_j
//!   sel(N_j - s') - (1 + omega) gamma^2 - theta_b (b - 1 - gamma) + theta_a (a + gamma)`,
//!
//! minimized over `a, b in [0, 1]`, `s in [-4, 1]`, `s' in [0, 5]` and the multipliers
//! `theta_a, theta_b in [0, 1e9]` of `gamma >= -a`, `gamma >= b - 1` (Corollary 1, Remark 5),
//! maximized over `gamma in [-1, 1]`. The selection `sel` is
//!
//! - [`Pauci`]: the softplus `r_kappa(x) = log(1 + exp(kappa x)) / kappa` in place of the hinge
//!   `[x]_+` (eq. (13)), biased by `O(1/kappa)` (Theorem 3);
//! - [`Upauci`]: the hinge written `[x]_+ = max_{c in [0,1]} c x` (eq. (16)), one weight `c`
//!   per training instance maximized with `gamma` (eqs. (19), (25)): exact. The weights carry
//!   the regularizer `-omega c^2` per instance, weighted as its selection term, so that
//!   `dH/dc_j = (N_j - s' - 2 omega c_j) / (beta B-)` (the paper writes `-omega ||c||^2`
//!   without its normalization).
//!
//! The gradient in the logits is `dL/df f (1 - f)`, with `dL/df_i = w_i (2 (f_i - a) - 2 (1 +
//! gamma)) / (alpha B+)`, `dL/df_j = w_j (2 (f_j - b) + 2 (1 + gamma)) / (beta B-)` and `w` the
//! selection's derivative (`sigma(kappa x)` for PAUCI, `c` for UPAUCI, 1 for the one-way
//! positives).
//!
//! By [`Objective::batch_gradient`] the scalars (and UPAUCI's weights) take one projected step
//! per batch after the gradient: descent on the minimized ones, ascent on `gamma` and `c`
//! (stochastic gradient descent-ascent, SGDA); the network takes the caller's optimizer step.
//! The paper's own solver, ASGDA (its Algorithm 1: two gradients of the same batch per step,
//! at the old and the new point, and momentum-corrected directions), goes through
//! [`InstanceWise`] and [`AsgdaConfig`], with the network's direction in
//! rankrisk's `StormDirection`; at equal passes it trained worse
//! than SGDA with Adam (docs/GUIDE.md). Where the authors' released PAUCI code departs from the
//! paper, moving `gamma` by descent like the minimized scalars (the ascent branch is commented
//! out, `optimizer/MinMax.py:51-56`), both are here: [`GammaStep`], the code's descent by
//! default (it measured better on validation, issue 56), the paper's ascent as an option;
//! the code's `kappa = 2`, `omega = 0` and the scalars' starting values are the defaults.

mod asgda;
mod batch;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::math::loss::sigmoid;
use crate::objective::{
    BatchGradient, Objective, Provenance, State, TrainError, check_batch, evaluation_batch,
    unknown_state,
};

use asgda::Directions;
pub use asgda::{AsgdaConfig, InstanceWise, MinMaxGradient};
pub use batch::{GammaStep, Scalars, WeightStep};
use batch::{Region, Softplus, Weights, best_weight, evaluate, excess};

config! {
    /// Settings of [`Pauci`] (section 4.3.1; the defaults are the authors' released code,
    /// `Shaocr/PAUCI`: `losses/SPAUCI.py`, `train/train_SPAUCI.py`).
    pub struct PauciConfig {
        required {
        }
        defaults {
            /// Share of the positives kept, the lowest-scored (TPR `>= 1 - alpha`), `0 < alpha <= 1`;
            /// 1 is the one-way pAUC (the code's default).
            alpha: f64 = 1.0,
            /// The FPR bound, `0 < beta <= 1` (the code's 0.3).
            beta: f64 = 0.3,
            /// Sharpness `kappa` of the softplus (the code's 2; the paper tunes it in [2, 6]).
            kappa: f64 = 2.0,
            /// Extra concavity `omega` in `gamma` (the code's 0; the paper tunes it in [0, 4]).
            omega: f64 = 0.0,
            /// Step size of the scalars' projected steps.
            lr: f64 = 0.01,
            /// Which way `gamma` moves ([`GammaStep`]): descent as the released code moves it
            /// (the default), or ascent as the paper's eq. (12) maximizes it.
            gamma_step: GammaStep = GammaStep::Descent,
        }
    }
}

config! {
    /// Settings of [`Upauci`] (section 4.3.2; no code was released: the defaults follow the
    /// paper's advice in section 7.7 where it gives one).
    pub struct UpauciConfig {
        required {
        }
        defaults {
            /// Share of the positives kept, the lowest-scored (TPR `>= 1 - alpha`), `0 < alpha <= 1`;
            /// 1 is the one-way pAUC.
            alpha: f64 = 1.0,
            /// The FPR bound, `0 < beta <= 1`.
            beta: f64 = 0.3,
            /// `omega` of `-omega (gamma^2 + c^2)` (section 7.7: `omega > 0` helps, 1 hurts one-way;
            /// the tables' value is not given, 0.1 is ours).
            omega: f64 = 0.1,
            /// Step size of the scalars' projected steps.
            lr: f64 = 0.01,
            /// Step size of the weights' projected ascent.
            lr_weights: f64 = 0.1,
            /// Starting weight of every instance (section 7.7: a large one is best one-way, 1).
            initial_weight: f64 = 1.0,
            /// How a weight moves at each visit ([`WeightStep`]): the exact ascent in `c` (the
            /// default, chosen on validation, issue 56) or the paper's gradient step (what the
            /// frontier tables of docs/RESULTS.md before issue 56 ran).
            weight_step: WeightStep = WeightStep::Exact,
        }
    }
}

impl PauciConfig {
    /// PAUCI for a training set with `labels` (id order; +1 positive, -1 or 0 negative, which
    /// its record fingerprints), with the released code's starting scalars: `a = b = s = s' =
    /// 0.5`, `gamma = 1`, the multipliers at 0.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 < alpha, beta <= 1`, `kappa > 0`, `omega >= 0`,
    /// `lr >= 0`; [`TrainError::BadLabel`] for a label other than +1, -1 or 0.
    pub fn init(&self, labels: &[f64]) -> Result<Pauci, TrainError> {
        let region = Region::new("PAUCI", self.alpha, self.beta, self.omega, self.lr)?;
        if !(self.kappa > 0.0 && self.kappa.is_finite()) {
            return Err(TrainError::Setting {
                name: "kappa",
                requirement: "> 0 and finite",
                got: format!("{} (PAUCI)", self.kappa),
            });
        }
        Ok(Pauci {
            region,
            kappa: self.kappa,
            gamma_step: self.gamma_step,
            scalars: Scalars {
                a: 0.5,
                b: 0.5,
                gamma: 1.0,
                s_pos: 0.5,
                s_neg: 0.5,
                theta_a: 0.0,
                theta_b: 0.0,
            },
            directions: None,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// PAUCI: the instance-wise pAUC with softplus selection. Built by [`PauciConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pauci {
    region: Region,
    kappa: f64,
    /// Which way `gamma` moves (absent from checkpoints written before 2026-11-27, read as
    /// the ascent they ran with).
    #[serde(default = "GammaStep::before_the_setting")]
    gamma_step: GammaStep,
    /// The scalars.
    pub scalars: Scalars,
    /// ASGDA's directions (None until [`InstanceWise::correct_directions`]).
    directions: Option<Directions>,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

impl Objective for Pauci {
    /// The gradient at the current scalars, then their projected steps; the loss is the
    /// batch objective at the current scalars.
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        let (g, d) = self.gradients(scores, labels, ids)?;
        self.region
            .sgda_step(&mut self.scalars, &d.scalars, self.gamma_step);
        Ok(g)
    }

    /// The batch objective at the current scalars (PAUCI keeps no per-sample state), as
    /// [`Objective::batch_gradient`] reports it before its step.
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let (signs, positions) = evaluation_batch(scores, labels)?;
        let sel = Softplus(self.kappa);
        let st = evaluate(
            &self.region,
            &self.scalars,
            &sel,
            None,
            scores,
            &signs,
            &positions,
        )?;
        Ok(st.loss)
    }

    fn name(&self) -> &'static str {
        "PAUCI"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        let mut state = vec![("pauci_scalars", self.scalars.values())];
        if let Some(d) = &self.directions {
            state.push(("pauci_directions", d.scalars.values()));
        }
        state
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        for (name, values) in state {
            match (name, Scalars::from_values(&values)) {
                ("pauci_scalars", Some(x)) => self.scalars = x,
                ("pauci_directions", Some(x)) => {
                    self.directions = Some(Directions {
                        scalars: x,
                        weights: Vec::new(),
                    });
                }
                (other, _) => return Err(unknown_state(self.name(), other)),
            }
        }
        Ok(())
    }
}

impl UpauciConfig {
    /// UPAUCI for a training set with `labels` (id order; +1 positive, -1 or 0 negative, which
    /// its record fingerprints), one weight per instance (ids `0..n`) at `initial_weight`, the
    /// scalars as section 7.7 advises (`a = 1`, `b = 0`, `gamma = 0`) and the thresholds at
    /// the released PAUCI code's 0.5.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 < alpha, beta <= 1`, `omega >= 0`, the step sizes are
    /// `>= 0`, `0 <= initial_weight <= 1` and the set is not empty; [`TrainError::BadLabel`]
    /// for a label other than +1, -1 or 0.
    pub fn init(&self, labels: &[f64]) -> Result<Upauci, TrainError> {
        let n = labels.len();
        let region = Region::new("UPAUCI", self.alpha, self.beta, self.omega, self.lr)?;
        for (name, requirement, ok, v) in [
            (
                "lr_weights",
                ">= 0 and finite",
                self.lr_weights >= 0.0 && self.lr_weights.is_finite(),
                self.lr_weights,
            ),
            (
                "initial_weight",
                "in [0, 1]",
                (0.0..=1.0).contains(&self.initial_weight),
                self.initial_weight,
            ),
            ("the training set's size", "> 0", n > 0, n as f64),
        ] {
            if !ok {
                return Err(TrainError::Setting {
                    name,
                    requirement,
                    got: format!("{v} (UPAUCI)"),
                });
            }
        }
        Ok(Upauci {
            region,
            lr_weights: self.lr_weights,
            scalars: Scalars {
                a: 1.0,
                b: 0.0,
                gamma: 0.0,
                s_pos: 0.5,
                s_neg: 0.5,
                theta_a: 0.0,
                theta_b: 0.0,
            },
            weight_step: self.weight_step,
            weights: vec![self.initial_weight; n],
            directions: None,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// UPAUCI: the instance-wise pAUC with one selection weight per training instance. Built by
/// [`UpauciConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Upauci {
    region: Region,
    lr_weights: f64,
    /// The scalars.
    pub scalars: Scalars,
    /// How the weights move (absent from checkpoints written before 2026-11-27, read as the
    /// paper's step they ran with).
    #[serde(default = "WeightStep::before_the_setting")]
    weight_step: WeightStep,
    /// The weights `c in [0, 1]`, one per training instance by id (one-way, only the
    /// negatives' are used).
    pub weights: Vec<f64>,
    /// ASGDA's directions (None until [`InstanceWise::correct_directions`]).
    directions: Option<Directions>,
    /// What it was built from (not in the legacy serde form of checkpoints before
    /// 2026-11-26, which gives its state only).
    #[serde(skip)]
    provenance: Provenance,
}

impl Objective for Upauci {
    /// The gradient at the current scalars and weights, then the scalars' projected steps and
    /// the projected ascent of the batch instances' weights (an instance twice in a batch
    /// steps twice); the loss is the batch objective before the steps.
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        if self.weight_step == WeightStep::Exact {
            // The weights' exact ascent first (each at its maximizer for the current scalars),
            // then the scalars' step at those weights: block-coordinate ascent-descent.
            check_batch(scores, labels, ids, Some(self.weights.len()))?;
            for ((&s, &y), &id) in scores.iter().zip(labels).zip(ids) {
                if y < 0.0 || self.region.two_way() {
                    let x = excess(&self.scalars, sigmoid(s), y > 0.0);
                    self.weights[id] = best_weight(x, self.region.omega);
                }
            }
        }
        let (g, d) = self.gradients(scores, labels, ids)?;
        self.region
            .sgda_step(&mut self.scalars, &d.scalars, GammaStep::Ascent);
        if self.weight_step == WeightStep::Paper {
            for (id, dc) in d.weights {
                self.weights[id] = (self.weights[id] + self.lr_weights * dc).clamp(0.0, 1.0);
            }
        }
        Ok(g)
    }

    /// The batch objective at the current scalars with each instance's weight at its
    /// maximizer, `c = clip((x - t) / (2 omega), 0, 1)` (`1[x > t]` when `omega = 0`) for its
    /// selection term's `x - t` (`N_j - s'`, or two-way `P_i - s`): what the weights of the
    /// batch's instances tend to at these scalars, no training id needed.
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let (signs, positions) = evaluation_batch(scores, labels)?;
        let weights: Vec<f64> = scores
            .iter()
            .zip(&signs)
            .map(|(&s, &y)| {
                let x = excess(&self.scalars, sigmoid(s), y > 0.0);
                best_weight(x, self.region.omega)
            })
            .collect();
        let sel = Weights(&weights);
        let st = evaluate(
            &self.region,
            &self.scalars,
            &sel,
            Some(&weights),
            scores,
            &signs,
            &positions,
        )?;
        Ok(st.loss)
    }

    fn name(&self) -> &'static str {
        "UPAUCI"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        let mut state = vec![
            ("upauci_scalars", self.scalars.values()),
            ("upauci_weights", self.weights.clone()),
        ];
        if let Some(d) = &self.directions {
            state.push(("upauci_directions", d.scalars.values()));
            state.push(("upauci_weight_directions", d.weights.clone()));
        }
        state
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        for (name, values) in state {
            match name {
                "upauci_scalars" => match Scalars::from_values(&values) {
                    Some(x) => self.scalars = x,
                    None => return Err(unknown_state(self.name(), name)),
                },
                "upauci_weights" if values.len() == self.weights.len() => self.weights = values,
                "upauci_directions" => match Scalars::from_values(&values) {
                    Some(x) => {
                        let n = self.weights.len();
                        self.directions
                            .get_or_insert_with(|| Directions {
                                scalars: x,
                                weights: vec![0.0; n],
                            })
                            .scalars = x;
                    }
                    None => return Err(unknown_state(self.name(), name)),
                },
                "upauci_weight_directions" if values.len() == self.weights.len() => {
                    self.directions
                        .get_or_insert_with(|| Directions {
                            scalars: Scalars::zero(),
                            weights: Vec::new(),
                        })
                        .weights = values;
                }
                other => return Err(unknown_state(self.name(), other)),
            }
        }
        Ok(())
    }
}
