//! `rankrisk fit-linear`: a rank-based objective on a linear model, by ADMM, sADMM, a
//! baseline or Pdprox, on a built-in set (with the paper's preprocessing and split) or on
//! files.

use crate::experiments::ExperimentError;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use rankrisk_datasets::{Labels, Tabular};

use crate::admm::baselines::{self, DcaConfig, Method, Problem, StochasticConfig};
use crate::admm::linear::{self, AdmmConfig, LinearData};
use crate::admm::{GammaSchedule, RhoSchedule};
use crate::experiments::fit_pdprox::{self, LossSpec, PdproxArgs, RegSpec};
use crate::experiments::linear_data::{DataArgs, load_parts_as};
use crate::math::weights::Weights;
use crate::metrics::{Fairness, accuracy, fairness};

/// Arguments of `rankrisk fit-linear`.
#[derive(Debug, Clone, Args)]
pub struct FitLinearArgs {
    /// Where the data comes from.
    #[command(flatten)]
    pub input: DataArgs,
    /// Objective: erm, cvar:q=0.8, extremile:r=2, esrm:rho=1, topk:k=.., aorr:m=..,k=..,
    /// aorr-literal:m=..,k=.., ehrm:a=..,b=.., cpt:gamma=0.61,delta=0.69,b=..
    #[arg(long, default_value = "erm")]
    pub objective: Weights,
    /// Individual loss: logistic, hinge, exponential, sqhinge, smooth-hinge:delta=D; for the
    /// pdprox solvers hinge, generalized-hinge:a=A, absolute, eps-insensitive:eps=E (the
    /// labels are the targets of the last two).
    #[arg(long, default_value = "logistic")]
    pub loss: LossSpec,
    /// Regularizer: none, l2:MU (MU/2 ||w||^2), l1:MU (MU ||w||_1), enet:L1,L2, mcp:L,T,
    /// scad:L,A; for the pdprox solvers also group:MU (MU sum_g sqrt(d_g) ||w_g||, --groups).
    #[arg(long, default_value = "l2:0.01")]
    pub reg: RegSpec,
    /// Solver: admm, sadmm, sgd, lsvrg (non-uniform), lsvrg-u (uniform), dca (AoRR only),
    /// pdprox-dual, pdprox-primal (convex objectives: erm, cvar, topk, extremile r >= 1, esrm).
    #[arg(long, default_value = "admm")]
    pub solver: String,
    /// Penalty schedule for admm/sadmm: srm, aorr, ehrm (Table 6), fixed:R, balanced:R0,MU,TAU,
    /// normalized:R0,MU,TAU,PERIOD, adaptive or adaptive:R0,F,EPS,MAX, ... (default: constant
    /// max sigma / 2 for convex problems, ehrm for CPT, max sigma / 2 growing x1.02 per
    /// iteration for other nonconvex ones).
    #[arg(long)]
    pub rho: Option<RhoSchedule>,
    /// ADMM or Pdprox iteration cap (the rank-based paper: 300; a warning says when it stops
    /// the run before --tol is reached).
    #[arg(long, default_value_t = 10_000)]
    pub max_iter: usize,
    /// ADMM relative residual tolerance (default 1e-6), Pdprox duality gap (default 1e-4, the
    /// Pdprox paper's section 5.5).
    #[arg(long)]
    pub tol: Option<f64>,
    /// Learning rate of sgd/lsvrg/dca (default: the paper's grid search for sgd/lsvrg, Tables 8-9 value 0.01 for dca).
    #[arg(long)]
    pub lr: Option<f64>,
    /// Epochs of sgd/lsvrg (paper: 2000) or outer iterations of dca (paper: 5-10).
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Inner epochs of dca (paper: 500-2000).
    #[arg(long, default_value_t = 1000)]
    pub inner: usize,
    /// Seed of the split and of the stochastic solvers.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the result as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Options of the pdprox solvers.
    #[command(flatten)]
    pub pdprox: PdproxArgs,
}

/// The JSON written by `fit-linear`.
#[derive(Debug, serde::Serialize)]
pub struct FitLinearReport {
    /// Data set name.
    pub data: String,
    /// Objective spec.
    pub objective_spec: String,
    /// Loss.
    pub loss: String,
    /// Regularizer.
    pub reg: String,
    /// Solver.
    pub solver: String,
    /// Final training objective (1).
    pub objective: f64,
    /// Training accuracy (NaN, written as null in the JSON, for real targets).
    pub train_accuracy: f64,
    /// Test accuracy (NaN, written as null in the JSON and left out of the printed line,
    /// without test data or for real targets).
    pub test_accuracy: f64,
    /// For real targets (a regression loss on files): the training mean absolute error
    /// `(1/n) sum |x_i^T w - y_i|`.
    pub train_mae: Option<f64>,
    /// For real targets: the test mean absolute error (`None` without test data).
    pub test_mae: Option<f64>,
    /// Fairness metrics on the test set, where the data carries groups.
    pub test_fairness: Option<Fairness>,
    /// Iterations (ADMM, Pdprox) or epochs (baselines).
    pub iterations: usize,
    /// ADMM: whether both relative residuals reached `--tol` before `--max-iter`; Pdprox:
    /// whether the duality gap did; `None` for the baselines, which run a fixed budget of
    /// epochs.
    pub converged: Option<bool>,
    /// ADMM: the final relative primal and dual residuals (compared with `--tol`).
    pub residuals: Option<[f64; 2]>,
    /// The duality gap of the reported iterate, `objective - dual bound`, an upper bound of its
    /// distance to the optimum: Pdprox's of the iterate `iterate` names; ADMM's certificate
    /// (`admm::certificate`, convex problems with l1, l2 or elastic net; checked every 10
    /// iterations and whenever the residuals reach `--tol`, stopping the run at `--tol`
    /// relative).
    pub gap: Option<f64>,
    /// Pdprox: the solver's stop quantity, the gap of the better of the averaged and the last
    /// iterate (compared with `--tol`; equal to `gap`, as the better one is reported).
    pub best_gap: Option<f64>,
    /// Pdprox: which iterate `w` and `objective` are, the one with the lower objective:
    /// `averaged` (the paper's output `w^_T`) or `last` (`w_T`; on polyhedral problems it often
    /// converges well before the average, whose gap can stay far above `--tol` when the run
    /// stops).
    pub iterate: Option<String>,
    /// Pdprox: the objective of the averaged iterate.
    pub averaged_objective: Option<f64>,
    /// Pdprox: the averaged iterate's weights (the paper's output; the same as `w` when
    /// `iterate` is `averaged`). It can generalize better than a last iterate with a lower
    /// training objective (RESULTS.md, section 5.1's design).
    pub averaged_w: Option<Vec<f64>>,
    /// Pdprox: the objective of the last iterate.
    pub last_objective: Option<f64>,
    /// Pdprox: passes over the data (products with X or X^T, the gap checks included).
    pub passes: Option<usize>,
    /// Wall time of the solve (for sgd/lsvrg without --lr, of the final run after the grid search).
    pub seconds: f64,
    /// Learning rate used by a stochastic solver.
    pub lr: Option<f64>,
    /// Weights of the linear model (Pdprox: the iterate `iterate` names; with `--bias` the
    /// bias last).
    pub w: Vec<f64>,
    /// Per-iteration (ADMM), per-epoch (baselines) or per-gap-check (Pdprox) history.
    pub history: serde_json::Value,
}

/// What a Pdprox run adds to the report.
#[derive(Debug, Clone, Copy)]
struct PdproxFigures {
    gap: f64,
    iterate: &'static str,
    averaged: f64,
    last: f64,
    passes: usize,
}

/// Refuse settings no solver can use, before any data is read: a learning rate that is not a
/// positive finite number, zero epochs, inner epochs or iterations, a tolerance that is not
/// finite. (The solvers check them again, with their own names.)
fn check_settings(args: &FitLinearArgs) -> Result<(), ExperimentError> {
    if let Some(lr) = args.lr
        && !(lr.is_finite() && lr > 0.0)
    {
        return Err(ExperimentError::Setting(format!(
            "--lr must be a positive finite number, got {lr}"
        )));
    }
    if let Some(tol) = args.tol
        && !(tol.is_finite() && tol >= 0.0)
    {
        return Err(ExperimentError::Setting(format!(
            "--tol must be a finite number >= 0, got {tol}"
        )));
    }
    for (flag, count) in [
        ("--epochs", args.epochs.unwrap_or(1)),
        ("--inner", args.inner),
        ("--max-iter", args.max_iter),
        ("--check-every", args.pdprox.check_every),
    ] {
        if count == 0 {
            return Err(ExperimentError::Setting(format!(
                "{flag} must be at least 1, got 0 (nothing would be solved)"
            )));
        }
    }
    Ok(())
}

/// Fit as the arguments say and return the report.
///
/// # Errors
/// A message for the user (bad data, settings, or solver failure).
pub fn fit(args: &FitLinearArgs) -> Result<FitLinearReport, ExperimentError> {
    check_settings(args)?;
    let aorr = matches!(
        args.objective,
        Weights::Aorr { .. } | Weights::AorrLiteral { .. }
    );
    let fractions: &[f64] = if aorr {
        &[0.5, 0.25, 0.25]
    } else {
        &[0.6, 0.4]
    };
    let solver = args.solver.to_ascii_lowercase();
    // The regression losses read the files' labels as real targets.
    let regression = matches!(args.loss, LossSpec::Dual(l) if !l.is_classification());
    let labels = if regression {
        Labels::Targets
    } else {
        Labels::Binary
    };
    let (train, test) = load_parts_as(&args.input, fractions, args.seed, labels)?;
    args.objective
        .sigma(train.n())
        .map_err(ExperimentError::solve)?;
    let mut start = Instant::now();
    let mut convergence = None;
    let mut admm_gap = None;
    let mut pdprox_figures = None;
    let mut averaged_w = None;
    let elementwise = |solver: &str| match args.reg {
        RegSpec::Elementwise(r) => Ok(r),
        RegSpec::Group { .. } => Err(ExperimentError::Setting(format!(
            "--reg group:MU is solved by --solver pdprox-dual or pdprox-primal, not {solver}"
        ))),
    };
    if args.pdprox.bias && !solver.starts_with("pdprox") {
        return Err(ExperimentError::Setting(format!(
            "--bias is an option of the pdprox solvers (--intercept adds a constant feature \
             for {solver})"
        )));
    }
    let (w, objective, iterations, lr, history) = match solver.as_str() {
        "pdprox-dual" | "pdprox-primal" => {
            let res = fit_pdprox::fit(
                &train,
                &solver,
                args.loss,
                &args.objective,
                args.reg,
                &args.pdprox,
                args.max_iter,
                args.tol.unwrap_or(1e-4),
            )?;
            let history = serde_json::to_value(&res.history)
                .map_err(|e| ExperimentError::Output(format!("the history as JSON: {e}")))?;
            convergence = Some((res.converged, [f64::NAN; 2]));
            let (w, objective) = res.best();
            let iterate = if res.last_is_better() {
                "last"
            } else {
                "averaged"
            };
            averaged_w = Some(res.w.clone());
            pdprox_figures = Some(PdproxFigures {
                gap: res.gap,
                iterate,
                averaged: res.objective,
                last: res.last_objective,
                passes: res.passes,
            });
            (w.to_vec(), objective, res.iterations, None, history)
        }
        "admm" | "sadmm" => {
            let cfg = AdmmConfig {
                loss: args.loss.rank(&solver)?,
                weights: args.objective.clone(),
                reg: elementwise(&solver)?,
                rho: args.rho,
                max_iter: args.max_iter,
                tol: args.tol.unwrap_or(1e-6),
                smoothing: (solver == "sadmm").then(GammaSchedule::default),
                ..AdmmConfig::default()
            };
            let data =
                LinearData::new(&train.x, &train.y, train.d).map_err(ExperimentError::solve)?;
            let res = linear::solve(&data, &cfg, None).map_err(ExperimentError::solve)?;
            let history = serde_json::to_value(&res.history)
                .map_err(|e| ExperimentError::Output(format!("the history as JSON: {e}")))?;
            convergence = Some((res.converged, [res.primal_relative, res.dual_relative]));
            admm_gap = res.gap.map(|g| g * res.objective);
            (res.w, res.objective, res.iterations, None, history)
        }
        "sgd" | "lsvrg" | "lsvrg-u" | "dca" => {
            let (loss, reg) = (args.loss.rank(&solver)?, elementwise(&solver)?);
            let problem = Problem {
                data: LinearData::new(&train.x, &train.y, train.d)
                    .map_err(ExperimentError::solve)?,
                loss,
                weights: args.objective.clone(),
                reg,
            };
            let (res, lr) = if solver == "dca" {
                let cfg = DcaConfig {
                    outer: args.epochs.unwrap_or(10),
                    inner: args.inner,
                    lr: args.lr.unwrap_or(0.01),
                };
                (
                    baselines::dca_aorr(&problem, &cfg).map_err(ExperimentError::solve)?,
                    cfg.lr,
                )
            } else {
                let method = match solver.as_str() {
                    "sgd" => Method::Sgd,
                    "lsvrg" => Method::LsvrgNonUniform,
                    _ => Method::LsvrgUniform,
                };
                let mut cfg = StochasticConfig::paper(method, 0.0, args.seed);
                if let Some(e) = args.epochs {
                    cfg.epochs = e;
                }
                cfg.lr = match args.lr {
                    Some(lr) => lr,
                    None => baselines::select_lr(&problem, &cfg).map_err(ExperimentError::solve)?,
                };
                // The grid search is tuning, not solving: time the final run only.
                start = Instant::now();
                (
                    baselines::stochastic(&problem, &cfg).map_err(ExperimentError::solve)?,
                    cfg.lr,
                )
            };
            let history = serde_json::to_value(&res.history)
                .map_err(|e| ExperimentError::Output(format!("the history as JSON: {e}")))?;
            (res.w, res.objective, res.history.len(), Some(lr), history)
        }
        other => {
            return Err(ExperimentError::Setting(format!(
                "unknown solver '{other}': expected admm, sadmm, sgd, lsvrg, lsvrg-u, dca, \
                 pdprox-dual, pdprox-primal"
            )));
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    if !objective.is_finite() || w.iter().any(|v| !v.is_finite()) {
        return Err(ExperimentError::Diverged(format!(
            "the {solver} solver diverged: objective {objective} at its last iterate (lower \
             --lr, or check the data's scale)"
        )));
    }
    let scores = |t: &Tabular| {
        if args.pdprox.bias {
            t.scores(&w[..t.d]).iter().map(|s| s + w[t.d]).collect()
        } else {
            t.scores(&w)
        }
    };
    // Each table's scores once: accuracy (and fairness) for labels, mean absolute error for
    // real targets.
    let quality = |t: &Tabular| {
        let s: Vec<f64> = scores(t);
        if t.targets {
            let mae = s.iter().zip(&t.y).map(|(a, b)| (a - b).abs()).sum::<f64>() / t.n() as f64;
            (f64::NAN, Some(mae), s)
        } else {
            (accuracy(&s, &t.y), None, s)
        }
    };
    let (train_accuracy, train_mae, _) = quality(&train);
    let (test_accuracy, test_mae, test_fairness) = match &test {
        Some(t) => {
            let (acc, mae, s) = quality(t);
            let groups = t.group.as_ref().filter(|_| !t.targets);
            (acc, mae, groups.map(|g| fairness(&s, &t.y, g)))
        }
        None => (f64::NAN, None, None),
    };
    Ok(FitLinearReport {
        data: train.name.clone(),
        objective_spec: args.objective.to_string(),
        loss: args.loss.to_string(),
        reg: args.reg.to_string(),
        solver,
        objective,
        train_accuracy,
        test_accuracy,
        train_mae,
        test_mae,
        test_fairness,
        iterations,
        converged: convergence.map(|c| c.0),
        residuals: convergence
            .filter(|_| pdprox_figures.is_none())
            .map(|c| c.1),
        gap: pdprox_figures.map(|p| p.gap).or(admm_gap),
        best_gap: pdprox_figures.map(|p| p.gap),
        iterate: pdprox_figures.map(|p| p.iterate.to_string()),
        averaged_objective: pdprox_figures.map(|p| p.averaged),
        averaged_w,
        last_objective: pdprox_figures.map(|p| p.last),
        passes: pdprox_figures.map(|p| p.passes),
        seconds,
        lr,
        w,
        history,
    })
}
