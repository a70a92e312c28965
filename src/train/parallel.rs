//! Data parallelism with one CPU state: a batch is split into shards, each shard's forward
//! pass runs on its own device (a replica of the model forked there), the shards' scores are
//! gathered on the CPU in batch order, the objective computes `dL/ds` once for the whole batch
//! with its one per-sample state, and each shard's backward pass receives its part of `dL/ds`
//! through the surrogate. The replicas' parameter gradients are moved to the first device and
//! summed there, where the optimizer steps.
//!
//! Shards are strided, not contiguous: with `k` devices, shard `j` holds rows `j, j + k, j + 2k,
//! ...` of the batch. Our batches are assembled by class (the positives, then the negatives), so
//! contiguous shards would hold one class each, and a batch-norm layer would then normalize
//! each class by its own statistics: the network learns to rely on that and fails at evaluation
//! (measured: test AUC 0.37 against 0.95 on one device).
//!
//! Because the surrogate `sum(s * dL/ds)` is a sum over samples, the summed gradient equals
//! the one-device gradient of the whole batch up to floating-point summation order, for every
//! objective, pairwise ones included (their `dL/ds` couples samples across shards, and it is
//! computed once). Layers that couple the samples of a batch inside the model break this:
//! batch norm normalizes each shard by its own statistics (as PyTorch's data parallelism
//! without SyncBatchNorm does), and, since Burn's replicas share the model's running
//! statistics, every shard's forward pass updates them in turn (with `k` devices a step moves
//! them `k` times, each toward one shard's statistics; PyTorch keeps the first replica's).

use burn::module::Module;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::{Device, Tensor};
use rankrisk_datasets::batcher::HostBatch;
use rankrisk_models::Scorer;

use crate::device::bridge::{BridgeError, scores_to_cpu, surrogate};
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

    /// `n` rows split into one strided shard per device: shard `j` holds rows `j, j + k, ...`
    /// for `k` shards (devices beyond `n` get none).
    pub fn rows(&self, n: usize) -> Vec<Vec<usize>> {
        let k = self.devices.len().min(n.max(1));
        (0..k).map(|j| (j..n).step_by(k).collect()).collect()
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
        F: FnMut(&M, &[usize], &Device) -> Result<Tensor<2>, E>,
    {
        let rows = self.rows(n);
        let mut replicas = Vec::with_capacity(rows.len());
        let mut scores = Vec::with_capacity(rows.len());
        let mut gathered = Vec::new();
        let mut tasks = 1;
        for (k, shard) in rows.iter().enumerate() {
            let device = &self.devices[k];
            let replica = if k == 0 {
                model.clone()
            } else {
                model.clone().fork(device)
            };
            let s = forward(&replica, shard, device).map_err(ParallelError::Objective)?;
            let [len, t] = s.dims();
            tasks = t;
            let s = s.reshape([len * t]);
            let cpu = scores_to_cpu(s.clone()).map_err(|e| offset(e, shard, t))?;
            if k == 0 {
                gathered = vec![0.0; n * t];
            }
            for (i, &row) in shard.iter().enumerate() {
                gathered[row * t..(row + 1) * t].copy_from_slice(&cpu[i * t..(i + 1) * t]);
            }
            replicas.push(replica);
            scores.push(s);
        }
        let forward = ShardedForward {
            replicas,
            scores,
            rows,
            tasks,
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
            Ok(m.scores(host.select(rows).to_device(device).inputs))
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
    rows: Vec<Vec<usize>>,
    tasks: usize,
    main: Device,
}

impl<M: Module> ShardedForward<M> {
    /// The backward passes: each shard's surrogate `sum(s * dL/ds)` over its rows of `grad`
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
        let t = self.tasks;
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
        let parts = self.scores.into_iter().zip(&self.replicas).zip(&self.rows);
        for (k, ((scores, replica), shard)) in parts.enumerate() {
            let part: Vec<f32> = shard
                .iter()
                .flat_map(|&row| grad[row * t..(row + 1) * t].iter().copied())
                .collect();
            let mut loss = surrogate(scores, &part).map_err(|e| offset(e, shard, t))?;
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

/// `e` with its index counted in the whole batch: entry `i` of a shard of `tasks` outputs per
/// row is entry `rows[i / tasks] * tasks + i % tasks` of the gathered scores.
fn offset(e: BridgeError, rows: &[usize], tasks: usize) -> BridgeError {
    let at = |index: usize| rows[index / tasks] * tasks + index % tasks;
    match e {
        BridgeError::NonFiniteScore { index, value } => BridgeError::NonFiniteScore {
            index: at(index),
            value,
        },
        BridgeError::NonFiniteGradient { index, value } => BridgeError::NonFiniteGradient {
            index: at(index),
            value,
        },
        other => other,
    }
}
