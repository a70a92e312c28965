//! Issue 57: a crate that depends on rankrisk-core alone (this test crate: no Burn in its
//! tree) computes the metrics and trains with SOPA's step on plain slices.

use rankrisk_core::metrics::{pauc, roc_auc};
use rankrisk_core::objective::Objective;
use rankrisk_core::objective::dro_pauc::SopaConfig;

#[test]
fn metrics_and_a_sopa_step_on_plain_slices() {
    // Six samples: the AUC counts 8 of 9 pairs in order.
    let scores = [0.9, 0.8, 0.35, 0.6, 0.1, 0.2];
    let labels = [1.0, 1.0, 1.0, -1.0, -1.0, -1.0];
    assert_eq!(roc_auc(&scores, &labels).unwrap(), 8.0 / 9.0);
    assert!((pauc(&scores, &labels, 0.0, 1.0 / 3.0).unwrap() - 2.0 / 3.0).abs() < 1e-12);

    // SOPA over FPR [0, 0.5] on the same samples, as a linear scorer `s = w x` of one feature
    // would be trained: the step's gradient in the scores, then a plain gradient step on `w`.
    let x = [2.0, 1.5, 1.0, 0.9, -1.0, -0.5];
    let mut sopa = SopaConfig::new(0.5).init(&labels).unwrap();
    let ids: Vec<usize> = (0..6).collect();
    let mut w = 0.1;
    let mut losses = Vec::new();
    for _ in 0..200 {
        let s: Vec<f64> = x.iter().map(|v| w * v).collect();
        let g = sopa.batch_gradient(&s, &labels, &ids).unwrap();
        losses.push(g.loss);
        let dw: f64 = g
            .grad
            .iter()
            .zip(&x)
            .map(|(&gi, v)| f64::from(gi) * v)
            .sum();
        w -= 0.5 * dw;
    }
    assert!(
        losses[199] < 0.5 * losses[0],
        "{} -> {}",
        losses[0],
        losses[199]
    );
    // The trained scores rank every positive above every negative, with room to spare.
    let s: Vec<f64> = x.iter().map(|v| w * v).collect();
    assert_eq!(roc_auc(&s, &labels).unwrap(), 1.0);
    assert!(w > 1.0, "w {w}");
    // Its state (one threshold per positive) is plain named vectors.
    let state = sopa.state();
    assert_eq!(state[0].1.len(), 3);
}
