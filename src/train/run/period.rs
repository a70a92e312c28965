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
