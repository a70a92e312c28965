//! Runs as the command line and the examples describe them, above the tasks: each kind of
//! run's settings as one type (clap's flags, which are also a config file's keys: [`args`]),
//! config files with their grids ([`plan`], [`grid`]) and a folder of its own for every run
//! ([`folders`]), one run's launch with its checks and
//! saved config ([`launch`]), the linear fits of `rankrisk fit-linear` and `fit-pauc` with
//! their reports ([`fit_linear`], [`fit_pauc`], [`fit_pdprox`], [`linear_data`]), and the
//! smoke run ([`smoke`]). The binary `rankrisk` adds the subcommands and their printing.
//!
//! Errors are [`ExperimentError`]: the typed errors of the layers below as they are, and the
//! refusals of this layer by kind (a setting, a config file, an output path, a linear fit's
//! data, a diverged solver), each with a message naming the file, run, key or value.

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
    /// A command-line setting refused (a flag out of its range, a flag of another solver, an
    /// unknown solver), naming the flag and the value.
    #[error("{0}")]
    Setting(String),
    /// A config file refused (its syntax, a run table, a key, a grid), naming the file, the
    /// run and the key.
    #[error("{0}")]
    Config(String),
    /// An output path refused (a folder shared by two runs, a report that would replace its
    /// input, a folder in use by another run's settings), naming the path.
    #[error("{0}")]
    Output(String),
    /// The data of a linear fit refused (files that disagree, no data named), naming the
    /// file, row or value.
    #[error("{0}")]
    Data(String),
    /// A data set or file that could not be read or is not fit to train on.
    #[error(transparent)]
    Read(#[from] rankrisk_datasets::DataError),
    /// A typed refusal of a solver or metric of the layers below (ADMM, AGD-SBCD and the
    /// pAUC baselines, Pdprox, the metrics, the specs), kept as its source.
    #[error(transparent)]
    Solve(Box<dyn std::error::Error + Send + Sync>),
    /// A solver whose objective grew without bound, with the flags that would help.
    #[error("{0}")]
    Diverged(String),
}

impl ExperimentError {
    /// [`ExperimentError::Solve`] of `e`.
    pub fn solve(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        ExperimentError::Solve(Box::new(e))
    }
}

impl From<ExperimentError> for String {
    /// The message (for the binary, where errors become one line on standard error).
    fn from(e: ExperimentError) -> Self {
        e.to_string()
    }
}
