//! Pdprox, the primal-dual prox method of papers/pdprox-primal-dual-nonsmooth.txt, for
//! `min_w max_{alpha in Q} L(w, alpha) + R(w)` with `L` bilinear (3): non-smooth losses with
//! non-smooth regularizers at the rate `O(1/T)` (Theorems 11 and 14).
//!
//! - [`dual_loss`]: the losses of section 4.1 with a bilinear dual;
//! - [`design`]: the map `s = X w`: dense rows, or the observed entries of a matrix (5.3);
//! - [`linear`]: those losses on linear scores, Lemma 3's constant;
//! - [`domain`]: the dual domains and their projections (box, pairs, Lemma 4, and `n Q_sigma`
//!   for every convex spectral risk by the rank-based PAVA);
//! - [`penalty`]: the regularizers with their composite gradient mappings;
//! - [`solver`]: Algorithms 1 and 2 with the duality gap; one error, [`PdproxError`];
//! - [`baselines`]: gd, fobos, rda, agd, Nesterov's smoothing and Pegasos, tuned as in section 5.

pub mod baselines;
pub mod design;
pub mod domain;
pub mod dual_loss;
pub mod error;
pub mod linear;
pub mod penalty;
pub mod solver;

pub use design::Design;
pub use domain::DualDomain;
pub use error::PdproxError;
pub use linear::{DualLoss, LinearProblem, StepBound};
pub use penalty::Penalty;
pub use solver::{Algorithm, GapRecord, PdproxConfig, PdproxResult, solve};
