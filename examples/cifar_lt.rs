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
use rankrisk::cli::train::{Run, save_config};
use rankrisk::train::tasks::{LongTailedArgs, run_long_tailed};

#[derive(Parser)]
#[command(
    about = "ResNet-20 on a long-tailed binary image task (CIFAR-10/100-LT, Tiny-ImageNet-200, Fashion-MNIST, MNIST)"
)]
struct Cli {
    #[command(flatten)]
    args: LongTailedArgs,
}

fn main() {
    let cli = Cli::parse();
    // config.toml in the output folder lets `rankrisk eval` score this run later.
    let saved = save_config(&cli.args.out, &Run::LongTailed(cli.args.clone()));
    match saved
        .map_err(|e| e.to_string())
        .and_then(|()| run_long_tailed(&cli.args).map_err(|e| e.to_string()))
    {
        Ok(s) => {
            println!(
                "| method | best epoch | val pAUC | test pAUC[{}, {}] | test AUC | train s |",
                s.config.alpha, s.config.beta
            );
            println!("|---|---|---|---|---|---|");
            println!(
                "| {} | {} | {:.4} | {:.4} | {:.4} | {:.0} |",
                s.config.method.name(),
                s.best.epoch,
                s.best.val_pauc,
                s.best.test_pauc,
                s.best.test_auc,
                s.history.last().map_or(0.0, |h| h.seconds)
            );
            println!("artifacts in {}", s.config.out.display());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
