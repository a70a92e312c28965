//! The `rankrisk` binary; see [`rankrisk::cli`].

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    rankrisk::cli::run(rankrisk::cli::Cli::parse())
}
