//! The linear map from Pdprox's primal variable to the scores, `s = X w`: the rows of a dense
//! matrix (sections 5.1, 5.5, 5.6 of papers/pdprox-primal-dual-nonsmooth.txt), or the observed
//! entries of a matrix `W` (section 5.3: max-margin matrix factorization and matrix completion,
//! `s_k = W[r_k, c_k]`, `W` row-major in the primal), where `X` is a selection matrix that is
//! never formed: a score reads one entry, a gradient row adds into one.

use crate::math::vector::dot;
use crate::pdprox::error::PdproxError;

/// `X` of `s = X w`: dense rows or the observed entries of a matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Design<'a> {
    /// `n x d`, row-major.
    Dense {
        /// The values, `n d` of them.
        x: &'a [f64],
        /// Features per row.
        d: usize,
    },
    /// Observation `k` scores the entry `(row[k], col[k])` of `W` (`rows x cols`, stored
    /// row-major as the primal vector).
    Entries {
        /// Row index of each observation.
        row: &'a [usize],
        /// Column index of each observation.
        col: &'a [usize],
        /// Rows of `W`.
        rows: usize,
        /// Columns of `W`.
        cols: usize,
    },
}

impl Design<'_> {
    /// Check the shape against `n` targets, finiteness and indices.
    ///
    /// # Errors
    /// [`PdproxError::Empty`], [`PdproxError::Shape`], [`PdproxError::NonFinite`], or
    /// [`PdproxError::Unsupported`] for an entry outside the matrix.
    pub fn validate(&self, n: usize) -> Result<(), PdproxError> {
        let d = self.d();
        if n == 0 || d == 0 {
            return Err(PdproxError::Empty { rows: n, d });
        }
        match *self {
            Design::Dense { x, d } => {
                if x.len() != n * d {
                    return Err(PdproxError::Shape {
                        values: x.len(),
                        rows: n,
                        d,
                    });
                }
                if let Some(i) = x.iter().position(|v| !v.is_finite()) {
                    return Err(PdproxError::NonFinite {
                        what: "a feature",
                        row: i / d,
                    });
                }
            }
            Design::Entries {
                row,
                col,
                rows,
                cols,
            } => {
                if row.len() != n || col.len() != n {
                    return Err(PdproxError::Shape {
                        values: row.len().min(col.len()),
                        rows: n,
                        d: 1,
                    });
                }
                if let Some(k) = (0..n).find(|&k| row[k] >= rows || col[k] >= cols) {
                    return Err(PdproxError::Unsupported(format!(
                        "observation {k} is entry ({}, {}) of a {rows} x {cols} matrix",
                        row[k], col[k]
                    )));
                }
            }
        }
        Ok(())
    }

    /// Rows of `X` (observations).
    pub fn n(&self) -> usize {
        match *self {
            Design::Dense { x, d } => x.len() / d.max(1),
            Design::Entries { row, .. } => row.len(),
        }
    }

    /// Columns of `X`: features, or `rows x cols` entries of `W`.
    pub fn d(&self) -> usize {
        match *self {
            Design::Dense { d, .. } => d,
            Design::Entries { rows, cols, .. } => rows * cols,
        }
    }

    /// `x_i^T w` over the first `d` coordinates of `w`.
    #[inline]
    pub fn score(&self, i: usize, w: &[f64]) -> f64 {
        match *self {
            Design::Dense { x, d } => dot(&x[i * d..(i + 1) * d], &w[..d]),
            Design::Entries { row, col, cols, .. } => w[row[i] * cols + col[i]],
        }
    }

    /// `out[..d] += v x_i`.
    #[inline]
    pub fn add_row(&self, i: usize, v: f64, out: &mut [f64]) {
        match *self {
            Design::Dense { x, d } => {
                for (o, &xij) in out[..d].iter_mut().zip(&x[i * d..(i + 1) * d]) {
                    *o += v * xij;
                }
            }
            Design::Entries { row, col, cols, .. } => out[row[i] * cols + col[i]] += v,
        }
    }

    /// `||x_i||^2`.
    pub fn row_norm_sq(&self, i: usize) -> f64 {
        match *self {
            Design::Dense { x, d } => {
                let r = &x[i * d..(i + 1) * d];
                dot(r, r)
            }
            Design::Entries { .. } => 1.0,
        }
    }

    /// Whether an unregularized bias column can be appended: not to a matrix of entries.
    ///
    /// # Errors
    /// [`PdproxError::Unsupported`] for entries with a bias.
    pub fn check_bias(&self, bias: bool) -> Result<(), PdproxError> {
        if bias && matches!(self, Design::Entries { .. }) {
            return Err(PdproxError::Unsupported(
                "a bias with a matrix of entries (matrix completion has none)".into(),
            ));
        }
        Ok(())
    }

    /// `lambda_max(X~^T X~)`, `X~ = [X, 1]` with a bias: for dense rows from the smaller of
    /// the two Gram matrices; for entries `X^T X` is diagonal, each entry's count of
    /// observations, so the largest count (a bias is refused there).
    ///
    /// # Errors
    /// [`PdproxError::Unsupported`] if the eigenvalue solver fails or for entries with a bias.
    pub fn largest_gram_eigenvalue(&self, bias: bool) -> Result<f64, PdproxError> {
        match *self {
            Design::Dense { x, d } => {
                let n = self.n();
                let p = d + usize::from(bias);
                let at = |i: usize, j: usize| if j < d { x[i * d + j] } else { 1.0 };
                let xt = faer::Mat::<f64>::from_fn(n, p, at);
                let gram = if p <= n {
                    xt.transpose() * &xt
                } else {
                    &xt * xt.transpose()
                };
                let values = gram
                    .self_adjoint_eigenvalues(faer::Side::Lower)
                    .map_err(|_| {
                        PdproxError::Unsupported(
                            "the eigenvalues of X^T X did not converge (use the row-norm step \
                             bound)"
                                .into(),
                        )
                    })?;
                Ok(values.last().copied().unwrap_or(0.0).max(0.0))
            }
            Design::Entries {
                row,
                col,
                rows,
                cols,
            } => {
                self.check_bias(bias)?;
                let mut count = std::collections::HashMap::new();
                for k in 0..row.len() {
                    *count.entry(row[k] * cols + col[k]).or_insert(0usize) += 1;
                }
                debug_assert!(count.keys().all(|&e| e < rows * cols));
                Ok(count.values().copied().max().unwrap_or(0) as f64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries design acts as the dense selection matrix it stands for, and its Gram
    /// eigenvalue is the dense one's.
    #[test]
    fn entries_equal_their_dense_selection_matrix() {
        let (rows, cols) = (3, 4);
        let row = [0, 2, 1, 2, 0];
        let col = [1, 3, 0, 3, 2]; // (2, 3) observed twice
        let entries = Design::Entries {
            row: &row,
            col: &col,
            rows,
            cols,
        };
        let d = rows * cols;
        let mut x = vec![0.0; row.len() * d];
        for k in 0..row.len() {
            x[k * d + row[k] * cols + col[k]] = 1.0;
        }
        let dense = Design::Dense { x: &x, d };
        entries.validate(5).unwrap();
        let w: Vec<f64> = (0..d).map(|j| (j as f64 * 0.7).sin()).collect();
        let (mut ge, mut gd) = (vec![0.0; d], vec![0.0; d]);
        for k in 0..row.len() {
            assert_eq!(entries.score(k, &w), dense.score(k, &w));
            assert_eq!(entries.row_norm_sq(k), dense.row_norm_sq(k));
            entries.add_row(k, k as f64 - 1.5, &mut ge);
            dense.add_row(k, k as f64 - 1.5, &mut gd);
        }
        assert_eq!(ge, gd);
        let (le, ld) = (
            entries.largest_gram_eigenvalue(false).unwrap(),
            dense.largest_gram_eigenvalue(false).unwrap(),
        );
        assert_eq!(le, 2.0);
        assert!((le - ld).abs() < 1e-12, "{le} {ld}");
        assert!(entries.largest_gram_eigenvalue(true).is_err());
        let bad = Design::Entries {
            row: &row,
            col: &[1, 3, 0, 4, 2],
            rows,
            cols,
        };
        assert!(
            matches!(bad.validate(5), Err(PdproxError::Unsupported(m)) if m.contains("(2, 4)"))
        );
    }
}
