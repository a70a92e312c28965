//! Dot products and norms of `f64` slices, for the CPU solvers.

/// `a . b`.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Euclidean norm.
#[inline]
pub fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// `X w` for a row-major matrix `x` of rows with `d` entries: the linear scores every linear
/// solver computes (the rows of a data set's design matrix, or any slice of them).
///
/// # Panics
/// If `w.len() != d`.
pub fn row_scores(x: &[f64], d: usize, w: &[f64]) -> Vec<f64> {
    assert_eq!(
        w.len(),
        d,
        "a weight vector of {} entries for rows of {d}",
        w.len()
    );
    x.chunks_exact(d)
        .map(|row| row.iter().zip(w).map(|(a, b)| a * b).sum())
        .collect()
}
