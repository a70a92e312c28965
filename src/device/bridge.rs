//! The surrogate bridge between CPU objectives and device gradients.
//!
//! Every objective in rankrisk (the ADMM z-step, the SBCD dual updates, the exact losses used as
//! references) produces a per-sample gradient `g = dL/ds` of its loss with respect to the scores
//! `s` on the CPU. The parameter gradient follows from the chain rule,
//! `dL/dtheta = sum_i g_i * ds_i/dtheta`, which is exactly the gradient of the scalar
//! `surrogate(s, g) = sum_i s_i * g_i` when `g` is held constant. So one backward pass through
//! the surrogate gives the model's parameter gradients on whatever device the model runs on.
//!
//! A step crosses between host and device twice: one read of the scores (with the batch's
//! targets and ids where those are on the device, in the same transfer: [`batch_to_cpu`]) and
//! one upload of `g` ([`surrogate`]); [`transfers`] counts both in this process.

use std::sync::atomic::{AtomicU64, Ordering};

use burn::tensor::{Device, Int, Tensor, TensorData, Transaction};

static TO_HOST: AtomicU64 = AtomicU64::new(0);
static TO_DEVICE: AtomicU64 = AtomicU64::new(0);

/// How many synchronous transfers the bridge has made in this process, each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transfers {
    /// Reads of scores (and batches) back to the host: [`scores_to_cpu`], [`batch_to_cpu`].
    pub to_host: u64,
    /// Uploads of a CPU gradient: [`surrogate`].
    pub to_device: u64,
}

/// The bridge's transfers so far in this process (all threads): a step of the run driver or
/// of [`BurnObjective::forward`](crate::train::BurnObjective::forward) adds one each way. Take the
/// difference of two calls around the code to check.
pub fn transfers() -> Transfers {
    Transfers {
        to_host: TO_HOST.load(Ordering::Relaxed),
        to_device: TO_DEVICE.load(Ordering::Relaxed),
    }
}

/// Why the bridge refused its input (the core crate's, shared with the other faces).
pub use rankrisk_core::objective::BridgeError;

/// `sum_i s_i * g_i` with `g` a constant: its backward gives the chain-rule parameter gradient.
///
/// `scores` is the model output of shape `[n]` on any device (autodiff or not); `grad` is the
/// CPU gradient `dL/ds` of length `n`. The gradient tensor is created from CPU data, so it is
/// untracked and acts as a constant in the autodiff graph.
///
/// # Errors
/// [`BridgeError::LengthMismatch`] or [`BridgeError::NonFiniteGradient`].
pub fn surrogate(scores: Tensor<1>, grad: &[f32]) -> Result<Tensor<1>, BridgeError> {
    let n = scores.dims()[0];
    if n != grad.len() {
        return Err(BridgeError::LengthMismatch {
            scores: n,
            grad: grad.len(),
        });
    }
    if let Some((index, value)) = grad.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(BridgeError::NonFiniteGradient {
            index,
            value: f64::from(*value),
        });
    }
    let device = scores.device();
    let g = gradient_tensor(grad, &device);
    Ok((scores * g).sum())
}

fn gradient_tensor(grad: &[f32], device: &Device) -> Tensor<1> {
    TO_DEVICE.fetch_add(1, Ordering::Relaxed);
    Tensor::<1>::from_data(TensorData::new(grad.to_vec(), [grad.len()]), device)
}

/// Read a score vector back to the CPU in one transfer, as `f64`, refusing NaN or infinity.
///
/// # Errors
/// [`BridgeError::Readback`] when the device fails, [`BridgeError::NonFiniteScore`] for a NaN
/// or infinite score.
pub fn scores_to_cpu(scores: Tensor<1>) -> Result<Vec<f64>, BridgeError> {
    TO_HOST.fetch_add(1, Ordering::Relaxed);
    let data = scores.try_into_data().map_err(readback)?;
    finite_scores(data)
}

/// A batch read back to the CPU by [`batch_to_cpu`].
#[derive(Debug, Clone, PartialEq)]
pub struct CpuBatch {
    /// The scores, as `f64`, all finite.
    pub scores: Vec<f64>,
    /// The targets, as read.
    pub targets: Vec<i64>,
    /// The ids, as read.
    pub ids: Vec<i64>,
}

/// Read a batch's scores, targets and ids back to the CPU in one transfer (one Burn
/// [`Transaction`]): the scores as `f64` (NaN and infinity refused, as [`scores_to_cpu`]),
/// the integer tensors as `i64`.
///
/// # Shapes
/// - scores, targets, ids: `[batch]`, on one device
///
/// # Errors
/// [`BridgeError::OtherDevice`] for targets or ids on another device than the scores,
/// [`BridgeError::Readback`] when the device fails, [`BridgeError::NonFiniteScore`].
pub fn batch_to_cpu(
    scores: Tensor<1>,
    targets: Tensor<1, Int>,
    ids: Tensor<1, Int>,
) -> Result<CpuBatch, BridgeError> {
    // One transaction reads the three: tensors of two backends in it would panic in Burn's
    // dispatch ("wrong backend"), so they are compared first (the scores' autodiff device
    // and the targets' plain one are the same device).
    let home = scores.device().inner();
    for (what, device) in [("targets", targets.device()), ("ids", ids.device())] {
        let device = device.inner();
        if device != home {
            return Err(BridgeError::OtherDevice {
                what,
                device: format!("{device:?}"),
                scores: format!("{home:?}"),
            });
        }
    }
    TO_HOST.fetch_add(1, Ordering::Relaxed);
    let [s, t, i]: [TensorData; 3] = Transaction::default()
        .register(scores)
        .register(targets)
        .register(ids)
        .try_execute()
        .map_err(readback)?
        .try_into()
        .map_err(|v: Vec<TensorData>| readback(format!("{} tensors read for 3", v.len())))?;
    let ints = |d: TensorData| {
        d.convert::<i64>()
            .try_into_vec::<i64>()
            .map_err(|e| readback(format!("{e:?}")))
    };
    Ok(CpuBatch {
        scores: finite_scores(s)?,
        targets: ints(t)?,
        ids: ints(i)?,
    })
}

/// [`BridgeError::Readback`] with the device's message on one line.
fn readback(err: impl std::fmt::Display) -> BridgeError {
    BridgeError::Readback(err.to_string().replace('\n', " "))
}

/// The scores of `data` as `f64`, refusing NaN or infinity.
fn finite_scores(data: TensorData) -> Result<Vec<f64>, BridgeError> {
    let values: Vec<f32> = data
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(readback)?;
    if let Some((index, value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(BridgeError::NonFiniteScore {
            index,
            value: f64::from(*value),
        });
    }
    Ok(values.into_iter().map(f64::from).collect())
}
