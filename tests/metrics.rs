//! The metrics against values computed independently: scikit-learn 1.x's
//! `roc_auc_score(max_fpr=beta)` for the McClish pAUC, LibAUC 2.0.1's `pauc_roc_score(max_fpr,
//! min_tpr)` for the two-way pAUC, and DeLong's variance, interval and paired test written from
//! pROC's documented formulas as an O(N+ N-) numpy computation (structural components by
//! brute force, sample variances with n - 1). The values were printed by a Python script from
//! the arrays below; the bootstrap is checked against DeLong's standard error, which it must
//! approach on a large sample.

use rankrisk::metrics::auc::auc;
use rankrisk::metrics::ci::{
    Bootstrap, DeLong, Placements, bootstrap_compare, bootstrap_interval, compare_replicates,
    interval_of_replicates, normal_quantile, quantile_type7,
};
use rankrisk::metrics::conventions::{libauc_two_way_pauc, mcclish_pauc};
use rankrisk::metrics::pauc;
use rankrisk::metrics::ranked::{FigureSettings, RankedColumn};

const S1: [f64; 40] = [
    -1.5, 0.5, -0.8, 1.2, -0.1, -1.4, 0.6, -0.6, 1.4, 0.1, -1.2, 0.8, -0.5, 1.5, 0.2, -1.1, 0.9,
    -0.4, 1.6, 0.4, -0.9, 1.1, -0.2, -1.5, 0.5, -0.8, 1.2, -0.1, -1.4, 0.6, -0.6, 1.4, 0.1, -1.2,
    0.8, -0.5, 1.5, 0.2, -1.1, 0.9,
];
const S2: [f64; 40] = [
    -0.2, 1.67, 1.11, 1.36, 0.0, -0.56, 2.91, 1.56, 1.0, 1.24, -0.11, -0.67, 2.8, 1.44, 0.89, 1.13,
    -0.22, -0.78, 2.69, 1.33, 0.78, 1.02, -0.33, -0.89, 2.58, 1.22, 0.67, 0.91, -0.44, -1.0, 2.47,
    1.11, 0.56, 0.8, -0.56, 2.11, 2.36, 1.0, 0.44, 0.69,
];
const Y01: [u8; 40] = [
    1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0,
    0, 0, 1, 1, 0, 0, 0, 1,
];

fn labels() -> Vec<f64> {
    Y01.iter()
        .map(|&v| if v == 1 { 1.0 } else { -1.0 })
        .collect()
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: {a} vs {b}");
}

#[test]
fn mcclish_pauc_equals_scikit_learns_max_fpr_auc() {
    let y = labels();
    for (beta, want1, want2) in [
        (0.1, 0.47368421052631576, 0.47368421052631576),
        (0.3, 0.4117647058823529, 0.4709967320261438),
        (0.5, 0.36111111111111116, 0.47916666666666663),
    ] {
        close(mcclish_pauc(&S1, &y, beta).unwrap(), want1, 1e-12, "s1");
        close(mcclish_pauc(&S2, &y, beta).unwrap(), want2, 1e-12, "s2");
    }
    close(
        mcclish_pauc(&S1, &y, 1.0).unwrap(),
        auc(&S1, &y).unwrap(),
        0.0,
        "beta 1",
    );
}

#[test]
fn two_way_pauc_equals_libaucs_pauc_roc_score() {
    let y = labels();
    for (min_tpr, max_fpr, want1, want2) in [
        (0.3, 0.4, 0.0, 0.036363636363636355),
        (0.5, 0.5, 0.0, 0.0),
        (0.25, 0.7, 0.07598039215686272, 0.16666666666666669),
    ] {
        close(
            libauc_two_way_pauc(&S1, &y, min_tpr, max_fpr).unwrap(),
            want1,
            1e-12,
            "s1",
        );
        close(
            libauc_two_way_pauc(&S2, &y, min_tpr, max_fpr).unwrap(),
            want2,
            1e-12,
            "s2",
        );
    }
}

#[test]
fn delong_variance_interval_and_paired_test_match_the_formulas() {
    let y = labels();
    let (d1, d2) = (DeLong::new(&S1, &y).unwrap(), DeLong::new(&S2, &y).unwrap());
    close(d1.auc, 0.33333333333333337, 1e-12, "auc 1");
    close(d1.variance, 0.0073354625855475055, 1e-12, "var 1");
    close(d2.auc, 0.46354166666666663, 1e-12, "auc 2");
    close(d2.variance, 0.009124805002012883, 1e-12, "var 2");
    let ci = d1.interval(0.95).unwrap();
    close(ci.lower, 0.16546768034522744, 1e-9, "lower");
    close(ci.upper, 0.5011989863214393, 1e-9, "upper");
    let (p1, p2) = (
        Placements::new(&S1, &y).unwrap(),
        Placements::new(&S2, &y).unwrap(),
    );
    assert_eq!((p1.delong, p2.delong), (d1, d2));
    let t = p1.compare(&p2).unwrap();
    close(t.difference, -0.13020833333333326, 1e-12, "difference");
    close(t.std_error, 0.11605642084366496, 1e-12, "se");
    close(t.z, -1.1219399356519169, 1e-9, "z");
    close(t.p_value, 0.26188797916105844, 1e-9, "p");
    close(
        normal_quantile(0.975).unwrap(),
        1.959963984540054,
        1e-9,
        "z 0.975",
    );
    assert!(d1.interval(1.0).is_err());
}

#[test]
fn type_7_quantiles_are_rs_default() {
    let mut v = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
    v.sort_by(f64::total_cmp);
    close(quantile_type7(&v, 0.025), 1.0, 1e-12, "2.5%");
    close(quantile_type7(&v, 0.975), 8.475000000000001, 1e-12, "97.5%");
    close(quantile_type7(&v, 0.5), 3.5, 1e-12, "median");
}

/// A larger sample: positives' scores shifted by 0.8 standard deviations.
fn sample(n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut s = Vec::with_capacity(n);
    let mut s_other = Vec::with_capacity(n);
    let mut y = Vec::with_capacity(n);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut uniform = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for i in 0..n {
        let positive = i % 4 == 0;
        // Box-Muller.
        let g = (-2.0 * uniform().max(1e-300).ln()).sqrt()
            * (2.0 * std::f64::consts::PI * uniform()).cos();
        let shift = if positive { 0.8 } else { 0.0 };
        s.push(g + shift);
        s_other.push(g + 0.5 * shift + 0.3 * uniform());
        y.push(if positive { 1.0 } else { -1.0 });
    }
    (s, s_other, y)
}

#[test]
fn the_bootstrap_agrees_with_delong_and_is_reproducible() {
    let (s, other, y) = sample(800);
    let boot = Bootstrap {
        resamples: 2000,
        seed: 7,
        level: 0.95,
    };
    let auc_stat = |s: &[f64], y: &[f64]| auc(s, y);
    let b = bootstrap_interval(&s, &y, &boot, auc_stat).unwrap();
    let d = DeLong::new(&s, &y).unwrap();
    let dci = d.interval(0.95).unwrap();
    close(b.estimate, d.auc, 1e-12, "estimate");
    // The bootstrap interval's width approaches DeLong's on 200 + 600 samples.
    let (wb, wd) = (b.upper - b.lower, dci.upper - dci.lower);
    assert!(
        (wb / wd - 1.0).abs() < 0.15,
        "bootstrap {wb} vs DeLong {wd}"
    );
    assert!(b.lower < b.estimate && b.estimate < b.upper);
    assert_eq!(b, bootstrap_interval(&s, &y, &boot, auc_stat).unwrap());
    // The pAUC interval and the paired tests.
    let pauc_stat = |s: &[f64], y: &[f64]| pauc(s, y, 0.05, 0.5);
    let p = bootstrap_interval(&s, &y, &boot, pauc_stat).unwrap();
    assert!(p.lower < p.estimate && p.estimate < p.upper, "{p:?}");
    let same = bootstrap_compare(&s, &s, &y, &boot, pauc_stat).unwrap();
    assert_eq!((same.difference, same.p_value), (0.0, 1.0));
    let t = bootstrap_compare(&s, &other, &y, &boot, auc_stat).unwrap();
    let dt = Placements::new(&s, &y)
        .unwrap()
        .compare(&Placements::new(&other, &y).unwrap())
        .unwrap();
    close(t.difference, dt.difference, 1e-12, "difference");
    assert!(
        (t.std_error / dt.std_error - 1.0).abs() < 0.2,
        "{t:?} vs {dt:?}"
    );
    assert!(
        bootstrap_interval(
            &s,
            &y,
            &Bootstrap {
                resamples: 1,
                ..boot
            },
            auc_stat
        )
        .is_err()
    );
}

/// 400 scores on a grid of tenths (11 at zero, 8 of them `-0.0`) with 122 positives, from a
/// 64-bit LCG that the Python script repeats exactly (`k / 10.0` is the same double in both).
fn signed_zero_sample() -> (Vec<f64>, Vec<f64>) {
    let mut x: u64 = 7;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x
    };
    let (mut s, mut y) = (Vec::new(), Vec::new());
    for _ in 0..400 {
        let (a, b) = (next(), next());
        let (u, v) = (
            (a >> 11) as f64 / 2f64.powi(53),
            (b >> 11) as f64 / 2f64.powi(53),
        );
        let positive = v < 0.3;
        let k = (u * 21.0) as i64 - 10 + if positive { 4 } else { 0 };
        let score = if k == 0 && (a >> 20) & 1 == 1 {
            -0.0
        } else {
            k as f64 / 10.0
        };
        s.push(score);
        y.push(if positive { 1.0 } else { -1.0 });
    }
    (s, y)
}

/// Every metric of the library on `s`, in one vector.
fn all_metrics(s: &[f64], y: &[f64]) -> Vec<f64> {
    let d = DeLong::new(s, y).unwrap();
    let ci = d.interval(0.95).unwrap();
    let boot = Bootstrap {
        resamples: 200,
        ..Bootstrap::default()
    };
    let b = bootstrap_interval(s, y, &boot, |s, y| pauc(s, y, 0.05, 0.5)).unwrap();
    let mut out = vec![
        auc(s, y).unwrap(),
        pauc(s, y, 0.05, 0.5).unwrap(),
        pauc(s, y, 0.0, 0.3).unwrap(),
        rankrisk::metrics::pauc_roc_area(s, y, 0.1, 0.4).unwrap(),
        rankrisk::metrics::two_way_pauc(s, y, 0.2, 0.6).unwrap(),
        mcclish_pauc(s, y, 0.3).unwrap(),
        libauc_two_way_pauc(s, y, 0.2, 0.6).unwrap(),
        d.auc,
        d.variance,
        ci.lower,
        ci.upper,
        b.lower,
        b.upper,
    ];
    for p in rankrisk::metrics::roc_curve(s, y).unwrap() {
        out.extend([p.fpr, p.tpr, p.threshold]);
    }
    out
}

#[test]
fn signed_zeros_are_ties_in_every_metric() {
    // The six rows: every score 0.0 or -0.0, a constant scorer.
    let s = [0.0, -0.0, -0.0, 0.0, 0.0, -0.0];
    let y = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
    for (what, v) in [
        ("auc", auc(&s, &y).unwrap()),
        ("pauc", pauc(&s, &y, 0.05, 0.5).unwrap()),
        // scikit-learn roc_auc_score(max_fpr=0.5): 0.5, the diagonal's McClish value.
        ("mcclish", mcclish_pauc(&s, &y, 0.5).unwrap()),
        // LibAUC's pauc_roc_score(max_fpr=0.5, min_tpr=0.5): all selected pairs tied.
        ("two-way", libauc_two_way_pauc(&s, &y, 0.5, 0.5).unwrap()),
        (
            "two-way area",
            rankrisk::metrics::two_way_pauc(&s, &y, 0.5, 0.5).unwrap(),
        ),
    ] {
        close(v, 0.5, 1e-12, what);
    }
    let d = DeLong::new(&s, &y).unwrap();
    assert_eq!((d.auc, d.variance), (0.5, 0.0));
    let ci = d.interval(0.95).unwrap();
    assert_eq!((ci.lower, ci.upper), (0.5, 0.5));
    // One ROC step from (0, 0) to (1, 1) at the threshold 0 (printed without a sign).
    let roc = rankrisk::metrics::roc_curve(&s, &y).unwrap();
    assert_eq!(roc.len(), 2);
    assert_eq!((roc[1].fpr, roc[1].tpr), (1.0, 1.0));
    assert!(roc[1].threshold == 0.0 && roc[1].threshold.is_sign_positive());

    // 400 rows with signed zeros among other tied tenths: scikit-learn 1.x and the DeLong
    // formula (numpy, brute force over pairs) on the same arrays.
    let (s, y) = signed_zero_sample();
    assert_eq!(
        s.iter()
            .filter(|v| **v == 0.0 && v.is_sign_negative())
            .count(),
        8
    );
    close(auc(&s, &y).unwrap(), 0.6384744663285764, 1e-12, "auc");
    close(
        mcclish_pauc(&s, &y, 0.3).unwrap(),
        0.5838650969292069,
        1e-12,
        "mcclish",
    );
    close(
        libauc_two_way_pauc(&s, &y, 0.2, 0.6).unwrap(),
        0.31247708664304047,
        1e-12,
        "two-way",
    );
    let d = DeLong::new(&s, &y).unwrap();
    close(d.variance, 0.0008612613263268311, 1e-12, "delong variance");
    // Replacing -0.0 by 0.0 changes no figure, to the last bit.
    let plus: Vec<f64> = s.iter().map(|&v| if v == 0.0 { 0.0 } else { v }).collect();
    let (a, b) = (all_metrics(&s, &y), all_metrics(&plus, &y));
    assert_eq!(a.len(), b.len());
    for (i, (u, v)) in a.iter().zip(&b).enumerate() {
        assert_eq!(u.to_bits(), v.to_bits(), "metric {i}: {u} vs {v}");
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 39: every metric in O(n log n), the bootstrap by counts, and no pAUC above 1. The old
// implementations stay here as oracles: pair counting over every (positive, negative) pair and
// the old per-rank sums, exactly as the library computed them before.
// ---------------------------------------------------------------------------------------------

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rankrisk::metrics::RankRange;
use rankrisk::metrics::auc::{MetricError, pauc_roc_area, roc_curve, two_way_pauc};
use rankrisk::metrics::bootstrap::{
    bootstrap_pauc_compare, bootstrap_pauc_interval, pauc_replicates, pauc_replicates_on,
    replicates,
};
use rankrisk::order::{ascending, descending};
use std::cmp::Ordering;

/// Scores by class, in input order.
fn classes(scores: &[f64], labels: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let pick = |positive: bool| -> Vec<f64> {
        scores
            .iter()
            .zip(labels)
            .filter(|(_, y)| (**y > 0.0) == positive)
            .map(|(s, _)| *s)
            .collect()
    };
    (pick(true), pick(false))
}

/// 1, 1/2 or 0: the credit of one (positive, negative) pair.
fn pair_credit(sp: f64, sn: f64) -> f64 {
    match ascending(&sp, &sn) {
        Ordering::Greater => 1.0,
        Ordering::Equal => 0.5,
        Ordering::Less => 0.0,
    }
}

/// Oracle: the old eq. (2), per-negative credits by a merge and the per-rank sum
/// `sum_j weight(j) credit(j)` in rank order.
fn old_pauc(scores: &[f64], labels: &[f64], alpha: f64, beta: f64) -> f64 {
    let (mut pos, mut neg) = classes(scores, labels);
    let range = RankRange::from_fpr(alpha, beta, neg.len()).unwrap();
    pos.sort_by(descending);
    neg.sort_by(descending);
    let mut credits = Vec::with_capacity(neg.len());
    let (mut above, mut equal_end) = (0usize, 0usize);
    for &s in neg.iter() {
        while above < pos.len() && pos[above] > s {
            above += 1;
        }
        equal_end = equal_end.max(above);
        while equal_end < pos.len() && pos[equal_end] == s {
            equal_end += 1;
        }
        credits.push(above as f64 + 0.5 * (equal_end - above) as f64);
    }
    let total: f64 = range.ranks().map(|j| range.weight(j) * credits[j]).sum();
    total / (pos.len() as f64 * (range.hi - range.lo))
}

/// Oracle: eq. (2) over every pair, negatives in descending order, each weighted by its overlap
/// with `[alpha N-, beta N-]`.
fn brute_pauc(scores: &[f64], labels: &[f64], alpha: f64, beta: f64) -> f64 {
    let (pos, mut neg) = classes(scores, labels);
    neg.sort_by(descending);
    let nn = neg.len() as f64;
    let mut total = 0.0;
    for (j, &sn) in neg.iter().enumerate() {
        let w = ((beta * nn).min(j as f64 + 1.0) - (alpha * nn).max(j as f64)).max(0.0);
        for &sp in &pos {
            total += w * pair_credit(sp, sn);
        }
    }
    total / (pos.len() as f64 * (beta - alpha) * nn)
}

/// Oracle: the old two-way pAUC with fractional boundaries, a double loop over the kept pairs.
fn old_two_way_pauc(scores: &[f64], labels: &[f64], tpr_min: f64, fpr_max: f64) -> f64 {
    let (mut pos, mut neg) = classes(scores, labels);
    let (np, nn) = (pos.len() as f64, neg.len() as f64);
    pos.sort_by(ascending);
    neg.sort_by(descending);
    let (kp, kn) = ((1.0 - tpr_min) * np, fpr_max * nn);
    let weight = |j: usize, k: f64| (k.min((j + 1) as f64) - j as f64).clamp(0.0, 1.0);
    let mut total = 0.0;
    for (i, &sp) in pos.iter().enumerate() {
        let wp = weight(i, kp);
        if wp == 0.0 {
            break;
        }
        for (j, &sn) in neg.iter().enumerate() {
            let wn = weight(j, kn);
            if wn == 0.0 {
                break;
            }
            total += wp * wn * pair_credit(sp, sn);
        }
    }
    total / (kp * kn)
}

/// Python's round (half to even).
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// Oracle: the old LibAUC two-way pAUC, a double loop over the kept pairs.
fn old_libauc_two_way(scores: &[f64], labels: &[f64], min_tpr: f64, max_fpr: f64) -> f64 {
    let (mut pos, mut neg) = classes(scores, labels);
    let keep = |n: usize, share: f64| (round_half_even(n as f64 * share) as usize).clamp(1, n);
    let (kp, kn) = (keep(pos.len(), 1.0 - min_tpr), keep(neg.len(), max_fpr));
    pos.sort_by(ascending);
    neg.sort_by(descending);
    let mut credit = 0.0;
    for &sp in &pos[..kp] {
        for &sn in &neg[..kn] {
            credit += pair_credit(sp, sn);
        }
    }
    credit / (kp * kn) as f64
}

/// A random data set: `n` samples, at least one of each class, scores with heavy ties (a few
/// values, signed zeros among them) or distinct.
fn random_case(rng: &mut StdRng, n: usize) -> (Vec<f64>, Vec<f64>) {
    let share = rng.random_range(0.05..0.95);
    let mut labels: Vec<f64> = (0..n)
        .map(|_| {
            if rng.random::<f64>() < share {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let one = rng.random_range(0..n);
    let other = (one + 1 + rng.random_range(0..n - 1)) % n;
    labels[one] = 1.0;
    labels[other] = -1.0;
    let levels = [1, 2, 3, 5, 8, 1000][rng.random_range(0..6)];
    let scores = (0..n)
        .map(|i| {
            let k = rng.random_range(0..levels) as f64 - (levels / 2) as f64;
            let shift = if labels[i] > 0.0 { 0.3 } else { 0.0 };
            match rng.random_range(0..4) {
                0 if k == 0.0 => -0.0,
                _ if levels == 1000 => rng.random::<f64>() + shift,
                _ => k * 0.25,
            }
        })
        .collect();
    (scores, labels)
}

fn random_range(rng: &mut StdRng) -> (f64, f64) {
    let alpha = [0.0, 0.05, 0.1, 1.0 / 3.0, rng.random_range(0.0..0.9)][rng.random_range(0..5)];
    let beta = [0.5, 1.0, 0.3, rng.random_range(alpha + 1e-3..1.0f64)][rng.random_range(0..4)];
    if beta > alpha {
        (alpha, beta)
    } else {
        (alpha, 1.0)
    }
}

#[test]
fn fast_metrics_equal_the_quadratic_oracles_on_random_tied_data() {
    let mut rng = StdRng::seed_from_u64(39);
    for case in 0..3000 {
        let n = [2, 3, 4, 7, 20, 64, 150][case % 7];
        let (s, y) = random_case(&mut rng, n);
        let (alpha, beta) = random_range(&mut rng);
        let what = format!("case {case}: n {n}, [{alpha}, {beta}], {s:?} {y:?}");
        let p = pauc(&s, &y, alpha, beta).unwrap();
        close(p, old_pauc(&s, &y, alpha, beta), 1e-12, &what);
        close(p, brute_pauc(&s, &y, alpha, beta), 1e-12, &what);
        assert!((0.0..=1.0).contains(&p), "{what}: {p}");
        let a = auc(&s, &y).unwrap();
        assert_eq!(a.to_bits(), old_pauc(&s, &y, 0.0, 1.0).to_bits(), "{what}");
        let (tpr_min, fpr_max) = (rng.random_range(0.0..0.99), rng.random_range(0.01..=1.0));
        let t = two_way_pauc(&s, &y, tpr_min, fpr_max).unwrap();
        close(t, old_two_way_pauc(&s, &y, tpr_min, fpr_max), 1e-12, &what);
        assert!((0.0..=1.0).contains(&t), "{what}: two-way {t}");
        let l = libauc_two_way_pauc(&s, &y, tpr_min, fpr_max).unwrap();
        // An exact count over an exact count: the old value to the last bit.
        assert_eq!(
            l.to_bits(),
            old_libauc_two_way(&s, &y, tpr_min, fpr_max).to_bits(),
            "{what}"
        );
        let m = mcclish_pauc(&s, &y, fpr_max).unwrap();
        let r = pauc_roc_area(&s, &y, alpha, beta).unwrap();
        assert!(
            (0.0..=1.0).contains(&m) && (0.0..=1.0).contains(&r),
            "{what}: {m} {r}"
        );
    }
}

#[test]
fn edge_cases_one_positive_one_negative_all_tied() {
    let cases: Vec<(Vec<f64>, Vec<f64>)> = vec![
        (vec![0.3, 0.1], vec![1.0, -1.0]),
        (vec![0.1, 0.3], vec![1.0, -1.0]),
        (vec![0.2, 0.2], vec![1.0, -1.0]),
        (
            vec![0.5, 0.1, 0.9, 0.5, 0.5],
            vec![1.0, -1.0, -1.0, -1.0, -1.0],
        ),
        (
            vec![0.5, 0.1, 0.9, 0.5, 0.5],
            vec![-1.0, 1.0, 1.0, 1.0, 1.0],
        ),
        (
            vec![2.0; 9],
            vec![1.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0, 1.0, -1.0],
        ),
        (vec![0.0, -0.0, 0.0, -0.0], vec![1.0, 1.0, -1.0, -1.0]),
    ];
    for (s, y) in &cases {
        for (alpha, beta) in [
            (0.0, 1.0),
            (0.05, 0.5),
            (0.0, 0.3),
            (0.25, 0.75),
            (0.9, 1.0),
        ] {
            let what = format!("{s:?} {y:?} [{alpha}, {beta}]");
            let p = pauc(s, y, alpha, beta).unwrap();
            close(p, old_pauc(s, y, alpha, beta), 1e-12, &what);
            close(p, brute_pauc(s, y, alpha, beta), 1e-12, &what);
            for (tpr_min, fpr_max) in [(0.0, 1.0), (0.5, 0.5), (0.2, 0.6), (0.9, 0.1)] {
                let t = two_way_pauc(s, y, tpr_min, fpr_max).unwrap();
                close(t, old_two_way_pauc(s, y, tpr_min, fpr_max), 1e-12, &what);
                let l = libauc_two_way_pauc(s, y, tpr_min, fpr_max).unwrap();
                close(l, old_libauc_two_way(s, y, tpr_min, fpr_max), 0.0, &what);
            }
        }
    }
    // All tied: 1/2 in every convention.
    let (s, y) = &cases[5];
    for v in [
        auc(s, y).unwrap(),
        pauc(s, y, 0.05, 0.5).unwrap(),
        two_way_pauc(s, y, 0.5, 0.5).unwrap(),
        libauc_two_way_pauc(s, y, 0.5, 0.5).unwrap(),
        mcclish_pauc(s, y, 0.3).unwrap(),
    ] {
        close(v, 0.5, 1e-12, "all tied");
    }
}

#[test]
fn no_pauc_is_above_one_or_below_zero() {
    // The old sum gave a perfect ranking 1.0000000000000002 here: N+ = 3, N- = 9, FPR
    // [0.05, 0.5] (weights 0.55, 1, 1, 1, 0.5, while 3 * (4.5 - 0.45) rounds down).
    let y: Vec<f64> = [1.0; 3].into_iter().chain([-1.0; 9]).collect();
    let perfect: Vec<f64> = (0..12).map(|i| -(i as f64)).collect();
    assert_eq!(old_pauc(&perfect, &y, 0.05, 0.5), 1.0000000000000002);
    assert_eq!(pauc(&perfect, &y, 0.05, 0.5).unwrap(), 1.0);
    // Every size and range: a perfect ranking is 1 and a reversed one 0 (to rounding), and no
    // partial AUC leaves [0, 1].
    let mut rng = StdRng::seed_from_u64(1);
    let mut excess = 0;
    for _ in 0..4000 {
        let (np, nn) = (rng.random_range(1..40), rng.random_range(1..60));
        let y: Vec<f64> = (0..np + nn)
            .map(|i| if i < np { 1.0 } else { -1.0 })
            .collect();
        let up: Vec<f64> = (0..np + nn).map(|i| -(i as f64)).collect();
        let down: Vec<f64> = up.iter().map(|v| -v).collect();
        let (alpha, beta) = random_range(&mut rng);
        let (tpr_min, fpr_max) = (rng.random_range(0.0..0.99), rng.random_range(0.01..=1.0));
        excess += usize::from(old_pauc(&up, &y, alpha, beta) > 1.0);
        for (s, want) in [(&up, 1.0), (&down, 0.0)] {
            let what = format!("N+ {np} N- {nn} [{alpha}, {beta}] {tpr_min} {fpr_max}");
            for v in [
                pauc(s, &y, alpha, beta).unwrap(),
                pauc_roc_area(s, &y, alpha, beta).unwrap(),
                two_way_pauc(s, &y, tpr_min, fpr_max).unwrap(),
                libauc_two_way_pauc(s, &y, tpr_min, fpr_max).unwrap(),
            ] {
                assert!((0.0..=1.0).contains(&v), "{what}: {v}");
                close(v, want, 1e-12, &what);
            }
            // McClish's floor is `(1 - fpr_max / (2 - fpr_max)) / 2` (area 0), not 0.
            let m = mcclish_pauc(s, &y, fpr_max).unwrap();
            let floor = 0.5 * (1.0 - fpr_max / (2.0 - fpr_max));
            assert!((0.0..=1.0).contains(&m), "{what}: McClish {m}");
            close(m, if want == 1.0 { 1.0 } else { floor }, 1e-12, &what);
        }
    }
    assert!(
        excess > 100,
        "the oracle should show the old excess: {excess}"
    );
}

/// The old interval: the generic bootstrap, copying each resample, with the old pAUC.
fn old_bootstrap(s: &[f64], y: &[f64], boot: &Bootstrap, alpha: f64, beta: f64) -> (f64, f64) {
    let i = bootstrap_interval(s, y, boot, |s, y| Ok(old_pauc(s, y, alpha, beta))).unwrap();
    (i.lower, i.upper)
}

#[test]
fn the_bootstrap_by_counts_equals_the_bootstrap_by_copies() {
    let mut rng = StdRng::seed_from_u64(7);
    for case in 0..60 {
        let n = [2, 5, 30, 200][case % 4];
        let (s, y) = random_case(&mut rng, n);
        let (other, _) = random_case(&mut rng, n);
        let (alpha, beta) = random_range(&mut rng);
        let boot = Bootstrap {
            resamples: [2, 50, 300][case % 3],
            seed: case as u64,
            level: 0.9,
        };
        let what = format!("case {case}: n {n} [{alpha}, {beta}]");
        let stat = |s: &[f64], y: &[f64]| pauc(s, y, alpha, beta);
        // To the last bit against the copies with the same pAUC ...
        let fast = bootstrap_pauc_interval(&s, &y, &boot, alpha, beta).unwrap();
        assert_eq!(
            fast,
            bootstrap_interval(&s, &y, &boot, stat).unwrap(),
            "{what}"
        );
        let t = bootstrap_pauc_compare(&s, &other, &y, &boot, alpha, beta).unwrap();
        assert_eq!(
            t,
            bootstrap_compare(&s, &other, &y, &boot, stat).unwrap(),
            "{what}"
        );
        // ... and to 1e-12 against the old pAUC's.
        let (lower, upper) = old_bootstrap(&s, &y, &boot, alpha, beta);
        close(fast.lower, lower, 1e-12, &what);
        close(fast.upper, upper, 1e-12, &what);
    }
}

#[test]
fn the_bootstrap_does_not_depend_on_the_threads() {
    // 3000 samples x 2000 resamples: past the size from which the resamples are evaluated on
    // worker threads; one, two and five threads, and the copies, agree to the last bit.
    let (s, other, y) = sample(3000);
    let tied: Vec<f64> = s.iter().map(|v| (v * 4.0).round() / 4.0).collect();
    let boot = Bootstrap::default();
    let columns: [&[f64]; 3] = [&s, &other, &tied];
    let run =
        |threads: usize| pauc_replicates_on(&columns, &y, &boot, (0.05, 0.5), threads).unwrap();
    let one = run(1);
    assert_eq!(one.len(), 3);
    assert!(
        one.iter()
            .all(|c| c.len() == 2000 && c.iter().all(|v| v.is_finite()))
    );
    for threads in [2, 5] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
    let copies = bootstrap_interval(&tied, &y, &boot, |s, y| pauc(s, y, 0.05, 0.5)).unwrap();
    let fast = bootstrap_pauc_interval(&tied, &y, &boot, 0.05, 0.5).unwrap();
    assert_eq!(fast, copies);
}

#[test]
fn the_fast_paths_refuse_what_the_old_ones_refused() {
    let y = [1.0, -1.0, 1.0];
    let boot = Bootstrap::default();
    let s = [0.1, 0.2, 0.3];
    assert!(matches!(
        pauc_replicates(
            &[&s],
            &y,
            &Bootstrap {
                resamples: 1,
                ..boot
            },
            0.0,
            1.0
        ),
        Err(MetricError::TooFewResamples(1))
    ));
    assert!(matches!(
        pauc_replicates(&[&[0.1, f64::INFINITY, 0.3]], &y, &boot, 0.0, 1.0),
        Err(MetricError::NonFinite { index: 1, .. })
    ));
    assert!(matches!(
        pauc_replicates(&[&s], &[1.0, 1.0, 1.0], &boot, 0.0, 1.0),
        Err(MetricError::OneClass { .. })
    ));
    assert!(matches!(
        pauc_replicates(&[&s], &y, &boot, 0.5, 0.5),
        Err(MetricError::BadRange { .. })
    ));
    assert!(matches!(
        bootstrap_pauc_interval(&s, &y, &Bootstrap { level: 1.0, ..boot }, 0.0, 1.0),
        Err(MetricError::BadLevel(_))
    ));
    // Resamples that cannot be held are an error, not an abort.
    assert!(matches!(
        pauc_replicates(
            &[&s],
            &y,
            &Bootstrap {
                resamples: usize::MAX / 4,
                ..boot
            },
            0.0,
            1.0
        ),
        Err(MetricError::OutOfMemory { .. })
    ));
    assert!(matches!(
        two_way_pauc(&s, &y, 1.0, 0.5),
        Err(MetricError::BadRange { .. })
    ));
    assert!(libauc_two_way_pauc(&s, &y, 0.5, 0.0).is_err());
}

// The former unit tests of metrics::auc.

#[test]
fn pauc_matches_brute_force_pair_counting_with_ties() {
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..400 {
        let n = rng.random_range(2..80);
        let mut labels: Vec<f64> = (0..n)
            .map(|_| if rng.random::<f64>() < 0.3 { 1.0 } else { -1.0 })
            .collect();
        labels[0] = 1.0;
        labels[1] = -1.0;
        // few distinct values: many ties
        let scores: Vec<f64> = (0..n)
            .map(|_| f64::from(rng.random_range(0..6)) * 0.5)
            .collect();
        let alpha = rng.random_range(0.0..0.6);
        let beta = rng.random_range(alpha + 0.05..1.0f64).min(1.0);
        let a = pauc(&scores, &labels, alpha, beta).unwrap();
        let b = brute_pauc(&scores, &labels, alpha, beta);
        assert!((a - b).abs() < 1e-12, "{a} vs brute {b}");
        // Without ties the ROC area is the same number.
        let distinct: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();
        let a = pauc(&distinct, &labels, alpha, beta).unwrap();
        let c = pauc_roc_area(&distinct, &labels, alpha, beta).unwrap();
        assert!((a - c).abs() < 1e-12, "{a} vs roc area {c}");
        // With ties, equal when the range does not cut a tie run: the full range.
        let c_full = pauc_roc_area(&scores, &labels, 0.0, 1.0).unwrap();
        assert!((c_full - auc(&scores, &labels).unwrap()).abs() < 1e-12);
        let full = auc(&scores, &labels).unwrap();
        assert!((pauc(&scores, &labels, 0.0, 1.0).unwrap() - full).abs() < 1e-12);
        assert!((brute_pauc(&scores, &labels, 0.0, 1.0) - full).abs() < 1e-12);
    }
}

#[test]
fn hand_made_cases() {
    // perfect ranking
    let y = [1.0, 1.0, -1.0, -1.0, -1.0, -1.0];
    let s = [0.9, 0.8, 0.3, 0.2, 0.1, 0.0];
    assert_eq!(auc(&s, &y).unwrap(), 1.0);
    assert_eq!(pauc(&s, &y, 0.25, 0.5).unwrap(), 1.0);
    // all scores equal: every pair is a tie
    let flat = [0.5; 6];
    assert_eq!(auc(&flat, &y).unwrap(), 0.5);
    assert_eq!(pauc(&flat, &y, 0.05, 0.5).unwrap(), 0.5);
    // N- = 4, FPR [0.25, 0.5]: only the 2nd largest negative (0.2) counts;
    // positives 0.9 and 0.15 -> credits 1 + 0 -> 0.5
    let s2 = [0.9, 0.15, 0.3, 0.2, 0.1, 0.0];
    assert_eq!(pauc(&s2, &y, 0.25, 0.5).unwrap(), 0.5);
    // fractional: [0.125, 0.375] covers half of negative 1 (0.3) and half of negative 2 (0.2)
    // positives: 0.9 beats both; 0.15 beats neither -> (0.5 + 0.5) * 1 / (2 * 1) = 0.5
    assert_eq!(pauc(&s2, &y, 0.125, 0.375).unwrap(), 0.5);
    assert_eq!(two_way_pauc(&s, &y, 0.0, 1.0).unwrap(), 1.0);
    assert_eq!(two_way_pauc(&flat, &y, 0.5, 0.5).unwrap(), 0.5);
    let roc = roc_curve(&s, &y).unwrap();
    assert_eq!(roc.first().map(|p| (p.fpr, p.tpr)), Some((0.0, 0.0)));
    assert_eq!(roc.last().map(|p| (p.fpr, p.tpr)), Some((1.0, 1.0)));
}

#[test]
fn bad_input_is_an_error() {
    let y = [1.0, -1.0];
    assert!(matches!(
        auc(&[0.1, f64::NAN], &y),
        Err(MetricError::NonFinite { index: 1, .. })
    ));
    assert!(matches!(
        auc(&[0.1, 0.2], &[1.0, 1.0]),
        Err(MetricError::OneClass { .. })
    ));
    assert!(matches!(
        auc(&[0.1], &y),
        Err(MetricError::LengthMismatch { .. })
    ));
    assert!(matches!(
        pauc(&[0.1, 0.2], &y, 0.5, 0.5),
        Err(MetricError::BadRange { .. })
    ));
    assert!(matches!(
        pauc(&[0.1, 0.2], &y, 0.6, 0.5),
        Err(MetricError::BadRange { .. })
    ));
    assert!(pauc(&[0.1, 0.2], &y, -0.1, 0.5).is_err());
}

#[test]
fn a_column_sorted_once_gives_every_figure_to_the_last_bit() {
    let mut rng = StdRng::seed_from_u64(54);
    for case in 0..2000 {
        let n = [2, 3, 4, 7, 20, 64, 150, 1000][case % 8];
        let (s, y) = random_case(&mut rng, n);
        let (other, _) = random_case(&mut rng, n);
        let (alpha, beta) = random_range(&mut rng);
        let min_tpr = [0.0, 0.5, rng.random_range(0.0..0.99)][case % 3];
        let max_fpr = [1.0, 0.3, rng.random_range(0.01..=1.0)][case % 3];
        let settings = FigureSettings {
            fpr: (alpha, beta),
            max_fpr,
            min_tpr,
        };
        let what = format!("case {case}: n {n}, {settings:?}, {s:?} {y:?}");
        let f = RankedColumn::new(&s, &y)
            .unwrap()
            .figures(&settings)
            .unwrap();
        let g = RankedColumn::new(&other, &y)
            .unwrap()
            .figures(&settings)
            .unwrap();
        let (d, e) = (
            Placements::new(&s, &y).unwrap(),
            Placements::new(&other, &y).unwrap(),
        );
        assert_eq!(f.placements, d, "{what}");
        assert_eq!(f.placements.delong, DeLong::new(&s, &y).unwrap(), "{what}");
        assert_eq!(f.placements.compare(&g.placements), d.compare(&e), "{what}");
        let bits = |v: f64| v.to_bits();
        assert_eq!(
            bits(f.pauc),
            bits(pauc(&s, &y, alpha, beta).unwrap()),
            "{what}"
        );
        let m = mcclish_pauc(&s, &y, max_fpr).unwrap();
        assert_eq!(bits(f.mcclish), bits(m), "{what}");
        let l = libauc_two_way_pauc(&s, &y, min_tpr, max_fpr).unwrap();
        assert_eq!(bits(f.two_way), bits(l), "{what}");
    }
}

#[test]
fn both_paucs_bootstrapped_by_counts_equal_the_bootstrap_by_copies() {
    let mut rng = StdRng::seed_from_u64(540);
    for case in 0..60 {
        let n = [2, 5, 30, 200, 3000][case % 5];
        let (s, y) = random_case(&mut rng, n);
        let (other, _) = random_case(&mut rng, n);
        let (alpha, beta) = random_range(&mut rng);
        let (min_tpr, max_fpr) = (rng.random_range(0.0..0.99), rng.random_range(0.01..=1.0));
        let boot = Bootstrap {
            resamples: [2, 50, 300, 2000][case % 4],
            seed: case as u64,
            level: 0.9,
        };
        let what = format!("case {case}: n {n} [{alpha}, {beta}] ({min_tpr}, {max_fpr})");
        let columns = [
            RankedColumn::new(&s, &y).unwrap(),
            RankedColumn::new(&other, &y).unwrap(),
        ];
        let r = replicates(&columns, &boot, (alpha, beta), Some((min_tpr, max_fpr)), 2).unwrap();
        let two = |s: &[f64], y: &[f64]| libauc_two_way_pauc(s, y, min_tpr, max_fpr);
        let estimate = libauc_two_way_pauc(&s, &y, min_tpr, max_fpr).unwrap();
        assert_eq!(
            interval_of_replicates(estimate, r.two_way[0].clone(), boot.level).unwrap(),
            bootstrap_interval(&s, &y, &boot, two).unwrap(),
            "{what}"
        );
        let difference = estimate - libauc_two_way_pauc(&other, &y, min_tpr, max_fpr).unwrap();
        assert_eq!(
            compare_replicates(difference, &r.two_way[0], &r.two_way[1]),
            bootstrap_compare(&s, &other, &y, &boot, two).unwrap(),
            "{what}"
        );
        let p = |s: &[f64], y: &[f64]| pauc(s, y, alpha, beta);
        let estimate = pauc(&s, &y, alpha, beta).unwrap();
        assert_eq!(
            interval_of_replicates(estimate, r.pauc[0].clone(), boot.level).unwrap(),
            bootstrap_interval(&s, &y, &boot, p).unwrap(),
            "{what}"
        );
        // Without the two-way pAUC: the same pAUC replicates, no two-way ones.
        let alone = replicates(&columns, &boot, (alpha, beta), None, 1).unwrap();
        assert_eq!(alone.pauc, r.pauc, "{what}");
        assert!(alone.two_way.is_empty());
    }
}

#[test]
fn the_bootstraps_settings_are_checked_and_named() {
    let y = [1.0, -1.0, 1.0, -1.0];
    let columns = [RankedColumn::new(&[0.1, 0.2, 0.3, 0.4], &y).unwrap()];
    let boot = Bootstrap::default();
    assert!(matches!(
        replicates(&columns, &boot, (0.0, 1.0), Some((1.0, 0.5)), 1),
        Err(MetricError::BadTwoWay { .. })
    ));
    assert!(matches!(
        replicates(&columns, &boot, (0.5, 0.5), None, 1),
        Err(MetricError::BadRange { .. })
    ));
    let other = [RankedColumn::new(&[0.1, 0.2, 0.3], &[1.0, -1.0, 1.0]).unwrap()];
    let both = [columns[0].clone(), other[0].clone()];
    assert!(matches!(
        replicates(&both, &boot, (0.0, 1.0), None, 1),
        Err(MetricError::LengthMismatch { .. })
    ));
    let e = libauc_two_way_pauc(&[0.1, 0.2, 0.3, 0.4], &y, 1.0, 0.5).unwrap_err();
    assert!(e.to_string().contains("min_tpr = 1"), "{e}");
}
