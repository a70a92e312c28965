#![warn(missing_docs)]
//! Burn modules that score samples for rankrisk's objectives: each produces one score per
//! sample on whatever device (wgpu, ndarray, flex) its parameters live on, through [`Scorer`],
//! the one contract the objectives rely on. Also checkpoints (burnpack) and the import of
//! torchvision's DenseNet-121 ImageNet weights. Their convolutions and batch norms run on this
//! crate's CPU [`kernels`] on flex and ndarray, on Burn's ops elsewhere.

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
