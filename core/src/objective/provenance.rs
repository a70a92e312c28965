//! What an objective was built from, recorded beside its state so that a record loads only
//! into an objective built the same way: the settings of its config (each top-level key of the
//! config's JSON) and a fingerprint of the training labels its state indexes (their count, the
//! positives' count and a 64-bit FNV-1a hash of the label signs in id order).
//!
//! In a record they are two more `f64` vectors beside the state's:
//! - `settings`: three values per setting, in the config's key order: `[0, value, 0]` for a
//!   number, `[1, hash_hi, hash_lo]` (the FNV-1a hash of the value's JSON text in two exact
//!   32-bit halves) for anything else (a bool, an enum, a nested config, `null`);
//! - `training_labels`: `[n, positives, hash_hi, hash_lo]`.
//!
//! A mismatch names the setting (`beta is 0.5 in the record, 0.1 in this SOPA`) or the
//! training set (`600 samples with 60 positives in the record, ...`).

use serde::Serialize;

use crate::objective::{State, TrainError};

/// The record entry of the settings.
pub const SETTINGS: &str = "settings";
/// The record entry of the training labels' fingerprint.
pub const TRAINING_LABELS: &str = "training_labels";

/// One setting of a config, as its record holds it.
#[derive(Debug, Clone, PartialEq)]
enum Setting {
    /// A number, exactly.
    Number(f64),
    /// Anything else: its JSON text (the record keeps its hash).
    Other(String),
}

impl Setting {
    fn encode(&self) -> [f64; 3] {
        match self {
            Setting::Number(x) => [0.0, *x, 0.0],
            Setting::Other(text) => {
                let [hi, lo] = halves(fnv1a(text.bytes()));
                [1.0, hi, lo]
            }
        }
    }
}

/// The training labels' fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LabelPrint {
    /// Samples in the training set.
    pub n: usize,
    /// Positives among them.
    pub positives: usize,
    /// FNV-1a hash of the signs (one byte each, 1 for a positive) in id order.
    pub hash: u64,
}

impl LabelPrint {
    /// The fingerprint of `labels` (+1 for a positive, -1 or 0 for a negative).
    ///
    /// # Errors
    /// [`TrainError::BadLabel`] for another value.
    pub fn of(labels: &[f64]) -> Result<Self, TrainError> {
        let positives = training_positives(labels)?;
        Ok(LabelPrint {
            n: labels.len(),
            positives,
            hash: fnv1a(labels.iter().map(|&y| u8::from(y > 0.0))),
        })
    }

    fn encode(&self) -> Vec<f64> {
        let [hi, lo] = halves(self.hash);
        vec![self.n as f64, self.positives as f64, hi, lo]
    }
}

/// What an objective was built from: its config's settings and its training labels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Provenance {
    settings: Vec<(String, Setting)>,
    labels: LabelPrint,
}

impl Provenance {
    /// The provenance of an objective built by `config` for a training set with `labels`.
    ///
    /// # Errors
    /// [`TrainError::BadLabel`] for a label other than +1, -1 or 0.
    pub fn new<C: Serialize>(config: &C, labels: &[f64]) -> Result<Self, TrainError> {
        // The value of the JSON Burn's `config_to_json` writes (serialized once, not written
        // and parsed back), so that the records saved by configs of either kind agree.
        let settings = match serde_json::to_value(config) {
            Ok(serde_json::Value::Object(map)) => map
                .into_iter()
                .map(|(key, value)| {
                    let setting = match value.as_f64() {
                        Some(x) => Setting::Number(x),
                        None => Setting::Other(value.to_string()),
                    };
                    (key, setting)
                })
                .collect(),
            // A config always writes a JSON object; anything else is kept whole, as the text
            // Burn would write.
            Ok(other) => vec![(
                String::new(),
                Setting::Other(serde_json::to_string_pretty(&other).unwrap_or_default()),
            )],
            Err(_) => vec![(String::new(), Setting::Other(String::new()))],
        };
        Ok(Provenance {
            settings,
            labels: LabelPrint::of(labels)?,
        })
    }

    /// The training labels' fingerprint.
    pub fn labels(&self) -> LabelPrint {
        self.labels
    }

    /// The two record entries (`settings`, `training_labels`).
    pub fn entries(&self) -> [(&'static str, Vec<f64>); 2] {
        let settings = self.settings.iter().flat_map(|(_, s)| s.encode()).collect();
        [
            (SETTINGS, settings),
            (TRAINING_LABELS, self.labels.encode()),
        ]
    }

    /// Compare the entries read back from a record with this provenance.
    ///
    /// # Errors
    /// [`TrainError::Record`] naming `objective` and the first setting that differs, or the
    /// training set when the labels' fingerprint differs.
    pub fn check(
        &self,
        objective: &'static str,
        settings: &[f64],
        labels: &[f64],
    ) -> Result<(), TrainError> {
        let record = |message: String| TrainError::Record { objective, message };
        for ((key, setting), saved) in self.settings.iter().zip(settings.chunks(3)) {
            let ours = setting.encode();
            if saved == ours.as_slice() {
                continue;
            }
            let message = match (setting, saved) {
                (Setting::Number(x), [kind, value, _]) if *kind == 0.0 => {
                    format!("`{key}` is {value} in the record, {x} in this {objective}")
                }
                (Setting::Number(x), _) => {
                    format!("`{key}` is not a number in the record, {x} in this {objective}")
                }
                (Setting::Other(text), _) => {
                    format!("`{key}` differs: this {objective} has {text}, the record another")
                }
            };
            return Err(record(format!(
                "{message} (a record saved with other settings: build the objective with \
                 the record's config)"
            )));
        }
        let ours = self.labels.encode();
        if labels != ours.as_slice() {
            let (n, positives) = (labels.first(), labels.get(1));
            let what = match (n, positives) {
                (Some(&n), Some(&p)) if n == ours[0] && p == ours[1] => {
                    "the same counts, other labels".to_string()
                }
                (Some(&n), Some(&p)) => format!("{n} samples with {p} positives"),
                _ => "no fingerprint".to_string(),
            };
            return Err(record(format!(
                "a record of another training set: it was saved for {what}, this {objective} \
                 was built for {} samples with {} positives",
                self.labels.n, self.labels.positives
            )));
        }
        Ok(())
    }
}

/// The number of positives of a training set's `labels`: +1 for a positive, -1 or 0 for a
/// negative (both the {-1, +1} convention and Burn's {0, 1} work); what the configs of the
/// objectives that index their state by label take.
///
/// # Errors
/// [`TrainError::BadLabel`] for another value.
pub fn training_positives(labels: &[f64]) -> Result<usize, TrainError> {
    if let Some(index) = labels
        .iter()
        .position(|&y| y != 1.0 && y != -1.0 && y != 0.0)
    {
        return Err(TrainError::BadLabel {
            index,
            value: labels[index],
        });
    }
    Ok(labels.iter().filter(|&&y| y > 0.0).count())
}

/// `state` followed by `provenance`'s two entries, when given: what a record holds.
pub fn with_provenance(mut state: State, provenance: Option<&Provenance>) -> State {
    if let Some(p) = provenance {
        state.extend(p.entries());
    }
    state
}

/// The state of `values` (read back from a record laid out by [`with_provenance`]), its two
/// provenance entries checked against `provenance` and taken off.
///
/// # Errors
/// [`TrainError::Record`] as [`Provenance::check`].
pub fn checked_state(
    objective: &'static str,
    mut values: State,
    provenance: Option<&Provenance>,
) -> Result<State, TrainError> {
    if let Some(p) = provenance {
        let labels = values.pop().map(|(_, v)| v).unwrap_or_default();
        let settings = values.pop().map(|(_, v)| v).unwrap_or_default();
        p.check(objective, &settings, &labels)?;
    }
    Ok(values)
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `x` as two exact `f64` halves of 32 bits.
fn halves(x: u64) -> [f64; 2] {
    [(x >> 32) as f64, (x & 0xffff_ffff) as f64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objective::dro_pauc::SopaConfig;

    #[test]
    fn a_mismatch_names_the_setting_or_the_training_set() {
        let labels = [1.0, -1.0, -1.0, 1.0];
        let p = Provenance::new(&SopaConfig::new(0.5), &labels).unwrap();
        let [(_, settings), (_, fingerprint)] = p.entries();
        assert!(p.check("SOPA", &settings, &fingerprint).is_ok());
        let q = Provenance::new(&SopaConfig::new(0.1), &labels).unwrap();
        let e = q.check("SOPA", &settings, &fingerprint).unwrap_err();
        assert!(
            e.to_string().contains("`beta` is 0.5 in the record, 0.1"),
            "{e}"
        );
        // Same counts, another order of the labels.
        let r = Provenance::new(&SopaConfig::new(0.5), &[-1.0, 1.0, 1.0, -1.0]).unwrap();
        let e = r.check("SOPA", &settings, &fingerprint).unwrap_err();
        assert!(e.to_string().contains("another training set"), "{e}");
        assert!(
            e.to_string().contains("the same counts, other labels"),
            "{e}"
        );
        // 0/1 and -1/+1 labels are the same training set.
        let s = Provenance::new(&SopaConfig::new(0.5), &[1.0, 0.0, 0.0, 1.0]).unwrap();
        assert!(s.check("SOPA", &settings, &fingerprint).is_ok());
    }
}
