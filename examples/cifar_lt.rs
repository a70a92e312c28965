//! ResNet-20 on a long-tailed binary image task, trained for pAUC in an FPR range by AGD-SBCD
//! (or CE, AUC-M, mini-batch pAUC for comparison). Writes metrics (CSV, JSON), plots (ROC with
//! the FPR range shaded, training curves), the best model and a checkpoint per epoch.
//!
//! ```sh
//! bash datasets/fetch-test-data.sh          # Fashion-MNIST and MNIST, for real
//! cargo run --release --example cifar_lt -- --data fashion-mnist --method sbcd --epochs 2
//! cargo run --release --example cifar_lt -- --data cifar10 --data-dir ~/data/cifar-10-batches-bin \
//!     --positive 3 --imbalance 0.01 --backend wgpu --epochs 20
//! ```

use clap::Parser;
use rankrisk::experiments::args::LongTailedArgs;
use rankrisk::experiments::launch::run_example;
use rankrisk::experiments::plan::Run;

#[derive(Parser)]
#[command(
    about = "ResNet-20 on a long-tailed binary image task (CIFAR-10/100-LT, Tiny-ImageNet-200, Fashion-MNIST, MNIST)"
)]
struct Cli {
    #[command(flatten)]
    args: LongTailedArgs,
}

/// Saves config.toml in the output folder too, so `rankrisk eval` can score the run later.
fn main() -> std::process::ExitCode {
    run_example(Run::LongTailed(Cli::parse().args))
}
