//! The interface between a training loop and an objective: scores, labels and sample ids of a
//! batch in, the per-sample gradient `dL/ds` and the loss value out (eq. (1) of the rank-based
//! paper for ERM, the objectives of the other modules for the rest). The surrogate bridge
//! ([`crate::device::bridge::surrogate`]) turns the gradient into parameter gradients on the device.

use burn::config::Config;
use burn::store::ModuleRecord;
use burn::tensor::{Int, Tensor};

use crate::device::bridge::{BridgeError, batch_to_cpu, scores_to_cpu, surrogate};
use crate::math::loss::Loss;
pub use crate::train::error::TrainError;
pub(crate) use crate::train::provenance::training_positives;
use crate::train::provenance::{Provenance, record_of, state_of_record};
use crate::train::state_record::State;

/// What an objective returns for a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchGradient {
    /// The objective's value on the batch (for logging).
    pub loss: f64,
    /// `dL/ds_i` for each score of the batch, in batch order (f32, as the device wants it).
    pub grad: Vec<f32>,
}

/// An objective that turns a batch's scores into per-sample gradients, keeping whatever
/// per-sample state it needs on the CPU (indexed by sample id).
///
/// Each is built from its Burn config (`SopaConfig::new(beta).with_eta(0.1).init(&labels)?`)
/// and used in a training loop through [`Objective::forward`], which returns the loss tensor
/// to call `backward` on; [`Objective::batch_gradient`] is the CPU interface beneath it. Its
/// state travels as a Burn record ([`Objective::into_record`],
/// [`Objective::try_load_record`]). `use rankrisk::prelude::*` brings the trait into scope
/// with the configs.
pub trait Objective {
    /// The gradient of the objective's batch loss with respect to the scores, updating the
    /// objective's state (labels in {-1, +1}, ids the samples' positions in the training set).
    ///
    /// # Errors
    /// [`TrainError`] for mismatched lengths, ids out of range, NaN/inf scores, bad labels.
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError>;

    /// The objective's value on a batch of any data set, read-only: nothing moves, and no ids
    /// are needed, so a validation batch (whose samples are not the training set's) works as
    /// well as a training one. Labels are +1 / -1 (or Burn's 1 / 0).
    ///
    /// The per-sample auxiliary variables take their optimum for this batch: SOPA's and
    /// STACO's thresholds give the exact CVaRs, SOPA-s's and SOTA-s's moving averages the
    /// batch's means, UPAUCI's weights their maximizers at the current scalars, AUC-M's `a`,
    /// `b` and `alpha` their saddle point. Global ones keep their current value (PAUCI's and
    /// UPAUCI's scalars). The deep ADMM gives the batch's rank-based risk, eq. (1) of the
    /// rank-based paper with the batch's weights; ERM and mini-batch pAUC their batch value.
    /// Over a whole split it is the objective on that split.
    ///
    /// # Errors
    /// [`TrainError::Shape`] for mismatched lengths or no scores, [`TrainError::NonFiniteScore`],
    /// [`TrainError::BadLabel`], and [`TrainError::OneClassBatch`] for a pairwise objective on
    /// a batch of one class.
    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError>;

    /// The objective's name in messages (`SOPA`, `SOTA-s`, ...).
    fn name(&self) -> &'static str;

    /// The state the objective carries from step to step, as named `f64` vectors (empty for
    /// a stateless objective): what its records hold.
    fn state(&self) -> State;

    /// Replace the state by `state`, named and sized as [`Objective::state`] gives it.
    ///
    /// # Errors
    /// [`TrainError::Record`] for a name or a length this objective does not have.
    fn set_state(&mut self, state: State) -> Result<(), TrainError>;

    /// What the objective was built from (its config's settings, a fingerprint of its
    /// training labels), recorded with its state so that a record loads only into an
    /// objective built the same way. `None` (the default, for an objective of a user's own)
    /// records the state alone.
    fn provenance(&self) -> Option<&Provenance> {
        None
    }

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
    /// `Module::try_load_record`; [`Objective::load_record`] panics instead.
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

    /// [`Objective::try_load_record`] that panics with the error's message, as Burn's
    /// `Module::load_record` does.
    ///
    /// # Panics
    /// On a record that [`Objective::try_load_record`] refuses.
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

/// [`Objective::forward`] for a batch whose labels (in {-1, +1}) and ids are already on the
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

/// Check an [`Objective::evaluate`] batch (lengths, finite scores, labels in {-1, 0, +1}) and
/// return its labels as +1 / -1 with the positions `0..n` as ids (for the batch functions that
/// take ids and, evaluating, do not look them up).
///
/// # Errors
/// The first problem found, as a [`TrainError`].
pub(crate) fn evaluation_batch(
    scores: &[f64],
    labels: &[f64],
) -> Result<(Vec<f64>, Vec<usize>), TrainError> {
    training_positives(labels)?;
    let signs: Vec<f64> = labels
        .iter()
        .map(|&y| if y > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let positions: Vec<usize> = (0..scores.len()).collect();
    check_batch(scores, &signs, &positions, None)?;
    Ok((signs, positions))
}

/// [`Objective::evaluate`] of an objective without state: its batch value, as
/// [`Objective::batch_gradient`] reports it (on a copy, which a stateless objective's step
/// leaves as it was).
///
/// # Errors
/// As [`evaluation_batch`] and [`Objective::batch_gradient`].
pub(crate) fn stateless_value(
    objective: &(impl Objective + Clone),
    scores: &[f64],
    labels: &[f64],
) -> Result<f64, TrainError> {
    let (signs, positions) = evaluation_batch(scores, labels)?;
    Ok(objective
        .clone()
        .batch_gradient(scores, &signs, &positions)?
        .loss)
}

/// [`Objective::set_state`] of an objective without state: only the empty state fits.
///
/// # Errors
/// [`TrainError::Record`] naming the first vector given.
pub(crate) fn no_state(objective: &'static str, state: State) -> Result<(), TrainError> {
    match state.first() {
        None => Ok(()),
        Some((name, _)) => Err(unknown_state(objective, name)),
    }
}

/// [`TrainError::Record`] for a state vector `name` that `objective` does not have.
pub(crate) fn unknown_state(objective: &'static str, name: &str) -> TrainError {
    TrainError::Record {
        objective,
        message: format!("it has no state vector `{name}`"),
    }
}

/// The scalar `sum_i g_i (s_i - stop_grad(s_i)) + loss`: its value is the batch loss and its
/// gradient in the scores is `g` (the surrogate of [`crate::device::bridge::surrogate`], shifted to
/// the loss value).
fn loss_tensor(scores: Tensor<1>, g: &BatchGradient) -> Result<Tensor<1>, BridgeError> {
    let zero_valued = scores.clone() - scores.detach();
    Ok(surrogate(zero_valued, &g.grad)?.add_scalar(g.loss))
}

/// Check a batch: lengths, finiteness, labels in {-1, +1}, ids below `n` (if given).
///
/// # Errors
/// The first problem found, as a [`TrainError`].
pub fn check_batch(
    scores: &[f64],
    labels: &[f64],
    ids: &[usize],
    n: Option<usize>,
) -> Result<(), TrainError> {
    if scores.is_empty() || scores.len() != labels.len() || scores.len() != ids.len() {
        return Err(TrainError::Shape {
            scores: scores.len(),
            labels: labels.len(),
            ids: ids.len(),
        });
    }
    if let Some(index) = scores.iter().position(|s| !s.is_finite()) {
        return Err(TrainError::NonFiniteScore {
            index,
            value: scores[index],
        });
    }
    if let Some(index) = labels.iter().position(|&y| y != 1.0 && y != -1.0) {
        return Err(TrainError::BadLabel {
            index,
            value: labels[index],
        });
    }
    if let Some(n) = n
        && let Some(&id) = ids.iter().find(|&&i| i >= n)
    {
        return Err(TrainError::IdOutOfRange { id, n });
    }
    Ok(())
}

/// Settings of [`Erm`], the empirical risk of eq. (1) of the rank-based paper with
/// `sigma_i = 1/n`; with the logistic loss it is the cross-entropy (CE) baseline of the pAUC
/// paper's Tables 2-3 (LibAUC trains CE with PyTorch's `BCEWithLogitsLoss`, the same loss).
#[derive(Config, Debug)]
pub struct ErmConfig {
    /// The individual loss of the margin `-y s` (default logistic: binary cross-entropy on
    /// the logits).
    #[config(default = "Loss::Logistic")]
    pub loss: Loss,
}

impl ErmConfig {
    /// The objective for a training set with `labels` (id order; +1 positive, -1 or 0
    /// negative), which its record fingerprints (ERM keeps no state).
    ///
    /// # Errors
    /// [`TrainError::Spec`] for a loss whose parameters are out of range;
    /// [`TrainError::BadLabel`] for a label other than +1, -1 or 0.
    pub fn init(&self, labels: &[f64]) -> Result<Erm, TrainError> {
        self.loss.validate()?;
        Ok(Erm {
            loss: self.loss,
            provenance: Provenance::new(self, labels)?,
        })
    }
}

/// Empirical risk `mean_i l(-y_i s_i)` over the batch (eq. 1 with sigma_i = 1/n): no state.
/// Built by [`ErmConfig::init`].
#[derive(Debug, Clone, PartialEq)]
pub struct Erm {
    loss: Loss,
    provenance: Provenance,
}

impl Erm {
    /// The individual loss.
    pub fn loss(&self) -> Loss {
        self.loss
    }
}

impl Objective for Erm {
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        check_batch(scores, labels, ids, None)?;
        let b = scores.len() as f64;
        let mut loss = 0.0;
        let grad = scores
            .iter()
            .zip(labels)
            .map(|(&s, &y)| {
                let u = -y * s;
                loss += self.loss.value(u);
                (-y * self.loss.derivative(u) / b) as f32
            })
            .collect();
        Ok(BatchGradient {
            loss: loss / b,
            grad,
        })
    }

    fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        stateless_value(self, scores, labels)
    }

    fn name(&self) -> &'static str {
        "ERM"
    }

    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }

    fn state(&self) -> State {
        Vec::new()
    }

    fn set_state(&mut self, state: State) -> Result<(), TrainError> {
        no_state(self.name(), state)
    }
}

/// Central differences of an objective's batch loss against its returned gradient (the
/// objective is cloned so that state updates do not move the point).
#[cfg(test)]
pub(crate) fn check_fd(obj: &(impl Objective + Clone), s: &[f64], y: &[f64]) {
    let ids: Vec<usize> = (0..s.len()).collect();
    let g = obj.clone().batch_gradient(s, y, &ids).unwrap();
    for i in 0..s.len() {
        let h = 1e-6;
        let (mut sp, mut sm) = (s.to_vec(), s.to_vec());
        sp[i] += h;
        sm[i] -= h;
        let fp = obj.clone().batch_gradient(&sp, y, &ids).unwrap().loss;
        let fm = obj.clone().batch_gradient(&sm, y, &ids).unwrap().loss;
        let fd = (fp - fm) / (2.0 * h);
        assert!(
            (fd - f64::from(g.grad[i])).abs() < 1e-5,
            "{i}: {fd} vs {}",
            g.grad[i]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logistic_erm_gradient_matches_finite_differences() {
        let s = [0.3, -2.0, 40.0, -800.0];
        let y = [1.0, 1.0, -1.0, -1.0];
        let ids = [0, 1, 2, 3];
        let mut erm = ErmConfig::new().init(&y).unwrap();
        let g = erm.batch_gradient(&s, &y, &ids).unwrap();
        assert!(g.loss.is_finite());
        for i in 0..s.len() {
            let h = 1e-6;
            let mut sp = s;
            sp[i] += h;
            let mut sm = s;
            sm[i] -= h;
            let up = erm.batch_gradient(&sp, &y, &ids).unwrap().loss;
            let down = erm.batch_gradient(&sm, &y, &ids).unwrap().loss;
            let fd = (up - down) / (2.0 * h);
            assert!(
                (fd - f64::from(g.grad[i])).abs() < 1e-6,
                "{i}: {fd} vs {}",
                g.grad[i]
            );
        }
    }
}
