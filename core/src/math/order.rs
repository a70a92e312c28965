//! The one order in which the library compares scores and losses: values that are equal compare
//! equal.
//!
//! `f64::total_cmp` orders `-0.0` below `0.0`, so two equal scores sorted or compared with it are
//! not a tie: a linear model at `w = 0` scores `x . 0`, which is `-0.0` for a row whose terms are
//! all `-0.0`, and a constant scorer would get an AUC other than 1/2. Every sort and comparison
//! where a tie matters (AUC and pAUC (eq. 1-2 of the pAUC paper), DeLong's placements, the ROC
//! points, the pair losses ranked by the pAUC objectives, the rank weights' sorted losses (eq. 3)
//! and PAVA's blocks) goes through [`ascending`] or [`descending`]; where an order among equal
//! values is needed for determinism, callers break ties by index, never by the sign of zero.
//! NaN is refused where data enters the library; here it sorts after every number, so that a
//! sort never panics.

use std::cmp::Ordering;

/// `x` with `-0.0` replaced by `0.0` (IEEE 754: `-0.0 + 0.0 = 0.0` under round-to-nearest); every
/// other value, NaN included, unchanged.
#[inline]
pub fn canonical(x: f64) -> f64 {
    x + 0.0
}

/// Ascending total order in which `-0.0` and `0.0` are equal.
#[inline]
pub fn ascending(a: &f64, b: &f64) -> Ordering {
    canonical(*a).total_cmp(&canonical(*b))
}

/// Descending total order in which `-0.0` and `0.0` are equal.
#[inline]
pub fn descending(a: &f64, b: &f64) -> Ordering {
    ascending(b, a)
}

/// An order-preserving integer key of a finite score: `a < b` as scores (with `-0.0 = 0.0`)
/// exactly when `order_key(a) < order_key(b)`, so that integer sorts order scores as
/// [`ascending`] does. [`from_order_key`] inverts it up to the sign of zero.
#[inline]
pub fn order_key(s: f64) -> u64 {
    let bits = canonical(s).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The score of an [`order_key`], as [`canonical`] gives it.
#[inline]
pub fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// `out` = the indices `0..values.len()` by [`ascending`] value, equal values in index order.
pub fn indices_ascending(values: &[f64], out: &mut Vec<usize>) {
    out.clear();
    out.extend(0..values.len());
    out.sort_unstable_by(|&a, &b| ascending(&values[a], &values[b]).then(a.cmp(&b)));
}

/// `out` = the indices `0..values.len()` by [`descending`] value, equal values in index order.
pub fn indices_descending(values: &[f64], out: &mut Vec<usize>) {
    out.clear();
    out.extend(0..values.len());
    out.sort_unstable_by(|&a, &b| descending(&values[a], &values[b]).then(a.cmp(&b)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_zeros_are_equal_and_everything_else_keeps_its_order() {
        assert_eq!(ascending(&-0.0, &0.0), Ordering::Equal);
        assert_eq!(descending(&0.0, &-0.0), Ordering::Equal);
        assert!(canonical(-0.0).is_sign_positive());
        let mut v = [
            0.5,
            -0.0,
            f64::NAN,
            -1.0,
            0.0,
            f64::NEG_INFINITY,
            -0.0,
            1e-300,
        ];
        v.sort_by(ascending);
        assert_eq!(v[0], f64::NEG_INFINITY);
        assert_eq!(v[1], -1.0);
        assert!(v[2..5].iter().all(|&x| x == 0.0));
        assert_eq!(&v[5..7], &[1e-300, 0.5]);
        assert!(v[7].is_nan());
        // A stable sort keeps equal values in input order, whatever the sign of zero.
        let mut idx: Vec<usize> = (0..4).collect();
        let s = [-0.0, 0.0, -0.0, 0.0];
        idx.sort_by(|&i, &j| descending(&s[i], &s[j]));
        assert_eq!(idx, [0, 1, 2, 3]);
        let mut out = vec![9];
        indices_descending(&[0.0, 1.0, -0.0, 2.0, 0.0], &mut out);
        assert_eq!(out, [3, 1, 0, 2, 4]);
        indices_ascending(&[0.0, 1.0, -0.0, 2.0, 0.0], &mut out);
        assert_eq!(out, [0, 2, 4, 1, 3]);
    }
}
