#![warn(missing_docs)]
//! Burn modules that score samples for rankrisk's objectives: each produces one score per
//! sample on whatever device (wgpu, ndarray, flex) its parameters live on, through [`Scorer`],
//! the one contract the objectives rely on. Also checkpoints (burnpack) and the import of
//! torchvision's DenseNet-121 ImageNet weights. Their convolutions and batch norms run on this
//! crate's CPU [`kernels`] on flex and ndarray, on Burn's ops elsewhere.
//!
//! ResNet-20 for one-channel 28 x 28 images with one output, scoring a batch on the flex CPU
//! backend (`Device::flex()`; rankrisk's `backend::device` picks a backend by name):
//!
//! ```
//! use burn::tensor::{Device, Tensor};
//! use rankrisk_models::{ResNet20Config, Scorer};
//!
//! let device = Device::flex();
//! let model = ResNet20Config::new()
//!     .with_in_channels(1)
//!     .with_num_outputs(1)
//!     .init(&device);
//! let x = Tensor::<4>::zeros([4, 1, 28, 28], &device);
//! let s = model.score(x); // one score per image
//! assert_eq!(s.dims(), [4]);
//! ```

pub mod checkpoint;
pub mod densenet;
pub mod kernels;
pub mod linear;
pub mod pretrained;
pub mod resnet20;
pub mod scorer;

pub use densenet::{DenseNet121, DenseNet121Config};
pub use linear::{LinearScorer, LinearScorerConfig};
pub use resnet20::{ResNet20, ResNet20Config};
pub use scorer::Scorer;
