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

use std::io::Write;

use burn::module::Module;
use burn::store::ModuleRecord;

pub use rankrisk_core::objective::provenance::{
    LabelPrint, Provenance, SETTINGS, TRAINING_LABELS, checked_state, training_positives,
    with_provenance,
};

use crate::train::error::TrainError;
use crate::train::state_record::{State, StateVectors};

/// The record of `state` and, when given, `provenance`'s two entries after it.
pub(crate) fn record_of(state: State, provenance: Option<&Provenance>) -> ModuleRecord {
    StateVectors::of(&with_provenance(state, provenance)).into_record()
}

/// The state `record` holds, loaded against `current` (the names and lengths that fit) and
/// checked against `provenance`. A record of the state alone (written before records held
/// the settings, 2026-11-27) loads with a warning on stderr.
///
/// # Errors
/// [`TrainError::Record`] naming `objective` for a record of another objective, another
/// training set or other settings.
pub(crate) fn state_of_record(
    objective: &'static str,
    current: State,
    provenance: Option<&Provenance>,
    record: ModuleRecord,
) -> Result<State, TrainError> {
    match provenance {
        Some(p) if record.len() != current.len() => {
            let entries = with_provenance(current, Some(p));
            let loaded = StateVectors::of(&entries).load(objective, record)?;
            checked_state(objective, loaded, Some(p))
        }
        Some(_) => {
            let loaded = StateVectors::of(&current).load(objective, record)?;
            // A notice that cannot be written is dropped (never a panic).
            let _ = writeln!(
                std::io::stderr(),
                "warning: {objective}'s record holds its state alone (written before records \
                 held the settings, 2026-11-27): its settings and training set are not checked"
            );
            Ok(loaded)
        }
        None => Ok(StateVectors::of(&current).load(objective, record)?),
    }
}
