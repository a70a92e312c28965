//! Training an image scorer on a binary task with one of the pAUC paper's deep methods, the
//! same way for every data set: AGD-SBCD, CE (Adam), AUC-M (PESG) or mini-batch pAUC, an equal
//! budget of samples, evaluation (AUC, pAUC in the FPR range) on the validation and test sets
//! after every epoch (every outer iteration for AGD-SBCD), the best model by validation pAUC,
//! metrics to CSV and JSON, PNG plots (training curves, ROC with the FPR range shaded), a
//! checkpoint after every epoch and `resume`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::Device;
use indicatif::{ProgressBar, ProgressStyle};
use rankrisk_datasets::DataError;
use rankrisk_datasets::batcher::{ChexpertBatcher, ImageBatch, ImageBatcher};
use rankrisk_datasets::sampler::DualSampler;
use serde::{Deserialize, Serialize};

use crate::bridge::{BridgeError, scores_to_cpu, surrogate};
use crate::metrics::auc::{auc, pauc, roc_curve};
use crate::pauc::agd::{AgdSbcdConfig, SbcdError, SbcdState};
use crate::pauc::objective::PairLoss;
use crate::pauc::sbcd::{DualInit, OuterDiagnostics};
use crate::plot::{Series, roc, two_panel_curves};
use crate::train::baselines::{AucM, MiniBatchPauc};
use crate::train::checkpoint;
use crate::train::learner::ImageScorer;
use crate::train::objective::{Erm, Objective, TrainError};
use crate::train::params::Snapshot;
use crate::train::sbcd::DeepSbcd;

/// A binary image data set that can be batched by sample id.
pub trait ImageSource: Send + Sync {
    /// Number of samples.
    fn len(&self) -> usize;
    /// Whether there are no samples.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Labels in {-1, +1}, id order.
    fn labels(&self) -> Vec<f64>;
    /// The samples `ids` as a batch on `device`.
    ///
    /// # Errors
    /// A [`DataError`] naming an unreadable image or a bad id.
    fn batch(&self, ids: &[usize], device: &Device) -> Result<ImageBatch, DataError>;
}

impl ImageSource for ImageBatcher {
    fn len(&self) -> usize {
        self.set().positive.len()
    }
    fn labels(&self) -> Vec<f64> {
        self.set().signed_labels()
    }
    fn batch(&self, ids: &[usize], device: &Device) -> Result<ImageBatch, DataError> {
        self.try_batch(ids, device)
    }
}

impl ImageSource for ChexpertBatcher {
    fn len(&self) -> usize {
        self.set().len()
    }
    fn labels(&self) -> Vec<f64> {
        (0..self.set().len())
            .map(|i| {
                if self.set().label(i)[0] == 1 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect()
    }
    fn batch(&self, ids: &[usize], device: &Device) -> Result<ImageBatch, DataError> {
        self.try_batch(ids, device)
    }
}

/// The training method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// AGD-SBCD (pAUC paper, Algorithms 1-2).
    Sbcd,
    /// Cross-entropy with Adam.
    Ce,
    /// AUC-M with PESG (Yuan et al. 2021).
    Aucm,
    /// Mini-batch pAUC (Kar et al. 2014).
    Mb,
}

impl Method {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Sbcd => "AGD-SBCD",
            Method::Ce => "CE",
            Method::Aucm => "AUC-M",
            Method::Mb => "MB",
        }
    }
}

/// Settings of an image training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Method.
    pub method: Method,
    /// Budget in epochs (passes of `n` samples).
    pub epochs: usize,
    /// Samples per step (half positives, half negatives).
    pub batch: usize,
    /// Learning rate (c of AGD-SBCD).
    pub lr: f64,
    /// AGD-SBCD: `T_k = t_scale (k+1)^2` SBCD steps per call (paper: 50).
    pub t_scale: usize,
    /// AGD-SBCD: `mu = mu_scale / (N+ N-)` (paper: 1e3).
    pub mu_scale: f64,
    /// AGD-SBCD: `gamma = gamma_scale / (N+ N-)` (paper: {0.1, 1, 2} x 1e3).
    pub gamma_scale: f64,
    /// AGD-SBCD: forward passes that re-estimate batch-norm statistics after each AGD step.
    pub refresh_steps: usize,
    /// AGD-SBCD: dual step constant (None: `lr`, as Algorithm 2).
    #[serde(default)]
    pub c_dual: Option<f64>,
    /// AGD-SBCD: how the duals start.
    #[serde(default)]
    pub dual_init: DualInit,
    /// AGD-SBCD: re-set the duals to eq. (19) before every outer iteration.
    #[serde(default)]
    pub dual_refresh: bool,
    /// AGD-SBCD: the m- and n-calls draw the same blocks.
    #[serde(default)]
    pub common_blocks: bool,
    /// FPR range start.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
    /// Seed of the samplers.
    pub seed: u64,
    /// Output folder (metrics, plots, checkpoint).
    pub out: PathBuf,
    /// Continue from the checkpoint in `out`.
    pub resume: bool,
    /// Show a progress bar.
    pub progress: bool,
}

impl RunConfig {
    /// Check every setting before any data is read or any step is taken: a budget of at least
    /// one pass, a batch of at least 2, a positive finite learning rate, `0 <= alpha < beta <=
    /// 1`, and for AGD-SBCD the whole [`AgdSbcdConfig`] (`rankrisk train --dry-run` runs this).
    ///
    /// # Errors
    /// [`RunError::Setting`] naming the setting, or [`RunError::Sbcd`].
    pub fn validate(&self) -> Result<(), RunError> {
        let bad = |key, message: String| Err(RunError::Setting { key, message });
        if self.epochs == 0 {
            return bad("epochs", "the budget must be at least 1 pass".into());
        }
        if self.batch < 2 {
            return bad(
                "batch",
                format!(
                    "at least 2 samples per step (one of each class), got {}",
                    self.batch
                ),
            );
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr", format!("must be a positive number, got {}", self.lr));
        }
        if let Err(message) = crate::pauc::objective::RankRange::from_fpr(self.alpha, self.beta, 1)
        {
            return bad("alpha, beta", message);
        }
        if self.method == Method::Sbcd {
            self.sbcd_config().validate(1)?;
        }
        Ok(())
    }

    /// AGD-SBCD's settings for this run: [`AgdSbcdConfig::paper_deep`] with this run's range,
    /// seed, constants and blocks of half a batch of each class.
    pub fn sbcd_config(&self) -> AgdSbcdConfig {
        let mut c = AgdSbcdConfig::paper_deep(self.alpha, self.beta, self.seed);
        (c.c, c.t_scale, c.refresh_steps) = (self.lr, self.t_scale, self.refresh_steps);
        (c.mu_scale, c.gamma_scale) = (self.mu_scale, self.gamma_scale);
        (c.i, c.j) = (self.batch / 2, self.batch - self.batch / 2);
        (c.c_dual, c.dual_init) = (self.c_dual, self.dual_init);
        (c.dual_refresh, c.common_blocks) = (self.dual_refresh, self.common_blocks);
        c
    }

    /// Defaults for `method`: 2 epochs, batch 32, FPR [0.05, 0.5], learning rates measured on
    /// Fashion-MNIST-LT with ResNet-20 (CE 1e-3 with Adam, AUC-M 0.1, MB 0.1), AGD-SBCD with
    /// [`AgdSbcdConfig::paper_deep`]'s c = 0.1 (with the exact dual start, on the 3,000-image
    /// slice, 2 passes, seed 0: c = 0.1 test AUC 0.932, c = 1 0.876, c = 3 0.854; with the
    /// earlier mean start c = 1 had been the better one).
    pub fn new(method: Method, out: PathBuf) -> Self {
        RunConfig {
            method,
            epochs: 2,
            batch: 32,
            lr: match method {
                Method::Ce => 1e-3,
                Method::Sbcd => AgdSbcdConfig::paper_deep(0.05, 0.5, 0).c,
                _ => 0.1,
            },
            t_scale: 50,
            mu_scale: 1e3,
            gamma_scale: 1e3,
            refresh_steps: 30,
            c_dual: None,
            dual_init: DualInit::Exact,
            dual_refresh: false,
            common_blocks: false,
            alpha: 0.05,
            beta: 0.5,
            seed: 0,
            out,
            resume: false,
            progress: true,
        }
    }
}

/// Metrics after an epoch (or an AGD-SBCD outer iteration).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// Evaluation point (1-based).
    pub epoch: usize,
    /// Samples processed so far divided by the training set size.
    pub epochs_seen: f64,
    /// Mean training loss of the objective over the period.
    pub train_loss: f64,
    /// Validation AUC.
    pub val_auc: f64,
    /// Validation pAUC in the FPR range (normalized).
    pub val_pauc: f64,
    /// Test AUC (NaN without a test set).
    pub test_auc: f64,
    /// Test pAUC.
    pub test_pauc: f64,
    /// Seconds of training so far (evaluation excluded).
    pub seconds: f64,
    /// Share of the training time spent in the objective's CPU code.
    pub cpu_share: f64,
    /// Which model this row scores (AGD-SBCD evaluates two candidates per iteration).
    #[serde(default)]
    pub candidate: Candidate,
    /// AGD-SBCD's diagnostics of the iteration (None for the other methods).
    #[serde(default)]
    pub sbcd: Option<OuterDiagnostics>,
}

/// The model an evaluation row scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Candidate {
    /// The iterate the training goes on from (`w^(k+1)` for AGD-SBCD).
    #[default]
    W,
    /// AGD-SBCD's `v_bar_n^(k)`, the output Algorithm 2 names, with its own batch-norm
    /// statistics.
    VBarN,
}

impl Candidate {
    /// Short name for tables and logs.
    pub fn name(self) -> &'static str {
        match self {
            Candidate::W => "w",
            Candidate::VBarN => "v_bar_n",
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The settings.
    pub config: RunConfig,
    /// One record per evaluation point.
    pub history: Vec<EpochMetrics>,
    /// The evaluation point with the best validation pAUC (its model is `best.bpk`).
    pub best: EpochMetrics,
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad data or an unreadable image.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The objective refused a batch or a setting.
    #[error(transparent)]
    Train(#[from] TrainError),
    /// AGD-SBCD refused its settings, its scores or a saved state.
    #[error(transparent)]
    Sbcd(#[from] SbcdError),
    /// Writing or reading the output folder.
    #[error("{0}")]
    Io(String),
    /// Training diverged: a non-finite score, loss or evaluation score. The run stops; the
    /// checkpoint of the last evaluation point before it is kept.
    #[error(
        "training diverged at step {step}: {quantity} (the checkpoint of the last good \
         evaluation point is kept; lower lr)"
    )]
    Diverged {
        /// Steps done when it was seen.
        step: usize,
        /// What was not finite, with its value.
        quantity: String,
    },
    /// Another run holds the output folder.
    #[error(transparent)]
    Locked(#[from] checkpoint::LockError),
    /// A setting outside its range (named as the flag or config key without `--`).
    #[error("{key}: {message}")]
    Setting {
        /// The setting.
        key: &'static str,
        /// What is wrong and what is allowed.
        message: String,
    },
}

#[derive(Serialize, Deserialize)]
enum ObjectiveState {
    Ce,
    Aucm(AucM),
    Mb(MiniBatchPauc),
    Sbcd(SbcdState),
}

#[derive(Serialize, Deserialize)]
struct LoopState {
    config: RunConfig,
    objective: ObjectiveState,
    sampler: DualSampler,
    steps_done: usize,
    history: Vec<EpochMetrics>,
    train_seconds: f64,
    cpu_seconds: f64,
    #[serde(default)]
    dual_seconds: f64,
}

fn io(e: impl std::fmt::Display) -> RunError {
    RunError::Io(e.to_string())
}

/// Scores of every sample of `source` (batches of 256, no autodiff).
///
/// # Errors
/// As [`ImageSource::batch`]; NaN/inf scores.
pub fn score_all<M: ImageScorer>(
    model: &M,
    source: &dyn ImageSource,
    device: &Device,
) -> Result<Vec<f64>, RunError> {
    let ids: Vec<usize> = (0..source.len()).collect();
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(256) {
        let b = source.batch(chunk, device)?;
        let s = scores_to_cpu(model.score_images(b.inputs))
            .map_err(|e| RunError::Io(format!("scoring: {e}")))?;
        out.extend(s);
    }
    Ok(out)
}

fn evaluate(scores: &[f64], labels: &[f64], alpha: f64, beta: f64) -> (f64, f64) {
    (
        auc(scores, labels).unwrap_or(f64::NAN),
        pauc(scores, labels, alpha, beta).unwrap_or(f64::NAN),
    )
}

/// Validation and test figures of one model.
struct PointEval {
    val_auc: f64,
    val_pauc: f64,
    val_scores: Vec<f64>,
    test_auc: f64,
    test_pauc: f64,
    test_scores: Option<Vec<f64>>,
}

/// Score `val` and `test` and compute their AUC and pAUC; a non-finite score is
/// [`RunError::Diverged`] at `step` (a NaN must not become a silent NaN pAUC).
fn evaluate_point<M: ImageScorer>(
    model: &M,
    val: &dyn ImageSource,
    test: Option<&dyn ImageSource>,
    device: &Device,
    (alpha, beta): (f64, f64),
    step: usize,
) -> Result<PointEval, RunError> {
    let finite = |scores: Vec<f64>, set: &str| match scores.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(RunError::Diverged {
            step,
            quantity: format!("{set} score {i} is {}", scores[i]),
        }),
        None => Ok(scores),
    };
    let val_scores = finite(score_all(model, val, device)?, "validation")?;
    let (val_auc, val_pauc) = evaluate(&val_scores, &val.labels(), alpha, beta);
    let (test_auc, test_pauc, test_scores) = match test {
        Some(t) => {
            let s = finite(score_all(model, t, device)?, "test")?;
            let (a, pa) = evaluate(&s, &t.labels(), alpha, beta);
            (a, pa, Some(s))
        }
        None => (f64::NAN, f64::NAN, None),
    };
    Ok(PointEval {
        val_auc,
        val_pauc,
        val_scores,
        test_auc,
        test_pauc,
        test_scores,
    })
}

/// [`RunError::Diverged`] for a non-finite quantity found after `step` steps (a training
/// score, a loss gradient entry, an SBCD block score); other errors as they are.
fn diverged(step: usize) -> impl Fn(RunError) -> RunError {
    move |e| {
        let quantity = match &e {
            RunError::Train(
                TrainError::NonFiniteScore { index, value }
                | TrainError::Bridge(BridgeError::NonFiniteScore { index, value }),
            ) => format!("training score {index} of the step is {value}"),
            RunError::Train(TrainError::Bridge(BridgeError::NonFiniteGradient {
                index,
                value,
            })) => {
                format!("the loss gradient of training score {index} is {value}")
            }
            RunError::Sbcd(SbcdError::NonFinite { .. })
            | RunError::Train(TrainError::Sbcd(SbcdError::NonFinite { .. })) => e.to_string(),
            _ => return e,
        };
        RunError::Diverged { step, quantity }
    }
}

/// A bridge error of training step `step`: [`diverged`] for a non-finite value, else an I/O
/// error naming the step.
fn bridge_error(step: usize) -> impl Fn(BridgeError) -> RunError {
    move |e| match diverged(step)(TrainError::Bridge(e).into()) {
        RunError::Train(TrainError::Bridge(other)) => RunError::Io(format!("step {step}: {other}")),
        d => d,
    }
}

/// Train `model` (on the autodiff `device`) with `cfg`, evaluating on `val` and `test`.
///
/// # Errors
/// [`RunError`] for bad data, a refused batch, or an unwritable output folder.
pub fn train_image_task<M>(
    model: M,
    train: &dyn ImageSource,
    val: &dyn ImageSource,
    test: Option<&dyn ImageSource>,
    device: &Device,
    cfg: &RunConfig,
) -> Result<RunSummary, RunError>
where
    M: ImageScorer,
{
    cfg.validate()?;
    let _lock = checkpoint::RunLock::acquire(&cfg.out)?;
    let labels = train.labels();
    let n = labels.len();
    let positive: Vec<bool> = labels.iter().map(|&y| y > 0.0).collect();
    // Every non-SBCD method sees batches with this share of positives (DualSampler); AUC-M's
    // p must be the positive share of what it averages over, so it is this share, not the
    // training set's (with the set's ~0.1 under 50/50 batches AUC-M collapsed: test AUC 0.37
    // at lr 0.01 on the Fashion-MNIST-LT slice).
    const POSITIVE_SHARE: f64 = 0.5;
    let (val_labels, test_labels) = (val.labels(), test.map(|t| t.labels()));
    let ckpt = cfg.out.join("checkpoint");
    let new_optim = || -> ModuleOptimizer {
        match cfg.method {
            Method::Ce => AdamConfig::new().init(),
            _ => SgdConfig::new().init(),
        }
    };
    // AGD-SBCD's solver. Its duals start at eq. (19) for the initial model (or as
    // `dual_init` says), from an inference pass over the training set after the batch-norm
    // statistics were estimated by training-mode passes; a resumed run replaces them with the
    // saved state below.
    let fwd =
        |m: &M, ids: &[usize]| Ok::<_, RunError>(m.score_images(train.batch(ids, device)?.inputs));
    let mut sbcd = match cfg.method {
        Method::Sbcd => {
            let mut s = DeepSbcd::new(cfg.sbcd_config(), &labels)?;
            if !cfg.resume {
                s.refresh_buffers(&model, &mut fwd.clone())?;
                s.init_duals(&score_all(&model.valid(), train, device)?)?;
            }
            Some(s)
        }
        _ => None,
    };
    let (mut model, mut optim, mut st) = if cfg.resume {
        let (m, _, o, st): (M, Option<M>, _, LoopState) =
            checkpoint::load(&ckpt, model, new_optim()).map_err(io)?;
        (m, o, st)
    } else {
        let objective = match cfg.method {
            Method::Ce => ObjectiveState::Ce,
            Method::Aucm => ObjectiveState::Aucm(AucM::new(POSITIVE_SHARE, cfg.lr, 500.0, 1e-4)?),
            Method::Mb => ObjectiveState::Mb(MiniBatchPauc {
                alpha: cfg.alpha,
                beta: cfg.beta,
                loss: PairLoss::Logistic,
            }),
            Method::Sbcd => ObjectiveState::Sbcd(
                sbcd.as_ref()
                    .expect("built above for AGD-SBCD")
                    .state()
                    .clone(),
            ),
        };
        let st = LoopState {
            config: cfg.clone(),
            objective,
            sampler: DualSampler::new(&positive, cfg.batch, POSITIVE_SHARE, cfg.seed)?,
            steps_done: 0,
            history: Vec::new(),
            train_seconds: 0.0,
            cpu_seconds: 0.0,
            dual_seconds: 0.0,
        };
        (model, new_optim(), st)
    };
    let steps_per_epoch = n.div_ceil(cfg.batch);
    let budget = cfg.epochs * steps_per_epoch;
    let bar = if cfg.progress {
        let b = ProgressBar::new(budget as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] step {pos}/{len} {msg} {per_sec} ETA {eta}",
            )
            .map_err(io)?
            .progress_chars("=> "),
        );
        b.set_prefix(cfg.method.name());
        b.set_position(st.steps_done as u64);
        b
    } else {
        ProgressBar::hidden()
    };
    if let (Some(s), ObjectiveState::Sbcd(state)) = (sbcd.as_mut(), &st.objective)
        && cfg.resume
    {
        s.restore(state.clone())?;
    }
    while st.steps_done < budget {
        let start = Instant::now();
        let mut cpu = 0.0;
        let (mut loss_sum, mut loss_count) = (0.0, 0usize);
        let (mut candidate, mut diagnostics) = (None, None);
        if let Some(s) = sbcd.as_mut() {
            // One outer iteration (two SBCD calls), shortened to fit the remaining budget; a
            // remainder smaller than one step per call is left unused.
            let left = budget - st.steps_done;
            if left < s.calls() {
                break;
            }
            if s.refreshes_duals() && s.state().k > 0 {
                let t = Instant::now();
                s.reset_duals(&score_all(&model.valid(), train, device)?)?;
                st.dual_seconds += t.elapsed().as_secs_f64();
            }
            let (m, v_n, rec) = s
                .outer_step_within(model, left, fwd)
                .map_err(diverged(st.steps_done))?;
            model = m;
            candidate = Some(v_n);
            diagnostics = Some(rec.diagnostics);
            st.steps_done += rec.steps;
            loss_sum += rec.sampled_loss;
            loss_count += 1;
            cpu += rec.cpu_seconds;
            st.objective = ObjectiveState::Sbcd(s.state().clone());
            bar.set_position(st.steps_done as u64);
        } else {
            let end = (st.steps_done + steps_per_epoch).min(budget);
            let reference = Snapshot::of(&model);
            while st.steps_done < end {
                let ids = st.sampler.next_batch();
                let b = train.batch(&ids, device)?;
                let scores = model.score_images(b.inputs);
                let s_cpu = scores_to_cpu(scores.clone()).map_err(bridge_error(st.steps_done))?;
                let t = Instant::now();
                let g = match &mut st.objective {
                    ObjectiveState::Ce => Erm {
                        loss: crate::loss::Loss::Logistic,
                    }
                    .batch_gradient(&s_cpu, &b.targets, &b.ids),
                    ObjectiveState::Aucm(o) => o.batch_gradient(&s_cpu, &b.targets, &b.ids),
                    ObjectiveState::Mb(o) => o.batch_gradient(&s_cpu, &b.targets, &b.ids),
                    ObjectiveState::Sbcd(_) => unreachable!("handled above"),
                }
                .map_err(|e| diverged(st.steps_done)(e.into()))?;
                if !g.loss.is_finite() {
                    return Err(RunError::Diverged {
                        step: st.steps_done,
                        quantity: format!("the batch loss is {}", g.loss),
                    });
                }
                cpu += t.elapsed().as_secs_f64();
                loss_sum += g.loss;
                loss_count += 1;
                let mut loss = surrogate(scores, &g.grad).map_err(bridge_error(st.steps_done))?;
                if let ObjectiveState::Aucm(o) = &st.objective
                    && let Some(extra) = o.device_terms(&model, &reference)
                {
                    loss = loss + extra;
                }
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(cfg.lr, model, grads);
                st.steps_done += 1;
                bar.inc(1);
                bar.set_message(format!("loss {:.4}", loss_sum / loss_count as f64));
            }
        }
        st.train_seconds += start.elapsed().as_secs_f64();
        st.cpu_seconds += cpu;
        // Evaluation (not counted in the training time): the iterate, and for AGD-SBCD also
        // v_bar_n^(k); each row can become the best model.
        let plain = model.valid();
        let mut rows = vec![(Candidate::W, &plain)];
        if let Some(v) = &candidate {
            rows.push((Candidate::VBarN, v));
        }
        for (which, scorer) in rows {
            let e = evaluate_point(
                scorer,
                val,
                test,
                device,
                (cfg.alpha, cfg.beta),
                st.steps_done,
            )?;
            let rec = EpochMetrics {
                epoch: st
                    .history
                    .iter()
                    .filter(|h| h.candidate == Candidate::W)
                    .count()
                    + usize::from(which == Candidate::W),
                epochs_seen: (st.steps_done * cfg.batch) as f64 / n as f64,
                train_loss: loss_sum / loss_count.max(1) as f64,
                val_auc: e.val_auc,
                val_pauc: e.val_pauc,
                test_auc: e.test_auc,
                test_pauc: e.test_pauc,
                seconds: st.train_seconds,
                cpu_share: st.cpu_seconds / st.train_seconds.max(1e-12),
                candidate: which,
                sbcd: diagnostics,
            };
            let is_best = st.history.iter().all(|h| rec.val_pauc > h.val_pauc);
            st.history.push(rec);
            if is_best {
                rankrisk_models::checkpoint::save(scorer, &cfg.out.join("best.bpk")).map_err(io)?;
                let (scores, l, set) = match (&e.test_scores, &test_labels) {
                    (Some(s), Some(l)) => (s.clone(), l.clone(), "test"),
                    _ => (e.val_scores.clone(), val_labels.clone(), "validation"),
                };
                let name = format!(
                    "{} (epoch {}, {})",
                    cfg.method.name(),
                    rec.epoch,
                    which.name()
                );
                let path = cfg.out.join("roc.png");
                if let Err(e) = roc_plot(&path, &scores, &l, name, set, (cfg.alpha, cfg.beta)) {
                    say(&bar, cfg.progress, format!("no ROC plot: {e}"));
                }
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
                    "epoch {} ({:.2} passes): loss {:.4}, val AUC {:.4} pAUC {:.4}, test AUC {:.4} pAUC {:.4}, {:.1} s{extra}",
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
        write_metrics(&cfg.out, &st.history).map_err(io)?;
        checkpoint::save(&ckpt, &model, None, &optim, &st).map_err(io)?;
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
    bar.finish_and_clear();
    // The first point with the highest validation pAUC: the one saved as best.bpk above.
    let best = *st
        .history
        .iter()
        .fold(None, |b: Option<&EpochMetrics>, h| match b {
            Some(b) if h.val_pauc > b.val_pauc => Some(h),
            Some(b) => Some(b),
            None => Some(h),
        })
        .ok_or_else(|| RunError::Io("no epoch was run (epochs = 0?)".into()))?;
    let curves = |f: fn(&EpochMetrics) -> f64| {
        [Candidate::W, Candidate::VBarN]
            .into_iter()
            .filter(|&c| st.history.iter().any(|h| h.candidate == c))
            .map(|c| Series {
                name: match c {
                    Candidate::W => cfg.method.name().to_string(),
                    Candidate::VBarN => format!("{} v_bar_n", cfg.method.name()),
                },
                points: st
                    .history
                    .iter()
                    .filter(|h| h.candidate == c)
                    .map(|h| (h.epochs_seen, f(h)))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    if let Err(e) = two_panel_curves(
        &cfg.out.join("curves.png"),
        &format!("{} training", cfg.method.name()),
        "passes over the training set",
        ("training loss", &curves(|h| h.train_loss)),
        ("validation pAUC", &curves(|h| h.val_pauc)),
        false,
    ) {
        eprintln!("no training-curve plot: {e}");
    }
    let summary = RunSummary {
        config: cfg.clone(),
        history: st.history.clone(),
        best,
    };
    std::fs::write(
        cfg.out.join("summary.json"),
        serde_json::to_string_pretty(&summary).map_err(io)?,
    )
    .map_err(io)?;
    Ok(summary)
}

/// A line above the progress bar, or on standard error when the bar is not drawn (no
/// terminal: logs, CI), unless the run is quiet.
fn say(bar: &ProgressBar, progress: bool, line: String) {
    if !bar.is_hidden() {
        bar.println(line);
    } else if progress {
        eprintln!("{line}");
    }
}

fn write_metrics(out: &Path, history: &[EpochMetrics]) -> std::io::Result<()> {
    let mut csv = std::fs::File::create(out.join("metrics.csv"))?;
    writeln!(
        csv,
        "epoch,epochs_seen,train_loss,val_auc,val_pauc,test_auc,test_pauc,seconds,cpu_share,\
         candidate,active_m,active_n,gap_mean,gap_std,eta,theta,gamma_over_mu"
    )?;
    for h in history {
        let d = h.sbcd.map_or([f64::NAN; 7], |d| {
            [
                d.active_m,
                d.active_n,
                d.gap_mean,
                d.gap_std,
                d.eta,
                d.theta,
                d.gamma_over_mu,
            ]
        });
        writeln!(
            csv,
            "{},{:.4},{},{},{},{},{},{:.3},{:.6},{},{},{},{},{},{:e},{:e},{}",
            h.epoch,
            h.epochs_seen,
            h.train_loss,
            h.val_auc,
            h.val_pauc,
            h.test_auc,
            h.test_pauc,
            h.seconds,
            h.cpu_share,
            h.candidate.name(),
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
            d[5],
            d[6]
        )?;
    }
    std::fs::write(
        out.join("metrics.json"),
        serde_json::to_string_pretty(history).map_err(std::io::Error::other)?,
    )
}

/// What `rankrisk eval` reports for a trained model on one set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// The checkpoint scored.
    pub checkpoint: PathBuf,
    /// Which set (`test` or `val`).
    pub split: String,
    /// Samples scored.
    pub samples: usize,
    /// Positives among them.
    pub positives: usize,
    /// AUC.
    pub auc: f64,
    /// pAUC over FPR `[alpha, beta]` (normalized).
    pub pauc: f64,
    /// FPR range start.
    pub alpha: f64,
    /// FPR range end.
    pub beta: f64,
}

/// Score every sample of `source` with `model` (inference mode) and write `eval_{split}.json`
/// and the ROC curve `roc_{split}.png` (FPR range shaded) into `out`.
///
/// # Errors
/// [`RunError`] for an unreadable image, a one-class set, NaN scores or an unwritable folder.
pub fn evaluate_model<M: ImageScorer>(
    model: &M,
    source: &dyn ImageSource,
    device: &Device,
    (alpha, beta): (f64, f64),
    checkpoint: &Path,
    split: &str,
    out: &Path,
) -> Result<EvalReport, RunError> {
    let io = |e: &dyn std::fmt::Display| RunError::Io(format!("{}: {e}", out.display()));
    let scores = score_all(model, source, device)?;
    let labels = source.labels();
    let metric = |e: crate::metrics::MetricError| RunError::Io(format!("{split} set: {e}"));
    let report = EvalReport {
        checkpoint: checkpoint.to_path_buf(),
        split: split.to_string(),
        samples: labels.len(),
        positives: labels.iter().filter(|&&y| y > 0.0).count(),
        auc: auc(&scores, &labels).map_err(metric)?,
        pauc: pauc(&scores, &labels, alpha, beta).map_err(metric)?,
        alpha,
        beta,
    };
    std::fs::create_dir_all(out).map_err(|e| io(&e))?;
    let json = serde_json::to_string_pretty(&report).map_err(|e| io(&e))?;
    std::fs::write(out.join(format!("eval_{split}.json")), json).map_err(|e| io(&e))?;
    roc_plot(
        &out.join(format!("roc_{split}.png")),
        &scores,
        &labels,
        format!("AUC {:.4}, pAUC {:.4}", report.auc, report.pauc),
        split,
        (alpha, beta),
    )
    .map_err(|e| io(&e))?;
    Ok(report)
}

/// The ROC curve of `scores` as a PNG at `path`, titled with the set's name, the FPR range
/// shaded; `name` labels the curve.
fn roc_plot(
    path: &Path,
    scores: &[f64],
    labels: &[f64],
    name: String,
    set: &str,
    (alpha, beta): (f64, f64),
) -> Result<(), String> {
    let points = roc_curve(scores, labels).map_err(|e| e.to_string())?;
    let curve = Series {
        name,
        points: points.iter().map(|p| (p.fpr, p.tpr)).collect(),
    };
    let title = format!("ROC on the {set} set, FPR range shaded");
    roc(path, &title, &[curve], alpha, beta)
}
