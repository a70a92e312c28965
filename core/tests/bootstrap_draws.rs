//! Issue 70: the bootstrap's draws in the first column's rank order (`DRAW_SCHEME`) give the
//! intervals the old draws in index order gave, within their Monte Carlo error: the old scheme
//! is written here (each class drawn with `StdRng::random_range` in index order, each resample
//! copied), and both bootstraps of 10^4 scores are compared by their replicates' means,
//! standard deviations and the intervals' ends.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rankrisk_core::metrics::bootstrap::{DRAW_SCHEME, pauc_replicates};
use rankrisk_core::metrics::ci::{Bootstrap, quantile_type7};
use rankrisk_core::metrics::pauc;

/// The replicates of the old scheme: `StdRng::seed_from_u64(seed)`, per resample the positives'
/// draws then the negatives', each `random_range(0..class size)` over the class in index
/// order, the resample copied.
fn old_replicates(s: &[f64], y: &[f64], resamples: usize, seed: u64, fpr: (f64, f64)) -> Vec<f64> {
    let pos: Vec<usize> = (0..y.len()).filter(|&i| y[i] > 0.0).collect();
    let neg: Vec<usize> = (0..y.len()).filter(|&i| y[i] <= 0.0).collect();
    let labels: Vec<f64> = pos
        .iter()
        .map(|_| 1.0)
        .chain(neg.iter().map(|_| -1.0))
        .collect();
    let mut rng = StdRng::seed_from_u64(seed);
    (0..resamples)
        .map(|_| {
            let mut copy = Vec::with_capacity(y.len());
            copy.extend((0..pos.len()).map(|_| s[pos[rng.random_range(0..pos.len())]]));
            copy.extend((0..neg.len()).map(|_| s[neg[rng.random_range(0..neg.len())]]));
            pauc(&copy, &labels, fpr.0, fpr.1).unwrap()
        })
        .collect()
}

fn moments(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

#[test]
fn intervals_at_ten_thousand_rows_agree_with_the_old_draws_within_monte_carlo_error() {
    // 10^4 scores, 12% positives with a signal, ties on a grid of 1/64.
    let mut rng = StdRng::seed_from_u64(70);
    let n = 10_000;
    let (mut s, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let positive = rng.random_bool(0.12);
        let g: f64 = (0..4).map(|_| rng.random_range(-1.0..1.0)).sum();
        s.push(((g + if positive { 1.2 } else { 0.0 }) * 64.0).round() / 64.0);
        y.push(if positive { 1.0 } else { -1.0 });
    }
    let b = 4000;
    for fpr in [(0.05, 0.5), (0.0, 0.1)] {
        let boot = Bootstrap {
            resamples: b,
            seed: 3,
            level: 0.95,
        };
        let mut new = pauc_replicates(&[&s], &y, &boot, fpr.0, fpr.1)
            .unwrap()
            .remove(0);
        let mut old = old_replicates(&s, &y, b, 3, fpr);
        let ((m_new, sd_new), (m_old, sd_old)) = (moments(&new), moments(&old));
        // Two independent means of b replicates: the difference's standard error.
        let se = (sd_new.powi(2) / b as f64 + sd_old.powi(2) / b as f64).sqrt();
        let what =
            format!("FPR {fpr:?}, {DRAW_SCHEME}: new {m_new} ({sd_new}), old {m_old} ({sd_old})");
        assert!((m_new - m_old).abs() < 4.0 * se, "means: {what}");
        // A standard deviation's relative standard error is about 1 / sqrt(2 b).
        assert!(
            (sd_new / sd_old - 1.0).abs() < 4.0 * (1.0 / b as f64).sqrt(),
            "sds: {what}"
        );
        // The 2.5% and 97.5% quantiles: within a fifth of a standard deviation (their standard
        // error at b = 4000 is about 0.05 sd each).
        new.sort_by(f64::total_cmp);
        old.sort_by(f64::total_cmp);
        for p in [0.025, 0.975] {
            let (qn, qo) = (quantile_type7(&new, p), quantile_type7(&old, p));
            assert!(
                (qn - qo).abs() < 0.2 * sd_old,
                "quantile {p}: {qn} vs {qo}; {what}"
            );
        }
        // And not the same draws: the scheme changed.
        assert_ne!(new, old);
    }
}
