//! Small dense linear algebra for the linear solvers: vector helpers and a symmetric
//! eigendecomposition (faer) that solves `(rho G + s I) w = rhs` for any `rho, s` in `O(d^2)`.

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

/// `G = Q diag(values) Q^T` of a symmetric positive semidefinite `d x d` matrix.
#[derive(Debug, Clone)]
pub struct SymEigen {
    /// Eigenvalues, nondecreasing (negative rounding noise clamped to 0).
    pub values: Vec<f64>,
    /// Eigenvectors as columns, column-major `d x d`.
    vectors: Vec<f64>,
    d: usize,
}

impl SymEigen {
    /// Decompose the row-major symmetric matrix `g` (`d x d`).
    ///
    /// # Panics
    /// If faer's symmetric eigensolver does not converge (it always does on finite input;
    /// the callers check finiteness first).
    pub fn new(g: &[f64], d: usize) -> Self {
        let mat = faer::Mat::<f64>::from_fn(d, d, |i, j| g[i * d + j]);
        let evd = mat
            .self_adjoint_eigen(faer::Side::Lower)
            .expect("symmetric eigendecomposition of a finite matrix converges");
        let u = evd.U();
        let s = evd.S();
        let values = (0..d).map(|i| s[i].max(0.0)).collect();
        let mut vectors = vec![0.0; d * d];
        for col in 0..d {
            for row in 0..d {
                vectors[col * d + row] = u[(row, col)];
            }
        }
        SymEigen { values, vectors, d }
    }

    /// `w = (rho G + shift I)^{-1} rhs`; needs `rho * lambda_min + shift > 0`.
    pub fn solve_shifted(&self, rho: f64, shift: f64, rhs: &[f64], w: &mut [f64]) {
        let d = self.d;
        w.fill(0.0);
        for k in 0..d {
            let q = &self.vectors[k * d..(k + 1) * d];
            let coef = dot(q, rhs) / (rho * self.values[k] + shift);
            for (wj, &qj) in w.iter_mut().zip(q) {
                *wj += coef * qj;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_solve_inverts_the_matrix() {
        let g = [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0];
        let e = SymEigen::new(&g, 3);
        assert!(e.values.windows(2).all(|p| p[0] <= p[1]));
        let rhs = [1.0, -2.0, 0.5];
        let mut w = [0.0; 3];
        e.solve_shifted(0.7, 0.3, &rhs, &mut w);
        for i in 0..3 {
            let back: f64 = (0..3).map(|j| 0.7 * g[i * 3 + j] * w[j]).sum::<f64>() + 0.3 * w[i];
            assert!((back - rhs[i]).abs() < 1e-12, "{i}: {back}");
        }
    }
}
