//! The linear solvers on the vendored tabular sets, each standardized and split (seeded) into
//! training and test parts: rank-based ADMM (Algorithm 1 of the rank-based paper) for ERM and
//! CVaR with the logistic loss and squared l2, and AGD-SBCD (Algorithms 1-2 of the pAUC paper)
//! for the pAUC over an FPR range. One [`ResultRow`] per set and method.

use std::time::Instant;

use rankrisk_datasets::{Tabular, load_builtin};

use crate::admm::linear::solve;
use crate::admm::{AdmmConfig, LinearData};
use crate::math::loss::Loss;
use crate::math::regularizer::Regularizer;
use crate::math::weights::Weights;
use crate::metrics::auc::{auc, pauc};
use crate::metrics::bootstrap::{DRAW_SCHEME, bootstrap_pauc_interval};
use crate::metrics::ci::{Bootstrap, DeLong, Interval};
use crate::metrics::{RankRange, accuracy};
use crate::pauc::agd::{AgdSbcdConfig, schedule_steps};
use crate::pauc::linear::{Budget, agd_sbcd_linear};
use crate::pauc::sbcd::PairData;
use crate::tasks::TaskError;
use crate::tasks::report::ResultRow;

/// Settings of the tabular task.
#[derive(Debug, Clone, PartialEq)]
pub struct TabularTask {
    /// Built-in data sets (australian, phoneme, titanic, monks-3, splice, utkface).
    pub sets: Vec<String>,
    /// Share of each set used for training; the rest is the test set.
    pub train_share: f64,
    /// CVaR level q of the second ADMM objective (at q = 0.5 the optimum on phoneme and
    /// titanic is w = 0, test AUC 0.5).
    pub q: f64,
    /// Strength mu of the squared l2 regularizer (mu/2 ||w||^2).
    pub mu: f64,
    /// FPR range start of AGD-SBCD and of the test pAUC.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
    /// AGD-SBCD outer iterations (T_k = 50 (k+1)^2 SBCD steps each; 5 and 10 give the same
    /// test AUC to 0.003 on these sets, 10 takes 7x longer).
    pub outer: usize,
    /// Seed of the split and of AGD-SBCD's sampler.
    pub seed: u64,
}

impl TabularTask {
    /// Check every setting before anything is trained (what `rankrisk train --dry-run` checks,
    /// and [`TabularTask::run`] first): at least one set, each a built-in one (the embedded
    /// sets are parsed, nothing is trained), `train_share` in (0, 1), `q` in (0, 1], a finite
    /// `mu >= 0`, the FPR range `0 <= alpha < beta <= 1`, and at least one AGD-SBCD outer
    /// iteration.
    ///
    /// # Errors
    /// [`TaskError::Setting`] naming the setting.
    pub fn validate(&self) -> Result<(), TaskError> {
        let bad = |key, message: String| Err(TaskError::Setting { key, message });
        if self.sets.is_empty() {
            return bad("sets", "no data set: name at least one".into());
        }
        if !(self.train_share > 0.0 && self.train_share < 1.0) {
            return bad(
                "train_share",
                format!("must lie in (0, 1), got {}", self.train_share),
            );
        }
        // The range of `weights::Weights::Cvar`, which the run builds from it.
        if !(self.q >= 0.0 && self.q < 1.0) {
            return bad(
                "q",
                format!("the CVaR level must lie in [0, 1), got {}", self.q),
            );
        }
        if !(self.mu.is_finite() && self.mu >= 0.0) {
            return bad(
                "mu",
                format!("must be a finite number >= 0, got {}", self.mu),
            );
        }
        if let Err(e) = RankRange::from_fpr(self.alpha, self.beta, 1) {
            return bad("alpha, beta", e.to_string());
        }
        if self.outer == 0 {
            return bad("outer", "at least 1 AGD-SBCD outer iteration, got 0".into());
        }
        let t_scale = AgdSbcdConfig::paper_linear(self.alpha, self.beta, self.seed).t_scale;
        if schedule_steps(t_scale, self.outer, 2).is_none() {
            return bad(
                "outer",
                format!(
                    "{} outer iterations of T_k = {t_scale} (k+1)^2 SBCD steps overflow the step \
                     count",
                    self.outer
                ),
            );
        }
        for name in &self.sets {
            load_builtin(name).map_err(|e| TaskError::Setting {
                key: "sets",
                message: e.to_string(),
            })?;
        }
        Ok(())
    }

    /// Train the three linear models on every set and score them on its test part.
    ///
    /// # Errors
    /// [`TaskError`] for a setting [`TabularTask::validate`] refuses or a split that leaves a
    /// class out.
    pub fn run(&self) -> Result<Vec<ResultRow>, TaskError> {
        self.validate()?;
        let mut rows = Vec::new();
        for name in &self.sets {
            let (train, test) = self.parts(name)?;
            let (train, test) = (&train, &test);
            let data = LinearData::new(&train.x, &train.y, train.d)?;
            let mut fitted: Vec<(String, Vec<f64>, f64)> = Vec::new();
            for (label, weights) in [
                ("ADMM ERM".to_string(), Weights::Erm),
                (format!("ADMM CVaR {}", self.q), Weights::Cvar { q: self.q }),
            ] {
                let cfg = AdmmConfig {
                    weights,
                    loss: Loss::Logistic,
                    reg: Regularizer::L2 { mu: self.mu },
                    ..AdmmConfig::default()
                };
                let t = Instant::now();
                let res = solve(&data, &cfg, None)?;
                if !res.converged {
                    let gap = res.gap.map_or(String::new(), |g| {
                        format!(", certified relative gap {g:.2e}")
                    });
                    eprintln!(
                        "warning: {name} {label}: ADMM stopped at the iteration cap ({}) before \
                     converging: relative residuals primal {:.2e}, dual {:.2e}{gap}, tolerance \
                     {:.0e}",
                        res.iterations, res.primal_relative, res.dual_relative, cfg.tol
                    );
                }
                fitted.push((label, res.w, t.elapsed().as_secs_f64()));
            }
            let pairs = PairData::new(&train.x, &train.y, train.d)?;
            // The settings measured for standardized tabular features (see
            // AgdSbcdConfig::paper_linear).
            let mut agd = AgdSbcdConfig::paper_linear(self.alpha, self.beta, self.seed);
            (agd.c, agd.mu_scale, agd.gamma_scale) = (10.0, 1.0, 2.0);
            let t = Instant::now();
            let (w, _) =
                agd_sbcd_linear(&pairs, &vec![0.0; train.d], &agd, Budget::Outer(self.outer))?;
            fitted.push(("AGD-SBCD".into(), w, t.elapsed().as_secs_f64()));
            for (method, w, seconds) in fitted {
                rows.push(self.evaluate(name, &method, test, &w, seconds)?);
            }
        }
        Ok(rows)
    }

    /// The standardized set `name` split (seeded) into its training and test parts, each with
    /// both classes.
    ///
    /// # Errors
    /// [`TaskError`] for an unknown set or a split that leaves a class out.
    pub fn parts(&self, name: &str) -> Result<(Tabular, Tabular), TaskError> {
        let mut all = load_builtin(name)?;
        all.standardize();
        // A share that leaves a part empty or of one class is the setting's fault: named so.
        let share = |e: &dyn std::fmt::Display| TaskError::Setting {
            key: "train_share",
            message: format!(
                "{} of {name}'s {} rows for training leaves {e}; take a share nearer 0.5",
                self.train_share,
                all.n()
            ),
        };
        let mut parts = all
            .split(&[self.train_share, 1.0 - self.train_share], self.seed)
            .map_err(|e| share(&e))?;
        let test = parts.pop().expect("two shares give two parts");
        let train = parts.pop().expect("two shares give two parts");
        for (part, set) in [("the training part", &train), ("the test part", &test)] {
            set.require_both_classes().map_err(|e| {
                share(&format!(
                    "{part} ({} rows) without both classes: {e}",
                    set.n()
                ))
            })?;
        }
        Ok((train, test))
    }

    /// Score the linear model `w` on the `test` part of set `name`: test AUC (eq. 1) with
    /// DeLong's 95% interval, pAUC over `[alpha, beta]` (eq. 2) with its stratified bootstrap
    /// interval (seeded by `seed`), and the accuracy of `sign(score)`. A constant scorer (such as
    /// `w = 0`, whose scores are `0.0` or `-0.0`) gets 1/2 for both areas.
    ///
    /// # Errors
    /// [`TaskError::Metric`] when a metric refuses the scores (NaN, one class).
    pub fn evaluate(
        &self,
        name: &str,
        method: &str,
        test: &Tabular,
        w: &[f64],
        seconds: f64,
    ) -> Result<ResultRow, TaskError> {
        let (alpha, beta) = (self.alpha, self.beta);
        let boot = Bootstrap {
            seed: self.seed,
            ..Bootstrap::default()
        };
        let pair = |i: Interval| [i.lower, i.upper];
        let s = test.scores(w);
        let metric = |source| TaskError::Metric {
            data: name.to_string(),
            source,
        };
        Ok(ResultRow {
            data: name.to_string(),
            method: method.to_string(),
            test_auc: auc(&s, &test.y).map_err(metric)?,
            test_pauc: pauc(&s, &test.y, alpha, beta).map_err(metric)?,
            test_auc_ci: Some(
                DeLong::new(&s, &test.y)
                    .and_then(|d| d.interval(0.95))
                    .map(pair)
                    .map_err(metric)?,
            ),
            test_pauc_ci: Some(
                bootstrap_pauc_interval(&s, &test.y, &boot, alpha, beta)
                    .map(pair)
                    .map_err(metric)?,
            ),
            test_pauc_ci_draws: Some(DRAW_SCHEME.to_string()),
            fpr: (alpha, beta),
            test_two_way: None,
            test_accuracy: Some(accuracy(&s, &test.y)),
            seconds,
        })
    }
}
