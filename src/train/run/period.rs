//! What a training period is made of, for every method: the context it reads, what it
//! returns, and the per-sample state a checkpoint stores.

use burn::tensor::Device;
use indicatif::ProgressBar;
use rankrisk_datasets::ImageSource;
use serde::{Deserialize, Serialize};

use crate::pauc::agd::SbcdState;
use crate::pauc::sbcd::OuterDiagnostics;
use crate::train::aucm::AucM;
use crate::train::dro_pauc::{Sopa, SopaS, SotaS};
use crate::train::mb_pauc::MiniBatchPauc;
use crate::train::parallel::Shards;
use crate::train::run::config::RunConfig;

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
    /// SOPA's thresholds.
    Sopa(Sopa),
    /// SOPA-s's moving averages.
    SopaS(SopaS),
    /// SOTA-s's moving averages.
    SotaS(SotaS),
    /// A multi-label run: one state per task.
    Tasks(Vec<ObjectiveState>),
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
    /// Median milliseconds per optimizer step (batch in hand to parameters updated; AGD-SBCD:
    /// the mean over its SBCD steps).
    pub step_ms: f64,
    /// The learning rate of the period's last step (the recipe's schedule; None for AGD-SBCD
    /// and ASGDA, which step by their own rules).
    pub lr: Option<f64>,
}

/// What a period reads and where it reports: the training set, the device, the settings and
/// the progress bar.
pub(crate) struct PeriodContext<'a> {
    pub train: &'a dyn ImageSource,
    pub device: &'a Device,
    pub cfg: &'a RunConfig,
    pub bar: &'a ProgressBar,
    /// The devices the batches are split over (data parallelism; the first is `device`).
    pub shards: &'a Shards,
}

/// The optimizer of a run and its learning-rate schedule, stepped together: every optimizer
/// step takes the schedule's next rate.
pub(crate) struct Stepper {
    /// The model's optimizer.
    pub optim: burn::optim::ModuleOptimizer,
    /// The recipe's schedule, at the run's step count.
    pub schedule: burn::optim::lr_scheduler::module_lr_scheduler::ModuleLrScheduler,
    /// The rate of the last step taken (None before the first).
    pub last_lr: Option<f64>,
}

impl Stepper {
    /// `optim` with the recipe's schedule of `cfg` for a run of `budget` steps,
    /// `steps_per_epoch` per epoch, replayed to `steps_done` (the step a resumed run
    /// continues from).
    ///
    /// # Errors
    /// [`RunError::Setting`] for a schedule that does not fit the run's steps.
    pub fn new(
        optim: burn::optim::ModuleOptimizer,
        cfg: &RunConfig,
        steps_per_epoch: usize,
        budget: usize,
        steps_done: usize,
    ) -> Result<Self, crate::train::run::error::RunError> {
        let schedule = cfg
            .recipe
            .scheduler_at(cfg.lr(), steps_per_epoch, budget, steps_done)?;
        Ok(Stepper {
            optim,
            schedule,
            last_lr: None,
        })
    }

    /// The rate of the next optimizer step (the schedule moves on by one step).
    pub fn next_lr(&mut self) -> f64 {
        let lr = self.schedule.step().base();
        self.last_lr = Some(lr);
        lr
    }
}
