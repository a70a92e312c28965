//! Training any Burn module with rankrisk's objectives.
//!
//! The objectives keep per-sample state on the CPU and see only scores: a user's loop reads
//!
//! ```text
//! forward -> scores_to_cpu (one read per batch) -> objective.batch_gradient -> surrogate
//!         -> backward -> optimizer step
//! ```
//!
//! - [`objective`]: the [`Objective`] trait and the plain rank-free ERM objective;
//! - [`rank_admm`]: Algorithm 1 of the rank-based paper for deep models (z, lambda per sample
//!   on the CPU, the w-step by mini-batch steps of a Burn optimizer);
//! - [`params`]: parameter-wise terms on the device (squared norm, proximal distance to a
//!   snapshot) for any module.

pub mod objective;
pub mod params;
pub mod rank_admm;

pub use objective::{BatchGradient, Erm, Objective, TrainError};
pub use rank_admm::{DeepAdmm, DeepAdmmConfig};
