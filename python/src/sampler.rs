//! `rankrisk._rankrisk.DualSampler`: the core's seeded, resumable class-balancing sampler (the
//! one the run driver draws its batches from), for `rankrisk.torch.DualSampler`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use rankrisk_core::sampler::DualSampler;

use crate::arrays::labels;

/// Batches with a fixed share of positives: every negative once an epoch in a seeded order,
/// the positives cycling through seeded permutations of their own.
#[pyclass(module = "rankrisk._rankrisk", name = "DualSampler")]
pub struct PyDualSampler {
    inner: DualSampler,
}

#[pymethods]
impl PyDualSampler {
    /// A sampler over the samples of `train_labels` (positive above 0), batches of
    /// `batch_size` with a share `pos_ratio` of positives, seeded by `seed`.
    ///
    /// Raises `ValueError` for one class, a batch below 2 or a share outside (0, 1).
    #[new]
    fn new(
        train_labels: &Bound<'_, PyAny>,
        batch_size: usize,
        pos_ratio: f64,
        seed: u64,
    ) -> PyResult<Self> {
        let positive: Vec<bool> = labels(train_labels, "labels")?
            .iter()
            .map(|&y| y > 0.0)
            .collect();
        DualSampler::new(&positive, batch_size, pos_ratio, seed)
            .map(|inner| PyDualSampler { inner })
            .map_err(|e| PyValueError::new_err(format!("DualSampler: {e}")))
    }

    /// Batches per epoch (one pass over the negatives; the last may be short).
    fn batches_per_epoch(&self) -> usize {
        self.inner.batches_per_epoch()
    }

    /// Samples an epoch draws (the last batch may be short).
    fn samples_per_epoch(&self) -> usize {
        self.inner.samples_per_epoch()
    }

    /// The sample ids of the next batch (its positives first).
    fn next_batch(&mut self) -> Vec<usize> {
        self.inner.next_batch()
    }

    /// Batches drawn so far: the position a resumed run continues from.
    #[getter]
    fn step(&self) -> u64 {
        self.inner.step
    }

    /// Move to the position after `step` batches.
    #[setter]
    fn set_step(&mut self, step: u64) {
        self.inner.step = step;
    }
}

/// Add the class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDualSampler>()?;
    Ok(())
}
