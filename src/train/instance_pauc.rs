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
//! [`StormDirection`](crate::train::storm::StormDirection); at equal passes it trained worse
//! than SGDA with Adam (docs/GUIDE.md). Where the authors' released PAUCI code departs from the paper, this follows the paper:
//! the code moves `gamma` by descent like the minimized scalars (the ascent branch is commented
//! out, `optimizer/MinMax.py:51-56`); its `kappa = 2`, `omega = 0` and the scalars' starting
//! values are the defaults here.

use burn::config::Config;
use serde::{Deserialize, Serialize};

use crate::math::loss::sigmoid;
use crate::train::objective::{BatchGradient, Objective, TrainError, check_batch, unknown_state};
use crate::train::state_record::State;

/// Upper bound `M` of the multipliers `theta_a`, `theta_b` (Remark 5).
const MULTIPLIER_BOUND: f64 = 1e9;

/// Settings of [`Pauci`] (section 4.3.1; the defaults are the authors' released code,
/// `Shaocr/PAUCI`: `losses/SPAUCI.py`, `train/train_SPAUCI.py`).
#[derive(Config, Debug)]
pub struct PauciConfig {
    /// Share of the positives kept, the lowest-scored (TPR `>= 1 - alpha`), `0 < alpha <= 1`;
    /// 1 is the one-way pAUC (the code's default).
    #[config(default = 1.0)]
    pub alpha: f64,
    /// The FPR bound, `0 < beta <= 1` (the code's 0.3).
    #[config(default = 0.3)]
    pub beta: f64,
    /// Sharpness `kappa` of the softplus (the code's 2; the paper tunes it in [2, 6]).
    #[config(default = 2.0)]
    pub kappa: f64,
    /// Extra concavity `omega` in `gamma` (the code's 0; the paper tunes it in [0, 4]).
    #[config(default = 0.0)]
    pub omega: f64,
    /// Step size of the scalars' projected steps.
    #[config(default = 0.01)]
    pub lr: f64,
}

/// Settings of [`Upauci`] (section 4.3.2; no code was released: the defaults follow the
/// paper's advice in section 7.7 where it gives one).
#[derive(Config, Debug)]
pub struct UpauciConfig {
    /// Share of the positives kept, the lowest-scored (TPR `>= 1 - alpha`), `0 < alpha <= 1`;
    /// 1 is the one-way pAUC.
    #[config(default = 1.0)]
    pub alpha: f64,
    /// The FPR bound, `0 < beta <= 1`.
    #[config(default = 0.3)]
    pub beta: f64,
    /// `omega` of `-omega (gamma^2 + c^2)` (section 7.7: `omega > 0` helps, 1 hurts one-way;
    /// the tables' value is not given, 0.1 is ours).
    #[config(default = 0.1)]
    pub omega: f64,
    /// Step size of the scalars' projected steps.
    #[config(default = 0.01)]
    pub lr: f64,
    /// Step size of the weights' projected ascent.
    #[config(default = 0.1)]
    pub lr_weights: f64,
    /// Starting weight of every instance (section 7.7: a large one is best one-way, 1).
    #[config(default = 1.0)]
    pub initial_weight: f64,
}

/// The scalars of the min-max problem.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Scalars {
    /// `a in [0, 1]`, where the positives' scores are pulled.
    pub a: f64,
    /// `b in [0, 1]`, where the selected negatives' scores are pulled.
    pub b: f64,
    /// `gamma in [-1, 1]`, the maximized dual of the square loss's cross term.
    pub gamma: f64,
    /// `s in [-4, 1]`, the positives' selection threshold (two-way).
    pub s_pos: f64,
    /// `s' in [0, 5]`, the negatives' selection threshold.
    pub s_neg: f64,
    /// `theta_a in [0, 1e9]`, the multiplier of `gamma >= -a` (two-way).
    pub theta_a: f64,
    /// `theta_b in [0, 1e9]`, the multiplier of `gamma >= b - 1`.
    pub theta_b: f64,
}

impl Scalars {
    fn zero() -> Self {
        Scalars::from_values(&[0.0; 7]).expect("seven values")
    }

    /// The values in the order of [`Scalars::from_values`].
    fn values(&self) -> Vec<f64> {
        vec![
            self.a,
            self.b,
            self.gamma,
            self.s_pos,
            self.s_neg,
            self.theta_a,
            self.theta_b,
        ]
    }

    fn from_values(v: &[f64]) -> Option<Self> {
        match *v {
            [a, b, gamma, s_pos, s_neg, theta_a, theta_b] => Some(Scalars {
                a,
                b,
                gamma,
                s_pos,
                s_neg,
                theta_a,
                theta_b,
            }),
            _ => None,
        }
    }
}

/// The settings both methods share, checked.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Region {
    alpha: f64,
    beta: f64,
    omega: f64,
    lr: f64,
}

impl Region {
    fn new(
        name: &'static str,
        alpha: f64,
        beta: f64,
        omega: f64,
        lr: f64,
    ) -> Result<Self, TrainError> {
        let check = |setting: &'static str, requirement: &'static str, ok: bool, v: f64| {
            if ok {
                Ok(())
            } else {
                Err(TrainError::Setting {
                    name: setting,
                    requirement,
                    got: format!("{v} ({name})"),
                })
            }
        };
        check(
            "alpha",
            "0 < alpha <= 1",
            alpha > 0.0 && alpha <= 1.0,
            alpha,
        )?;
        check("beta", "0 < beta <= 1", beta > 0.0 && beta <= 1.0, beta)?;
        check(
            "omega",
            ">= 0 and finite",
            omega >= 0.0 && omega.is_finite(),
            omega,
        )?;
        check("lr", ">= 0 and finite", lr >= 0.0 && lr.is_finite(), lr)?;
        Ok(Region {
            alpha,
            beta,
            omega,
            lr,
        })
    }

    fn two_way(&self) -> bool {
        self.alpha < 1.0
    }
}

/// How an instance is selected: the derivative `w` of `sel` at `x` and `sel(x)`.
trait Selection {
    fn select(&self, x: f64, id: usize) -> (f64, f64);
}

/// The softplus `r_kappa`.
struct Softplus(f64);

impl Selection for Softplus {
    fn select(&self, x: f64, _: usize) -> (f64, f64) {
        let k = self.0;
        // log(1 + exp(k x)) / k without overflow.
        let value = ((k * x).max(0.0) + (-(k * x).abs()).exp().ln_1p()) / k;
        (sigmoid(k * x), value)
    }
}

/// The weights `c`.
struct Weights<'a>(&'a [f64]);

impl Selection for Weights<'_> {
    fn select(&self, x: f64, id: usize) -> (f64, f64) {
        let c = self.0[id];
        (c, c * x)
    }
}

/// What one batch gives: the loss, `dL/ds` per score, the scalars' gradient, and per
/// selected instance `(id, dL/dc)` (the selection terms' derivative in their weight).
struct Step {
    loss: f64,
    grad: Vec<f64>,
    scalars: Scalars,
    weights: Vec<(usize, f64)>,
}

/// The objective and its gradients on one batch (the module docs' equations).
fn evaluate(
    r: &Region,
    x: &Scalars,
    sel: &impl Selection,
    omega_weights: Option<&[f64]>,
    scores: &[f64],
    labels: &[f64],
    ids: &[usize],
) -> Result<Step, TrainError> {
    let n_pos = labels.iter().filter(|&&y| y > 0.0).count();
    let n_neg = labels.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return Err(TrainError::OneClassBatch {
            positives: n_pos,
            negatives: n_neg,
        });
    }
    let (pos_scale, neg_scale) = (r.alpha * n_pos as f64, r.beta * n_neg as f64);
    let two_way = r.two_way();
    let g1 = 1.0 + x.gamma;
    let mut loss =
        x.s_neg - (1.0 + r.omega) * x.gamma * x.gamma - x.theta_b * (x.b - 1.0 - x.gamma);
    if two_way {
        loss += x.s_pos + x.theta_a * (x.a + x.gamma);
    }
    let mut d = Scalars {
        a: if two_way { x.theta_a } else { 0.0 },
        b: -x.theta_b,
        gamma: -2.0 * (1.0 + r.omega) * x.gamma + x.theta_b + if two_way { x.theta_a } else { 0.0 },
        s_pos: if two_way { 1.0 } else { 0.0 },
        s_neg: 1.0,
        theta_a: if two_way { x.a + x.gamma } else { 0.0 },
        theta_b: -(x.b - 1.0 - x.gamma),
    };
    let mut grad = vec![0.0; scores.len()];
    let mut weights = Vec::new();
    for (k, ((&s, &y), &id)) in scores.iter().zip(labels).zip(ids).enumerate() {
        let f = sigmoid(s);
        if y > 0.0 {
            let p = (f - x.a).powi(2) - 2.0 * g1 * f;
            let (w, value) = if two_way {
                sel.select(p - x.s_pos, id)
            } else {
                (1.0, p)
            };
            loss += value / pos_scale;
            grad[k] = w * (2.0 * (f - x.a) - 2.0 * g1) / pos_scale * f * (1.0 - f);
            d.a += w * (-2.0 * (f - x.a)) / pos_scale;
            d.gamma += w * (-2.0 * f) / pos_scale;
            if two_way {
                d.s_pos -= w / pos_scale;
                if let Some(c) = omega_weights {
                    loss -= r.omega * c[id] * c[id] / pos_scale;
                    weights.push((id, (p - x.s_pos - 2.0 * r.omega * c[id]) / pos_scale));
                }
            }
        } else {
            let n = (f - x.b).powi(2) + 2.0 * g1 * f;
            let (w, value) = sel.select(n - x.s_neg, id);
            loss += value / neg_scale;
            grad[k] = w * (2.0 * (f - x.b) + 2.0 * g1) / neg_scale * f * (1.0 - f);
            d.b += w * (-2.0 * (f - x.b)) / neg_scale;
            d.gamma += w * (2.0 * f) / neg_scale;
            d.s_neg -= w / neg_scale;
            if let Some(c) = omega_weights {
                loss -= r.omega * c[id] * c[id] / neg_scale;
                weights.push((id, (n - x.s_neg - 2.0 * r.omega * c[id]) / neg_scale));
            }
        }
    }
    Ok(Step {
        loss,
        grad,
        scalars: d,
        weights,
    })
}

/// The projected steps of the scalars: `x <- (1 - eta) x + eta Proj(x - nu d)` for the
/// minimized ones, `gamma <- (1 - eta) gamma + eta Proj(gamma + lambda d_gamma)` (ASGDA's
/// convex combination; `eta = 1` with `nu = lambda = lr` is the plain projected step).
fn step_scalars(x: &mut Scalars, d: &Scalars, (eta, nu, lambda): (f64, f64, f64), two_way: bool) {
    let mix = |v: f64, moved: f64| (1.0 - eta) * v + eta * moved;
    x.a = mix(x.a, (x.a - nu * d.a).clamp(0.0, 1.0));
    x.b = mix(x.b, (x.b - nu * d.b).clamp(0.0, 1.0));
    x.gamma = mix(x.gamma, (x.gamma + lambda * d.gamma).clamp(-1.0, 1.0));
    x.s_neg = mix(x.s_neg, (x.s_neg - nu * d.s_neg).clamp(0.0, 5.0));
    x.theta_b = mix(
        x.theta_b,
        (x.theta_b - nu * d.theta_b).clamp(0.0, MULTIPLIER_BOUND),
    );
    if two_way {
        x.s_pos = mix(x.s_pos, (x.s_pos - nu * d.s_pos).clamp(-4.0, 1.0));
        x.theta_a = mix(
            x.theta_a,
            (x.theta_a - nu * d.theta_a).clamp(0.0, MULTIPLIER_BOUND),
        );
    }
}

/// ASGDA's settings (the paper's Algorithm 1, after Huang et al., JMLR 2022): the step
/// `eta_t = k / (m + t)^(1/3)`, the descent and ascent sizes `nu` and `lambda`, and the
/// momentum corrections `rho_t = iota_1 eta_t^2`, `xi_t = iota_2 eta_t^2`. The defaults are the
/// released PAUCI code's for most of its data sets (`train/params.json`: `k = 1`, `m = 1000`,
/// `nu = lambda = 0.035`, `c1 = c2 = 3`; the paper tunes `m` in [10, 100]).
#[derive(Config, Debug)]
pub struct AsgdaConfig {
    /// `k` of `eta_t`.
    #[config(default = 1.0)]
    pub k: f64,
    /// `m` of `eta_t`.
    #[config(default = 1000.0)]
    pub m: f64,
    /// `nu`, the descent size of the minimized block (the network and the scalars).
    #[config(default = 0.035)]
    pub nu: f64,
    /// `lambda`, the ascent size of `gamma` and the weights.
    #[config(default = 0.035)]
    pub lambda: f64,
    /// `iota_1` of `rho_t`.
    #[config(default = 3.0)]
    pub iota_1: f64,
    /// `iota_2` of `xi_t`.
    #[config(default = 3.0)]
    pub iota_2: f64,
}

impl AsgdaConfig {
    /// `eta_t = k / (m + t)^(1/3)` (at most 1).
    pub fn eta(&self, t: usize) -> f64 {
        (self.k / (self.m + t as f64).cbrt()).min(1.0)
    }

    /// `rho_t = iota_1 eta_t^2` (at most 1).
    pub fn rho(&self, t: usize) -> f64 {
        (self.iota_1 * self.eta(t).powi(2)).min(1.0)
    }

    /// `xi_t = iota_2 eta_t^2` (at most 1).
    pub fn xi(&self, t: usize) -> f64 {
        (self.iota_2 * self.eta(t).powi(2)).min(1.0)
    }

    /// The settings checked: all finite and positive (`m >= 0`).
    ///
    /// # Errors
    /// [`TrainError::Setting`] naming the first that is not.
    pub fn check(&self) -> Result<(), TrainError> {
        for (name, v, ok) in [
            ("ASGDA's k", self.k, self.k > 0.0),
            ("ASGDA's m", self.m, self.m >= 0.0),
            ("ASGDA's nu", self.nu, self.nu > 0.0),
            ("ASGDA's lambda", self.lambda, self.lambda > 0.0),
            ("ASGDA's iota_1", self.iota_1, self.iota_1 >= 0.0),
            ("ASGDA's iota_2", self.iota_2, self.iota_2 >= 0.0),
        ] {
            if !(ok && v.is_finite()) {
                return Err(TrainError::Setting {
                    name,
                    requirement: "finite and positive (m, iota >= 0)",
                    got: v.to_string(),
                });
            }
        }
        Ok(())
    }
}

/// The batch objective's gradient in the scalars (`gamma`'s the ascent direction) and in
/// the weights of the batch's instances, `(id, dL/dc)`, an instance twice in the batch twice.
#[derive(Debug, Clone, PartialEq)]
pub struct MinMaxGradient {
    /// In the scalars.
    pub scalars: Scalars,
    /// In the weights (UPAUCI; empty for PAUCI).
    pub weights: Vec<(usize, f64)>,
}

/// ASGDA's momentum-corrected directions of the scalars (`v` and, in its `gamma`, `w`) and of
/// the weights (one per training instance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Directions {
    scalars: Scalars,
    weights: Vec<f64>,
}

impl Directions {
    /// `d <- new + (1 - rho) (d - old)` (`xi` for `gamma` and the weights); the first call
    /// (`None`) starts at `new`. Instances outside the batch have no gradient at either
    /// point, so their direction decays by `1 - xi`.
    fn correct(
        this: &mut Option<Directions>,
        n_weights: usize,
        new: &MinMaxGradient,
        old: Option<&MinMaxGradient>,
        (rho, xi): (f64, f64),
    ) {
        let d = this.get_or_insert_with(|| Directions {
            scalars: Scalars::zero(),
            weights: vec![0.0; n_weights],
        });
        let keep = if old.is_some() {
            (1.0 - rho, 1.0 - xi)
        } else {
            (0.0, 0.0)
        };
        let zero = Scalars::zero();
        let o = old.map_or(&zero, |g| &g.scalars);
        let v = d.scalars.values();
        let (nv, ov) = (new.scalars.values(), o.values());
        let mixed: Vec<f64> = (0..v.len())
            .map(|i| {
                // Index 2 is gamma, in the maximized block.
                let k = if i == 2 { keep.1 } else { keep.0 };
                nv[i] + k * (v[i] - ov[i])
            })
            .collect();
        d.scalars = Scalars::from_values(&mixed).expect("seven values");
        for w in &mut d.weights {
            *w *= keep.1;
        }
        for &(id, g) in &new.weights {
            d.weights[id] += g;
        }
        if let Some(old) = old {
            for &(id, g) in &old.weights {
                d.weights[id] -= keep.1 * g;
            }
        }
    }
}

/// PAUCI and UPAUCI under ASGDA (the paper's solver): a caller's loop evaluates the batch
/// gradient at the current point ([`InstanceWise::gradients`], no step), moves by
/// [`InstanceWise::asgda_move`], evaluates the same batch at the new point and corrects the
/// directions ([`InstanceWise::correct_directions`]); the network's part is
/// [`StormDirection`](crate::train::storm::StormDirection).
pub trait InstanceWise: Objective {
    /// The loss, `dL/ds` and the gradient in the scalars and weights at the current point,
    /// nothing changed.
    ///
    /// # Errors
    /// As [`Objective::batch_gradient`].
    fn gradients(
        &self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<(BatchGradient, MinMaxGradient), TrainError>;

    /// The directions at `new` (the batch's gradient at the new point), corrected by `old`
    /// (the same batch at the previous point): `v <- new + (1 - rho)(v - old)`, `xi` for the
    /// maximized block; without `old`, the directions start at `new`.
    fn correct_directions(
        &mut self,
        new: &MinMaxGradient,
        old: Option<&MinMaxGradient>,
        rho: f64,
        xi: f64,
    );

    /// `x <- (1 - eta) x + eta Proj(x - nu v)` for the minimized scalars, `y <- (1 - eta) y +
    /// eta Proj(y + lambda w)` for `gamma` and the weights, along the current directions
    /// (no move before the first [`InstanceWise::correct_directions`]).
    fn asgda_move(&mut self, eta: f64, nu: f64, lambda: f64);

    /// Hold zero directions from now on, so that the objective's state (and record) has the
    /// directions' entries before the first step, as a checkpoint written after it does (a
    /// run under ASGDA calls this once when it builds the objective).
    fn zero_directions(&mut self);
}

fn f32s(v: Vec<f64>) -> Vec<f32> {
    v.into_iter().map(|g| g as f32).collect()
}

impl PauciConfig {
    /// PAUCI with the released code's starting scalars: `a = b = s = s' = 0.5`, `gamma = 1`,
    /// the multipliers at 0.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 < alpha, beta <= 1`, `kappa > 0`, `omega >= 0`,
    /// `lr >= 0`.
    pub fn init(&self) -> Result<Pauci, TrainError> {
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
        })
    }
}

/// PAUCI: the instance-wise pAUC with softplus selection. Built by [`PauciConfig::init`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pauci {
    region: Region,
    kappa: f64,
    /// The scalars.
    pub scalars: Scalars,
    /// ASGDA's directions (None until [`InstanceWise::correct_directions`]).
    directions: Option<Directions>,
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
        check_batch(scores, labels, ids, None)?;
        let sel = Softplus(self.kappa);
        let st = evaluate(&self.region, &self.scalars, &sel, None, scores, labels, ids)?;
        let lr = self.region.lr;
        step_scalars(
            &mut self.scalars,
            &st.scalars,
            (1.0, lr, lr),
            self.region.two_way(),
        );
        Ok(BatchGradient {
            loss: st.loss,
            grad: f32s(st.grad),
        })
    }

    fn name(&self) -> &'static str {
        "PAUCI"
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
    /// UPAUCI for a training set of `n` instances (ids `0..n`), every weight at
    /// `initial_weight`, the scalars as section 7.7 advises (`a = 1`, `b = 0`, `gamma = 0`)
    /// and the thresholds at the released PAUCI code's 0.5.
    ///
    /// # Errors
    /// [`TrainError::Setting`] unless `0 < alpha, beta <= 1`, `omega >= 0`, the step sizes are
    /// `>= 0`, `0 <= initial_weight <= 1` and `n > 0`.
    pub fn init(&self, n: usize) -> Result<Upauci, TrainError> {
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
            weights: vec![self.initial_weight; n],
            directions: None,
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
    /// The weights `c in [0, 1]`, one per training instance by id (one-way, only the
    /// negatives' are used).
    pub weights: Vec<f64>,
    /// ASGDA's directions (None until [`InstanceWise::correct_directions`]).
    directions: Option<Directions>,
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
        check_batch(scores, labels, ids, Some(self.weights.len()))?;
        let sel = Weights(&self.weights);
        let st = evaluate(
            &self.region,
            &self.scalars,
            &sel,
            Some(&self.weights),
            scores,
            labels,
            ids,
        )?;
        let lr = self.region.lr;
        step_scalars(
            &mut self.scalars,
            &st.scalars,
            (1.0, lr, lr),
            self.region.two_way(),
        );
        for (id, d) in st.weights {
            self.weights[id] = (self.weights[id] + self.lr_weights * d).clamp(0.0, 1.0);
        }
        Ok(BatchGradient {
            loss: st.loss,
            grad: f32s(st.grad),
        })
    }

    fn name(&self) -> &'static str {
        "UPAUCI"
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

impl InstanceWise for Pauci {
    fn gradients(
        &self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<(BatchGradient, MinMaxGradient), TrainError> {
        check_batch(scores, labels, ids, None)?;
        let sel = Softplus(self.kappa);
        let st = evaluate(&self.region, &self.scalars, &sel, None, scores, labels, ids)?;
        let g = MinMaxGradient {
            scalars: st.scalars,
            weights: Vec::new(),
        };
        Ok((
            BatchGradient {
                loss: st.loss,
                grad: f32s(st.grad),
            },
            g,
        ))
    }

    fn correct_directions(
        &mut self,
        new: &MinMaxGradient,
        old: Option<&MinMaxGradient>,
        rho: f64,
        xi: f64,
    ) {
        Directions::correct(&mut self.directions, 0, new, old, (rho, xi));
    }

    fn zero_directions(&mut self) {
        self.directions = Some(Directions {
            scalars: Scalars::zero(),
            weights: Vec::new(),
        });
    }

    fn asgda_move(&mut self, eta: f64, nu: f64, lambda: f64) {
        if let Some(d) = &self.directions {
            let two_way = self.region.two_way();
            step_scalars(&mut self.scalars, &d.scalars, (eta, nu, lambda), two_way);
        }
    }
}

impl InstanceWise for Upauci {
    fn gradients(
        &self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<(BatchGradient, MinMaxGradient), TrainError> {
        check_batch(scores, labels, ids, Some(self.weights.len()))?;
        let sel = Weights(&self.weights);
        let st = evaluate(
            &self.region,
            &self.scalars,
            &sel,
            Some(&self.weights),
            scores,
            labels,
            ids,
        )?;
        let g = MinMaxGradient {
            scalars: st.scalars,
            weights: st.weights,
        };
        Ok((
            BatchGradient {
                loss: st.loss,
                grad: f32s(st.grad),
            },
            g,
        ))
    }

    fn correct_directions(
        &mut self,
        new: &MinMaxGradient,
        old: Option<&MinMaxGradient>,
        rho: f64,
        xi: f64,
    ) {
        let n = self.weights.len();
        Directions::correct(&mut self.directions, n, new, old, (rho, xi));
    }

    fn zero_directions(&mut self) {
        self.directions = Some(Directions {
            scalars: Scalars::zero(),
            weights: vec![0.0; self.weights.len()],
        });
    }

    fn asgda_move(&mut self, eta: f64, nu: f64, lambda: f64) {
        if let Some(d) = &self.directions {
            let two_way = self.region.two_way();
            step_scalars(&mut self.scalars, &d.scalars, (eta, nu, lambda), two_way);
            for (c, w) in self.weights.iter_mut().zip(&d.weights) {
                *c = (1.0 - eta) * *c + eta * (*c + lambda * w).clamp(0.0, 1.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::objective::check_fd;

    /// Three positives and four negatives.
    fn batch() -> (Vec<f64>, Vec<f64>) {
        (
            vec![0.8, -0.3, 1.7, 0.2, -1.1, 0.9, -2.0],
            vec![1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0],
        )
    }

    fn scalars() -> Scalars {
        Scalars {
            a: 0.7,
            b: 0.2,
            gamma: 0.3,
            s_pos: -0.4,
            s_neg: 0.6,
            theta_a: 0.05,
            theta_b: 0.1,
        }
    }

    #[test]
    fn gradients_match_finite_differences() {
        let (s, y) = batch();
        for (alpha, beta) in [(1.0, 0.3), (0.5, 0.5), (0.3, 0.3)] {
            let mut p = PauciConfig::new()
                .with_alpha(alpha)
                .with_beta(beta)
                .with_omega(0.4)
                .init()
                .unwrap();
            p.scalars = scalars();
            check_fd(&p, &s, &y);
            let mut u = UpauciConfig::new()
                .with_alpha(alpha)
                .with_beta(beta)
                .init(s.len())
                .unwrap();
            u.scalars = scalars();
            u.weights = vec![0.9, 0.1, 0.5, 1.0, 0.0, 0.3, 0.7];
            check_fd(&u, &s, &y);
        }
    }

    #[test]
    fn pauci_batch_loss_and_gradient_are_the_formula_by_hand() {
        // Two-way, one positive and one negative: every term written out.
        let (s, y, ids) = ([0.4, -0.7], [1.0, -1.0], [0, 1]);
        let (alpha, beta, kappa, omega) = (0.5, 0.25, 3.0, 0.2);
        let mut p = PauciConfig::new()
            .with_alpha(alpha)
            .with_beta(beta)
            .with_kappa(kappa)
            .with_omega(omega)
            .init()
            .unwrap();
        let x = scalars();
        p.scalars = x;
        let out = p.batch_gradient(&s, &y, &ids).unwrap();
        let (fp, fn_) = (sigmoid(0.4), sigmoid(-0.7));
        let r = |v: f64| (1.0 + (kappa * v).exp()).ln() / kappa;
        let pp = (fp - x.a).powi(2) - 2.0 * (1.0 + x.gamma) * fp;
        let nn = (fn_ - x.b).powi(2) + 2.0 * (1.0 + x.gamma) * fn_;
        let want = x.s_pos + r(pp - x.s_pos) / alpha + x.s_neg + r(nn - x.s_neg) / beta
            - (1.0 + omega) * x.gamma * x.gamma
            - x.theta_b * (x.b - 1.0 - x.gamma)
            + x.theta_a * (x.a + x.gamma);
        assert!((out.loss - want).abs() < 1e-12, "{} vs {want}", out.loss);
        let q = sigmoid(kappa * (pp - x.s_pos));
        let gp = q * (2.0 * (fp - x.a) - 2.0 * (1.0 + x.gamma)) / alpha * fp * (1.0 - fp);
        assert!((f64::from(out.grad[0]) - gp).abs() < 1e-6);
        let q = sigmoid(kappa * (nn - x.s_neg));
        let gn = q * (2.0 * (fn_ - x.b) + 2.0 * (1.0 + x.gamma)) / beta * fn_ * (1.0 - fn_);
        assert!((f64::from(out.grad[1]) - gn).abs() < 1e-6);
        // gamma moved up its gradient, the thresholds down theirs, within their boxes.
        let dg = -2.0 * fp * sigmoid(kappa * (pp - x.s_pos)) / alpha + 2.0 * fn_ * q / beta
            - 2.0 * (1.0 + omega) * x.gamma
            + x.theta_b
            + x.theta_a;
        let lr = PauciConfig::new().lr;
        assert!((p.scalars.gamma - (x.gamma + lr * dg).clamp(-1.0, 1.0)).abs() < 1e-12);
        let ds = 1.0 - q / beta;
        assert!((p.scalars.s_neg - (x.s_neg - lr * ds).clamp(0.0, 5.0)).abs() < 1e-12);
    }

    #[test]
    fn a_sharp_softplus_is_the_hinge_and_upauci_at_indicator_weights() {
        let (s, y) = batch();
        let ids: Vec<usize> = (0..s.len()).collect();
        for alpha in [1.0, 0.5] {
            let mut p = PauciConfig::new()
                .with_alpha(alpha)
                .with_kappa(1e5)
                .init()
                .unwrap();
            p.scalars = scalars();
            let mut u = UpauciConfig::new()
                .with_alpha(alpha)
                .with_omega(0.0)
                .init(s.len())
                .unwrap();
            u.scalars = scalars();
            // c = 1[instance loss > its threshold]: the hinge's own selection.
            let x = scalars();
            u.weights = s
                .iter()
                .zip(&y)
                .map(|(&v, &l)| {
                    let f = sigmoid(v);
                    let over = if l > 0.0 {
                        (f - x.a).powi(2) - 2.0 * (1.0 + x.gamma) * f > x.s_pos
                    } else {
                        (f - x.b).powi(2) + 2.0 * (1.0 + x.gamma) * f > x.s_neg
                    };
                    f64::from(u8::from(over))
                })
                .collect();
            let a = p.batch_gradient(&s, &y, &ids).unwrap();
            let b = u.batch_gradient(&s, &y, &ids).unwrap();
            assert!((a.loss - b.loss).abs() < 1e-4, "{} vs {}", a.loss, b.loss);
            for (g, h) in a.grad.iter().zip(&b.grad) {
                assert!((g - h).abs() < 1e-5, "{g} vs {h}");
            }
        }
    }

    #[test]
    fn upauci_weights_converge_to_the_hinges_indicator() {
        // Scalars held (lr 0): each weight climbs to 1 where its instance's loss exceeds the
        // threshold and falls to 0 where it does not.
        let (s, y) = batch();
        let ids: Vec<usize> = (0..s.len()).collect();
        let mut u = UpauciConfig::new()
            .with_alpha(0.5)
            .with_omega(0.0)
            .with_lr(0.0)
            .with_lr_weights(0.5)
            .with_initial_weight(0.5)
            .init(s.len())
            .unwrap();
        u.scalars = scalars();
        for _ in 0..200 {
            u.batch_gradient(&s, &y, &ids).unwrap();
        }
        let x = scalars();
        for (k, (&v, &l)) in s.iter().zip(&y).enumerate() {
            let f = sigmoid(v);
            let excess = if l > 0.0 {
                (f - x.a).powi(2) - 2.0 * (1.0 + x.gamma) * f - x.s_pos
            } else {
                (f - x.b).powi(2) + 2.0 * (1.0 + x.gamma) * f - x.s_neg
            };
            let want = if excess > 0.0 { 1.0 } else { 0.0 };
            assert_eq!(u.weights[k], want, "instance {k}: excess {excess}");
        }
        assert_eq!(u.scalars, scalars());
    }

    #[test]
    fn state_round_trips_and_bad_input_is_refused() {
        let (s, y) = batch();
        let ids: Vec<usize> = (0..s.len()).collect();
        let mut a = UpauciConfig::new().with_alpha(0.5).init(7).unwrap();
        a.batch_gradient(&s, &y, &ids).unwrap();
        let mut b = UpauciConfig::new().with_alpha(0.5).init(7).unwrap();
        b.set_state(a.state()).unwrap();
        assert_eq!(a, b);
        let mut p = PauciConfig::new().init().unwrap();
        p.batch_gradient(&s, &y, &ids).unwrap();
        let mut q = PauciConfig::new().init().unwrap();
        q.set_state(p.state()).unwrap();
        assert_eq!(p, q);
        assert!(q.set_state(vec![("pauci_scalars", vec![1.0])]).is_err());
        assert!(b.set_state(vec![("upauci_weights", vec![1.0])]).is_err());
        assert!(PauciConfig::new().with_beta(0.0).init().is_err());
        assert!(PauciConfig::new().with_kappa(-1.0).init().is_err());
        assert!(
            UpauciConfig::new()
                .with_initial_weight(2.0)
                .init(7)
                .is_err()
        );
        assert!(UpauciConfig::new().init(0).is_err());
        // One class, and an id past the weights.
        assert!(b.batch_gradient(&s[..3], &y[..3], &ids[..3]).is_err());
        assert!(b.batch_gradient(&s, &y, &[0, 1, 2, 3, 4, 5, 7]).is_err());
    }

    #[test]
    fn asgda_directions_follow_the_correction_and_decay_outside_the_batch() {
        let (s, y) = batch();
        let ids: Vec<usize> = (0..s.len()).collect();
        let mut u = UpauciConfig::new().with_alpha(0.5).init(9).unwrap();
        u.scalars = scalars();
        let (_, g1) = u.gradients(&s, &y, &ids).unwrap();
        u.correct_directions(&g1, None, 0.2, 0.4);
        let d = u.directions.clone().unwrap();
        assert_eq!(d.scalars, g1.scalars);
        for &(id, g) in &g1.weights {
            assert_eq!(d.weights[id], g);
        }
        // A second batch without instances 7 and 8: theirs decay by 1 - xi; every other
        // follows new + (1 - rho) (v - old), xi for gamma and the weights.
        u.weights[7] = 0.5;
        u.directions.as_mut().unwrap().weights[7] = 2.0;
        let (_, g2) = u.gradients(&s, &y, &ids).unwrap();
        let s3: Vec<f64> = s.iter().map(|v| v + 0.3).collect();
        let (_, g3) = u.gradients(&s3, &y, &ids).unwrap();
        let before = u.directions.clone().unwrap();
        u.correct_directions(&g2, Some(&g3), 0.2, 0.4);
        let after = u.directions.clone().unwrap();
        let (v, n, o, w) = (
            before.scalars.values(),
            g2.scalars.values(),
            g3.scalars.values(),
            after.scalars.values(),
        );
        for i in 0..7 {
            let keep = if i == 2 { 0.6 } else { 0.8 };
            assert!(
                (w[i] - (n[i] + keep * (v[i] - o[i]))).abs() < 1e-12,
                "scalar {i}"
            );
        }
        assert!((after.weights[7] - 0.6 * 2.0).abs() < 1e-12);
        for k in 0..7 {
            let want = g2.weights[k].1 + 0.6 * (before.weights[k] - g3.weights[k].1);
            assert!((after.weights[k] - want).abs() < 1e-12, "weight {k}");
        }
    }

    #[test]
    fn an_asgda_move_at_eta_one_is_the_projected_step() {
        let (s, y) = batch();
        let ids: Vec<usize> = (0..s.len()).collect();
        let mut a = PauciConfig::new()
            .with_alpha(0.5)
            .with_lr(0.3)
            .init()
            .unwrap();
        a.scalars = scalars();
        let mut b = a.clone();
        // No direction yet: no move.
        b.asgda_move(0.5, 0.3, 0.3);
        assert_eq!(b.scalars, a.scalars);
        let (_, g) = b.gradients(&s, &y, &ids).unwrap();
        b.correct_directions(&g, None, 0.1, 0.1);
        b.asgda_move(1.0, 0.3, 0.3);
        a.batch_gradient(&s, &y, &ids).unwrap();
        assert_eq!(a.scalars, b.scalars);
        // A smaller eta moves part of the way, along the same direction.
        let mut c = a.clone();
        let start = c.scalars;
        c.correct_directions(&g, None, 0.1, 0.1);
        c.asgda_move(0.25, 0.3, 0.3);
        let mut full = start;
        step_scalars(&mut full, &g.scalars, (1.0, 0.3, 0.3), true);
        let (x0, x1, xc) = (start.values(), full.values(), c.scalars.values());
        for i in 0..7 {
            assert!(
                (xc[i] - (0.75 * x0[i] + 0.25 * x1[i])).abs() < 1e-12,
                "scalar {i}"
            );
        }
        // The directions are state: they survive a round trip.
        let mut d = PauciConfig::new().with_alpha(0.5).init().unwrap();
        d.set_state(c.state()).unwrap();
        assert_eq!(d.directions, c.directions);
    }
}
