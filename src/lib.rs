#![warn(missing_docs)]
//! rankrisk: rank-based losses and partial-AUC objectives for classifiers built with Burn.
//!
//! The objectives run on the CPU over per-sample state and hand a per-sample gradient of the
//! scores to the [surrogate bridge](bridge), whose backward pass gives the model's parameter
//! gradients on the device the model lives on ([`backend`] picks it at run time).
//!
//! Layers, each importing only from the ones above it in this list (docs/ARCHITECTURE.md):
//!
//! 1. devices: [`backend`], [`bridge`], [`remote`];
//! 2. core math: [`vector`], [`order`], [`spec`], [`loss`], [`weights`], [`regularizer`], [`pava`],
//!    [`metrics`], [`plot`];
//! 3. solvers: [`admm`] (rank-based, with its baselines), [`pauc`] (partial AUC, with its
//!    baselines), [`pdprox`] (the primal-dual prox method for non-smooth convex problems);
//! 4. [`train`]: the objectives for Burn models and the image run driver;
//! 5. [`tasks`]: data sets with their models, ready to run;
//! 6. [`cli`]: the command line.

pub mod admm;
pub mod backend;
pub mod bridge;
pub mod cli;
pub mod loss;
pub mod metrics;
pub mod order;
pub mod pauc;
pub mod pava;
pub mod pdprox;
pub mod plot;
pub mod regularizer;
pub mod remote;
pub mod spec;
pub mod tasks;
pub mod train;
pub mod vector;
pub mod weights;

pub use backend::{BackendKind, autodiff_device, device};
pub use bridge::{scores_to_cpu, surrogate};
