//! The one error of the Pdprox solvers.

use crate::math::pava::PavaError;
use crate::math::spec::SpecError;

/// Why Pdprox refused its input or stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PdproxError {
    /// The loss, the weights or the regularizer specification.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The z-step solver behind the `Q_sigma` projection refused its input.
    #[error(transparent)]
    Pava(#[from] PavaError),
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
    /// A feature or a target is NaN or infinite.
    #[error("data: {what} of row {row} is not finite")]
    NonFinite {
        /// "a feature" or "the label".
        what: &'static str,
        /// Row.
        row: usize,
    },
    /// A classification loss got a label other than -1 and +1.
    #[error("data: label of row {row} is {value} (the {loss} loss needs -1 or +1)")]
    BadLabel {
        /// Row.
        row: usize,
        /// The label.
        value: f64,
        /// The loss.
        loss: String,
    },
    /// A setting that Pdprox cannot solve, with the reason.
    #[error("pdprox: {0}")]
    Unsupported(String),
    /// A setting out of its range.
    #[error("pdprox: {name} must be {expected} (got {value})")]
    Setting {
        /// The setting.
        name: &'static str,
        /// What it must be.
        expected: &'static str,
        /// The value given.
        value: f64,
    },
    /// The iterates stopped being finite.
    #[error("pdprox: the iterates are not finite at iteration {iteration}")]
    Diverged {
        /// Iteration (1-based).
        iteration: usize,
    },
}
