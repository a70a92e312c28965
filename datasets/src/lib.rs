#![warn(missing_docs)]
//! Data loaders for rankrisk.
//!
//! Every sample carries a stable id (its position in the data set, fixed once the set is
//! built) because the solvers keep per-sample state (ADMM's z and lambda, SBCD's per-positive
//! duals) indexed by it. Loaders that build tensors take the target [`burn::tensor::Device`]
//! explicitly.
//!
//! - tabular: the table and its preprocessing ([`tabular`]), the vendored paper sets
//!   ([`tabular::builtin`]), CSV and LIBSVM ([`tabular::read`]), KEEL ([`keel`]), generated
//!   sets ([`tabular::synthetic`]);
//! - images: CIFAR-10/100 binary files ([`cifar`]), MNIST-style IDX files ([`idx`]), the
//!   long-tailed and imratio builders ([`imageset`]), CheXpert ([`chexpert`]) with its
//!   preprocessing ([`transform`]);
//! - training: samplers ([`sampler`]), Burn batchers and the [`ImageSource`] contract every
//!   training loop reads batches through ([`batcher`]).

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
pub mod tabular;
pub mod transform;

pub use batcher::{HostBatch, ImageSource};
pub use error::DataError;
pub use imageset::{BinaryImageSet, ImageSet};
pub use tabular::Tabular;
pub use tabular::builtin::load_builtin;
pub use tabular::read::{LabelColumn, read_csv, read_libsvm};
pub use tabular::synthetic::{SyntheticConfig, make_classification};
