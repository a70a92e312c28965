//! `rankrisk fit-pauc`: maximize the partial AUC over an FPR range for a linear model by
//! AGD-SBCD or one of the paper's baselines.

use crate::experiments::ExperimentError;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use crate::experiments::linear_data::{DataArgs, load_parts};
use crate::metrics::{pauc, roc_auc};
use crate::pauc::agd::AgdSbcdConfig;
use crate::pauc::baselines::{self, Baseline, BaselineConfig};
use crate::pauc::linear::{Budget, agd_sbcd_linear};
use crate::pauc::objective::PairLoss;
use crate::pauc::sbcd::{AgdRecord, DualInit, PairData};

/// Arguments of `rankrisk fit-pauc`.
#[derive(Debug, Clone, Args)]
pub struct FitPaucArgs {
    /// Where the data comes from (built-in sets: seeded 60/40 split).
    #[command(flatten)]
    pub input: DataArgs,
    /// FPR range ALPHA,BETA.
    #[arg(long, default_value = "0.05,0.5")]
    pub fpr: String,
    /// Pairwise surrogate: logistic (log(1 + e^-t)) or sqhinge.
    #[arg(long, default_value = "logistic")]
    pub surrogate: PairLoss,
    /// Solver: agd-sbcd, dca, prox-dca, mb (mini-batch, Kar et al.), subgrad.
    #[arg(long, default_value = "agd-sbcd")]
    pub solver: String,
    /// Outer iterations K for agd-sbcd/dca/prox-dca, epochs for mb/subgrad (unless
    /// --budget-epochs is given).
    #[arg(long, default_value_t = 15)]
    pub epochs: usize,
    /// Budget in passes over the training set (sample visits / (N+ + N-)) for every solver,
    /// instead of --epochs: methods then compare at an equal number of samples.
    #[arg(long)]
    pub budget_epochs: Option<f64>,
    /// Step constant c (eta, theta of Appendix E.2; eta0 for mb/subgrad).
    #[arg(long, default_value_t = 10.0)]
    pub c: f64,
    /// T_k = t-scale (k+1)^2 (paper: 50 for AGD-SBCD, 100-500 for DCA).
    #[arg(long, default_value_t = 20)]
    pub t_scale: usize,
    /// mu = mu-scale / (N+ N-) (paper: 1e2-1e3 on CheXpert features; 1 suits standardized tabular data).
    #[arg(long, default_value_t = 1.0)]
    pub mu_scale: f64,
    /// gamma = gamma-scale / (N+ N-) (paper: 2e3-5e3; 2 suits standardized tabular data).
    #[arg(long, default_value_t = 2.0)]
    pub gamma_scale: f64,
    /// AGD-SBCD: dual step constant, theta = c-dual / ((k+1) N-) (default: c, as the paper).
    #[arg(long)]
    pub c_dual: Option<f64>,
    /// AGD-SBCD: how the duals start (exact: eq. (19) at w0; mean: the pair loss of the mean
    /// scores).
    #[arg(long, value_enum, default_value_t = DualInit::Exact)]
    pub dual_init: DualInit,
    /// AGD-SBCD: re-set the duals to eq. (19) at w before every outer iteration.
    #[arg(long)]
    pub dual_refresh: bool,
    /// AGD-SBCD: the m- and n-calls draw the same blocks.
    #[arg(long)]
    pub common_blocks: bool,
    /// Proximal DCA's L.
    #[arg(long, default_value_t = 1e-3)]
    pub prox_l: f64,
    /// Positives and negatives per step I,J (paper: 100,100).
    #[arg(long, default_value = "100,100")]
    pub batch: String,
    /// Seed of the split and the sampling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the result as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// The JSON written by `fit-pauc`.
#[derive(Debug, serde::Serialize)]
pub struct FitPaucReport {
    /// Data set.
    pub data: String,
    /// Solver.
    pub solver: String,
    /// FPR range.
    pub fpr: [f64; 2],
    /// Final training objective (eq. 3, normalized).
    pub objective: f64,
    /// Normalized training pAUC.
    pub train_pauc: f64,
    /// Normalized test pAUC (NaN, null in the JSON, without test data).
    pub test_pauc: f64,
    /// Test AUC (NaN, null in the JSON, without test data).
    pub test_auc: f64,
    /// Seconds of the solve.
    pub seconds: f64,
    /// Linear model.
    pub w: Vec<f64>,
    /// History: iteration, epochs, objective, pAUC, seconds.
    pub history: Vec<AgdRecord>,
}

/// The two comma-separated values of flag `--what` (`--batch 16,16`).
///
/// # Errors
/// A message naming the flag when `text` holds no comma.
pub fn pair(text: &str, what: &str) -> Result<(String, String), ExperimentError> {
    text.split_once(',')
        .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
        .ok_or_else(|| {
            ExperimentError::Setting(format!(
                "--{what} takes two comma-separated values, got '{text}'"
            ))
        })
}

/// Fit as the arguments say.
///
/// # Errors
/// A message for the user.
pub fn fit(args: &FitPaucArgs) -> Result<FitPaucReport, ExperimentError> {
    let (a, b) = pair(&args.fpr, "fpr")?;
    let alpha: f64 = a
        .parse()
        .map_err(|_| ExperimentError::Setting(format!("--fpr: '{a}' is not a number")))?;
    let beta: f64 = b
        .parse()
        .map_err(|_| ExperimentError::Setting(format!("--fpr: '{b}' is not a number")))?;
    crate::metrics::RankRange::from_fpr(alpha, beta, 1).map_err(ExperimentError::solve)?;
    let (bi, bj) = pair(&args.batch, "batch")?;
    let i: usize = bi
        .parse()
        .map_err(|_| ExperimentError::Setting(format!("--batch: '{bi}' is not a count")))?;
    let j: usize = bj
        .parse()
        .map_err(|_| ExperimentError::Setting(format!("--batch: '{bj}' is not a count")))?;
    if i == 0 || j == 0 {
        return Err(ExperimentError::Setting(format!(
            "--batch needs at least 1 positive and 1 negative per step, got {i},{j}"
        )));
    }
    for (flag, value) in [
        ("--c", args.c),
        ("--mu-scale", args.mu_scale),
        ("--gamma-scale", args.gamma_scale),
        ("--c-dual", args.c_dual.unwrap_or(1.0)),
        ("--prox-l", args.prox_l),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(ExperimentError::Setting(format!(
                "{flag} must be a positive finite number, got {value}"
            )));
        }
    }
    if args.t_scale == 0 {
        return Err(ExperimentError::Setting(
            "--t-scale must be at least 1, got 0".into(),
        ));
    }
    if args.budget_epochs.is_none() && args.epochs == 0 {
        return Err(ExperimentError::Setting(
            "--epochs must be at least 1, got 0 (nothing would be solved)".into(),
        ));
    }
    let (train, test) = load_parts(&args.input, &[0.6, 0.4], args.seed)?;
    let data = PairData::new(&train.x, &train.y, train.d).map_err(ExperimentError::solve)?;
    let w0 = vec![0.0; train.d];
    let start = Instant::now();
    let solver = args.solver.to_ascii_lowercase();
    let budget = match args.budget_epochs {
        Some(e) if e.is_finite() && e > 0.0 => Budget::Epochs(e),
        Some(e) => {
            return Err(ExperimentError::Setting(format!(
                "--budget-epochs must be a positive finite number, got {e}"
            )));
        }
        None => Budget::Outer(args.epochs),
    };
    let (w, history) = match solver.as_str() {
        "agd-sbcd" | "agd" => {
            let cfg = AgdSbcdConfig {
                alpha,
                beta,
                loss: args.surrogate,
                t_scale: args.t_scale,
                c: args.c,
                mu_scale: args.mu_scale,
                gamma_scale: args.gamma_scale,
                i,
                j,
                seed: args.seed,
                c_dual: args.c_dual,
                dual_init: args.dual_init,
                dual_refresh: args.dual_refresh,
                common_blocks: args.common_blocks,
                refresh_steps: 0,
            };
            agd_sbcd_linear(&data, &w0, &cfg, budget).map_err(ExperimentError::solve)?
        }
        "dca" | "prox-dca" | "mb" | "subgrad" => {
            let which = match solver.as_str() {
                "dca" => Baseline::Dca,
                "prox-dca" => Baseline::ProxDca,
                "mb" => Baseline::MiniBatch,
                _ => Baseline::Subgradient,
            };
            let cfg = BaselineConfig {
                alpha,
                beta,
                loss: args.surrogate,
                budget,
                t_scale: args.t_scale,
                c: args.c,
                prox_l: args.prox_l,
                i,
                j,
                seed: args.seed,
            };
            baselines::run(&data, &w0, which, &cfg).map_err(ExperimentError::solve)?
        }
        other => {
            return Err(ExperimentError::Setting(format!(
                "unknown solver '{other}': expected agd-sbcd, dca, prox-dca, mb, subgrad"
            )));
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let score = |t: &rankrisk_datasets::Tabular| t.scores(&w);
    let train_pauc = pauc(&score(&train), &train.y, alpha, beta).map_err(ExperimentError::solve)?;
    let (test_pauc, test_auc) = match &test {
        Some(t) => {
            let s = score(t);
            (
                pauc(&s, &t.y, alpha, beta)
                    .map_err(|e| ExperimentError::Setting(format!("test set: {e}")))?,
                roc_auc(&s, &t.y)
                    .map_err(|e| ExperimentError::Setting(format!("test set: {e}")))?,
            )
        }
        None => (f64::NAN, f64::NAN),
    };
    let objective_at = |w: &[f64]| {
        data.objective_grad(w, args.surrogate, alpha, beta)
            .map(|(f, _)| f)
            .map_err(ExperimentError::solve)
    };
    let (objective, start_objective) = (objective_at(&w)?, objective_at(&w0)?);
    check_divergence(&solver, start_objective, objective, "--c")?;
    Ok(FitPaucReport {
        data: train.name.clone(),
        solver,
        fpr: [alpha, beta],
        objective,
        train_pauc,
        test_pauc,
        test_auc,
        seconds,
        w,
        history,
    })
}

/// How far above its value at `w = 0` a final objective may end before `fit-pauc` or
/// `fit-sorr` calls the run diverged.
pub const DIVERGENCE_FACTOR: f64 = 1e6;

/// Refuse a run of `solver` whose objective ended [`DIVERGENCE_FACTOR`] times above its
/// value `start` at `w = 0`: every surrogate is positive there, so the start is a scale, and
/// such an end is a divergence, not an answer (`--c 1e300` ended at 3e298 with exit 0).
/// `flags` names the step sizes to lower.
///
/// # Errors
/// A message naming the solver, both objectives and `flags`.
pub fn check_divergence(
    solver: &str,
    start: f64,
    end: f64,
    flags: &str,
) -> Result<(), ExperimentError> {
    if end > DIVERGENCE_FACTOR * start {
        return Err(ExperimentError::Diverged(format!(
            "{solver} diverged: the objective grew from {start:.6} at w = 0 to {end:.6e}; \
             lower {flags}"
        )));
    }
    Ok(())
}
