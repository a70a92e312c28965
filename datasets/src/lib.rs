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
//! - sizes: every reader and generator checks a dense table's size before allocating it
//!   ([`memory::check_dense`]); text files must be UTF-8;
//! - ratings matrices (MovieLens 100K) for matrix factorization and completion ([`ratings`]);
//! - training: samplers ([`sampler`]), Burn batchers and the [`ImageSource`] contract every
//!   training loop reads batches through ([`batcher`]), and a Burn `DataLoader` whose every
//!   batch holds both classes, for burn-train's Learner ([`loader`]).
//!
//! A vendored set of the rank-based paper, standardized and split as its experiments do, and
//! balanced batches of sample ids for the training loop:
//!
//! ```
//! use rankrisk_datasets::sampler::DualSampler;
//! use rankrisk_datasets::tabular::builtin::load_builtin;
//!
//! # fn main() -> Result<(), rankrisk_datasets::error::DataError> {
//! let mut set = load_builtin("australian")?; // labels in {-1, +1}
//! assert_eq!((set.n(), set.d, set.positives()), (690, 14, 307));
//! set.standardize();
//! let parts = set.split(&[0.6, 0.4], 0)?; // seeded
//! let train = &parts[0];
//! assert_eq!(train.n() + parts[1].n(), 690);
//! let positive: Vec<bool> = train.y.iter().map(|&y| y > 0.0).collect();
//! let mut sampler = DualSampler::new(&positive, 32, 0.5, 0)?; // 16 positives + 16 negatives
//! let ids = sampler.next_batch();
//! assert_eq!(ids.iter().filter(|&&i| positive[i]).count(), 16);
//! # Ok(())
//! # }
//! ```

pub mod batcher;
pub mod chexpert;
pub mod cifar;
pub mod error;
pub mod fetched;
pub mod folder;
pub mod idx;
pub mod imageset;
pub mod keel;
pub mod loader;
pub mod memory;
pub mod ratings;
/// The samplers, from the core crate (no Burn in them).
pub use rankrisk_core::sampler;
pub mod tabular;
mod text;
pub mod transform;

pub use batcher::{HostBatch, ImageSource};
pub use error::{BinaryPart, DataError};
pub use imageset::{BinaryImageSet, ImageSet};
pub use tabular::Tabular;
pub use tabular::builtin::load_builtin;
pub use tabular::read::{
    FormatChoice, FormatReason, LabelColumn, Labels, TableFormat, guess_format, read_csv,
    read_csv_as, read_delimited_as, read_libsvm, read_libsvm_as, read_table,
};
pub use tabular::synthetic::{SyntheticConfig, make_classification};
pub use text::read_text;
