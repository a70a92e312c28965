//! `rankrisk fit-sorr`: the sum of ranked range (SoRR) of a linear model's individual losses
//! by the pAUC paper's AGD (Algorithm 2 with Algorithm 3) or by DCA.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::output::outln;
use rankrisk::experiments::fit_pauc::{check_divergence, pair};
use rankrisk::experiments::linear_data::{DataArgs, load_parts};

/// Arguments of `rankrisk fit-sorr`.
#[derive(Debug, Clone, Args)]
pub struct FitSorrArgs {
    /// Where the data comes from (built-in sets: seeded 60/40 split).
    #[command(flatten)]
    pub input: DataArgs,
    /// Rank range M,N: the loss sums the (M+1)-th .. N-th largest individual losses.
    #[arg(long)]
    pub range: String,
    /// Individual loss (logistic in the paper).
    #[arg(long, default_value = "logistic")]
    pub loss: rankrisk::math::loss::Loss,
    /// Solver: agd (Algorithm 2 with Algorithm 3), dca (constant steps), dca-changing.
    #[arg(long, default_value = "agd")]
    pub solver: String,
    /// Outer iterations.
    #[arg(long, default_value_t = 10)]
    pub epochs: usize,
    /// Step constant c (eta = c / ((k+1) N)).
    #[arg(long, default_value_t = 1.0)]
    pub c: f64,
    /// T_k = t-scale (k+1)^2 (paper: 30, 50 or 100 for AGD; 100-500 for DCA).
    #[arg(long, default_value_t = 50)]
    pub t_scale: usize,
    /// mu = mu-scale / N (paper: 2e2 or 1e3).
    #[arg(long, default_value_t = 2e2)]
    pub mu_scale: f64,
    /// gamma = gamma-scale / N (paper: 2e2 .. 2e4).
    #[arg(long, default_value_t = 2e2)]
    pub gamma_scale: f64,
    /// Constant-step DCA: step (scaled by 1/N) and inner iterations.
    #[arg(long, default_value_t = 0.1)]
    pub lr: f64,
    /// Constant-step DCA inner iterations (paper: 2000, 3000).
    #[arg(long, default_value_t = 2000)]
    pub inner: usize,
    /// Samples per step J (paper: 100).
    #[arg(long, default_value_t = 100)]
    pub batch: usize,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the result as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// The JSON written by `fit-sorr`.
#[derive(Debug, serde::Serialize)]
pub struct FitSorrReport {
    /// Data set.
    pub data: String,
    /// Solver.
    pub solver: String,
    /// Rank range (m, n).
    pub range: [usize; 2],
    /// Final training SoRR loss divided by n - m.
    pub objective: f64,
    /// Training accuracy.
    pub train_accuracy: f64,
    /// Test accuracy (NaN, null in the JSON, without test data).
    pub test_accuracy: f64,
    /// Seconds.
    pub seconds: f64,
    /// Linear model.
    pub w: Vec<f64>,
    /// History.
    pub history: Vec<rankrisk::pauc::sorr::SorrRecord>,
}

/// Run `fit-sorr`.
///
/// # Errors
/// A message for the user.
pub fn run(args: &FitSorrArgs) -> Result<(), String> {
    use rankrisk::pauc::sorr::{DcaSteps, SorrConfig, SorrProblem, agd_sorr, dca_sorr};
    if let Some(path) = &args.json {
        rankrisk::experiments::paths::check_output(path, "--json", &args.input.files())?;
    }
    for (flag, value) in [
        ("--c", args.c),
        ("--mu-scale", args.mu_scale),
        ("--gamma-scale", args.gamma_scale),
        ("--lr", args.lr),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(format!(
                "{flag} must be a positive finite number, got {value}"
            ));
        }
    }
    for (flag, count) in [
        ("--epochs", args.epochs),
        ("--t-scale", args.t_scale),
        ("--inner", args.inner),
        ("--batch", args.batch),
    ] {
        if count == 0 {
            return Err(format!(
                "{flag} must be at least 1, got 0 (nothing would be solved)"
            ));
        }
    }
    let (a, b) = pair(&args.range, "range")?;
    let m: usize = a
        .parse()
        .map_err(|_| format!("--range: '{a}' is not a count"))?;
    let n: usize = b
        .parse()
        .map_err(|_| format!("--range: '{b}' is not a count"))?;
    let (train, test) = load_parts(&args.input, &[0.6, 0.4], args.seed)?;
    let problem = SorrProblem {
        x: &train.x,
        y: &train.y,
        d: train.d,
        loss: args.loss,
        m,
        n,
    };
    problem.validate().map_err(|e| e.to_string())?;
    let w0 = vec![0.0; train.d];
    let start = Instant::now();
    let solver = args.solver.to_ascii_lowercase();
    let (w, history) = match solver.as_str() {
        "agd" => {
            let cfg = SorrConfig {
                outer: args.epochs,
                t_scale: args.t_scale,
                c: args.c,
                mu_scale: args.mu_scale,
                gamma_scale: args.gamma_scale,
                j: args.batch,
                seed: args.seed,
            };
            agd_sorr(&problem, &w0, &cfg).map_err(|e| e.to_string())?
        }
        "dca" => dca_sorr(
            &problem,
            &w0,
            args.epochs,
            DcaSteps::Constant {
                lr: args.lr,
                iters: args.inner,
            },
            args.batch,
            args.seed,
        )
        .map_err(|e| e.to_string())?,
        "dca-changing" => dca_sorr(
            &problem,
            &w0,
            args.epochs,
            DcaSteps::Changing {
                c: args.c,
                t_scale: args.t_scale,
            },
            args.batch,
            args.seed,
        )
        .map_err(|e| e.to_string())?,
        other => {
            return Err(format!(
                "unknown solver '{other}': expected agd, dca, dca-changing"
            ));
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let acc = |t: &rankrisk_datasets::Tabular| rankrisk::metrics::accuracy(&t.scores(&w), &t.y);
    let objective = problem.objective(&w).map_err(|e| e.to_string())?;
    let start_objective = problem.objective(&w0).map_err(|e| e.to_string())?;
    check_divergence(&solver, start_objective, objective, "--c or --lr")?;
    let report = FitSorrReport {
        data: train.name.clone(),
        solver,
        range: [m, n],
        objective,
        train_accuracy: acc(&train),
        test_accuracy: test.as_ref().map_or(f64::NAN, acc),
        seconds,
        w: w.clone(),
        history,
    };
    let test = if report.test_accuracy.is_nan() {
        String::new()
    } else {
        format!(", test accuracy {:.4}", report.test_accuracy)
    };
    outln!(
        "{} [{}] SoRR ranks {}..{}: objective {:.6}, train accuracy {:.4}{test}, {:.2} s",
        report.data,
        report.solver,
        m + 1,
        n,
        report.objective,
        report.train_accuracy,
        report.seconds
    )?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
