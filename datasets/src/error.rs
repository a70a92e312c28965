//! Errors of the data loaders: each names the file and, where it applies, the line (the
//! physical line of a text file, counted from 1) or the record of a binary file.

use std::path::PathBuf;

use crate::tabular::format::FormatChoice;

/// What went wrong while reading or preparing a data set.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A text file holds bytes that are not UTF-8.
    #[error(
        "{path}, line {line}: not UTF-8 text (byte offset {offset} starts an invalid sequence){}; \
         save the file as UTF-8",
        utf16_hint(*.utf16)
    )]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line of the first invalid byte.
        line: usize,
        /// Offset of the first invalid byte in the file.
        offset: usize,
        /// Whether the file starts with a UTF-16 byte-order mark.
        utf16: bool,
    },
    /// A row of a text file does not parse.
    #[error("{path}, line {line}: {message}")]
    Parse {
        /// The file (or the name of an embedded data set).
        path: PathBuf,
        /// 1-based physical line number in the file.
        line: usize,
        /// What is wrong with the row.
        message: String,
    },
    /// The header or a record of a binary file (IDX, CIFAR) is malformed.
    #[error("{path}, {part}: {message}")]
    Binary {
        /// The file.
        path: PathBuf,
        /// Where in the file.
        part: BinaryPart,
        /// What is wrong there.
        message: String,
    },
    /// A tabular file that does not parse in the format it was read as: the reader's error,
    /// with the format and why it was chosen.
    #[error("{source} [read as {choice}]")]
    Format {
        /// The format and the reason for it.
        choice: FormatChoice,
        /// The reader's error.
        source: Box<DataError>,
    },
    /// A dense table whose size, taken from the input, does not fit in memory (or overflows);
    /// see [`crate::memory::check_dense`].
    #[error("{}", too_large(.what, *.rows, *.cols, *.bytes_per_value, *.needed, *.available))]
    TooLarge {
        /// What would have been allocated (a file, a generated set).
        what: String,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// Bytes per value.
        bytes_per_value: usize,
        /// Bytes needed; `None` when the product overflows 128 bits.
        needed: Option<u128>,
        /// Bytes of memory available; `None` when the size overflows the address space.
        available: Option<u64>,
    },
    /// An image file is missing, truncated or cannot be decoded.
    #[error("cannot decode image {path}: {message}")]
    Image {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        message: String,
    },
    /// The data set name is not one of the built-in sets.
    #[error("unknown data set '{0}': built-in sets are {1}")]
    UnknownDataset(String, String),
    /// The data set is unusable as a whole (empty, one class only, ...).
    #[error("{name}: {message}")]
    Invalid {
        /// The data set.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// A batch sampler's refusal (a class with no samples, no samples or a batch of 0).
    #[error(transparent)]
    Sampler(#[from] rankrisk_core::sampler::SamplerError),
}

/// Where in a binary file a [`DataError::Binary`] lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryPart {
    /// The header.
    Header,
    /// The data after the header, as a whole (its length).
    Data,
    /// Record `n`, counted from 1 (an image of CIFAR, a label of an IDX label file).
    Record(usize),
}

impl std::fmt::Display for BinaryPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BinaryPart::Header => write!(f, "header"),
            BinaryPart::Data => write!(f, "data"),
            BinaryPart::Record(n) => write!(f, "record {n}"),
        }
    }
}

fn utf16_hint(utf16: bool) -> &'static str {
    if utf16 { ": it looks like UTF-16" } else { "" }
}

/// `bytes` as a short human figure (`12.5 GiB`).
pub(crate) fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

fn too_large(
    what: &str,
    rows: usize,
    cols: usize,
    bytes_per_value: usize,
    needed: Option<u128>,
    available: Option<u64>,
) -> String {
    let size = format!("{rows} rows x {cols} columns of {bytes_per_value}-byte values");
    match (needed, available) {
        (Some(n), Some(a)) => format!(
            "{what}: {size} need {n} bytes ({}), more than the {} of memory available",
            human_bytes(n),
            human_bytes(u128::from(a))
        ),
        (Some(n), None) => format!(
            "{what}: {size} need {n} bytes ({}), more than this machine can address",
            human_bytes(n)
        ),
        (None, _) => format!("{what}: {size} need more than 2^128 bytes"),
    }
}

impl DataError {
    /// A parse error at `line` (1-based) of `path`.
    pub fn parse(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        DataError::Parse {
            path: path.into(),
            line,
            message: message.into(),
        }
    }

    /// A whole-set error for the data set `name`.
    pub fn invalid(name: impl Into<String>, message: impl Into<String>) -> Self {
        DataError::Invalid {
            name: name.into(),
            message: message.into(),
        }
    }

    /// An error in `part` of the binary file `path`.
    pub fn binary(path: impl Into<PathBuf>, part: BinaryPart, message: impl Into<String>) -> Self {
        DataError::Binary {
            path: path.into(),
            part,
            message: message.into(),
        }
    }
}

/// Values as a plain comma-separated list for messages (`0.5, -2, 7`), never Rust's debug form.
pub(crate) fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
