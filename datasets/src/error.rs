//! Errors of the data loaders: each names the file and, where it applies, the row.

use std::path::PathBuf;

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
    /// A row of a text file does not parse.
    #[error("{path}, line {line}: {message}")]
    Parse {
        /// The file (or the name of an embedded data set).
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the row.
        message: String,
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
}
