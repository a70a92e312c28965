#![warn(missing_docs)]
//! rankrisk-core: the math of rankrisk with no deep-learning framework in its dependency
//! tree (no Burn, cubecl or wgpu): what the `rankrisk` crate (Burn) and the Python package
//! build on.
//!
//! Layers, each importing only from the ones above it in this list (docs/ARCHITECTURE.md):
//!
//! 1. [`math`]: vectors, orders, spectra of the rank-based risks (sigma of eq. (1) of
//!    papers/rank-based-loss-admm.txt), losses, regularizers (l1, l2, elastic net, MCP, SCAD),
//!    the refined PAVA z-step; [`sampler`]: seeded, resumable samplers over sample ids; the
//!    settings structs' `config!` macro (Burn's config style: `new`, `with_*`, JSON) and
//!    [`ConfigError`];
//! 2. [`metrics`]: AUC, pAUC over an FPR range, two-way pAUC, ROC curves, DeLong and
//!    bootstrap intervals, all `O(n log n)`;
//! 3. solvers: [`admm`] (rank-based risks by proximal ADMM, with its baselines), [`pauc`]
//!    (partial AUC over an FPR range by AGD-SBCD, SoRR and the paper's baselines), [`pdprox`]
//!    (Pdprox-dual and Pdprox-primal for non-smooth problems);
//! 4. [`objective`]: the per-batch objectives of deep training as CPU state machines (scores,
//!    labels and sample ids in, `dL/ds` out; the state by sample id, its record entries and
//!    their provenance), which rankrisk's Burn objectives and the Python package's PyTorch
//!    losses wrap.
//!
//! ```
//! use rankrisk_core::metrics::{pauc, roc_auc};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let scores = [0.9, 0.8, 0.35, 0.6, 0.1, 0.2];
//! let labels = [1.0, 1.0, 1.0, -1.0, -1.0, -1.0];
//! assert_eq!(roc_auc(&scores, &labels)?, 8.0 / 9.0);
//! // The normalized pAUC over FPR [0, 1/3]: the top negative (0.6) beats one positive of three.
//! let p = pauc(&scores, &labels, 0.0, 1.0 / 3.0)?;
//! assert!((p - 2.0 / 3.0).abs() < 1e-12);
//! # Ok(())
//! # }
//! ```

#[macro_use]
mod config;

pub mod admm;
pub mod math;
pub mod metrics;
pub mod objective;
pub mod pauc;
pub mod pdprox;
pub mod sampler;

pub use config::{ConfigError, THREADS_ENV, finite_f64, threads_requested};
