//! Scoring a model on an evaluation set: AUC (eq. 1 of the pAUC paper) and the pAUC over the
//! FPR range (eq. 2) after every period of a run, and `rankrisk eval`'s report of a saved
//! model with its ROC curve.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use rankrisk_datasets::ImageSource;
use rankrisk_models::Scorer;
use serde::{Deserialize, Serialize};

use crate::bridge::scores_to_cpu;
use crate::metrics::auc::{auc, pauc};
use crate::train::run::error::RunError;
use crate::train::run::prefetch::for_each_batch;
use crate::train::run::record::roc_plot;

/// Images scored per forward pass when a whole set is scored (inference, no autodiff).
pub const EVAL_BATCH: usize = 256;

/// Scores of every sample of `source`, in id order (batches of [`EVAL_BATCH`] assembled one
/// ahead on a worker thread; `model` should be an inference copy, `valid()`).
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
    let mut out = Vec::with_capacity(ids.len());
    for_each_batch::<RunError>(
        source,
        || chunks.next(),
        |host| {
            let scores = model.score(host.to_device(device).inputs);
            out.extend(scores_to_cpu(scores).map_err(RunError::Scoring)?);
            Ok(())
        },
    )?;
    Ok(out)
}

/// Validation and test figures of one model.
pub(crate) struct PointEval {
    pub val_auc: f64,
    pub val_pauc: f64,
    pub val_scores: Vec<f64>,
    pub test_auc: f64,
    pub test_pauc: f64,
    pub test_scores: Option<Vec<f64>>,
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
    range: (f64, f64),
    step: usize,
) -> Result<PointEval, RunError> {
    let finite = |scores: Vec<f64>, set: &str| match scores.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(RunError::Diverged {
            step,
            quantity: format!("{set} score {i} is {}", scores[i]),
        }),
        None => Ok(scores),
    };
    let val_scores = finite(score_all(model, val, device)?, "validation")?;
    let (val_auc, val_pauc) = figures(&val_scores, &val.labels(), range);
    let (test_auc, test_pauc, test_scores) = match test {
        Some(t) => {
            let s = finite(score_all(model, t, device)?, "test")?;
            let (a, pa) = figures(&s, &t.labels(), range);
            (a, pa, Some(s))
        }
        None => (f64::NAN, f64::NAN, None),
    };
    Ok(PointEval {
        val_auc,
        val_pauc,
        val_scores,
        test_auc,
        test_pauc,
        test_scores,
    })
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
    /// Positives among them.
    pub positives: usize,
    /// AUC.
    pub auc: f64,
    /// pAUC over FPR `[alpha, beta]` (normalized).
    pub pauc: f64,
    /// FPR range start.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
}

/// Score every sample of `source` with `model` (inference mode) and write `eval_{split}.json`
/// and the ROC curve `roc_{split}.png` (FPR range shaded) into `out`.
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
    let labels = source.labels();
    let metric = |source| RunError::Metric {
        set: split.to_string(),
        source,
    };
    let report = EvalReport {
        checkpoint: checkpoint.to_path_buf(),
        split: split.to_string(),
        samples: labels.len(),
        positives: labels.iter().filter(|&&y| y > 0.0).count(),
        auc: auc(&scores, &labels).map_err(metric)?,
        pauc: pauc(&scores, &labels, alpha, beta).map_err(metric)?,
        alpha,
        beta,
    };
    std::fs::create_dir_all(out).map_err(RunError::output(out))?;
    let path = out.join(format!("eval_{split}.json"));
    let json = serde_json::to_string_pretty(&report).map_err(std::io::Error::other);
    std::fs::write(&path, json.map_err(RunError::output(&path))?)
        .map_err(RunError::output(&path))?;
    roc_plot(
        &out.join(format!("roc_{split}.png")),
        &scores,
        &labels,
        format!("AUC {:.4}, pAUC {:.4}", report.auc, report.pauc),
        split,
        (alpha, beta),
    )?;
    Ok(report)
}
