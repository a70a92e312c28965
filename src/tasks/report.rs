//! One results row per trained model, and the markdown table the command line and the examples
//! print at the end of a run.

use serde::Serialize;

/// The test figures of one trained model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultRow {
    /// Data set (and task).
    pub data: String,
    /// Method.
    pub method: String,
    /// Test AUC.
    pub test_auc: f64,
    /// Test pAUC in the FPR range `fpr` (normalized).
    pub test_pauc: f64,
    /// The test AUC's 95% interval (DeLong), where it was computed.
    pub test_auc_ci: Option<[f64; 2]>,
    /// The test pAUC's 95% interval (stratified bootstrap), where it was computed.
    pub test_pauc_ci: Option<[f64; 2]>,
    /// The bootstrap draws that made `test_pauc_ci`
    /// ([`crate::metrics::bootstrap::DRAW_SCHEME`]; None without an interval, or for an
    /// interval saved before 2026-11-29, drawn in index order).
    pub test_pauc_ci_draws: Option<String>,
    /// The FPR range of `test_pauc`.
    pub fpr: (f64, f64),
    /// Test accuracy of `sign(score)` where it means something (linear models trained for a
    /// classification loss), else `None`.
    pub test_accuracy: Option<f64>,
    /// Training seconds.
    pub seconds: f64,
    /// The test two-way pAUC with its region, where it was computed (image runs).
    pub test_two_way: Option<TwoWayFigure>,
}

/// A two-way pAUC (LibAUC's convention) with its region.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TwoWayFigure {
    /// The pAUC.
    pub value: f64,
    /// The region's TPR bound.
    pub tpr_min: f64,
    /// The region's FPR bound.
    pub fpr_max: f64,
}

/// A figure with its interval, when there is one: `0.9755 [0.9601, 0.9870]`.
fn with_interval(value: f64, ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([lo, hi]) => format!("{value:.4} [{lo:.4}, {hi:.4}]"),
        None => format!("{value:.4}"),
    }
}

/// The rows as a markdown table (intervals are 95%: DeLong's for the AUC, a stratified
/// bootstrap for the pAUC), and below it a line naming the bootstrap's draws of the pAUC
/// intervals, when there are any.
pub fn markdown(rows: &[ResultRow]) -> String {
    let mut out = String::from(
        "| data | method | test AUC [95% CI] | test pAUC [95% CI] | FPR range | test two-way pAUC | test accuracy | train s |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let acc = r
            .test_accuracy
            .map_or_else(|| "-".to_string(), |a| format!("{a:.4}"));
        let two_way = r.test_two_way.map_or_else(
            || "-".to_string(),
            |t| {
                format!(
                    "{:.4} (TPR >= {}, FPR <= {})",
                    t.value, t.tpr_min, t.fpr_max
                )
            },
        );
        out.push_str(&format!(
            "| {} | {} | {} | {} | [{}, {}] | {two_way} | {acc} | {:.1} |\n",
            r.data,
            r.method,
            with_interval(r.test_auc, r.test_auc_ci),
            with_interval(r.test_pauc, r.test_pauc_ci),
            r.fpr.0,
            r.fpr.1,
            r.seconds
        ));
    }
    let mut draws: Vec<&str> = rows
        .iter()
        .filter(|r| r.test_pauc_ci.is_some())
        .map(|r| {
            r.test_pauc_ci_draws
                .as_deref()
                .unwrap_or("index order (saved before 2026-11-29)")
        })
        .collect();
    draws.dedup();
    if !draws.is_empty() {
        out.push_str(&format!(
            "\nTest pAUC intervals: stratified bootstrap, draws: {}.\n",
            draws.join("; ")
        ));
    }
    out
}
