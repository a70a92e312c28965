#![warn(missing_docs)]
//! Data loaders for rankrisk.
//!
//! Every sample carries a stable id (its index in the data set) because the solvers keep
//! per-sample state (ADMM's z and lambda, SBCD's per-positive duals) indexed by it. Loaders that
//! build tensors take the target [`burn::tensor::Device`] explicitly.

pub mod error;
pub mod synthetic;
pub mod tabular;

pub use error::DataError;
pub use synthetic::{SyntheticConfig, make_classification};
pub use tabular::{LabelColumn, Tabular, load_builtin, read_csv, read_libsvm};
