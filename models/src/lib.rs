#![warn(missing_docs)]
//! Burn modules that score samples for rankrisk's objectives: each produces one score per
//! sample on whatever device (wgpu, ndarray, flex) its parameters live on.

pub mod linear;
pub mod resnet20;

pub use linear::{LinearScorer, LinearScorerConfig};
pub use resnet20::{ResNet20, ResNet20Config};
