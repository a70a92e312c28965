//! Partial AUC over an FPR range `[alpha, beta]` (papers/partial-auc-fpr-range-agd-sbcd.txt):
//! the objective (eq. 3-7), AGD-SBCD (Algorithms 1-2) and the baselines it is compared with.

pub mod agd;
pub mod baselines;
pub mod objective;
pub mod sbcd;
pub mod sorr;

pub use agd::{AgdSbcd, AgdSbcdConfig, Budget, SbcdModel, agd_sbcd_linear};
pub use objective::{PairLoss, RankRange, objective_and_score_grad, sorr};
pub use sbcd::{DualInit, DualState, PairData, PairSampler, block_step, exact_duals};
