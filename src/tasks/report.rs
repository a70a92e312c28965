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
    /// The FPR range of `test_pauc`.
    pub fpr: (f64, f64),
    /// Test accuracy of `sign(score)` where it means something (linear models trained for a
    /// classification loss), else `None`.
    pub test_accuracy: Option<f64>,
    /// Training seconds.
    pub seconds: f64,
}

/// The rows as a markdown table.
pub fn markdown(rows: &[ResultRow]) -> String {
    let mut out = String::from(
        "| data | method | test AUC | test pAUC | FPR range | test accuracy | train s |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let acc = r
            .test_accuracy
            .map_or_else(|| "-".to_string(), |a| format!("{a:.4}"));
        out.push_str(&format!(
            "| {} | {} | {:.4} | {:.4} | [{}, {}] | {acc} | {:.1} |\n",
            r.data, r.method, r.test_auc, r.test_pauc, r.fpr.0, r.fpr.1, r.seconds
        ));
    }
    out
}
