//! An evaluation point of a run (after every period): each candidate model scored on the
//! validation and test sets, its row of figures recorded and reported, and the best one by
//! validation pAUC saved with its ROC curves and scores.

use std::time::Instant;

use burn::tensor::Device;
use indicatif::ProgressBar;
use rankrisk_datasets::ImageSource;
use rankrisk_models::Scorer;

use crate::metrics::bootstrap::DRAW_SCHEME;
use crate::metrics::ci::Bootstrap;
use crate::train::run::config::RunConfig;
use crate::train::run::error::RunError;
use crate::train::run::evaluate::{PointEval, column, evaluate_point};
use crate::train::run::loop_state::LoopState;
use crate::train::run::period::Period;
use crate::train::run::record::{Candidate, EpochMetrics};
use crate::train::run::record::{roc_plot, say, write_scores};

/// The set the ROC curves are drawn for (test, else validation), its labels and task names.
struct RocTarget {
    set: &'static str,
    labels: Vec<Vec<f64>>,
    names: Vec<String>,
}

impl RocTarget {
    fn of(val: &dyn ImageSource, test: Option<&dyn ImageSource>) -> Self {
        let (set, source) = match test {
            Some(t) => ("test", t),
            None => ("validation", val),
        };
        RocTarget {
            set,
            labels: (0..source.tasks()).map(|t| source.task_labels(t)).collect(),
            names: (0..source.tasks()).map(|t| source.task_name(t)).collect(),
        }
    }
}

/// What every evaluation point of a run reads.
pub(super) struct Points<'a> {
    val: &'a dyn ImageSource,
    test: Option<&'a dyn ImageSource>,
    device: &'a Device,
    cfg: &'a RunConfig,
    bar: &'a ProgressBar,
    roc: RocTarget,
    boot: Bootstrap,
    /// Training samples (for the passes seen).
    n: usize,
}

impl<'a> Points<'a> {
    /// The points of a run evaluating on `val` and `test` (95% intervals with `cfg.bootstrap`
    /// resamples), `n` training samples.
    pub(super) fn new(
        (val, test): (&'a dyn ImageSource, Option<&'a dyn ImageSource>),
        device: &'a Device,
        cfg: &'a RunConfig,
        bar: &'a ProgressBar,
        n: usize,
    ) -> Self {
        Points {
            val,
            test,
            device,
            cfg,
            bar,
            roc: RocTarget::of(val, test),
            boot: Bootstrap {
                resamples: cfg.bootstrap,
                seed: cfg.seed,
                level: 0.95,
            },
            n,
        }
    }

    /// Score `scorer` (candidate `which` of `period`), record its row in `st.history`, save it
    /// as the best model when its validation figure (`select`: the pAUC, or the two-way pAUC)
    /// is the highest so far, and report the row.
    ///
    /// # Errors
    /// [`RunError`] for a non-finite score or an unwritable output folder.
    pub(super) fn evaluate<M: Scorer, N>(
        &self,
        scorer: &M,
        which: Candidate,
        period: &Period<N>,
        st: &mut LoopState,
        eval_start: Instant,
    ) -> Result<(), RunError> {
        let cfg = self.cfg;
        let t = Instant::now();
        let e = evaluate_point(
            scorer,
            self.val,
            self.test,
            self.device,
            ((cfg.alpha, cfg.beta), &self.boot),
            (cfg.tpr_min, cfg.fpr_max),
            st.steps_done,
        )?;
        let scoring = t.elapsed().as_secs_f64();
        let rec = self.row(&e, which, period, st, eval_start);
        let is_best = st.history.iter().all(|h| rec.beats(h, cfg.select));
        st.history.push(rec.clone());
        if is_best {
            self.save_best(scorer, &e, &rec)?;
        }
        self.report(&rec, scoring);
        Ok(())
    }

    /// The row of figures of candidate `which`.
    fn row<N>(
        &self,
        e: &PointEval,
        which: Candidate,
        period: &Period<N>,
        st: &LoopState,
        eval_start: Instant,
    ) -> EpochMetrics {
        EpochMetrics {
            epoch: st
                .history
                .iter()
                .filter(|h| h.candidate == Candidate::W)
                .count()
                + usize::from(which == Candidate::W),
            epochs_seen: (st.steps_done * self.cfg.batch) as f64 / self.n as f64,
            train_loss: period.loss,
            val_auc: e.val_auc,
            val_pauc: e.val_pauc,
            test_auc: e.test_auc,
            test_pauc: e.test_pauc,
            test_auc_ci: e.test_auc_ci,
            test_pauc_ci: e.test_pauc_ci,
            test_pauc_ci_draws: e.test_pauc_ci.map(|_| DRAW_SCHEME.to_string()),
            val_two_way: e.val_two_way,
            test_two_way: e.test_two_way,
            seconds: st.train_seconds,
            eval_seconds: st.eval_seconds + eval_start.elapsed().as_secs_f64(),
            checkpoint_seconds: st.checkpoint_seconds,
            cpu_share: st.cpu_seconds / st.train_seconds.max(1e-12),
            candidate: which,
            sbcd: period.diagnostics,
            tasks: e.tasks.clone(),
            step_ms: period.step_ms,
            lr: period.lr,
        }
    }

    /// `best.bpk`, the ROC plot and the scores files of a new best model.
    fn save_best<M: Scorer>(
        &self,
        scorer: &M,
        e: &PointEval,
        rec: &EpochMetrics,
    ) -> Result<(), RunError> {
        let cfg = self.cfg;
        let roc = &self.roc;
        rankrisk_models::checkpoint::save(scorer, &cfg.out.join("best.bpk"))?;
        let scores = e.test_scores.as_ref().unwrap_or(&e.val_scores);
        let k = roc.labels.len();
        let columns: Vec<Vec<f64>> = (0..k).map(|t| column(scores, k, t)).collect();
        let curves: Vec<_> = columns
            .iter()
            .zip(&roc.labels)
            .enumerate()
            .map(|(t, (s, y))| {
                let task = match k {
                    1 => String::new(),
                    _ => format!("{}, ", roc.names[t]),
                };
                let name = format!(
                    "{task}{} (epoch {}, {})",
                    cfg.method.name(),
                    rec.epoch,
                    rec.candidate.name()
                );
                (s.as_slice(), y.as_slice(), name)
            })
            .collect();
        let path = cfg.out.join("roc.png");
        if let Err(e) = roc_plot(&path, &curves, roc.set, (cfg.alpha, cfg.beta)) {
            say(self.bar, !cfg.quiet, format!("no ROC plot: {e}"));
        }
        write_scores(&cfg.out, roc.set, scores, &roc.labels, &roc.names)
            .map_err(RunError::output(&cfg.out))
    }

    /// The row's line above the progress bar.
    fn report(&self, rec: &EpochMetrics, scoring: f64) {
        let extra = match (&rec.sbcd, rec.candidate) {
            (Some(d), Candidate::W) => format!(
                " [active m {:.3} n {:.3}, lambda_m - lambda_n {:.3} ({:.3})]",
                d.active_m, d.active_n, d.gap_mean, d.gap_std
            ),
            (_, Candidate::VBarN) => " [v_bar_n]".to_string(),
            _ => String::new(),
        };
        say(
            self.bar,
            !self.cfg.quiet,
            format!(
                "epoch {} ({:.2} passes): loss {:.4}, val AUC {:.4} pAUC {:.4}, test AUC {:.4} pAUC {:.4}, {:.1} s training (scoring {scoring:.1} s){extra}",
                rec.epoch,
                rec.epochs_seen,
                rec.train_loss,
                rec.val_auc,
                rec.val_pauc,
                rec.test_auc,
                rec.test_pauc,
                rec.seconds
            ),
        );
    }
}
