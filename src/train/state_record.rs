//! An objective's CPU state as a Burn record (`burn::store::ModuleRecord`), so that it is
//! saved and loaded the way a Burn module's parameters are (`into_record`, then
//! `ModuleRecord::save` / `into_bytes`; `ModuleRecord::load` / `from_bytes`, then
//! `load_record`), beside the model it trains.
//!
//! Each stateful objective describes its state as a small `#[derive(Module)]` struct of
//! non-trainable `f64` parameters on the CPU (flex): the field names are the record's keys
//! (`sopa_thresholds`, `sota_s_u`, ...), so a record of one objective does not load into
//! another, and `f64` survives the burnpack format exactly (it stores the bytes with their
//! dtype), so a loaded objective continues bit for bit. The state never leaves the CPU and is
//! never optimized: it is only a container for the record.

use burn::module::{Module, Param};
use burn::store::ModuleRecord;
use burn::tensor::{DType, Device, Tensor, TensorData};

/// A record that does not fit the objective loading it (`TrainError::Record` in the
/// objectives' error type).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecordMismatch {
    /// The objective loading it.
    pub(crate) objective: &'static str,
    /// What does not fit.
    pub(crate) message: String,
}

/// `values` as a non-trainable `f64` parameter on the CPU (exact: no cast to `f32`).
pub(crate) fn param(values: &[f64]) -> Param<Tensor<1>> {
    let device = Device::flex();
    let tensor = Tensor::<1>::from_data(
        TensorData::new(values.to_vec(), [values.len()]),
        (&device, DType::F64),
    );
    Param::from_tensor(tensor).set_require_grad(false)
}

/// The values of a parameter made by [`param`] (or loaded into one).
///
/// # Errors
/// [`RecordMismatch`] when the values are not `f64` (a record written with another dtype).
pub(crate) fn values(
    objective: &'static str,
    p: &Param<Tensor<1>>,
) -> Result<Vec<f64>, RecordMismatch> {
    p.val()
        .into_data()
        .try_to_vec::<f64>()
        .map_err(|e| RecordMismatch {
            objective,
            message: format!("a state vector is not f64: {e:?}"),
        })
}

/// Load `record` into `shell`, the objective's state struct built with the shapes this
/// objective expects (its number of positives or samples).
///
/// # Errors
/// [`RecordMismatch`] naming the objective when the record holds other keys (another
/// objective's state), other lengths (another training set) or misses one.
pub(crate) fn load<M: Module>(
    objective: &'static str,
    shell: M,
    record: ModuleRecord,
) -> Result<M, RecordMismatch> {
    shell.try_load_record(record).map_err(|e| RecordMismatch {
        objective,
        message: format!(
            "{}: a record of another objective or of another training set",
            e.to_string()
                .trim_start_matches("Record validation error: ")
                .trim_start_matches("Record I/O error: ")
        ),
    })
}

/// The state of an objective without one (ERM, mini-batch pAUC): an empty record, which
/// refuses any other objective's state when loaded.
#[derive(Module, Debug)]
pub(crate) struct NoState {
    none: Vec<Param<Tensor<1>>>,
}

impl NoState {
    /// The empty state.
    pub(crate) fn new() -> Self {
        NoState { none: Vec::new() }
    }
}
