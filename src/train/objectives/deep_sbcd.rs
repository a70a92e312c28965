//! AGD-SBCD (papers/partial-auc-fpr-range-agd-sbcd.txt, Algorithms 1-2) for any Burn model:
//! the model side of [`crate::pauc::agd`], whose iterations it runs unchanged.
//!
//! [`BurnModel`] ([`crate::train::sbcd_model`]) is a Burn module as an
//! [`SbcdModel`](crate::pauc::agd::SbcdModel): a block is scored on the device and the
//! scores read back once; the CPU core turns them into the indicators `1(l(s_i - s_j) >
//! lambda_i)`, the dual update (15) and the score coefficients of `G_v`; back on the device,
//! `G_v` comes from one backward pass through the surrogate `sum_k coef_k s_k`, and the
//! closed-form update (14) `v <- (v/eta + w/mu - G_v) / (1/eta + 1/mu)` is applied parameter
//! by parameter. Only trainable parameters are variables of the problem; buffers (batch-norm
//! running statistics) are re-estimated for each new point by
//! [`AgdSbcdConfig::refresh_steps`] training-mode passes ([`DeepSbcd::refresh_buffers`]).
//!
//! [`DeepSbcd`] is the run driver's handle: the core [`AgdSbcd`] plus those refresh passes, and
//! both candidates of Algorithm 2 per outer iteration, `w^(k+1)` and `v_bar_n^(k)` (its output),
//! each with its own statistics, so that the driver can keep the better one by validation.
//! What is ours and not Algorithm 2's is listed on [`AgdSbcdConfig`], whose `init`
//! ([`DeepSbcdInit`]) builds it.

use burn::module::Module;
use burn::store::ModuleRecord;
use burn::tensor::{Device, Tensor};

use crate::pauc::PaucError;
use crate::pauc::agd::{AgdSbcd, AgdSbcdConfig, SbcdRecord, SbcdState};
use crate::pauc::objective::objective_and_score_grad;
use crate::train::objective::{TrainError, evaluation_batch, training_positives};
use crate::train::parallel::Shards;
use crate::train::provenance::{Provenance, record_of, state_of_record};
pub use crate::train::sbcd_model::BurnModel;
use crate::train::sbcd_model::has_buffers;
use crate::train::state_record::State;

/// The deep AGD-SBCD's config before 0.2.0, now core's [`AgdSbcdConfig`] (its `new(alpha,
/// beta)` has section 6.1's deep settings; `init` comes from [`DeepSbcdInit`]).
#[deprecated(
    since = "0.2.0",
    note = "renamed: use rankrisk::pauc::agd::AgdSbcdConfig (in the prelude), with DeepSbcdInit's init"
)]
pub type DeepSbcdConfig = AgdSbcdConfig;

/// Burn's `init` for [`AgdSbcdConfig`] (the core crate's, one config for the linear and the
/// deep form; `new(alpha, beta)` gives section 6.1's deep settings): deep AGD-SBCD for a Burn
/// model. `AgdSbcdConfig::new(alpha, beta).with_c(0.1).init(&labels)?`, with this trait in
/// scope (`use rankrisk::prelude::*`).
pub trait DeepSbcdInit {
    /// AGD-SBCD for a training set with `labels` (id order; +1 positive, -1 or 0 negative).
    /// The duals are zero until [`DeepSbcd::init_duals`] sets them from the initial model's
    /// scores (after [`DeepSbcd::refresh_buffers`] for a model with batch norm) or
    /// [`DeepSbcd::try_load_record`] brings back a saved state.
    ///
    /// # Errors
    /// [`TrainError::BadLabel`] for a label outside {-1, 0, +1}; [`TrainError::Pauc`] for a bad
    /// FPR range, one class only, blocks larger than a class or non-positive scales.
    fn init(&self, labels: &[f64]) -> Result<DeepSbcd, TrainError>;
}

impl DeepSbcdInit for AgdSbcdConfig {
    fn init(&self, labels: &[f64]) -> Result<DeepSbcd, TrainError> {
        let provenance = Provenance::new(self, labels)?;
        DeepSbcd::new(*self, labels, provenance)
    }
}

/// The name in AGD-SBCD's record errors.
const NAME: &str = "AGD-SBCD";

/// Deep AGD-SBCD: the core's duals and sampler on the CPU, parameter updates on the device,
/// batch-norm statistics re-estimated for every new point.
#[derive(Debug, Clone)]
pub struct DeepSbcd {
    core: AgdSbcd,
    provenance: Provenance,
}

impl DeepSbcd {
    /// The core for a training set with `labels` (id order; +1 positive, -1 or 0 negative).
    fn new(cfg: AgdSbcdConfig, labels: &[f64], provenance: Provenance) -> Result<Self, TrainError> {
        training_positives(labels)?;
        let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
        Ok(DeepSbcd {
            core: AgdSbcd::new(cfg, &positive)?,
            provenance,
        })
    }

    /// The pAUC objective over FPR `[alpha, beta]` (eq. (3) of the pAUC paper with the
    /// config's pair loss) on a batch of any data set, read-only (the duals take no part: at
    /// their optimum the min-max problem is this objective), as the objectives'
    /// [`Objective::evaluate`](crate::train::Objective::evaluate).
    ///
    /// # Errors
    /// [`TrainError::Shape`], [`TrainError::NonFiniteScore`], [`TrainError::BadLabel`],
    /// [`TrainError::OneClassBatch`], or the objective's [`TrainError::Pauc`].
    pub fn evaluate(&self, scores: &[f64], labels: &[f64]) -> Result<f64, TrainError> {
        let (signs, _) = evaluation_batch(scores, labels)?;
        let (pos, neg): (Vec<f64>, Vec<f64>) = {
            let pos = scores
                .iter()
                .zip(&signs)
                .filter(|(_, y)| **y > 0.0)
                .map(|(s, _)| *s);
            let neg = scores
                .iter()
                .zip(&signs)
                .filter(|(_, y)| **y < 0.0)
                .map(|(s, _)| *s);
            (pos.collect(), neg.collect())
        };
        if pos.is_empty() || neg.is_empty() {
            return Err(TrainError::OneClassBatch {
                positives: pos.len(),
                negatives: neg.len(),
            });
        }
        let c = self.config();
        Ok(objective_and_score_grad(&pos, &neg, c.loss, c.alpha, c.beta)?.0)
    }

    /// The settings.
    pub fn config(&self) -> &AgdSbcdConfig {
        self.core.config()
    }

    /// The resumable state.
    pub fn state(&self) -> &SbcdState {
        &self.core.state
    }

    /// Set the duals of both levels from the model's scores (one per training sample, id
    /// order) as [`AgdSbcdConfig::dual_init`] says.
    ///
    /// # Errors
    /// [`PaucError::Scores`] for a wrong count or a non-finite score.
    pub fn init_duals(&mut self, scores: &[f64]) -> Result<(), PaucError> {
        self.core.init_duals(scores)
    }

    /// Set both levels' duals to eq. (19) at the model that gave `scores`.
    ///
    /// # Errors
    /// [`PaucError::Scores`] for a wrong count or a non-finite score.
    pub fn reset_duals(&mut self, scores: &[f64]) -> Result<(), PaucError> {
        self.core.reset_duals(scores)
    }

    /// Whether the duals are re-set from a scoring pass before every outer iteration.
    pub fn refreshes_duals(&self) -> bool {
        self.core.config().dual_refresh
    }

    /// Calls of Algorithm 1 per outer iteration (2, or 1 when alpha = 0).
    pub fn calls(&self) -> usize {
        self.core.calls()
    }

    /// Restore a saved state.
    ///
    /// # Errors
    /// [`PaucError::State`] when it holds duals for another number of positives.
    pub fn restore(&mut self, state: SbcdState) -> Result<(), PaucError> {
        self.core.restore(state)
    }

    /// The state as a Burn record (the named `f64` vectors of [`SbcdState::vectors`]), to save
    /// beside the model's with `ModuleRecord::save` or `into_bytes`, as the objectives'
    /// [`BurnObjective::into_record`](crate::train::BurnObjective::into_record).
    ///
    /// The record carries the config's settings and the training labels' fingerprint too
    /// ([`Provenance`]).
    pub fn into_record(self) -> ModuleRecord {
        record_of(self.state().vectors(), Some(&self.provenance))
    }

    /// This AGD-SBCD (built for the same training set) with the state of `record`: it
    /// continues bit for bit where the saved one stopped. As Burn's `try_load_record`;
    /// [`DeepSbcd::load_record`] panics instead.
    ///
    /// # Errors
    /// [`TrainError::Record`] for a record of another objective, another training set or
    /// other settings (naming the setting).
    pub fn try_load_record(mut self, record: ModuleRecord) -> Result<Self, TrainError> {
        let vectors =
            state_of_record(NAME, self.state().vectors(), Some(&self.provenance), record)?;
        self.set_vectors(vectors)?;
        Ok(self)
    }

    /// [`DeepSbcd::try_load_record`] that panics with the error's message, as Burn's
    /// `Module::load_record` does.
    ///
    /// # Panics
    /// On a record that [`DeepSbcd::try_load_record`] refuses.
    pub fn load_record(self, record: ModuleRecord) -> Self {
        self.try_load_record(record)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Take the state from [`SbcdState::vectors`]' form.
    ///
    /// # Errors
    /// [`TrainError::Record`] for a missing vector, a count that is not a whole number, or
    /// duals for another number of positives.
    pub(crate) fn set_vectors(&mut self, vectors: State) -> Result<(), TrainError> {
        let record = |message: String| TrainError::Record {
            objective: NAME,
            message,
        };
        let state = SbcdState::from_vectors(vectors).map_err(|e| record(e.to_string()))?;
        self.restore(state).map_err(|e| record(e.to_string()))
    }

    /// [`AgdSbcdConfig::refresh_steps`] training-mode forward passes of `model` (without
    /// gradient tracking) over sampled blocks, so that its buffers (batch-norm running
    /// statistics) fit its parameters; nothing for a model without buffers.
    ///
    /// # Errors
    /// The caller's error from `forward`.
    pub fn refresh_buffers<M: Module, E>(
        &mut self,
        model: &M,
        forward: &mut impl FnMut(&M, &[usize]) -> Result<Tensor<1>, E>,
    ) -> Result<(), E> {
        if has_buffers(model) {
            // A copy whose parameters require no gradient: its forward passes record no
            // autodiff graph (a dropped training-mode forward of `model` itself would keep its
            // activations until a backward pass that never comes: 2.7 GB after one pass of the
            // default run), and it shares `model`'s running-statistics buffers, which the passes
            // update.
            let frozen = model.clone().no_grad();
            for _ in 0..self.core.config().refresh_steps {
                let ids = self.core.next_block();
                drop(forward(&frozen, &ids)?);
            }
        }
        Ok(())
    }

    /// One outer iteration of Algorithm 2 with its blocks split over `shards` (one device:
    /// [`Shards::one`]). `forward(model, ids, device)` must return the scores of the samples
    /// `ids` (in that order) computed on `device`, in training mode, or the caller's error.
    /// Returns `w^(k+1)`, the other candidate output of Algorithm 2, `v_bar_n^(k)` (as an
    /// inference copy whose buffers were re-estimated for it), and the record.
    ///
    /// # Errors
    /// The caller's error, or (converted) [`PaucError`] / [`TrainError`] when scores are
    /// NaN/inf or the surrogate refuses a gradient.
    pub fn outer_step<M, E>(
        &mut self,
        w: M,
        shards: &Shards,
        forward: impl FnMut(&M, &[usize], &Device) -> Result<Tensor<1>, E>,
    ) -> Result<(M, M, SbcdRecord), E>
    where
        M: Module,
        E: From<TrainError> + From<PaucError>,
    {
        self.outer_step_within(w, usize::MAX, shards, forward)
    }

    /// [`DeepSbcd::outer_step`] with at most `budget` SBCD steps in all (see
    /// [`AgdSbcd::outer_step`]).
    ///
    /// # Errors
    /// As [`DeepSbcd::outer_step`].
    pub fn outer_step_within<M, E>(
        &mut self,
        w: M,
        budget: usize,
        shards: &Shards,
        forward: impl FnMut(&M, &[usize], &Device) -> Result<Tensor<1>, E>,
    ) -> Result<(M, M, SbcdRecord), E>
    where
        M: Module,
        E: From<TrainError> + From<PaucError>,
    {
        let mut model = BurnModel::new(shards.clone(), forward);
        let step = self.core.outer_step(&mut model, &w, budget)?;
        let mut fwd = |m: &M, ids: &[usize]| model.forward(m, ids);
        // The candidate v_bar_n with its own statistics.
        self.refresh_buffers(&step.v_bar_n, &mut fwd)?;
        let candidate = step.v_bar_n.valid();
        self.refresh_buffers(&step.w, &mut fwd)?;
        Ok((step.w, candidate, step.record))
    }
}
