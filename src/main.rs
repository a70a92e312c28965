//! The `rankrisk` binary: the subcommands of [`cli`] over the library's
//! `rankrisk::experiments`.

mod cli;

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    // SAFETY: the first line of `main`, before any other thread starts.
    unsafe { rankrisk::backend::keep_burn_default_on_cpu() };
    // glibc's malloc settings for the CPU kernels, while this is the only thread (glibc's arena
    // limit holds only before a second thread allocates).
    rankrisk_models::kernels::memory::reuse_freed_memory();
    match cli::Cli::try_parse() {
        Ok(cli) => cli::run(cli),
        // `--help` and `--version` print to standard output: a write that fails is an error
        // (clap's own exit would ignore it); a closed pipe ends quietly.
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            match e.print().and_then(|()| std::io::stdout().flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(io) => {
                    let message = cli::output::write_error(io);
                    // Nowhere to report a standard error that cannot be written either.
                    let _ = writeln!(std::io::stderr(), "error: {message}");
                    ExitCode::from(2)
                }
            }
        }
        Err(e) => e.exit(),
    }
}
