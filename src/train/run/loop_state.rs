//! What a run's checkpoint holds besides the model and the optimizer: the settings, the data
//! fingerprint, the objective's state, the sampler's position, the history and the clocks.

use rankrisk_datasets::sampler::BatchSampler;
use serde::{Deserialize, Serialize};

use crate::train::run::config::RunConfig;
use crate::train::run::period::ObjectiveState;
use crate::train::run::record::EpochMetrics;
use crate::train::run::resume::DataFingerprint;

/// What the checkpoint holds besides the model and the optimizer.
#[derive(Serialize, Deserialize)]
pub(super) struct LoopState {
    pub(super) config: RunConfig,
    /// The sets the run trained and evaluated on (absent in checkpoints written before
    /// 2026-11-25).
    #[serde(default)]
    pub(super) data: Option<DataFingerprint>,
    /// The objective's state of checkpoints written before 2026-11-26; later ones save it as
    /// the objective's Burn record, `objective.bpk`, and leave this out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) objective: Option<ObjectiveState>,
    pub(super) sampler: BatchSampler,
    pub(super) steps_done: usize,
    pub(super) history: Vec<EpochMetrics>,
    pub(super) train_seconds: f64,
    pub(super) cpu_seconds: f64,
    #[serde(default)]
    pub(super) dual_seconds: f64,
    #[serde(default)]
    pub(super) eval_seconds: f64,
    #[serde(default)]
    pub(super) checkpoint_seconds: f64,
}
