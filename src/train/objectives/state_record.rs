//! An objective's CPU state as a Burn module, so that it is recorded the way a Burn module's
//! parameters are: [`BurnObjective::into_record`](crate::train::BurnObjective::into_record) and
//! [`BurnObjective::load_record`](crate::train::BurnObjective::load_record) (then
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

impl From<RecordMismatch> for crate::train::error::TrainError {
    fn from(e: RecordMismatch) -> Self {
        crate::train::error::TrainError::Record {
            objective: e.objective,
            message: e.message,
        }
    }
}

pub use rankrisk_core::objective::State;

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
    /// [`RecordMismatch`] when a vector is not `f64` (a record written with another dtype) or
    /// holds a value that is not finite.
    pub(crate) fn values(&self, objective: &'static str) -> Result<State, RecordMismatch> {
        self.entries
            .iter()
            .map(|(name, p)| {
                let v = p
                    .val()
                    .into_data()
                    .try_to_vec::<f64>()
                    .map_err(|e| RecordMismatch {
                        objective,
                        message: format!("`{name}` is not f64: {e:?}"),
                    })?;
                // A state that is not finite cannot continue a run: refused here, not blamed on
                // the training steps after it.
                match v.iter().position(|x| !x.is_finite()) {
                    Some(i) => Err(RecordMismatch {
                        objective,
                        message: format!(
                            "`{name}`[{i}] is {}: the saved state is not finite (a record of a \
                             run that diverged, or a damaged file)",
                            v[i]
                        ),
                    }),
                    None => Ok((*name, v)),
                }
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
///
/// With `id`, one more entry after the states holds it (`CHECKPOINT_ID`, the id as two exact
/// 32-bit halves), so that the record loads only with the same id.
pub(crate) fn states_record(states: &[State], id: Option<u64>) -> ModuleRecord {
    let mut modules: Vec<StateVectors> = states.iter().map(|s| StateVectors::of(s)).collect();
    if let Some(id) = id {
        modules.push(StateVectors::of(&[(CHECKPOINT_ID, id_halves(id))]));
    }
    modules.into_record()
}

/// The name of the checkpoint id's entry in a run's `objective.bpk`.
const CHECKPOINT_ID: &str = "checkpoint_id";

/// `id` as two `f64`s, each an exact 32-bit half.
fn id_halves(id: u64) -> Vec<f64> {
    vec![(id >> 32) as f64, (id & 0xffff_ffff) as f64]
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
    id: Option<u64>,
) -> Result<Vec<State>, RecordMismatch> {
    let mut modules: Vec<StateVectors> = current.iter().map(|s| StateVectors::of(s)).collect();
    if let Some(id) = id {
        // Any id: the saved one is read back and compared below.
        modules.push(StateVectors::of(&[(CHECKPOINT_ID, id_halves(!id))]));
    }
    let loaded = modules
        .try_load_record(record)
        .map_err(|e| RecordMismatch {
            objective,
            message: format!(
                "{}: a record of another method, another number of tasks or another training set",
                record_detail(&e.to_string())
            ),
        })?;
    let mut loaded = loaded;
    if let Some(id) = id {
        let saved = loaded.pop().map(|m| m.values(objective)).transpose()?;
        let want = id_halves(id);
        let found = saved
            .as_ref()
            .and_then(|s| s.first())
            .map(|(_, v)| v.clone());
        if found.as_ref() != Some(&want) {
            return Err(RecordMismatch {
                objective,
                message: "it was written with another checkpoint (its checkpoint id differs from \
                          the state file's): an objective.bpk copied from another run or another \
                          save; restore the checkpoint's own objective.bpk, or start the run again"
                    .into(),
            });
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_loads_only_with_its_checkpoint_id_and_finite_values() {
        let state: State = vec![("thresholds", vec![0.5, -1.0]), ("step", vec![3.0])];
        let current = [state.clone()];
        let record = states_record(&current, Some(0xdead_beef_0123_4567));
        let back = load_states(
            &current,
            "SOPA",
            record.clone(),
            Some(0xdead_beef_0123_4567),
        );
        assert_eq!(back.unwrap(), vec![state.clone()]);
        let other = load_states(&current, "SOPA", record, Some(0xdead_beef_0123_4568));
        let e = other.unwrap_err();
        assert!(e.message.contains("another checkpoint"), "{e:?}");
        // An unbound record (written before ids) does not load as a bound one.
        let unbound = states_record(&current, None);
        assert!(load_states(&current, "SOPA", unbound.clone(), Some(1)).is_err());
        assert!(load_states(&current, "SOPA", unbound, None).is_ok());
        // A value that is not finite is refused, naming the vector and the index.
        for bad in [f64::NAN, f64::INFINITY] {
            let diverged = [vec![("thresholds", vec![0.5, bad]), ("step", vec![3.0])]];
            let record = states_record(&diverged, Some(9));
            let e = load_states(&current, "SOPA", record, Some(9)).unwrap_err();
            assert!(e.message.contains("`thresholds`[1]"), "{e:?}");
            assert!(e.message.contains("not finite"), "{e:?}");
        }
    }
}
