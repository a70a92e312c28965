//! The metrics against values computed independently: scikit-learn 1.x's
//! `roc_auc_score(max_fpr=beta)` for the McClish pAUC, LibAUC 2.0.1's `pauc_roc_score(max_fpr,
//! min_tpr)` for the two-way pAUC, and DeLong's variance, interval and paired test written from
//! pROC's documented formulas as an O(N+ N-) numpy computation (structural components by
//! brute force, sample variances with n - 1). The values were printed by a Python script from
//! the arrays below; the bootstrap is checked against DeLong's standard error, which it must
//! approach on a large sample.

use rankrisk::metrics::auc::auc;
use rankrisk::metrics::ci::{
    Bootstrap, DeLong, bootstrap_compare, bootstrap_interval, normal_quantile, quantile_type7,
};
use rankrisk::metrics::conventions::{libauc_two_way_pauc, mcclish_pauc};
use rankrisk::metrics::pauc;

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
    let t = d1.compare(&d2).unwrap();
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
    let dt = d.compare(&DeLong::new(&other, &y).unwrap()).unwrap();
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
