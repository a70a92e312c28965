//! An objective's CPU state as a Burn module, so that it is recorded the way a Burn module's
//! parameters are: [`Objective::into_record`](crate::train::Objective::into_record) and
//! [`Objective::load_record`](crate::train::Objective::load_record) (then
//! `ModuleRecord::save` / `into_bytes`, `ModuleRecord::load` / `from_bytes`), and as a field of
//! a module that burn-train's Learner checkpoints
//! ([`ObjectiveModel`](crate::train::learner::ObjectiveModel)).
//!
//! [`StateVectors`] holds the objective's named `f64` vectors (`sopa_thresholds`, `sota_s_u`,
//! ...) as non-trainable parameters on the CPU (flex). The names are the record's keys, so a
//! record of one objective does not load into another; the lengths are the shapes, so a
//! record of another training set does not load either; and `f64` survives the burnpack
//! format exactly (it keeps the bytes with their dtype), so a loaded objective continues bit
//! for bit. The vectors never leave the CPU and are never optimized: moving the module to a
//! device leaves them where they are.

use burn::module::{
    Content, Devices, Module, ModuleDisplay, ModuleDisplayDefault, ModuleMapper, ModuleVisitor,
    Param,
};
use burn::store::ModuleRecord;
use burn::tensor::{DType, Device, Tensor, TensorData};
use rankrisk_models::checkpoint::record_detail;

/// A record that does not fit the objective loading it (`TrainError::Record` in the
/// objectives' error type).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecordMismatch {
    /// The objective loading it.
    pub(crate) objective: &'static str,
    /// What does not fit.
    pub(crate) message: String,
}

/// An objective's state: named `f64` vectors.
pub type State = Vec<(&'static str, Vec<f64>)>;

/// An objective's named state vectors as a Burn module of non-trainable `f64` parameters on
/// the CPU: what its records hold.
#[derive(Debug, Clone)]
pub struct StateVectors {
    entries: Vec<(&'static str, Param<Tensor<1>>)>,
}

/// `values` as a non-trainable `f64` parameter on the CPU (exact: no cast to `f32`).
fn param(values: &[f64]) -> Param<Tensor<1>> {
    let device = Device::flex();
    let tensor = Tensor::<1>::from_data(
        TensorData::new(values.to_vec(), [values.len()]),
        (&device, DType::F64),
    );
    Param::from_tensor(tensor).set_require_grad(false)
}

impl StateVectors {
    /// The module of `state`.
    pub fn of(state: &[(&'static str, Vec<f64>)]) -> Self {
        StateVectors {
            entries: state
                .iter()
                .map(|(name, values)| (*name, param(values)))
                .collect(),
        }
    }

    /// The vectors back (after a record was loaded into the module).
    ///
    /// # Errors
    /// [`RecordMismatch`] when a vector is not `f64` (a record written with another dtype).
    pub(crate) fn values(&self, objective: &'static str) -> Result<State, RecordMismatch> {
        self.entries
            .iter()
            .map(|(name, p)| {
                p.val()
                    .into_data()
                    .try_to_vec::<f64>()
                    .map(|v| (*name, v))
                    .map_err(|e| RecordMismatch {
                        objective,
                        message: format!("`{name}` is not f64: {e:?}"),
                    })
            })
            .collect()
    }

    /// Load `record` into this module (built from the objective's current state, so with the
    /// names and lengths the objective expects) and return the vectors.
    ///
    /// # Errors
    /// [`RecordMismatch`] naming the objective when the record holds other keys (another
    /// objective's state), other lengths (another training set) or misses one.
    pub(crate) fn load(
        self,
        objective: &'static str,
        record: ModuleRecord,
    ) -> Result<State, RecordMismatch> {
        let loaded = self.try_load_record(record).map_err(|e| RecordMismatch {
            objective,
            message: format!(
                "{}: a record of another objective or of another training set",
                record_detail(&e.to_string())
            ),
        })?;
        loaded.values(objective)
    }
}

/// The states of several objectives (one per task of a multi-label run; one for a binary
/// run) as one record, each under its index (`0.sopa_thresholds`, `1.sopa_thresholds`, ...):
/// what the run driver's checkpoints save as `objective.bpk`.
pub(crate) fn states_record(states: &[State]) -> ModuleRecord {
    let modules: Vec<StateVectors> = states.iter().map(|s| StateVectors::of(s)).collect();
    modules.into_record()
}

/// Load `record` (of [`states_record`]) against the `current` states, which give the names
/// and lengths that fit, and return the saved ones.
///
/// # Errors
/// [`RecordMismatch`] naming `objective` for a record of another method, another number of
/// tasks or another training set.
pub(crate) fn load_states(
    current: &[State],
    objective: &'static str,
    record: ModuleRecord,
) -> Result<Vec<State>, RecordMismatch> {
    let modules: Vec<StateVectors> = current.iter().map(|s| StateVectors::of(s)).collect();
    let loaded = modules
        .try_load_record(record)
        .map_err(|e| RecordMismatch {
            objective,
            message: format!(
                "{}: a record of another method, another number of tasks or another training set",
                record_detail(&e.to_string())
            ),
        })?;
    if loaded.len() != current.len() {
        return Err(RecordMismatch {
            objective,
            message: format!(
                "it holds {} task states, this run has {}",
                loaded.len(),
                current.len()
            ),
        });
    }
    loaded.iter().map(|m| m.values(objective)).collect()
}

/// The container type the visitors see for each named vector.
const CONTAINER: &str = "Struct:StateVectors";

impl Module for StateVectors {
    /// The vectors live on the CPU whatever device the model uses: no device to report.
    fn collect_devices(&self, devices: Devices) -> Devices {
        devices
    }

    /// Stays on the CPU.
    fn fork(self, _device: &Device) -> Self {
        self
    }

    /// Stays on the CPU.
    fn to_device(self, _device: &Device) -> Self {
        self
    }

    fn train(self) -> Self {
        self
    }

    fn valid(&self) -> Self {
        self.clone()
    }

    fn materialize(self) -> Self {
        self
    }

    fn visit<V: ModuleVisitor>(&self, visitor: &mut V) {
        for (name, p) in &self.entries {
            visitor.enter_module(name, CONTAINER);
            Module::visit(p, visitor);
            visitor.exit_module(name, CONTAINER);
        }
    }

    fn map<M: ModuleMapper>(self, mapper: &mut M) -> Self {
        let entries = self
            .entries
            .into_iter()
            .map(|(name, p)| {
                mapper.enter_module(name, CONTAINER);
                let p = Module::map(p, mapper);
                mapper.exit_module(name, CONTAINER);
                (name, p)
            })
            .collect();
        StateVectors { entries }
    }
}

impl ModuleDisplayDefault for StateVectors {
    fn content(&self, content: Content) -> Option<Content> {
        let names: Vec<&str> = self.entries.iter().map(|(n, _)| *n).collect();
        content
            .add_formatted(&format!("objective state on the CPU: {}", names.join(", ")))
            .optional()
    }
}

impl ModuleDisplay for StateVectors {}
