//! The proximal ADMM of papers/rank-based-loss-admm.txt (Algorithm 1) for linear scores, its
//! smoothed variant sADMM (section 4), the penalty schedules (Table 6) and the baselines the
//! paper compares it with (SGD, LSVRG, DCA; section 5); one error, [`AdmmError`].

pub mod baselines;
pub mod certificate;
pub mod error;
pub mod linear;
pub mod schedule;
pub mod wstep;

pub use error::AdmmError;
pub use linear::{AdmmConfig, AdmmResult, IterRecord, LinearData};
pub use schedule::{GammaSchedule, RhoSchedule};
