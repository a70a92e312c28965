//! Forward + backward time per batch for the image models on each backend: ResNet-20 at 32x32
//! and DenseNet121 at 64x64 and 224x224 (training mode: autodiff device, batch-norm batch
//! statistics; the loss is the sum of the scores, so the backward pass is the full one).
//!
//! `cargo run --release --example bench_models -- --backends ndarray,flex,wgpu --batch 64`
//! prints a markdown table of the median seconds per step over `--reps` steps after one warm-up
//! step, and images per second.

use std::time::Instant;

use burn::tensor::{Device, Tensor, TensorData};
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk_models::{DenseNet121Config, ResNet20Config, Scorer};

#[derive(Parser)]
#[command(about = "Forward+backward time per batch of ResNet-20 and DenseNet121 per backend")]
struct Args {
    /// Backends to time, comma-separated (ndarray, flex, wgpu).
    #[arg(long, default_value = "ndarray,flex", value_delimiter = ',')]
    backends: Vec<BackendKind>,
    /// Models and input sizes, comma-separated: resnet20-32, densenet121-64, densenet121-224.
    #[arg(
        long,
        default_value = "resnet20-32,densenet121-64,densenet121-224",
        value_delimiter = ','
    )]
    models: Vec<String>,
    /// Images per batch.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Timed steps per cell (after one warm-up step).
    #[arg(long, default_value_t = 3)]
    reps: usize,
}

fn batch(device: &Device, b: usize, hw: usize) -> Tensor<4> {
    let n = b * 3 * hw * hw;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    Tensor::from_data(TensorData::new(v, [b, 3, hw, hw]), device)
}

/// Median seconds of one forward+backward step of `score`.
fn time_steps(device: &Device, reps: usize, step: impl Fn() -> Tensor<1>) -> f64 {
    let mut times = Vec::with_capacity(reps);
    for i in 0..=reps {
        let t = Instant::now();
        let grads = step().sum().backward();
        drop(grads);
        device.sync().expect("device sync");
        if i > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let args = Args::parse();
    println!(
        "| model | input | backend | batch | s per fwd+bwd step (median of {}) | images/s |",
        args.reps
    );
    println!("|---|---|---|---|---|---|");
    for spec in &args.models {
        let (name, hw) = match spec.as_str() {
            "resnet20-32" => ("ResNet-20", 32),
            "densenet121-64" => ("DenseNet121", 64),
            "densenet121-224" => ("DenseNet121", 224),
            other => {
                eprintln!(
                    "unknown model {other}: use resnet20-32, densenet121-64, densenet121-224"
                );
                std::process::exit(2);
            }
        };
        for &kind in &args.backends {
            let device = match autodiff_device(kind) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("{kind}: {e}");
                    continue;
                }
            };
            device.seed(1);
            let x = batch(&device, args.batch, hw);
            let secs = if name == "ResNet-20" {
                let model = ResNet20Config::new().init(&device);
                time_steps(&device, args.reps, || model.score(x.clone()))
            } else {
                let model = DenseNet121Config::new().init(&device);
                time_steps(&device, args.reps, || model.score(x.clone()))
            };
            println!(
                "| {name} | {hw}x{hw} | {kind} | {} | {secs:.3} | {:.1} |",
                args.batch,
                args.batch as f64 / secs
            );
        }
    }
}
