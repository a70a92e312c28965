//! What a run's checkpoint holds besides the model and the optimizer: the settings, the data
//! fingerprint, the objective's state, the sampler's position, the history and the clocks.

use rankrisk_datasets::sampler::BatchSampler;
use serde::{Deserialize, Deserializer, Serialize};

use crate::train::instance_pauc::{GammaStep, WeightStep};
use crate::train::run::config::RunConfig;
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

/// A checkpoint's settings, the keys it lacks among those whose default changed
/// ([`RunConfig::as_saved_before_keys`]) read as the run ran with them, not as today's
/// defaults.
pub(super) fn saved_config<'de, D: Deserializer<'de>>(d: D) -> Result<RunConfig, D::Error> {
    #[derive(Deserialize)]
    struct Saved {
        #[serde(flatten)]
        config: RunConfig,
        weight_step: Option<WeightStep>,
        gamma_step: Option<GammaStep>,
    }
    let Saved {
        mut config,
        weight_step,
        gamma_step,
    } = Saved::deserialize(d)?;
    // The flattened settings never see these two keys: put back what was written.
    config.weight_step = weight_step.unwrap_or(config.weight_step);
    config.gamma_step = gamma_step.unwrap_or(config.gamma_step);
    config.as_saved_before_keys(|key| match key {
        "weight_step" => weight_step.is_none(),
        "gamma_step" => gamma_step.is_none(),
        _ => false,
    });
    Ok(config)
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
    use crate::train::run::config::KEYS_WITH_CHANGED_DEFAULTS;

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
    fn a_checkpoint_without_the_changed_keys_reads_as_it_ran() {
        use crate::train::run::config::Method;
        let strip = |c: &RunConfig, keys: &[&str]| {
            let mut v = serde_json::to_value(c).unwrap();
            for k in keys {
                v.as_object_mut().unwrap().remove(*k).unwrap();
            }
            v
        };
        let all = KEYS_WITH_CHANGED_DEFAULTS;
        // Written with the keys: read as written.
        let pauci = RunConfig::new(Method::Pauci, "out/p".into());
        assert_eq!(pauci.gamma_step, GammaStep::Descent);
        assert_eq!(read(serde_json::to_value(&pauci).unwrap()), pauci);
        // Written before them: PAUCI by ascent, UPAUCI by the paper's weight step, whatever
        // today's defaults; nothing else moves.
        let old = read(strip(&pauci, &all));
        let ascent = RunConfig {
            gamma_step: GammaStep::Ascent,
            ..pauci.clone()
        };
        assert_eq!(old, ascent);
        let upauci = RunConfig::new(Method::Upauci, "out/u".into());
        assert_eq!(upauci.weight_step, WeightStep::Exact);
        let paper = RunConfig {
            weight_step: WeightStep::Paper,
            ..upauci.clone()
        };
        assert_eq!(read(strip(&upauci, &all)), paper);
        // So a resume with today's defaults is a difference, not a silent change.
        let d = crate::train::run::resume::differences(&old, &pauci, &[]);
        assert_eq!(
            d,
            vec!["gamma_step: \"ascent\" then, \"descent\" now".to_string()]
        );
        // A setting that does not apply keeps today's default (CE has no gamma or weights).
        let ce = RunConfig::new(Method::Ce, "out/c".into());
        assert_eq!(read(strip(&ce, &all)), ce);
    }

    #[test]
    fn a_checkpoint_from_before_the_recipe_resumes_as_it_ran() {
        use crate::train::recipe::{OptimizerKind, Recipe};
        use crate::train::run::config::Method;
        // The keys the recipe added, none of which a checkpoint before 2026-11-28 holds
        // (`adam_epsilon` is older and stays).
        let recipe_keys = [
            "optimizer",
            "weight_decay",
            "momentum",
            "nesterov",
            "epoch_decay",
            "lr_schedule",
            "decay_epochs",
            "decay_factor",
            "lr_min",
            "warmup_steps",
            "eval_every",
        ];
        for method in [
            Method::Ce,
            Method::Aucm,
            Method::Mb,
            Method::SotaS,
            Method::Sbcd,
        ] {
            let now = RunConfig::new(method, "out/r".into());
            let mut v = serde_json::to_value(&now).unwrap();
            for k in recipe_keys {
                v.as_object_mut().unwrap().remove(k);
            }
            let old = read(v);
            // The recipe every run had: the method's optimizer, a constant rate, an
            // evaluation per epoch, AUC-M's weight decay 1e-4 and gamma 500.
            assert_eq!(old, now, "{method:?}");
            assert_eq!(old.recipe, Recipe::default());
            assert!(crate::train::run::resume::differences(&old, &now, &[]).is_empty());
            let sgd = matches!(method, Method::Aucm | Method::Mb | Method::Sbcd);
            let kind = old.recipe.optimizer_or(old.default_optimizer());
            assert_eq!(kind == OptimizerKind::Sgd, sgd, "{method:?}");
        }
        let aucm = RunConfig::new(Method::Aucm, "out/a".into());
        assert_eq!(
            (aucm.weight_decay(), 1.0 / aucm.recipe.epoch_decay),
            (1e-4, 500.0)
        );
        // A resume that changes the schedule is a difference named by its key.
        let mut step = aucm.clone();
        step.recipe.lr_schedule = crate::train::recipe::Schedule::Step;
        step.recipe.decay_epochs = vec![1];
        let d = crate::train::run::resume::differences(&aucm, &step, &[]);
        assert_eq!(
            d,
            vec![
                "decay_epochs: unset then, [1] now".to_string(),
                "lr_schedule: \"constant\" then, \"step\" now".to_string()
            ]
        );
    }
}
