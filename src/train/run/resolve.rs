//! The settings that default per method, and a run's settings with those written in
//! ([`RunConfig::resolved`], what a run's folder keeps): the learning rate, the gradient
//! clamp, PAUCI's and UPAUCI's `omega`, the optimizer and the weight decay.

use crate::pauc::agd::AgdSbcdConfig;
use crate::train::recipe::OptimizerKind;
use crate::train::run::config::{Method, RunConfig};

impl RunConfig {
    /// The learning rate: the setting, else the method's default: CE 1e-3 with Adam (as the
    /// paper trains it), SOPA, SOPA-s, SOTA-s and STACO with Adam at LibAUC's default 1e-3
    /// (PAUCI and UPAUCI the same, their network on Adam), AUC-M
    /// and MB 0.1 (measured on Fashion-MNIST-LT with ResNet-20), AGD-SBCD
    /// [`AgdSbcdConfig`]'s c = 0.1 (with the exact dual start, on the 3,000-image slice, 2
    /// passes, seed 0: c = 0.1 test AUC 0.932, c = 1 0.876, c = 3 0.854; with the earlier mean
    /// start c = 1 had been the better one).
    pub fn lr(&self) -> f64 {
        // The methods on Adam by default start at 1e-3, those on SGD at 0.1.
        self.lr
            .unwrap_or(match (self.method, self.default_optimizer()) {
                (Method::Sbcd, _) => AgdSbcdConfig::new(0.05, 0.5).c,
                (_, OptimizerKind::Adam) => 1e-3,
                _ => 0.1,
            })
    }

    /// The method's optimizer, used unless `optimizer` is set: Adam for CE (as the paper
    /// trains it) and for SOPA, SOPA-s, SOTA-s, STACO (LibAUC's optimizers default to their
    /// Adam mode), and for PAUCI's and UPAUCI's network (their scalars take their own
    /// projected steps); SGD for MB, for AUC-M (PESG's model step) and for AGD-SBCD, whose
    /// optimizer only fills the checkpoint.
    pub fn default_optimizer(&self) -> OptimizerKind {
        match self.method {
            Method::Ce
            | Method::Sopa
            | Method::SopaS
            | Method::SotaS
            | Method::Staco
            | Method::Pauci
            | Method::Upauci => OptimizerKind::Adam,
            Method::Aucm | Method::Mb | Method::Sbcd => OptimizerKind::Sgd,
        }
    }

    /// The weight decay: the setting, else AUC-M's 1e-4 (what it always trained with) and 0
    /// for the other methods.
    pub fn weight_decay(&self) -> f64 {
        self.recipe
            .weight_decay
            .unwrap_or(if self.method == Method::Aucm {
                1e-4
            } else {
                0.0
            })
    }

    /// The gradient clamp in use: the setting (0: none), else 1 for SOPA and for STACO (LibAUC's
    /// `STACO` optimizer clamps at 1 by default) and none for the other methods.
    pub fn clip(&self) -> Option<f64> {
        match self.grad_clip {
            None => matches!(self.method, Method::Sopa | Method::Staco).then_some(1.0),
            Some(c) => (c != 0.0).then_some(c),
        }
    }

    /// PAUCI's and UPAUCI's `omega`: the setting, else PAUCI's 0 (its released code) and
    /// UPAUCI's 0.1 ([`UpauciConfig`](crate::train::UpauciConfig)'s).
    pub fn omega(&self) -> f64 {
        self.omega.unwrap_or(match self.method {
            Method::Upauci => crate::train::UpauciConfig::new().omega,
            _ => crate::train::PauciConfig::new().omega,
        })
    }

    /// These settings with the per-method defaults written in (`lr`, `grad_clip`: 0 for
    /// none, `omega`), as a run's folder keeps them.
    pub fn resolved(mut self) -> Self {
        self.lr = Some(self.lr());
        self.grad_clip = Some(self.clip().unwrap_or(0.0));
        if matches!(self.method, Method::Pauci | Method::Upauci) {
            self.omega = Some(self.omega());
        }
        self
    }
}
