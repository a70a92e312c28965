//! Training checkpoints: the model (burnpack, parameter ids kept so that the optimizer state
//! matches), optionally a second copy of the model (the w-step's anchor `w_k`), the optimizer
//! state (burnpack) and the CPU state of the objective and the loop (CBOR, which stores f64
//! values as their 8 bytes; serde_json's default float parser can be one ulp off, which broke a
//! bit-exact resume). Files are written to temporary names and renamed, so a run killed while
//! saving leaves the previous checkpoint intact.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use serde::Serialize;
use serde::de::DeserializeOwned;

use rankrisk_models::checkpoint::{self, CheckpointError};

/// Why a training checkpoint could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TrainCheckpointError {
    /// The model or anchor file.
    #[error(transparent)]
    Model(#[from] CheckpointError),
    /// The optimizer file.
    #[error("optimizer state {path}: {reason}")]
    Optimizer {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The CPU state file.
    #[error("training state {path}: {reason}")]
    State {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

const MODEL: &str = "model.bpk";
const ANCHOR: &str = "anchor.bpk";
const OPTIM: &str = "optimizer.bpk";
const STATE: &str = "state.cbor";

fn tmp(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

fn rename(from: &Path, to: &Path) -> Result<(), TrainCheckpointError> {
    std::fs::rename(from, to).map_err(|e| TrainCheckpointError::State {
        path: to.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Write a checkpoint into `dir` (created if needed).
///
/// # Errors
/// [`TrainCheckpointError`] naming the file that could not be written.
pub fn save<M: Module, S: Serialize>(
    dir: &Path,
    model: &M,
    anchor: Option<&M>,
    optim: &ModuleOptimizer,
    state: &S,
) -> Result<(), TrainCheckpointError> {
    let state_path = dir.join(STATE);
    std::fs::create_dir_all(dir).map_err(|e| TrainCheckpointError::State {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    for (name, m) in [(MODEL, Some(model)), (ANCHOR, anchor)] {
        if let Some(m) = m {
            let path = dir.join(name);
            checkpoint::save(m, &tmp(&path))?;
            rename(&tmp(&path), &path)?;
        }
    }
    let optim_path = dir.join(OPTIM);
    optim
        .save(tmp(&optim_path))
        .map_err(|e| TrainCheckpointError::Optimizer {
            path: optim_path.clone(),
            reason: e.to_string(),
        })?;
    rename(&tmp(&optim_path), &optim_path)?;
    let mut bytes = Vec::new();
    ciborium::into_writer(state, &mut bytes).map_err(|e| TrainCheckpointError::State {
        path: state_path.clone(),
        reason: e.to_string(),
    })?;
    std::fs::write(tmp(&state_path), bytes).map_err(|e| TrainCheckpointError::State {
        path: state_path.clone(),
        reason: e.to_string(),
    })?;
    rename(&tmp(&state_path), &state_path)
}

/// What [`load`] returns: model, anchor (if one was saved), optimizer, CPU state.
pub type Loaded<M, S> = (M, Option<M>, ModuleOptimizer, S);

/// Read the checkpoint in `dir` into `model` (and a copy of it for the anchor) built with the
/// run's configuration on the run's device, and `optim` built with the run's settings.
///
/// # Errors
/// [`TrainCheckpointError`] naming a missing or unreadable file.
pub fn load<M: Module, S: DeserializeOwned>(
    dir: &Path,
    model: M,
    optim: ModuleOptimizer,
) -> Result<Loaded<M, S>, TrainCheckpointError> {
    let anchor_path = dir.join(ANCHOR);
    let anchor = if anchor_path.is_file() {
        Some(checkpoint::load(model.clone(), &anchor_path)?)
    } else {
        None
    };
    let model = checkpoint::load(model, &dir.join(MODEL))?;
    let optim_path = dir.join(OPTIM);
    let optim = optim
        .load(&optim_path)
        .map_err(|e| TrainCheckpointError::Optimizer {
            path: optim_path.clone(),
            reason: e.to_string(),
        })?;
    let state_path = dir.join(STATE);
    let text = std::fs::read(&state_path).map_err(|e| TrainCheckpointError::State {
        path: state_path.clone(),
        reason: e.to_string(),
    })?;
    let state = ciborium::from_reader(&text[..]).map_err(|e| TrainCheckpointError::State {
        path: state_path.clone(),
        reason: e.to_string(),
    })?;
    Ok((model, anchor, optim, state))
}
