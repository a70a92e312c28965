#![warn(missing_docs)]
//! rankrisk: rank-based losses and partial-AUC objectives for classifiers built with Burn.
//!
//! The objectives run on the CPU over per-sample state and hand a per-sample gradient of the
//! scores to the [surrogate bridge](bridge), whose backward pass gives the model's parameter
//! gradients on the device the model lives on ([`backend`] picks it at run time).

pub mod admm;
pub mod backend;
pub mod baselines;
pub mod bridge;
pub mod cli;
pub mod linalg;
pub mod loss;
pub mod metrics;
pub mod pauc;
pub mod pava;
pub mod plot;
pub mod regularizer;
pub mod smoke;
pub mod train;
pub mod weights;

pub use backend::{BackendKind, autodiff_device, device};
pub use bridge::{scores_to_cpu, surrogate};
