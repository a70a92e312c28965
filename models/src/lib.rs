#![warn(missing_docs)]
//! Burn modules that score samples for rankrisk's objectives: each produces one score per
//! sample on whatever device (wgpu, ndarray, flex) its parameters live on.

pub mod linear;

pub use linear::{LinearScorer, LinearScorerConfig};
