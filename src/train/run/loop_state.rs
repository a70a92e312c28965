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
    /// A number drawn for each checkpoint save and written into its `objective.bpk` too, so
    /// that an `objective.bpk` of another run or another save (copied in, checksum and all) is
    /// refused at load (absent in checkpoints written before 2026-11-27).
    #[serde(default)]
    pub(super) checkpoint_id: Option<u64>,
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

/// A fresh checkpoint id: the clock's nanoseconds mixed with the process id and a counter
/// (splitmix64), different for every save of every run.
pub(super) fn new_checkpoint_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut z = nanos
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
