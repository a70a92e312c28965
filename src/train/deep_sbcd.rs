//! AGD-SBCD (papers/partial-auc-fpr-range-agd-sbcd.txt, Algorithms 1-2) for any Burn model:
//! the model side of [`crate::pauc::agd`], whose iterations it runs unchanged.
//!
//! [`BurnModel`] is a Burn module as an [`SbcdModel`]: a block is scored on the device and the
//! scores read back once; the CPU core turns them into the indicators `1(l(s_i - s_j) >
//! lambda_i)`, the dual update (15) and the score coefficients of `G_v`; back on the device,
//! `G_v` comes from one backward pass through the surrogate `sum_k coef_k s_k`, and the
//! closed-form update (14) `v <- (v/eta + w/mu - G_v) / (1/eta + 1/mu)` is applied parameter
//! by parameter. Only trainable parameters are variables of the problem; buffers (batch-norm
//! running statistics) are re-estimated for each new point by
//! [`AgdSbcdConfig::refresh_steps`] training-mode passes ([`DeepSbcd::refresh_buffers`]).
//!
//! [`DeepSbcd`] is the run driver's handle: the core [`AgdSbcd`] plus those refresh passes, and
//! both candidates of Algorithm 2 per outer iteration, `w^(k+1)` and `v_bar_n^(k)` (its output),
//! each with its own statistics, so that the driver can keep the better one by validation.
//! What is ours and not Algorithm 2's is listed on [`AgdSbcdConfig`].

use std::collections::HashMap;
use std::marker::PhantomData;

use burn::config::Config;
use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::store::ModuleRecord;
use burn::tensor::{Device, Tensor};

use crate::pauc::PaucError;
use crate::pauc::agd::{AgdSbcd, AgdSbcdConfig, SbcdModel, SbcdRecord, SbcdState};
use crate::pauc::objective::PairLoss;
use crate::pauc::sbcd::DualInit;
use crate::train::objective::{TrainError, training_positives};
use crate::train::parallel::{ParallelError, ShardedForward, Shards};
use crate::train::state_record::{State, StateVectors};

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
fn has_buffers(module: &impl Module) -> bool {
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

/// Settings of deep AGD-SBCD (pAUC paper, Algorithms 1-2) with section 6.1's settings for
/// deep models as defaults: mini-batches of 32 (I = J = 16), `T_k = 50 (k+1)^2` SBCD steps per
/// call, `mu = 1e3 / (N+ N-)`, `gamma = 1e3 / (N+ N-)` (tuned there in {0.1, 1, 2} x 1e3),
/// c = 0.1 (tuned in 1e-5..1), the logistic pair loss and 30 batch-norm refresh passes. On
/// Fashion-MNIST shirts-vs-rest with an MLP, c = 1 diverges within two outer iterations while
/// c = 0.1 lifts the training pAUC[0.05, 0.5] from 0.35 to 0.88. The fields are those of
/// [`AgdSbcdConfig`] (which documents what is ours and not Algorithm 2's).
///
/// `DeepSbcdConfig::new(alpha, beta).with_c(0.1).init(&labels)?`
#[derive(Config, Debug)]
pub struct DeepSbcdConfig {
    /// FPR range start alpha (level `m = alpha N-`), `0 <= alpha < beta`.
    pub alpha: f64,
    /// FPR range end beta (level `n = beta N-`), `beta <= 1`.
    pub beta: f64,
    /// Pairwise surrogate `l` (section 6.1: logistic).
    #[config(default = "PairLoss::Logistic")]
    pub loss: PairLoss,
    /// `T_k = t_scale (k+1)^2` SBCD steps per call (section 6.1: 50).
    #[config(default = 50)]
    pub t_scale: usize,
    /// Step constant c: `eta = c / ((k+1) N+ N-)` (and `theta` unless `c_dual` is set).
    #[config(default = 0.1)]
    pub c: f64,
    /// `theta = c_dual / ((k+1) N-)` when set; None uses `c` as Appendix E.2 does. Ours.
    #[config(default = "None")]
    pub c_dual: Option<f64>,
    /// `mu = mu_scale / (N+ N-)` (section 6.1: 1e3).
    #[config(default = 1e3)]
    pub mu_scale: f64,
    /// `gamma = gamma_scale / (N+ N-)` (section 6.1: 1e3).
    #[config(default = 1e3)]
    pub gamma_scale: f64,
    /// Positives per step I (section 6.1: 16).
    #[config(default = 16)]
    pub i: usize,
    /// Negatives per step J (section 6.1: 16).
    #[config(default = 16)]
    pub j: usize,
    /// Seed of the block sampler.
    #[config(default = 0)]
    pub seed: u64,
    /// How the duals start (eq. (19) at `w^(0)` by default).
    #[config(default = "DualInit::Exact")]
    pub dual_init: DualInit,
    /// Re-set both levels' duals to eq. (19) before every outer iteration. Ours.
    #[config(default = false)]
    pub dual_refresh: bool,
    /// The m- and n-calls of an outer iteration draw the same blocks. Ours.
    #[config(default = false)]
    pub common_blocks: bool,
    /// Training-mode forward passes that re-estimate batch-norm statistics for each new
    /// point. Ours.
    #[config(default = 30)]
    pub refresh_steps: usize,
}

impl DeepSbcdConfig {
    /// The settings as the core [`AgdSbcd`] takes them (the linear solver's type).
    pub fn agd(&self) -> AgdSbcdConfig {
        AgdSbcdConfig {
            alpha: self.alpha,
            beta: self.beta,
            loss: self.loss,
            t_scale: self.t_scale,
            c: self.c,
            c_dual: self.c_dual,
            mu_scale: self.mu_scale,
            gamma_scale: self.gamma_scale,
            i: self.i,
            j: self.j,
            seed: self.seed,
            dual_init: self.dual_init,
            dual_refresh: self.dual_refresh,
            common_blocks: self.common_blocks,
            refresh_steps: self.refresh_steps,
        }
    }

    /// AGD-SBCD for a training set with `labels` (id order; +1 positive, -1 or 0 negative).
    /// The duals are zero until [`DeepSbcd::init_duals`] sets them from the initial model's
    /// scores (after [`DeepSbcd::refresh_buffers`] for a model with batch norm) or
    /// [`DeepSbcd::load_record`] brings back a saved state.
    ///
    /// # Errors
    /// [`TrainError::BadLabel`] for a label outside {-1, 0, +1}; [`TrainError::Pauc`] for a bad
    /// FPR range, one class only, blocks larger than a class or non-positive scales.
    pub fn init(&self, labels: &[f64]) -> Result<DeepSbcd, TrainError> {
        DeepSbcd::new(self.agd(), labels)
    }
}

/// The name in AGD-SBCD's record errors.
const NAME: &str = "AGD-SBCD";

/// Deep AGD-SBCD: the core's duals and sampler on the CPU, parameter updates on the device,
/// batch-norm statistics re-estimated for every new point.
#[derive(Debug, Clone)]
pub struct DeepSbcd {
    core: AgdSbcd,
}

impl DeepSbcd {
    /// The core for a training set with `labels` (id order; +1 positive, -1 or 0 negative).
    fn new(cfg: AgdSbcdConfig, labels: &[f64]) -> Result<Self, TrainError> {
        training_positives(labels)?;
        let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
        Ok(DeepSbcd {
            core: AgdSbcd::new(cfg, &positive)?,
        })
    }

    /// The settings.
    pub fn config(&self) -> &AgdSbcdConfig {
        self.core.config()
    }

    /// The resumable state.
    pub fn state(&self) -> &SbcdState {
        &self.core.state
    }

    /// Set the duals of both levels from the model's scores (one per training sample, id
    /// order) as [`AgdSbcdConfig::dual_init`] says.
    ///
    /// # Errors
    /// [`PaucError::Scores`] for a wrong count or a non-finite score.
    pub fn init_duals(&mut self, scores: &[f64]) -> Result<(), PaucError> {
        self.core.init_duals(scores)
    }

    /// Set both levels' duals to eq. (19) at the model that gave `scores`.
    ///
    /// # Errors
    /// [`PaucError::Scores`] for a wrong count or a non-finite score.
    pub fn reset_duals(&mut self, scores: &[f64]) -> Result<(), PaucError> {
        self.core.reset_duals(scores)
    }

    /// Whether the duals are re-set from a scoring pass before every outer iteration.
    pub fn refreshes_duals(&self) -> bool {
        self.core.config().dual_refresh
    }

    /// Calls of Algorithm 1 per outer iteration (2, or 1 when alpha = 0).
    pub fn calls(&self) -> usize {
        self.core.calls()
    }

    /// Restore a saved state.
    ///
    /// # Errors
    /// [`PaucError::State`] when it holds duals for another number of positives.
    pub fn restore(&mut self, state: SbcdState) -> Result<(), PaucError> {
        self.core.restore(state)
    }

    /// The state as a Burn record (the named `f64` vectors of [`SbcdState::vectors`]), to save
    /// beside the model's with `ModuleRecord::save` or `into_bytes`, as the objectives'
    /// [`Objective::into_record`](crate::train::Objective::into_record).
    pub fn into_record(self) -> ModuleRecord {
        StateVectors::of(&self.state().vectors()).into_record()
    }

    /// This AGD-SBCD (built for the same training set) with the state of `record`: it
    /// continues bit for bit where the saved one stopped.
    ///
    /// # Errors
    /// [`TrainError::Record`] for a record of another objective or another training set.
    pub fn load_record(mut self, record: ModuleRecord) -> Result<Self, TrainError> {
        let vectors = StateVectors::of(&self.state().vectors()).load(NAME, record)?;
        self.set_vectors(vectors)?;
        Ok(self)
    }

    /// Take the state from [`SbcdState::vectors`]' form.
    ///
    /// # Errors
    /// [`TrainError::Record`] for a missing vector, a count that is not a whole number, or
    /// duals for another number of positives.
    pub(crate) fn set_vectors(&mut self, vectors: State) -> Result<(), TrainError> {
        let record = |message: String| TrainError::Record {
            objective: NAME,
            message,
        };
        let state = SbcdState::from_vectors(vectors).map_err(record)?;
        self.restore(state).map_err(|e| record(e.to_string()))
    }

    /// [`AgdSbcdConfig::refresh_steps`] training-mode forward passes of `model` (without
    /// gradient tracking) over sampled blocks, so that its buffers (batch-norm running
    /// statistics) fit its parameters; nothing for a model without buffers.
    ///
    /// # Errors
    /// The caller's error from `forward`.
    pub fn refresh_buffers<M: Module, E>(
        &mut self,
        model: &M,
        forward: &mut impl FnMut(&M, &[usize]) -> Result<Tensor<1>, E>,
    ) -> Result<(), E> {
        if has_buffers(model) {
            // A copy whose parameters require no gradient: its forward passes record no
            // autodiff graph (a dropped training-mode forward of `model` itself would keep its
            // activations until a backward pass that never comes: 2.7 GB after one pass of the
            // default run), and it shares `model`'s running-statistics buffers, which the passes
            // update.
            let frozen = model.clone().no_grad();
            for _ in 0..self.core.config().refresh_steps {
                let ids = self.core.next_block();
                drop(forward(&frozen, &ids)?);
            }
        }
        Ok(())
    }

    /// One outer iteration of Algorithm 2 with its blocks split over `shards` (one device:
    /// [`Shards::one`]). `forward(model, ids, device)` must return the scores of the samples
    /// `ids` (in that order) computed on `device`, in training mode, or the caller's error.
    /// Returns `w^(k+1)`, the other candidate output of Algorithm 2, `v_bar_n^(k)` (as an
    /// inference copy whose buffers were re-estimated for it), and the record.
    ///
    /// # Errors
    /// The caller's error, or (converted) [`PaucError`] / [`TrainError`] when scores are
    /// NaN/inf or the surrogate refuses a gradient.
    pub fn outer_step<M, E>(
        &mut self,
        w: M,
        shards: &Shards,
        forward: impl FnMut(&M, &[usize], &Device) -> Result<Tensor<1>, E>,
    ) -> Result<(M, M, SbcdRecord), E>
    where
        M: Module,
        E: From<TrainError> + From<PaucError>,
    {
        self.outer_step_within(w, usize::MAX, shards, forward)
    }

    /// [`DeepSbcd::outer_step`] with at most `budget` SBCD steps in all (see
    /// [`AgdSbcd::outer_step`]).
    ///
    /// # Errors
    /// As [`DeepSbcd::outer_step`].
    pub fn outer_step_within<M, E>(
        &mut self,
        w: M,
        budget: usize,
        shards: &Shards,
        forward: impl FnMut(&M, &[usize], &Device) -> Result<Tensor<1>, E>,
    ) -> Result<(M, M, SbcdRecord), E>
    where
        M: Module,
        E: From<TrainError> + From<PaucError>,
    {
        let mut model = BurnModel::new(shards.clone(), forward);
        let step = self.core.outer_step(&mut model, &w, budget)?;
        let mut fwd = |m: &M, ids: &[usize]| model.forward(m, ids);
        // The candidate v_bar_n with its own statistics.
        self.refresh_buffers(&step.v_bar_n, &mut fwd)?;
        let candidate = step.v_bar_n.valid();
        self.refresh_buffers(&step.w, &mut fwd)?;
        Ok((step.w, candidate, step.record))
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
