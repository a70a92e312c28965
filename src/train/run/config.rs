//! The settings of an image run: the method and its budget, step sizes, FPR range, AGD-SBCD's
//! constants (Appendix E.2 and section 6.1 of the pAUC paper), seed and output folder.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::device::backend::{BackendError, BackendKind};
use crate::device::remote::DeviceSpec;
use crate::pauc::agd::AgdSbcdConfig;
use crate::pauc::sbcd::DualInit;
use crate::train::instance_pauc::{GammaStep, WeightStep};
use crate::train::recipe::Recipe;
use crate::train::run::defaults;
use crate::train::run::error::RunError;

/// The training method. Written as on the command line (`sopa-s`, `sota-s`), so that a printed
/// config reads back; `sopas` and `sotas`, which configs and summaries written before
/// 2026-11-24 hold, are read too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// AGD-SBCD (pAUC paper, Algorithms 1-2).
    Sbcd,
    /// Cross-entropy with Adam.
    Ce,
    /// AUC-M with PESG (Yuan et al. 2021).
    Aucm,
    /// Mini-batch pAUC (Kar et al. 2014).
    Mb,
    /// SOPA: one-way pAUC over FPR [0, beta], CVaR-DRO (Zhu et al. 2022).
    Sopa,
    /// SOPA-s: one-way pAUC, KL-DRO smoothed (Zhu et al. 2022).
    #[serde(alias = "sopas")]
    #[value(alias = "sopas")]
    SopaS,
    /// SOTA-s: two-way pAUC, KL-DRO smoothed (Zhu et al. 2022).
    #[serde(alias = "sotas")]
    #[value(alias = "sotas")]
    SotaS,
    /// STACO: the exact two-way pAUC of LibAUC 2.0 (Zhou et al., TMLR 2025).
    Staco,
    /// PAUCI: instance-wise one- or two-way pAUC, softplus selection (Shao et al. 2022).
    Pauci,
    /// UPAUCI: instance-wise one- or two-way pAUC, a selection weight per instance (Jiang et
    /// al. 2025).
    Upauci,
}

impl Method {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Sbcd => "AGD-SBCD",
            Method::Ce => "CE",
            Method::Aucm => "AUC-M",
            Method::Mb => "MB",
            Method::Sopa => "SOPA",
            Method::SopaS => "SOPA-s",
            Method::SotaS => "SOTA-s",
            Method::Staco => "STACO",
            Method::Pauci => "PAUCI",
            Method::Upauci => "UPAUCI",
        }
    }
}

/// How PAUCI and UPAUCI train.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Solver {
    /// One projected step of the scalars per batch, the network on Adam (SGDA).
    #[default]
    Sgda,
    /// The paper's ASGDA: every batch evaluated at the current and the moved point, the
    /// momentum-corrected directions (`train::storm`), plain steps along them.
    Asgda,
}

/// What a run selects its best model by, on the validation set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Select {
    /// The pAUC over the FPR range `[alpha, beta]`.
    #[default]
    Pauc,
    /// The two-way pAUC, TPR `>= tpr_min` and FPR `<= fpr_max` (LibAUC's convention,
    /// `metrics::conventions::libauc_two_way_pauc`).
    TwoWay,
}

/// Settings of an image training run: the one settings type of the library, the command line
/// (its fields are the flags of `cifar_lt`, `chexpert` and `rankrisk train`'s image runs,
/// flattened into each task's flags) and the config files (the same names as keys), and what a
/// checkpoint and `summary.json` record. The defaults are written once, here.
///
/// Two settings default per method and stay unset until [`RunConfig::resolved`] fills them:
/// `lr` ([`RunConfig::lr`]) and `grad_clip` ([`RunConfig::clip`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct RunConfig {
    /// Training method. The default is SOTA-s, the one pAUC objective in the top group of test
    /// pAUC[0.05, 0.5] on both full Fashion-MNIST-LT and MNIST-LT over three seeds; AGD-SBCD
    /// (`sbcd`), the previous default, was last on both (docs/RESULTS.md).
    #[arg(long, value_enum, default_value = "sota-s")]
    pub method: Method,
    /// Budget in passes over the training set.
    #[arg(long, default_value_t = 2)]
    pub epochs: usize,
    /// Samples per step (half positives, half negatives; the paper: 32).
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Learning rate (c of AGD-SBCD); default per method ([`RunConfig::lr`]).
    #[arg(long, value_parser = finite_f64)]
    pub lr: Option<f64>,
    /// AGD-SBCD: `T_k = t_scale (k+1)^2` SBCD steps per call (paper: 50).
    #[arg(long, default_value_t = 50)]
    pub t_scale: usize,
    /// AGD-SBCD: `mu = mu_scale / (N+ N-)` (paper: 1e3).
    #[arg(long, default_value_t = 1e3, value_parser = finite_f64)]
    pub mu_scale: f64,
    /// AGD-SBCD: `gamma = gamma_scale / (N+ N-)` (paper: tuned in {0.1, 1, 2} x 1e3).
    #[arg(long, default_value_t = 1e3, value_parser = finite_f64)]
    pub gamma_scale: f64,
    /// AGD-SBCD: training-mode forward passes after each AGD step that re-estimate the
    /// batch-norm statistics for the new parameters (`refresh_steps` in records written before
    /// 2026-11-26).
    #[arg(long, default_value_t = 30)]
    #[serde(alias = "refresh_steps")]
    pub bn_refresh: usize,
    /// AGD-SBCD: dual step constant, `theta = c_dual / ((k+1) N-)` (default: the lr c, as
    /// Algorithm 2's schedule).
    #[arg(long, value_parser = finite_f64)]
    #[serde(default)]
    pub c_dual: Option<f64>,
    /// AGD-SBCD: how the duals start (exact: eq. (19) at the initial model; mean: the pair
    /// loss of the mean scores).
    #[arg(long, value_enum, default_value = "exact")]
    #[serde(default)]
    pub dual_init: DualInit,
    /// AGD-SBCD: re-set the duals to eq. (19) before every outer iteration (one scoring pass
    /// of the training set each).
    #[arg(long)]
    #[serde(default)]
    pub dual_refresh: bool,
    /// AGD-SBCD: the m- and n-calls of an outer iteration draw the same blocks.
    #[arg(long)]
    #[serde(default)]
    pub common_blocks: bool,
    /// SOPA, SOPA-s, SOTA-s: margin of the squared-hinge pair loss on sigmoid scores
    /// (LibAUC's default).
    #[arg(long, default_value_t = defaults::margin(), value_parser = finite_f64)]
    #[serde(default = "defaults::margin")]
    pub margin: f64,
    /// SOPA: step size of the per-positive thresholds (LibAUC's `eta`).
    #[arg(long, default_value_t = defaults::sopa_eta(), value_parser = finite_f64)]
    #[serde(default = "defaults::sopa_eta")]
    pub sopa_eta: f64,
    /// SOPA-s, SOTA-s: KL weight over the negatives (LibAUC's `Lambda`).
    #[arg(long, default_value_t = defaults::dro_lambda(), value_parser = finite_f64)]
    #[serde(default = "defaults::dro_lambda")]
    pub dro_lambda: f64,
    /// Clamp every gradient element to [-C, C] before the optimizer's update, as LibAUC's
    /// optimizers do (C = 1; 2 for SOPAs); 0 turns it off. Default ([`RunConfig::clip`]): 1
    /// for SOPA, where three seeds on full Fashion-MNIST-LT (2 passes) measured it at or above
    /// the unclamped run (test pAUC 0.9846 (0.0053) against 0.9813 (0.0028): +0.0041, 0 and
    /// +0.0058 per seed, paired p = 0.04, 1, 0.0005); off for the other methods, where it was
    /// not measured. A saved config without the key, or with none (runs before this default),
    /// reads as off, as they were trained.
    #[arg(long, value_name = "C")]
    #[serde(
        default = "defaults::no_clip",
        deserialize_with = "defaults::clip_or_off"
    )]
    pub grad_clip: Option<f64>,
    /// SOTA-s: KL weight over the positives (LibAUC's `tau`).
    #[arg(long, default_value_t = defaults::dro_tau(), value_parser = finite_f64)]
    #[serde(default = "defaults::dro_tau")]
    pub dro_tau: f64,
    /// SOPA-s, SOTA-s: moving-average weight of the new batch (LibAUC's `gamma`).
    #[arg(long, default_value_t = defaults::dro_gamma(), value_parser = finite_f64)]
    #[serde(default = "defaults::dro_gamma")]
    pub dro_gamma: f64,
    /// The validation figure that picks the best model (`best.bpk`, the summary's `best`):
    /// the pAUC over `[alpha, beta]`, or the two-way pAUC over `tpr_min` / `fpr_max`.
    #[arg(long, value_enum, default_value = "pauc")]
    #[serde(default)]
    pub select: Select,
    /// The two-way pAUC every run reports, and STACO, PAUCI and UPAUCI train: its TPR bound.
    /// They train on the lowest-scored `1 - tpr_min` share of the positives (STACO's
    /// `1 - theta_0`, PAUCI's `1 - alpha`); 0 keeps all of them (PAUCI and UPAUCI then train
    /// the one-way pAUC).
    #[arg(long, default_value_t = defaults::tpr_min(), value_parser = finite_f64)]
    #[serde(default = "defaults::tpr_min")]
    pub tpr_min: f64,
    /// The two-way pAUC's FPR bound (STACO's `theta_1`, PAUCI's `beta`).
    #[arg(long, default_value_t = defaults::fpr_max(), value_parser = finite_f64)]
    #[serde(default = "defaults::fpr_max")]
    pub fpr_max: f64,
    /// STACO: margin of its squared hinge (LibAUC's `threshold`).
    #[arg(long, default_value_t = defaults::staco_margin(), value_parser = finite_f64)]
    #[serde(default = "defaults::staco_margin")]
    pub staco_margin: f64,
    /// STACO: step size of the per-positive duals (LibAUC's `alpha`).
    #[arg(long, default_value_t = defaults::staco_alpha(), value_parser = finite_f64)]
    #[serde(default = "defaults::staco_alpha")]
    pub staco_alpha: f64,
    /// STACO: step size of the per-positive thresholds (LibAUC's `beta_0`).
    #[arg(long, default_value_t = defaults::staco_beta_0(), value_parser = finite_f64)]
    #[serde(default = "defaults::staco_beta_0")]
    pub staco_beta_0: f64,
    /// STACO: step size of the global threshold (LibAUC's `beta_1`).
    #[arg(long, default_value_t = defaults::staco_beta_1(), value_parser = finite_f64)]
    #[serde(default = "defaults::staco_beta_1")]
    pub staco_beta_1: f64,
    /// PAUCI: sharpness of the softplus selection (the released code's `kappa`).
    #[arg(long, default_value_t = defaults::kappa(), value_parser = finite_f64)]
    #[serde(default = "defaults::kappa")]
    pub kappa: f64,
    /// PAUCI, UPAUCI: extra concavity `omega` (default [`RunConfig::omega`]: PAUCI 0 as its
    /// released code, UPAUCI 0.1).
    #[arg(long, value_parser = finite_f64)]
    #[serde(default)]
    pub omega: Option<f64>,
    /// PAUCI, UPAUCI: step size of the scalars' projected steps.
    #[arg(long, default_value_t = defaults::scalar_lr(), value_parser = finite_f64)]
    #[serde(default = "defaults::scalar_lr")]
    pub scalar_lr: f64,
    /// PAUCI, UPAUCI: the solver (`sgda`, or the paper's `asgda`, twice the gradient
    /// evaluations per batch).
    #[arg(long, value_enum, default_value = "sgda")]
    #[serde(default)]
    pub solver: Solver,
    /// ASGDA: `k` of `eta_t = k / (m + t)^(1/3)`.
    #[arg(long, default_value_t = defaults::asgda().k, value_parser = finite_f64)]
    #[serde(default = "defaults::asgda_k")]
    pub asgda_k: f64,
    /// ASGDA: `m` of `eta_t`.
    #[arg(long, default_value_t = defaults::asgda().m, value_parser = finite_f64)]
    #[serde(default = "defaults::asgda_m")]
    pub asgda_m: f64,
    /// ASGDA: descent size `nu` (the network and the minimized scalars).
    #[arg(long, default_value_t = defaults::asgda().nu, value_parser = finite_f64)]
    #[serde(default = "defaults::asgda_nu")]
    pub asgda_nu: f64,
    /// ASGDA: ascent size `lambda` (`gamma` and the weights).
    #[arg(long, default_value_t = defaults::asgda().lambda, value_parser = finite_f64)]
    #[serde(default = "defaults::asgda_lambda")]
    pub asgda_lambda: f64,
    /// ASGDA: `iota` of the momentum corrections `rho_t = xi_t = iota eta_t^2`.
    #[arg(long, default_value_t = defaults::asgda().iota_1, value_parser = finite_f64)]
    #[serde(default = "defaults::asgda_iota")]
    pub asgda_iota: f64,
    /// UPAUCI: step size of the per-instance weights' projected ascent (`weight_step =
    /// "paper"`).
    #[arg(long, default_value_t = defaults::weights_lr(), value_parser = finite_f64)]
    #[serde(default = "defaults::weights_lr")]
    pub weights_lr: f64,
    /// UPAUCI: how a weight moves at each visit: `exact` (the default: each visited weight
    /// set to its maximizer before the scalars' step; it selects within a run's budget) or
    /// `paper` (the paper's gradient step, scaled by the batch, which a run of two passes
    /// barely moves).
    #[arg(long, value_enum, default_value = "exact")]
    #[serde(default)]
    pub weight_step: WeightStep,
    /// PAUCI: which way `gamma` moves: `descent` (the default; as the authors' released code
    /// moves it, with which their tables were trained) or `ascent` (the paper's eq. (12)
    /// maximizes it).
    #[arg(long, value_enum, default_value = "descent")]
    #[serde(default)]
    pub gamma_step: GammaStep,
    /// The training recipe: optimizer, weight decay, momentum, learning-rate schedule,
    /// warm-up, evaluation period ([`Recipe`]; its keys sit beside the others).
    #[command(flatten)]
    #[serde(flatten)]
    pub recipe: Recipe,
    /// Stratified bootstrap resamples of the test pAUC's 95% interval at every evaluation point
    /// (0: none).
    #[arg(long, default_value_t = defaults::bootstrap())]
    #[serde(default = "defaults::bootstrap")]
    pub bootstrap: usize,
    /// FPR range start.
    #[arg(long, default_value_t = 0.05, value_parser = finite_f64)]
    pub alpha: f64,
    /// FPR range end.
    #[arg(long, default_value_t = 0.5, value_parser = finite_f64)]
    pub beta: f64,
    /// The backend.
    #[command(flatten)]
    #[serde(flatten, default)]
    pub backend: BackendArg,
    /// Data-parallel devices, comma-separated (`flex,flex`, `wgpu,flex`, `cuda:0,cuda:1`,
    /// `flex,remote:ws://HOST:PORT` with the `remote` feature): each batch is split over them,
    /// the objective's state stays one; the first, a backend of this machine, is the run's
    /// backend (it overrides `--backend`) and holds the model; empty or one entry: one device.
    #[arg(long, value_delimiter = ',')]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceSpec>,
    /// Seed of the split, the initialization, the samplers and the augmentation.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output folder (metrics, plots, checkpoint): each task's `--out` flag sets it (it is
    /// left out of the task's saved flags, which hold the task's own `out`).
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "is_unset")]
    pub out: PathBuf,
    /// Start from this saved model (a run's `best.bpk`, such as a CE run's, for the warm-up
    /// with CE that the pAUC papers run before their objective) instead of a fresh
    /// initialization; it must be the task's network. The objective's state starts fresh. On
    /// `--resume` the checkpoint's model is used instead.
    #[arg(long, value_name = "BPK")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_model: Option<PathBuf>,
    /// Continue from the checkpoint in the output folder.
    #[arg(long)]
    #[serde(default)]
    pub resume: bool,
    /// No progress bar or messages (`progress = false` in records written before
    /// 2026-11-26, which read as shown).
    #[arg(long)]
    #[serde(default)]
    pub quiet: bool,
}

/// An output folder not set yet (the run settings inside a task's flags).
fn is_unset(out: &std::path::Path) -> bool {
    out.as_os_str().is_empty()
}

/// The backend choice shared by every training command.
#[derive(Debug, Clone, Default, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct BackendArg {
    /// Backend: wgpu, ndarray, flex, or cuda / cuda:N in a build with the `cuda` feature
    /// (default: $BURN_DEVICE, else flex).
    #[arg(long)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendKind>,
}

impl BackendArg {
    /// The flag, else `BURN_DEVICE`, else the default backend.
    ///
    /// # Errors
    /// [`BackendError`] for an unknown `BURN_DEVICE` value.
    pub fn resolve(&self) -> Result<BackendKind, BackendError> {
        match self.backend {
            Some(kind) => Ok(kind),
            None => BackendKind::from_env().map(Option::unwrap_or_default),
        }
    }
}

/// The keys whose default changed after they were added (issue 56): a run saved without one
/// ran with the value [`RunConfig::as_saved_before_keys`] gives it, not with today's default.
pub(crate) const KEYS_WITH_CHANGED_DEFAULTS: [&str; 2] = ["weight_step", "gamma_step"];

impl RunConfig {
    /// The settings of a run saved before some keys existed (`absent` says which), read as it
    /// ran rather than with today's defaults, where those changed and the setting applies to
    /// the run: UPAUCI's paper weight step (`weight_step` added 2026-11-27, exact by default
    /// since later that day), PAUCI's ascent in `gamma` (`gamma_step` added 2026-11-27,
    /// descent by default since 2026-11-28). A resume of such a run with today's defaults is
    /// then refused as a changed setting instead of continuing otherwise. Checkpoints
    /// (`state.cbor`) and run folders' `config.toml` are read through it; a config a user
    /// writes is not.
    pub(crate) fn as_saved_before_keys(&mut self, absent: impl Fn(&str) -> bool) {
        if self.method == Method::Upauci && absent("weight_step") {
            self.weight_step = WeightStep::before_the_setting();
        }
        if self.method == Method::Pauci && absent("gamma_step") {
            self.gamma_step = GammaStep::before_the_setting();
        }
    }

    /// The run's budget in steps, `epochs x ceil(n / batch)` for a training set of `n`
    /// samples: every method takes that many steps (AGD-SBCD counts its SBCD steps).
    ///
    /// # Errors
    /// [`RunError::Setting`] naming `epochs` (and `batch`) when the step count, or the sample
    /// count it stands for, does not fit the integers.
    pub fn step_budget(&self, n: usize) -> Result<usize, RunError> {
        let steps_per_epoch = n.div_ceil(self.batch.max(1));
        self.epochs
            .checked_mul(steps_per_epoch)
            .filter(|steps| steps.checked_mul(self.batch).is_some())
            .ok_or_else(|| RunError::Setting {
                key: "epochs",
                message: format!(
                    "{} passes of {steps_per_epoch} steps of batch {} over {n} training samples \
                     overflow the step count of {}: at most {} passes",
                    self.epochs,
                    self.batch,
                    self.method.name(),
                    usize::MAX / steps_per_epoch.max(1) / self.batch.max(1)
                ),
            })
    }

    /// AGD-SBCD's settings for this run: [`AgdSbcdConfig`] with this run's range, seed,
    /// constants and blocks of half a batch of each class.
    pub fn sbcd_config(&self) -> AgdSbcdConfig {
        AgdSbcdConfig::new(self.alpha, self.beta)
            .with_c(self.lr())
            .with_t_scale(self.t_scale)
            .with_refresh_steps(self.bn_refresh)
            .with_mu_scale(self.mu_scale)
            .with_gamma_scale(self.gamma_scale)
            .with_i(self.batch / 2)
            .with_j(self.batch - self.batch / 2)
            .with_seed(self.seed)
            .with_c_dual(self.c_dual)
            .with_dual_init(self.dual_init)
            .with_dual_refresh(self.dual_refresh)
            .with_common_blocks(self.common_blocks)
    }

    /// ASGDA's settings of this run (`iota` for both corrections).
    pub fn asgda_config(&self) -> crate::train::AsgdaConfig {
        crate::train::AsgdaConfig::new()
            .with_k(self.asgda_k)
            .with_m(self.asgda_m)
            .with_nu(self.asgda_nu)
            .with_lambda(self.asgda_lambda)
            .with_iota_1(self.asgda_iota)
            .with_iota_2(self.asgda_iota)
    }

    /// The defaults of the command line for `method`, resolved, writing into `out`.
    pub fn new(method: Method, out: PathBuf) -> Self {
        use clap::FromArgMatches;
        // No arguments: every flag at its default, which parses (tests/cli.rs checks them).
        let mut cfg = <Self as clap::Args>::augment_args(clap::Command::new("run"))
            .no_binary_name(true)
            .try_get_matches_from(std::iter::empty::<String>())
            .and_then(|matches| Self::from_arg_matches(&matches))
            .unwrap_or_else(|e| unreachable!("the flags' defaults parse: {e}"));
        (cfg.method, cfg.out) = (method, out);
        cfg.resolved()
    }
}

/// The value parser of every float flag: core's, re-exported under its old path.
pub use rankrisk_core::finite_f64;
