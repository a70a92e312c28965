//! Issue 70: `RankedColumn::delong_test` (the paired DeLong test summed bucket by bucket of
//! sample indices, as the variance of the components' differences) gives `Placements::compare`'s
//! test to rounding, and exactly 0 spread for a column against itself.

use rankrisk_core::metrics::MetricError;
use rankrisk_core::metrics::ranked::RankedColumn;

#[test]
fn the_paired_test_by_buckets_is_the_one_by_components() {
    // Ties in both columns, both classes in groups, 2000 samples; and one column against
    // itself (no difference, no spread).
    let n = 2000;
    let y: Vec<f64> = (0..n)
        .map(|i| if (i * 7) % 10 < 3 { 1.0 } else { -1.0 })
        .collect();
    let a: Vec<f64> = (0..n)
        .map(|i| ((i * 37 % 101) as f64 / 10.0).round() + y[i])
        .collect();
    let b: Vec<f64> = (0..n).map(|i| ((i * 13 % 29) as f64) * 0.5).collect();
    let (ra, rb) = (
        RankedColumn::new(&a, &y).unwrap(),
        RankedColumn::new(&b, &y).unwrap(),
    );
    let want = ra
        .placements()
        .unwrap()
        .compare(&rb.placements().unwrap())
        .unwrap();
    let got = ra.delong_test(&rb).unwrap();
    assert_eq!(got.difference, want.difference);
    assert!(
        (got.std_error / want.std_error - 1.0).abs() < 1e-12,
        "{got:?} {want:?}"
    );
    assert!(
        (got.p_value - want.p_value).abs() < 1e-12,
        "{got:?} {want:?}"
    );
    let same = ra.delong_test(&ra).unwrap();
    assert_eq!(same.difference, 0.0);
    assert_eq!(same.std_error, 0.0, "{same:?}");
    let other = RankedColumn::new(&a[..10], &y[..10]).unwrap();
    assert!(matches!(
        ra.delong_test(&other),
        Err(MetricError::LengthMismatch { .. })
    ));
}
