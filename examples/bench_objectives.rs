//! The CPU side of each objective per batch: `Objective::batch_gradient` (the loss, `dL/ds`
//! and the state update) on a batch of half positives, half negatives, at batch 32, 256 and
//! 2,048, median and interquartile range over the repeats, one thread. The figures compare
//! with Jiang et al. 2025's Tables 11-12 (loss computation per iteration at 1,024 + 1,024).
//!
//! ```text
//! cargo run --release --example bench_objectives -- [--repeats 200] [--batches 32,256,2048]
//! ```

use std::time::Instant;

use clap::Parser;
use rankrisk::pauc::objective::PairLoss;
use rankrisk::train::{
    AucMConfig, ErmConfig, MiniBatchPaucConfig, Objective, PauciConfig, SopaConfig, SopaSConfig,
    SotaSConfig, StacoConfig, UpauciConfig,
};

#[derive(Parser)]
struct Args {
    /// Timed calls per objective and batch size.
    #[arg(long, default_value_t = 200)]
    repeats: usize,
    /// Batch sizes (half positives).
    #[arg(long, value_delimiter = ',', default_value = "32,256,2048")]
    batches: Vec<usize>,
}

/// Scores spread over a few logits, deterministic.
fn scores(n: usize, step: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919 + step * 104_729) % 1000) as f64 / 250.0 - 2.0)
        .collect()
}

fn time(o: &mut dyn Objective, batch: usize, repeats: usize) -> (f64, f64) {
    let labels: Vec<f64> = (0..batch)
        .map(|i| if i < batch / 2 { 1.0 } else { -1.0 })
        .collect();
    let ids: Vec<usize> = (0..batch).collect();
    let mut ms: Vec<f64> = (0..repeats + 5)
        .map(|step| {
            let s = scores(batch, step);
            let t = Instant::now();
            let g = o
                .batch_gradient(&s, &labels, &ids)
                .unwrap_or_else(|e| panic!("{}: {e}", o.name()));
            std::hint::black_box(g);
            t.elapsed().as_secs_f64() * 1e3
        })
        .skip(5)
        .collect();
    ms.sort_by(f64::total_cmp);
    let q = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    (q(0.5), q(0.75) - q(0.25))
}

fn main() {
    let args = Args::parse();
    println!("| objective | batch | median ms | IQR ms |");
    println!("|---|---|---|---|");
    for &batch in &args.batches {
        let labels: Vec<f64> = (0..batch)
            .map(|i| if i < batch / 2 { 1.0 } else { -1.0 })
            .collect();
        let mut objectives: Vec<Box<dyn Objective>> = vec![
            Box::new(ErmConfig::new().init(&labels).expect("CE")),
            Box::new(AucMConfig::new().init(&labels).expect("AUC-M")),
            Box::new(
                MiniBatchPaucConfig::new(0.0, 0.3)
                    .with_loss(PairLoss::SquaredHinge)
                    .init(&labels)
                    .expect("MB"),
            ),
            Box::new(SopaConfig::new(0.3).init(&labels).expect("SOPA")),
            Box::new(SopaSConfig::new().init(&labels).expect("SOPA-s")),
            Box::new(SotaSConfig::new().init(&labels).expect("SOTA-s")),
            Box::new(
                StacoConfig::new()
                    .with_theta_0(0.3)
                    .with_theta_1(0.3)
                    .init(&labels)
                    .expect("STACO"),
            ),
            Box::new(
                PauciConfig::new()
                    .with_alpha(0.3)
                    .init(&labels)
                    .expect("PAUCI"),
            ),
            Box::new(
                UpauciConfig::new()
                    .with_alpha(0.3)
                    .init(&labels)
                    .expect("UPAUCI"),
            ),
        ];
        for o in &mut objectives {
            let (median, iqr) = time(o.as_mut(), batch, args.repeats);
            println!("| {} | {batch} | {median:.4} | {iqr:.4} |", o.name());
        }
    }
}
