//! What a resumed run must share with the run that wrote its checkpoint: every setting that
//! changes the computation, and the data. [`differences`] is the one comparison of settings
//! (the run driver compares [`RunConfig`]s, `rankrisk train` compares whole runs, data set and
//! folder included); [`DataFingerprint`] records the sets a run trained and evaluated on.
//!
//! Settings that do not change what is computed may differ: the output folder (a moved run),
//! the backend and devices (a run continued on another machine), progress output, and the
//! budget in passes (a finished run can be extended; a smaller budget trains no further).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::train::recipe::Schedule;
use crate::train::run::config::RunConfig;
use crate::train::run::error::RunError;

/// The keys of [`RunConfig`] (and of a `rankrisk train` run) that may differ between a
/// checkpoint's run and the run that resumes it.
pub const FREE_ON_RESUME: [&str; 7] = [
    "out", "resume", "progress", "quiet", "devices", "backend", "epochs",
];

/// The settings in which `now` differs from `saved`, as `key: VALUE then, VALUE now` (nested
/// tables as `outer.inner`), leaving out the keys in `free`. Both are serialized to JSON
/// first, so any two values of one `Serialize` type compare key by key; a key that only one
/// side has is a difference too.
pub fn differences<T: Serialize>(saved: &T, now: &T, free: &[&str]) -> Vec<String> {
    let (Ok(a), Ok(b)) = (serde_json::to_value(saved), serde_json::to_value(now)) else {
        return vec!["the settings could not be compared".into()];
    };
    let mut out = Vec::new();
    diff_values("", &a, &b, free, &mut out);
    out
}

fn diff_values(key: &str, a: &Value, b: &Value, free: &[&str], out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys.into_iter().filter(|k| !free.contains(&k.as_str())) {
                let null = Value::Null;
                let inner = if key.is_empty() {
                    k.clone()
                } else {
                    format!("{key}.{k}")
                };
                diff_values(
                    &inner,
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    free,
                    out,
                );
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{key}: {} then, {} now", show(a), show(b))),
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "unset".into(),
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// One set a run used: its size and a hash of its labels in sample-id order (FNV-1a over the
/// labels' bits), enough to tell another data set, split, limit or class choice apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetFingerprint {
    /// Samples.
    pub samples: usize,
    /// Positives (task 0's labels above 0).
    pub positives: usize,
    /// FNV-1a of every label of every task, in sample-id order, as hexadecimal.
    pub labels: String,
}

impl SetFingerprint {
    /// The fingerprint of a set with `task_labels[t][i]`, the label of sample `i` for task `t`.
    pub fn of(task_labels: &[Vec<f64>]) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for labels in task_labels {
            for &l in labels {
                for byte in l.to_bits().to_le_bytes() {
                    h ^= u64::from(byte);
                    h = h.wrapping_mul(0x0000_0100_0000_01b3);
                }
            }
        }
        SetFingerprint {
            samples: task_labels.first().map_or(0, Vec::len),
            positives: task_labels
                .first()
                .map_or(0, |l| l.iter().filter(|&&y| y > 0.0).count()),
            labels: format!("{h:016x}"),
        }
    }
}

/// The sets a run trained and evaluated on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFingerprint {
    /// The training set.
    pub train: SetFingerprint,
    /// The validation set.
    pub validation: SetFingerprint,
    /// The test set, if the run has one.
    pub test: Option<SetFingerprint>,
}

/// Refuse to resume `now` from a checkpoint written by a run with `saved` settings on
/// `saved_data` (absent in checkpoints written before 2026-11-25) when a setting that changes
/// the computation, or the data, differs.
///
/// # Errors
/// [`RunError::ResumeMismatch`] listing every difference.
pub fn check(
    saved: &RunConfig,
    saved_data: Option<&DataFingerprint>,
    now: &RunConfig,
    now_data: &DataFingerprint,
) -> Result<(), RunError> {
    let mut diffs = differences(saved, now, &FREE_ON_RESUME);
    // Cosine annealing runs over the run's steps: its horizon is fixed when it starts.
    let cosine = [saved, now]
        .iter()
        .any(|c| c.recipe.lr_schedule == Schedule::Cosine);
    if cosine && saved.epochs != now.epochs {
        diffs.push(format!(
            "epochs: {} then, {} now (lr_schedule = \"cosine\" anneals over the run's budget, \
             so the budget of a cosine run cannot change)",
            saved.epochs, now.epochs
        ));
    }
    if let Some(data) = saved_data {
        diffs.extend(
            differences(data, now_data, &[])
                .into_iter()
                .map(|d| format!("data {d}")),
        );
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(RunError::ResumeMismatch {
            out: now.out.clone(),
            differences: diffs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::run::config::Method;

    #[test]
    fn differences_list_every_changed_setting_and_skip_the_free_ones() {
        let a = RunConfig::new(Method::Ce, "out/a".into());
        let mut b = a.clone();
        assert!(differences(&a, &b, &FREE_ON_RESUME).is_empty());
        (b.batch, b.lr, b.out, b.quiet, b.epochs) = (64, Some(0.5), "out/b".into(), true, 9);
        b.grad_clip = Some(2.0);
        let d = differences(&a, &b, &FREE_ON_RESUME);
        assert_eq!(
            d,
            vec![
                "batch: 32 then, 64 now".to_string(),
                "grad_clip: 0.0 then, 2.0 now".to_string(),
                "lr: 0.001 then, 0.5 now".to_string(),
            ]
        );
    }

    #[test]
    fn fingerprints_tell_sets_apart() {
        let a = SetFingerprint::of(&[vec![1.0, -1.0, -1.0]]);
        assert_eq!((a.samples, a.positives), (3, 1));
        assert_eq!(a, SetFingerprint::of(&[vec![1.0, -1.0, -1.0]]));
        assert_ne!(a, SetFingerprint::of(&[vec![-1.0, 1.0, -1.0]]));
        assert_ne!(a, SetFingerprint::of(&[vec![1.0, -1.0]]));
    }
}
