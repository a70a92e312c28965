//! A forward/backward smoke run: train the linear scorer with the mean logistic loss on a
//! built-in tabular set, the loss gradient computed on the CPU and applied through the
//! [surrogate bridge](crate::device::bridge). It exercises the whole device path of a training step
//! (forward, one read-back, surrogate, backward, optimizer) on the chosen backend.

use std::time::Instant;

use burn::optim::{AdamConfig, GradientsParams};
use rankrisk_datasets::load_builtin;
use rankrisk_models::LinearScorerConfig;

use crate::device::backend::{BackendError, BackendKind, autodiff_device};
use crate::device::bridge::{BridgeError, scores_to_cpu, surrogate};
use crate::math::loss::Loss;
use crate::metrics::accuracy;
use crate::train::objective::{ErmConfig, Objective, TrainError};

/// Failure of the smoke run.
#[derive(Debug, thiserror::Error)]
pub enum SmokeError {
    /// The backend could not be opened.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The data set could not be loaded.
    #[error(transparent)]
    Data(#[from] rankrisk_datasets::DataError),
    /// The bridge refused a score or gradient.
    #[error(transparent)]
    Bridge(#[from] BridgeError),
    /// The objective refused the scores.
    #[error(transparent)]
    Objective(#[from] TrainError),
}

/// What the smoke run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SmokeReport {
    /// Backend used.
    pub backend: BackendKind,
    /// Data set used.
    pub dataset: String,
    /// Mean logistic loss before the first step.
    pub initial_loss: f64,
    /// Mean logistic loss after the last step.
    pub final_loss: f64,
    /// Training accuracy (sign of the score) after the last step.
    pub accuracy: f64,
    /// Number of optimizer steps.
    pub steps: usize,
    /// Mean wall time per step in milliseconds (forward, read-back, backward, update).
    pub ms_per_step: f64,
}

/// Mean logistic loss `1/n sum log(1 + exp(-y s))` and its gradient with respect to `s`:
/// [`Erm`](crate::train::Erm) with the logistic loss.
fn logistic(scores: &[f64], y: &[f64]) -> Result<(f64, Vec<f32>), SmokeError> {
    let ids: Vec<usize> = (0..scores.len()).collect();
    let g = ErmConfig::new()
        .with_loss(Loss::Logistic)
        .init(y)?
        .batch_gradient(scores, y, &ids)?;
    Ok((g.loss, g.grad))
}

/// Train the linear scorer for `steps` full-batch Adam steps (learning rate `lr`) on the
/// standardized built-in set `dataset`.
///
/// # Errors
/// [`SmokeError`] when the backend, the data or a score read-back fails.
pub fn run(
    kind: BackendKind,
    dataset: &str,
    steps: usize,
    lr: f64,
) -> Result<SmokeReport, SmokeError> {
    let device = autodiff_device(kind)?;
    let mut data = load_builtin(dataset)?;
    data.require_both_classes()?;
    data.standardize();
    let (x, _, _) = data.to_tensors(&device);
    device.seed(0);
    let mut model = LinearScorerConfig::new(data.d).init(&device);
    let mut optim = AdamConfig::new().init();
    let mut initial_loss = f64::NAN;
    let start = Instant::now();
    for step in 0..steps {
        let scores = model.forward(x.clone());
        let cpu = scores_to_cpu(scores.clone())?;
        let (loss, grad) = logistic(&cpu, &data.y)?;
        if step == 0 {
            initial_loss = loss;
        }
        let grads = GradientsParams::from_grads(surrogate(scores, &grad)?.backward(), &model);
        model = optim.step(lr, model, grads);
    }
    let ms_per_step = start.elapsed().as_secs_f64() * 1e3 / steps.max(1) as f64;
    let cpu = scores_to_cpu(model.forward(x))?;
    let (final_loss, _) = logistic(&cpu, &data.y)?;
    Ok(SmokeReport {
        backend: kind,
        dataset: data.name.clone(),
        initial_loss: if steps == 0 { final_loss } else { initial_loss },
        final_loss,
        accuracy: accuracy(&cpu, &data.y),
        steps,
        ms_per_step,
    })
}
