//! `rankrisk._rankrisk`'s metrics: the core's exact ranking metrics (`rankrisk_core::metrics`)
//! on numpy arrays, computed with the GIL released. The Python module `rankrisk.metrics`
//! wraps them (lists, multi-label columns, named results).

use numpy::{PyArray1, ToPyArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rankrisk_core::metrics::auc::{MetricError, pauc as core_pauc, roc_curve as core_roc};
use rankrisk_core::metrics::bootstrap::{
    DRAW_SCHEME, bootstrap_pauc_compare, bootstrap_pauc_interval,
};
use rankrisk_core::metrics::ci::{Bootstrap, DeLong, PairedTest};
use rankrisk_core::metrics::conventions::{libauc_two_way_pauc, mcclish_pauc};
use rankrisk_core::metrics::ranked::RankedColumn;

use crate::arrays::{labels, scores};

/// A metric's refusal as a Python `ValueError`, in the words of the command line's.
pub fn value_error(e: MetricError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `(difference, std_error, z, p_value)` of a paired test.
type Test = (f64, f64, f64, f64);

fn test_tuple(t: PairedTest) -> Test {
    (t.difference, t.std_error, t.z, t.p_value)
}

/// Normalized partial AUC over FPR `[alpha, beta]` (eq. 2 of the pAUC paper, ties 1/2);
/// `(0, 1)` is the AUC.
#[pyfunction]
pub fn pauc(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_score: &Bound<'_, PyAny>,
    alpha: f64,
    beta: f64,
) -> PyResult<f64> {
    let y = labels(y_true, "y_true")?;
    let s = scores(y_score, "y_score")?;
    let s = s.as_slice();
    py.detach(|| core_pauc(s, &y, alpha, beta))
        .map_err(value_error)
}

/// The McClish-standardized pAUC over FPR `[0, max_fpr]` (scikit-learn's
/// `roc_auc_score(max_fpr=...)`).
#[pyfunction]
pub fn mcclish(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_score: &Bound<'_, PyAny>,
    max_fpr: f64,
) -> PyResult<f64> {
    let y = labels(y_true, "y_true")?;
    let s = scores(y_score, "y_score")?;
    let s = s.as_slice();
    py.detach(|| mcclish_pauc(s, &y, max_fpr))
        .map_err(value_error)
}

/// LibAUC's two-way pAUC (TPR `>= min_tpr`, FPR `<= max_fpr`), defined at every boundary.
#[pyfunction]
pub fn two_way(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_score: &Bound<'_, PyAny>,
    max_fpr: f64,
    min_tpr: f64,
) -> PyResult<f64> {
    let y = labels(y_true, "y_true")?;
    let s = scores(y_score, "y_score")?;
    let s = s.as_slice();
    py.detach(|| libauc_two_way_pauc(s, &y, min_tpr, max_fpr))
        .map_err(value_error)
}

/// The ROC curve: `(fpr, tpr, thresholds)`, from `(0, 0)` at threshold `+inf` to `(1, 1)`,
/// one point per distinct score.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn roc<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_score: &Bound<'py, PyAny>,
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
)> {
    let y = labels(y_true, "y_true")?;
    let s = scores(y_score, "y_score")?;
    let s = s.as_slice();
    let points = py.detach(|| core_roc(s, &y)).map_err(value_error)?;
    let column = |f: fn(&rankrisk_core::metrics::auc::RocPoint) -> f64| {
        points.iter().map(f).collect::<Vec<f64>>().to_pyarray(py)
    };
    Ok((
        column(|p| p.fpr),
        column(|p| p.tpr),
        column(|p| p.threshold),
    ))
}

/// The AUC with DeLong's interval at coverage `level`: `(auc, lower, upper)` (pROC's
/// `ci.auc(method = "delong")`).
#[pyfunction]
pub fn delong_ci(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_score: &Bound<'_, PyAny>,
    level: f64,
) -> PyResult<(f64, f64, f64)> {
    let y = labels(y_true, "y_true")?;
    let s = scores(y_score, "y_score")?;
    let s = s.as_slice();
    let i = py
        .detach(|| DeLong::new(s, &y)?.interval(level))
        .map_err(value_error)?;
    Ok((i.estimate, i.lower, i.upper))
}

/// DeLong's paired test of two scorers' AUCs on the same samples: `(difference, std_error, z,
/// p_value)` (pROC's `roc.test(method = "delong")`).
#[pyfunction]
pub fn delong_test(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    score_a: &Bound<'_, PyAny>,
    score_b: &Bound<'_, PyAny>,
) -> PyResult<Test> {
    let y = labels(y_true, "y_true")?;
    let a = scores(score_a, "score_a")?;
    let b = scores(score_b, "score_b")?;
    let (a, b) = (a.as_slice(), b.as_slice());
    let t = py
        .detach(|| RankedColumn::new(a, &y)?.delong_test(&RankedColumn::new(b, &y)?))
        .map_err(value_error)?;
    Ok(test_tuple(t))
}

/// Our pAUC over FPR `[alpha, beta]` with a seeded stratified-bootstrap interval: `(pauc,
/// lower, upper)` (pROC's `ci(method = "bootstrap")`, R's type-7 quantiles).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn bootstrap_ci(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    y_score: &Bound<'_, PyAny>,
    alpha: f64,
    beta: f64,
    resamples: usize,
    seed: u64,
    level: f64,
) -> PyResult<(f64, f64, f64)> {
    let y = labels(y_true, "y_true")?;
    let s = scores(y_score, "y_score")?;
    let s = s.as_slice();
    let boot = Bootstrap {
        resamples,
        seed,
        level,
    };
    let i = py
        .detach(|| bootstrap_pauc_interval(s, &y, &boot, alpha, beta))
        .map_err(value_error)?;
    Ok((i.estimate, i.lower, i.upper))
}

/// The paired stratified bootstrap test of two scorers' pAUCs over FPR `[alpha, beta]`:
/// `(difference, std_error, z, p_value)` (pROC's `roc.test(method = "bootstrap")`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn bootstrap_test(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    score_a: &Bound<'_, PyAny>,
    score_b: &Bound<'_, PyAny>,
    alpha: f64,
    beta: f64,
    resamples: usize,
    seed: u64,
) -> PyResult<Test> {
    let y = labels(y_true, "y_true")?;
    let a = scores(score_a, "score_a")?;
    let b = scores(score_b, "score_b")?;
    let (a, b) = (a.as_slice(), b.as_slice());
    let boot = Bootstrap {
        resamples,
        seed,
        level: 0.95,
    };
    let t = py
        .detach(|| bootstrap_pauc_compare(a, b, &y, &boot, alpha, beta))
        .map_err(value_error)?;
    Ok(test_tuple(t))
}

/// Register the metrics in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("BOOTSTRAP_DRAWS", DRAW_SCHEME)?;
    m.add_function(wrap_pyfunction!(pauc, m)?)?;
    m.add_function(wrap_pyfunction!(mcclish, m)?)?;
    m.add_function(wrap_pyfunction!(two_way, m)?)?;
    m.add_function(wrap_pyfunction!(roc, m)?)?;
    m.add_function(wrap_pyfunction!(delong_ci, m)?)?;
    m.add_function(wrap_pyfunction!(delong_test, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_ci, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_test, m)?)?;
    Ok(())
}
