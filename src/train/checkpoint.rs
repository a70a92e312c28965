//! Training checkpoints: the model (burnpack, parameter ids kept so that the optimizer state
//! matches), optionally a second module shaped like the model (`anchor.bpk`: the w-step's
//! anchor `w_k` of a custom deep-ADMM loop, ASGDA's network direction in the run driver), the
//! optimizer state (burnpack), the objective's state as its Burn record (`objective.bpk`, burnpack:
//! [`BurnObjective::into_record`](crate::train::BurnObjective::into_record)) and the CPU state of the
//! loop (CBOR, which stores f64 values as their 8 bytes; serde_json's default float parser can
//! be one ulp off, which broke a bit-exact resume).
//!
//! A checkpoint is written whole into `checkpoint.new/`, then swapped in by renames: the
//! current `checkpoint/` becomes `checkpoint.prev/` and `checkpoint.new/` becomes
//! `checkpoint/`. A run killed while saving therefore leaves a complete checkpoint behind (the
//! current one, or after a kill between the two renames the previous one, which [`load`] then
//! reads), the files of one checkpoint always belong together, and the previous checkpoint
//! stays on disk. Every file has its checksum file beside it
//! ([`rankrisk_models::checkpoint::write_checksum`]), and [`load`] checks all of them before
//! reading any: a corrupted checkpoint is refused whole. [`RunLock`] keeps a second run off an
//! output folder in use.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::store::ModuleRecord;
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
    /// The objective's record.
    #[error("objective state {path}: {reason}")]
    Objective {
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
const OBJECTIVE: &str = "objective.bpk";

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

/// Write a checkpoint as the folder `dir` (see the module doc for the order of writes): the
/// model, the anchor if there is one, the optimizer, the objective's record if there is one
/// and the loop's `state`.
///
/// # Errors
/// [`TrainCheckpointError`] naming the file that could not be written; the checkpoint that
/// was current before stays in `dir` then.
pub fn save<M: Module, S: Serialize>(
    dir: &Path,
    model: &M,
    anchor: Option<&M>,
    optim: &ModuleOptimizer,
    objective: Option<ModuleRecord>,
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
    let optim_error = |reason: String| TrainCheckpointError::Optimizer {
        path: optim_path.clone(),
        reason,
    };
    optim
        .save(&optim_path)
        .map_err(|e| optim_error(e.to_string()))?;
    checkpoint::write_checksum(&optim_path).map_err(|e| optim_error(e.to_string()))?;
    if let Some(record) = objective {
        let path = new.join(OBJECTIVE);
        let error = |reason: String| TrainCheckpointError::Objective {
            path: path.clone(),
            reason,
        };
        record.save(&path).map_err(|e| error(e.to_string()))?;
        checkpoint::write_checksum(&path).map_err(|e| error(e.to_string()))?;
    }
    let state_path = new.join(STATE);
    let mut bytes = Vec::new();
    ciborium::into_writer(state, &mut bytes).map_err(|e| TrainCheckpointError::State {
        path: state_path.clone(),
        reason: match e {
            ciborium::ser::Error::Io(e) => e.to_string(),
            ciborium::ser::Error::Value(what) => what,
        },
    })?;
    std::fs::write(&state_path, bytes).map_err(fs_error(&state_path))?;
    checkpoint::write_checksum(&state_path).map_err(fs_error(&state_path))?;
    let prev = sibling(dir, "prev");
    if dir.exists() {
        if prev.exists() {
            std::fs::remove_dir_all(&prev).map_err(fs_error(&prev))?;
        }
        std::fs::rename(dir, &prev).map_err(fs_error(dir))?;
    }
    std::fs::rename(&new, dir).map_err(fs_error(dir))
}

/// The checkpoint folder to read for `dir` and the previous checkpoint beside it: `dir`, or
/// `checkpoint.prev` when a kill between the renames of [`save`] left no `dir` (then no other).
fn current(dir: &Path) -> (PathBuf, Option<PathBuf>) {
    let prev = sibling(dir, "prev");
    match (dir.is_dir(), prev.is_dir()) {
        (false, true) => (prev, None),
        (_, true) => (dir.to_path_buf(), Some(prev)),
        (_, false) => (dir.to_path_buf(), None),
    }
}

/// What [`load`] returns.
pub struct Loaded<M, S> {
    /// The model.
    pub model: M,
    /// The anchor, if one was saved.
    pub anchor: Option<M>,
    /// The optimizer.
    pub optim: ModuleOptimizer,
    /// The objective's record, if one was saved (for
    /// [`BurnObjective::load_record`](crate::train::BurnObjective::load_record)).
    pub objective: Option<ModuleRecord>,
    /// The loop's CPU state.
    pub state: S,
}

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
    let (dir, other) = current(dir);
    let (dir, other) = (dir.as_path(), other.as_deref());
    // Every file is checked against its checksum before any is read, so that a corrupted
    // checkpoint is refused whole (naming the previous one, which may be intact).
    let anchor_path = dir.join(ANCHOR);
    let optim_path = dir.join(OPTIM);
    let state_path = dir.join(STATE);
    let objective_path = dir.join(OBJECTIVE);
    let mut files = vec![dir.join(MODEL), optim_path.clone(), state_path.clone()];
    for optional in [&anchor_path, &objective_path] {
        if optional.is_file() {
            files.push(optional.clone());
        }
    }
    for f in &files {
        checkpoint::verify_checksum(f).map_err(|e| match (e, other) {
            (CheckpointError::Corrupted { path, reason }, Some(prev)) => {
                CheckpointError::Corrupted {
                    path,
                    reason: format!(
                        "{reason}; the previous checkpoint is in {} (move it to {} to resume \
                         from it)",
                        prev.display(),
                        dir.display()
                    ),
                }
            }
            (e, _) => e,
        })?;
    }
    let anchor = if anchor_path.is_file() {
        Some(checkpoint::load(model.clone(), &anchor_path)?)
    } else {
        None
    };
    let model = checkpoint::load(model, &dir.join(MODEL))?;
    let optim = optim
        .load(&optim_path)
        .map_err(|e| TrainCheckpointError::Optimizer {
            path: optim_path.clone(),
            reason: checkpoint::undecodable(&e.to_string()),
        })?;
    let objective = if objective_path.is_file() {
        Some(
            ModuleRecord::load(&objective_path).map_err(|e| TrainCheckpointError::Objective {
                path: objective_path.clone(),
                reason: checkpoint::undecodable(&e.to_string()),
            })?,
        )
    } else {
        None
    };
    let state = decode_state(&state_path)?;
    Ok(Loaded {
        model,
        anchor,
        optim,
        objective,
        state,
    })
}

/// Read only the CPU state of the checkpoint in `dir` (or the previous one, as [`load`]
/// chooses), checked against its checksum: what a resumed run compares with its own settings
/// before it reads the model.
///
/// # Errors
/// [`TrainCheckpointError`] naming a missing, corrupted or unreadable state file.
pub fn read_state<S: DeserializeOwned>(dir: &Path) -> Result<S, TrainCheckpointError> {
    let state_path = current(dir).0.join(STATE);
    checkpoint::verify_checksum(&state_path)?;
    decode_state(&state_path)
}

fn decode_state<S: DeserializeOwned>(state_path: &Path) -> Result<S, TrainCheckpointError> {
    let text = std::fs::read(state_path).map_err(fs_error(state_path))?;
    ciborium::from_reader(&text[..]).map_err(|e| TrainCheckpointError::State {
        path: state_path.to_path_buf(),
        reason: cbor_reason(&e),
    })
}

/// A CBOR decoding error in words (ciborium's `Display` prints its `Debug` form).
fn cbor_reason<T: std::fmt::Display>(e: &ciborium::de::Error<T>) -> String {
    use ciborium::de::Error;
    match e {
        Error::Io(e) => format!("cannot read it: {e}"),
        Error::Syntax(at) => format!("not valid CBOR at byte {at}"),
        Error::Semantic(Some(at), what) => format!("{what} (at byte {at})"),
        Error::Semantic(None, what) => what.clone(),
        Error::RecursionLimitExceeded => "nested too deeply".into(),
    }
}

/// An exclusive lock on a run's output folder (the file `run.lock` in it), held while the run
/// trains; the operating system releases it when the process ends, killed or not. Within one
/// process the lock is shared: taking it again for a folder this process already holds (the
/// command line locks a run's folder before it writes the run's config, then the run driver
/// takes it for the training) returns another handle of the same lock, released with the last.
#[derive(Debug)]
pub struct RunLock {
    _file: std::sync::Arc<std::fs::File>,
}

/// The locks this process holds: canonical folder and the lock file's handle.
type Held = std::sync::Mutex<Vec<(PathBuf, std::sync::Weak<std::fs::File>)>>;

/// The locks this process holds, by canonical folder.
fn held() -> &'static Held {
    static HELD: std::sync::OnceLock<Held> = std::sync::OnceLock::new();
    HELD.get_or_init(Default::default)
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
        let key = out.canonicalize().map_err(|e| io(&e))?;
        let mut held = held()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.retain(|(_, w)| w.strong_count() > 0);
        if let Some(file) = held
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(RunLock { _file: file });
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io(&e))?;
        match file.try_lock() {
            Ok(()) => {
                let file = std::sync::Arc::new(file);
                held.push((key, std::sync::Arc::downgrade(&file)));
                Ok(RunLock { _file: file })
            }
            Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Busy(out.to_path_buf())),
            Err(std::fs::TryLockError::Error(e)) => Err(io(&e)),
        }
    }
}
