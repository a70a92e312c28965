//! The w-step of Algorithm 1 (papers/rank-based-loss-admm.txt) solved exactly: its smooth part
//! `rho/2 ||z - D w + lambda/rho||^2 + r/2 ||w - w_k||^2` needs only the `d x d` Gram matrix
//! `X^T X`; one symmetric eigendecomposition of it ([`SymEigen`], faer) solves the closed form
//! `(rho G + s I) w = rhs` for any `rho, s` in `O(d^2)`, FISTA adds a nonsmooth regularizer
//! through its prox, and L-BFGS minimizes sADMM's Moreau-envelope form (section 4).

use crate::math::regularizer::Regularizer;
use crate::math::vector::{dot, norm};

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

/// The smooth part of the w-step, `rho/2 w^T G w - rho b^T w + r/2 ||w - w_k||^2`, and its
/// gradient `rho (G w - b) + r (w - w_k)`.
pub(crate) struct Quadratic<'a> {
    pub(crate) gram: &'a [f64],
    pub(crate) b: &'a [f64],
    pub(crate) w_k: &'a [f64],
    pub(crate) rho: f64,
    pub(crate) r: f64,
}

impl Quadratic<'_> {
    pub(crate) fn value_grad(&self, w: &[f64], grad: &mut [f64]) -> f64 {
        let d = w.len();
        let mut value = 0.0;
        for a in 0..d {
            let gw = dot(&self.gram[a * d..(a + 1) * d], w);
            grad[a] = self.rho * (gw - self.b[a]) + self.r * (w[a] - self.w_k[a]);
            value += 0.5 * self.rho * w[a] * gw - self.rho * self.b[a] * w[a]
                + 0.5 * self.r * (w[a] - self.w_k[a]).powi(2);
        }
        value
    }
}

/// Accelerated proximal gradient (FISTA with gradient-based restart) on `q + g`, warm-started
/// at `w`; returns the iterations used.
pub(crate) fn fista(
    q: &Quadratic<'_>,
    reg: &Regularizer,
    lipschitz: f64,
    w: &mut [f64],
    max_iter: usize,
    tol: f64,
) -> usize {
    let d = w.len();
    let step = 1.0 / lipschitz;
    let mut y = w.to_vec();
    let mut grad = vec![0.0; d];
    let mut w_new = vec![0.0; d];
    let mut t = 1.0f64;
    for it in 1..=max_iter {
        q.value_grad(&y, &mut grad);
        for j in 0..d {
            w_new[j] = reg.prox_1d(y[j] - step * grad[j], step);
        }
        let mut diff2 = 0.0;
        let mut restart = 0.0;
        for j in 0..d {
            let dw = w_new[j] - w[j];
            diff2 += dw * dw;
            restart += (y[j] - w_new[j]) * dw;
        }
        let t_new = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
        let momentum = if restart > 0.0 {
            0.0
        } else {
            (t - 1.0) / t_new
        };
        t = if restart > 0.0 { 1.0 } else { t_new };
        for j in 0..d {
            y[j] = w_new[j] + momentum * (w_new[j] - w[j]);
        }
        w.copy_from_slice(&w_new);
        if diff2.sqrt() <= tol * norm(w).max(1.0) {
            return it;
        }
    }
    max_iter
}

/// L-BFGS (memory 10, Armijo backtracking) on a smooth function given as value+gradient.
pub(crate) fn lbfgs(
    f: &dyn Fn(&[f64], &mut [f64]) -> f64,
    w: &mut [f64],
    max_iter: usize,
    tol: f64,
) -> usize {
    const MEMORY: usize = 10;
    let d = w.len();
    let mut grad = vec![0.0; d];
    let mut value = f(w, &mut grad);
    let g0 = norm(&grad).max(1e-300);
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let mut dir = vec![0.0; d];
    let mut trial = vec![0.0; d];
    let mut trial_grad = vec![0.0; d];
    for it in 1..=max_iter {
        if norm(&grad) <= tol * g0.max(1.0) {
            return it - 1;
        }
        // two-loop recursion
        dir.copy_from_slice(&grad);
        let m = s_hist.len();
        let mut alpha = vec![0.0; m];
        for i in (0..m).rev() {
            let rho_i = 1.0 / dot(&y_hist[i], &s_hist[i]);
            alpha[i] = rho_i * dot(&s_hist[i], &dir);
            for j in 0..d {
                dir[j] -= alpha[i] * y_hist[i][j];
            }
        }
        if let (Some(s), Some(y)) = (s_hist.last(), y_hist.last()) {
            let scale = dot(s, y) / dot(y, y);
            dir.iter_mut().for_each(|v| *v *= scale);
        }
        for i in 0..m {
            let rho_i = 1.0 / dot(&y_hist[i], &s_hist[i]);
            let beta = rho_i * dot(&y_hist[i], &dir);
            for j in 0..d {
                dir[j] += (alpha[i] - beta) * s_hist[i][j];
            }
        }
        dir.iter_mut().for_each(|v| *v = -*v);
        let mut slope = dot(&grad, &dir);
        if slope >= 0.0 {
            // not a descent direction: fall back to steepest descent
            for j in 0..d {
                dir[j] = -grad[j];
            }
            slope = -dot(&grad, &grad);
            s_hist.clear();
            y_hist.clear();
        }
        let mut step = 1.0;
        let mut accepted = false;
        for _ in 0..60 {
            for j in 0..d {
                trial[j] = w[j] + step * dir[j];
            }
            let tv = f(&trial, &mut trial_grad);
            if tv <= value + 1e-4 * step * slope {
                let s: Vec<f64> = (0..d).map(|j| trial[j] - w[j]).collect();
                let y: Vec<f64> = (0..d).map(|j| trial_grad[j] - grad[j]).collect();
                if dot(&s, &y) > 1e-16 * norm(&s) * norm(&y) {
                    if s_hist.len() == MEMORY {
                        s_hist.remove(0);
                        y_hist.remove(0);
                    }
                    s_hist.push(s);
                    y_hist.push(y);
                }
                w.copy_from_slice(&trial);
                grad.copy_from_slice(&trial_grad);
                value = tv;
                accepted = true;
                break;
            }
            step *= 0.5;
        }
        if !accepted {
            return it;
        }
    }
    max_iter
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
