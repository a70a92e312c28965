//! What a run's checkpoint holds besides the model and the optimizer: the settings, the data
//! fingerprint, the objective's state, the sampler's position, the history and the clocks.

use rankrisk_datasets::sampler::BatchSampler;
use serde::{Deserialize, Deserializer, Serialize};

use crate::train::instance_pauc::GammaStep;
use crate::train::run::config::{Method, RunConfig};
use crate::train::run::period::ObjectiveState;
use crate::train::run::record::EpochMetrics;
use crate::train::run::resume::DataFingerprint;

/// What the checkpoint holds besides the model and the optimizer.
#[derive(Serialize, Deserialize)]
pub(super) struct LoopState {
    /// The run's settings, read by [`saved_config`].
    #[serde(deserialize_with = "saved_config")]
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

/// A checkpoint's settings, each key it lacks read as it was meant when the checkpoint was
/// written rather than as today's default: a PAUCI run saved before `gamma_step` existed
/// (2026-11-27) moved `gamma` by the paper's ascent, the only direction then, where the
/// default is descent since 2026-11-28 (issue 56). Its resume with today's default is then
/// refused as a changed setting, not continued in the other direction.
pub(super) fn saved_config<'de, D: Deserializer<'de>>(d: D) -> Result<RunConfig, D::Error> {
    #[derive(Deserialize)]
    struct Saved {
        #[serde(flatten)]
        config: RunConfig,
        gamma_step: Option<GammaStep>,
    }
    let Saved { config, gamma_step } = Saved::deserialize(d)?;
    let gamma_step = match (gamma_step, config.method) {
        (Some(step), _) => step,
        (None, Method::Pauci) => GammaStep::Ascent,
        (None, _) => config.gamma_step,
    };
    Ok(RunConfig {
        gamma_step,
        ..config
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Read as a checkpoint reads it: through CBOR (`state.cbor`), the JSON value written
    /// out first.
    fn read(v: serde_json::Value) -> RunConfig {
        #[derive(Deserialize)]
        struct State {
            #[serde(deserialize_with = "saved_config")]
            config: RunConfig,
        }
        let mut bytes = Vec::new();
        ciborium::into_writer(&serde_json::json!({ "config": v }), &mut bytes).unwrap();
        let from_cbor = ciborium::from_reader::<State, _>(&bytes[..])
            .unwrap()
            .config;
        assert_eq!(from_cbor, saved_config(v).unwrap());
        from_cbor
    }

    #[test]
    fn a_pauci_checkpoint_without_gamma_step_reads_as_ascent() {
        let mut pauci = RunConfig::new(Method::Pauci, "out/p".into());
        pauci.gamma_step = GammaStep::Descent;
        let written = serde_json::to_value(&pauci).unwrap();
        // Written with the key: read as written, either way.
        assert_eq!(read(written.clone()).gamma_step, GammaStep::Descent);
        assert_eq!(read(written.clone()), pauci);
        // Written before the key existed: the paper's ascent, then the only direction.
        let mut old = written;
        old.as_object_mut().unwrap().remove("gamma_step").unwrap();
        assert_eq!(read(old.clone()).gamma_step, GammaStep::Ascent);
        // So its resume with today's default is a difference, not a silent change.
        let now = RunConfig::new(Method::Pauci, "out/p".into());
        let d = crate::train::run::resume::differences(&read(old), &now, &[]);
        assert_eq!(
            d,
            vec!["gamma_step: \"ascent\" then, \"descent\" now".to_string()]
        );
        // Other methods: the key does not matter to them and keeps today's default.
        let ce = RunConfig::new(Method::Ce, "out/c".into());
        let mut old = serde_json::to_value(&ce).unwrap();
        old.as_object_mut().unwrap().remove("gamma_step").unwrap();
        assert_eq!(read(old), ce);
    }
}
