//! Model checkpoints in Burn's burnpack format (burn-store's `BurnpackStore`): every parameter
//! and batch-norm statistic, bit for bit, readable on any backend.
//!
//! Every checkpoint file `F` has a checksum file `F.crc32` beside it (CRC-32 of the bytes and
//! their count, [`write_checksum`]), written after `F` and checked before `F` is read
//! ([`verify_checksum`]): a file that was corrupted on disk, truncated, or replaced (its
//! checksum then describes other bytes) is refused instead of loading wrong weights; a file
//! with no checksum file at all (from before checksums) loads with a warning naming the
//! missing one. [`load`] also refuses weights that are not finite. The training checkpoints of `rankrisk::train::checkpoint` use the same two
//! functions for their optimizer and state files.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use burn::module::{Module, ModuleVisitor, Param};
use burn::store::{BurnpackStore, ModuleSnapshot};
use burn::tensor::Tensor;

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
    /// The file's bytes do not match its checksum file, or the checksum file is unreadable:
    /// corrupted on disk, truncated, or replaced by another file.
    #[error("checkpoint {path} is corrupted: {reason}")]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// What differs.
        reason: String,
    },
    /// The file loaded, but a weight is NaN or infinite (a diverged model was saved, or the
    /// file was altered and its checksum rewritten).
    #[error(
        "checkpoint {path} holds non-finite weights: `{parameter}` has {count} NaN or \
         infinite values (the first such parameter); a model with them cannot score"
    )]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// The first parameter (module path) with a non-finite value.
        parameter: String,
        /// How many non-finite values that parameter holds.
        count: usize,
    },
}

/// The checksum file of checkpoint file `path`: `path` with `.crc32` appended.
pub fn checksum_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".crc32");
    PathBuf::from(name)
}

/// CRC-32 and length of the file at `path`, read in blocks.
fn file_checksum(path: &Path) -> std::io::Result<(u32, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok((hasher.finalize(), len))
}

/// Write the checksum file of the file at `path` (see the module doc): one line
/// `crc32 HEX BYTES`. The checkpoint writers call it after each file; call it yourself for a
/// file made by other means that [`load`] should accept.
///
/// # Errors
/// The I/O error of reading `path` or writing its checksum file.
pub fn write_checksum(path: &Path) -> std::io::Result<()> {
    let (crc, len) = file_checksum(path)?;
    let sum = checksum_path(path);
    let tmp = checksum_path(&sum);
    std::fs::write(&tmp, format!("crc32 {crc:08x} {len}\n"))?;
    std::fs::rename(&tmp, &sum)
}

/// Check the file at `path` against its checksum file. A file without one (written before
/// checksums, 2026-11-25, or by another program) passes with a warning on stderr that names
/// the missing checksum file, once per file and process; a checksum file that is there must
/// match.
///
/// # Errors
/// [`CheckpointError::Load`] for a missing or unreadable file, [`CheckpointError::Corrupted`]
/// for an unreadable or malformed checksum file, or bytes that do not match it.
pub fn verify_checksum(path: &Path) -> Result<(), CheckpointError> {
    let corrupted = |reason: String| CheckpointError::Corrupted {
        path: path.to_path_buf(),
        reason,
    };
    if !path.is_file() {
        let reason = if path.is_dir() {
            let model = path.join("model.bpk");
            if model.is_file() {
                format!(
                    "a folder, not a checkpoint file; its model weights are {}",
                    model.display()
                )
            } else {
                "a folder, not a checkpoint file (a .bpk file)".into()
            }
        } else {
            "no such file".into()
        };
        return Err(CheckpointError::Load {
            path: path.to_path_buf(),
            reason,
        });
    }
    let sum = checksum_path(path);
    if !sum.exists() && !sum.is_symlink() {
        warn_unchecked(path, &sum);
        return Ok(());
    }
    let text = std::fs::read_to_string(&sum).map_err(|e| {
        corrupted(format!(
            "its checksum file {} cannot be read ({e})",
            sum.display()
        ))
    })?;
    let fields: Vec<&str> = text.split_whitespace().collect();
    let expected = match fields.as_slice() {
        ["crc32", crc, len] => u32::from_str_radix(crc, 16)
            .ok()
            .zip(len.parse::<u64>().ok()),
        _ => None,
    }
    .ok_or_else(|| {
        corrupted(format!(
            "its checksum file {} does not read `crc32 HEX BYTES`",
            sum.display()
        ))
    })?;
    let found = file_checksum(path).map_err(|e| CheckpointError::Load {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    if found != expected {
        return Err(corrupted(format!(
            "{} bytes with CRC-32 {:08x}, but {} records {} bytes with CRC-32 {:08x}",
            found.1,
            found.0,
            sum.display(),
            expected.1,
            expected.0
        )));
    }
    Ok(())
}

/// Say on stderr, once per file and process, that `path` is read without its checksum file
/// `sum`.
fn warn_unchecked(path: &Path, sum: &Path) {
    static WARNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    if warned.iter().any(|p| p == path) {
        return;
    }
    warned.push(path.to_path_buf());
    // A warning that cannot be written is dropped (never a panic).
    let _ = writeln!(
        std::io::stderr(),
        "warning: {} has no checksum file {}: read without the check that it was written \
         whole (a checkpoint from before checksums, 2026-11-25, or copied without it); \
         rankrisk_models::checkpoint::write_checksum writes one if you trust the file",
        path.display(),
        sum.display()
    );
}

/// Write `model` to `path` (overwriting it; the name is used as given) and its checksum file.
///
/// A batch norm's running statistics are synced first: Burn keeps a training step's update of
/// them pending until the next step (or `valid()`) and records the value before it, so a
/// model saved mid-loop without the sync reloads one update behind and its evaluation scores
/// drift from the uninterrupted run's. The sync is the one the next step would do, so the
/// training that goes on after the save is unchanged.
///
/// # Errors
/// [`CheckpointError::Save`] naming the file that could not be written.
pub fn save<M: Module>(model: &M, path: &Path) -> Result<(), CheckpointError> {
    let fail = |reason: String| CheckpointError::Save {
        path: path.to_path_buf(),
        reason,
    };
    // `valid` merges every pending running-state update into the shared value (the returned
    // copy is not needed).
    drop(model.valid());
    let mut store = BurnpackStore::from_file(path)
        .auto_extension(false)
        .overwrite(true);
    model
        .save_into(&mut store)
        .map_err(|e| fail(e.to_string()))?;
    write_checksum(path).map_err(|e| fail(e.to_string()))
}

/// Read the checkpoint at `path` into `model` (built with the same configuration, on the
/// device the weights should live on). The file must match its checksum file, every tensor
/// must be present and of the right shape, and every weight finite.
///
/// # Errors
/// [`CheckpointError::Load`] for a missing file or tensors that do not fit the model,
/// [`CheckpointError::Corrupted`] for bytes that do not match the checksum file (a file
/// without one loads with a warning, [`verify_checksum`]),
/// [`CheckpointError::NonFinite`] for NaN or infinite weights.
pub fn load<M: Module>(mut model: M, path: &Path) -> Result<M, CheckpointError> {
    let fail = |reason: String| CheckpointError::Load {
        path: path.to_path_buf(),
        reason,
    };
    verify_checksum(path)?;
    // The store's own checks are off so that the mismatches come back as a list, which
    // `mismatch` puts in words (the store's messages print Rust debug structures).
    let mut store = BurnpackStore::from_file(path)
        .auto_extension(false)
        .validate(false)
        .allow_partial(true);
    let result = model
        .load_from(&mut store)
        .map_err(|e| fail(undecodable(&e.to_string())))?;
    if let Some(reason) = mismatch(&result) {
        return Err(fail(reason));
    }
    if let Some((parameter, count)) = first_non_finite(&model) {
        return Err(CheckpointError::NonFinite {
            path: path.to_path_buf(),
            parameter,
            count,
        });
    }
    Ok(model)
}

/// The detail of a Burn record error's text, without the store's kind prefix (`Record I/O
/// error: `, `Record validation error: `).
pub fn record_detail(text: &str) -> &str {
    text.trim_start_matches("Record I/O error: ")
        .trim_start_matches("Record validation error: ")
}

/// A Burnpack file that passed its checksum but does not decode, in words: the store's own
/// text (such as `Syntax(2276)` from the header's CBOR) kept as the detail.
pub fn undecodable(detail: &str) -> String {
    let detail = record_detail(detail);
    format!(
        "the file does not decode as a Burnpack record of this version (written by another \
         program or version, or altered and its checksum file rewritten); the reader said: \
         {detail}"
    )
}

/// One tensor that does not fit a model, in words (burn-store's own text prints shapes as Rust
/// debug structures).
pub(crate) fn apply_error(e: &burn::store::ApplyError) -> String {
    use burn::store::ApplyError;
    match e {
        ApplyError::ShapeMismatch {
            path,
            expected,
            found,
        } => format!(
            "`{path}` has shape {:?} in the file, {:?} in the model",
            found.as_slice(),
            expected.as_slice()
        ),
        ApplyError::DTypeMismatch {
            path,
            expected,
            found,
        } => format!("`{path}` is {found:?} in the file, {expected:?} in the model"),
        ApplyError::AdapterError { path, message } | ApplyError::LoadError { path, message } => {
            format!("`{path}`: {message}")
        }
    }
}

/// What keeps a checkpoint's tensors from fitting the model, in words: shapes or types that
/// differ, tensors the model needs that the file lacks (a checkpoint of another architecture
/// or configuration); `None` when everything fits.
fn mismatch(result: &burn::store::ApplyResult) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(first) = result.errors.first() {
        let what = apply_error(first);
        parts.push(format!(
            "{} tensors do not fit the model (the first: {what})",
            result.errors.len()
        ));
    }
    if let Some((first, _)) = result.missing.first() {
        parts.push(format!(
            "{} tensors of the model are not in the file (the first: `{first}`)",
            result.missing.len()
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "{}: it is a checkpoint of another model or configuration",
            parts.join("; ")
        )
    })
}

/// The module path of the first float parameter of `model` holding a NaN or an infinity, and
/// how many such values it holds.
pub fn first_non_finite<M: Module>(model: &M) -> Option<(String, usize)> {
    let mut finder = NonFiniteFinder::default();
    model.visit(&mut finder);
    finder.found
}

#[derive(Default)]
struct NonFiniteFinder {
    path: Vec<String>,
    found: Option<(String, usize)>,
}

impl ModuleVisitor for NonFiniteFinder {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_string());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if self.found.is_some() {
            return;
        }
        let data = param.val().into_data().convert::<f64>();
        let count = data
            .as_slice::<f64>()
            .map_or(0, |v| v.iter().filter(|x| !x.is_finite()).count());
        if count > 0 {
            let name = if self.path.is_empty() {
                "(root)".to_string()
            } else {
                self.path.join(".")
            };
            self.found = Some((name, count));
        }
    }
}
