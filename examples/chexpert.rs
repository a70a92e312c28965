//! DenseNet121 on one CheXpert task (CheXpert-v1.0-small), trained for pAUC over FPR
//! [0.05, 0.5] by AGD-SBCD, or by CE / AUC-M / mini-batch pAUC for comparison, optionally from
//! torchvision's ImageNet weights. The best model is chosen on the 10% validation split; test
//! AUC and pAUC are on the official valid.csv.
//!
//! ```sh
//! cargo run --release --example chexpert -- --data-dir ~/data --task edema --backend wgpu \
//!     --pretrained densenet121-a639ec97.pth --epochs 10
//! ```

use clap::Parser;
use rankrisk::experiments::args::ChexpertArgs;
use rankrisk::experiments::launch::run_example;
use rankrisk::experiments::plan::Run;

#[derive(Parser)]
#[command(about = "DenseNet121 on a CheXpert task, pAUC by AGD-SBCD (or CE, AUC-M, MB)")]
struct Cli {
    #[command(flatten)]
    args: ChexpertArgs,
}

/// Saves config.toml in the output folder too, so `rankrisk eval` can score the run later.
fn main() -> std::process::ExitCode {
    run_example(Run::Chexpert(Cli::parse().args))
}
