//! The training method as a value the run loop calls: [`Trainer`] runs one period (an epoch of
//! batches for CE, AUC-M and MB; one outer iteration of Algorithm 2 for AGD-SBCD) from the
//! current model and returns what the loop evaluates next.

use std::time::Instant;

use burn::optim::ModuleOptimizer;
use burn::store::ModuleRecord;
use burn::tensor::Device;
use rankrisk_datasets::DataError;
use rankrisk_datasets::sampler::{BatchSampler, DualSampler, ShuffleSampler};
use rankrisk_models::Scorer;
use rankrisk_models::checkpoint::first_non_finite;

use crate::train::deep_sbcd::{DeepSbcd, DeepSbcdInit};
use crate::train::objective::TrainError;
use crate::train::recipe::{OptimizerKind, Recipe};
use crate::train::run::batches::{AsgdaRun, BatchObjective, asgda_period, batch_period};
use crate::train::run::config::{Method, RunConfig, Solver};
use crate::train::run::error::{RunError, diverged};
use crate::train::run::evaluate::score_all;
use crate::train::run::period::{ObjectiveState, Period, PeriodContext, Stepper};
use crate::train::state_record::{State, load_states, states_record};
use crate::train::storm::StormDirection;

/// Every non-SBCD method sees batches with this share of positives ([`DualSampler`]); AUC-M's
/// `p` must be the positive share of what it averages over, so it is this share, not the
/// training set's (with the set's ~0.1 under 50/50 batches AUC-M collapsed: test AUC 0.37 at
/// lr 0.01 on the Fashion-MNIST-LT slice).
pub(crate) const POSITIVE_SHARE: f64 = 0.5;

/// A method with its CPU state.
pub(crate) enum Trainer {
    /// CE, AUC-M, MB, SOPA, SOPA-s, SOTA-s: one objective per task (one for a binary task),
    /// one optimizer step per batch on the surrogate of their gradients (plus AUC-M's device
    /// terms).
    Batches(Vec<BatchObjective>),
    /// AGD-SBCD (Algorithms 1-2) over the Burn module (boxed: its state is the large one).
    Sbcd(Box<DeepSbcd>),
    /// PAUCI or UPAUCI under ASGDA (one task, one device).
    Asgda(Box<AsgdaRun>),
}

impl Trainer {
    /// The method of `cfg` for a training set with `task_labels` (one label vector per task,
    /// id order), fresh. AGD-SBCD's duals are set by [`Trainer::start`] (or by
    /// [`Trainer::restore`] when resuming).
    ///
    /// # Errors
    /// [`RunError`] for settings the objective refuses; AGD-SBCD with several tasks.
    pub fn new(cfg: &RunConfig, task_labels: &[Vec<f64>]) -> Result<Self, RunError> {
        // The one dispatch on the method: AGD-SBCD, or the objective each task gets.
        type Build = fn(&RunConfig, &[f64], f64) -> Result<BatchObjective, RunError>;
        let build: Build = match cfg.method {
            Method::Sbcd => return Self::sbcd(cfg, task_labels),
            Method::Ce => |_, labels, _| BatchObjective::ce(labels),
            Method::Aucm => BatchObjective::aucm,
            Method::Mb => |cfg, labels, _| BatchObjective::mb(cfg, labels),
            Method::Sopa => |cfg, labels, _| BatchObjective::sopa(cfg, labels),
            Method::SopaS => |cfg, labels, _| BatchObjective::sopa_s(cfg, labels),
            Method::SotaS => |cfg, labels, _| BatchObjective::sota_s(cfg, labels),
            Method::Staco => |cfg, labels, _| BatchObjective::staco(cfg, labels),
            Method::Pauci => |cfg, labels, _| BatchObjective::pauci(cfg, labels),
            Method::Upauci => |cfg, labels, _| BatchObjective::upauci(cfg, labels),
        };
        if cfg.solver == Solver::Asgda {
            let [labels] = task_labels else {
                return Err(RunError::Setting {
                    key: "solver",
                    message: format!(
                        "asgda trains one task; this run has {} (solver = \"sgda\")",
                        task_labels.len()
                    ),
                });
            };
            let mut objective = build(cfg, labels, POSITIVE_SHARE)?;
            if let Some(o) = objective.instance_wise() {
                o.zero_directions();
            }
            return Ok(Trainer::Asgda(Box::new(AsgdaRun {
                objective,
                direction: StormDirection::new(),
                config: cfg.asgda_config(),
            })));
        }
        let objectives = task_labels
            .iter()
            .map(|labels| {
                // One task: balanced batches (the dual sampler's share); several: uniform
                // batches, whose positive share is the task's prevalence.
                let share = match task_labels.len() {
                    1 => POSITIVE_SHARE,
                    _ => labels.iter().filter(|&&y| y > 0.0).count() as f64 / labels.len() as f64,
                };
                build(cfg, labels, share)
            })
            .collect::<Result<_, _>>()?;
        Ok(Trainer::Batches(objectives))
    }

    /// AGD-SBCD for a single task's `task_labels`.
    ///
    /// # Errors
    /// [`RunError::Setting`] for several tasks; the config's refusal.
    fn sbcd(cfg: &RunConfig, task_labels: &[Vec<f64>]) -> Result<Self, RunError> {
        match task_labels {
            [labels] => Ok(Trainer::Sbcd(Box::new(cfg.sbcd_config().init(labels)?))),
            _ => Err(RunError::Setting {
                key: "method",
                message: format!(
                    "AGD-SBCD trains one task; a multi-label run ({} tasks) takes ce, aucm, mb, \
                     sopa, sopa-s, sota-s, staco, pauci or upauci",
                    task_labels.len()
                ),
            }),
        }
    }

    /// The sampler of the run: balanced batches of one task's labels ([`DualSampler`], the
    /// positive share [`POSITIVE_SHARE`]); uniform batches for several tasks.
    ///
    /// # Errors
    /// [`RunError::Data`] for a class without samples or a batch below 2.
    pub fn sampler(cfg: &RunConfig, task_labels: &[Vec<f64>]) -> Result<BatchSampler, RunError> {
        Ok(match task_labels {
            [labels] => {
                let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
                BatchSampler::Dual(
                    DualSampler::new(&positive, cfg.batch, POSITIVE_SHARE, cfg.seed)
                        .map_err(DataError::from)?,
                )
            }
            _ => BatchSampler::Shuffle(
                ShuffleSampler::new(task_labels.first().map_or(0, Vec::len), cfg.batch, cfg.seed)
                    .map_err(DataError::from)?,
            ),
        })
    }

    /// The optimizer of the run: plain SGD under ASGDA (its steps along the direction);
    /// otherwise the recipe's ([`Recipe::init_optimizer`](crate::train::recipe::Recipe::init_optimizer)),
    /// by default the method's ([`RunConfig::default_optimizer`]), with the run's weight decay
    /// (AUC-M's is PESG's term, added by its device terms instead) and gradient clamp.
    pub fn optimizer(cfg: &RunConfig) -> ModuleOptimizer {
        let clip = cfg.clip();
        if cfg.solver == Solver::Asgda {
            // ASGDA's network step: plain SGD of size eta_t nu along its direction, whatever
            // the recipe (which validation keeps at its defaults for ASGDA).
            return Recipe::default().init_optimizer(OptimizerKind::Sgd, 0.0, clip);
        }
        let weight_decay = match cfg.method {
            Method::Aucm => 0.0,
            _ => cfg.weight_decay(),
        };
        cfg.recipe
            .init_optimizer(cfg.default_optimizer(), weight_decay, clip)
    }

    /// Prepare a fresh run at the initial `model`: AGD-SBCD re-estimates the batch-norm
    /// statistics and sets its duals (eq. (19), or as `dual_init` says) from an inference
    /// pass over the training set; the other methods need nothing.
    ///
    /// # Errors
    /// [`RunError`] for an unreadable image or non-finite initial scores.
    pub fn start<M: Scorer>(&mut self, model: &M, ctx: &PeriodContext<'_>) -> Result<(), RunError> {
        if let Trainer::Sbcd(s) = self {
            let mut f = forward(ctx);
            s.refresh_buffers(model, &mut |m: &M, ids: &[usize]| f(m, ids, ctx.device))?;
            s.init_duals(&score_all(&model.valid(), ctx.train, ctx.device)?)?;
        }
        Ok(())
    }

    /// The method's state as one Burn record (one entry per task; AGD-SBCD's duals,
    /// iteration and sampler position), what a checkpoint saves as `objective.bpk`.
    /// `id` is the checkpoint's id (its state file holds it too): the record is bound to it.
    pub fn record(&self, id: u64) -> ModuleRecord {
        states_record(&self.states(), Some(id))
    }

    /// The state of every task (named vectors).
    fn states(&self) -> Vec<State> {
        match self {
            Trainer::Batches(objectives) => objectives.iter().map(BatchObjective::state).collect(),
            Trainer::Sbcd(s) => vec![s.state().vectors()],
            Trainer::Asgda(run) => vec![run.objective.state()],
        }
    }

    /// Continue from a checkpoint's `objective.bpk`, which must be bound to the checkpoint's
    /// `id` (its state file's; `None` for checkpoints written before records were bound).
    ///
    /// # Errors
    /// [`RunError::Train`] naming the method for a record of another method, another number
    /// of tasks or another training set, of another checkpoint, or holding a value that is
    /// not finite.
    pub fn load_record(&mut self, record: ModuleRecord, id: Option<u64>) -> Result<(), RunError> {
        let name = match self {
            Trainer::Batches(objectives) => objectives.first().map_or("CE", BatchObjective::name),
            Trainer::Sbcd(_) => "AGD-SBCD",
            Trainer::Asgda(run) => run.objective.name(),
        };
        let saved = load_states(&self.states(), name, record, id).map_err(TrainError::from)?;
        match self {
            Trainer::Batches(objectives) => {
                for (o, state) in objectives.iter_mut().zip(saved) {
                    o.objective_mut().set_state(state)?;
                }
            }
            Trainer::Sbcd(s) => {
                for state in saved {
                    s.set_vectors(state)?;
                }
            }
            Trainer::Asgda(run) => {
                for state in saved {
                    run.objective.objective_mut().set_state(state)?;
                }
            }
        }
        Ok(())
    }

    /// ASGDA's network direction as a module shaped like `model`, what a checkpoint keeps in
    /// its second-module slot (`anchor.bpk`); None for the other methods and before the first
    /// step.
    pub fn direction_module<M: Scorer>(&self, model: &M) -> Option<M> {
        match self {
            Trainer::Asgda(run) => run.direction.to_module(model),
            _ => None,
        }
    }

    /// Continue ASGDA's network direction from a checkpoint's second module.
    ///
    /// # Errors
    /// [`RunError::Setting`] for an ASGDA checkpoint after `steps_done > 0` steps without it.
    pub fn set_direction<M: Scorer>(
        &mut self,
        module: Option<&M>,
        steps_done: usize,
    ) -> Result<(), RunError> {
        if let Trainer::Asgda(run) = self {
            match module {
                Some(m) => run.direction = StormDirection::from_module(m),
                None if steps_done > 0 => {
                    return Err(RunError::Setting {
                        key: "resume",
                        message: "the checkpoint holds no ASGDA direction (anchor.bpk): it \
                                  cannot continue this run (choose another out, or resume = \
                                  false)"
                            .into(),
                    });
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Continue from the objective state of a checkpoint written before 2026-11-26, which
    /// `state.cbor` held.
    ///
    /// # Errors
    /// [`RunError::Pauc`] when AGD-SBCD's saved duals do not fit this training set,
    /// [`RunError::Setting`] for a checkpoint of another method or another number of tasks.
    pub fn restore_legacy(&mut self, state: ObjectiveState) -> Result<(), RunError> {
        let fits = match (self, state) {
            (Trainer::Sbcd(s), ObjectiveState::Sbcd(saved)) => {
                s.restore(saved)?;
                true
            }
            (Trainer::Batches(objectives), ObjectiveState::Tasks(saved)) => {
                saved.len() == objectives.len()
                    && objectives
                        .iter_mut()
                        .zip(saved)
                        .all(|(o, state)| o.restore_legacy(state))
            }
            (Trainer::Batches(objectives), saved) => match objectives.as_mut_slice() {
                [one] => one.restore_legacy(saved),
                _ => false,
            },
            (Trainer::Sbcd(_), _) | (Trainer::Asgda(_), _) => false,
        };
        if fits {
            Ok(())
        } else {
            Err(RunError::Setting {
                key: "method",
                message: "the checkpoint in out was written by another method or for another \
                          number of tasks (choose another out, or resume = false)"
                    .into(),
            })
        }
    }

    /// One period from `model` with at most `left` steps: `period_steps` batches (an epoch, or
    /// the recipe's `eval_every`; shortened to the budget), or one outer iteration of AGD-SBCD
    /// shortened to the budget.
    /// `None` when AGD-SBCD's remainder is smaller than one step per call (left unused).
    ///
    /// # Errors
    /// [`RunError::Diverged`] for a non-finite score, loss or gradient; [`RunError`] for
    /// unreadable data.
    #[allow(clippy::too_many_arguments)]
    pub fn period<M: Scorer>(
        &mut self,
        model: M,
        ctx: &PeriodContext<'_>,
        stepper: &mut Stepper,
        sampler: &mut BatchSampler,
        steps_done: usize,
        left: usize,
        period_steps: usize,
    ) -> Result<Option<Period<M>>, RunError> {
        let period = match self {
            Trainer::Sbcd(s) => sbcd_period(s, model, ctx, steps_done, left)?,
            Trainer::Batches(objectives) => {
                let steps = period_steps.min(left);
                Some(batch_period(
                    objectives, model, ctx, stepper, sampler, steps_done, steps,
                )?)
            }
            Trainer::Asgda(run) => {
                let steps = period_steps.min(left);
                Some(asgda_period(
                    run, model, ctx, stepper, sampler, steps_done, steps,
                )?)
            }
        };
        period.map(|p| finite_period(p, steps_done)).transpose()
    }
}

/// The divergence rule, the same for every method: a run has diverged as soon as a number of
/// its training state is not finite. Within a period the steps refuse a non-finite training
/// score, batch loss or loss gradient (AGD-SBCD: a block score); after it, this checks the
/// period's mean loss and every parameter and buffer (batch-norm running statistics) of the
/// model and of AGD-SBCD's candidate `v_bar_n`, whose blow-up can leave the scores finite (an
/// infinite convolution weight whose batch norm turns every evaluation score into one
/// constant). The evaluation then refuses a non-finite validation or test score. A large but
/// finite loss alone is not divergence. The period is not checkpointed: the run stops with
/// [`RunError::Diverged`] and keeps the last good evaluation point's checkpoint.
fn finite_period<M: Scorer>(period: Period<M>, steps_done: usize) -> Result<Period<M>, RunError> {
    let step = steps_done + period.steps;
    if !period.loss.is_finite() {
        return Err(RunError::Diverged {
            step,
            quantity: format!("the period's mean training loss is {}", period.loss),
        });
    }
    for (which, model) in [
        ("the model", Some(&period.model)),
        ("AGD-SBCD's candidate v_bar_n", period.candidate.as_ref()),
    ] {
        if let Some((parameter, count)) = model.and_then(|m| first_non_finite(m)) {
            return Err(RunError::Diverged {
                step,
                quantity: format!(
                    "parameter `{parameter}` of {which} holds {count} NaN or infinite values"
                ),
            });
        }
    }
    Ok(period)
}

/// The forward pass of AGD-SBCD over training ids: scores on the given autodiff device (a
/// shard's), training mode.
fn forward<'a, M: Scorer>(
    ctx: &'a PeriodContext<'a>,
) -> impl FnMut(&M, &[usize], &Device) -> Result<burn::tensor::Tensor<1>, RunError> + Clone + 'a {
    move |m: &M, ids: &[usize], device: &Device| Ok(m.score(ctx.train.batch(ids, device)?.inputs))
}

/// One outer iteration of AGD-SBCD (two SBCD calls), shortened to fit `left` steps.
fn sbcd_period<M: Scorer>(
    s: &mut DeepSbcd,
    model: M,
    ctx: &PeriodContext<'_>,
    steps_done: usize,
    left: usize,
) -> Result<Option<Period<M>>, RunError> {
    if left < s.calls() {
        if steps_done == 0 {
            // Nothing would be trained: say which setting makes the budget that small.
            return Err(RunError::Setting {
                key: "epochs",
                message: format!(
                    "a budget of {left} steps (epochs x ceil(n / batch)) is smaller than one \
                     SBCD step per AGD-SBCD call ({}): nothing would be trained (raise epochs)",
                    s.calls()
                ),
            });
        }
        return Ok(None);
    }
    let mut dual_seconds = 0.0;
    if s.refreshes_duals() && s.state().k > 0 {
        let t = Instant::now();
        s.reset_duals(&score_all(&model.valid(), ctx.train, ctx.device)?)?;
        dual_seconds = t.elapsed().as_secs_f64();
    }
    let t = Instant::now();
    let (w, v_n, rec) = s
        .outer_step_within(model, left, ctx.shards, forward(ctx))
        .map_err(diverged(steps_done))?;
    let step_ms = 1e3 * t.elapsed().as_secs_f64() / rec.steps.max(1) as f64;
    // The duals are part of the training state: the same rule as the model's parameters.
    for (level, duals) in [("m", &s.state().duals_m), ("n", &s.state().duals_n)] {
        if let Some((i, v)) = duals
            .lambda
            .iter()
            .enumerate()
            .find(|(_, v)| !v.is_finite())
        {
            return Err(RunError::Diverged {
                step: steps_done + rec.steps,
                quantity: format!("the level-{level} dual of positive {i} is {v}"),
            });
        }
    }
    ctx.bar.set_position((steps_done + rec.steps) as u64);
    Ok(Some(Period {
        model: w,
        candidate: Some(v_n),
        diagnostics: Some(rec.diagnostics),
        steps: rec.steps,
        loss: rec.sampled_loss,
        cpu_seconds: rec.cpu_seconds,
        dual_seconds,
        step_ms,
        lr: None,
    }))
}
