//! Standard output of the command line: every result line goes through the crate's `outln!`
//! macro, which returns an error instead of panicking when the output cannot be written (a full
//! disk, `> /dev/full`), and ends the process quietly when the reader of a pipe has gone
//! (`| head`), as Unix tools do. [`finish`] flushes what is left before the exit status is
//! decided.

use std::fmt;
use std::io::{ErrorKind, Write};

/// `println!` for the command line's results: `outln!("...", args)?` in a function that
/// returns `Result<_, String>`; the error names standard output and the operating system's
/// reason.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::output::write_line(format_args!($($arg)*))
    };
}
pub(crate) use outln;

/// Write one line (`args` and a newline) to standard output.
///
/// # Errors
/// A message naming standard output for a failed write. A closed pipe ends the process
/// (status 0, no message).
pub fn write_line(args: fmt::Arguments<'_>) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(write_error)
}

/// Flush standard output (the last line of a `print!` without a newline).
///
/// # Errors
/// As [`write_line`].
pub fn finish() -> Result<(), String> {
    std::io::stdout().flush().map_err(write_error)
}

/// The message of a failed write to standard output; a reader that went away (a closed pipe)
/// ends the process quietly instead, with status 0.
pub fn write_error(e: std::io::Error) -> String {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    format!("cannot write the results to standard output: {e}")
}
