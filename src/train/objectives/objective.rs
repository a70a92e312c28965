//! The interface between a training loop and an objective: scores, labels and sample ids of a
//! batch in, the per-sample gradient `dL/ds` and the loss value out (eq. (1) of the rank-based
//! paper for ERM, the objectives of the other modules for the rest). [`Objective`] and its
//! batch checks are the core crate's (`rankrisk_core::objective`, no Burn in it);
//! [`BurnObjective`] is their Burn face, which every objective has: `forward` on tensors
//! through the surrogate bridge ([`crate::device::bridge::surrogate`]), the state as a Burn
//! record.

use burn::store::ModuleRecord;
use burn::tensor::{Int, Tensor};

use crate::device::bridge::{BridgeError, batch_to_cpu, scores_to_cpu, surrogate};
use crate::train::provenance::{record_of, state_of_record};
#[doc(hidden)]
pub use rankrisk_core::objective::check_fd;
pub use rankrisk_core::objective::erm::{Erm, ErmConfig};
pub use rankrisk_core::objective::{
    BatchGradient, Objective, TrainError, check_batch, evaluation_batch, no_state, stateless_value,
    training_positives, unknown_state,
};

/// Every [`Objective`]'s Burn face (implemented for all of them): its state as a Burn record
/// beside the model's, and one training step's loss as a tensor to call `backward` on.
/// `use rankrisk::prelude::*` brings it into scope with [`Objective`] and the configs.
pub trait BurnObjective: Objective {
    /// The objective's state as a Burn record, to save beside the model's
    /// (`ModuleRecord::save` or `into_bytes`): the state's vectors, the config's settings and
    /// the training labels' fingerprint ([`Objective::provenance`]).
    fn into_record(self) -> ModuleRecord
    where
        Self: Sized,
    {
        record_of(self.state(), self.provenance())
    }

    /// This objective (built by its config for the same training set) with the state of
    /// `record`: it continues bit for bit where the saved one stopped. As Burn's
    /// `Module::try_load_record`; [`BurnObjective::load_record`] panics instead.
    ///
    /// A record written before records held the settings (2026-11-27) loads with a warning
    /// on stderr: its settings and training set cannot be checked.
    ///
    /// # Errors
    /// [`TrainError::Record`] for a record of another objective, of another training set
    /// (another size, other labels) or saved with other settings, naming the setting.
    fn try_load_record(mut self, record: ModuleRecord) -> Result<Self, TrainError>
    where
        Self: Sized,
    {
        let state = state_of_record(self.name(), self.state(), self.provenance(), record)?;
        self.set_state(state)?;
        Ok(self)
    }

    /// [`BurnObjective::try_load_record`] that panics with the error's message, as Burn's
    /// `Module::load_record` does.
    ///
    /// # Panics
    /// On a record that [`BurnObjective::try_load_record`] refuses.
    fn load_record(self, record: ModuleRecord) -> Self
    where
        Self: Sized,
    {
        self.try_load_record(record)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// One training step's loss, Burn style: reads the batch back to the CPU once (scores,
    /// targets and ids in one transfer, [`batch_to_cpu`]), updates the
    /// state and returns a scalar on the scores' device whose value is the objective's batch
    /// loss and whose `backward` gives the parameter gradients (`dL/ds` of
    /// [`Objective::batch_gradient`] through the scores).
    ///
    /// # Shapes
    /// - scores: `[batch]`, the model's score of each sample (any device, autodiff or not)
    /// - targets: `[batch]`, 1 for a positive and 0 for a negative, as Burn's classification
    ///   losses take them
    /// - ids: `[batch]`, each sample's position in the training set (the state's index)
    /// - output: `[1]`
    ///
    /// # Errors
    /// As [`Objective::batch_gradient`]; [`TrainError::BadTarget`] for a target other than 0
    /// or 1, [`TrainError::Readback`] for a negative id, [`TrainError::Bridge`] for a device
    /// that fails to read back or a score that is not finite.
    fn forward(
        &mut self,
        scores: Tensor<1>,
        targets: Tensor<1, Int>,
        ids: Tensor<1, Int>,
    ) -> Result<Tensor<1>, TrainError> {
        let batch = batch_to_cpu(scores.clone(), targets, ids)?;
        let labels = batch
            .targets
            .into_iter()
            .enumerate()
            .map(|(index, t)| match t {
                1 => Ok(1.0),
                0 => Ok(-1.0),
                other => Err(TrainError::BadTarget {
                    index,
                    value: other,
                }),
            })
            .collect::<Result<Vec<f64>, _>>()?;
        let ids = batch
            .ids
            .into_iter()
            .enumerate()
            .map(|(index, i)| {
                usize::try_from(i).map_err(|_| TrainError::Readback {
                    what: "ids",
                    message: format!("the id {i} at position {index} is negative"),
                })
            })
            .collect::<Result<Vec<usize>, _>>()?;
        let g = self.batch_gradient(&batch.scores, &labels, &ids)?;
        Ok(loss_tensor(scores, &g)?)
    }
}

impl<T: Objective + ?Sized> BurnObjective for T {}

/// [`BurnObjective::forward`] for a batch whose labels (in {-1, +1}) and ids are already on the
/// CPU (the Learner's batches carry them): only the scores are read back.
///
/// # Errors
/// As [`Objective::batch_gradient`]; [`TrainError::Bridge`] for the scores.
pub(crate) fn step_loss<O: Objective + ?Sized>(
    objective: &mut O,
    scores: Tensor<1>,
    labels: &[f64],
    ids: &[usize],
) -> Result<Tensor<1>, TrainError> {
    let g = objective.batch_gradient(&scores_to_cpu(scores.clone())?, labels, ids)?;
    Ok(loss_tensor(scores, &g)?)
}

/// The scalar `sum_i g_i (s_i - stop_grad(s_i)) + loss`: its value is the batch loss and its
/// gradient in the scores is `g` (the surrogate of [`crate::device::bridge::surrogate`], shifted to
/// the loss value).
fn loss_tensor(scores: Tensor<1>, g: &BatchGradient) -> Result<Tensor<1>, BridgeError> {
    let zero_valued = scores.clone() - scores.detach();
    Ok(surrogate(zero_valued, &g.grad)?.add_scalar(g.loss))
}
