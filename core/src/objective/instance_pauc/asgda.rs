//! ASGDA, the paper's solver (its Algorithm 1), on PAUCI's and UPAUCI's side: the settings,
//! the batch gradient without a step, the convex-combination move and the momentum-corrected
//! directions of the scalars and weights (the network's direction is
//! rankrisk's `StormDirection`).

use serde::{Deserialize, Serialize};

use super::batch::{GammaStep, Scalars, Softplus, Step, Weights, evaluate, f32s, step_scalars};
use super::{Pauci, Upauci};
use crate::objective::{BatchGradient, Objective, TrainError, check_batch};

config! {
    /// ASGDA's settings (the paper's Algorithm 1, after Huang et al., JMLR 2022): the step
    /// `eta_t = k / (m + t)^(1/3)`, the descent and ascent sizes `nu` and `lambda`, and the
    /// momentum corrections `rho_t = iota_1 eta_t^2`, `xi_t = iota_2 eta_t^2`. The defaults are the
    /// released PAUCI code's for most of its data sets (`train/params.json`: `k = 1`, `m = 1000`,
    /// `nu = lambda = 0.035`, `c1 = c2 = 3`; the paper tunes `m` in [10, 100]).
    pub struct AsgdaConfig {
        required {
        }
        defaults {
            /// `k` of `eta_t`.
            k: f64 = 1.0,
            /// `m` of `eta_t`.
            m: f64 = 1000.0,
            /// `nu`, the descent size of the minimized block (the network and the scalars).
            nu: f64 = 0.035,
            /// `lambda`, the ascent size of `gamma` and the weights.
            lambda: f64 = 0.035,
            /// `iota_1` of `rho_t`.
            iota_1: f64 = 3.0,
            /// `iota_2` of `xi_t`.
            iota_2: f64 = 3.0,
        }
    }
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
pub(super) struct Directions {
    pub(super) scalars: Scalars,
    pub(super) weights: Vec<f64>,
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
/// rankrisk's `StormDirection`.
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

/// A batch's evaluation as what the caller steps with: the loss and `dL/ds`, and the gradient
/// in the scalars and weights.
fn split(st: Step) -> (BatchGradient, MinMaxGradient) {
    let g = MinMaxGradient {
        scalars: st.scalars,
        weights: st.weights,
    };
    let batch = BatchGradient {
        loss: st.loss,
        grad: f32s(st.grad),
    };
    (batch, g)
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
        Ok(split(evaluate(
            &self.region,
            &self.scalars,
            &sel,
            None,
            scores,
            labels,
            ids,
        )?))
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
            let gamma = self.gamma_step;
            step_scalars(
                &mut self.scalars,
                &d.scalars,
                (eta, nu, lambda),
                two_way,
                gamma,
            );
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
        Ok(split(evaluate(
            &self.region,
            &self.scalars,
            &sel,
            Some(&self.weights),
            scores,
            labels,
            ids,
        )?))
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
            let gamma = GammaStep::Ascent;
            step_scalars(
                &mut self.scalars,
                &d.scalars,
                (eta, nu, lambda),
                two_way,
                gamma,
            );
            for (c, w) in self.weights.iter_mut().zip(&d.weights) {
                *c = (1.0 - eta) * *c + eta * (*c + lambda * w).clamp(0.0, 1.0);
            }
        }
    }
}
