//! Where the time of one training step goes, phase by phase, on each backend: rankrisk's step
//! (the one the run driver takes for CE: batch assembly in host memory, upload, forward, one
//! read-back of the scores, the CPU objective, the surrogate's backward pass, the optimizer)
//! next to a bare Burn step on the same model and batch (forward, `softplus(-y s).mean()`,
//! backward, optimizer; no rankrisk code), so that our overhead and the kernels are told apart.
//! The bare step runs twice, back to back: the models' layers on rankrisk-models' CPU kernels
//! (flex and ndarray; other backends use Burn's ops either way) and on Burn's own ops. With
//! `--kernels`, ResNet-20's convolutions and batch norms alone (forward, and forward +
//! backward), ours against Burn's: the shapes `benches/peers/torch_step.py --conv-kernel
//! --all-convs` times in PyTorch.
//!
//! Each phase is closed by a device sync so that it is charged its own work; the "step" rows
//! time the whole step without the intermediate syncs. Median and interquartile range over
//! `--repeats` steps after `--warmup`.
//!
//! ```sh
//! cargo run --release --example bench_step -- --backends flex,ndarray,wgpu --repeats 20
//! cargo run --release --example bench_step -- --models densenet121 --batch 32 --repeats 3
//! cargo run --release --example bench_step -- --kernels
//! cargo run --release --example bench_step -- --backends wgpu --json out/step.json
//! ```
//!
//! The first step of our path (on wgpu: shader compilation and, with autotune, the kernels'
//! tuning) is reported apart in a "first step" row. `--json PATH` also writes every row
//! (`benches/gpu.sh` reads it). A backend that cannot be opened is named on stderr and makes
//! the exit status 2 after the other backends' rows.

use std::sync::Arc;
use std::time::Instant;

use burn::nn::BatchNormConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::softplus;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Device, Tensor, TensorData};
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::{scores_to_cpu, surrogate};
use rankrisk::train::{ErmConfig, Objective};
use rankrisk_datasets::batcher::ImageBatcher;
use rankrisk_datasets::{ImageSet, ImageSource};
use rankrisk_models::kernels::{batch_norm_layer, conv2d, with_burn_ops};
use rankrisk_models::{DenseNet121Config, ResNet20Config, Scorer};

#[derive(Parser)]
#[command(about = "Phases of a training step per backend, ours against a bare Burn step")]
struct Args {
    /// Backends, comma-separated.
    #[arg(long, default_value = "flex", value_delimiter = ',')]
    backends: Vec<BackendKind>,
    /// Models, comma-separated: resnet20, densenet121.
    #[arg(long, default_value = "resnet20", value_delimiter = ',')]
    models: Vec<String>,
    /// Samples per step.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Image side (default: 28 for ResNet-20 on grayscale, 224 for DenseNet121).
    #[arg(long)]
    size: Option<usize>,
    /// Image channels for ResNet-20 (1: Fashion-MNIST-like, 3: CIFAR-like).
    #[arg(long, default_value_t = 1)]
    channels: usize,
    /// Timed steps per row.
    #[arg(long, default_value_t = 20)]
    repeats: usize,
    /// Untimed steps first.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Also time ResNet-20's convolutions and batch norms alone, ours against Burn's.
    #[arg(long)]
    kernels: bool,
    /// Skip the bare step on Burn's own ops (for profiling our path alone).
    #[arg(long)]
    ours_only: bool,
    /// Also write the rows to this JSON file (an array of {backend, model, path, phase,
    /// median_ms, iqr_ms, n}).
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// Median and interquartile range of `v` in milliseconds.
fn stats(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let x = p * (v.len() - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        1e3 * (v[lo] + (v[hi] - v[lo]) * (x - lo as f64))
    };
    (q(0.5), q(0.75) - q(0.25))
}

/// The rows printed so far, for `--json`.
type Rows = Vec<serde_json::Value>;

/// Timings of named phases over repeated steps.
struct Phases {
    names: Vec<&'static str>,
    times: Vec<Vec<f64>>,
}

impl Phases {
    fn new(names: &[&'static str]) -> Self {
        Phases {
            names: names.to_vec(),
            times: vec![Vec::new(); names.len()],
        }
    }

    fn record(&mut self, k: usize, seconds: f64) {
        self.times[k].push(seconds);
    }

    /// Print one row per phase and keep it in `rows`.
    fn print(&mut self, backend: BackendKind, model: &str, path: &str, rows: &mut Rows) {
        for (name, t) in self.names.iter().zip(&mut self.times) {
            let (median, iqr) = stats(t);
            println!("| {backend} | {model} | {path} | {name} | {median:.2} | {iqr:.2} |");
            rows.push(serde_json::json!({
                "backend": backend.to_string(), "model": model, "path": path, "phase": name,
                "median_ms": median, "iqr_ms": iqr, "n": t.len(),
            }));
        }
    }
}

/// A set of `n` random images (a fixed pseudo-random pattern), every fourth positive.
fn images(n: usize, channels: usize, side: usize) -> ImageBatcher {
    let len = channels * side * side;
    let pixels = (0..n * len).map(|i| ((i * 7919) % 251) as u8).collect();
    let set = ImageSet {
        name: "synthetic".into(),
        channels,
        height: side,
        width: side,
        pixels,
        labels: (0..n).map(|i| u16::from(i % 4 == 0)).collect(),
        source: (0..n).collect(),
        num_classes: 2,
    };
    let binary = set.binary(&[1]).expect("both classes");
    ImageBatcher::new(Arc::new(binary), &[0.5], &[0.25]).expect("valid normalization")
}

/// One model's rows on one backend.
fn bench_model<M: Scorer>(
    model: M,
    name: &str,
    source: &ImageBatcher,
    device: &Device,
    kind: BackendKind,
    args: &Args,
    rows: &mut Rows,
) {
    let b = args.batch;
    let n = source.len();
    let ids_of = |step: usize| -> Vec<usize> { (0..b).map(|k| (step * b + k * 7) % n).collect() };
    let total = args.warmup + args.repeats;
    let sync = || device.sync().expect("device sync");
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };

    // Ours, phase by phase.
    let mut phases = Phases::new(&[
        "batch assembly (host)",
        "upload",
        "forward",
        "score read-back",
        "CPU objective (CE)",
        "surrogate backward",
        "optimizer step",
    ]);
    let mut first = Phases::new(&["first step (compilation, tuning)"]);
    let mut m = model.clone();
    let mut optim = AdamConfig::new().init();
    let mut erm = ErmConfig::new().init(&source.labels()).unwrap();
    for step in 0..total {
        let ids = ids_of(step);
        let t = Instant::now();
        let host = source.host_batch(&ids).expect("batch");
        let t_assembly = t.elapsed().as_secs_f64();
        let mut batch = None;
        let t_upload = time(&mut || {
            batch = Some(host.clone().to_device(device));
            sync();
        });
        let batch = batch.expect("uploaded");
        let mut scores = None;
        let t_forward = time(&mut || {
            scores = Some(m.score(batch.inputs.clone()));
            sync();
        });
        let scores = scores.expect("scored");
        let t = Instant::now();
        let cpu = scores_to_cpu(scores.clone()).expect("finite scores");
        let t_read = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let g = erm
            .batch_gradient(&cpu, &batch.targets, &batch.ids)
            .expect("valid batch");
        let t_objective = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let grads =
            GradientsParams::from_grads(surrogate(scores, &g.grad).expect("grad").backward(), &m);
        sync();
        let t_backward = t.elapsed().as_secs_f64();
        let t = Instant::now();
        m = optim.step(1e-3, m, grads);
        sync();
        let t_optim = t.elapsed().as_secs_f64();
        let times = [
            t_assembly,
            t_upload,
            t_forward,
            t_read,
            t_objective,
            t_backward,
            t_optim,
        ];
        if step == 0 {
            first.record(0, times.iter().sum());
        }
        if step >= args.warmup {
            for (k, v) in times.into_iter().enumerate() {
                phases.record(k, v);
            }
        }
    }
    first.print(kind, name, "rankrisk (CE)", rows);
    phases.print(kind, name, "rankrisk (CE)", rows);

    // Ours, the whole step without intermediate syncs; and the bare Burn step.
    let mut whole = Phases::new(&["step"]);
    let mut m = model.clone();
    let mut optim = AdamConfig::new().init();
    for step in 0..total {
        let ids = ids_of(step);
        let t = Instant::now();
        let batch = source.batch(&ids, device).expect("batch");
        let scores = m.score(batch.inputs);
        let cpu = scores_to_cpu(scores.clone()).expect("finite scores");
        let g = erm
            .batch_gradient(&cpu, &batch.targets, &batch.ids)
            .expect("valid batch");
        let grads =
            GradientsParams::from_grads(surrogate(scores, &g.grad).expect("grad").backward(), &m);
        m = optim.step(1e-3, m, grads);
        sync();
        if step >= args.warmup {
            whole.record(0, t.elapsed().as_secs_f64());
        }
    }
    whole.print(kind, name, "rankrisk (CE)", rows);

    // The bare Burn step, with the models' layers on this crate's CPU kernels (where the
    // backend is flex or ndarray) and on Burn's own ops, back to back.
    let uploaded: Vec<_> = (0..4)
        .map(|k| source.batch(&ids_of(k), device).expect("batch"))
        .collect();
    let mut bare = |path: &str| {
        let mut times = Phases::new(&["forward", "loss + backward", "optimizer step", "step"]);
        let mut m = model.clone();
        let mut optim = AdamConfig::new().init();
        for step in 0..total {
            let batch = &uploaded[step % uploaded.len()];
            let t0 = Instant::now();
            let scores = m.score(batch.inputs.clone());
            sync();
            let t1 = Instant::now();
            let loss = softplus(scores.neg() * batch.labels.clone(), 1.0).mean();
            let grads = GradientsParams::from_grads(loss.backward(), &m);
            sync();
            let t2 = Instant::now();
            m = optim.step(1e-3, m, grads);
            sync();
            let t3 = Instant::now();
            if step >= args.warmup {
                times.record(0, (t1 - t0).as_secs_f64());
                times.record(1, (t2 - t1).as_secs_f64());
                times.record(2, (t3 - t2).as_secs_f64());
                times.record(3, (t3 - t0).as_secs_f64());
            }
        }
        times.print(kind, name, path, rows);
    };
    bare("bare Burn, our kernels");
    if !args.ours_only {
        with_burn_ops(|| bare("bare Burn, Burn's ops"));
    }
}

/// Median (IQR) milliseconds of `f` (forward, and forward + backward) over the repeats.
fn time_op(
    device: &Device,
    args: &Args,
    f: &dyn Fn() -> (Tensor<4>, Vec<Tensor<4>>, Vec<Tensor<1>>),
) -> ((f64, f64), (f64, f64)) {
    let sync = || device.sync().expect("device sync");
    let (mut fwd, mut both) = (Vec::new(), Vec::new());
    for step in 0..args.warmup + args.repeats {
        let t0 = Instant::now();
        let (out, inputs4, inputs1) = f();
        sync();
        let t1 = Instant::now();
        let grads = out.sum().backward();
        for t in &inputs4 {
            let _ = t.grad(&grads);
        }
        for t in &inputs1 {
            let _ = t.grad(&grads);
        }
        sync();
        let t2 = Instant::now();
        if step >= args.warmup {
            fwd.push((t1 - t0).as_secs_f64());
            both.push((t2 - t0).as_secs_f64());
        }
    }
    (stats(&mut fwd), stats(&mut both))
}

/// ResNet-20's 3x3 convolutions and batch norms at batch `b` on a `side` x `side` input, each
/// through this crate's kernels and through Burn's ops: forward alone, and forward + backward
/// (every input's gradient).
fn bench_kernels(device: &Device, kind: BackendKind, args: &Args) {
    let b = args.batch;
    let side = args.size.unwrap_or(28);
    let shapes = [
        ("stem C->16", args.channels, 16, side, 1),
        ("16->16", 16, 16, side, 1),
        ("16->32 s2", 16, 32, side, 2),
        ("32->32", 32, 32, side / 2, 1),
        ("32->64 s2", 32, 64, side / 2, 2),
        ("64->64", 64, 64, side / 4, 1),
    ];
    let data = |len: usize| -> Vec<f32> {
        (0..len)
            .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
            .collect()
    };
    let row = |what: String, ours: ((f64, f64), (f64, f64)), burns: ((f64, f64), (f64, f64))| {
        let (((f, fi), (fb, fbi)), ((g, gi), (gb, gbi))) = (ours, burns);
        println!(
            "| {kind} | {what} | {f:.2} ({fi:.2}) | {fb:.2} ({fbi:.2}) | {g:.2} ({gi:.2}) | {gb:.2} ({gbi:.2}) | {:.2}x |",
            gb / fb
        );
    };
    for (name, c_in, c_out, hw, stride) in shapes {
        let x = Tensor::<4>::from_data(
            TensorData::new(data(b * c_in * hw * hw), [b, c_in, hw, hw]),
            device,
        );
        let w = Tensor::<4>::from_data(
            TensorData::new(data(c_out * c_in * 9), [c_out, c_in, 3, 3]),
            device,
        );
        let options = ConvOptions::new([stride, stride], [1, 1], [1, 1], 1);
        let op = || {
            let (xg, wg) = (x.clone().require_grad(), w.clone().require_grad());
            (
                conv2d(xg.clone(), wg.clone(), None, options.clone()),
                vec![xg, wg],
                vec![],
            )
        };
        let ours = time_op(device, args, &op);
        let burns = with_burn_ops(|| time_op(device, args, &op));
        row(format!("conv {name} 3x3 @{hw}x{hw}"), ours, burns);
    }
    for (c, hw) in [(16, side), (32, side / 2), (64, side / 4)] {
        let bn = BatchNormConfig::new(c).init(device);
        let x = Tensor::<4>::from_data(
            TensorData::new(data(b * c * hw * hw), [b, c, hw, hw]),
            device,
        );
        let op = || {
            let xg = x.clone().require_grad();
            (
                batch_norm_layer(&bn, xg.clone()),
                vec![xg],
                vec![bn.gamma.val(), bn.beta.val()],
            )
        };
        let ours = time_op(device, args, &op);
        let burns = with_burn_ops(|| time_op(device, args, &op));
        row(format!("batch norm {c} @{hw}x{hw}"), ours, burns);
    }
}

fn main() {
    // The steps run on a worker of Rayon's pool, as the run driver's do (`on_pool`).
    rankrisk_models::kernels::on_pool(main_body);
}

fn main_body() {
    let args = Args::parse();
    let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into());
    println!(
        "batch {}, {} timed steps after {} warm-up, RAYON_NUM_THREADS={threads}\n",
        args.batch, args.repeats, args.warmup
    );
    println!("| backend | model | path | phase | median ms | IQR ms |");
    println!("|---|---|---|---|---|---|");
    let mut rows = Rows::new();
    let mut failed = false;
    for &kind in &args.backends {
        let device = match autodiff_device(kind) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{kind}: {e}");
                failed = true;
                continue;
            }
        };
        for name in &args.models {
            device.seed(0);
            match name.as_str() {
                "resnet20" => {
                    let side = args.size.unwrap_or(28);
                    let source = images(4 * args.batch, args.channels, side);
                    let model = ResNet20Config::new()
                        .with_in_channels(args.channels)
                        .init(&device);
                    bench_model(model, "ResNet-20", &source, &device, kind, &args, &mut rows);
                }
                "densenet121" => {
                    let side = args.size.unwrap_or(224);
                    let source = images(4 * args.batch, 3, side);
                    let model = DenseNet121Config::new().init(&device);
                    bench_model(
                        model,
                        "DenseNet121",
                        &source,
                        &device,
                        kind,
                        &args,
                        &mut rows,
                    );
                }
                other => {
                    eprintln!("unknown model '{other}' (resnet20, densenet121)");
                    failed = true;
                }
            }
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&rows).expect("rows serialize");
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("--json {}: {e}", path.display());
            failed = true;
        }
    }
    if args.kernels {
        println!(
            "\n| backend | layer (batch {}) | ours: forward ms (IQR) | ours: forward + backward | Burn's ops: forward | Burn's ops: forward + backward | speed-up (f + b) |",
            args.batch
        );
        println!("|---|---|---|---|---|---|---|");
        for &kind in &args.backends {
            if let Ok(device) = autodiff_device(kind) {
                bench_kernels(&device, kind, &args);
            }
        }
    }
    if failed {
        std::process::exit(2);
    }
}
