//! rankrisk's objectives inside burn-train's `Learner` (`SupervisedTraining`): a module that
//! wraps any image scorer and holds the objective's CPU state in a `#[module(skip)]` field.
//! `TrainStep::step` scores the batch, reads the scores back once, asks the objective for
//! `dL/ds` and returns the gradients of the surrogate `sum(s * dL/ds)`; the Learner's
//! optimizer does the rest. Validation reports the mean logistic loss of the scores (the
//! objective's state is left alone).
//!
//! The Learner has no error path in a step, so a bad batch (NaN scores, an id out of range)
//! panics with the objective's message; loops that must recover use [`crate::train`]'s
//! functions directly.

use std::fmt;
use std::sync::{Arc, Mutex};

use burn::module::Module;
use burn::tensor::activation::softplus;
use burn::tensor::{Tensor, TensorData};
use burn::train::{InferenceStep, RegressionOutput, TrainOutput, TrainStep};
use rankrisk_datasets::batcher::ImageBatch;
use rankrisk_models::Scorer;

use crate::bridge::{scores_to_cpu, surrogate};
use crate::train::objective::Objective;

/// An objective shared between the Learner's copies of the module (it clones the module; the
/// CPU state must stay one).
pub struct SharedObjective<O>(pub Arc<Mutex<O>>);

impl<O> SharedObjective<O> {
    /// Share `objective`.
    pub fn new(objective: O) -> Self {
        SharedObjective(Arc::new(Mutex::new(objective)))
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

/// A scorer trained by an [`Objective`] under burn-train's Learner.
#[derive(Module, Debug)]
pub struct ObjectiveModel<M, O: Send + 'static> {
    /// The network.
    pub model: M,
    /// The objective's CPU state (not a parameter: skipped by Burn's module machinery).
    #[module(skip)]
    pub objective: SharedObjective<O>,
}

impl<M: Scorer, O: Objective + Clone + fmt::Debug + Send + 'static> ObjectiveModel<M, O> {
    /// Wrap `model` with `objective`.
    pub fn new(model: M, objective: O) -> Self {
        ObjectiveModel {
            model,
            objective: SharedObjective::new(objective),
        }
    }

    fn outputs(scores: Tensor<1>, targets: &[f64], loss: f32) -> RegressionOutput {
        let device = scores.device();
        let b = targets.len();
        let y: Vec<f32> = targets.iter().map(|&v| v as f32).collect();
        RegressionOutput {
            loss: Tensor::from_data(TensorData::new(vec![loss], [1]), &device),
            output: scores.detach().reshape([b, 1]),
            targets: Tensor::from_data(TensorData::new(y, [b, 1]), &device),
        }
    }
}

impl<M: Scorer, O: Objective + Clone + fmt::Debug + Send + 'static> TrainStep
    for ObjectiveModel<M, O>
{
    type Input = ImageBatch;
    type Output = RegressionOutput;

    fn step(&self, batch: ImageBatch) -> TrainOutput<RegressionOutput> {
        let scores = self.model.score(batch.inputs);
        let cpu = scores_to_cpu(scores.clone()).unwrap_or_else(|e| panic!("{e}"));
        let g = self
            .objective
            .0
            .lock()
            .expect("objective lock")
            .batch_gradient(&cpu, &batch.targets, &batch.ids)
            .unwrap_or_else(|e| panic!("{e}"));
        let loss = surrogate(scores.clone(), &g.grad).unwrap_or_else(|e| panic!("{e}"));
        let item = Self::outputs(scores, &batch.targets, g.loss as f32);
        TrainOutput::new(self, loss.backward(), item)
    }
}

impl<M: Scorer, O: Objective + Clone + fmt::Debug + Send + 'static> InferenceStep
    for ObjectiveModel<M, O>
{
    type Input = ImageBatch;
    type Output = RegressionOutput;

    fn step(&self, batch: ImageBatch) -> RegressionOutput {
        let scores = self.model.score(batch.inputs);
        let loss = softplus(scores.clone().neg() * batch.labels, 1.0).mean();
        let loss: f32 = loss.into_scalar();
        Self::outputs(scores, &batch.targets, loss)
    }
}
