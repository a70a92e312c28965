//! The interface between a training loop and an objective: scores, labels and sample ids of a
//! batch in, the per-sample gradient `dL/ds` and the loss value out, the per-sample state on
//! the CPU. No deep-learning framework here: the faces (rankrisk's Burn objectives, the Python
//! package's PyTorch losses) turn the gradient into parameter gradients on their device.
//!
//! - [`Objective`], [`BatchGradient`], the batch checks;
//! - [`TrainError`] (and [`BridgeError`], the faces' transfer errors);
//! - [`provenance`]: what an objective was built from, recorded beside its state;
//! - the objectives: [`erm`] (ERM, the CE baseline), [`dro_pauc`] (SOPA, SOPA-s, SOTA-s, STACO), [`instance_pauc`] (PAUCI,
//!   UPAUCI and their scalars' side of ASGDA), [`aucm`] (AUC-M with PESG's scalars),
//!   [`mb_pauc`] (mini-batch pAUC), [`deep_admm`] (Algorithm 1 of the rank-based paper for a
//!   deep model).

pub mod aucm;
pub mod deep_admm;
pub mod dro_pauc;
pub mod erm;
mod error;
pub mod instance_pauc;
pub mod mb_pauc;
pub mod provenance;

pub use crate::config::ConfigError;
pub use error::{BridgeError, TrainError};
pub use provenance::{LabelPrint, Provenance, training_positives};

/// An objective's state: named `f64` vectors.
pub type State = Vec<(&'static str, Vec<f64>)>;

/// Squared-norm terms over a model's parameters `w` that an objective adds to the loss,
/// `norm ||w||^2 + distance ||w - w_ref||^2` (`w_ref` a snapshot the objective's loop takes):
/// the core gives the coefficients, a face builds the terms on its device (rankrisk's
/// `DeviceTerms`). A coefficient of 0 leaves its term out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParameterTerms {
    /// The coefficient of `||w||^2`.
    pub norm: f64,
    /// The coefficient of `||w - w_ref||^2`.
    pub distance: f64,
}

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
/// Each is built from its config (`SopaConfig::new(beta).with_eta(0.1).init(&labels)?`);
/// [`Objective::batch_gradient`] is the whole step on plain slices. The faces add the rest:
/// in rankrisk (Burn), `BurnObjective::forward` returns the loss tensor to call `backward` on
/// and the state travels as a Burn record; in the Python package, a `torch.nn.Module` loss.
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
}

/// Check an [`Objective::evaluate`] batch (lengths, finite scores, labels in {-1, 0, +1}) and
/// return its labels as +1 / -1 with the positions `0..n` as ids (for the batch functions that
/// take ids and, evaluating, do not look them up).
///
/// # Errors
/// The first problem found, as a [`TrainError`].
pub fn evaluation_batch(
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
pub fn stateless_value(
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
pub fn no_state(objective: &'static str, state: State) -> Result<(), TrainError> {
    match state.first() {
        None => Ok(()),
        Some((name, _)) => Err(unknown_state(objective, name)),
    }
}

/// [`TrainError::Record`] for a state vector `name` that `objective` does not have.
pub fn unknown_state(objective: &'static str, name: &str) -> TrainError {
    TrainError::Record {
        objective,
        message: format!("it has no state vector `{name}`"),
    }
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

/// A test of an objective's gradient: `dL/ds` of [`Objective::batch_gradient`] against
/// central finite differences of its loss (step 1e-6, tolerance 1e-5), on copies (the
/// objective's state is not moved). For the tests of the objectives, here and in the faces.
///
/// # Panics
/// When an entry differs, naming it.
#[doc(hidden)]
pub fn check_fd(obj: &(impl Objective + Clone), s: &[f64], y: &[f64]) {
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
