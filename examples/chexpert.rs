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
use rankrisk::cli::train::{Run, save_config};
use rankrisk::train::tasks::{ChexpertArgs, run_chexpert};

#[derive(Parser)]
#[command(about = "DenseNet121 on a CheXpert task, pAUC by AGD-SBCD (or CE, AUC-M, MB)")]
struct Cli {
    #[command(flatten)]
    args: ChexpertArgs,
}

fn main() {
    let cli = Cli::parse();
    // config.toml in the output folder lets `rankrisk eval` score this run later.
    let saved = save_config(&cli.args.out, &Run::Chexpert(cli.args.clone()));
    match saved
        .map_err(|e| e.to_string())
        .and_then(|()| run_chexpert(&cli.args).map_err(|e| e.to_string()))
    {
        Ok(s) => {
            println!("| method | best epoch | val pAUC | test pAUC[0.05, 0.5] | test AUC |");
            println!("|---|---|---|---|---|");
            println!(
                "| {} | {} | {:.4} | {:.4} | {:.4} |",
                s.config.method.name(),
                s.best.epoch,
                s.best.val_pauc,
                s.best.test_pauc,
                s.best.test_auc
            );
            println!("artifacts in {}", s.config.out.display());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
