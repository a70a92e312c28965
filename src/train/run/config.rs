//! The settings of an image run: the method and its budget, step sizes, FPR range, AGD-SBCD's
//! constants (Appendix E.2 and section 6.1 of the pAUC paper), seed and output folder.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::metrics::RankRange;
use crate::pauc::agd::AgdSbcdConfig;
use crate::pauc::sbcd::DualInit;
use crate::train::run::error::RunError;

/// The training method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// AGD-SBCD (pAUC paper, Algorithms 1-2).
    Sbcd,
    /// Cross-entropy with Adam.
    Ce,
    /// AUC-M with PESG (Yuan et al. 2021).
    Aucm,
    /// Mini-batch pAUC (Kar et al. 2014).
    Mb,
}

impl Method {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Sbcd => "AGD-SBCD",
            Method::Ce => "CE",
            Method::Aucm => "AUC-M",
            Method::Mb => "MB",
        }
    }
}

/// Settings of an image training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Method.
    pub method: Method,
    /// Budget in epochs (passes of `n` samples).
    pub epochs: usize,
    /// Samples per step (half positives, half negatives).
    pub batch: usize,
    /// Learning rate (c of AGD-SBCD).
    pub lr: f64,
    /// AGD-SBCD: `T_k = t_scale (k+1)^2` SBCD steps per call (paper: 50).
    pub t_scale: usize,
    /// AGD-SBCD: `mu = mu_scale / (N+ N-)` (paper: 1e3).
    pub mu_scale: f64,
    /// AGD-SBCD: `gamma = gamma_scale / (N+ N-)` (paper: {0.1, 1, 2} x 1e3).
    pub gamma_scale: f64,
    /// AGD-SBCD: forward passes that re-estimate batch-norm statistics after each AGD step.
    pub refresh_steps: usize,
    /// AGD-SBCD: dual step constant (None: `lr`, as Algorithm 2).
    #[serde(default)]
    pub c_dual: Option<f64>,
    /// AGD-SBCD: how the duals start.
    #[serde(default)]
    pub dual_init: DualInit,
    /// AGD-SBCD: re-set the duals to eq. (19) before every outer iteration.
    #[serde(default)]
    pub dual_refresh: bool,
    /// AGD-SBCD: the m- and n-calls draw the same blocks.
    #[serde(default)]
    pub common_blocks: bool,
    /// FPR range start.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
    /// Seed of the samplers.
    pub seed: u64,
    /// Output folder (metrics, plots, checkpoint).
    pub out: PathBuf,
    /// Continue from the checkpoint in `out`.
    pub resume: bool,
    /// Show a progress bar.
    pub progress: bool,
}

impl RunConfig {
    /// Check every setting before any data is read or any step is taken: a budget of at least
    /// one pass, a batch of at least 2, a positive finite learning rate, `0 <= alpha < beta <=
    /// 1`, and for AGD-SBCD the whole [`AgdSbcdConfig`] (`rankrisk train --dry-run` runs this).
    ///
    /// # Errors
    /// [`RunError::Setting`] naming the setting, or [`RunError::Sbcd`].
    pub fn validate(&self) -> Result<(), RunError> {
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
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr", format!("must be a positive number, got {}", self.lr));
        }
        if let Err(e) = RankRange::from_fpr(self.alpha, self.beta, 1) {
            return bad("alpha, beta", e.to_string());
        }
        if self.method == Method::Sbcd {
            self.sbcd_config().validate(1)?;
        }
        Ok(())
    }

    /// AGD-SBCD's settings for this run: [`AgdSbcdConfig::paper_deep`] with this run's range,
    /// seed, constants and blocks of half a batch of each class.
    pub fn sbcd_config(&self) -> AgdSbcdConfig {
        let mut c = AgdSbcdConfig::paper_deep(self.alpha, self.beta, self.seed);
        (c.c, c.t_scale, c.refresh_steps) = (self.lr, self.t_scale, self.refresh_steps);
        (c.mu_scale, c.gamma_scale) = (self.mu_scale, self.gamma_scale);
        (c.i, c.j) = (self.batch / 2, self.batch - self.batch / 2);
        (c.c_dual, c.dual_init) = (self.c_dual, self.dual_init);
        (c.dual_refresh, c.common_blocks) = (self.dual_refresh, self.common_blocks);
        c
    }

    /// Defaults for `method`: 2 epochs, batch 32, FPR [0.05, 0.5], learning rates measured on
    /// Fashion-MNIST-LT with ResNet-20 (CE 1e-3 with Adam, AUC-M 0.1, MB 0.1), AGD-SBCD with
    /// [`AgdSbcdConfig::paper_deep`]'s c = 0.1 (with the exact dual start, on the 3,000-image
    /// slice, 2 passes, seed 0: c = 0.1 test AUC 0.932, c = 1 0.876, c = 3 0.854; with the
    /// earlier mean start c = 1 had been the better one).
    pub fn new(method: Method, out: PathBuf) -> Self {
        RunConfig {
            method,
            epochs: 2,
            batch: 32,
            lr: match method {
                Method::Ce => 1e-3,
                Method::Sbcd => AgdSbcdConfig::paper_deep(0.05, 0.5, 0).c,
                _ => 0.1,
            },
            t_scale: 50,
            mu_scale: 1e3,
            gamma_scale: 1e3,
            refresh_steps: 30,
            c_dual: None,
            dual_init: DualInit::Exact,
            dual_refresh: false,
            common_blocks: false,
            alpha: 0.05,
            beta: 0.5,
            seed: 0,
            out,
            resume: false,
            progress: true,
        }
    }
}
