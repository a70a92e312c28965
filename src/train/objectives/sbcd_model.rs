//! A Burn module as AGD-SBCD's [`SbcdModel`] ([`BurnModel`]): a block scored on the device and
//! read back once, `G_v` by one backward pass through the surrogate, and update (14) applied
//! parameter by parameter (papers/partial-auc-fpr-range-agd-sbcd.txt, Algorithms 1-2); the
//! trainable parameters are the problem's variables, buffers (batch-norm running statistics)
//! are not. [`crate::train::deep_sbcd`] drives it.

use std::collections::HashMap;
use std::marker::PhantomData;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Tensor};

use crate::pauc::PaucError;
use crate::pauc::agd::SbcdModel;
use crate::train::objective::TrainError;
use crate::train::parallel::{ParallelError, ShardedForward, Shards};

/// Float parameters of a module as flat plain (non-autodiff) tensors, by id.
type ParamMap = HashMap<ParamId, Tensor<1>>;

fn flat_plain<const D: usize>(t: Tensor<D>) -> Tensor<1> {
    let n = t.shape().num_elements();
    t.inner().reshape([n])
}

/// The trainable float parameters (those that require a gradient); buffers such as
/// batch-norm running statistics are left out: they are not variables of the problem.
fn collect(module: &impl Module) -> ParamMap {
    struct Take<'a>(&'a mut ParamMap);
    impl ModuleVisitor for Take<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let t = param.val();
            if t.is_require_grad() {
                self.0.insert(param.id, flat_plain(t.detach()));
            }
        }
    }
    let mut out = HashMap::new();
    module.visit(&mut Take(&mut out));
    out
}

/// Whether a module holds float tensors that are not trained (batch-norm running statistics).
pub(crate) fn has_buffers(module: &impl Module) -> bool {
    struct Any(bool);
    impl ModuleVisitor for Any {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0 |= !param.val().is_require_grad();
        }
    }
    let mut any = Any(false);
    module.visit(&mut any);
    any.0
}

/// Replace every trainable float parameter by `f(id, current flat plain value)`, keeping ids;
/// buffers (batch-norm running statistics) keep their values.
struct Rewrite<F: FnMut(ParamId, Tensor<1>) -> Tensor<1>>(F);

impl<F: FnMut(ParamId, Tensor<1>) -> Tensor<1>> ModuleMapper for Rewrite<F> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, tensor, mapper) = param.consume();
        if !tensor.is_require_grad() {
            return Param::from_mapped_value(id, tensor, mapper);
        }
        let shape = tensor.shape();
        let flat = flat_plain(tensor.detach());
        let new: Tensor<D> = (self.0)(id, flat).reshape(shape);
        Param::from_mapped_value(id, Tensor::from_inner(new).require_grad(), mapper)
    }
}

/// A Burn module as an [`SbcdModel`]: `forward(model, ids, device)` returns the scores of the
/// samples `ids` (in that order) computed on `device` (the autodiff device of a shard), in
/// training mode, or the caller's error. A block is split over `shards` (data parallelism,
/// [`crate::train::parallel`]): its scores are gathered once for the CPU core, and the
/// shards' gradients of `G_v` are summed on the first device, where update (14) runs.
pub struct BurnModel<M, E, F> {
    forward: F,
    shards: Shards,
    last: Option<ShardedForward<M>>,
    _types: PhantomData<E>,
}

impl<M, E, F> BurnModel<M, E, F>
where
    M: Module,
    E: From<TrainError> + From<PaucError>,
    F: FnMut(&M, &[usize], &Device) -> Result<Tensor<1>, E>,
{
    /// The model scored by `forward` over `shards`.
    pub fn new(shards: Shards, forward: F) -> Self {
        BurnModel {
            forward,
            shards,
            last: None,
            _types: PhantomData,
        }
    }

    /// The forward pass itself on the first device (for the batch-norm refresh passes).
    pub fn forward(&mut self, model: &M, ids: &[usize]) -> Result<Tensor<1>, E> {
        (self.forward)(model, ids, self.shards.main())
    }
}

/// A data-parallel step's error as the caller's.
fn caller_error<E: From<TrainError>>(e: ParallelError<E>) -> E {
    match e {
        ParallelError::Bridge(b) => TrainError::from(b).into(),
        ParallelError::Objective(e) => e,
    }
}

impl<M, E, F> SbcdModel for BurnModel<M, E, F>
where
    M: Module,
    E: From<TrainError> + From<PaucError>,
    F: FnMut(&M, &[usize], &Device) -> Result<Tensor<1>, E>,
{
    type Point = M;
    type Error = E;

    fn scores(&mut self, v: &M, ids: &[usize]) -> Result<Vec<f64>, E> {
        let forward = &mut self.forward;
        let (pass, cpu) = self
            .shards
            .forward(v, ids.len(), |m: &M, rows: &[usize], device: &Device| {
                let shard: Vec<usize> = rows.iter().map(|&r| ids[r]).collect();
                let s = forward(m, &shard, device)?;
                let n = s.dims()[0];
                Ok(s.reshape([n, 1]))
            })
            .map_err(caller_error::<E>)?;
        self.last = Some(pass);
        Ok(cpu)
    }

    fn prox_step(&mut self, v: M, w: &M, coef: &[f64], eta: f64, mu: f64) -> Result<M, E> {
        let pass = self.last.take().ok_or(TrainError::UnscoredBlock)?;
        let g: Vec<f32> = coef.iter().map(|&x| x as f32).collect();
        let gp = pass
            .backward(&v, &g, |_: &M| None)
            .map_err(caller_error::<E>)?;
        let mut gmap: ParamMap = HashMap::new();
        struct Grads<'a>(&'a GradientsParams, &'a mut ParamMap);
        impl ModuleVisitor for Grads<'_> {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                if let Some(g) = self.0.get::<D>(param.id) {
                    let n = g.shape().num_elements();
                    self.1.insert(param.id, g.reshape([n]));
                }
            }
        }
        v.visit(&mut Grads(&gp, &mut gmap));
        let w_vals = collect(w);
        let denom = 1.0 / eta + 1.0 / mu;
        Ok(v.map(&mut Rewrite(|id, cur: Tensor<1>| {
            let wv = w_vals.get(&id).cloned().unwrap_or_else(|| cur.clone());
            let mut num = cur.div_scalar(eta) + wv.div_scalar(mu);
            if let Some(g) = gmap.get(&id) {
                num = num - g.clone();
            }
            num.div_scalar(denom)
        })))
    }

    fn combine(&self, terms: &[(f64, &M)]) -> M {
        let maps: Vec<(f64, ParamMap)> = terms.iter().map(|(a, p)| (*a, collect(*p))).collect();
        terms[0].1.clone().map(&mut Rewrite(|id, cur: Tensor<1>| {
            let mut out: Option<Tensor<1>> = None;
            for (a, m) in &maps {
                let x = m.get(&id).cloned().unwrap_or_else(|| cur.clone());
                let term = x.mul_scalar(*a);
                out = Some(match out {
                    None => term,
                    Some(o) => o + term,
                });
            }
            out.unwrap_or(cur)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::backend::{BackendKind, autodiff_device};
    use burn::module::RunningState;
    use burn::nn::{BatchNorm, BatchNormConfig, LinearConfig};

    fn values(t: Tensor<1>) -> Vec<f32> {
        t.into_data().try_into_vec::<f32>().unwrap()
    }

    #[test]
    fn the_sbcd_and_agd_updates_leave_batch_norm_statistics_alone() {
        let device = autodiff_device(BackendKind::Ndarray).unwrap();
        let mut bn: BatchNorm = BatchNormConfig::new(3).init(&device);
        bn.running_mean = RunningState::new(Tensor::from_floats([0.5, -1.0, 2.0], &device));
        bn.running_var = RunningState::new(Tensor::from_floats([0.1, 4.0, 9.0], &device));
        assert!(has_buffers(&bn));
        assert!(!has_buffers(&LinearConfig::new(3, 1).init(&device)));
        // gamma and beta are the variables; the running statistics are not.
        assert_eq!(collect(&bn).len(), 2);
        let moved = bn
            .clone()
            .map(&mut Rewrite(|_, t: Tensor<1>| t.add_scalar(1.0)));
        assert_eq!(values(moved.gamma.val()), vec![2.0; 3]);
        assert_eq!(values(moved.beta.val()), vec![1.0; 3]);
        assert!(moved.gamma.val().is_require_grad());
        assert_eq!(values(moved.running_mean.value()), vec![0.5, -1.0, 2.0]);
        assert_eq!(values(moved.running_var.value()), vec![0.1, 4.0, 9.0]);
    }
}
