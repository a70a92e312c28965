//! PAVA benchmark: ns per element of the z-step (10) for n in {1e3 .. 1e6}, logistic and hinge,
//! ERM / CVaR / AoRR / top-k / sigma = 0, plus the cost of the stable sort alone.
//!
//! `cargo run --release --example bench_pava` (one thread; prints a markdown table).

use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rankrisk::loss::Loss;
use rankrisk::pava::Pava;
use rankrisk::weights::{Sigma, Weights};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let sizes = [1_000usize, 10_000, 100_000, 1_000_000];
    let mut rng = StdRng::seed_from_u64(42);
    println!("| n | loss | weights | ms per solve | ns per element | blocks | Prop. 3 path |");
    println!("|---|---|---|---|---|---|---|");
    for &n in &sizes {
        let m: Vec<f64> = (0..n)
            .map(|_| 3.0 * (rng.random::<f64>() - 0.5) + rng.random::<f64>())
            .collect();
        let reps = (2_000_000 / n).clamp(3, 200);
        // The stable sort that every solve starts with, alone.
        let mut sort_times = Vec::new();
        for _ in 0..reps {
            let mut pairs: Vec<(f64, u32)> =
                m.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
            let t = Instant::now();
            pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            sort_times.push(t.elapsed().as_secs_f64());
            std::hint::black_box(&pairs);
        }
        let sort = median(sort_times);
        println!(
            "| {n} | - | sort only | {:.3} | {:.1} | - | - |",
            sort * 1e3,
            sort * 1e9 / n as f64
        );
        let families: Vec<(String, Sigma)> = vec![
            ("sigma = 0".into(), Sigma::Fixed(vec![0.0; n])),
            ("erm".into(), Weights::Erm.sigma(n).unwrap()),
            (
                "cvar q=0.8".into(),
                Weights::Cvar { q: 0.8 }.sigma(n).unwrap(),
            ),
            (
                "cvar q=0.8+1/(3n)".into(),
                Weights::Cvar {
                    q: 0.8 + 1.0 / (3.0 * n as f64),
                }
                .sigma(n)
                .unwrap(),
            ),
            (
                "aorr m=n/10,k=n/2".into(),
                Weights::Aorr {
                    m: n / 10,
                    k: n / 2,
                }
                .sigma(n)
                .unwrap(),
            ),
            (
                "topk k=n/10".into(),
                Weights::TopK { k: n / 10 }.sigma(n).unwrap(),
            ),
        ];
        let mut pava = Pava::new();
        let mut z = vec![0.0; n];
        for loss in [Loss::Logistic, Loss::Hinge] {
            for (name, sigma) in &families {
                let mut times = Vec::new();
                let mut stats = None;
                for _ in 0..reps {
                    let t = Instant::now();
                    stats = Some(pava.solve(&loss, sigma, 1.0, &m, &mut z).unwrap());
                    times.push(t.elapsed().as_secs_f64());
                }
                let s = stats.unwrap();
                let t = median(times);
                println!(
                    "| {n} | {loss} | {name} | {:.3} | {:.1} | {} | {} |",
                    t * 1e3,
                    t * 1e9 / n as f64,
                    s.blocks,
                    if s.constant_support { "yes" } else { "no" }
                );
            }
        }
    }
}
