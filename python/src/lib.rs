//! The extension module `rankrisk._rankrisk` of the Python package `rankrisk`: the core crate
//! (`rankrisk-core`, no Burn) on numpy arrays. Each function takes 1-D numpy arrays (float64
//! scores read in place when contiguous), releases the GIL while Rust computes, and raises
//! `ValueError` / `TypeError` with the command line's words. The Python modules
//! (`rankrisk.metrics`, ...) are the public face; this module is theirs.

use pyo3::prelude::*;

mod arrays;
mod linear;
mod metrics;
mod objectives;
mod sampler;

/// The extension module.
#[pymodule]
fn _rankrisk(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    metrics::register(m)?;
    linear::register(m)?;
    objectives::register(m)?;
    sampler::register(m)?;
    Ok(())
}
