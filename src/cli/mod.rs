//! The `rankrisk` command line: argument parsing and the subcommands.
//!
//! Errors caused by the user's input (unknown backend, missing data, malformed file) exit with
//! status 2 and a one-line message; the binary never panics on bad input.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

pub mod eval;
pub mod fit_linear;
pub mod fit_pauc;
pub mod grid;
pub mod train;

use crate::backend::{BACKEND_ENV, BackendKind, wgpu_adapters};
use crate::loss::Loss;
use crate::pava;
use crate::smoke;
use crate::weights::Weights;

/// Rank-based losses and partial-AUC objectives on Burn (wgpu, ndarray, flex).
#[derive(Debug, Parser)]
#[command(name = "rankrisk", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Version, compiled backends and the wgpu adapters found on this machine.
    Info,
    /// Solve the z-subproblem (10) by the refined PAVA for a JSON input (see the README).
    Pava(PavaArgs),
    /// Fit a rank-based objective on a linear model (ADMM, sADMM, SGD, LSVRG, DCA).
    FitLinear(Box<fit_linear::FitLinearArgs>),
    /// Maximize the partial AUC over an FPR range for a linear model (AGD-SBCD or a baseline).
    FitPauc(Box<fit_pauc::FitPaucArgs>),
    /// Minimize the sum of ranked range (SoRR) loss for a linear model (AGD or DCA).
    FitSorr(Box<fit_pauc::FitSorrArgs>),
    /// Train from a TOML/JSON config (image tasks, tabular sets); without a config, the
    /// built-in default on real data; prints the resolved config and a results table.
    Train(train::TrainArgs),
    /// Score a trained model of a `train` run folder on its test or validation set (metrics
    /// JSON and ROC plot).
    Eval(Box<eval::EvalArgs>),
    /// Forward/backward smoke run: the linear scorer with the logistic loss through the
    /// surrogate bridge on a built-in tabular set.
    Smoke(SmokeArgs),
}

/// The backend choice shared by every training command.
#[derive(Debug, Clone, PartialEq, Args, serde::Serialize)]
pub struct BackendArg {
    /// Backend: wgpu, ndarray or flex (default: $BURN_DEVICE, else flex).
    #[arg(long)]
    pub backend: Option<BackendKind>,
}

impl BackendArg {
    /// The flag, else `BURN_DEVICE`, else the default backend.
    ///
    /// # Errors
    /// The message of an unknown `BURN_DEVICE` value.
    pub fn resolve(&self) -> Result<BackendKind, String> {
        match self.backend {
            Some(kind) => Ok(kind),
            None => BackendKind::from_env()
                .map(Option::unwrap_or_default)
                .map_err(|e| format!("{BACKEND_ENV}: {e}")),
        }
    }
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

/// Arguments of `rankrisk pava`.
#[derive(Debug, Args)]
pub struct PavaArgs {
    /// JSON file `{"m": [...], "loss": "logistic", "weights": {"kind": "cvar", "q": 0.8}, "rho": 1.0}`;
    /// `-` reads standard input.
    #[arg(long)]
    pub input: std::path::PathBuf,
}

/// The JSON input of `rankrisk pava`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PavaInput {
    m: Vec<f64>,
    loss: String,
    weights: Weights,
    rho: f64,
}

/// The JSON output of `rankrisk pava`.
#[derive(Debug, serde::Serialize)]
struct PavaOutput {
    z: Vec<f64>,
    objective: f64,
    blocks: usize,
    merges: usize,
    solver_iterations: u64,
}

fn run_pava(args: &PavaArgs) -> Result<(), String> {
    let text = if args.input.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| format!("reading standard input: {e}"))?
    } else {
        std::fs::read_to_string(&args.input)
            .map_err(|e| format!("cannot read {}: {e}", args.input.display()))?
    };
    let input: PavaInput =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let loss: Loss = input
        .loss
        .parse()
        .map_err(|e: crate::loss::LossError| e.to_string())?;
    let sigma = input
        .weights
        .sigma(input.m.len())
        .map_err(|e| e.to_string())?;
    let (z, stats) =
        pava::solve(&loss, &sigma, input.rho, &input.m).map_err(|e| format!("pava: {e}"))?;
    let objective = pava::objective(&loss, &sigma, input.rho, &input.m, &z);
    if !objective.is_finite() {
        return Err(format!(
            "{}: the objective of problem (10) is {objective} at the solution: the losses or \
             rho/2 ||z - m||^2 exceed the floating-point range at this scale (rescale m or rho)",
            args.input.display()
        ));
    }
    let out = PavaOutput {
        objective,
        z,
        blocks: stats.blocks,
        merges: stats.merges,
        solver_iterations: stats.solver_iterations,
    };
    println!(
        "{}",
        serde_json::to_string(&out).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// Run the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Info => {
            info();
            Ok(())
        }
        Command::Pava(args) => run_pava(&args),
        Command::FitLinear(args) => fit_linear::run(&args),
        Command::FitPauc(args) => fit_pauc::run(&args),
        Command::FitSorr(args) => fit_pauc::run_sorr(&args),
        Command::Smoke(args) => run_smoke(&args),
        Command::Train(args) => train::run(&args),
        Command::Eval(args) => eval::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn info() {
    println!("rankrisk {}", env!("CARGO_PKG_VERSION"));
    println!("burn 0.22.1");
    let names: Vec<&str> = BackendKind::ALL.iter().map(|k| k.name()).collect();
    println!("compiled backends: {}", names.join(", "));
    match BackendKind::from_env() {
        Ok(Some(kind)) => println!("{BACKEND_ENV}={kind} (used when --backend is not given)"),
        Ok(None) => println!(
            "default backend: {} ({BACKEND_ENV} unset)",
            BackendKind::default()
        ),
        Err(e) => println!("{BACKEND_ENV}: {e}"),
    }
    let adapters = wgpu_adapters();
    if adapters.is_empty() {
        println!("wgpu adapters: none found (install a Vulkan driver, e.g. mesa-vulkan-drivers)");
    } else {
        println!("wgpu adapters:");
        for a in adapters {
            println!(
                "  - {}  type: {}  api: {}  driver: {}",
                a.name, a.device_type, a.api, a.driver
            );
        }
    }
}

fn run_smoke(args: &SmokeArgs) -> Result<(), String> {
    let kind = args.backend.resolve()?;
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    if !(args.lr.is_finite() && args.lr > 0.0) {
        return Err(format!("--lr must be a positive number, got {}", args.lr));
    }
    let report = smoke::run(kind, &args.data, args.steps, args.lr).map_err(|e| e.to_string())?;
    println!(
        "smoke run on {} ({} backend): logistic loss {:.4} -> {:.4} in {} steps, train accuracy {:.3}, {:.2} ms/step",
        report.dataset,
        report.backend,
        report.initial_loss,
        report.final_loss,
        report.steps,
        report.accuracy,
        report.ms_per_step
    );
    Ok(())
}
