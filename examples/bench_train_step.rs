//! Where the time of one training step goes for ResNet-20 at batch 64 (32x32 RGB) with each
//! CPU-side objective: the device part (forward, one read-back of the scores, surrogate
//! backward, optimizer step) against the CPU part (the objective's per-sample work: the deep
//! ADMM w-step gradient, an SBCD block step, the mini-batch pAUC, AUC-M). The CPU share is
//! what the objective adds to a step.
//!
//! `cargo run --release --example bench_train_step -- --backends flex,ndarray --steps 3`

use std::time::Instant;

use burn::optim::{GradientsParams, SgdConfig};
use burn::tensor::{Device, Tensor, TensorData};
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk::pauc::objective::PairLoss;
use rankrisk::pauc::sbcd::{DualState, block_step};
use rankrisk::train::{AucMConfig, DeepAdmmConfig, MiniBatchPaucConfig, Objective};
use rankrisk::weights::Weights;
use rankrisk_models::{ResNet20Config, Scorer};

#[derive(Parser)]
#[command(about = "CPU share of a ResNet-20 training step per objective and backend")]
struct Args {
    /// Backends, comma-separated.
    #[arg(long, default_value = "flex", value_delimiter = ',')]
    backends: Vec<BackendKind>,
    /// Timed steps per cell (after one warm-up step).
    #[arg(long, default_value_t = 3)]
    steps: usize,
    /// Training-set size the per-sample state is kept for.
    #[arg(long, default_value_t = 50_000)]
    n: usize,
    /// Batch size (even; the figures in docs are at 64; CI runs 8 on a software GPU).
    #[arg(long, default_value_t = 64)]
    batch: usize,
}

fn main() {
    let args = Args::parse();
    let batch = args.batch;
    assert!(
        batch >= 2 && batch % 2 == 0,
        "--batch {batch}: an even size of at least 2"
    );
    let n = args.n;
    let labels: Vec<f64> = (0..n)
        .map(|i| if i % 10 == 3 { 1.0 } else { -1.0 })
        .collect();
    println!("| backend | objective | device ms/step | CPU objective ms/step | CPU share |");
    println!("|---|---|---|---|---|");
    for &kind in &args.backends {
        let device: Device = match autodiff_device(kind) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{kind}: {e}");
                continue;
            }
        };
        device.seed(0);
        let mut model = ResNet20Config::new().init(&device);
        let mut optim = SgdConfig::new().init();
        let x: Vec<f32> = (0..batch * 3 * 32 * 32)
            .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
            .collect();
        let x = Tensor::<4>::from_data(TensorData::new(x, [batch, 3, 32, 32]), &device);
        let mut admm = DeepAdmmConfig::new(Weights::Cvar { q: 0.8 })
            .with_l2(0.0)
            .init(&labels)
            .unwrap();
        // The once-per-outer-iteration CPU work: dual step and z-step (PAVA) over all n.
        let u: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f64 / 250.0 - 2.0)
            .collect();
        admm.outer_step(&u).unwrap();
        let t = Instant::now();
        admm.outer_step(&u).unwrap();
        eprintln!(
            "deep ADMM dual step + z-step (PAVA) over n = {n}: {:.1} ms per outer iteration",
            t.elapsed().as_secs_f64() * 1e3
        );
        let mut aucm = AucMConfig::new()
            .with_imratio(Some(0.1))
            .with_lr(0.1)
            .with_gamma(500.0)
            .with_weight_decay(0.0)
            .init(&[1.0, -1.0])
            .unwrap();
        let mut mb = MiniBatchPaucConfig::new(0.05, 0.5).init(&labels).unwrap();
        let mut duals = DualState::new(n / 10, 0.7);
        for name in [
            "deep ADMM (CVaR)",
            "SBCD block 32x32",
            "mini-batch pAUC",
            "AUC-M",
        ] {
            let (mut dev, mut cpu_t) = (Vec::new(), Vec::new());
            for step in 0..=args.steps {
                let ids: Vec<usize> = (0..batch).map(|k| (step * batch + k * 7) % n).collect();
                let y: Vec<f64> = (0..batch)
                    .map(|k| if k % 2 == 0 { 1.0 } else { -1.0 })
                    .collect();
                let t0 = Instant::now();
                let scores = model.score(x.clone());
                let cpu = scores_to_cpu(scores.clone()).unwrap();
                let t1 = Instant::now();
                let grad: Vec<f32> = match name {
                    "deep ADMM (CVaR)" => {
                        let y_state: Vec<f64> = ids.iter().map(|&i| labels[i]).collect();
                        admm.batch_gradient(&cpu, &y_state, &ids).unwrap().grad
                    }
                    "SBCD block 32x32" => {
                        let (sp, sn) = cpu.split_at(batch / 2);
                        let pos: Vec<usize> =
                            (0..batch / 2).map(|k| (step * 32 + k) % (n / 10)).collect();
                        let g = block_step(
                            PairLoss::Logistic,
                            sp,
                            sn,
                            &pos,
                            &mut duals,
                            0.5 * (n as f64 * 0.9),
                            1e-3,
                            n / 10,
                            n - n / 10,
                        );
                        g.pos.iter().chain(&g.neg).map(|&v| v as f32).collect()
                    }
                    "mini-batch pAUC" => mb.batch_gradient(&cpu, &y, &ids).unwrap().grad,
                    _ => aucm.batch_gradient(&cpu, &y, &ids).unwrap().grad,
                };
                let t2 = Instant::now();
                let grads = GradientsParams::from_grads(
                    surrogate(scores, &grad).unwrap().backward(),
                    &model,
                );
                model = optim.step(1e-3, model, grads);
                device.sync().unwrap();
                let t3 = Instant::now();
                if step > 0 {
                    dev.push((t1 - t0 + (t3 - t2)).as_secs_f64());
                    cpu_t.push((t2 - t1).as_secs_f64());
                }
            }
            let d = dev.iter().sum::<f64>() / dev.len() as f64;
            let c = cpu_t.iter().sum::<f64>() / cpu_t.len() as f64;
            println!(
                "| {kind} | {name} | {:.1} | {:.3} | {:.4}% |",
                d * 1e3,
                c * 1e3,
                100.0 * c / (c + d)
            );
        }
    }
}
