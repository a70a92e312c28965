//! The one error of the partial-AUC solvers (objective, duals, AGD-SBCD, SoRR, baselines).

use crate::metrics::MetricError;

/// Why a partial-AUC solver cannot start or go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PaucError {
    /// The FPR range is not `0 <= alpha < beta <= 1`, or there are no negatives.
    #[error(transparent)]
    Range(#[from] MetricError),
    /// A class is empty.
    #[error("{positives} positives and {negatives} negatives: the pAUC needs both classes")]
    OneClass {
        /// Positives.
        positives: usize,
        /// Negatives.
        negatives: usize,
    },
    /// Features and labels disagree in shape.
    #[error("{values} values for {rows} rows of {d} features")]
    Shape {
        /// Feature values given.
        values: usize,
        /// Rows (labels).
        rows: usize,
        /// Features per row.
        d: usize,
    },
    /// A step-size constant, scale, length or count is not positive.
    #[error("{name} must be positive, got {value}")]
    NotPositive {
        /// The setting.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// A setting outside its range, or a budget that allows no iteration (named as the
    /// setting).
    #[error("{name}: {message}")]
    Setting {
        /// The setting.
        name: &'static str,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// The blocks do not fit the classes.
    #[error(
        "blocks of {i} positives and {j} negatives from {positives} positives and {negatives} \
         negatives"
    )]
    Blocks {
        /// Positives per block.
        i: usize,
        /// Negatives per block.
        j: usize,
        /// Positives in the training set.
        positives: usize,
        /// Negatives in the training set.
        negatives: usize,
    },
    /// Scores for the dual start: wrong count or a non-finite value.
    #[error(
        "the dual start needs one finite score per training sample ({want}): got {got} \
         scores, {non_finite} of them not finite (the model diverged?)"
    )]
    Scores {
        /// Scores given.
        got: usize,
        /// Training samples.
        want: usize,
        /// Scores that are NaN or infinite.
        non_finite: usize,
    },
    /// A block's score is NaN or infinite: the model diverged.
    #[error("SBCD step {step}: score {value} is not finite (the model diverged)")]
    NonFinite {
        /// The sampler's step.
        step: u64,
        /// The score.
        value: f64,
    },
    /// A score handed to the objective is NaN or infinite.
    #[error("score {index} is not finite ({value})")]
    NonFiniteScore {
        /// Position (positives first, then negatives).
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A linear solver's iterate left the finite numbers.
    #[error("the iterate diverged: w[{index}] = {value} (lower the step size)")]
    IterateDiverged {
        /// The coordinate.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// The objective at a linear solver's iterate is not finite.
    #[error("the objective diverged to {value} (lower the step size)")]
    ObjectiveDiverged {
        /// The objective's value.
        value: f64,
    },
    /// A saved state holds duals for another number of positives.
    #[error("saved SBCD state holds {saved} duals, this training set has {positives} positives")]
    State {
        /// Duals in the saved state.
        saved: usize,
        /// Positives of this training set.
        positives: usize,
    },
    /// The SoRR ranks are not `m < n <= N`.
    #[error("SoRR range needs m < n <= {len}, got m = {m}, n = {n}")]
    SorrRanks {
        /// Lower rank m.
        m: usize,
        /// Upper rank n.
        n: usize,
        /// Number of losses N.
        len: usize,
    },
}
