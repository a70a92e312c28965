//! A complete training run of an image scorer on a binary task with one of the pAUC paper's
//! deep methods, the same way for every data set: AGD-SBCD, CE (Adam), AUC-M (PESG) or
//! mini-batch pAUC at an equal budget of samples; evaluation (AUC, pAUC in the FPR range) on the
//! validation and test sets after every period (an epoch, or an AGD-SBCD outer iteration); the
//! best model by validation pAUC; metrics, plots, a checkpoint per period and `resume`.
//!
//! - [`config`]: the settings ([`RunConfig`], [`Method`]);
//! - `method`: the method as a value the loop calls, one period at a time;
//! - [`evaluate`]: scoring the validation and test sets, `rankrisk eval`'s report;
//! - [`record`]: the rows, the summary and the files written from them;
//! - [`error`]: why a run stops, [`RunError`];
//! - this module: the loop ([`train_image_task`]) and what its checkpoint holds.

mod batches;
pub mod config;
pub mod error;
pub mod evaluate;
pub(crate) mod method;
mod period;
mod prefetch;
pub mod record;
pub mod resume;

use std::io::Write as _;
use std::time::Instant;

use burn::tensor::Device;
use indicatif::{ProgressBar, ProgressStyle};
use rankrisk_datasets::ImageSource;
use rankrisk_datasets::sampler::BatchSampler;
use rankrisk_models::Scorer;
use serde::{Deserialize, Serialize};

use crate::metrics::ci::Bootstrap;
use crate::remote::autodiff_device_of;
use crate::train::checkpoint;
use crate::train::parallel::Shards;
use crate::train::run::evaluate::{column, evaluate_point};
use crate::train::run::method::Trainer;
use crate::train::run::period::{ObjectiveState, PeriodContext};
use crate::train::run::record::{curves_plot, roc_plot, say, write_metrics, write_scores};
use crate::train::run::resume::{DataFingerprint, SetFingerprint};

pub use config::{Method, RunConfig};
pub use error::RunError;
pub use evaluate::{EvalReport, TaskEval, evaluate_model, score_all};
pub use record::{Candidate, EpochMetrics, RunSummary, TaskFigures};

/// What the checkpoint holds besides the model and the optimizer.
#[derive(Serialize, Deserialize)]
struct LoopState {
    config: RunConfig,
    /// The sets the run trained and evaluated on (absent in checkpoints written before
    /// 2026-11-25).
    #[serde(default)]
    data: Option<DataFingerprint>,
    objective: ObjectiveState,
    sampler: BatchSampler,
    steps_done: usize,
    history: Vec<EpochMetrics>,
    train_seconds: f64,
    cpu_seconds: f64,
    #[serde(default)]
    dual_seconds: f64,
    #[serde(default)]
    eval_seconds: f64,
    #[serde(default)]
    checkpoint_seconds: f64,
}

/// The progress bar of a run (hidden when `cfg.progress` is off).
fn progress_bar(cfg: &RunConfig, budget: usize, done: usize) -> ProgressBar {
    if !cfg.progress {
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
    cfg.validate()?;
    let _lock = checkpoint::RunLock::acquire(&cfg.out)?;
    let task_labels: Vec<Vec<f64>> = (0..train.tasks()).map(|t| train.task_labels(t)).collect();
    let n = train.len();
    // The set ROC curves are drawn for (test, else validation) and its labels per task.
    let (roc_set, roc_source) = match test {
        Some(t) => ("test", t),
        None => ("validation", val),
    };
    let roc_labels: Vec<Vec<f64>> = (0..roc_source.tasks())
        .map(|t| roc_source.task_labels(t))
        .collect();
    let task_names: Vec<String> = (0..roc_source.tasks())
        .map(|t| roc_source.task_name(t))
        .collect();
    let labels_of = |s: &dyn ImageSource| -> Vec<Vec<f64>> {
        (0..s.tasks()).map(|t| s.task_labels(t)).collect()
    };
    let data = DataFingerprint {
        train: SetFingerprint::of(&task_labels),
        validation: SetFingerprint::of(&labels_of(val)),
        test: test.map(|t| SetFingerprint::of(&labels_of(t))),
    };
    let ckpt = cfg.out.join("checkpoint");
    let steps_per_epoch = n.div_ceil(cfg.batch);
    let budget = cfg.step_budget(n)?;
    let hidden = ProgressBar::hidden();
    let shards = data_parallel(cfg, device)?;
    let mut trainer = Trainer::new(cfg, &task_labels)?;
    let start_ctx = PeriodContext {
        train,
        device,
        cfg,
        bar: &hidden,
        shards: &shards,
    };
    if !cfg.resume {
        trainer.start(&model, &start_ctx)?;
    }
    let (mut model, mut optim, mut st) = if cfg.resume {
        // The settings and the data are compared before the model is read, so that a
        // changed run is told what changed rather than that its model does not fit.
        let saved: LoopState = checkpoint::read_state(&ckpt)?;
        resume::check(&saved.config, saved.data.as_ref(), cfg, &data)?;
        let (m, _, o, mut st): (M, Option<M>, _, LoopState) =
            checkpoint::load(&ckpt, model, Trainer::optimizer(cfg))?;
        (st.config, st.data) = (cfg.clone(), Some(data.clone()));
        trainer.restore(st.objective.clone())?;
        (m, o, st)
    } else {
        let st = LoopState {
            config: cfg.clone(),
            data: Some(data.clone()),
            objective: trainer.state(),
            sampler: Trainer::sampler(cfg, &task_labels)?,
            steps_done: 0,
            history: Vec::new(),
            train_seconds: 0.0,
            cpu_seconds: 0.0,
            dual_seconds: 0.0,
            eval_seconds: 0.0,
            checkpoint_seconds: 0.0,
        };
        (model, Trainer::optimizer(cfg), st)
    };
    let bar = progress_bar(cfg, budget, st.steps_done);
    let boot = Bootstrap {
        resamples: cfg.bootstrap,
        seed: cfg.seed,
        level: 0.95,
    };
    let ctx = PeriodContext {
        train,
        device,
        cfg,
        bar: &bar,
        shards: &shards,
    };
    while st.steps_done < budget {
        let start = Instant::now();
        let left = budget - st.steps_done;
        let Some(period) = trainer.period(
            model,
            &ctx,
            &mut optim,
            &mut st.sampler,
            st.steps_done,
            left,
            steps_per_epoch,
        )?
        else {
            break;
        };
        model = period.model;
        st.steps_done += period.steps;
        st.objective = trainer.state();
        st.dual_seconds += period.dual_seconds;
        st.train_seconds += start.elapsed().as_secs_f64();
        st.cpu_seconds += period.cpu_seconds;
        // Evaluation (not counted in the training time): the iterate, and for AGD-SBCD also
        // v_bar_n^(k); each row can become the best model.
        let eval_start = Instant::now();
        let plain = model.valid();
        let mut rows = vec![(Candidate::W, &plain)];
        if let Some(v) = &period.candidate {
            rows.push((Candidate::VBarN, v));
        }
        for (which, scorer) in rows {
            let t = Instant::now();
            let e = evaluate_point(
                scorer,
                val,
                test,
                device,
                ((cfg.alpha, cfg.beta), &boot),
                st.steps_done,
            )?;
            let scoring = t.elapsed().as_secs_f64();
            let rec = EpochMetrics {
                epoch: st
                    .history
                    .iter()
                    .filter(|h| h.candidate == Candidate::W)
                    .count()
                    + usize::from(which == Candidate::W),
                epochs_seen: (st.steps_done * cfg.batch) as f64 / n as f64,
                train_loss: period.loss,
                val_auc: e.val_auc,
                val_pauc: e.val_pauc,
                test_auc: e.test_auc,
                test_pauc: e.test_pauc,
                test_auc_ci: e.test_auc_ci,
                test_pauc_ci: e.test_pauc_ci,
                seconds: st.train_seconds,
                eval_seconds: st.eval_seconds + eval_start.elapsed().as_secs_f64(),
                checkpoint_seconds: st.checkpoint_seconds,
                cpu_share: st.cpu_seconds / st.train_seconds.max(1e-12),
                candidate: which,
                sbcd: period.diagnostics,
                tasks: e.tasks,
                step_ms: period.step_ms,
            };
            let is_best = st.history.iter().all(|h| rec.val_pauc > h.val_pauc);
            st.history.push(rec.clone());
            if is_best {
                rankrisk_models::checkpoint::save(scorer, &cfg.out.join("best.bpk"))?;
                let scores = e.test_scores.as_ref().unwrap_or(&e.val_scores);
                let k = roc_labels.len();
                let columns: Vec<Vec<f64>> = (0..k).map(|t| column(scores, k, t)).collect();
                let curves: Vec<_> = columns
                    .iter()
                    .zip(&roc_labels)
                    .enumerate()
                    .map(|(t, (s, y))| {
                        let task = match k {
                            1 => String::new(),
                            _ => format!("{}, ", task_names[t]),
                        };
                        let name = format!(
                            "{task}{} (epoch {}, {})",
                            cfg.method.name(),
                            rec.epoch,
                            which.name()
                        );
                        (s.as_slice(), y.as_slice(), name)
                    })
                    .collect();
                let path = cfg.out.join("roc.png");
                if let Err(e) = roc_plot(&path, &curves, roc_set, (cfg.alpha, cfg.beta)) {
                    say(&bar, cfg.progress, format!("no ROC plot: {e}"));
                }
                write_scores(&cfg.out, roc_set, scores, &roc_labels, &task_names)
                    .map_err(RunError::output(&cfg.out))?;
            }
            let extra = match (&rec.sbcd, which) {
                (Some(d), Candidate::W) => format!(
                    " [active m {:.3} n {:.3}, lambda_m - lambda_n {:.3} ({:.3})]",
                    d.active_m, d.active_n, d.gap_mean, d.gap_std
                ),
                (_, Candidate::VBarN) => " [v_bar_n]".to_string(),
                _ => String::new(),
            };
            say(
                &bar,
                cfg.progress,
                format!(
                    "epoch {} ({:.2} passes): loss {:.4}, val AUC {:.4} pAUC {:.4}, test AUC {:.4} pAUC {:.4}, {:.1} s training (scoring {scoring:.1} s){extra}",
                    rec.epoch,
                    rec.epochs_seen,
                    rec.train_loss,
                    rec.val_auc,
                    rec.val_pauc,
                    rec.test_auc,
                    rec.test_pauc,
                    rec.seconds
                ),
            );
        }
        st.eval_seconds += eval_start.elapsed().as_secs_f64();
        let t = Instant::now();
        write_metrics(&cfg.out, &st.history).map_err(RunError::output(&cfg.out))?;
        checkpoint::save(&ckpt, &model, None, &optim, &st)?;
        st.checkpoint_seconds += t.elapsed().as_secs_f64();
    }
    if st.dual_seconds > 0.0 {
        say(
            &bar,
            cfg.progress,
            format!(
                "dual re-estimation: {:.1} s of the training time",
                st.dual_seconds
            ),
        );
    }
    say(
        &bar,
        cfg.progress,
        format!(
            "time: {:.1} s training, {:.1} s evaluation, {:.1} s checkpoints and metrics files",
            st.train_seconds, st.eval_seconds, st.checkpoint_seconds
        ),
    );
    bar.finish_and_clear();
    // The first point with the highest validation pAUC: the one saved as best.bpk above.
    let best = st
        .history
        .iter()
        .fold(None, |b: Option<&EpochMetrics>, h| match b {
            Some(b) if h.val_pauc > b.val_pauc => Some(h),
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
        history: st.history.clone(),
        best,
    };
    let path = cfg.out.join("summary.json");
    let json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other);
    std::fs::write(&path, json.map_err(RunError::output(&path))?)
        .map_err(RunError::output(&path))?;
    Ok(summary)
}
