//! The linear solvers on the vendored tabular sets: rank-based ADMM (ERM and CVaR q = 0.3,
//! logistic, l2 mu = 0.01) and AGD-SBCD for pAUC over FPR [0.05, 0.5], with test accuracy,
//! AUC and pAUC, one row per set and method (`rankrisk train` runs the same task from a
//! config: `task = "tabular"`).
//!
//! `cargo run --release --example tabular -- [--seed 0] [--sets australian,phoneme]`

use clap::Parser;
use rankrisk::experiments::args::TabularArgs;
use rankrisk::tasks::report::markdown;

#[derive(Parser)]
#[command(about = "Linear rank-based ADMM and AGD-SBCD on the vendored tabular sets")]
struct Cli {
    #[command(flatten)]
    args: TabularArgs,
}

fn main() {
    match Cli::parse().args.task().run() {
        Ok(rows) => print!("{}", markdown(&rows)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
