//! Runs as the command line and the examples describe them, above the tasks: each kind of
//! run's settings as one type (clap's flags, which are also a config file's keys: [`args`]),
//! config files with their grids ([`plan`], [`grid`]) and a folder of its own for every run
//! ([`folders`]), one run's launch with its checks and
//! saved config ([`launch`]), the linear fits of `rankrisk fit-linear` and `fit-pauc` with
//! their reports ([`fit_linear`], [`fit_pauc`], [`fit_pdprox`], [`linear_data`]), and the
//! smoke run ([`smoke`]). The binary `rankrisk` adds the subcommands and their printing.
//!
//! Errors are [`ExperimentError`]: the typed errors of the layers below as they are, and the
//! refusals of this layer (a config's syntax, a key, a file, a solver's settings) as a message
//! naming the file, run, key or value.

pub mod args;
pub mod fit_linear;
pub mod fit_pauc;
pub mod fit_pdprox;
pub mod folders;
pub mod grid;
pub mod launch;
pub mod linear_data;
pub mod paths;
pub mod plan;
pub mod smoke;

use crate::tasks::TaskError;
use crate::train::run::RunError;

/// Why a run of this layer could not be planned or completed.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// A task's refusal: a setting, missing or malformed data, a backend, a failed run.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// The run driver's refusal.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A refusal of this layer, naming the file, run, key or value.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for ExperimentError {
    fn from(message: String) -> Self {
        ExperimentError::Invalid(message)
    }
}

impl From<&str> for ExperimentError {
    fn from(message: &str) -> Self {
        ExperimentError::Invalid(message.to_string())
    }
}

impl From<ExperimentError> for String {
    /// The message (for the binary, where errors become one line on standard error).
    fn from(e: ExperimentError) -> Self {
        e.to_string()
    }
}
