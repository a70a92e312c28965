//! `rankrisk._rankrisk.Objective`: one of the core's per-batch objectives (SOPA, SOPA-s, SOTA-s,
//! STACO, PAUCI, UPAUCI, AUC-M, mini-batch pAUC, ERM, the deep ADMM's w-step term with its
//! outer step) with its per-sample state in Rust, for
//! `rankrisk.torch`'s losses. Built from the training labels and its settings as JSON (the
//! core config's keys; an absent key takes its default, an unknown one is refused by name);
//! `batch_gradient` is one step on a batch's scores, labels and ids with the GIL released;
//! `state` / `set_state` carry the whole state as named float64 arrays.

use numpy::{PyArray1, PyReadonlyArray1, ToPyArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::str::FromStr;

use rankrisk_core::math::loss::Loss;
use rankrisk_core::math::weights::Weights;
use rankrisk_core::objective::aucm::AucMConfig;
use rankrisk_core::objective::deep_admm::{DeepAdmm, DeepAdmmConfig};
use rankrisk_core::objective::dro_pauc::{SopaConfig, SopaSConfig, SotaSConfig, StacoConfig};
use rankrisk_core::objective::erm::ErmConfig;
use rankrisk_core::objective::instance_pauc::{PauciConfig, UpauciConfig};
use rankrisk_core::objective::mb_pauc::MiniBatchPaucConfig;
use rankrisk_core::objective::{Objective, TrainError};

use crate::arrays::{labels, scores, with_ndim};

/// A refusal of the core's objective as a `ValueError` in its own words.
fn train_error(e: TrainError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The config of `kind` from the JSON `settings`, every key checked against the config's own.
fn config<C>(kind: &str, settings: &str, load: impl Fn(&[u8]) -> Result<C, String>) -> PyResult<C>
where
    C: serde::Serialize,
{
    let config = load(settings.as_bytes())
        .map_err(|e| PyValueError::new_err(format!("{kind}'s settings: {e}")))?;
    let given: serde_json::Map<String, serde_json::Value> = serde_json::from_str(settings)
        .map_err(|e| PyValueError::new_err(format!("{kind}'s settings: {e}")))?;
    let known = serde_json::to_value(&config).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if let Some(key) = given.keys().find(|k| known.get(k.as_str()).is_none()) {
        let names: Vec<&String> = known
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        return Err(PyTypeError::new_err(format!(
            "{kind} has no setting `{key}` (its settings: {names:?})"
        )));
    }
    Ok(config)
}

/// An objective of the core crate, its state in Rust.
#[pyclass(module = "rankrisk._rankrisk", name = "Objective")]
pub struct PyObjective {
    inner: Inner,
    /// Samples of the training set (ids run below it).
    n: usize,
}

/// The objective behind [`PyObjective`]: any per-batch one through the trait, the deep ADMM
/// as itself (its outer step and parameter terms are its own).
enum Inner {
    Batch(Box<dyn Objective + Send + Sync>),
    Admm(Box<DeepAdmm>),
}

impl Inner {
    fn get(&self) -> &(dyn Objective + Send + Sync) {
        match self {
            Inner::Batch(o) => o.as_ref(),
            Inner::Admm(a) => a.as_ref(),
        }
    }

    fn get_mut(&mut self) -> &mut (dyn Objective + Send + Sync) {
        match self {
            Inner::Batch(o) => o.as_mut(),
            Inner::Admm(a) => a.as_mut(),
        }
    }

    fn admm(&mut self) -> PyResult<&mut DeepAdmm> {
        match self {
            Inner::Admm(a) => Ok(a),
            Inner::Batch(o) => Err(PyTypeError::new_err(format!(
                "{} has no outer step: only the deep ADMM has",
                o.name()
            ))),
        }
    }
}

/// The deep ADMM's settings with `weights` and `loss` given as specs (`"cvar:q=0.8"`,
/// `"hinge"`), as `fit-linear` takes them, turned into the config's JSON.
fn admm_settings(settings: &str) -> PyResult<String> {
    let bad = |e: String| PyValueError::new_err(format!("deep-admm's settings: {e}"));
    let mut map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(settings).map_err(|e| bad(e.to_string()))?;
    if let Some(serde_json::Value::String(spec)) = map.get("weights") {
        let w = Weights::from_str(spec).map_err(|e| bad(format!("weights {spec:?}: {e}")))?;
        let v = serde_json::to_value(w).map_err(|e| bad(e.to_string()))?;
        map.insert("weights".into(), v);
    }
    if let Some(serde_json::Value::String(spec)) = map.get("loss") {
        let l = Loss::from_str(spec).map_err(|e| bad(format!("loss {spec:?}: {e}")))?;
        let v = serde_json::to_value(l).map_err(|e| bad(e.to_string()))?;
        map.insert("loss".into(), v);
    }
    serde_json::to_string(&map).map_err(|e| bad(e.to_string()))
}

macro_rules! build {
    ($kind:expr, $settings:expr, $labels:expr, $config:ty) => {{
        let c = config($kind, $settings, |b| {
            <$config>::load_binary(b).map_err(|e| e.to_string())
        })?;
        Inner::Batch(Box::new(c.init($labels).map_err(train_error)?))
    }};
}

#[pymethods]
impl PyObjective {
    /// The objective `kind` (`sopa`, `sopa-s`, `sota-s`, `staco`, `pauci`, `upauci`, `aucm`,
    /// `mb-pauc`, `erm`, `deep-admm`) for a training set with labels `train_labels` (id order),
    /// settings as JSON.
    #[new]
    fn new(kind: &str, train_labels: &Bound<'_, PyAny>, settings: &str) -> PyResult<Self> {
        let y = labels(train_labels, "labels")?;
        let inner = match kind {
            "sopa" => build!(kind, settings, &y, SopaConfig),
            "sopa-s" => build!(kind, settings, &y, SopaSConfig),
            "sota-s" => build!(kind, settings, &y, SotaSConfig),
            "staco" => build!(kind, settings, &y, StacoConfig),
            "pauci" => build!(kind, settings, &y, PauciConfig),
            "upauci" => build!(kind, settings, &y, UpauciConfig),
            "aucm" => build!(kind, settings, &y, AucMConfig),
            "mb-pauc" => build!(kind, settings, &y, MiniBatchPaucConfig),
            "erm" => build!(kind, settings, &y, ErmConfig),
            "deep-admm" => {
                let settings = admm_settings(settings)?;
                let c = config(kind, &settings, |b| {
                    DeepAdmmConfig::load_binary(b).map_err(|e| e.to_string())
                })?;
                Inner::Admm(Box::new(c.init(&y).map_err(train_error)?))
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown objective {other:?}: sopa, sopa-s, sota-s, staco, pauci, upauci, \
                     aucm, mb-pauc, erm, deep-admm"
                )));
            }
        };
        Ok(PyObjective { inner, n: y.len() })
    }

    /// The objective's name (`SOPA`, `SOTA-s`, ...).
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.get().name()
    }

    /// One step on a batch: the loss value and `dL/ds` (float32, batch order), the state
    /// updated. `y_true` 0 / 1, -1 / +1 or bool; `index` the samples' ids in the training set.
    fn batch_gradient<'py>(
        &mut self,
        py: Python<'py>,
        y_score: &Bound<'py, PyAny>,
        y_true: &Bound<'py, PyAny>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<(f64, Bound<'py, PyArray1<f32>>)> {
        let s = scores(y_score, "y_pred")?;
        let y = labels(y_true, "y_true")?;
        let ids = ids(index, self.n)?;
        let s = s.as_slice();
        let inner = self.inner.get_mut();
        let g = py
            .detach(|| inner.batch_gradient(s, &y, &ids))
            .map_err(train_error)?;
        Ok((g.loss, g.grad.to_pyarray(py)))
    }

    /// The objective's value on a batch of any data set, nothing moved.
    fn evaluate(
        &self,
        py: Python<'_>,
        y_score: &Bound<'_, PyAny>,
        y_true: &Bound<'_, PyAny>,
    ) -> PyResult<f64> {
        let s = scores(y_score, "y_pred")?;
        let y = labels(y_true, "y_true")?;
        let s = s.as_slice();
        let inner = self.inner.get();
        py.detach(|| inner.evaluate(s, &y)).map_err(train_error)
    }

    /// The deep ADMM's outer step (Algorithm 1, steps 1-3: the dual step and the penalty's
    /// update after the first, then the z-step by PAVA) from the scores of the whole training
    /// set in id order: `(k, rank_loss, primal_residual, rho)`. A `TypeError` for any other
    /// objective.
    fn outer_step(
        &mut self,
        py: Python<'_>,
        train_scores: &Bound<'_, PyAny>,
    ) -> PyResult<(usize, f64, f64, f64)> {
        let s = scores(train_scores, "train_scores")?;
        let s = s.as_slice();
        let admm = self.inner.admm()?;
        let r = py.detach(|| admm.outer_step(s)).map_err(train_error)?;
        Ok((r.k, r.rank_loss, r.primal_residual, r.rho))
    }

    /// The deep ADMM's coefficients of its w-step terms over the model's parameters,
    /// `(norm, distance)`: `norm ||w||^2 + distance ||w - w_k||^2` (eq. (1)'s `g` and the
    /// proximal term). A `TypeError` for any other objective.
    fn parameter_terms(&mut self) -> PyResult<(f64, f64)> {
        let t = self.inner.admm()?.parameter_terms();
        Ok((t.norm, t.distance))
    }

    /// The whole state: a dict of named float64 arrays.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (name, values) in self.inner.get().state() {
            out.set_item(name, values.to_pyarray(py))?;
        }
        Ok(out)
    }

    /// What the objective was built from, as a Burn record of it holds it: `settings` (three
    /// values per setting of its config) and `training_labels` (`[n, positives, hash_hi,
    /// hash_lo]`), named float64 arrays (empty for an objective without provenance).
    fn provenance<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        if let Some(p) = self.inner.get().provenance() {
            for (name, values) in p.entries() {
                out.set_item(name, values.to_pyarray(py))?;
            }
        }
        Ok(out)
    }

    /// Refuse a state saved by an objective built otherwise: `settings` and `training_labels`
    /// as [`PyObjective::provenance`] gives them, compared with this objective's.
    ///
    /// Raises `ValueError` naming the first setting that differs, or the training set.
    fn check_provenance(
        &self,
        settings: &Bound<'_, PyAny>,
        training_labels: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let Some(p) = self.inner.get().provenance() else {
            return Ok(());
        };
        let settings = scores(settings, "settings")?.as_slice().to_vec();
        let labels = scores(training_labels, "training_labels")?
            .as_slice()
            .to_vec();
        p.check(self.inner.get().name(), &settings, &labels)
            .map_err(train_error)
    }

    /// Replace the state by `state` (as [`PyObjective::state`] gives it).
    fn set_state(&mut self, state: &Bound<'_, PyDict>) -> PyResult<()> {
        let own = self.inner.get().state();
        let mut next = Vec::with_capacity(own.len());
        for (key, value) in state.iter() {
            let key: String = key.extract()?;
            let Some(&(name, _)) = own.iter().find(|(n, _)| *n == key) else {
                let names: Vec<&str> = own.iter().map(|(n, _)| *n).collect();
                return Err(PyValueError::new_err(format!(
                    "{} has no state `{key}` (its state: {names:?})",
                    self.inner.get().name()
                )));
            };
            let values = scores(&value, name)?.as_slice().to_vec();
            next.push((name, values));
        }
        self.inner.get_mut().set_state(next).map_err(train_error)
    }
}

/// Sample ids: a 1-D integer array, each below `n`.
fn ids(index: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<usize>> {
    let array = with_ndim(index, "index", 1)?;
    let values: Vec<i64> = if let Ok(a) = array.extract::<PyReadonlyArray1<'_, i64>>() {
        a.as_array().to_vec()
    } else if let Ok(a) = array.extract::<PyReadonlyArray1<'_, i32>>() {
        a.as_array().iter().map(|&v| i64::from(v)).collect()
    } else {
        return Err(PyTypeError::new_err(
            "index: integer ids (int64 or int32) are needed",
        ));
    };
    values
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            usize::try_from(v).ok().filter(|&i| i < n).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "index[{k}] = {v}: ids run from 0 to {} (the training set's size, {n}, \
                     given at construction)",
                    n.saturating_sub(1)
                ))
            })
        })
        .collect()
}

/// Register the objectives in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyObjective>()?;
    Ok(())
}
