//! rankrisk's objectives inside burn-train's `Learner` (`SupervisedTraining`): a module that
//! wraps any scorer and holds the objective. The batch type is any [`LearnerBatch`] of the
//! scorer (images, [`ImageBatch`], for a `Scorer<4>`; tabular rows, [`TabularBatch`], for a
//! `Scorer<2>`; a user's own batch through the trait's three methods). `TrainStep::step`
//! scores the batch and returns the gradients of [`BurnObjective::forward`](crate::train::BurnObjective::forward)'s loss (the batch's
//! labels and ids taken from its CPU copies, not read back); the Learner's optimizer does the
//! rest. Validation steps score the batch and give the scores and labels ([`ValidScores`]): the
//! ranking metrics of [`metrics`] (AUROC, pAUC over an FPR range, the two-way pAUC, in percent),
//! Burn's own `AurocMetric` and the objective's own value over the split
//! ([`ObjectiveModel::validation_loss`], read-only) take them, and the best checkpoint can be
//! chosen by any of them. No validation loss tensor is given: Burn's "Loss" of a validation
//! split used to be the logistic loss, not the loss trained.
//!
//! The module's `clone` (which burn-train calls for every fork and step) shares the objective:
//! every copy trains the one state, as burn-train needs. [`ObjectiveModel::deep_clone`] copies
//! it instead.
//!
//! The objective's state is part of the module's record: the Learner's checkpointers
//! (`with_default_checkpointers`) save it with the network's weights after every epoch, and a
//! run resumed with `.checkpoint(epoch)` restores both, so SOPA's thresholds, SOPA-s's and
//! SOTA-s's moving averages and AUC-M's `a, b, alpha` continue where they stopped (LibAUC's
//! issue #64 was the same loss of state). The state stays on the CPU whatever device the
//! network is forked to.
//!
//! A step has no error path in burn-train, so a bad batch (NaN scores, an id out of range, a
//! one-class batch for a pairwise objective) stops training in one of two ways, never
//! silently:
//! - by default the step panics with the objective's message (`SOPA refused batch 3: ...`):
//!   under the single-device strategy the panic ends `launch`; under the multi-device ones
//!   burn-train catches it and the `LearningResult`'s `error` carries the message;
//! - wired, the run ends cleanly: give [`ObjectiveModel::interrupter`] to
//!   `SupervisedTraining::with_interrupter`, and the `LearningResult`'s `interrupted` carries
//!   the message, [`ObjectiveModel::error`] the error, and no step panics (asking for the
//!   interrupter is what tells the model that the run listens to it).
//!
//! Under burn-train's multi-device strategy each device's step gets its own batch, and the
//! pairs (or the CVaR and KL weights) of a pairwise objective form within that batch, not
//! across the devices' batches as `rankrisk train --devices` pairs them; the objective's
//! state stays one, shared by the devices' steps. A message says so on stderr when a second worker
//! thread forks the module ([`SharedObjective::workers`]).

use std::fmt;
use std::io::Write;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use burn::module::{
    Content, Devices, Module, ModuleDisplay, ModuleDisplayDefault, ModuleMapper, ModuleVisitor,
};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Tensor, TensorData};
use burn::train::{InferenceStep, Interrupter, TrainOutput, TrainStep};
use rankrisk_datasets::batcher::{ImageBatch, TabularBatch};
use rankrisk_models::Scorer;

use crate::train::objective::{Objective, TrainError, step_loss};
use crate::train::provenance::{checked_state, with_provenance};
use crate::train::state_record::StateVectors;

pub mod metrics;

pub use metrics::{RankingMetric, ScoreOutput, ValidScores};

/// An objective shared between the Learner's copies of the module (it clones and forks the
/// module; the CPU state must stay one). As a Burn module it records the objective's state
/// (through [`StateVectors`]) and never moves to a device.
pub struct SharedObjective<O> {
    objective: Arc<Mutex<O>>,
    /// The threads that forked the module: burn-train's multi-device strategies fork it on
    /// each device's worker thread at every step, the single-device one once on the main
    /// thread; a second thread means per-device pairs (said once).
    workers: Arc<Mutex<Vec<std::thread::ThreadId>>>,
}

impl<O> SharedObjective<O> {
    /// Share `objective`.
    pub fn new(objective: O) -> Self {
        SharedObjective {
            objective: Arc::new(Mutex::new(objective)),
            workers: Arc::default(),
        }
    }

    /// The objective (a panic in another holder leaves it usable: its state is plain data).
    pub fn lock(&self) -> MutexGuard<'_, O> {
        self.objective
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<O> SharedObjective<O> {
    /// How many threads have forked the module: 1 under burn-train's single-device strategy;
    /// under its multi-device strategies, where pairs form per device, one per device's worker
    /// besides the main thread.
    pub fn workers(&self) -> usize {
        self.workers.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl<O: Objective> SharedObjective<O> {
    /// Note a fork on this thread; at the second thread (a multi-device strategy's worker),
    /// say on stderr that pairs form per device.
    fn forked(&self) {
        let id = std::thread::current().id();
        let mut seen = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(&id) {
            return;
        }
        seen.push(id);
        if seen.len() == 2 {
            // A notice that cannot be written is dropped (never a panic).
            let _ = writeln!(
                std::io::stderr(),
                "rankrisk: {} trains on several devices under burn-train's Learner: each \
                 device takes its own batches of the loader's size B and pairs within each of \
                 them (D devices run D batches of B at a time), and the objective's state is \
                 shared; `rankrisk train --devices` splits one batch over the devices and pairs \
                 across them instead",
                self.lock().name()
            );
        }
    }
}

impl<O> Clone for SharedObjective<O> {
    fn clone(&self) -> Self {
        SharedObjective {
            objective: self.objective.clone(),
            workers: self.workers.clone(),
        }
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
        self.forked();
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

    /// The state's vectors, as the record sees them (`objective.sopa_thresholds`, ...), and
    /// the objective's settings and training labels' fingerprint (`objective.settings`,
    /// `objective.training_labels`).
    fn visit<V: ModuleVisitor>(&self, visitor: &mut V) {
        let objective = self.lock();
        StateVectors::of(&with_provenance(objective.state(), objective.provenance()))
            .visit(visitor);
    }

    /// The state's vectors through `mapper` and back into the objective: loading a record
    /// restores the state. (The vectors are not trainable, so an optimizer's mapper returns
    /// them unchanged.) A record's missing or misshapen entries are the loader's error;
    /// values that are not `f64` leave the state as it was.
    ///
    /// # Panics
    /// On a record saved with other settings or for another training set, with the message
    /// naming the setting (Burn's `Module::load_record` panics on a mismatch too; a map has
    /// no error path).
    fn map<M: ModuleMapper>(self, mapper: &mut M) -> Self {
        {
            // One lock for the round trip (the mapper does not reach the objective).
            let mut objective = self.lock();
            let name = objective.name();
            let entries = with_provenance(objective.state(), objective.provenance());
            let vectors = StateVectors::of(&entries).map(mapper);
            if let Ok(values) = vectors.values(name) {
                match checked_state(name, values, objective.provenance()) {
                    Ok(state) => {
                        let _ = objective.set_state(state);
                    }
                    Err(e) => panic!("{e}"),
                }
            }
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
    /// Whether [`ObjectiveModel::interrupter`] handed the interrupter out (the run listens to
    /// it); if not, a refused batch panics.
    wired: Arc<AtomicBool>,
    /// Training steps taken, for the message (`refused batch 3`).
    steps: Arc<AtomicUsize>,
}

impl fmt::Debug for StepStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StepStop")
    }
}

/// A batch that [`ObjectiveModel`] trains model `M` on under the Learner: it scores itself
/// with the model and keeps its labels and sample ids on the CPU (so that the step reads back
/// only the scores). Implemented for [`ImageBatch`] with any `Scorer<4>` and [`TabularBatch`]
/// with any `Scorer<2>`; a user's own batch type implements these three methods.
pub trait LearnerBatch<M>: Clone + fmt::Debug + Send + 'static {
    /// The model's score of each sample.
    ///
    /// # Shapes
    /// - output: `[batch]` (training mode: the scores keep the autodiff graph)
    fn score(&self, model: &M) -> Tensor<1>;

    /// The labels, +1 for a positive and -1 (or 0) for a negative, in batch order.
    fn labels(&self) -> &[f64];

    /// Each sample's position in the training set (the objective's state index), in batch
    /// order.
    fn ids(&self) -> &[usize];
}

impl<M: Scorer<4>> LearnerBatch<M> for ImageBatch {
    fn score(&self, model: &M) -> Tensor<1> {
        model.score(self.inputs.clone())
    }

    fn labels(&self) -> &[f64] {
        &self.targets
    }

    fn ids(&self) -> &[usize] {
        &self.ids
    }
}

impl<M: Scorer<2>> LearnerBatch<M> for TabularBatch {
    fn score(&self, model: &M) -> Tensor<1> {
        model.score(self.inputs.clone())
    }

    fn labels(&self) -> &[f64] {
        &self.targets
    }

    fn ids(&self) -> &[usize] {
        &self.ids
    }
}

/// A scorer trained by an [`Objective`] under burn-train's Learner (`S` is the objective's
/// [`SharedObjective`], `B` the batch type, a [`LearnerBatch`] of `M`: [`ImageBatch`] unless
/// the data loader gives another).
#[derive(Module, Debug)]
pub struct ObjectiveModel<M, S, B = ImageBatch> {
    /// The network.
    pub model: M,
    /// The objective, its state recorded with the network's weights.
    pub objective: S,
    /// Where a bad batch stops the run.
    #[module(skip)]
    stop: StepStop,
    /// The batch type the steps take.
    #[module(skip)]
    batch: PhantomData<fn() -> B>,
}

impl<M: Module, O: Objective + Clone + fmt::Debug + Send + 'static, B>
    ObjectiveModel<M, SharedObjective<O>, B>
{
    /// Wrap `model` with `objective`.
    pub fn new(model: M, objective: O) -> Self {
        ObjectiveModel {
            model,
            objective: SharedObjective::new(objective),
            stop: StepStop::default(),
            batch: PhantomData,
        }
    }

    /// The interrupter a bad batch stops training with: give it to
    /// `SupervisedTraining::with_interrupter`. Once asked for, a refused batch stops the run
    /// through it (the `LearningResult`'s `interrupted` names the objective's error) instead of
    /// panicking: a run that does not wire it must not ask for it.
    pub fn interrupter(&self) -> Interrupter {
        self.stop.wired.store(true, Ordering::Relaxed);
        self.stop.interrupter.clone()
    }

    /// The objective's own value over a validation split, as a burn-train metric
    /// (`metric_valid_numeric(model.validation_loss())`): [`Objective::evaluate`] of the
    /// split's scores at the end of each epoch, read-only.
    pub fn validation_loss(&self) -> RankingMetric {
        let shared = self.objective.clone();
        let name = shared.lock().name();
        RankingMetric::objective(
            name,
            Arc::new(move |scores: &[f64], labels: &[f64]| shared.lock().evaluate(scores, labels)),
        )
    }

    /// A copy whose objective is its own (a snapshot of the state that trains apart from this
    /// one's), where `clone` shares it.
    pub fn deep_clone(&self) -> Self
    where
        M: Clone,
    {
        let objective = self.objective.lock().clone();
        ObjectiveModel::new(self.model.clone(), objective)
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

impl<M, O, B> TrainStep for ObjectiveModel<M, SharedObjective<O>, B>
where
    M: Module + ModuleDisplay,
    O: Objective + Clone + fmt::Debug + Send + 'static,
    B: LearnerBatch<M>,
{
    type Input = B;
    type Output = ScoreOutput;

    fn step(&self, batch: B) -> TrainOutput<ScoreOutput> {
        let step = self.stop.steps.fetch_add(1, Ordering::Relaxed) + 1;
        let scores = batch.score(&self.model);
        // The batch's labels and ids are on the CPU already: only the scores are read back.
        let result = step_loss(
            &mut *self.objective.lock(),
            scores.clone(),
            batch.labels(),
            batch.ids(),
        );
        match result {
            Ok(loss) => {
                let item = Self::outputs(scores, batch.labels(), loss.clone());
                TrainOutput::new(self, loss.backward(), item)
            }
            Err(e) => {
                let message = format!(
                    "{} refused training batch {step}: {e}",
                    self.objective.lock().name()
                );
                if !self.stop.wired.load(Ordering::Relaxed) {
                    // Nothing listens to the interrupter: stopping here is the only way the
                    // run does not go on without this batch's gradients.
                    panic!(
                        "{message} (to end the run without a panic, give \
                         ObjectiveModel::interrupter() to SupervisedTraining::with_interrupter)"
                    );
                }
                // No gradients for this batch; the run stops before its next one.
                self.stop.interrupter.stop(Some(&message));
                let mut first = self.stop.error.lock().unwrap_or_else(|p| p.into_inner());
                first.get_or_insert(e);
                let nan = Tensor::from_data(TensorData::new(vec![f32::NAN], [1]), &scores.device());
                TrainOutput {
                    grads: GradientsParams::new(),
                    item: Self::outputs(scores, batch.labels(), nan),
                }
            }
        }
    }
}

impl<M, O, B> InferenceStep for ObjectiveModel<M, SharedObjective<O>, B>
where
    M: Module + ModuleDisplay,
    O: Objective + Clone + fmt::Debug + Send + 'static,
    B: LearnerBatch<M>,
{
    type Input = B;
    type Output = ValidScores;

    /// The scores and the labels (the objective's state is left alone).
    fn step(&self, batch: B) -> ValidScores {
        ValidScores {
            scores: batch.score(&self.model).detach(),
            labels: batch.labels().to_vec(),
        }
    }
}
