//! A complete training run of an image scorer on a binary task with one of the pAUC paper's
//! deep methods, the same way for every data set: AGD-SBCD, CE (Adam), AUC-M (PESG) or
//! mini-batch pAUC at an equal budget of samples; evaluation (AUC, pAUC in the FPR range) on the
//! validation and test sets after every period (an epoch, or an AGD-SBCD outer iteration); the
//! best model by validation pAUC; metrics, plots, a checkpoint per period and `resume`.
//!
//! - [`config`]: the settings ([`RunConfig`], [`Method`]);
//! - `method`: the method as a value the loop calls, one period at a time;
//! - [`evaluate`]: scoring the validation and test sets, `rankrisk eval`'s report;
//! - `point`: an evaluation point (each candidate scored, its row recorded and reported, the
//!   best saved);
//! - [`record`]: the rows, the summary and the files written from them;
//! - [`error`]: why a run stops, [`RunError`];
//! - this module: the loop ([`train_image_task`]) and what its checkpoint holds.

mod batches;
pub mod config;
mod defaults;
pub mod error;
pub mod evaluate;
mod loop_state;
pub(crate) mod method;
mod period;
mod point;
mod prefetch;
pub mod record;
mod resolve;
pub mod resume;
mod validate;

use std::io::Write as _;
use std::time::Instant;

use burn::optim::ModuleOptimizer;
use burn::tensor::Device;
use indicatif::{ProgressBar, ProgressStyle};
use rankrisk_datasets::ImageSource;
use rankrisk_models::Scorer;

use crate::device::remote::autodiff_device_of;
use crate::train::checkpoint;
use crate::train::parallel::Shards;
use crate::train::run::loop_state::LoopState;
use crate::train::run::method::Trainer;
use crate::train::run::period::{PeriodContext, Stepper};
use crate::train::run::point::Points;
use crate::train::run::record::{curves_plot, say, write_metrics};
use crate::train::run::resume::{DataFingerprint, SetFingerprint};

pub use config::{BackendArg, Method, RunConfig, Select};
pub use error::RunError;
pub use evaluate::{EvalReport, TaskEval, evaluate_model, score_all};
pub use record::{Candidate, EpochMetrics, RunSummary, TaskFigures};

/// The progress bar of a run (hidden when `cfg.quiet`).
fn progress_bar(cfg: &RunConfig, budget: usize, done: usize) -> ProgressBar {
    if cfg.quiet {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(budget as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix} [{bar:30}] step {pos}/{len} {msg} {per_sec} ETA {eta}",
    ) {
        b.set_style(style.progress_chars("=> "));
    }
    b.set_prefix(cfg.method.name());
    b.set_position(done as u64);
    b
}

/// The devices of a run: `device` (the model's) and the autodiff devices of `cfg.devices`
/// after the first (data parallelism, remote devices connected here), or `device` alone.
/// ([`RunConfig::validate`] has refused a remote first device.)
///
/// # Errors
/// [`RunError::Setting`] for a device that cannot be opened or reached.
fn data_parallel(cfg: &RunConfig, device: &Device) -> Result<Shards, RunError> {
    let setting = |message: String| RunError::Setting {
        key: "devices",
        message,
    };
    let mut devices = vec![device.clone()];
    for spec in cfg.devices.iter().skip(1) {
        devices.push(autodiff_device_of(spec).map_err(|e| setting(format!("{spec}: {e}")))?);
    }
    Shards::new(devices).map_err(|e| setting(e.to_string()))
}

/// The fingerprint of a run's sets (`train_labels`: the training set's labels per task).
fn fingerprint(
    train_labels: &[Vec<f64>],
    val: &dyn ImageSource,
    test: Option<&dyn ImageSource>,
) -> DataFingerprint {
    DataFingerprint {
        train: SetFingerprint::of(train_labels),
        validation: SetFingerprint::of(&labels_of(val)),
        test: test.map(|t| SetFingerprint::of(&labels_of(t))),
    }
}

/// The labels of each task of `s`.
fn labels_of(s: &dyn ImageSource) -> Vec<Vec<f64>> {
    (0..s.tasks()).map(|t| s.task_labels(t)).collect()
}

/// Train `model` (on the autodiff `device`) with `cfg`, evaluating on `val` and `test`.
///
/// # Errors
/// [`RunError`] for bad data, a refused batch, a diverged run, or an unwritable output folder.
pub fn train_image_task<M: Scorer>(
    model: M,
    train: &dyn ImageSource,
    val: &dyn ImageSource,
    test: Option<&dyn ImageSource>,
    device: &Device,
    cfg: &RunConfig,
) -> Result<RunSummary, RunError> {
    // On a worker of Rayon's pool, where the kernels' parallel loops start without a wake-up
    // (`on_pool`'s docs).
    rankrisk_models::kernels::on_pool(|| train_on_worker(model, train, val, test, device, cfg))
}

fn train_on_worker<M: Scorer>(
    model: M,
    train: &dyn ImageSource,
    val: &dyn ImageSource,
    test: Option<&dyn ImageSource>,
    device: &Device,
    cfg: &RunConfig,
) -> Result<RunSummary, RunError> {
    cfg.validate()?;
    check_selection(cfg, train.tasks())?;
    let _lock = checkpoint::RunLock::acquire(&cfg.out)?;
    let task_labels = labels_of(train);
    let n = train.len();
    let data = fingerprint(&task_labels, val, test);
    let steps_per_epoch = n.div_ceil(cfg.batch);
    let budget = cfg.step_budget(n)?;
    let shards = data_parallel(cfg, device)?;
    let mut trainer = Trainer::new(cfg, &task_labels)?;
    let hidden = ProgressBar::hidden();
    let start_ctx = PeriodContext {
        train,
        device,
        cfg,
        bar: &hidden,
        shards: &shards,
    };
    let (mut model, optim, mut st) =
        start_or_resume(model, &mut trainer, &start_ctx, &task_labels, data)?;
    let mut stepper = Stepper::new(optim, cfg, steps_per_epoch, budget, st.steps_done)?;
    let period_steps = cfg.recipe.period_steps(steps_per_epoch);
    let bar = progress_bar(cfg, budget, st.steps_done);
    let ctx = PeriodContext {
        bar: &bar,
        ..start_ctx
    };
    let points = Points::new((val, test), device, cfg, &bar, n);
    while st.steps_done < budget {
        let start = Instant::now();
        let left = budget - st.steps_done;
        let Some(period) = trainer.period(
            model,
            &ctx,
            &mut stepper,
            &mut st.sampler,
            st.steps_done,
            left,
            period_steps,
        )?
        else {
            break;
        };
        st.steps_done += period.steps;
        st.dual_seconds += period.dual_seconds;
        st.train_seconds += start.elapsed().as_secs_f64();
        st.cpu_seconds += period.cpu_seconds;
        // Evaluation (not counted in the training time): the iterate, and for AGD-SBCD also
        // v_bar_n^(k); each row can become the best model.
        let eval_start = Instant::now();
        points.evaluate(
            &period.model.valid(),
            Candidate::W,
            &period,
            &mut st,
            eval_start,
        )?;
        if let Some(v) = &period.candidate {
            points.evaluate(v, Candidate::VBarN, &period, &mut st, eval_start)?;
        }
        model = period.model;
        st.eval_seconds += eval_start.elapsed().as_secs_f64();
        save_point(cfg, &trainer, &model, &stepper, &mut st)?;
    }
    finish(st, &bar, cfg)
}

/// The files of an evaluation point: the metrics, and the checkpoint (model, ASGDA's
/// direction in the second-module slot, optimizer, the objective's record, the loop state).
fn save_point<M: Scorer>(
    cfg: &RunConfig,
    trainer: &Trainer,
    model: &M,
    stepper: &Stepper,
    st: &mut LoopState,
) -> Result<(), RunError> {
    let t = Instant::now();
    write_metrics(&cfg.out, &st.history).map_err(RunError::output(&cfg.out))?;
    st.checkpoint_id = Some(loop_state::new_checkpoint_id());
    let dir = cfg.out.join("checkpoint");
    let record = st.checkpoint_id.map(|id| trainer.record(id));
    let direction = trainer.direction_module(model);
    checkpoint::save(&dir, model, direction.as_ref(), &stepper.optim, record, st)?;
    st.checkpoint_seconds += t.elapsed().as_secs_f64();
    Ok(())
}

/// `select = "two-way"` picks one task's model: refused for a multi-label run.
fn check_selection(cfg: &RunConfig, tasks: usize) -> Result<(), RunError> {
    if cfg.select == Select::TwoWay && tasks > 1 {
        return Err(RunError::Setting {
            key: "select",
            message: format!(
                "two-way selects one task's model; this run has {tasks} tasks (select = \"pauc\")"
            ),
        });
    }
    Ok(())
}

/// The model, the optimizer and the loop state a run starts from: a fresh start (the
/// method's own start, such as AGD-SBCD's first duals, at `cfg.init_model`'s weights when
/// set), or the checkpoint of `cfg.out` when
/// `cfg.resume`, its settings and data compared with this run's before the model is read (a
/// changed run is told what changed rather than that its model does not fit).
///
/// # Errors
/// [`RunError`] for a checkpoint that is missing, corrupted or of another run.
fn start_or_resume<M: Scorer>(
    model: M,
    trainer: &mut Trainer,
    ctx: &PeriodContext<'_>,
    task_labels: &[Vec<f64>],
    data: DataFingerprint,
) -> Result<(M, ModuleOptimizer, LoopState), RunError> {
    let cfg = ctx.cfg;
    if cfg.resume {
        let ckpt = cfg.out.join("checkpoint");
        let saved: LoopState = checkpoint::read_state(&ckpt)?;
        resume::check(&saved.config, saved.data.as_ref(), cfg, &data)?;
        let loaded: checkpoint::Loaded<M, LoopState> =
            checkpoint::load(&ckpt, model, Trainer::optimizer(cfg))?;
        let mut st = loaded.state;
        match (loaded.objective, st.objective.take()) {
            (Some(record), _) => trainer.load_record(record, st.checkpoint_id)?,
            (None, Some(legacy)) => trainer.restore_legacy(legacy)?,
            (None, None) => {
                return Err(RunError::Setting {
                    key: "resume",
                    message: format!(
                        "the checkpoint in {} holds no objective state (no objective.bpk): it \
                         cannot continue this run (choose another out, or resume = false)",
                        ckpt.display()
                    ),
                });
            }
        }
        trainer.set_direction(loaded.anchor.as_ref(), st.steps_done)?;
        (st.config, st.data) = (cfg.clone(), Some(data));
        return Ok((loaded.model, loaded.optim, st));
    }
    let model = match &cfg.init_model {
        Some(path) => {
            rankrisk_models::checkpoint::load(model, path).map_err(RunError::InitModel)?
        }
        None => model,
    };
    trainer.start(&model, ctx)?;
    let st = LoopState {
        config: cfg.clone(),
        data: Some(data),
        objective: None,
        checkpoint_id: None,
        sampler: Trainer::sampler(cfg, task_labels)?,
        steps_done: 0,
        history: Vec::new(),
        train_seconds: 0.0,
        cpu_seconds: 0.0,
        dual_seconds: 0.0,
        eval_seconds: 0.0,
        checkpoint_seconds: 0.0,
    };
    Ok((model, Trainer::optimizer(cfg), st))
}

/// The run's closing lines, its training-curve plot and `summary.json`; the summary with the
/// best point (the first with the highest validation pAUC: the one saved as `best.bpk`).
///
/// # Errors
/// [`RunError::NothingRun`] when no point was evaluated; an unwritable summary.
fn finish(st: LoopState, bar: &ProgressBar, cfg: &RunConfig) -> Result<RunSummary, RunError> {
    if st.dual_seconds > 0.0 {
        say(
            bar,
            !cfg.quiet,
            format!(
                "dual re-estimation: {:.1} s of the training time",
                st.dual_seconds
            ),
        );
    }
    say(
        bar,
        !cfg.quiet,
        format!(
            "time: {:.1} s training, {:.1} s evaluation, {:.1} s checkpoints and metrics files",
            st.train_seconds, st.eval_seconds, st.checkpoint_seconds
        ),
    );
    bar.finish_and_clear();
    let best = st
        .history
        .iter()
        .fold(None, |b: Option<&EpochMetrics>, h| match b {
            Some(b) if h.beats(b, cfg.select) => Some(h),
            Some(b) => Some(b),
            None => Some(h),
        })
        .ok_or(RunError::NothingRun)?
        .clone();
    if let Err(e) = curves_plot(&cfg.out.join("curves.png"), cfg.method.name(), &st.history) {
        // A warning that cannot be written is dropped (never a panic).
        let _ = writeln!(std::io::stderr(), "no training-curve plot: {e}");
    }
    let summary = RunSummary {
        config: cfg.clone(),
        history: st.history,
        best,
    };
    let path = cfg.out.join("summary.json");
    let json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other);
    std::fs::write(&path, json.map_err(RunError::output(&path))?)
        .map_err(RunError::output(&path))?;
    Ok(summary)
}
