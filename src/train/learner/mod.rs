//! rankrisk's objectives inside burn-train's `Learner` (`SupervisedTraining`): a module that
//! wraps any image scorer and holds the objective. `TrainStep::step` scores the batch and
//! returns the gradients of [`Objective::forward`]'s loss (the batch's labels and ids taken
//! from its CPU copies, not read back); the Learner's optimizer does the
//! rest. Validation reports the mean logistic loss of the scores (the objective's state is
//! left alone), and the steps' [`ScoreOutput`] feeds the ranking metrics of [`metrics`]
//! (AUROC, pAUC over an FPR range, the two-way pAUC), by which the best checkpoint can be
//! chosen.
//!
//! The objective's state is part of the module's record: the Learner's checkpointers
//! (`with_default_checkpointers`) save it with the network's weights after every epoch, and a
//! run resumed with `.checkpoint(epoch)` restores both, so SOPA's thresholds, SOPA-s's and
//! SOTA-s's moving averages and AUC-M's `a, b, alpha` continue where they stopped (LibAUC's
//! issue #64 was the same loss of state). The state stays on the CPU whatever device the
//! network is forked to.
//!
//! A step has no error path in burn-train, so a bad batch (NaN scores, an id out of range, a
//! one-class batch for a pairwise objective) stops training through the module's
//! [`Interrupter`] (give [`ObjectiveModel::interrupter`] to
//! `SupervisedTraining::with_interrupter`): the `LearningResult`'s interruption carries the
//! objective's message, and [`ObjectiveModel::error`] returns it, instead of a panic.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use burn::module::{
    Content, Devices, Module, ModuleDisplay, ModuleDisplayDefault, ModuleMapper, ModuleVisitor,
};
use burn::optim::GradientsParams;
use burn::tensor::activation::softplus;
use burn::tensor::{Device, Tensor, TensorData};
use burn::train::{InferenceStep, Interrupter, TrainOutput, TrainStep};
use rankrisk_datasets::batcher::ImageBatch;
use rankrisk_models::Scorer;

use crate::train::objective::{Objective, TrainError, step_loss};
use crate::train::state_record::StateVectors;

pub mod metrics;

pub use metrics::{RankingMetric, ScoreOutput};

/// An objective shared between the Learner's copies of the module (it clones and forks the
/// module; the CPU state must stay one). As a Burn module it records the objective's state
/// (through [`StateVectors`]) and never moves to a device.
pub struct SharedObjective<O>(pub Arc<Mutex<O>>);

impl<O> SharedObjective<O> {
    /// Share `objective`.
    pub fn new(objective: O) -> Self {
        SharedObjective(Arc::new(Mutex::new(objective)))
    }

    /// The objective (a panic in another holder leaves it usable: its state is plain data).
    pub fn lock(&self) -> MutexGuard<'_, O> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<O> Clone for SharedObjective<O> {
    fn clone(&self) -> Self {
        SharedObjective(self.0.clone())
    }
}

impl<O> fmt::Debug for SharedObjective<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedObjective")
    }
}

impl<O: Objective + Send + 'static> Module for SharedObjective<O> {
    /// On the CPU whatever device the network uses: no device to report.
    fn collect_devices(&self, devices: Devices) -> Devices {
        devices
    }

    /// Shared, not copied: every fork trains the one state.
    fn fork(self, _device: &Device) -> Self {
        self
    }

    /// Shared, not copied.
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

    /// The state's vectors, as the record sees them (`objective.sopa_thresholds`, ...).
    fn visit<V: ModuleVisitor>(&self, visitor: &mut V) {
        StateVectors::of(&self.lock().state()).visit(visitor);
    }

    /// The state's vectors through `mapper` and back into the objective: loading a record
    /// restores the state. (The vectors are not trainable, so an optimizer's mapper returns
    /// them unchanged.) A record's error is the loader's; values that are not `f64` leave the
    /// state as it was.
    fn map<M: ModuleMapper>(self, mapper: &mut M) -> Self {
        let name = self.lock().name();
        let vectors = StateVectors::of(&self.lock().state()).map(mapper);
        if let Ok(state) = vectors.values(name) {
            let _ = self.lock().set_state(state);
        }
        self
    }
}

impl<O: Objective> ModuleDisplayDefault for SharedObjective<O> {
    fn content(&self, content: Content) -> Option<Content> {
        content
            .add_formatted(&format!("{} (state on the CPU)", self.lock().name()))
            .optional()
    }
}

impl<O: Objective> ModuleDisplay for SharedObjective<O> {}

/// The stop signal and the first error of a run's steps (burn-train's `Interrupter` is not
/// `Debug`, which a module field must be).
#[derive(Clone, Default)]
pub struct StepStop {
    interrupter: Interrupter,
    error: Arc<Mutex<Option<TrainError>>>,
}

impl fmt::Debug for StepStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StepStop")
    }
}

/// A scorer trained by an [`Objective`] under burn-train's Learner (`S` is the objective's
/// [`SharedObjective`]).
#[derive(Module, Debug)]
pub struct ObjectiveModel<M, S> {
    /// The network.
    pub model: M,
    /// The objective, its state recorded with the network's weights.
    pub objective: S,
    /// Where a bad batch stops the run.
    #[module(skip)]
    stop: StepStop,
}

impl<M: Scorer, O: Objective + Clone + fmt::Debug + Send + 'static>
    ObjectiveModel<M, SharedObjective<O>>
{
    /// Wrap `model` with `objective`.
    pub fn new(model: M, objective: O) -> Self {
        ObjectiveModel {
            model,
            objective: SharedObjective::new(objective),
            stop: StepStop::default(),
        }
    }

    /// The interrupter a bad batch stops training with: give it to
    /// `SupervisedTraining::with_interrupter`.
    pub fn interrupter(&self) -> Interrupter {
        self.stop.interrupter.clone()
    }

    /// The objective's error that stopped training, if one did.
    pub fn error(&self) -> Option<TrainError> {
        self.stop
            .error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The step's output: the loss stays a tensor (the metrics read it on their thread, so the
    /// step does not wait for it), the scores detached from the graph.
    fn outputs(scores: Tensor<1>, targets: &[f64], loss: Tensor<1>) -> ScoreOutput {
        ScoreOutput {
            loss: loss.detach(),
            scores: scores.detach(),
            labels: targets.to_vec(),
        }
    }
}

impl<M: Scorer, O: Objective + Clone + fmt::Debug + Send + 'static> TrainStep
    for ObjectiveModel<M, SharedObjective<O>>
{
    type Input = ImageBatch;
    type Output = ScoreOutput;

    fn step(&self, batch: ImageBatch) -> TrainOutput<ScoreOutput> {
        let scores = self.model.score(batch.inputs);
        // The batch's labels and ids are on the CPU already: only the scores are read back.
        let result = step_loss(
            &mut *self.objective.lock(),
            scores.clone(),
            &batch.targets,
            &batch.ids,
        );
        match result {
            Ok(loss) => {
                let item = Self::outputs(scores, &batch.targets, loss.clone());
                TrainOutput::new(self, loss.backward(), item)
            }
            Err(e) => {
                // No gradients for this batch; the run stops before its next one.
                let message = format!("{}: {e}", self.objective.lock().name());
                self.stop.interrupter.stop(Some(&message));
                let mut first = self.stop.error.lock().unwrap_or_else(|p| p.into_inner());
                first.get_or_insert(e);
                let nan = Tensor::from_data(TensorData::new(vec![f32::NAN], [1]), &scores.device());
                TrainOutput {
                    grads: GradientsParams::new(),
                    item: Self::outputs(scores, &batch.targets, nan),
                }
            }
        }
    }
}

impl<M: Scorer, O: Objective + Clone + fmt::Debug + Send + 'static> InferenceStep
    for ObjectiveModel<M, SharedObjective<O>>
{
    type Input = ImageBatch;
    type Output = ScoreOutput;

    fn step(&self, batch: ImageBatch) -> ScoreOutput {
        let scores = self.model.score(batch.inputs);
        let loss = softplus(scores.clone().neg() * batch.labels, 1.0).mean();
        Self::outputs(scores, &batch.targets, loss)
    }
}
