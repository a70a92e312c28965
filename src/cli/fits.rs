//! The printing side of `rankrisk fit-linear`, `fit-pauc` and `smoke`: the fits are the
//! library's (`rankrisk::experiments`); these print their summary lines and write their JSON.

use clap::Args;
use rankrisk::experiments::fit_linear::{FitLinearArgs, fit as fit_linear};
use rankrisk::experiments::fit_pauc::{FitPaucArgs, fit as fit_pauc};
use rankrisk::experiments::paths::check_output;
use rankrisk::experiments::smoke;
use rankrisk::train::run::BackendArg;

use super::output::outln;

/// Run `fit-linear`: print a summary line, write the JSON if asked.
///
/// # Errors
/// A message for the user.
pub fn run_fit_linear(args: &FitLinearArgs) -> Result<(), String> {
    if let Some(path) = &args.json {
        check_output(path, "--json", &args.input.files())?;
    }
    let report = fit_linear(args)?;
    // Figures that do not exist (no test file) are left out, never printed as NaN.
    let figure = |name: &str, value: Option<f64>| value.map(|v| format!(", {name} {v:.4}"));
    let quality = match report.train_mae {
        Some(train) => format!(
            "train MAE {train:.4}{}",
            figure("test MAE", report.test_mae).unwrap_or_default()
        ),
        None => format!(
            "train accuracy {:.4}{}",
            report.train_accuracy,
            figure(
                "test accuracy",
                Some(report.test_accuracy).filter(|a| !a.is_nan())
            )
            .unwrap_or_default()
        ),
    };
    outln!(
        "{} {} {} {} [{}]: objective {:.6}, {quality}, {} iterations, {:.3} s",
        report.data,
        report.objective_spec,
        report.loss,
        report.reg,
        report.solver,
        report.objective,
        report.iterations,
        report.seconds
    )?;
    if let (Some(false), Some(gap)) = (report.converged, report.best_gap) {
        eprintln!(
            "warning: Pdprox stopped at the iteration cap ({}) before the duality gap reached \
             {:.0e}: gap {gap:.2e} (raise --max-iter)",
            report.iterations,
            args.tol.unwrap_or(1e-4)
        );
    } else if report.converged == Some(false) {
        let [p, d] = report.residuals.unwrap_or([f64::NAN; 2]);
        let gap = match report.gap {
            Some(g) => format!(", certified relative gap {:.2e}", g / report.objective),
            None => String::new(),
        };
        eprintln!(
            "warning: ADMM stopped at the iteration cap ({}) before converging: relative \
             residuals primal {p:.2e}, dual {d:.2e}{gap}, tolerance {:.0e} (raise --max-iter)",
            report.iterations,
            args.tol.unwrap_or(1e-6)
        );
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Run `fit-pauc`: print a summary, write the JSON if asked.
///
/// # Errors
/// A message for the user.
pub fn run_fit_pauc(args: &FitPaucArgs) -> Result<(), String> {
    if let Some(path) = &args.json {
        check_output(path, "--json", &args.input.files())?;
    }
    let r = fit_pauc(args)?;
    // Without test data there is no test figure to print (never NaN).
    let test = if r.test_pauc.is_nan() {
        String::new()
    } else {
        format!(", test pAUC {:.4}, test AUC {:.4}", r.test_pauc, r.test_auc)
    };
    outln!(
        "{} [{}] FPR [{}, {}]: objective {:.6}, train pAUC {:.4}{test}, {:.2} s",
        r.data,
        r.solver,
        r.fpr[0],
        r.fpr[1],
        r.objective,
        r.train_pauc,
        r.seconds
    )?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Arguments of `rankrisk smoke`.
#[derive(Debug, Args)]
pub struct SmokeArgs {
    /// Backend selection.
    #[command(flatten)]
    pub backend: BackendArg,
    /// Built-in data set (australian, phoneme, titanic, monks-3, splice, utkface).
    #[arg(long, default_value = "australian")]
    pub data: String,
    /// Number of full-batch Adam steps.
    #[arg(long, default_value_t = 50)]
    pub steps: usize,
    /// Adam learning rate.
    #[arg(long, default_value_t = 0.05)]
    pub lr: f64,
}

/// `rankrisk smoke`: check the flags, run, print one line.
///
/// # Errors
/// A message for a bad flag, an unknown backend or data set, or a failed step.
pub fn run_smoke(args: &SmokeArgs) -> Result<(), String> {
    let kind = args.backend.resolve().map_err(|e| e.to_string())?;
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    if !(args.lr.is_finite() && args.lr > 0.0) {
        return Err(format!("--lr must be a positive number, got {}", args.lr));
    }
    let report = smoke::run(kind, &args.data, args.steps, args.lr).map_err(|e| e.to_string())?;
    outln!(
        "smoke run on {} ({} backend): logistic loss {:.4} -> {:.4} in {} steps, train accuracy {:.3}, {:.2} ms/step",
        report.dataset,
        report.backend,
        report.initial_loss,
        report.final_loss,
        report.steps,
        report.accuracy,
        report.ms_per_step
    )?;
    Ok(())
}
