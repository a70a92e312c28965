//! The training method as a value the run loop calls: [`Trainer`] runs one period (an epoch of
//! batches for CE, AUC-M and MB; one outer iteration of Algorithm 2 for AGD-SBCD) from the
//! current model and returns what the loop evaluates next.

use std::time::Instant;

use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::Device;
use indicatif::ProgressBar;
use rankrisk_datasets::ImageSource;
use rankrisk_datasets::sampler::DualSampler;
use rankrisk_models::Scorer;
use serde::{Deserialize, Serialize};

use crate::bridge::{scores_to_cpu, surrogate};
use crate::loss::Loss;
use crate::pauc::agd::SbcdState;
use crate::pauc::objective::PairLoss;
use crate::pauc::sbcd::OuterDiagnostics;
use crate::train::aucm::AucM;
use crate::train::deep_sbcd::DeepSbcd;
use crate::train::mb_pauc::MiniBatchPauc;
use crate::train::objective::{BatchGradient, Erm, Objective, TrainError};
use crate::train::params::Snapshot;
use crate::train::run::config::{Method, RunConfig};
use crate::train::run::error::{RunError, bridge_error, diverged};
use crate::train::run::evaluate::score_all;
use crate::train::run::prefetch::for_each_batch;

/// Every non-SBCD method sees batches with this share of positives ([`DualSampler`]); AUC-M's
/// `p` must be the positive share of what it averages over, so it is this share, not the
/// training set's (with the set's ~0.1 under 50/50 batches AUC-M collapsed: test AUC 0.37 at
/// lr 0.01 on the Fashion-MNIST-LT slice).
pub(crate) const POSITIVE_SHARE: f64 = 0.5;

/// The per-sample CPU state of a method, as the checkpoint stores it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum ObjectiveState {
    /// Cross-entropy: no state.
    Ce,
    /// AUC-M's scalars.
    Aucm(AucM),
    /// Mini-batch pAUC: its settings only.
    Mb(MiniBatchPauc),
    /// AGD-SBCD's duals, iteration and sampler position.
    Sbcd(SbcdState),
}

/// What one period produced.
pub(crate) struct Period<M> {
    /// The model training goes on from (`w^(k+1)` for AGD-SBCD).
    pub model: M,
    /// AGD-SBCD's other candidate, `v_bar_n^(k)` (inference copy with its own statistics).
    pub candidate: Option<M>,
    /// AGD-SBCD's diagnostics of the iteration.
    pub diagnostics: Option<OuterDiagnostics>,
    /// Steps taken.
    pub steps: usize,
    /// Mean objective over the period.
    pub loss: f64,
    /// Seconds in the objective's CPU code.
    pub cpu_seconds: f64,
    /// Seconds spent re-estimating the duals (AGD-SBCD with `dual_refresh`).
    pub dual_seconds: f64,
}

/// What a period reads and where it reports: the training set, the device, the settings and
/// the progress bar.
pub(crate) struct PeriodContext<'a> {
    pub train: &'a dyn ImageSource,
    pub device: &'a Device,
    pub cfg: &'a RunConfig,
    pub bar: &'a ProgressBar,
}

/// The objectives trained one optimizer step per batch.
#[derive(Debug, Clone)]
pub(crate) enum BatchObjective {
    /// Cross-entropy on the logit ([`Erm`] with the logistic loss).
    Ce,
    /// AUC-M with PESG's scalar updates.
    Aucm(AucM),
    /// Mini-batch pAUC.
    Mb(MiniBatchPauc),
}

impl BatchObjective {
    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        match self {
            BatchObjective::Ce => Erm {
                loss: Loss::Logistic,
            }
            .batch_gradient(scores, labels, ids),
            BatchObjective::Aucm(o) => o.batch_gradient(scores, labels, ids),
            BatchObjective::Mb(o) => o.batch_gradient(scores, labels, ids),
        }
    }
}

/// A method with its CPU state.
pub(crate) enum Trainer {
    /// CE, AUC-M or MB: one optimizer step per batch of the dual sampler on the surrogate of
    /// the objective's gradient (plus AUC-M's device terms).
    Batches(BatchObjective),
    /// AGD-SBCD (Algorithms 1-2) over the Burn module (boxed: its state is the large one).
    Sbcd(Box<DeepSbcd>),
}

impl Trainer {
    /// The method of `cfg` for a training set with `labels`, fresh. AGD-SBCD's duals are set
    /// by [`Trainer::start`] (or by [`Trainer::restore`] when resuming).
    ///
    /// # Errors
    /// [`RunError`] for settings the objective refuses.
    pub fn new(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(match cfg.method {
            Method::Ce => Trainer::Batches(BatchObjective::Ce),
            Method::Aucm => Trainer::Batches(BatchObjective::Aucm(AucM::new(
                POSITIVE_SHARE,
                cfg.lr,
                500.0,
                1e-4,
            )?)),
            Method::Mb => Trainer::Batches(BatchObjective::Mb(MiniBatchPauc {
                alpha: cfg.alpha,
                beta: cfg.beta,
                loss: PairLoss::Logistic,
            })),
            Method::Sbcd => Trainer::Sbcd(Box::new(DeepSbcd::new(cfg.sbcd_config(), labels)?)),
        })
    }

    /// The optimizer of the method (Adam for CE, as the paper trains it; SGD for the rest,
    /// AGD-SBCD's updates included, whose optimizer only fills the checkpoint).
    pub fn optimizer(cfg: &RunConfig) -> ModuleOptimizer {
        match cfg.method {
            Method::Ce => AdamConfig::new().init(),
            _ => SgdConfig::new().init(),
        }
    }

    /// Prepare a fresh run at the initial `model`: AGD-SBCD re-estimates the batch-norm
    /// statistics and sets its duals (eq. (19), or as `dual_init` says) from an inference
    /// pass over the training set; the other methods need nothing.
    ///
    /// # Errors
    /// [`RunError`] for an unreadable image or non-finite initial scores.
    pub fn start<M: Scorer>(&mut self, model: &M, ctx: &PeriodContext<'_>) -> Result<(), RunError> {
        if let Trainer::Sbcd(s) = self {
            s.refresh_buffers(model, &mut forward(ctx))?;
            s.init_duals(&score_all(&model.valid(), ctx.train, ctx.device)?)?;
        }
        Ok(())
    }

    /// The state a checkpoint stores.
    pub fn state(&self) -> ObjectiveState {
        match self {
            Trainer::Batches(BatchObjective::Ce) => ObjectiveState::Ce,
            Trainer::Batches(BatchObjective::Aucm(o)) => ObjectiveState::Aucm(o.clone()),
            Trainer::Batches(BatchObjective::Mb(o)) => ObjectiveState::Mb(*o),
            Trainer::Sbcd(s) => ObjectiveState::Sbcd(s.state().clone()),
        }
    }

    /// Continue from a checkpoint's state.
    ///
    /// # Errors
    /// [`RunError::Pauc`] when AGD-SBCD's saved duals do not fit this training set,
    /// [`RunError::Setting`] for a checkpoint of another method.
    pub fn restore(&mut self, state: ObjectiveState) -> Result<(), RunError> {
        match (self, state) {
            (Trainer::Sbcd(s), ObjectiveState::Sbcd(saved)) => s.restore(saved)?,
            (Trainer::Batches(o @ BatchObjective::Ce), ObjectiveState::Ce) => {
                *o = BatchObjective::Ce
            }
            (Trainer::Batches(o), ObjectiveState::Aucm(saved))
                if matches!(o, BatchObjective::Aucm(_)) =>
            {
                *o = BatchObjective::Aucm(saved)
            }
            (Trainer::Batches(o), ObjectiveState::Mb(saved))
                if matches!(o, BatchObjective::Mb(_)) =>
            {
                *o = BatchObjective::Mb(saved)
            }
            _ => {
                return Err(RunError::Setting {
                    key: "method",
                    message: "the checkpoint in out was written by another method (choose \
                              another out, or resume = false)"
                        .into(),
                });
            }
        }
        Ok(())
    }

    /// One period from `model` with at most `left` steps: an epoch of `steps_per_epoch` batches
    /// (shortened to the budget), or one outer iteration of AGD-SBCD shortened to the budget.
    /// `None` when AGD-SBCD's remainder is smaller than one step per call (left unused).
    ///
    /// # Errors
    /// [`RunError::Diverged`] for a non-finite score, loss or gradient; [`RunError`] for
    /// unreadable data.
    #[allow(clippy::too_many_arguments)]
    pub fn period<M: Scorer>(
        &mut self,
        model: M,
        ctx: &PeriodContext<'_>,
        optim: &mut ModuleOptimizer,
        sampler: &mut DualSampler,
        steps_done: usize,
        left: usize,
        steps_per_epoch: usize,
    ) -> Result<Option<Period<M>>, RunError> {
        match self {
            Trainer::Sbcd(s) => sbcd_period(s, model, ctx, steps_done, left),
            Trainer::Batches(objective) => {
                let steps = steps_per_epoch.min(left);
                batch_period(objective, model, ctx, optim, sampler, steps_done, steps).map(Some)
            }
        }
    }
}

/// The forward pass of AGD-SBCD over training ids: scores on the autodiff device, training
/// mode.
fn forward<'a, M: Scorer>(
    ctx: &'a PeriodContext<'a>,
) -> impl FnMut(&M, &[usize]) -> Result<burn::tensor::Tensor<1>, RunError> + Clone + 'a {
    move |m: &M, ids: &[usize]| Ok(m.score(ctx.train.batch(ids, ctx.device)?.inputs))
}

/// One outer iteration of AGD-SBCD (two SBCD calls), shortened to fit `left` steps.
fn sbcd_period<M: Scorer>(
    s: &mut DeepSbcd,
    model: M,
    ctx: &PeriodContext<'_>,
    steps_done: usize,
    left: usize,
) -> Result<Option<Period<M>>, RunError> {
    if left < s.calls() {
        return Ok(None);
    }
    let mut dual_seconds = 0.0;
    if s.refreshes_duals() && s.state().k > 0 {
        let t = Instant::now();
        s.reset_duals(&score_all(&model.valid(), ctx.train, ctx.device)?)?;
        dual_seconds = t.elapsed().as_secs_f64();
    }
    let (w, v_n, rec) = s
        .outer_step_within(model, left, forward(ctx))
        .map_err(diverged(steps_done))?;
    ctx.bar.set_position((steps_done + rec.steps) as u64);
    Ok(Some(Period {
        model: w,
        candidate: Some(v_n),
        diagnostics: Some(rec.diagnostics),
        steps: rec.steps,
        loss: rec.sampled_loss,
        cpu_seconds: rec.cpu_seconds,
        dual_seconds,
    }))
}

/// `steps` optimizer steps on batches of the dual sampler, each batch assembled on a worker
/// thread while the previous step runs.
fn batch_period<M: Scorer>(
    objective: &mut BatchObjective,
    model: M,
    ctx: &PeriodContext<'_>,
    optim: &mut ModuleOptimizer,
    sampler: &mut DualSampler,
    steps_done: usize,
    steps: usize,
) -> Result<Period<M>, RunError> {
    let reference = Snapshot::of(&model);
    let (mut loss_sum, mut cpu) = (0.0, 0.0);
    let mut model = Some(model);
    let mut drawn = 0;
    let next_ids = || {
        (drawn < steps).then(|| {
            drawn += 1;
            sampler.next_batch()
        })
    };
    let mut k = 0;
    for_each_batch(ctx.train, next_ids, |host| {
        let step = steps_done + k;
        let m = model
            .take()
            .expect("the model is put back after every step");
        let b = host.to_device(ctx.device);
        let scores = m.score(b.inputs);
        let s_cpu = scores_to_cpu(scores.clone()).map_err(bridge_error(step))?;
        let t = Instant::now();
        let g = objective
            .batch_gradient(&s_cpu, &b.targets, &b.ids)
            .map_err(|e| diverged(step)(e.into()))?;
        if !g.loss.is_finite() {
            return Err(RunError::Diverged {
                step,
                quantity: format!("the batch loss is {}", g.loss),
            });
        }
        cpu += t.elapsed().as_secs_f64();
        loss_sum += g.loss;
        let mut loss = surrogate(scores, &g.grad).map_err(bridge_error(step))?;
        if let BatchObjective::Aucm(o) = objective
            && let Some(extra) = o.device_terms(&m, &reference)
        {
            loss = loss + extra;
        }
        let grads = GradientsParams::from_grads(loss.backward(), &m);
        model = Some(optim.step(ctx.cfg.lr, m, grads));
        k += 1;
        ctx.bar.inc(1);
        ctx.bar
            .set_message(format!("loss {:.4}", loss_sum / k as f64));
        Ok(())
    })?;
    Ok(Period {
        model: model.expect("the model is put back after every step"),
        candidate: None,
        diagnostics: None,
        steps,
        loss: loss_sum / steps.max(1) as f64,
        cpu_seconds: cpu,
        dual_seconds: 0.0,
    })
}
