//! The proximal ADMM of papers/rank-based-loss-admm.txt (Algorithm 1) and its smoothed
//! variant sADMM (section 4).

pub mod linear;
pub mod schedule;

pub use linear::{AdmmConfig, AdmmError, AdmmResult, IterRecord, LinearData};
pub use schedule::{GammaSchedule, RhoSchedule};
