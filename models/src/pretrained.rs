//! Import of torchvision's DenseNet-121 ImageNet weights (`densenet121-a639ec97.pth`, or any
//! `.pth` state dict with torchvision's key names) into a [`DenseNet121`] with burn-store.
//!
//! Key names are remapped from torchvision's layout to this crate's:
//! - `features.denseblockB.denselayerL.norm1.weight` and the legacy
//!   `features.denseblockB.denselayerL.norm.1.weight` of the published file (torchvision
//!   rewrites those with a regex when it loads them) -> `blocks.(B-1).layers.(L-1).norm1.gamma`;
//! - `features.transitionT.*` -> `transitions.(T-1).*`, `features.conv0/norm0/norm5` -> the
//!   top-level fields; an optional `module.` prefix (DataParallel checkpoints) is dropped;
//! - batch-norm `weight`/`bias` -> `gamma`/`beta` and the transposed linear weight are handled
//!   by burn-store's PyTorch adapter; 1-based block and layer numbers become 0-based indices.

use std::fmt;
use std::path::{Path, PathBuf};

use burn::store::{ApplyResult, ModuleSnapshot, PytorchStore};

use crate::densenet::DenseNet121;

/// What to do with the file's `classifier.*` tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Keep the model's own (freshly initialized) head, e.g. a one-output scorer on top of
    /// ImageNet features; the file's classifier is reported as skipped.
    Replace,
    /// Load the file's classifier too (the model needs the same number of outputs).
    Load,
}

/// What a weight import did, tensor by tensor (Burn paths after remapping).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Tensors of the model that received the file's values.
    pub applied: Vec<String>,
    /// Tensors of the model the file did not provide (kept at their initial values).
    pub missing: Vec<String>,
    /// Tensors of the file the model has no place for (e.g. `num_batches_tracked`).
    pub unused: Vec<String>,
    /// Tensors left out on purpose (the classifier under [`Head::Replace`]).
    pub skipped: Vec<String>,
}

impl ImportReport {
    fn from_apply(result: ApplyResult) -> Self {
        let mut report = ImportReport {
            applied: result.applied,
            missing: result.missing.into_iter().map(|(p, _)| p).collect(),
            unused: result.unused,
            skipped: result.skipped,
        };
        for list in [
            &mut report.applied,
            &mut report.missing,
            &mut report.unused,
            &mut report.skipped,
        ] {
            list.sort();
        }
        report
    }
}

impl fmt::Display for ImportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} tensors applied, {} missing, {} unused, {} skipped",
            self.applied.len(),
            self.missing.len(),
            self.unused.len(),
            self.skipped.len()
        )?;
        for (what, list) in [
            ("missing", &self.missing),
            ("unused", &self.unused),
            ("skipped", &self.skipped),
        ] {
            if !list.is_empty() {
                let shown: Vec<&str> = list.iter().take(8).map(String::as_str).collect();
                let more = list.len().saturating_sub(shown.len());
                write!(f, "\n  {what}: {}", shown.join(", "))?;
                if more > 0 {
                    write!(f, " and {more} more")?;
                }
            }
        }
        Ok(())
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum PretrainedError {
    /// The file could not be read as a PyTorch checkpoint.
    #[error("cannot read PyTorch weights from {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the reader said.
        reason: String,
    },
    /// Tensors were found but do not fit the model (shape or type), or the file lacks tensors
    /// the model needs: not a DenseNet-121 state dict, or a model built with another
    /// configuration (input channels, outputs under [`Head::Load`]).
    #[error("weights in {path} do not fit the model: {reason}")]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// The offending tensors.
        reason: String,
    },
}

/// Load torchvision DenseNet-121 weights from `path` into `model`.
///
/// `top_level_key` selects a nested state dict (e.g. `"state_dict"` in training checkpoints).
/// Every tensor of the model except a replaced head must come from the file; shapes must
/// match. Returns what was applied, missing, unused and skipped.
pub fn load_torchvision_densenet121(
    model: &mut DenseNet121,
    path: &Path,
    head: Head,
    top_level_key: Option<&str>,
) -> Result<ImportReport, PretrainedError> {
    let mut store = PytorchStore::from_file(path)
        .with_key_remapping(
            r"^(?:module\.)?features\.denseblock(\d+)\.denselayer(\d+)\.(norm|conv)\.?([12])\.",
            "blocks.${1}.layers.${2}.${3}${4}.",
        )
        .with_key_remapping(
            r"^(?:module\.)?features\.transition(\d+)\.",
            "transitions.${1}.",
        )
        .with_key_remapping(r"^(?:module\.)?features\.", "")
        .with_key_remapping(r"^module\.classifier\.", "classifier.")
        .allow_partial(true)
        .validate(false);
    if let Some(key) = top_level_key {
        store = store.with_top_level_key(key);
    }
    if head == Head::Replace {
        store = store.with_predicate(|path, _| !path.starts_with("classifier."));
    }
    let result = model
        .load_from(&mut store)
        .map_err(|e| PretrainedError::Read {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    if !result.errors.is_empty() {
        let reasons: Vec<String> = result
            .errors
            .iter()
            .map(crate::checkpoint::apply_error)
            .collect();
        return Err(PretrainedError::Mismatch {
            path: path.to_path_buf(),
            reason: reasons.join("; "),
        });
    }
    let report = ImportReport::from_apply(result);
    if !report.missing.is_empty() {
        return Err(PretrainedError::Mismatch {
            path: path.to_path_buf(),
            reason: format!("the file lacks tensors the model needs: {report}"),
        });
    }
    Ok(report)
}
