//! Partial AUC over an FPR range `[alpha, beta]` (papers/partial-auc-fpr-range-agd-sbcd.txt):
//! the objective (eq. 3-7), AGD-SBCD (Algorithms 1-2) for any model and for the linear scorer,
//! SoRR (Algorithm 3) and the baselines the paper compares with; one error, [`PaucError`].

pub mod agd;
pub mod baselines;
pub mod error;
pub mod linear;
pub mod objective;
pub mod sbcd;
pub mod sorr;

pub use agd::{AgdSbcd, AgdSbcdConfig, SbcdModel};
pub use error::PaucError;
pub use linear::{Budget, LinearModel, agd_sbcd_linear};
pub use objective::{PairLoss, objective_and_score_grad, sorr};
pub use sbcd::{DualInit, DualState, PairData, PairSampler, block_step, exact_duals};
