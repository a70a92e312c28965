//! Many training steps on a GPU backend against the same steps on flex (issue 53): every model
//! (linear scorer with a hidden layer, ResNet-20, DenseNet121) with every objective family
//! (CE, AUC-M, mini-batch pAUC, the deep rank-based ADMM, SOPA, SOPA-s, SOTA-s, STACO, PAUCI,
//! UPAUCI), each from the same weights (built on seeded flex and carried over in a burnpack
//! checkpoint) and on the same batches, with Adam.
//!
//! Two f32 implementations that sum in different orders drift apart over many steps, and how
//! fast depends on the network's conditioning (DenseNet121's batch norms over 1 x 1 maps at
//! batch 4 amplify rounding), so the yardstick is flex against itself: the same run on flex
//! with every input moved by a relative 1e-6. It prints, per model and objective, the largest
//! difference of the batch scores over the steps and of the final scores of every sample
//! (relative to the largest flex score, at least 1) for the other backend and for the moved
//! flex run, the first and last batch loss of each, and whether the backend agrees: within 10
//! times the moved run's difference, or within `--tolerance`. Exit status 1 when a row does
//! not; 0 when all do.
//!
//! `cargo run --release --example backend_agreement -- [--backend wgpu] [--steps 50]
//! [--models linear,resnet20,densenet121] [--objectives ce,aucm,...]`
//!
//! docs/BACKENDS.md ("Fusion and autotune") has the table for each build of Burn's GPU
//! features; `tests/examples.rs` runs a short form of it on wgpu in CI.

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use clap::Parser;
use rankrisk::backend::{BackendKind, autodiff_device};
use rankrisk::bridge::scores_to_cpu;
use rankrisk::pauc::objective::PairLoss;
use rankrisk::train::params::{DeviceTerms, Snapshot};
use rankrisk::train::{
    AucMConfig, BurnObjective, DeepAdmm, DeepAdmmConfig, ErmConfig, MiniBatchPaucConfig, Objective,
    PauciConfig, SopaConfig, SopaSConfig, SotaSConfig, StacoConfig, UpauciConfig,
};
use rankrisk::weights::Weights;
use rankrisk_models::{DenseNet121Config, LinearScorerConfig, ResNet20Config, Scorer, checkpoint};

/// The objective families, by their `--method` names.
const OBJECTIVES: [&str; 10] = [
    "ce", "aucm", "mb", "admm", "sopa", "sopa-s", "sota-s", "staco", "pauci", "upauci",
];
const MODELS: [&str; 3] = ["linear", "resnet20", "densenet121"];

#[derive(Parser)]
#[command(about = "Training steps on a GPU backend against the same steps on flex")]
struct Args {
    /// The backend compared with flex.
    #[arg(long, default_value = "wgpu")]
    backend: BackendKind,
    /// Training steps per model and objective.
    #[arg(long, default_value_t = 50)]
    steps: usize,
    /// Models, comma-separated: linear, resnet20, densenet121.
    #[arg(long, value_delimiter = ',', default_values_t = MODELS.map(String::from))]
    models: Vec<String>,
    /// Objectives, comma-separated: ce, aucm, mb, admm, sopa, sopa-s, sota-s, staco, pauci, upauci.
    #[arg(long, value_delimiter = ',', default_values_t = OBJECTIVES.map(String::from))]
    objectives: Vec<String>,
    /// Score difference (relative to the largest flex score, at least 1) that counts as
    /// agreement whatever flex's own move (10 times the moved run's difference counts too).
    #[arg(long, default_value_t = 1e-3)]
    tolerance: f64,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 1e-3)]
    lr: f64,
}

/// A deterministic training set: `n` inputs of `shape` (per sample) and labels, one positive
/// in four.
struct Data {
    shape: Vec<usize>,
    x: Vec<f32>,
    labels: Vec<f64>,
    batch: usize,
}

impl Data {
    fn new(n: usize, shape: &[usize], batch: usize) -> Data {
        let per: usize = shape.iter().product();
        let labels: Vec<f64> = (0..n)
            .map(|i| if i % 4 == 0 { 1.0 } else { -1.0 })
            .collect();
        // A class-dependent pattern plus a pseudo-random part, so that the task is learnable.
        let x = (0..n * per)
            .map(|k| {
                let (i, j) = (k / per, k % per);
                let noise = ((k * 7919) % 1000) as f32 / 500.0 - 1.0;
                let signal = if labels[i] > 0.0 { 0.5 } else { -0.5 } * ((j % 7) as f32 / 6.0);
                noise + signal
            })
            .collect();
        Data {
            shape: shape.to_vec(),
            x,
            labels,
            batch,
        }
    }

    /// The same set with every input moved by the relative `by`.
    fn moved(&self, by: f32) -> Data {
        Data {
            shape: self.shape.clone(),
            x: self.x.iter().map(|v| v * (1.0 + by)).collect(),
            labels: self.labels.clone(),
            batch: self.batch,
        }
    }

    fn n(&self) -> usize {
        self.labels.len()
    }

    /// The ids of batch `k`: a quarter positives, the rest negatives, cycling through each class.
    fn batch_ids(&self, k: usize) -> Vec<usize> {
        let pos: Vec<usize> = (0..self.n()).filter(|&i| self.labels[i] > 0.0).collect();
        let neg: Vec<usize> = (0..self.n()).filter(|&i| self.labels[i] < 0.0).collect();
        let p = (self.batch / 4).max(1);
        let q = self.batch - p;
        (0..p)
            .map(|j| pos[(k * p + j) % pos.len()])
            .chain((0..q).map(|j| neg[(k * q + j) % neg.len()]))
            .collect()
    }

    fn inputs<const D: usize>(&self, ids: &[usize], device: &Device) -> Tensor<D> {
        let per: usize = self.shape.iter().product();
        let mut v = Vec::with_capacity(ids.len() * per);
        for &i in ids {
            v.extend_from_slice(&self.x[i * per..(i + 1) * per]);
        }
        let mut dims = vec![ids.len()];
        dims.extend(&self.shape);
        Tensor::from_data(TensorData::new(v, dims), device)
    }
}

/// An objective as the run driver uses it: the deep ADMM takes an outer step (z-step on the
/// whole set's scores) every `ADMM_INNER` steps.
enum Obj {
    Plain(Box<dyn Objective>),
    Admm(Box<DeepAdmm>),
}

const ADMM_INNER: usize = 10;

fn objective(name: &str, labels: &[f64]) -> Result<Obj, Box<dyn std::error::Error>> {
    Ok(match name {
        "ce" => Obj::Plain(Box::new(ErmConfig::new().init(labels)?)),
        "aucm" => Obj::Plain(Box::new(AucMConfig::new().init(labels)?)),
        "mb" => Obj::Plain(Box::new(
            MiniBatchPaucConfig::new(0.05, 0.5)
                .with_loss(PairLoss::Logistic)
                .init(labels)?,
        )),
        "admm" => Obj::Admm(Box::new(
            DeepAdmmConfig::new(Weights::Cvar { q: 0.5 }).init(labels)?,
        )),
        "sopa" => Obj::Plain(Box::new(SopaConfig::new(0.5).init(labels)?)),
        "sopa-s" => Obj::Plain(Box::new(SopaSConfig::new().init(labels)?)),
        "sota-s" => Obj::Plain(Box::new(SotaSConfig::new().init(labels)?)),
        "staco" => Obj::Plain(Box::new(StacoConfig::new().init(labels)?)),
        "pauci" => Obj::Plain(Box::new(PauciConfig::new().init(labels)?)),
        "upauci" => Obj::Plain(Box::new(UpauciConfig::new().init(labels)?)),
        other => return Err(format!("unknown objective '{other}'").into()),
    })
}

/// What one backend's run gave: the batch scores of every step, the batch losses, the final
/// scores of every sample.
struct Trace {
    batch_scores: Vec<Vec<f64>>,
    losses: Vec<f64>,
    final_scores: Vec<f64>,
}

fn scalar(t: Tensor<1>) -> Result<f64, Box<dyn std::error::Error>> {
    let v = t
        .into_data()
        .convert::<f64>()
        .try_to_vec::<f64>()
        .map_err(|e| format!("{e:?}"))?;
    Ok(v[0])
}

fn all_scores<M: Scorer<D>, const D: usize>(
    model: &M,
    data: &Data,
    device: &Device,
) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    let ids: Vec<usize> = (0..data.n()).collect();
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(16) {
        out.extend(scores_to_cpu(model.score(data.inputs::<D>(chunk, device)))?);
    }
    Ok(out)
}

/// `steps` Adam steps of `model` on `device` with the objective `name`.
fn train<M: Scorer<D>, const D: usize>(
    mut model: M,
    device: &Device,
    data: &Data,
    name: &str,
    steps: usize,
    lr: f64,
) -> Result<Trace, Box<dyn std::error::Error>> {
    let mut obj = objective(name, &data.labels)?;
    let mut optim = AdamConfig::new().init();
    let mut trace = Trace {
        batch_scores: Vec::with_capacity(steps),
        losses: Vec::with_capacity(steps),
        final_scores: Vec::new(),
    };
    let mut anchor = None;
    for k in 0..steps {
        if let Obj::Admm(admm) = &mut obj
            && k % ADMM_INNER == 0
        {
            admm.outer_step(&all_scores(&model, data, device)?)?;
            anchor = Some(Snapshot::of(&model));
        }
        let ids = data.batch_ids(k);
        let scores = model.score(data.inputs::<D>(&ids, device));
        trace.batch_scores.push(scores_to_cpu(scores.clone())?);
        let targets: Vec<i64> = ids
            .iter()
            .map(|&i| i64::from(data.labels[i] > 0.0))
            .collect();
        let targets = Tensor::<1, Int>::from_data(TensorData::new(targets, [ids.len()]), device);
        let id_tensor = Tensor::<1, Int>::from_data(
            TensorData::new(
                ids.iter().map(|&i| i as i64).collect::<Vec<_>>(),
                [ids.len()],
            ),
            device,
        );
        let loss = match &mut obj {
            Obj::Plain(o) => o.forward(scores, targets, id_tensor)?,
            Obj::Admm(admm) => {
                let mut loss = admm.forward(scores, targets, id_tensor)?;
                if let Some(terms) = anchor.as_ref().and_then(|a| admm.device_terms(&model, a)) {
                    loss = loss + terms;
                }
                loss
            }
        };
        trace.losses.push(scalar(loss.clone())?);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(lr, model, grads);
    }
    trace.final_scores = all_scores(&model.valid(), data, device)?;
    Ok(trace)
}

/// `max |a - b|` over the pairs, relative to `max(max |b|, 1)`.
fn difference(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale
}

/// The largest batch-score difference over the steps and the final-score difference of `got`
/// from `want`.
fn differences(got: &Trace, want: &Trace) -> (f64, f64) {
    let steps = got
        .batch_scores
        .iter()
        .zip(&want.batch_scores)
        .map(|(a, b)| difference(a, b))
        .fold(0.0, f64::max);
    (steps, difference(&got.final_scores, &want.final_scores))
}

struct Row {
    /// The other backend from flex: batch scores over the steps, final scores.
    backend: (f64, f64),
    /// Flex with the inputs moved by 1e-6, from flex.
    moved: (f64, f64),
}

impl Row {
    fn agrees(&self, tolerance: f64) -> bool {
        let bound = |own: f64| (10.0 * own).max(tolerance);
        self.backend.0 <= bound(self.moved.0) && self.backend.1 <= bound(self.moved.1)
    }
}

/// One model's rows: the model built on seeded flex and saved, then loaded on flex and on the
/// other backend for each objective.
fn compare<M: Scorer<D>, const D: usize>(
    args: &Args,
    label: &str,
    fresh: impl Fn(&Device) -> M,
    data: &Data,
    dir: &Path,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let seeded = Device::flex();
    seeded.seed(1);
    let path = dir.join(format!("{label}.bpk"));
    checkpoint::save(&fresh(&seeded), &path)?;
    let flex = autodiff_device(BackendKind::Flex)?;
    let other = autodiff_device(args.backend)?;
    let mut rows = Vec::new();
    let moved = data.moved(1e-6);
    for name in &args.objectives {
        let started = Instant::now();
        let load = |device: &Device| checkpoint::load(fresh(device), &path);
        let want = train(load(&flex)?, &flex, data, name, args.steps, args.lr)?;
        let own = train(load(&flex)?, &flex, &moved, name, args.steps, args.lr)?;
        let got = train(load(&other)?, &other, data, name, args.steps, args.lr)?;
        let row = Row {
            backend: differences(&got, &want),
            moved: differences(&own, &want),
        };
        let ends = |t: &Trace| format!("{:.4} -> {:.4}", t.losses[0], t.losses[t.losses.len() - 1]);
        println!(
            "| {label} | {name} | {:.1e} / {:.1e} | {:.1e} / {:.1e} | {} | {} | {} | {:.0} |",
            row.backend.0,
            row.backend.1,
            row.moved.0,
            row.moved.1,
            ends(&want),
            ends(&got),
            if row.agrees(args.tolerance) {
                "yes"
            } else {
                "NO"
            },
            started.elapsed().as_secs_f64()
        );
        rows.push(row);
    }
    Ok(rows)
}

fn main() {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

fn run(args: &Args) -> Result<bool, Box<dyn std::error::Error>> {
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    for m in &args.models {
        if !MODELS.contains(&m.as_str()) {
            return Err(
                format!("unknown model '{m}': expected one of {}", MODELS.join(", ")).into(),
            );
        }
    }
    for o in &args.objectives {
        if !OBJECTIVES.contains(&o.as_str()) {
            return Err(format!(
                "unknown objective '{o}': expected one of {}",
                OBJECTIVES.join(", ")
            )
            .into());
        }
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("rankrisk-agreement-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!(
        "{} against flex, {} Adam steps at lr {}, GPU features: autotune {}, fusion {}",
        args.backend,
        args.steps,
        args.lr,
        if cfg!(feature = "autotune") {
            "on"
        } else {
            "off"
        },
        if cfg!(feature = "fusion") {
            "on"
        } else {
            "off"
        },
    );
    println!(
        "| model | objective | {0} from flex: batch scores (max over steps) / final scores | \
         flex moved 1e-6 from flex: batch / final | flex loss first -> last | {0} loss first -> \
         last | agree (10x the move, or <= {1:.0e}) | seconds |",
        args.backend, args.tolerance
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for m in &args.models {
        rows.extend(match m.as_str() {
            "linear" => compare::<_, 2>(
                args,
                m,
                |d| {
                    LinearScorerConfig::new(20)
                        .with_hidden(Some(16))
                        .with_bias(true)
                        .init(d)
                },
                &Data::new(64, &[20], 16),
                &dir,
            )?,
            "resnet20" => compare::<_, 4>(
                args,
                m,
                |d| ResNet20Config::new().init(d),
                &Data::new(32, &[3, 16, 16], 8),
                &dir,
            )?,
            _ => compare::<_, 4>(
                args,
                m,
                |d| DenseNet121Config::new().init(d),
                &Data::new(16, &[3, 32, 32], 4),
                &dir,
            )?,
        });
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(rows.iter().all(|r| r.agrees(args.tolerance)))
}
