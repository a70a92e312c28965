//! Training checkpoints: the model (burnpack, parameter ids kept so that the optimizer state
//! matches), optionally a second copy of the model (the w-step's anchor `w_k`), the optimizer
//! state (burnpack) and the CPU state of the objective and the loop (CBOR, which stores f64
//! values as their 8 bytes; serde_json's default float parser can be one ulp off, which broke a
//! bit-exact resume).
//!
//! A checkpoint is written whole into `checkpoint.new/`, then swapped in by renames: the
//! current `checkpoint/` becomes `checkpoint.prev/` and `checkpoint.new/` becomes
//! `checkpoint/`. A run killed while saving therefore leaves a complete checkpoint behind (the
//! current one, or after a kill between the two renames the previous one, which [`load`] then
//! reads), the files of one checkpoint always belong together, and the previous checkpoint
//! stays on disk. [`RunLock`] keeps a second run off an output folder in use.

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

/// The sibling folder `checkpoint.<suffix>` of the checkpoint folder `dir`.
fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    dir.with_file_name(name)
}

fn fs_error(path: &Path) -> impl Fn(std::io::Error) -> TrainCheckpointError + '_ {
    move |e| TrainCheckpointError::State {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Write a checkpoint as the folder `dir` (see the module doc for the order of writes).
///
/// # Errors
/// [`TrainCheckpointError`] naming the file that could not be written; the checkpoint that
/// was current before stays in `dir` then.
pub fn save<M: Module, S: Serialize>(
    dir: &Path,
    model: &M,
    anchor: Option<&M>,
    optim: &ModuleOptimizer,
    state: &S,
) -> Result<(), TrainCheckpointError> {
    let new = sibling(dir, "new");
    if new.exists() {
        std::fs::remove_dir_all(&new).map_err(fs_error(&new))?;
    }
    std::fs::create_dir_all(&new).map_err(fs_error(&new))?;
    for (name, m) in [(MODEL, Some(model)), (ANCHOR, anchor)] {
        if let Some(m) = m {
            checkpoint::save(m, &new.join(name))?;
        }
    }
    let optim_path = new.join(OPTIM);
    optim
        .save(&optim_path)
        .map_err(|e| TrainCheckpointError::Optimizer {
            path: optim_path.clone(),
            reason: e.to_string(),
        })?;
    let state_path = new.join(STATE);
    let mut bytes = Vec::new();
    ciborium::into_writer(state, &mut bytes).map_err(|e| TrainCheckpointError::State {
        path: state_path.clone(),
        reason: e.to_string(),
    })?;
    std::fs::write(&state_path, bytes).map_err(fs_error(&state_path))?;
    let prev = sibling(dir, "prev");
    if dir.exists() {
        if prev.exists() {
            std::fs::remove_dir_all(&prev).map_err(fs_error(&prev))?;
        }
        std::fs::rename(dir, &prev).map_err(fs_error(dir))?;
    }
    std::fs::rename(&new, dir).map_err(fs_error(dir))
}

/// What [`load`] returns: model, anchor (if one was saved), optimizer, CPU state.
pub type Loaded<M, S> = (M, Option<M>, ModuleOptimizer, S);

/// Read the checkpoint in `dir` (or, when a kill between the renames of [`save`] left no
/// `dir`, the previous one) into `model` (and a copy of it for the anchor) built with the
/// run's configuration on the run's device, and `optim` built with the run's settings.
///
/// # Errors
/// [`TrainCheckpointError`] naming a missing, truncated or unreadable file.
pub fn load<M: Module, S: DeserializeOwned>(
    dir: &Path,
    model: M,
    optim: ModuleOptimizer,
) -> Result<Loaded<M, S>, TrainCheckpointError> {
    let prev = sibling(dir, "prev");
    let dir = if !dir.is_dir() && prev.is_dir() {
        prev.as_path()
    } else {
        dir
    };
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
    let text = std::fs::read(&state_path).map_err(fs_error(&state_path))?;
    let state = ciborium::from_reader(&text[..]).map_err(|e| TrainCheckpointError::State {
        path: state_path.clone(),
        reason: e.to_string(),
    })?;
    Ok((model, anchor, optim, state))
}

/// An exclusive lock on a run's output folder (the file `run.lock` in it), held while the run
/// trains; the operating system releases it when the process ends, killed or not.
#[derive(Debug)]
pub struct RunLock {
    _file: std::fs::File,
}

/// Why a run could not lock its output folder.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error("another run is using {0} (it holds {0}/run.lock); wait for it or choose another out")]
    Busy(PathBuf),
    /// The lock file could not be created or locked.
    #[error("cannot lock {path}: {reason}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl RunLock {
    /// Take the lock of output folder `out` (created if needed).
    ///
    /// # Errors
    /// [`LockError::Busy`] while another process holds it, [`LockError::Io`] otherwise.
    pub fn acquire(out: &Path) -> Result<RunLock, LockError> {
        let path = out.join("run.lock");
        let io = |e: &dyn std::fmt::Display| LockError::Io {
            path: path.clone(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(out).map_err(|e| io(&e))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io(&e))?;
        match file.try_lock() {
            Ok(()) => Ok(RunLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Busy(out.to_path_buf())),
            Err(std::fs::TryLockError::Error(e)) => Err(io(&e)),
        }
    }
}
