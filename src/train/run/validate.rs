//! The check of a run's settings before any data is read ([`RunConfig::validate`]).

use crate::device::remote::DeviceSpec;
use crate::metrics::RankRange;
use crate::pauc::PaucError;
use crate::train::recipe::OptimizerKind;
use crate::train::run::config::{Method, RunConfig, Solver};
use crate::train::run::error::RunError;

impl RunConfig {
    /// Check every setting before any data is read or any step is taken: a budget of at least
    /// one pass, a batch of at least 2, a positive finite learning rate, `0 <= alpha < beta <=
    /// 1`, every float setting finite (whichever method reads it), and for AGD-SBCD the whole
    /// [`AgdSbcdConfig`](crate::pauc::agd::AgdSbcdConfig) under the run's keys (`c`
    /// is `lr`) (`rankrisk train --dry-run` runs this; the step budget, which needs the
    /// training set's size, is [`RunConfig::step_budget`]).
    ///
    /// # Errors
    /// [`RunError::Setting`] naming the setting, or [`RunError::Pauc`].
    pub fn validate(&self) -> Result<(), RunError> {
        let bad = |key, message: String| Err(RunError::Setting { key, message });
        self.validate_budget()?;
        let lr = self.lr();
        if !(lr.is_finite() && lr > 0.0) {
            return bad("lr", format!("must be a positive number, got {lr}"));
        }
        if let Err(e) = RankRange::from_fpr(self.alpha, self.beta, 1) {
            return bad("alpha, beta", e.to_string());
        }
        // Every float setting is finite, whichever method reads it.
        for (key, value) in [
            ("mu_scale", self.mu_scale),
            ("gamma_scale", self.gamma_scale),
            ("c_dual", self.c_dual.unwrap_or(1.0)),
        ] {
            if !value.is_finite() {
                return bad(key, format!("the value {value} is not finite"));
            }
        }
        if self.method == Method::Sbcd {
            self.sbcd_config().validate(1).map_err(sbcd_setting)?;
        }
        self.validate_objective_settings()?;
        self.validate_recipe()?;
        if let Some(DeviceSpec::Remote(url)) = self.devices.first() {
            return bad(
                "devices",
                format!(
                    "the first device holds the model, the optimizer and the CPU state, so it \
                     must be a backend of this machine, not remote:{url}"
                ),
            );
        }
        Ok(())
    }

    /// The recipe's part of [`RunConfig::validate`] ([`Recipe::validate`](crate::train::recipe::Recipe::validate)
    /// with the run's optimizer, epochs and rate): AGD-SBCD and ASGDA, which step by their
    /// own rules, take no optimizer, weight decay, momentum, schedule or warm-up (AGD-SBCD no
    /// evaluation period either: it evaluates after each outer iteration); AUC-M's PESG is
    /// SGD's step.
    fn validate_recipe(&self) -> Result<(), RunError> {
        let bad = |key, message: String| Err(RunError::Setting { key, message });
        let own_rule = match (self.method, self.solver) {
            (Method::Sbcd, _) => Some("AGD-SBCD's weight step is eq. (14) with its own c (lr)"),
            (Method::Pauci | Method::Upauci, Solver::Asgda) => {
                Some("ASGDA steps by eta_t = k / (m + t)^(1/3) along its own directions")
            }
            _ => None,
        };
        if let Some(rule) = own_rule {
            let period = (self.method == Method::Sbcd && self.recipe.eval_every.is_some())
                .then_some("eval_every");
            if let Some(key) = self.recipe.first_set_key().or(period) {
                return bad(
                    key,
                    format!("{rule}; it takes no {key} (leave {key} out for this run)"),
                );
            }
        }
        let kind = self.recipe.optimizer_or(self.default_optimizer());
        if self.method == Method::Aucm && kind != OptimizerKind::Sgd {
            return bad(
                "optimizer",
                format!(
                    "AUC-M trains with PESG, SGD's step with its decay terms (weight_decay, \
                     epoch_decay): optimizer = \"sgd\", not {kind:?}"
                ),
            );
        }
        Ok(self.recipe.validate(kind, self.epochs, self.lr())?)
    }

    /// The budget's part of [`RunConfig::validate`]: at least one pass, a batch of at least
    /// 2, and `epochs x batch` within the integers.
    fn validate_budget(&self) -> Result<(), RunError> {
        let bad = |key, message: String| Err(RunError::Setting { key, message });
        if self.epochs == 0 {
            return bad("epochs", "the budget must be at least 1 pass".into());
        }
        if self.batch < 2 {
            return bad(
                "batch",
                format!(
                    "at least 2 samples per step (one of each class), got {}",
                    self.batch
                ),
            );
        }
        // Any training set takes at least one step of `batch` samples per pass, so this bound
        // of [`RunConfig::step_budget`] holds whatever the data: checked here, before a run
        // writes anything.
        if self.epochs.checked_mul(self.batch).is_none() {
            return bad(
                "epochs",
                format!(
                    "{} passes of at least one step of batch {} overflow the step count of {}: \
                     at most {} passes",
                    self.epochs,
                    self.batch,
                    self.method.name(),
                    usize::MAX / self.batch
                ),
            );
        }
        Ok(())
    }

    /// The objectives' part of [`RunConfig::validate`]: the pair margin, SOPA's step, the DRO
    /// weights and the gradient clip.
    fn validate_objective_settings(&self) -> Result<(), RunError> {
        let bad = |key, message: String| Err(RunError::Setting { key, message });
        for (key, value, ok) in [
            ("margin", self.margin, self.margin > 0.0),
            ("sopa_eta", self.sopa_eta, self.sopa_eta > 0.0),
            ("dro_lambda", self.dro_lambda, self.dro_lambda > 0.0),
            ("dro_tau", self.dro_tau, self.dro_tau > 0.0),
            (
                "dro_gamma",
                self.dro_gamma,
                self.dro_gamma > 0.0 && self.dro_gamma <= 1.0,
            ),
            ("staco_margin", self.staco_margin, self.staco_margin > 0.0),
            ("kappa", self.kappa, self.kappa > 0.0),
        ] {
            if !(ok && value.is_finite()) {
                let allowed = if key == "dro_gamma" {
                    "in (0, 1]"
                } else {
                    "positive"
                };
                return bad(key, format!("must be {allowed}, got {value}"));
            }
        }
        for (key, value) in [
            ("staco_alpha", self.staco_alpha),
            ("staco_beta_0", self.staco_beta_0),
            ("staco_beta_1", self.staco_beta_1),
            ("omega", self.omega()),
            ("scalar_lr", self.scalar_lr),
            ("weights_lr", self.weights_lr),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return bad(key, format!("must be >= 0 and finite, got {value}"));
            }
        }
        self.validate_asgda()?;
        if !((0.0..1.0).contains(&self.tpr_min)) {
            return bad(
                "tpr_min",
                format!("must be in [0, 1), got {}", self.tpr_min),
            );
        }
        if !(self.fpr_max > 0.0 && self.fpr_max <= 1.0) {
            return bad(
                "fpr_max",
                format!("must be in (0, 1], got {}", self.fpr_max),
            );
        }
        if let Some(c) = self.grad_clip
            && !(c.is_finite() && c >= 0.0)
        {
            return bad(
                "grad_clip",
                format!("must be positive, got {c} (0 turns clamping off)"),
            );
        }
        Ok(())
    }

    /// ASGDA's settings, checked whatever the solver, each under its own key, so that a config
    /// that is accepted reads back as it was saved; with `solver = "asgda"`, the method and
    /// the devices too.
    fn validate_asgda(&self) -> Result<(), RunError> {
        let bad = |key, message: String| Err(RunError::Setting { key, message });
        for (key, value, positive) in [
            ("asgda_k", self.asgda_k, true),
            ("asgda_m", self.asgda_m, false),
            ("asgda_nu", self.asgda_nu, true),
            ("asgda_lambda", self.asgda_lambda, true),
            ("asgda_iota", self.asgda_iota, false),
        ] {
            let ok = value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 };
            if !ok {
                let rule = if positive { "> 0" } else { ">= 0" };
                return bad(key, format!("must be {rule} and finite, got {value}"));
            }
        }
        if self.solver == Solver::Asgda {
            if !matches!(self.method, Method::Pauci | Method::Upauci) {
                return bad(
                    "solver",
                    format!("asgda trains pauci and upauci, not {}", self.method.name()),
                );
            }
            if self.devices.len() > 1 {
                return bad(
                    "solver",
                    "asgda runs on one device (no --devices list)".to_string(),
                );
            }
            self.asgda_config().check().map_err(|e| RunError::Setting {
                key: "solver",
                message: e.to_string(),
            })?;
        }
        Ok(())
    }
}

/// AGD-SBCD's refusal of a setting as the run's key: `c` is `lr`, the block sizes come from
/// `batch`; other errors as they are.
fn sbcd_setting(e: PaucError) -> RunError {
    match e {
        PaucError::NotPositive { name, value } => {
            let key = match name {
                "c" => "lr",
                "i" | "j" => "batch",
                other => other,
            };
            RunError::Setting {
                key,
                message: format!("must be positive, got {value}"),
            }
        }
        other => RunError::Pauc(other),
    }
}
