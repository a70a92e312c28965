//! CIFAR-10 and CIFAR-100 in their official binary format (Krizhevsky 2009): each record is
//! the label byte(s) and 3072 pixel bytes (1024 red, 1024 green, 1024 blue, rows of 32).
//! CIFAR-10 files: `data_batch_1.bin` .. `data_batch_5.bin`, `test_batch.bin`; CIFAR-100 files:
//! `train.bin`, `test.bin` with a coarse and a fine label byte.

use std::path::Path;

use crate::error::{BinaryPart, DataError};
use crate::imageset::ImageSet;

/// Which CIFAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cifar {
    /// 10 classes, one label byte per record.
    Ten,
    /// 100 fine classes; records carry a coarse then a fine label byte (the fine one is used).
    Hundred,
}

impl Cifar {
    fn label_bytes(self) -> usize {
        match self {
            Cifar::Ten => 1,
            Cifar::Hundred => 2,
        }
    }

    fn classes(self) -> usize {
        match self {
            Cifar::Ten => 10,
            Cifar::Hundred => 100,
        }
    }

    /// The official file names of a split.
    pub fn files(self, train: bool) -> Vec<&'static str> {
        match (self, train) {
            (Cifar::Ten, true) => vec![
                "data_batch_1.bin",
                "data_batch_2.bin",
                "data_batch_3.bin",
                "data_batch_4.bin",
                "data_batch_5.bin",
            ],
            (Cifar::Ten, false) => vec!["test_batch.bin"],
            (Cifar::Hundred, true) => vec!["train.bin"],
            (Cifar::Hundred, false) => vec!["test.bin"],
        }
    }
}

/// Bytes of one record.
pub fn record_len(kind: Cifar) -> usize {
    kind.label_bytes() + 3 * 32 * 32
}

/// Read one binary file. Source indices are record indices plus `first_id`.
///
/// # Errors
/// [`DataError::Io`] for a missing file, [`DataError::Binary`] for an empty or truncated file
/// (naming the record) or a label out of range (naming the record, counted from 1).
pub fn read_cifar_file(path: &Path, kind: Cifar, first_id: usize) -> Result<ImageSet, DataError> {
    let bytes = std::fs::read(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let rec = record_len(kind);
    if bytes.is_empty() {
        return Err(DataError::binary(
            path,
            BinaryPart::Data,
            format!("the file is empty: expected {rec}-byte CIFAR records"),
        ));
    }
    if bytes.len() % rec != 0 {
        return Err(DataError::binary(
            path,
            BinaryPart::Record(bytes.len() / rec + 1),
            format!(
                "{} bytes is not a whole number of {rec}-byte CIFAR records (record {} is truncated)",
                bytes.len(),
                bytes.len() / rec + 1
            ),
        ));
    }
    let n = bytes.len() / rec;
    let mut pixels = Vec::with_capacity(n * 3072);
    let mut labels = Vec::with_capacity(n);
    for (r, chunk) in bytes.chunks_exact(rec).enumerate() {
        let label = chunk[kind.label_bytes() - 1] as usize;
        if label >= kind.classes() {
            return Err(DataError::binary(
                path,
                BinaryPart::Record(r + 1),
                format!("label {label} out of range for {} classes", kind.classes()),
            ));
        }
        labels.push(label as u16);
        pixels.extend_from_slice(&chunk[kind.label_bytes()..]);
    }
    Ok(ImageSet {
        name: path
            .file_name()
            .map_or("cifar".into(), |s| s.to_string_lossy().into_owned()),
        channels: 3,
        height: 32,
        width: 32,
        pixels,
        labels,
        source: (first_id..first_id + n).collect(),
        num_classes: kind.classes(),
    })
}

/// Read the training or test split from a folder with the official binary files.
///
/// # Errors
/// As [`read_cifar_file`]; a missing file's message says what to download.
pub fn read_cifar(dir: &Path, kind: Cifar, train: bool) -> Result<ImageSet, DataError> {
    let mut out: Option<ImageSet> = None;
    for name in kind.files(train) {
        let path = dir.join(name);
        if !path.is_file() {
            let what = match kind {
                Cifar::Ten => {
                    "cifar-10-binary.tar.gz (https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz)"
                }
                Cifar::Hundred => {
                    "cifar-100-binary.tar.gz (https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz)"
                }
            };
            return Err(DataError::invalid(
                dir.display().to_string(),
                format!(
                    "{name} not found: download {what} and unpack it so that {name} lies in this folder"
                ),
            ));
        }
        let first = out.as_ref().map_or(0, ImageSet::len);
        let part = read_cifar_file(&path, kind, first)?;
        match &mut out {
            None => out = Some(part),
            Some(set) => set.append(part)?,
        }
    }
    let mut set = out.expect("every CIFAR split has at least one file");
    set.name = format!(
        "{}-{}",
        match kind {
            Cifar::Ten => "CIFAR-10",
            Cifar::Hundred => "CIFAR-100",
        },
        if train { "train" } else { "test" }
    );
    Ok(set)
}

/// Write images in the binary format (CIFAR-100 records get coarse label 0). Used to build
/// test files from real images and to export subsets.
///
/// # Errors
/// [`DataError::Invalid`] for images that are not 3 x 32 x 32; [`DataError::Io`].
pub fn write_cifar_file(path: &Path, kind: Cifar, set: &ImageSet) -> Result<(), DataError> {
    if (set.channels, set.height, set.width) != (3, 32, 32) {
        return Err(DataError::invalid(
            &set.name,
            "CIFAR records hold 3 x 32 x 32 images",
        ));
    }
    let mut bytes = Vec::with_capacity(set.len() * record_len(kind));
    for i in 0..set.len() {
        if kind == Cifar::Hundred {
            bytes.push(0);
        }
        bytes.push(set.labels[i] as u8);
        bytes.extend_from_slice(set.image(i));
    }
    std::fs::write(path, bytes).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })
}
