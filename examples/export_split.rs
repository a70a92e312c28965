//! Write the training, validation and test sets of a long-tailed task as indices into the data
//! set's original files (with their binary labels), so that a peer library trains and
//! evaluates on exactly the same images (`benches/peers/libauc_side_by_side.py` reads it).
//!
//! ```sh
//! cargo run --release --example export_split -- --data fashion-mnist --positive 3 \
//!     --json out/peers/split.json
//! ```

use std::path::PathBuf;

use clap::Parser;
use rankrisk::experiments::args::{ImageArgs, LongTailedArgs};
use rankrisk::tasks::ImageTask;
use rankrisk_datasets::ImageSource;
use rankrisk_datasets::batcher::ImageBatcher;

#[derive(Parser)]
#[command(about = "A long-tailed task's split as indices into the original files")]
struct Cli {
    /// Where to write the JSON.
    #[arg(long)]
    json: PathBuf,
    #[command(flatten)]
    args: LongTailedArgs,
}

fn part(b: &ImageBatcher, train_file: bool) -> serde_json::Value {
    let set = b.set();
    serde_json::json!({
        "file": if train_file { "train" } else { "test" },
        "index": set.images.source,
        "positive": set.positive,
    })
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let task = cli.args.task();
    let sets = match task.build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let out = serde_json::json!({
        "task": task.label(),
        "seed": cli.args.training.seed,
        "shape": [sets.train.set().images.channels, sets.train.set().images.height, sets.train.set().images.width],
        "train": part(&sets.train, true),
        "val": part(&sets.val, true),
        "test": part(&sets.test, false),
    });
    if let Some(dir) = cli.json.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(&cli.json, out.to_string()) {
        Ok(()) => {
            println!(
                "{}: {} training, {} validation, {} test images -> {}",
                task.label(),
                sets.train.len(),
                sets.val.len(),
                sets.test.len(),
                cli.json.display()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", cli.json.display());
            std::process::ExitCode::from(2)
        }
    }
}
