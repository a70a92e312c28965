//! The `rankrisk` binary; see [`rankrisk::cli`].

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // SAFETY: the first line of `main`, before any other thread starts.
    unsafe { rankrisk::backend::keep_burn_default_on_cpu() };
    rankrisk::cli::run(rankrisk::cli::Cli::parse())
}
