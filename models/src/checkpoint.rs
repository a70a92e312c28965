//! Model checkpoints in Burn's burnpack format (burn-store's `BurnpackStore`): every parameter
//! and batch-norm statistic, bit for bit, readable on any backend.

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::store::{BurnpackStore, ModuleSnapshot};

/// Why a checkpoint could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Writing failed.
    #[error("cannot write checkpoint {path}: {reason}")]
    Save {
        /// The file.
        path: PathBuf,
        /// What the store said.
        reason: String,
    },
    /// Reading failed: missing or unreadable file, or tensors that do not fit the model
    /// (a checkpoint of another architecture or configuration).
    #[error("cannot load checkpoint {path}: {reason}")]
    Load {
        /// The file.
        path: PathBuf,
        /// What the store said.
        reason: String,
    },
}

/// Write `model` to `path` (overwriting it; the name is used as given).
pub fn save<M: Module>(model: &M, path: &Path) -> Result<(), CheckpointError> {
    let mut store = BurnpackStore::from_file(path)
        .auto_extension(false)
        .overwrite(true);
    model
        .save_into(&mut store)
        .map_err(|e| CheckpointError::Save {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// Read the checkpoint at `path` into `model` (built with the same configuration, on the
/// device the weights should live on). Every tensor must be present and of the right shape.
pub fn load<M: Module>(mut model: M, path: &Path) -> Result<M, CheckpointError> {
    let fail = |reason: String| CheckpointError::Load {
        path: path.to_path_buf(),
        reason,
    };
    if !path.is_file() {
        return Err(fail("no such file".to_string()));
    }
    let mut store = BurnpackStore::from_file(path).auto_extension(false);
    let result = model
        .load_from(&mut store)
        .map_err(|e| fail(e.to_string()))?;
    if !result.errors.is_empty() || !result.missing.is_empty() {
        return Err(fail(result.to_string()));
    }
    Ok(model)
}
