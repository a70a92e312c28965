//! The linear solvers on the vendored tabular sets: rank-based ADMM (ERM and CVaR q = 0.5,
//! logistic, l2 mu = 0.01) and AGD-SBCD for pAUC over FPR [0.05, 0.5], with test accuracy,
//! AUC and pAUC, one row per set.
//!
//! `cargo run --release --example tabular -- [--seed 0] [--sets australian,phoneme]`

use clap::Parser;
use rankrisk::admm::linear::solve;
use rankrisk::admm::{AdmmConfig, LinearData};
use rankrisk::loss::Loss;
use rankrisk::metrics::auc::{auc, pauc};
use rankrisk::pauc::sbcd::{AgdConfig, PairData, agd_sbcd_linear};
use rankrisk::regularizer::Regularizer;
use rankrisk::weights::Weights;
use rankrisk_datasets::load_builtin;

#[derive(Parser)]
#[command(about = "Linear rank-based ADMM and AGD-SBCD on the vendored tabular sets")]
struct Args {
    /// Data sets, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "australian,phoneme,titanic,splice"
    )]
    sets: Vec<String>,
    /// Seed of the 60/40 split.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

fn scores(x: &[f64], d: usize, w: &[f64]) -> Vec<f64> {
    x.chunks(d)
        .map(|r| r.iter().zip(w).map(|(a, b)| a * b).sum())
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    println!("| data | method | test accuracy | test AUC | test pAUC[0.05, 0.5] | seconds |");
    println!("|---|---|---|---|---|---|");
    for name in &args.sets {
        let mut all = load_builtin(name)?;
        all.standardize();
        let parts = all.split(&[0.6, 0.4], args.seed)?;
        let (train, test) = (&parts[0], &parts[1]);
        let data = LinearData::new(&train.x, &train.y, train.d)?;
        let mut rows: Vec<(String, Vec<f64>, f64)> = Vec::new();
        for (label, weights) in [
            ("ADMM ERM", Weights::Erm),
            ("ADMM CVaR 0.5", Weights::Cvar { q: 0.5 }),
        ] {
            let cfg = AdmmConfig {
                weights,
                loss: Loss::Logistic,
                reg: Regularizer::L2 { mu: 0.01 },
                ..AdmmConfig::default()
            };
            let t = std::time::Instant::now();
            let res = solve(&data, &cfg, None)?;
            rows.push((label.into(), res.w, t.elapsed().as_secs_f64()));
        }
        let pairs = PairData::new(&train.x, &train.y, train.d)?;
        let mut agd = AgdConfig::paper(0.05, 0.5, 10, args.seed);
        (agd.c, agd.mu_scale, agd.gamma_scale) = (10.0, 1.0, 2.0);
        let t = std::time::Instant::now();
        let (w, _) = agd_sbcd_linear(&pairs, &vec![0.0; train.d], &agd)?;
        rows.push(("AGD-SBCD".into(), w, t.elapsed().as_secs_f64()));
        for (label, w, secs) in rows {
            let s = scores(&test.x, test.d, &w);
            let acc = s
                .iter()
                .zip(&test.y)
                .filter(|(a, y)| a.signum() == y.signum())
                .count() as f64
                / test.n() as f64;
            println!(
                "| {name} | {label} | {acc:.4} | {:.4} | {:.4} | {secs:.2} |",
                auc(&s, &test.y)?,
                pauc(&s, &test.y, 0.05, 0.5)?
            );
        }
    }
    Ok(())
}
