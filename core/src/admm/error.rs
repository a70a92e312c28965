//! The one error of the rank-based solvers (ADMM, sADMM and their baselines).

use crate::math::pava::PavaError;
use crate::math::spec::SpecError;

/// Why ADMM or a rank-based baseline refused its input or stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdmmError {
    /// The loss, the weights, the regularizer or the rho schedule.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// No rows or no features.
    #[error("data: empty ({rows} rows, {d} features)")]
    Empty {
        /// Rows.
        rows: usize,
        /// Features.
        d: usize,
    },
    /// Features and labels disagree in shape.
    #[error("data: {values} values for {rows} rows of {d} features")]
    Shape {
        /// Feature values given.
        values: usize,
        /// Rows.
        rows: usize,
        /// Features per row.
        d: usize,
    },
    /// A feature is NaN or infinite.
    #[error("data: feature {feature} of row {row} is not finite")]
    NonFiniteFeature {
        /// Row.
        row: usize,
        /// Column.
        feature: usize,
    },
    /// A label is not -1 or +1.
    #[error("data: label of row {row} is {value} (expected -1 or +1)")]
    BadLabel {
        /// Row.
        row: usize,
        /// Its value.
        value: f64,
    },
    /// The starting point has another dimension.
    #[error("data: w0 has {got} entries for {d} features")]
    StartLength {
        /// Entries of `w0`.
        got: usize,
        /// Features.
        d: usize,
    },
    /// A solver setting out of its range.
    #[error("settings: {name} needs {requirement}, got {got}")]
    Setting {
        /// The setting (`r`, `tol`, `sADMM gamma`).
        name: &'static str,
        /// The allowed range.
        requirement: String,
        /// The value given.
        got: String,
    },
    /// The z-step (PAVA) refused its input.
    #[error("z-step: {0}")]
    ZStep(#[from] PavaError),
    /// The rho schedule left the positive numbers.
    #[error("settings: the rho schedule produced {rho} at iteration {iteration}")]
    Schedule {
        /// The value produced.
        rho: f64,
        /// The iteration (1-based).
        iteration: usize,
    },
    /// A stochastic baseline's objective left the finite numbers.
    #[error(
        "diverged at epoch {epoch}: the objective is not finite (learning rate {lr:e} too large)"
    )]
    Diverged {
        /// The epoch.
        epoch: usize,
        /// The learning rate.
        lr: f64,
    },
    /// SGD's weights for its batch size (top-k and AoRR need `k` not above the batch).
    #[error("SGD batch weights: {0}")]
    BatchWeights(SpecError),
    /// DCA was asked for weights other than AoRR's.
    #[error("DCA applies to AoRR in Hu et al.'s form (aorr:m=..,k=..)")]
    DcaNeedsAorr,
}
