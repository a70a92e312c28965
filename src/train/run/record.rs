//! What a run records: one row per evaluated model ([`EpochMetrics`], for AGD-SBCD with the
//! iteration's diagnostics), the run's outcome ([`RunSummary`]), and the files written from
//! them (metrics.csv and metrics.json, the ROC curve of the best model, the training curves),
//! plus the progress lines.

use std::io::Write;
use std::path::Path;

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::metrics::auc::roc_curve;
use crate::pauc::sbcd::OuterDiagnostics;
use crate::plot::{Series, roc, two_panel_curves};
use crate::train::run::config::{RunConfig, Select};
use crate::train::run::error::RunError;

/// Metrics after an epoch (or an AGD-SBCD outer iteration). For a multi-label run the AUC and
/// pAUC figures are the means over the tasks, each task's are in `tasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// Evaluation point (1-based).
    pub epoch: usize,
    /// Samples processed so far divided by the training set size.
    pub epochs_seen: f64,
    /// Mean training loss of the objective over the period.
    pub train_loss: f64,
    /// Validation AUC.
    pub val_auc: f64,
    /// Validation pAUC in the FPR range (normalized).
    pub val_pauc: f64,
    /// Test AUC (NaN without a test set).
    pub test_auc: f64,
    /// Test pAUC.
    pub test_pauc: f64,
    /// The test AUC's 95% interval (DeLong), when there is a test set.
    #[serde(default)]
    pub test_auc_ci: Option<[f64; 2]>,
    /// The test pAUC's 95% interval (stratified bootstrap of `RunConfig::bootstrap` resamples,
    /// seeded by the run's seed), when there is a test set and resamples.
    #[serde(default)]
    pub test_pauc_ci: Option<[f64; 2]>,
    /// The bootstrap draws that made `test_pauc_ci`
    /// ([`crate::metrics::bootstrap::DRAW_SCHEME`]). None without an interval, and for rows
    /// written before 2026-11-29, whose intervals came from draws in index order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_pauc_ci_draws: Option<String>,
    /// Validation two-way pAUC, TPR `>= tpr_min` and FPR `<= fpr_max` of the run (LibAUC's
    /// convention); None for multi-label runs and rows written before 2026-11-26.
    #[serde(default)]
    pub val_two_way: Option<f64>,
    /// Test two-way pAUC (as `val_two_way`; None without a test set).
    #[serde(default)]
    pub test_two_way: Option<f64>,
    /// Seconds of training so far (evaluation and checkpoints excluded).
    pub seconds: f64,
    /// Median milliseconds per training step over the period (AGD-SBCD: the mean over its SBCD
    /// steps); the step starts with the batch in host memory and ends with the parameters
    /// updated.
    #[serde(default)]
    pub step_ms: f64,
    /// Seconds of evaluation so far (scoring the validation and test sets, the best model's
    /// file and ROC plot).
    #[serde(default)]
    pub eval_seconds: f64,
    /// Seconds of writing checkpoints and metrics files so far.
    #[serde(default)]
    pub checkpoint_seconds: f64,
    /// Share of the training time spent in the objective's CPU code.
    pub cpu_share: f64,
    /// The learning rate of the last step before this point (the recipe's schedule; None
    /// for AGD-SBCD, ASGDA and rows written before 2026-11-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lr: Option<f64>,
    /// Which model this row scores (AGD-SBCD evaluates two candidates per iteration).
    #[serde(default)]
    pub candidate: Candidate,
    /// AGD-SBCD's diagnostics of the iteration (None for the other methods).
    #[serde(default)]
    pub sbcd: Option<OuterDiagnostics>,
    /// Each task's figures (multi-label runs; empty for one task).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskFigures>,
}

impl EpochMetrics {
    /// The validation figure `select` ranks rows by (NaN where a row lacks it, which ranks
    /// below every number).
    pub fn selection_figure(&self, select: Select) -> f64 {
        match select {
            Select::Pauc => self.val_pauc,
            Select::TwoWay => self.val_two_way.unwrap_or(f64::NAN),
        }
    }

    /// Whether this row is better than `other` by `select` (strictly: the first of equal
    /// rows stays the best).
    pub fn beats(&self, other: &EpochMetrics, select: Select) -> bool {
        let (a, b) = (
            self.selection_figure(select),
            other.selection_figure(select),
        );
        a > b || (b.is_nan() && !a.is_nan())
    }
}

/// One task's figures at an evaluation point of a multi-label run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskFigures {
    /// The task.
    pub task: String,
    /// Validation AUC.
    pub val_auc: f64,
    /// Validation pAUC.
    pub val_pauc: f64,
    /// Test AUC (NaN without a test set).
    pub test_auc: f64,
    /// Test pAUC.
    pub test_pauc: f64,
}

/// The model an evaluation row scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Candidate {
    /// The iterate the training goes on from (`w^(k+1)` for AGD-SBCD).
    #[default]
    W,
    /// AGD-SBCD's `v_bar_n^(k)`, the output Algorithm 2 names, with its own batch-norm
    /// statistics.
    VBarN,
}

impl Candidate {
    /// Short name for tables and logs.
    pub fn name(self) -> &'static str {
        match self {
            Candidate::W => "w",
            Candidate::VBarN => "v_bar_n",
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The settings.
    pub config: RunConfig,
    /// One record per evaluation point.
    pub history: Vec<EpochMetrics>,
    /// The evaluation point with the best validation figure of `config.select` (its model is
    /// `best.bpk`).
    pub best: EpochMetrics,
}

/// The training-curve plot of a run: training loss and validation pAUC against passes, one
/// curve per candidate (`w`, and AGD-SBCD's `v_bar_n`).
///
/// # Errors
/// [`RunError::Plot`] when no font is available or the file cannot be written.
pub(crate) fn curves_plot(
    path: &Path,
    method: &str,
    history: &[EpochMetrics],
) -> Result<(), RunError> {
    let curves = |f: fn(&EpochMetrics) -> f64| {
        [Candidate::W, Candidate::VBarN]
            .into_iter()
            .filter(|&c| history.iter().any(|h| h.candidate == c))
            .map(|c| Series {
                name: match c {
                    Candidate::W => method.to_string(),
                    Candidate::VBarN => format!("{method} v_bar_n"),
                },
                points: history
                    .iter()
                    .filter(|h| h.candidate == c)
                    .map(|h| (h.epochs_seen, f(h)))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    Ok(two_panel_curves(
        path,
        &format!("{method} training"),
        "passes over the training set",
        ("training loss", &curves(|h| h.train_loss)),
        ("validation pAUC", &curves(|h| h.val_pauc)),
        false,
    )?)
}

/// A line above the progress bar, or on standard error when the bar is not drawn (no
/// terminal: logs, CI), unless the run is quiet.
pub(crate) fn say(bar: &ProgressBar, progress: bool, line: String) {
    if !bar.is_hidden() {
        bar.println(line);
    } else if progress {
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

pub(crate) fn write_metrics(out: &Path, history: &[EpochMetrics]) -> std::io::Result<()> {
    let mut csv = std::fs::File::create(out.join("metrics.csv"))?;
    writeln!(
        csv,
        "epoch,epochs_seen,train_loss,val_auc,val_pauc,test_auc,test_pauc,seconds,cpu_share,\
         candidate,active_m,active_n,gap_mean,gap_std,eta,theta,gamma_over_mu,eval_seconds,\
         checkpoint_seconds,test_auc_lower,test_auc_upper,test_pauc_lower,test_pauc_upper,step_ms,\
         val_two_way,test_two_way,test_pauc_ci_draws"
    )?;
    // A figure that does not apply (no test set, no AGD-SBCD diagnostics) is an empty field,
    // the CSV convention for a missing value, never `NaN`.
    let num = |v: Option<f64>| {
        v.filter(|v| !v.is_nan())
            .map_or(String::new(), |v| v.to_string())
    };
    let sci = |v: Option<f64>| {
        v.filter(|v| !v.is_nan())
            .map_or(String::new(), |v| format!("{v:e}"))
    };
    for h in history {
        let d = h.sbcd.as_ref();
        let cells = [
            h.epoch.to_string(),
            format!("{:.4}", h.epochs_seen),
            num(Some(h.train_loss)),
            num(Some(h.val_auc)),
            num(Some(h.val_pauc)),
            num(Some(h.test_auc)),
            num(Some(h.test_pauc)),
            format!("{:.3}", h.seconds),
            format!("{:.6}", h.cpu_share),
            h.candidate.name().to_string(),
            num(d.map(|d| d.active_m)),
            num(d.map(|d| d.active_n)),
            num(d.map(|d| d.gap_mean)),
            num(d.map(|d| d.gap_std)),
            sci(d.map(|d| d.eta)),
            sci(d.map(|d| d.theta)),
            num(d.map(|d| d.gamma_over_mu)),
            format!("{:.3}", h.eval_seconds),
            format!("{:.3}", h.checkpoint_seconds),
            num(h.test_auc_ci.map(|c| c[0])),
            num(h.test_auc_ci.map(|c| c[1])),
            num(h.test_pauc_ci.map(|c| c[0])),
            num(h.test_pauc_ci.map(|c| c[1])),
            format!("{:.2}", h.step_ms),
            num(h.val_two_way),
            num(h.test_two_way),
            h.test_pauc_ci_draws.clone().unwrap_or_default(),
        ];
        writeln!(csv, "{}", cells.join(","))?;
    }
    std::fs::write(
        out.join("metrics.json"),
        serde_json::to_string_pretty(history).map_err(std::io::Error::other)?,
    )
}

/// The scores of the best model on the set its ROC curve shows, as CSV files that
/// `rankrisk metrics` reads: `label` (+1/-1) and `score`, one row per sample in id order;
/// `scores_{set}.csv` for one task, `scores_{set}_{task}.csv` per task of a multi-label run.
pub(crate) fn write_scores(
    out: &Path,
    set: &str,
    scores: &[f64],
    labels: &[Vec<f64>],
    names: &[String],
) -> std::io::Result<()> {
    let k = labels.len();
    for (t, (y, name)) in labels.iter().zip(names).enumerate() {
        let mut csv = String::from("label,score\n");
        for (r, label) in y.iter().enumerate() {
            csv.push_str(&format!("{label},{}\n", scores[r * k + t]));
        }
        let file = match k {
            1 => format!("scores_{set}.csv"),
            _ => format!("scores_{set}_{}.csv", name.to_lowercase().replace(' ', "-")),
        };
        std::fs::write(out.join(file), csv)?;
    }
    Ok(())
}

/// One ROC curve to draw: scores, labels and the curve's name.
pub(crate) type RocCurve<'a> = (&'a [f64], &'a [f64], String);

/// The ROC curves (one per task) as a PNG at `path`, titled with the set's name, the FPR range
/// shaded.
pub(crate) fn roc_plot(
    path: &Path,
    curves: &[RocCurve<'_>],
    set: &str,
    (alpha, beta): (f64, f64),
) -> Result<(), RunError> {
    let series = curves
        .iter()
        .map(|(scores, labels, name)| {
            let points = roc_curve(scores, labels).map_err(|source| RunError::Metric {
                set: set.to_string(),
                source,
            })?;
            Ok(Series {
                name: name.clone(),
                points: points.iter().map(|p| (p.fpr, p.tpr)).collect(),
            })
        })
        .collect::<Result<Vec<_>, RunError>>()?;
    let title = format!("ROC on the {set} set, FPR range shaded");
    Ok(roc(path, &title, &series, alpha, beta)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(val_pauc: f64, val_two_way: Option<f64>) -> EpochMetrics {
        EpochMetrics {
            epoch: 1,
            epochs_seen: 1.0,
            train_loss: 0.5,
            val_auc: 0.9,
            val_pauc,
            test_auc: 0.9,
            test_pauc: 0.8,
            test_auc_ci: None,
            test_pauc_ci: None,
            test_pauc_ci_draws: None,
            val_two_way,
            test_two_way: None,
            seconds: 1.0,
            step_ms: 1.0,
            eval_seconds: 0.0,
            checkpoint_seconds: 0.0,
            cpu_share: 0.0,
            lr: None,
            candidate: Candidate::W,
            sbcd: None,
            tasks: Vec::new(),
        }
    }

    #[test]
    fn rows_rank_by_the_selected_figure_ties_keep_the_first_and_nan_loses() {
        let (a, b) = (row(0.9, Some(0.5)), row(0.8, Some(0.7)));
        assert!(a.beats(&b, Select::Pauc) && !b.beats(&a, Select::Pauc));
        assert!(b.beats(&a, Select::TwoWay) && !a.beats(&b, Select::TwoWay));
        // A tie is not a win.
        assert!(!a.beats(&a.clone(), Select::Pauc));
        // A missing or NaN figure loses to a number and does not beat one.
        let (none, nan) = (row(f64::NAN, None), row(0.95, Some(f64::NAN)));
        assert!(a.beats(&none, Select::Pauc) && !none.beats(&a, Select::Pauc));
        assert!(a.beats(&nan, Select::TwoWay) && !nan.beats(&a, Select::TwoWay));
        assert!(!none.beats(&nan, Select::TwoWay));
    }
}
