//! The regularizers `lambda R(w)` of section 4.1 of papers/pdprox-primal-dual-nonsmooth.txt
//! with their composite gradient mappings (step 5 of Algorithm 1, step 4 of Algorithm 2),
//! `prox_{t R}(v) = argmin_w 1/2 ||w - v||^2 + t R(w)`, and what the duality gap needs of their
//! conjugates: `min_w g^T w + R(w) = -R*(-g)`, finite for l2^2 and the elastic net, and for a
//! norm only where the dual norm of `g` is at most the weight (`-R*(-g) = 0` there).

use crate::math::regularizer::Regularizer;
use crate::pdprox::error::PdproxError;

/// A convex regularizer (its weight included).
#[derive(Debug, Clone, PartialEq)]
pub enum Penalty {
    /// `none`, `l1:MU`, `l2:MU` (`MU/2 ||w||^2`) or `enet:L1,L2`, per coordinate.
    Elementwise(Regularizer),
    /// Group lasso `mu sum_g sqrt(d_g) ||w_g||_2`; `group[j]` is coordinate `j`'s group.
    GroupLasso {
        /// Weight.
        mu: f64,
        /// Group of each coordinate.
        group: Vec<usize>,
    },
    /// `mu sum_j ||W^j||_inf` over the rows of `W` (`rows x cols`, row-major): multi-task
    /// feature selection.
    L1Inf {
        /// Weight.
        mu: f64,
        /// Rows of `W`.
        rows: usize,
        /// Columns of `W`.
        cols: usize,
    },
    /// Trace norm `mu ||W||_*` (the sum of the singular values of `W`, `rows x cols`,
    /// row-major): matrix completion.
    Trace {
        /// Weight.
        mu: f64,
        /// Rows of `W`.
        rows: usize,
        /// Columns of `W`.
        cols: usize,
    },
}

impl Penalty {
    /// An element-wise regularizer of the rank-based crate.
    ///
    /// # Errors
    /// [`PdproxError::Unsupported`] for MCP and SCAD (nonconvex: no composite mapping with the
    /// paper's guarantee), [`PdproxError::Spec`] for bad weights.
    pub fn elementwise(reg: Regularizer) -> Result<Self, PdproxError> {
        reg.validate()?;
        match reg {
            Regularizer::Mcp { .. } | Regularizer::Scad { .. } => Err(PdproxError::Unsupported(
                format!("{reg} is nonconvex; Pdprox solves convex problems (use admm)"),
            )),
            _ => Ok(Penalty::Elementwise(reg)),
        }
    }

    /// Check the penalty against a primal of length `len`.
    ///
    /// # Errors
    /// [`PdproxError::Setting`] for a negative or non-finite weight, or a shape that is not
    /// `len`.
    pub fn validate(&self, len: usize) -> Result<(), PdproxError> {
        let (mu, size) = match self {
            Penalty::Elementwise(_) => return Ok(()),
            Penalty::GroupLasso { mu, group } => (*mu, group.len()),
            Penalty::L1Inf { mu, rows, cols } | Penalty::Trace { mu, rows, cols } => {
                (*mu, rows * cols)
            }
        };
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(PdproxError::Setting {
                name: "the regularizer's weight",
                expected: "finite and >= 0",
                value: mu,
            });
        }
        if size != len {
            return Err(PdproxError::Setting {
                name: "the regularizer's number of coordinates",
                expected: "the number of features",
                value: size as f64,
            });
        }
        Ok(())
    }

    /// `R(w)`.
    pub fn value(&self, w: &[f64]) -> f64 {
        match self {
            Penalty::Elementwise(reg) => reg.value(w),
            Penalty::GroupLasso { mu, group } => group_norms(w, group)
                .iter()
                .map(|(size, sq)| mu * (*size as f64).sqrt() * sq.sqrt())
                .sum(),
            Penalty::L1Inf { mu, cols, .. } => {
                mu * w
                    .chunks_exact(*cols)
                    .map(|r| r.iter().fold(0.0, |m: f64, v| m.max(v.abs())))
                    .sum::<f64>()
            }
            Penalty::Trace { mu, rows, cols } => {
                mu * singular_values(w, *rows, *cols).iter().sum::<f64>()
            }
        }
    }

    /// `prox_{t R}(v)` into `out`.
    pub fn prox(&self, v: &[f64], t: f64, out: &mut [f64]) {
        match self {
            Penalty::Elementwise(reg) => reg.prox(v, t, out),
            Penalty::GroupLasso { mu, group } => {
                // Block soft-thresholding: w_g = v_g (1 - t mu sqrt(d_g) / ||v_g||)_+.
                let norms = group_norms(v, group);
                for ((o, &x), &g) in out.iter_mut().zip(v).zip(group) {
                    let (size, sq) = norms[g];
                    let norm = sq.sqrt();
                    let keep = t * mu * (size as f64).sqrt();
                    *o = if norm > keep {
                        x * (1.0 - keep / norm)
                    } else {
                        0.0
                    };
                }
            }
            Penalty::L1Inf { mu, cols, .. } => {
                // Moreau: prox_{s ||.||_inf}(r) = r - Pi_{||.||_1 <= s}(r), row by row.
                for (o, r) in out.chunks_exact_mut(*cols).zip(v.chunks_exact(*cols)) {
                    project_l1_ball(r, t * mu, o);
                    for (oi, &ri) in o.iter_mut().zip(r) {
                        *oi = ri - *oi;
                    }
                }
            }
            Penalty::Trace { mu, rows, cols } => {
                shrink_singular_values(v, *rows, *cols, t * mu, out)
            }
        }
    }

    /// A subgradient of `R` at `w` into `out` (0 where `R` has a kink at 0; for the
    /// subgradient baselines).
    pub fn subgradient(&self, w: &[f64], out: &mut [f64]) {
        let sign = |x: f64| if x == 0.0 { 0.0 } else { x.signum() };
        match self {
            Penalty::Elementwise(reg) => {
                let (l1, l2) = match *reg {
                    Regularizer::L1 { mu } => (mu, 0.0),
                    Regularizer::L2 { mu } => (0.0, mu),
                    Regularizer::ElasticNet { l1, l2 } => (l1, l2),
                    _ => (0.0, 0.0),
                };
                for (o, &x) in out.iter_mut().zip(w) {
                    *o = l1 * sign(x) + l2 * x;
                }
            }
            Penalty::GroupLasso { mu, group } => {
                let norms = group_norms(w, group);
                for ((o, &x), &g) in out.iter_mut().zip(w).zip(group) {
                    let (size, sq) = norms[g];
                    *o = if sq > 0.0 {
                        mu * (size as f64).sqrt() * x / sq.sqrt()
                    } else {
                        0.0
                    };
                }
            }
            Penalty::L1Inf { mu, cols, .. } => {
                for (o, r) in out.chunks_exact_mut(*cols).zip(w.chunks_exact(*cols)) {
                    o.fill(0.0);
                    let top =
                        (0..r.len()).fold(0, |b, k| if r[k].abs() > r[b].abs() { k } else { b });
                    o[top] = mu * sign(r[top]);
                }
            }
            Penalty::Trace { mu, rows, cols } => {
                let svd = matrix(w, *rows, *cols)
                    .thin_svd()
                    .expect("the SVD of a finite matrix converges");
                let (u, s, v) = (svd.U(), svd.S(), svd.V());
                out.fill(0.0);
                for k in 0..s.column_vector().nrows() {
                    if s[k] > 0.0 {
                        for i in 0..*rows {
                            for j in 0..*cols {
                                out[i * cols + j] += mu * u[(i, k)] * v[(j, k)];
                            }
                        }
                    }
                }
            }
        }
    }

    /// The largest `s` in `[0, 1]` with `R*(-s g)` finite, and `-R*(-s g) = min_w s g^T w + R(w)`
    /// (only the norms restrict `s`, and their conjugate there is 0).
    pub fn dual_bound(&self, g: &[f64]) -> (f64, f64) {
        let cap = |mu: f64, dual_norm: f64| {
            if dual_norm <= mu { 1.0 } else { mu / dual_norm }
        };
        match self {
            Penalty::Elementwise(reg) => match (reg.smooth_conjugate(g), *reg) {
                (Some(conj), _) => (1.0, -conj),
                (None, Regularizer::L1 { mu } | Regularizer::ElasticNet { l1: mu, .. }) => {
                    (cap(mu, g.iter().fold(0.0, |m: f64, x| m.max(x.abs()))), 0.0)
                }
                // R = 0 (or l2:0): bounded below only where g = 0.
                _ => (
                    cap(0.0, g.iter().fold(0.0, |m: f64, x| m.max(x.abs()))),
                    0.0,
                ),
            },
            Penalty::GroupLasso { mu, group } => {
                let s = group_norms(g, group)
                    .iter()
                    .filter(|(size, _)| *size > 0)
                    .map(|(size, sq)| cap(mu * (*size as f64).sqrt(), sq.sqrt()))
                    .fold(1.0, f64::min);
                (s, 0.0)
            }
            Penalty::L1Inf { mu, cols, .. } => {
                let norm = g
                    .chunks_exact(*cols)
                    .map(|r| r.iter().map(|x| x.abs()).sum::<f64>())
                    .fold(0.0, f64::max);
                (cap(*mu, norm), 0.0)
            }
            Penalty::Trace { mu, rows, cols } => {
                let top = singular_values(g, *rows, *cols)
                    .first()
                    .copied()
                    .unwrap_or(0.0);
                (cap(*mu, top), 0.0)
            }
        }
    }
}

/// `(size, squared norm)` of each group of `w`.
fn group_norms(w: &[f64], group: &[usize]) -> Vec<(usize, f64)> {
    let groups = group.iter().max().map_or(0, |g| g + 1);
    let mut out = vec![(0usize, 0.0f64); groups];
    for (&x, &g) in w.iter().zip(group) {
        out[g].0 += 1;
        out[g].1 += x * x;
    }
    out
}

/// Euclidean projection of `v` onto `{||x||_1 <= r}` into `out` (sort the magnitudes, find the
/// threshold `theta` with `sum (|v_i| - theta)_+ = r`).
fn project_l1_ball(v: &[f64], r: f64, out: &mut [f64]) {
    let l1: f64 = v.iter().map(|x| x.abs()).sum();
    if l1 <= r {
        out.copy_from_slice(v);
        return;
    }
    let mut mags: Vec<f64> = v.iter().map(|x| x.abs()).collect();
    mags.sort_by(|a, b| b.total_cmp(a));
    let (mut cum, mut theta) = (0.0, 0.0);
    for (k, &m) in mags.iter().enumerate() {
        cum += m;
        let t = (cum - r) / (k + 1) as f64;
        if m > t {
            theta = t;
        } else {
            break;
        }
    }
    for (o, &x) in out.iter_mut().zip(v) {
        *o = x.signum() * (x.abs() - theta).max(0.0);
    }
}

fn matrix(w: &[f64], rows: usize, cols: usize) -> faer::Mat<f64> {
    faer::Mat::from_fn(rows, cols, |i, j| w[i * cols + j])
}

/// Singular values of `W` (`rows x cols`, row-major), largest first.
fn singular_values(w: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    matrix(w, rows, cols)
        .singular_values()
        .expect("the SVD of a finite matrix converges")
}

/// `U max(S - t, 0) V^T` for `W = U S V^T`, into `out`.
fn shrink_singular_values(w: &[f64], rows: usize, cols: usize, t: f64, out: &mut [f64]) {
    let svd = matrix(w, rows, cols)
        .thin_svd()
        .expect("the SVD of a finite matrix converges");
    let (u, s, v) = (svd.U(), svd.S(), svd.V());
    // Only the singular values above t survive: one product of the kept columns (a matrix
    // product, not a loop over rank-one terms: MovieLens' 943 x 1,682 has rank up to 943).
    let kept: Vec<usize> = (0..s.column_vector().nrows())
        .filter(|&k| s[k] > t)
        .collect();
    let us = faer::Mat::<f64>::from_fn(rows, kept.len(), |i, k| u[(i, kept[k])] * (s[kept[k]] - t));
    let vk = faer::Mat::<f64>::from_fn(cols, kept.len(), |j, k| v[(j, kept[k])]);
    let product = &us * vk.transpose();
    for (i, row) in out.chunks_exact_mut(cols).enumerate() {
        for (j, o) in row.iter_mut().enumerate() {
            *o = product[(i, j)];
        }
    }
}
