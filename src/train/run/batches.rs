//! The methods trained one optimizer step per batch: one objective per task, the batch's scores
//! read back once, every task's `dL/ds` computed on the CPU and applied through the surrogate.

use std::time::Instant;

use burn::optim::GradientsParams;
use rankrisk_datasets::batcher::HostBatch;
use rankrisk_datasets::sampler::BatchSampler;
use rankrisk_models::Scorer;

use crate::math::loss::Loss;
use crate::pauc::objective::PairLoss;
use crate::train::aucm::{AucM, AucMConfig};
use crate::train::dro_pauc::{
    Sopa, SopaConfig, SopaS, SopaSConfig, SotaS, SotaSConfig, Staco, StacoConfig,
};
use crate::train::instance_pauc::{
    AsgdaConfig, InstanceWise, MinMaxGradient, Pauci, PauciConfig, Upauci, UpauciConfig,
};
use crate::train::mb_pauc::{MiniBatchPauc, MiniBatchPaucConfig};
use crate::train::objective::{BatchGradient, Erm, ErmConfig, Objective, TrainError};
use crate::train::params::{DeviceTerms, Snapshot};
use crate::train::run::config::RunConfig;
use crate::train::run::error::{RunError, diverged, step_error};
use crate::train::run::period::{ObjectiveState, Period, PeriodContext, Stepper};
use crate::train::run::prefetch::for_each_batch;
use crate::train::state_record::State;
use crate::train::storm::StormDirection;

/// The objectives trained one optimizer step per batch.
#[derive(Debug, Clone)]
pub(crate) enum BatchObjective {
    /// Cross-entropy on the logit ([`Erm`] with the logistic loss).
    Ce(Erm),
    /// AUC-M with PESG's scalar updates.
    Aucm(AucM),
    /// Mini-batch pAUC.
    Mb(MiniBatchPauc),
    /// SOPA.
    Sopa(Sopa),
    /// SOPA-s.
    SopaS(SopaS),
    /// SOTA-s.
    SotaS(SotaS),
    /// STACO.
    Staco(Staco),
    /// PAUCI.
    Pauci(Pauci),
    /// UPAUCI.
    Upauci(Upauci),
}

impl BatchObjective {
    /// Cross-entropy on the logit, for one task with `labels`.
    pub(crate) fn ce(labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::Ce(
            ErmConfig::new().with_loss(Loss::Logistic).init(labels)?,
        ))
    }

    /// AUC-M for one task with `labels`, its `p` the share of positives in the batches it
    /// sees, PESG's step `cfg.lr()`.
    pub(crate) fn aucm(
        cfg: &RunConfig,
        labels: &[f64],
        positive_share: f64,
    ) -> Result<Self, RunError> {
        Ok(BatchObjective::Aucm(
            AucMConfig::new()
                .with_imratio(Some(positive_share))
                .with_lr(cfg.lr())
                .with_weight_decay(cfg.weight_decay())
                .with_gamma(1.0 / cfg.recipe.epoch_decay)
                .init(labels)?,
        ))
    }

    /// Mini-batch pAUC over the run's FPR range, for one task with `labels`.
    pub(crate) fn mb(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::Mb(
            MiniBatchPaucConfig::new(cfg.alpha, cfg.beta)
                .with_loss(PairLoss::Logistic)
                .init(labels)?,
        ))
    }

    /// SOPA over FPR `[0, beta]`.
    pub(crate) fn sopa(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::Sopa(
            SopaConfig::new(cfg.beta)
                .with_margin(cfg.margin)
                .with_eta(cfg.sopa_eta)
                .init(labels)?,
        ))
    }

    /// SOPA-s.
    pub(crate) fn sopa_s(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::SopaS(
            SopaSConfig::new()
                .with_lambda(cfg.dro_lambda)
                .with_gamma(cfg.dro_gamma)
                .with_margin(cfg.margin)
                .init(labels)?,
        ))
    }

    /// SOTA-s.
    pub(crate) fn sota_s(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::SotaS(
            SotaSConfig::new()
                .with_lambda(cfg.dro_lambda)
                .with_tau(cfg.dro_tau)
                .with_gamma_u(cfg.dro_gamma)
                .with_gamma_v(cfg.dro_gamma)
                .with_margin(cfg.margin)
                .init(labels)?,
        ))
    }

    /// STACO over the run's two-way region (`theta_0 = 1 - tpr_min`, `theta_1 = fpr_max`).
    pub(crate) fn staco(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::Staco(
            StacoConfig::new()
                .with_theta_0(1.0 - cfg.tpr_min)
                .with_theta_1(cfg.fpr_max)
                .with_margin(cfg.staco_margin)
                .with_alpha(cfg.staco_alpha)
                .with_beta_0(cfg.staco_beta_0)
                .with_beta_1(cfg.staco_beta_1)
                .init(labels)?,
        ))
    }

    /// PAUCI over the run's region (`alpha = 1 - tpr_min`, `beta = fpr_max`), for one task
    /// with `labels`.
    pub(crate) fn pauci(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::Pauci(
            PauciConfig::new()
                .with_alpha(1.0 - cfg.tpr_min)
                .with_beta(cfg.fpr_max)
                .with_kappa(cfg.kappa)
                .with_omega(cfg.omega())
                .with_lr(cfg.scalar_lr)
                .with_gamma_step(cfg.gamma_step)
                .init(labels)?,
        ))
    }

    /// UPAUCI over the run's region, one weight per training sample.
    pub(crate) fn upauci(cfg: &RunConfig, labels: &[f64]) -> Result<Self, RunError> {
        Ok(BatchObjective::Upauci(
            UpauciConfig::new()
                .with_alpha(1.0 - cfg.tpr_min)
                .with_beta(cfg.fpr_max)
                .with_omega(cfg.omega())
                .with_lr(cfg.scalar_lr)
                .with_lr_weights(cfg.weights_lr)
                .with_weight_step(cfg.weight_step)
                .init(labels)?,
        ))
    }

    /// PAUCI's or UPAUCI's side of ASGDA (None for the other objectives).
    pub(crate) fn instance_wise(&mut self) -> Option<&mut dyn InstanceWise> {
        match self {
            BatchObjective::Pauci(o) => Some(o),
            BatchObjective::Upauci(o) => Some(o),
            _ => None,
        }
    }

    /// The objective behind the variant.
    fn objective(&self) -> &dyn Objective {
        match self {
            BatchObjective::Ce(o) => o,
            BatchObjective::Aucm(o) => o,
            BatchObjective::Mb(o) => o,
            BatchObjective::Sopa(o) => o,
            BatchObjective::SopaS(o) => o,
            BatchObjective::SotaS(o) => o,
            BatchObjective::Staco(o) => o,
            BatchObjective::Pauci(o) => o,
            BatchObjective::Upauci(o) => o,
        }
    }

    /// The objective behind the variant, to step or to restore.
    pub(crate) fn objective_mut(&mut self) -> &mut dyn Objective {
        match self {
            BatchObjective::Ce(o) => o,
            BatchObjective::Aucm(o) => o,
            BatchObjective::Mb(o) => o,
            BatchObjective::Sopa(o) => o,
            BatchObjective::SopaS(o) => o,
            BatchObjective::SotaS(o) => o,
            BatchObjective::Staco(o) => o,
            BatchObjective::Pauci(o) => o,
            BatchObjective::Upauci(o) => o,
        }
    }

    fn batch_gradient(
        &mut self,
        scores: &[f64],
        labels: &[f64],
        ids: &[usize],
    ) -> Result<BatchGradient, TrainError> {
        self.objective_mut().batch_gradient(scores, labels, ids)
    }

    /// The objective's state (named vectors): what `objective.bpk` of a checkpoint holds.
    pub(crate) fn state(&self) -> State {
        self.objective().state()
    }

    /// The objective's display name (in record errors).
    pub(crate) fn name(&self) -> &'static str {
        self.objective().name()
    }

    /// Take the state of a checkpoint written before 2026-11-26 (`state.cbor`'s objective) if
    /// it is of this objective's kind.
    pub(crate) fn restore_legacy(&mut self, state: ObjectiveState) -> bool {
        // The legacy objective gives its state only: the settings and the provenance stay
        // those of the objective built from this run's config (checked equal to the
        // checkpoint's before).
        let legacy = match state {
            // CE has no state: it stays as it was built.
            ObjectiveState::Ce => return matches!(self, BatchObjective::Ce(_)),
            ObjectiveState::Aucm(o) => matches!(self, BatchObjective::Aucm(_)).then(|| o.state()),
            ObjectiveState::Mb(o) => matches!(self, BatchObjective::Mb(_)).then(|| o.state()),
            ObjectiveState::Sopa(o) => matches!(self, BatchObjective::Sopa(_)).then(|| o.state()),
            ObjectiveState::SopaS(o) => matches!(self, BatchObjective::SopaS(_)).then(|| o.state()),
            ObjectiveState::SotaS(o) => matches!(self, BatchObjective::SotaS(_)).then(|| o.state()),
            ObjectiveState::Sbcd(_) | ObjectiveState::Tasks(_) => None,
        };
        match legacy {
            Some(state) => self.objective_mut().set_state(state).is_ok(),
            None => false,
        }
    }
}

/// The gradient of every task's objective for one batch, as a `[batch, tasks]` row-major
/// matrix like the scores, and the mean loss over the tasks. With several tasks, a task whose
/// pairwise objective finds one class only in this batch sits the batch out (zero gradient);
/// with one task that is an error, as the dual sampler guarantees both classes.
fn task_gradients(
    objectives: &mut [BatchObjective],
    scores: &[f64],
    targets: &[f64],
    ids: &[usize],
) -> Result<BatchGradient, TrainError> {
    let k = objectives.len();
    if k == 1 {
        return objectives[0].batch_gradient(scores, targets, ids);
    }
    let n = ids.len();
    let column = |v: &[f64], t: usize| -> Vec<f64> { (0..n).map(|r| v[r * k + t]).collect() };
    let (mut grad, mut loss) = (vec![0.0f32; n * k], 0.0);
    for (t, objective) in objectives.iter_mut().enumerate() {
        match objective.batch_gradient(&column(scores, t), &column(targets, t), ids) {
            Ok(g) => {
                loss += g.loss;
                for (r, v) in g.grad.into_iter().enumerate() {
                    grad[r * k + t] = v;
                }
            }
            Err(TrainError::OneClassBatch { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(BatchGradient {
        loss: loss / k as f64,
        grad,
    })
}

/// [`RunError::Diverged`] at `step` when the batch loss is not finite.
fn finite_loss(g: &BatchGradient, step: usize) -> Result<(), RunError> {
    if g.loss.is_finite() {
        Ok(())
    } else {
        Err(RunError::Diverged {
            step,
            quantity: format!("the batch loss is {}", g.loss),
        })
    }
}

/// `steps` optimizer steps on batches of the run's sampler, each batch assembled on a worker
/// thread while the previous step runs.
pub(crate) fn batch_period<M: Scorer>(
    objectives: &mut [BatchObjective],
    model: M,
    ctx: &PeriodContext<'_>,
    stepper: &mut Stepper,
    sampler: &mut BatchSampler,
    steps_done: usize,
    steps: usize,
) -> Result<Period<M>, RunError> {
    let reference = Snapshot::of(&model);
    let mut cpu = 0.0;
    steps_of(model, ctx, sampler, steps, |m, host, k| {
        let step = steps_done + k;
        let lr = stepper.next_lr();
        // AUC-M's scalars take PESG's step at the model's rate; its regularization of the
        // model is added once (every task's objective has the same).
        let mut aucm = None;
        for o in objectives.iter_mut() {
            if let BatchObjective::Aucm(a) = o {
                a.lr = lr;
                aucm.get_or_insert_with(|| a.clone());
            }
        }
        let out = ctx
            .shards
            .step(
                &m,
                host,
                |gathered| {
                    let t = Instant::now();
                    let g = task_gradients(objectives, gathered, &host.targets, &host.ids)
                        .map_err(|e| diverged(step)(e.into()))?;
                    finite_loss(&g, step)?;
                    cpu += t.elapsed().as_secs_f64();
                    Ok(g)
                },
                |replica| aucm.as_ref()?.device_terms(replica, &reference),
            )
            .map_err(step_error(step))?;
        Ok((stepper.optim.step(lr, m, out.grads), out.gradient.loss))
    })
    .map(|p| Period {
        cpu_seconds: cpu,
        lr: stepper.last_lr,
        ..p
    })
}

/// `steps` steps on batches of the run's sampler, each batch assembled on a worker thread
/// while the previous step runs: `step(model, batch, k)` takes the `k`-th and returns the
/// moved model and the batch loss; the period's loss is their mean, its step time their median
/// (`cpu_seconds` is left to the caller).
fn steps_of<M: Scorer>(
    model: M,
    ctx: &PeriodContext<'_>,
    sampler: &mut BatchSampler,
    steps: usize,
    mut step: impl FnMut(M, &HostBatch, usize) -> Result<(M, f64), RunError>,
) -> Result<Period<M>, RunError> {
    let mut loss_sum = 0.0;
    let mut model = Some(model);
    let mut drawn = 0;
    let next_ids = || {
        (drawn < steps).then(|| {
            drawn += 1;
            sampler.next_batch()
        })
    };
    let mut k = 0;
    let mut step_ms = Vec::with_capacity(steps);
    for_each_batch(ctx.train, next_ids, |host| {
        let started = Instant::now();
        let m = model
            .take()
            .expect("the model is put back after every step");
        let (m, loss) = step(m, &host, k)?;
        loss_sum += loss;
        model = Some(m);
        step_ms.push(1e3 * started.elapsed().as_secs_f64());
        k += 1;
        ctx.bar.inc(1);
        ctx.bar
            .set_message(format!("loss {:.4}", loss_sum / k as f64));
        Ok::<(), RunError>(())
    })?;
    Ok(Period {
        model: model.expect("the model is put back after every step"),
        candidate: None,
        diagnostics: None,
        steps,
        loss: loss_sum / steps.max(1) as f64,
        cpu_seconds: 0.0,
        dual_seconds: 0.0,
        step_ms: median(&mut step_ms),
        lr: None,
    })
}

/// PAUCI or UPAUCI under the paper's ASGDA: the objective (its scalars' directions in its
/// state), the network's direction, the settings.
pub(crate) struct AsgdaRun {
    pub(crate) objective: BatchObjective,
    pub(crate) direction: StormDirection,
    pub(crate) config: AsgdaConfig,
}

/// `steps` ASGDA steps (the PAUCI / UPAUCI paper's Algorithm 1; `train::storm`'s module
/// docs give one step) on batches of the run's sampler: each batch's gradients at the current
/// point, a move along the directions (SGD of size `eta_t nu` on the network, the objective's
/// convex-combination step on its scalars), the same batch's gradients at the new point, and
/// the directions corrected; the first step of a run starts the directions at its gradients.
/// The loss recorded is the batch's at the current point.
pub(crate) fn asgda_period<M: Scorer>(
    run: &mut AsgdaRun,
    model: M,
    ctx: &PeriodContext<'_>,
    stepper: &mut Stepper,
    sampler: &mut BatchSampler,
    steps_done: usize,
    steps: usize,
) -> Result<Period<M>, RunError> {
    let mut cpu = 0.0;
    let AsgdaRun {
        objective,
        direction,
        config,
    } = run;
    let objective = objective.instance_wise().ok_or_else(|| RunError::Setting {
        key: "solver",
        message: "asgda trains pauci and upauci".into(),
    })?;
    let (nu, lambda) = (config.nu, config.lambda);
    steps_of(model, ctx, sampler, steps, |m, host, k| {
        let step = steps_done + k;
        let (old, old_minmax, loss) = asgda_gradients(&m, host, ctx, &*objective, step, &mut cpu)?;
        let eta = config.eta(step);
        let m = if !direction.is_started() {
            direction.update(&m, old, None, 0.0);
            objective.correct_directions(&old_minmax, None, 0.0, 0.0);
            let along = direction.gradients(&m);
            let m = stepper.optim.step(eta * nu, m, along);
            objective.asgda_move(eta, nu, lambda);
            m
        } else {
            let along = direction.gradients(&m);
            let m = stepper.optim.step(eta * nu, m, along);
            objective.asgda_move(eta, nu, lambda);
            let (new, new_minmax, _) = asgda_gradients(&m, host, ctx, &*objective, step, &mut cpu)?;
            let (rho, xi) = (config.rho(step + 1), config.xi(step + 1));
            direction.update(&m, new, Some(old), rho);
            objective.correct_directions(&new_minmax, Some(&old_minmax), rho, xi);
            m
        };
        Ok((m, loss))
    })
    .map(|p| Period {
        cpu_seconds: cpu,
        ..p
    })
}

/// One batch's gradients at the current point, nothing moved: the network's, the scalars'
/// and weights', and the loss.
fn asgda_gradients<M: Scorer>(
    m: &M,
    host: &HostBatch,
    ctx: &PeriodContext<'_>,
    objective: &dyn InstanceWise,
    step: usize,
    cpu: &mut f64,
) -> Result<(GradientsParams, MinMaxGradient, f64), RunError> {
    let mut minmax = None;
    let out = ctx
        .shards
        .step(
            m,
            host,
            |gathered| {
                let t = Instant::now();
                let (g, mm) = objective
                    .gradients(gathered, &host.targets, &host.ids)
                    .map_err(|e| diverged(step)(e.into()))?;
                finite_loss(&g, step)?;
                minmax = Some(mm);
                *cpu += t.elapsed().as_secs_f64();
                Ok(g)
            },
            |_| None,
        )
        .map_err(step_error(step))?;
    let minmax = minmax.expect("the objective ran before the backward pass");
    Ok((out.grads, minmax, out.gradient.loss))
}

/// The median of `v` (NaN when empty).
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(crate::math::order::ascending);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}
