//! Data parallelism with one CPU state: a batch is split into contiguous shards, each shard's
//! forward pass runs on its own device (a replica of the model forked there), the shards'
//! scores are gathered on the CPU in batch order, the objective computes `dL/ds` once for the
//! whole batch with its one per-sample state, and each shard's backward pass receives its
//! slice of `dL/ds` through the surrogate. The replicas' parameter gradients are moved to the
//! first device and summed there, where the optimizer steps.
//!
//! Because the surrogate `sum(s * dL/ds)` is a sum over samples, the summed gradient equals
//! the one-device gradient of the whole batch up to floating-point summation order, for every
//! objective, pairwise ones included (their `dL/ds` couples samples across shards, and it is
//! computed once). Layers that couple the samples of a batch inside the model break this:
//! batch norm normalizes each shard by its own statistics (as PyTorch's data parallelism
//! without SyncBatchNorm does), and the first replica's running statistics are the ones kept.

use std::ops::Range;

use burn::module::Module;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::{Device, Tensor};
use rankrisk_datasets::batcher::HostBatch;
use rankrisk_models::Scorer;

use crate::bridge::{BridgeError, scores_to_cpu, surrogate};
use crate::train::objective::BatchGradient;

/// [`Shards::new`] was given no device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("data parallelism needs at least one device")]
pub struct NoDevice;

/// Why a data-parallel step failed: `E` is the objective's error.
#[derive(Debug, thiserror::Error)]
pub enum ParallelError<E> {
    /// Reading a shard's scores back or attaching its gradient failed.
    #[error(transparent)]
    Bridge(#[from] BridgeError),
    /// The objective refused the gathered batch.
    #[error("{0}")]
    Objective(E),
}

/// The devices of a data-parallel run; the first holds the model the optimizer updates.
#[derive(Debug, Clone)]
pub struct Shards {
    devices: Vec<Device>,
}

/// What a data-parallel step produced.
pub struct ShardedStep {
    /// The objective's gradient and loss for the whole batch.
    pub gradient: BatchGradient,
    /// The summed parameter gradients, on the first device.
    pub grads: GradientsParams,
}

impl Shards {
    /// Shards over `devices` (autodiff devices; the same device may appear several times).
    ///
    /// # Errors
    /// [`NoDevice`] for an empty list.
    pub fn new(devices: Vec<Device>) -> Result<Self, NoDevice> {
        if devices.is_empty() {
            return Err(NoDevice);
        }
        Ok(Shards { devices })
    }

    /// One device: [`Shards::step`] is then the plain training step.
    pub fn one(device: Device) -> Self {
        Shards {
            devices: vec![device],
        }
    }

    /// Number of devices.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Whether there is no device (never: [`Shards::new`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The first device, where the model lives and the optimizer steps.
    pub fn main(&self) -> &Device {
        &self.devices[0]
    }

    /// `n` rows split into one contiguous range per device, sizes differing by at most one
    /// (devices beyond `n` get none).
    pub fn ranges(&self, n: usize) -> Vec<Range<usize>> {
        let s = self.devices.len().min(n.max(1));
        let (base, extra) = (n / s, n % s);
        let mut start = 0;
        (0..s)
            .map(|k| {
                let len = base + usize::from(k < extra);
                let r = start..start + len;
                start += len;
                r
            })
            .collect()
    }

    /// The forward passes of a data-parallel step: `model` (on the first device) is forked
    /// to every device, `forward(replica, rows, device)` scores the rows `rows` of a batch of
    /// `n` on `device` (shape `[rows, tasks]`, training mode), and the shards' scores are read
    /// back and gathered in batch order (row-major `[n, tasks]`). With one device the replica
    /// is `model` itself.
    ///
    /// # Errors
    /// [`ParallelError::Objective`] for the caller's error, [`ParallelError::Bridge`] for a
    /// failed or non-finite read-back (its index counted in the whole batch).
    pub fn forward<M, E, F>(
        &self,
        model: &M,
        n: usize,
        mut forward: F,
    ) -> Result<(ShardedForward<M>, Vec<f64>), ParallelError<E>>
    where
        M: Module,
        F: FnMut(&M, Range<usize>, &Device) -> Result<Tensor<2>, E>,
    {
        let ranges = self.ranges(n);
        let mut replicas = Vec::with_capacity(ranges.len());
        let mut scores = Vec::with_capacity(ranges.len());
        let mut gathered = Vec::new();
        for (k, range) in ranges.iter().enumerate() {
            let device = &self.devices[k];
            let replica = if k == 0 {
                model.clone()
            } else {
                model.clone().fork(device)
            };
            let s = forward(&replica, range.clone(), device).map_err(ParallelError::Objective)?;
            let [rows, tasks] = s.dims();
            let s = s.reshape([rows * tasks]);
            let start = gathered.len();
            gathered.extend(scores_to_cpu(s.clone()).map_err(|e| offset(e, start))?);
            replicas.push(replica);
            scores.push(s);
        }
        let forward = ShardedForward {
            replicas,
            scores,
            main: self.main().clone(),
        };
        Ok((forward, gathered))
    }

    /// One data-parallel step of `model` (on the first device) on `host`: the shards' forward
    /// passes ([`Shards::forward`]), one call of `objective` with the gathered scores
    /// (row-major `[batch, tasks]`, in batch order), the shards' backward passes
    /// ([`ShardedForward::backward`]). `extra(model)` may add a device term to the first
    /// shard's loss (AUC-M's regularization). With one device this is the plain training step.
    ///
    /// # Errors
    /// [`ParallelError`] for a failed read-back or the objective's error.
    pub fn step<M, E, F, X>(
        &self,
        model: &M,
        host: &HostBatch,
        objective: F,
        extra: X,
    ) -> Result<ShardedStep, ParallelError<E>>
    where
        M: Scorer,
        F: FnOnce(&[f64]) -> Result<BatchGradient, E>,
        X: FnOnce(&M) -> Option<Tensor<1>>,
    {
        let (forward, gathered) = self.forward(model, host.ids.len(), |m: &M, rows, device| {
            Ok(m.scores(host.rows(rows).to_device(device).inputs))
        })?;
        let gradient = objective(&gathered).map_err(ParallelError::Objective)?;
        let grads = forward.backward(model, &gradient.grad, extra)?;
        Ok(ShardedStep { gradient, grads })
    }
}

/// The shards' replicas and device scores between [`Shards::forward`] and
/// [`ShardedForward::backward`].
pub struct ShardedForward<M> {
    replicas: Vec<M>,
    scores: Vec<Tensor<1>>,
    main: Device,
}

impl<M: Module> ShardedForward<M> {
    /// The backward passes: each shard's surrogate `sum(s * dL/ds)` over its slice of `grad`
    /// (the gathered batch's `dL/ds`, row-major like the gathered scores), plus `extra(first
    /// replica)` on the first shard; the replicas' parameter gradients moved to the first
    /// device and summed there, as the gradients of `model`.
    ///
    /// # Errors
    /// [`ParallelError::Bridge`] for a gradient of the wrong length or a non-finite entry.
    pub fn backward<E, X>(
        self,
        model: &M,
        grad: &[f32],
        extra: X,
    ) -> Result<GradientsParams, ParallelError<E>>
    where
        X: FnOnce(&M) -> Option<Tensor<1>>,
    {
        let total: usize = self.scores.iter().map(|s| s.dims()[0]).sum();
        if total != grad.len() {
            return Err(BridgeError::LengthMismatch {
                scores: total,
                grad: grad.len(),
            }
            .into());
        }
        let mut extra = Some(extra);
        let mut sum = GradientsAccumulator::<M>::new();
        let mut start = 0;
        for (k, (scores, replica)) in self.scores.into_iter().zip(&self.replicas).enumerate() {
            let len = scores.dims()[0];
            let mut loss =
                surrogate(scores, &grad[start..start + len]).map_err(|e| offset(e, start))?;
            start += len;
            if k == 0
                && let Some(term) = extra.take().and_then(|f| f(replica))
            {
                loss = loss + term;
            }
            let grads = GradientsParams::from_grads(loss.backward(), replica);
            sum.accumulate(model, grads.to_device(&self.main, model));
        }
        Ok(sum.grads())
    }
}

/// `e` with its index counted from `by` (a shard's position in the batch).
fn offset(e: BridgeError, by: usize) -> BridgeError {
    match e {
        BridgeError::NonFiniteScore { index, value } => BridgeError::NonFiniteScore {
            index: index + by,
            value,
        },
        BridgeError::NonFiniteGradient { index, value } => BridgeError::NonFiniteGradient {
            index: index + by,
            value,
        },
        other => other,
    }
}
