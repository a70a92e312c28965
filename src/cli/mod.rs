//! The `rankrisk` command line: argument parsing and the subcommands.
//!
//! Errors caused by the user's input (unknown backend, missing data, malformed file) exit with
//! status 2 and a one-line message; the binary never panics on bad input. This is the one
//! layer where errors become strings.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod eval;
pub mod fit_sorr;
pub mod fits;
pub mod metrics;
pub mod output;
pub mod pava;
pub mod scores_csv;
pub mod serve;
pub mod train;

use output::outln;
use rankrisk::device::backend::{BACKEND_ENV, BackendKind, wgpu_adapters, wgpu_choice};
use rankrisk::device::remote::DeviceSpec;

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
    /// Solve the z-subproblem (10) by the refined PAVA for a JSON input (format: docs/GUIDE.md).
    Pava(pava::PavaArgs),
    /// Fit a rank-based objective on a linear model (ADMM, sADMM, SGD, LSVRG, DCA, Pdprox).
    FitLinear(Box<rankrisk::experiments::fit_linear::FitLinearArgs>),
    /// Maximize the partial AUC over an FPR range for a linear model (AGD-SBCD or a baseline).
    FitPauc(Box<rankrisk::experiments::fit_pauc::FitPaucArgs>),
    /// Minimize the sum of ranked range (SoRR) loss for a linear model (AGD or DCA).
    FitSorr(Box<fit_sorr::FitSorrArgs>),
    /// Train from a TOML/JSON config (image tasks, tabular sets); without a config, the
    /// built-in default on real data; prints the resolved config and a results table.
    Train(train::TrainArgs),
    /// Score a trained model of a `train` run folder on its test or validation set (metrics
    /// JSON and ROC plot).
    Eval(Box<eval::EvalArgs>),
    /// AUC, pAUC (ours, McClish, two-way) with confidence intervals for the score columns of a
    /// CSV file, and paired comparisons of the columns (DeLong, bootstrap).
    Metrics(Box<metrics::MetricsArgs>),
    /// Host this machine's device for data-parallel runs elsewhere (`--devices
    /// ...,remote:ws://HOST:PORT`; build with the `remote` feature).
    Serve(serve::ServeArgs),
    /// Forward/backward smoke run: the linear scorer with the logistic loss through the
    /// surrogate bridge on a built-in tabular set.
    Smoke(fits::SmokeArgs),
}

/// Run the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Info => info(),
        Command::Pava(args) => pava::run(&args),
        Command::FitLinear(args) => fits::run_fit_linear(&args),
        Command::FitPauc(args) => fits::run_fit_pauc(&args),
        Command::FitSorr(args) => fit_sorr::run(&args),
        Command::Smoke(args) => fits::run_smoke(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Train(args) => train::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Metrics(args) => metrics::run(&args),
    };
    match result.and_then(|()| output::finish()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // Nowhere to report a standard error that cannot be written either.
            let _ = writeln!(std::io::stderr(), "error: {message}");
            ExitCode::from(2)
        }
    }
}

fn info() -> Result<(), String> {
    outln!("rankrisk {}", env!("CARGO_PKG_VERSION"))?;
    outln!("burn 0.22.1")?;
    let names: Vec<&str> = BackendKind::ALL
        .iter()
        .filter(|k| **k != BackendKind::Wgpu || BackendKind::WGPU_COMPILED)
        .map(|k| k.name())
        .collect();
    outln!("compiled backends: {}", names.join(", "))?;
    if !BackendKind::WGPU_COMPILED {
        outln!("wgpu: not compiled into this build (cargo build --release --features wgpu)")?;
    }
    if BackendKind::CUDA_COMPILED {
        outln!(
            "cuda: compiled in; --backend cuda:N opens NVIDIA GPU N through the CUDA driver on \
             first use (libcuda is loaded at run time; kernels with exp/log need \
             libdevice.10.bc, docs/BACKENDS.md)"
        )?;
    } else {
        outln!("cuda: not compiled into this build (cargo build --release --features cuda)")?;
    }
    outln!(
        "GPU kernels (wgpu, cuda): autotune {}, fusion {}",
        if cfg!(feature = "autotune-cache") {
            "on (CUBECL_AUTOTUNE_LEVEL; results kept on disk)"
        } else if cfg!(feature = "autotune") {
            "on (CUBECL_AUTOTUNE_LEVEL; results kept for the process)"
        } else {
            "off"
        },
        if cfg!(feature = "fusion") {
            "on"
        } else {
            "off"
        }
    )?;
    if DeviceSpec::REMOTE_COMPILED {
        outln!(
            "remote devices: compiled in (rankrisk serve; --devices ...,remote:ws://HOST:PORT)"
        )?;
    } else {
        outln!(
            "remote devices: not compiled into this build (cargo build --release --features remote)"
        )?;
    }
    match BackendKind::from_env() {
        Ok(Some(kind)) => outln!("{BACKEND_ENV}={kind} (used when --backend is not given)")?,
        Ok(None) => outln!(
            "default backend: {} ({BACKEND_ENV} unset)",
            BackendKind::default()
        )?,
        Err(e) => outln!("{e}")?,
    }
    let adapters = wgpu_adapters();
    if !BackendKind::WGPU_COMPILED {
        // No adapter is listed without wgpu in the build.
    } else if adapters.is_empty() {
        outln!("wgpu adapters: none found (install a Vulkan driver, e.g. mesa-vulkan-drivers)")?;
    } else {
        let taken = wgpu_choice(adapters).map(|(_, a)| a);
        outln!("wgpu adapters (rankrisk runs on Vulkan, Metal or DX12, never OpenGL):")?;
        for a in adapters {
            let status = if taken == Some(a) {
                "taken by --backend wgpu"
            } else if a.api == "Gl" {
                "not used: OpenGL"
            } else {
                "usable (CUBECL_WGPU_DEFAULT_DEVICE picks another)"
            };
            outln!(
                "  - {}  type: {}  api: {}  driver: {}  [{status}]",
                a.name,
                a.device_type,
                a.api,
                a.driver
            )?;
        }
        if taken.is_none() {
            outln!(
                "  --backend wgpu will refuse to start: only OpenGL adapters (install a Vulkan \
                 driver, e.g. mesa-vulkan-drivers)"
            )?;
        }
    }
    Ok(())
}
