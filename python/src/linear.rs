//! `rankrisk._rankrisk`'s linear solvers, with the GIL released: the rank-based objective of
//! eq. (1) of the rank-based paper by proximal ADMM or sADMM (`rankrisk_core::admm::linear`,
//! the solver of `rankrisk fit-linear --solver admm|sadmm`), and the pAUC over an FPR range by
//! AGD-SBCD and the pAUC paper's baselines (`rankrisk_core::pauc`, the solvers of `rankrisk
//! fit-pauc`). The Python module `rankrisk.linear` wraps them as scikit-learn estimators.

use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rankrisk_core::admm::linear::{AdmmConfig, LinearData, solve};
use rankrisk_core::admm::{GammaSchedule, RhoSchedule};
use rankrisk_core::math::loss::Loss;
use rankrisk_core::math::regularizer::Regularizer;
use rankrisk_core::math::weights::Weights;
use rankrisk_core::pauc::agd::AgdSbcdConfig;
use rankrisk_core::pauc::baselines::{self, Baseline, BaselineConfig};
use rankrisk_core::pauc::linear::{Budget, agd_sbcd_linear};
use rankrisk_core::pauc::objective::PairLoss;
use rankrisk_core::pauc::sbcd::{DualInit, PairData};

use crate::arrays::{labels, with_ndim};

/// A setting given as text (`objective="cvar:q=0.8"`), parsed as the command line parses it.
fn parse<T: std::str::FromStr>(name: &str, text: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    text.parse::<T>()
        .map_err(|e| PyValueError::new_err(format!("{name}={text:?}: {e}")))
}

/// A C-contiguous 2-D float64 array `x` (the argument `name`).
fn features<'py>(x: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray2<'py, f64>> {
    let array = with_ndim(x, name, 2)?;
    let typed: PyReadonlyArray2<'py, f64> = array.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name}: float64 features are needed (numpy.asarray(X, dtype=float))"
        ))
    })?;
    if typed.as_slice().is_err() {
        return Err(PyValueError::new_err(format!(
            "{name}: a C-contiguous array is needed (numpy.ascontiguousarray)"
        )));
    }
    Ok(typed)
}

/// Fit the rank-based objective `sum_i sigma_i l(-y_i x_i^T w) + g(w)` (eq. 1) by ADMM
/// (Algorithm 1) or sADMM. Returns a dict: `w`, `objective`, `iterations`, `converged`, `gap`
/// (the certified relative duality gap where one applies, else None), `primal_residual`,
/// `dual_residual`.
#[pyfunction]
#[pyo3(signature = (x, y, objective, loss, reg, solver, rho, max_iter, tol))]
#[allow(clippy::too_many_arguments)]
pub fn fit_rank_risk<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    objective: &str,
    loss: &str,
    reg: &str,
    solver: &str,
    rho: Option<&str>,
    max_iter: usize,
    tol: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let x = features(x, "X")?;
    let y = labels(y, "y")?;
    let smoothing = match solver {
        "admm" => None,
        "sadmm" => Some(GammaSchedule::default()),
        other => {
            return Err(PyValueError::new_err(format!(
                "solver={other:?}: expected \"admm\" or \"sadmm\""
            )));
        }
    };
    let cfg = AdmmConfig {
        loss: parse::<Loss>("loss", loss)?,
        weights: parse::<Weights>("objective", objective)?,
        reg: parse::<Regularizer>("reg", reg)?,
        rho: rho.map(|r| parse::<RhoSchedule>("rho", r)).transpose()?,
        max_iter,
        tol,
        smoothing,
        ..AdmmConfig::default()
    };
    let d = x.shape()[1];
    let rows = x.as_slice()?;
    let result = py
        .detach(|| {
            let data = LinearData::new(rows, &y, d)?;
            solve(&data, &cfg, None)
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("w", result.w)?;
    out.set_item("objective", result.objective)?;
    out.set_item("iterations", result.iterations)?;
    out.set_item("converged", result.converged)?;
    out.set_item("gap", result.gap)?;
    out.set_item("primal_residual", result.primal_relative)?;
    out.set_item("dual_residual", result.dual_relative)?;
    Ok(out)
}

/// Fit a linear scorer to the pAUC over FPR `[alpha, beta]` (eq. 3 of the pAUC paper) by
/// AGD-SBCD (Algorithms 1-2, `solver = "agd-sbcd"`) or one of the paper's baselines (`dca`,
/// `prox-dca`, `mb`, `subgrad`), from `w = 0`, as `rankrisk fit-pauc` runs them. Returns a dict:
/// `w` and `history`, one `(epochs, objective, pauc)` per outer iteration (per epoch for `mb`
/// and `subgrad`).
#[pyfunction]
#[pyo3(signature = (x, y, alpha, beta, surrogate, solver, epochs, budget_epochs, c, t_scale,
    mu_scale, gamma_scale, i, j, seed, c_dual, dual_init, dual_refresh, common_blocks, prox_l))]
#[allow(clippy::too_many_arguments)]
pub fn fit_pauc<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    alpha: f64,
    beta: f64,
    surrogate: &str,
    solver: &str,
    epochs: usize,
    budget_epochs: Option<f64>,
    c: f64,
    t_scale: usize,
    mu_scale: f64,
    gamma_scale: f64,
    i: usize,
    j: usize,
    seed: u64,
    c_dual: Option<f64>,
    dual_init: &str,
    dual_refresh: bool,
    common_blocks: bool,
    prox_l: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let x = features(x, "X")?;
    let y = labels(y, "y")?;
    let loss = parse::<PairLoss>("surrogate", surrogate)?;
    let dual_init = match dual_init {
        "exact" => DualInit::Exact,
        "mean" => DualInit::Mean,
        other => {
            return Err(PyValueError::new_err(format!(
                "dual_init={other:?}: expected \"exact\" or \"mean\""
            )));
        }
    };
    let budget = match budget_epochs {
        Some(e) => Budget::Epochs(e),
        None => Budget::Outer(epochs),
    };
    let baseline = match solver {
        "agd-sbcd" => None,
        "dca" => Some(Baseline::Dca),
        "prox-dca" => Some(Baseline::ProxDca),
        "mb" => Some(Baseline::MiniBatch),
        "subgrad" => Some(Baseline::Subgradient),
        other => {
            return Err(PyValueError::new_err(format!(
                "solver={other:?}: expected \"agd-sbcd\", \"dca\", \"prox-dca\", \"mb\" or \"subgrad\""
            )));
        }
    };
    let d = x.shape()[1];
    let rows = x.as_slice()?;
    let (w, history) = py
        .detach(|| {
            let data = PairData::new(rows, &y, d)?;
            let w0 = vec![0.0; d];
            match baseline {
                None => {
                    let cfg = AgdSbcdConfig {
                        loss,
                        t_scale,
                        c,
                        c_dual,
                        mu_scale,
                        gamma_scale,
                        i,
                        j,
                        seed,
                        dual_init,
                        dual_refresh,
                        common_blocks,
                        refresh_steps: 0,
                        ..AgdSbcdConfig::new(alpha, beta)
                    };
                    agd_sbcd_linear(&data, &w0, &cfg, budget)
                }
                Some(which) => {
                    let cfg = BaselineConfig {
                        alpha,
                        beta,
                        loss,
                        budget,
                        t_scale,
                        c,
                        prox_l,
                        i,
                        j,
                        seed,
                    };
                    baselines::run(&data, &w0, which, &cfg)
                }
            }
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("w", w)?;
    let rows: Vec<(f64, f64, f64)> = history
        .iter()
        .map(|r| (r.epochs, r.objective, r.pauc))
        .collect();
    out.set_item("history", rows)?;
    Ok(out)
}

/// Register the linear solvers in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_rank_risk, m)?)?;
    m.add_function(wrap_pyfunction!(fit_pauc, m)?)?;
    Ok(())
}
