//! Scoring a model on an evaluation set: AUC (eq. 1 of the pAUC paper) and the pAUC over the
//! FPR range (eq. 2) after every period of a run, and `rankrisk eval`'s report of a saved
//! model with its ROC curve.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use rankrisk_datasets::ImageSource;
use rankrisk_models::Scorer;
use serde::{Deserialize, Serialize};

use crate::device::bridge::scores_to_cpu;
use crate::metrics::auc::{auc, pauc};
use crate::metrics::bootstrap::bootstrap_pauc_interval;
use crate::metrics::ci::{Bootstrap, DeLong, Interval};
use crate::metrics::conventions::libauc_two_way_pauc;
use crate::train::run::error::RunError;
use crate::train::run::prefetch::for_each_batch;
use crate::train::run::record::{TaskFigures, roc_plot};

/// Images scored per forward pass when a whole set is scored (inference, no autodiff).
pub const EVAL_BATCH: usize = 256;

/// Scores of every sample of `source` and every output of `model`, in id order, row-major
/// `[samples, tasks]` (for one task simply one score per sample; batches of [`EVAL_BATCH`]
/// assembled one ahead on a worker thread; `model` should be an inference copy, `valid()`).
///
/// # Errors
/// As [`ImageSource::batch`]; [`RunError::Scoring`] when the scores cannot be read back or are
/// not finite.
pub fn score_all<M: Scorer>(
    model: &M,
    source: &dyn ImageSource,
    device: &Device,
) -> Result<Vec<f64>, RunError> {
    let ids: Vec<usize> = (0..source.len()).collect();
    let mut chunks = ids.chunks(EVAL_BATCH).map(<[usize]>::to_vec);
    let mut out = Vec::with_capacity(ids.len() * source.tasks());
    for_each_batch::<RunError>(
        source,
        || chunks.next(),
        |host| {
            let scores = model.scores(host.to_device(device).inputs);
            let [n, k] = scores.dims();
            out.extend(scores_to_cpu(scores.reshape([n * k])).map_err(RunError::Scoring)?);
            Ok(())
        },
    )?;
    Ok(out)
}

/// Column `t` of a row-major `[rows, k]` matrix.
pub(crate) fn column(v: &[f64], k: usize, t: usize) -> Vec<f64> {
    v.iter().skip(t).step_by(k).copied().collect()
}

/// Validation and test figures of one model.
pub(crate) struct PointEval {
    pub val_auc: f64,
    pub val_pauc: f64,
    /// The two-way pAUC (None for multi-label runs, or where it is undefined).
    pub val_two_way: Option<f64>,
    pub test_two_way: Option<f64>,
    pub val_scores: Vec<f64>,
    pub test_auc: f64,
    pub test_pauc: f64,
    pub test_auc_ci: Option<[f64; 2]>,
    pub test_pauc_ci: Option<[f64; 2]>,
    pub test_scores: Option<Vec<f64>>,
    /// Each task's figures (multi-label runs; empty for one task).
    pub tasks: Vec<TaskFigures>,
}

/// The 95% intervals of the test AUC (DeLong) and pAUC (stratified bootstrap, `boot`
/// resamples; none for 0), None where the set has one class only.
fn intervals(
    scores: &[f64],
    labels: &[f64],
    (alpha, beta): (f64, f64),
    boot: &Bootstrap,
) -> (Option<[f64; 2]>, Option<[f64; 2]>) {
    let pair = |i: Interval| [i.lower, i.upper];
    let auc_ci = DeLong::new(scores, labels)
        .and_then(|d| d.interval(0.95))
        .ok()
        .map(pair);
    let pauc_ci = (boot.resamples > 0)
        .then(|| bootstrap_pauc_interval(scores, labels, boot, alpha, beta).ok())
        .flatten()
        .map(pair);
    (auc_ci, pauc_ci)
}

/// AUC and pAUC over `[alpha, beta]` of scores, NaN where the set has one class only.
fn figures(scores: &[f64], labels: &[f64], (alpha, beta): (f64, f64)) -> (f64, f64) {
    (
        auc(scores, labels).unwrap_or(f64::NAN),
        pauc(scores, labels, alpha, beta).unwrap_or(f64::NAN),
    )
}

/// Score `val` and `test` and compute their AUC and pAUC; a non-finite score is
/// [`RunError::Diverged`] at `step` (a NaN must not become a silent NaN pAUC).
pub(crate) fn evaluate_point<M: Scorer>(
    model: &M,
    val: &dyn ImageSource,
    test: Option<&dyn ImageSource>,
    device: &Device,
    (range, boot): ((f64, f64), &Bootstrap),
    (tpr_min, fpr_max): (f64, f64),
    step: usize,
) -> Result<PointEval, RunError> {
    let finite = |scores: Vec<f64>, set: &str| match scores.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(RunError::Diverged {
            step,
            quantity: format!("{set} score {i} is {}", scores[i]),
        }),
        None => Ok(scores),
    };
    let k = val.tasks();
    let val_scores = finite(score_all(model, val, device)?, "validation")?;
    if k > 1 {
        return multi_task_point(val_scores, val, test, model, device, range, finite);
    }
    let two_way = |s: &[f64], labels: &[f64]| libauc_two_way_pauc(s, labels, tpr_min, fpr_max).ok();
    let val_labels = val.labels();
    let (val_auc, val_pauc) = figures(&val_scores, &val_labels, range);
    let val_two_way = two_way(&val_scores, &val_labels);
    let (test_auc, test_pauc, (test_auc_ci, test_pauc_ci), test_two_way, test_scores) = match test {
        Some(t) => {
            let s = finite(score_all(model, t, device)?, "test")?;
            let labels = t.labels();
            let (a, pa) = figures(&s, &labels, range);
            let tw = two_way(&s, &labels);
            (a, pa, intervals(&s, &labels, range, boot), tw, Some(s))
        }
        None => (f64::NAN, f64::NAN, (None, None), None, None),
    };
    Ok(PointEval {
        val_auc,
        val_pauc,
        val_two_way,
        test_two_way,
        val_scores,
        test_auc,
        test_pauc,
        test_auc_ci,
        test_pauc_ci,
        test_scores,
        tasks: Vec::new(),
    })
}

/// A multi-label evaluation point: each task's AUC and pAUC, and their means over the tasks
/// as the point's figures (no intervals).
fn multi_task_point<M: Scorer>(
    val_scores: Vec<f64>,
    val: &dyn ImageSource,
    test: Option<&dyn ImageSource>,
    model: &M,
    device: &Device,
    range: (f64, f64),
    finite: impl Fn(Vec<f64>, &str) -> Result<Vec<f64>, RunError>,
) -> Result<PointEval, RunError> {
    let k = val.tasks();
    let test_scores = match test {
        Some(t) => Some(finite(score_all(model, t, device)?, "test")?),
        None => None,
    };
    let tasks: Vec<TaskFigures> = (0..k)
        .map(|t| {
            let (val_auc, val_pauc) =
                figures(&column(&val_scores, k, t), &val.task_labels(t), range);
            let (test_auc, test_pauc) = match (test, &test_scores) {
                (Some(src), Some(s)) => figures(&column(s, k, t), &src.task_labels(t), range),
                _ => (f64::NAN, f64::NAN),
            };
            TaskFigures {
                task: val.task_name(t),
                val_auc,
                val_pauc,
                test_auc,
                test_pauc,
            }
        })
        .collect();
    let mean = |f: fn(&TaskFigures) -> f64| tasks.iter().map(f).sum::<f64>() / k as f64;
    Ok(PointEval {
        val_two_way: None,
        test_two_way: None,
        val_auc: mean(|t| t.val_auc),
        val_pauc: mean(|t| t.val_pauc),
        val_scores,
        test_auc: mean(|t| t.test_auc),
        test_pauc: mean(|t| t.test_pauc),
        test_auc_ci: None,
        test_pauc_ci: None,
        test_scores,
        tasks,
    })
}

/// One task's figures in `rankrisk eval`'s report of a multi-label model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEval {
    /// The task.
    pub task: String,
    /// Positives of the task in the set.
    pub positives: usize,
    /// AUC.
    pub auc: f64,
    /// pAUC over FPR `[alpha, beta]`.
    pub pauc: f64,
}

/// What `rankrisk eval` reports for a trained model on one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The checkpoint scored.
    pub checkpoint: PathBuf,
    /// Which set (`test` or `val`).
    pub split: String,
    /// Samples scored.
    pub samples: usize,
    /// Positives among them (of the first task).
    pub positives: usize,
    /// AUC (the mean over the tasks for a multi-label model).
    pub auc: f64,
    /// pAUC over FPR `[alpha, beta]` (normalized; the mean over the tasks).
    pub pauc: f64,
    /// FPR range start.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
    /// Each task's figures (multi-label models; empty for one task).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskEval>,
}

/// Score every sample of `source` with `model` (inference mode) and write `eval_{split}.json`
/// and the ROC curves `roc_{split}.png` (one per task, FPR range shaded) into `out`.
///
/// # Errors
/// [`RunError`] for an unreadable image, a one-class set, NaN scores or an unwritable folder.
pub fn evaluate_model<M: Scorer>(
    model: &M,
    source: &dyn ImageSource,
    device: &Device,
    (alpha, beta): (f64, f64),
    checkpoint: &Path,
    split: &str,
    out: &Path,
) -> Result<EvalReport, RunError> {
    let scores = score_all(model, source, device)?;
    let k = source.tasks();
    let metric = |source| RunError::Metric {
        set: split.to_string(),
        source,
    };
    let per_task: Vec<(Vec<f64>, Vec<f64>)> = (0..k)
        .map(|t| (column(&scores, k, t), source.task_labels(t)))
        .collect();
    let mut tasks = Vec::with_capacity(k);
    for (t, (s, y)) in per_task.iter().enumerate() {
        tasks.push(TaskEval {
            task: source.task_name(t),
            positives: y.iter().filter(|&&v| v > 0.0).count(),
            auc: auc(s, y).map_err(metric)?,
            pauc: pauc(s, y, alpha, beta).map_err(metric)?,
        });
    }
    let mean = |f: fn(&TaskEval) -> f64| tasks.iter().map(f).sum::<f64>() / k as f64;
    let report = EvalReport {
        checkpoint: checkpoint.to_path_buf(),
        split: split.to_string(),
        samples: scores.len() / k,
        positives: tasks[0].positives,
        auc: mean(|t| t.auc),
        pauc: mean(|t| t.pauc),
        alpha,
        beta,
        tasks: if k > 1 { tasks.clone() } else { Vec::new() },
    };
    std::fs::create_dir_all(out).map_err(RunError::output(out))?;
    let path = out.join(format!("eval_{split}.json"));
    let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other);
    std::fs::write(&path, json.map_err(RunError::output(&path))?)
        .map_err(RunError::output(&path))?;
    let curves: Vec<_> = per_task
        .iter()
        .zip(&tasks)
        .map(|((s, y), t)| {
            let name = if k > 1 {
                format!("{}: AUC {:.4}, pAUC {:.4}", t.task, t.auc, t.pauc)
            } else {
                format!("AUC {:.4}, pAUC {:.4}", t.auc, t.pauc)
            };
            (s.as_slice(), y.as_slice(), name)
        })
        .collect();
    roc_plot(
        &out.join(format!("roc_{split}.png")),
        &curves,
        split,
        (alpha, beta),
    )?;
    Ok(report)
}
