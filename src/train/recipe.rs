//! Training recipes: the optimizer, its weight decay and momentum, and the learning-rate
//! schedule of a run, as the papers and LibAUC's tutorials train (the pAUC paper, section 5:
//! CE with Adam and AUC-M with PESG, the rate divided by 10 every 5 epochs, MB's rate decaying
//! as Kar et al. 2014; LibAUC's SOPA-s tutorial: Adam with weight decay 5e-4, the rate divided
//! by 10 at epochs 20 and 40 of 60).
//!
//! [`Recipe`] is one settings type: the image runs flatten it into
//! [`RunConfig`](crate::train::run::RunConfig), so the command line, `rankrisk train`'s config
//! files, grids, checkpoints and resume read the same keys; a user's own loop and
//! burn-train's `Learner` take the same type ([`Recipe::init_optimizer`],
//! [`Recipe::init_scheduler`]). Burn builds both:
//! the optimizers are burn-optim's `Adam`, `AdamW` and `Sgd` (with `MomentumConfig`), the
//! schedules its constant, sequential (step decay at given epochs, warm-up), cosine-annealing,
//! linear (warm-up) and Noam (Kar et al.'s `lr / sqrt(t)`) schedulers.
//!
//! Every rate is a function of the step count alone, so a resumed run continues its schedule
//! by replaying the scheduler up to the checkpoint's step ([`Recipe::scheduler_at`]).

use burn::grad_clipping::GradientClippingConfig;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::lr_scheduler::LrSchedulerConfig;
use burn::optim::lr_scheduler::cosine::CosineAnnealingLrSchedulerConfig;
use burn::optim::lr_scheduler::linear::LinearLrSchedulerConfig;
use burn::optim::lr_scheduler::module_lr_scheduler::{ModuleLrScheduler, ModuleLrSchedulerConfig};
use burn::optim::lr_scheduler::noam::NoamLrSchedulerConfig;
use burn::optim::lr_scheduler::sequential::SequentialLrSchedulerConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, AdamWConfig, ModuleOptimizer, SgdConfig};
use rankrisk_core::finite_f64;
use serde::{Deserialize, Serialize};

/// A recipe setting that cannot run, naming its key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct RecipeError {
    /// The setting (its key in config files, its flag on the command line).
    pub key: &'static str,
    /// What is wrong and what would run.
    pub message: String,
}

fn refuse<T>(key: &'static str, message: String) -> Result<T, RecipeError> {
    Err(RecipeError { key, message })
}

/// The optimizer of the model's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum OptimizerKind {
    /// Adam (Kingma and Ba 2015); weight decay as an L2 term added to the gradient, as
    /// PyTorch's `Adam` and LibAUC's Adam modes apply it.
    Adam,
    /// AdamW (Loshchilov and Hutter 2019): weight decay decoupled from the gradient.
    Adamw,
    /// SGD, with momentum and Nesterov's variant when `momentum > 0` (PyTorch's `SGD` with
    /// dampening 0); weight decay as an L2 term added to the gradient.
    Sgd,
}

/// How the learning rate moves over a run (after the warm-up, when there is one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// The rate throughout.
    #[default]
    Constant,
    /// The rate divided by `decay_factor` at each of `decay_epochs` (LibAUC's
    /// `update_lr(decay_factor)` at its `decay_epochs`; the pAUC paper: 10-fold every 5
    /// epochs).
    Step,
    /// Cosine annealing from the rate to `lr_min` over the run's steps after the warm-up
    /// (PyTorch's `CosineAnnealingLR` with `T_max` the run's steps), rate at step `j`:
    /// `lr_min + (lr - lr_min) (1 + cos(pi j / T)) / 2`.
    Cosine,
    /// `lr / sqrt(t)` at the `t`-th step (1-based) after the warm-up: the step of Kar et al.
    /// 2014's mini-batch method, as the pAUC paper decays MB's rate.
    InverseSqrt,
}

/// The training recipe of a run: optimizer, weight decay, momentum, learning-rate schedule,
/// warm-up and evaluation period. The defaults are the recipe every run had before these
/// settings existed (the method's own optimizer, a constant rate, an evaluation per epoch), so
/// a run saved without them reads as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct Recipe {
    /// The optimizer (`adam`, `adamw`, `sgd`); default the method's: Adam for CE, SOPA,
    /// SOPA-s, SOTA-s, STACO, PAUCI, UPAUCI; SGD for MB; AUC-M's is PESG (SGD with its
    /// proximal and decay terms, `sgd` only); AGD-SBCD and ASGDA take none.
    #[arg(long, value_enum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<OptimizerKind>,
    /// Weight decay: the coefficient `lambda` of `lambda w` added to the gradient (Adam, SGD;
    /// AUC-M's PESG term `weight_decay * w`), or AdamW's decoupled decay. Default: AUC-M 1e-4
    /// (the value it always trained with), the other methods 0.
    #[arg(long, value_parser = finite_f64)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_decay: Option<f64>,
    /// SGD's momentum (0: none; PyTorch's `SGD(momentum=...)` with dampening 0).
    #[arg(long, default_value_t = 0.0, value_parser = finite_f64)]
    #[serde(default)]
    pub momentum: f64,
    /// Nesterov's momentum (with `momentum > 0`).
    #[arg(long)]
    #[serde(default)]
    pub nesterov: bool,
    /// Adam's and AdamW's epsilon: Burn's default 1e-5; PyTorch's `Adam`, which LibAUC's
    /// runs use, has 1e-8.
    #[arg(long, default_value_t = adam_epsilon(), value_parser = finite_f64)]
    #[serde(default = "adam_epsilon")]
    pub adam_epsilon: f64,
    /// AUC-M's PESG: the coefficient of the proximal term `epoch_decay (w - w_ref)` (LibAUC's
    /// `epoch_decay`, `1 / gamma` of the PESG paper; the pAUC paper tunes gamma in {100, 500,
    /// 1000}, that is 1e-2, 2e-3, 1e-3).
    #[arg(long, default_value_t = epoch_decay(), value_parser = finite_f64)]
    #[serde(default = "epoch_decay")]
    pub epoch_decay: f64,
    /// The learning-rate schedule: `constant`, `step` (divide by `decay_factor` at
    /// `decay_epochs`), `cosine` (to `lr_min`), `inverse-sqrt` (`lr / sqrt(t)`).
    #[arg(long, value_enum, default_value = "constant")]
    #[serde(default)]
    pub lr_schedule: Schedule,
    /// `step`: the epochs after which the rate is divided by `decay_factor`, comma-separated,
    /// increasing, each below the run's `epochs` (LibAUC's tutorial: 20,40 of 60).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decay_epochs: Vec<usize>,
    /// `step`: the factor each decay divides the rate by (LibAUC's `decay_factor`).
    #[arg(long, default_value_t = decay_factor(), value_parser = finite_f64)]
    #[serde(default = "decay_factor")]
    pub decay_factor: f64,
    /// `cosine`: the rate at the end of the run.
    #[arg(long, default_value_t = 0.0, value_parser = finite_f64)]
    #[serde(default)]
    pub lr_min: f64,
    /// Steps of linear warm-up before the schedule: the `k`-th step (1-based) at
    /// `lr k / (warmup_steps + 1)`.
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub warmup_steps: usize,
    /// Evaluate (and checkpoint, and keep the best model) every this many steps instead of
    /// every epoch, so that "the best model over all iterations" is chosen at this grain.
    #[arg(long, value_name = "STEPS")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_every: Option<usize>,
}

/// Burn's `AdamConfig` epsilon, 1e-5, what runs trained with before the setting existed
/// (PyTorch's `Adam`, which LibAUC's runs use, has 1e-8).
pub(crate) fn adam_epsilon() -> f64 {
    1e-5
}

/// LibAUC's PESG `epoch_decay` (gamma = 500), what AUC-M trained with before the setting.
pub(crate) fn epoch_decay() -> f64 {
    2e-3
}

/// LibAUC's tutorials divide the rate by 10.
pub(crate) fn decay_factor() -> f64 {
    10.0
}

impl Default for Recipe {
    fn default() -> Self {
        Recipe {
            optimizer: None,
            weight_decay: None,
            momentum: 0.0,
            nesterov: false,
            adam_epsilon: adam_epsilon(),
            epoch_decay: epoch_decay(),
            lr_schedule: Schedule::Constant,
            decay_epochs: Vec::new(),
            decay_factor: decay_factor(),
            lr_min: 0.0,
            warmup_steps: 0,
            eval_every: None,
        }
    }
}

impl Recipe {
    /// Whether every optimizer and schedule setting is at its default (AGD-SBCD and ASGDA,
    /// which step by their own rules, take no other); the first one that is not, by key.
    pub fn first_set_key(&self) -> Option<&'static str> {
        let d = Recipe::default();
        [
            ("optimizer", self.optimizer != d.optimizer),
            ("weight_decay", self.weight_decay.is_some_and(|w| w != 0.0)),
            ("momentum", self.momentum != d.momentum),
            ("nesterov", self.nesterov),
            ("lr_schedule", self.lr_schedule != d.lr_schedule),
            ("decay_epochs", !self.decay_epochs.is_empty()),
            ("warmup_steps", self.warmup_steps != 0),
        ]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key))
    }

    /// The optimizer in use: the setting, else `default` (the method's).
    pub fn optimizer_or(&self, default: OptimizerKind) -> OptimizerKind {
        self.optimizer.unwrap_or(default)
    }

    /// Check the settings for a run of `epochs` passes at base rate `lr` whose optimizer is
    /// `kind` (the step counts, which need the training set's size, are checked by
    /// [`Recipe::init_scheduler`]).
    ///
    /// # Errors
    /// [`RecipeError`] naming the key: a negative or non-finite weight decay, momentum outside
    /// `[0, 1)` or with Adam/AdamW, Nesterov without momentum, a non-positive epsilon, epoch
    /// decay or decay factor, `decay_epochs` without the step schedule, empty, not
    /// increasing, zero or not below `epochs`, a cosine or warm-up rate above 1 (Burn's bound)
    /// or `lr_min` outside `[0, lr]`, an evaluation period of 0.
    pub fn validate(&self, kind: OptimizerKind, epochs: usize, lr: f64) -> Result<(), RecipeError> {
        let wd = self.weight_decay.unwrap_or(0.0);
        if !(wd >= 0.0 && wd.is_finite()) {
            return refuse("weight_decay", format!("must be >= 0, got {wd}"));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return refuse(
                "momentum",
                format!("must be in [0, 1), got {}", self.momentum),
            );
        }
        if self.momentum > 0.0 && kind != OptimizerKind::Sgd {
            return refuse(
                "momentum",
                format!("is SGD's; this run's optimizer is {kind:?} (optimizer = \"sgd\")"),
            );
        }
        if self.nesterov && self.momentum == 0.0 {
            return refuse("nesterov", "needs momentum > 0".into());
        }
        for (key, value) in [
            ("adam_epsilon", self.adam_epsilon),
            ("epoch_decay", self.epoch_decay),
            ("decay_factor", self.decay_factor),
        ] {
            if !(value > 0.0 && value.is_finite()) {
                return refuse(key, format!("must be positive, got {value}"));
            }
        }
        self.validate_schedule(epochs, lr)?;
        if self.eval_every == Some(0) {
            return refuse("eval_every", "must be at least 1 step".into());
        }
        Ok(())
    }

    /// The schedule's part of [`Recipe::validate`].
    fn validate_schedule(&self, epochs: usize, lr: f64) -> Result<(), RecipeError> {
        let step = self.lr_schedule == Schedule::Step;
        match (&self.decay_epochs[..], step) {
            ([], true) => {
                return refuse(
                    "decay_epochs",
                    "the step schedule needs the epochs to decay at (e.g. decay_epochs = [5])"
                        .into(),
                );
            }
            ([_, ..], false) => {
                return refuse(
                    "decay_epochs",
                    format!(
                        "apply to lr_schedule = \"step\"; this run's is {:?}",
                        self.lr_schedule
                    ),
                );
            }
            _ => {}
        }
        for (i, &e) in self.decay_epochs.iter().enumerate() {
            if e == 0 || e >= epochs {
                return refuse(
                    "decay_epochs",
                    format!(
                        "{e} is not within the run: each must be in 1..{epochs} (epochs = {epochs})"
                    ),
                );
            }
            if i > 0 && e <= self.decay_epochs[i - 1] {
                return refuse(
                    "decay_epochs",
                    format!("must increase: {:?}", self.decay_epochs),
                );
            }
        }
        let bounded = self.lr_schedule == Schedule::Cosine || self.warmup_steps > 0;
        if bounded && lr > 1.0 {
            return refuse(
                "lr",
                format!("{lr}: cosine annealing and the warm-up take a rate of at most 1"),
            );
        }
        if self.lr_schedule == Schedule::Cosine && !(self.lr_min >= 0.0 && self.lr_min <= lr) {
            return refuse(
                "lr_min",
                format!("must be in [0, lr = {lr}], got {}", self.lr_min),
            );
        }
        Ok(())
    }

    /// The optimizer of kind `self.optimizer_or(default)` with this recipe's momentum,
    /// Nesterov and epsilon, `weight_decay` applied by the optimizer (pass 0 where the
    /// objective applies it itself, as AUC-M's PESG does), each gradient element clamped to
    /// `[-c, c]` first with `clip`.
    pub fn init_optimizer(
        &self,
        default: OptimizerKind,
        weight_decay: f64,
        clip: Option<f64>,
    ) -> ModuleOptimizer {
        let clip = clip.map(|c| GradientClippingConfig::Value(c as f32));
        let decay = (weight_decay != 0.0).then(|| WeightDecayConfig::new(weight_decay as f32));
        match self.optimizer_or(default) {
            OptimizerKind::Adam => AdamConfig::new()
                .with_epsilon(self.adam_epsilon as f32)
                .with_weight_decay(decay)
                .with_grad_clipping(clip)
                .init(),
            OptimizerKind::Adamw => AdamWConfig::new()
                .with_epsilon(self.adam_epsilon as f32)
                .with_weight_decay(weight_decay as f32)
                .with_grad_clipping(clip)
                .init(),
            OptimizerKind::Sgd => {
                let momentum = (self.momentum > 0.0).then(|| {
                    MomentumConfig::new()
                        .with_momentum(self.momentum)
                        .with_dampening(0.0)
                        .with_nesterov(self.nesterov)
                });
                SgdConfig::new()
                    .with_weight_decay(decay)
                    .with_momentum(momentum)
                    .with_gradient_clipping(clip)
                    .init()
            }
        }
    }

    /// The steps between evaluation points: `eval_every`, else an epoch.
    pub fn period_steps(&self, steps_per_epoch: usize) -> usize {
        self.eval_every.unwrap_or(steps_per_epoch).max(1)
    }

    /// The learning-rate scheduler of a run of `budget` steps, `steps_per_epoch` per epoch,
    /// at base rate `lr`: its `k`-th `step()` gives the rate of the `k`-th optimizer step.
    ///
    /// # Errors
    /// [`RecipeError`] naming `warmup_steps` when the warm-up reaches the end of the run or
    /// the first decay, or Burn's refusal of the schedule.
    pub fn init_scheduler(
        &self,
        lr: f64,
        steps_per_epoch: usize,
        budget: usize,
    ) -> Result<ModuleLrScheduler, RecipeError> {
        let w = self.warmup_steps;
        if w > 0 && w >= budget {
            return refuse(
                "warmup_steps",
                format!("{w} steps of warm-up leave none of the run's {budget}"),
            );
        }
        let main = match self.lr_schedule {
            Schedule::Constant => LrSchedulerConfig::Constant(lr),
            Schedule::Step => {
                let mut rates = vec![LrSchedulerConfig::Constant(lr)];
                let mut milestones = Vec::new();
                for (i, &e) in self.decay_epochs.iter().enumerate() {
                    let at = e.saturating_mul(steps_per_epoch);
                    if at <= w {
                        return refuse(
                            "warmup_steps",
                            format!(
                                "{w} steps of warm-up reach the decay at epoch {e} (step {at})"
                            ),
                        );
                    }
                    milestones.push(at - w);
                    let rate = lr / self.decay_factor.powi(i as i32 + 1);
                    rates.push(LrSchedulerConfig::Constant(rate));
                }
                SequentialLrSchedulerConfig::new(rates, milestones).into()
            }
            Schedule::Cosine => CosineAnnealingLrSchedulerConfig::new(lr, budget - w)
                .with_min_lr(self.lr_min)
                .into(),
            Schedule::InverseSqrt => NoamLrSchedulerConfig::new(lr)
                .with_warmup_steps(1)
                .with_model_size(1)
                .into(),
        };
        let schedule = if w > 0 {
            let warmup = LinearLrSchedulerConfig::new(lr / (w + 1) as f64, lr, w).into();
            SequentialLrSchedulerConfig::new(vec![warmup, main], vec![w]).into()
        } else {
            main
        };
        ModuleLrSchedulerConfig::new(schedule)
            .init()
            .map_err(|message| RecipeError {
                key: "lr_schedule",
                message,
            })
    }

    /// [`Recipe::init_scheduler`] after `steps_done` steps: the scheduler replayed to the
    /// step a resumed run continues from (every rate depends on the step count only).
    ///
    /// # Errors
    /// As [`Recipe::init_scheduler`].
    pub fn scheduler_at(
        &self,
        lr: f64,
        steps_per_epoch: usize,
        budget: usize,
        steps_done: usize,
    ) -> Result<ModuleLrScheduler, RecipeError> {
        let mut s = self.init_scheduler(lr, steps_per_epoch, budget)?;
        for _ in 0..steps_done {
            s.step();
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests;
