#![warn(missing_docs)]
//! Data loaders for rankrisk.
//!
//! Every sample carries a stable id (its position in the data set, fixed once the set is
//! built) because the solvers keep per-sample state (ADMM's z and lambda, SBCD's per-positive
//! duals) indexed by it. Loaders that build tensors take the target [`burn::tensor::Device`]
//! explicitly.
//!
//! - tabular: the vendored paper sets, CSV, LIBSVM ([`tabular`]), KEEL ([`keel`]), synthetic;
//! - images: CIFAR-10/100 binary files ([`cifar`]), MNIST-style IDX files ([`idx`]), the
//!   long-tailed and imratio builders ([`imageset`]), CheXpert ([`chexpert`]) with its
//!   preprocessing ([`transform`]);
//! - training: samplers ([`sampler`]) and Burn batchers ([`batcher`]).

pub mod batcher;
pub mod chexpert;
pub mod cifar;
pub mod error;
pub mod fetched;
pub mod folder;
pub mod idx;
pub mod imageset;
pub mod keel;
pub mod sampler;
pub mod synthetic;
pub mod tabular;
pub mod transform;

pub use error::DataError;
pub use imageset::{BinaryImageSet, ImageSet};
pub use synthetic::{SyntheticConfig, make_classification};
pub use tabular::{LabelColumn, Tabular, load_builtin, read_csv, read_libsvm};
