//! Linear models under the non-smooth losses of section 4.1 of
//! papers/pdprox-primal-dual-nonsmooth.txt, written as the bilinear function (3)/(7):
//!
//! ```text
//! L(w, alpha) = (1/n) sum_i sum_j alpha_ij (a_ij + c_ij s_i),    s_i = x_i^T w (+ b)
//! G_alpha(w)  = (a + c o s) / n                    (one pass: X w)
//! G_w(alpha)  = (1/n) X^T v,  v_i = sum_j c_ij alpha_ij   (one pass: X^T v; the bias: sum v / n)
//! ```
//!
//! with one dual per sample (hinge, absolute), two (generalized hinge, epsilon-insensitive) or
//! four (the all-threshold hinge of section 5.3 for ratings 1-5). Lemma 3's constant is
//! `||H||^2 = q lambda_max(X~^T X~) / n^2`, `X~` the rows with a 1 appended when there is a
//! bias and `q = sum_j c_ij^2` (the same for every row). `X` is a [`Design`]: dense rows, or
//! the observed entries of a matrix (matrix factorization and completion).

use crate::math::weights::Weights;
use crate::pdprox::design::Design;
use crate::pdprox::domain::{DualDomain, Spectral};
pub use crate::pdprox::dual_loss::DualLoss;
use crate::pdprox::error::PdproxError;

/// Which constant `c >= ||H||^2` sets the step `gamma = 1/sqrt(2c)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepBound {
    /// `q lambda_max(X~^T X~) / n^2`, the exact `||H||^2` (one symmetric eigenvalue problem of
    /// size `min(n, d + bias)`).
    #[default]
    Exact,
    /// The paper's bound, `q max_i ||x~_i||^2 / n` (`c = 1/n` for the hinge with unit rows):
    /// no eigenvalue problem, a step up to `sqrt(n ||X||^2 / trace)` times shorter.
    RowNorm,
}

/// Data, loss, dual domain and bias of a linear Pdprox problem.
#[derive(Debug, Clone)]
pub struct LinearProblem<'a> {
    design: Design<'a>,
    y: &'a [f64],
    loss: DualLoss,
    bias: bool,
    domain: DualDomain,
}

impl<'a> LinearProblem<'a> {
    /// `x` row-major `n x d`, targets `y` (-1/+1 for the classification losses), rank weights
    /// over the individual losses (a convex spectral risk; ERM is the paper's problem), and an
    /// optional budget `||alpha||_1 <= m` on the hinge duals (eq. 16).
    ///
    /// # Errors
    /// [`PdproxError`] for bad shapes or values, labels that are not -1/+1 for a classification
    /// loss, a budget with another loss or other weights, and weights without a bilinear dual
    /// (AoRR, EHRM, CPT; any weights with the two-dual losses).
    pub fn new(
        x: &'a [f64],
        y: &'a [f64],
        d: usize,
        loss: DualLoss,
        weights: &Weights,
        budget: Option<f64>,
        bias: bool,
    ) -> Result<Self, PdproxError> {
        Self::with_design(Design::Dense { x, d }, y, loss, weights, budget, bias)
    }

    /// As [`LinearProblem::new`] for any [`Design`]: the observed entries of a matrix give
    /// max-margin matrix factorization (all-threshold hinge on ratings 1-5) and matrix
    /// completion (absolute loss) of section 5.3, with a [`crate::pdprox::Penalty::Trace`].
    ///
    /// # Errors
    /// As [`LinearProblem::new`]; also ratings outside 1..=5 (integers) for the all-threshold
    /// hinge and a bias with a matrix of entries.
    pub fn with_design(
        design: Design<'a>,
        y: &'a [f64],
        loss: DualLoss,
        weights: &Weights,
        budget: Option<f64>,
        bias: bool,
    ) -> Result<Self, PdproxError> {
        loss.validate()?;
        let n = y.len();
        design.validate(n)?;
        design.check_bias(bias)?;
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(PdproxError::NonFinite {
                what: "the label",
                row: i,
            });
        }
        if loss.is_classification()
            && let Some(i) = y.iter().position(|&v| v != 1.0 && v != -1.0)
        {
            return Err(PdproxError::BadLabel {
                row: i,
                value: y[i],
                loss: loss.to_string(),
            });
        }
        if matches!(loss, DualLoss::AllThreshold { .. })
            && let Some(i) = y
                .iter()
                .position(|&v| !(1.0..=5.0).contains(&v) || v.fract() != 0.0)
        {
            return Err(PdproxError::Unsupported(format!(
                "data: the rating of row {i} is {}; the all-threshold hinge takes ratings 1, 2, \
                 3, 4 or 5",
                y[i]
            )));
        }
        let erm = matches!(weights, Weights::Erm);
        if let Some(m) = budget
            && !(m.is_finite() && m > 0.0)
        {
            return Err(PdproxError::Setting {
                name: "budget",
                expected: "a positive finite number",
                value: m,
            });
        }
        let domain = match (loss, budget) {
            (DualLoss::Hinge, Some(m)) if erm => DualDomain::BoxBudget {
                hi: 1.0,
                v: vec![1.0; n],
                rho: m,
            },
            (_, Some(_)) => {
                return Err(PdproxError::Unsupported(
                    "a budget ||alpha||_1 <= m (eq. 16) applies to the hinge loss with erm \
                     weights (for other weights use topk:k=m)"
                        .into(),
                ));
            }
            (DualLoss::Hinge, None) if erm => DualDomain::Box { lo: 0.0, hi: 1.0 },
            (DualLoss::Absolute, None) if erm => DualDomain::Box { lo: -1.0, hi: 1.0 },
            (DualLoss::AllThreshold { .. }, None) if erm => DualDomain::Box { lo: 0.0, hi: 1.0 },
            (DualLoss::Hinge | DualLoss::Absolute, None) => DualDomain::Spectral(Spectral::new(
                weights.sigma(n)?,
                loss == DualLoss::Absolute,
            )?),
            (_, None) if erm => DualDomain::PairSimplex,
            (_, None) => {
                return Err(PdproxError::Unsupported(format!(
                    "the {loss} loss has {} duals per sample; rank weights other than erm are \
                     offered for the hinge and the absolute loss",
                    loss.components()
                )));
            }
        };
        domain.validate(n * loss.components())?;
        Ok(LinearProblem {
            design,
            y,
            loss,
            bias,
            domain,
        })
    }

    /// Rows.
    pub fn n(&self) -> usize {
        self.y.len()
    }

    /// Primal length: `d`, plus one with a bias (stored last).
    pub fn primal_len(&self) -> usize {
        self.design.d() + usize::from(self.bias)
    }

    /// Dual length: `n` times the duals per sample.
    pub fn dual_len(&self) -> usize {
        self.n() * self.loss.components()
    }

    /// Whether the last primal coordinate is an unregularized bias.
    pub fn has_bias(&self) -> bool {
        self.bias
    }

    /// The loss.
    pub fn loss(&self) -> DualLoss {
        self.loss
    }

    /// The dual domain (mutable: its projection keeps a workspace).
    pub fn domain_mut(&mut self) -> &mut DualDomain {
        &mut self.domain
    }

    /// The dual domain.
    pub fn domain(&self) -> &DualDomain {
        &self.domain
    }

    /// Scores `s = X w (+ b)` (one pass over the data).
    pub fn scores(&self, w: &[f64], s: &mut [f64]) {
        for (i, si) in s.iter_mut().enumerate() {
            *si = self.score(i, w);
        }
    }

    /// `x_i^T w (+ b)`.
    fn score(&self, i: usize, w: &[f64]) -> f64 {
        let d = self.design.d();
        self.design.score(i, w) + if self.bias { w[d] } else { 0.0 }
    }

    /// The subgradient of the loss term restricted to the rows `rows` (each counted once per
    /// appearance, scaled by `n / rows.len()` so that it estimates the full one), added into
    /// `out`; the duals of a row maximize its own term, so the domain must be separable (ERM:
    /// a box or pairs).
    ///
    /// # Errors
    /// [`PdproxError::Unsupported`] for a domain that couples the rows.
    pub fn sampled_subgradient(
        &self,
        w: &[f64],
        rows: &[usize],
        out: &mut [f64],
    ) -> Result<(), PdproxError> {
        if !matches!(
            self.domain,
            DualDomain::Box { .. } | DualDomain::PairSimplex
        ) {
            return Err(PdproxError::Unsupported(
                "a sampled subgradient needs a dual domain separable by rows (erm weights, no \
                 budget)"
                    .into(),
            ));
        }
        let k = self.loss.components();
        let n = self.n() as f64;
        let scale = 1.0 / rows.len().max(1) as f64;
        let (mut g, mut a) = (vec![0.0; k], vec![0.0; k]);
        for &i in rows {
            let s = self.score(i, w);
            for (j, gj) in g.iter_mut().enumerate() {
                let (aj, cj) = self.loss.coef(self.y[i], j);
                *gj = (aj + cj * s) / n;
            }
            self.domain.maximizer(&g, &mut a);
            let v: f64 = (0..k)
                .map(|j| self.loss.coef(self.y[i], j).1 * a[j])
                .sum::<f64>()
                * scale;
            self.add_row(i, v, out);
        }
        Ok(())
    }

    /// `G_alpha = (a + c o s) / n` from the scores `s`.
    pub fn dual_gradient(&self, s: &[f64], out: &mut [f64]) {
        let k = self.loss.components();
        let n = self.n() as f64;
        for (i, (&si, &yi)) in s.iter().zip(self.y).enumerate() {
            for j in 0..k {
                let (a, c) = self.loss.coef(yi, j);
                out[i * k + j] = (a + c * si) / n;
            }
        }
    }

    /// `G_w(alpha) = (1/n) X~^T v`, `v_i = sum_j c_ij alpha_ij` (one pass over the data).
    pub fn primal_gradient(&self, alpha: &[f64], out: &mut [f64]) {
        let k = self.loss.components();
        let n = self.n() as f64;
        out.fill(0.0);
        for (i, &yi) in self.y.iter().enumerate() {
            let v: f64 = (0..k)
                .map(|j| self.loss.coef(yi, j).1 * alpha[i * k + j])
                .sum::<f64>()
                / n;
            self.add_row(i, v, out);
        }
    }

    /// `out += v x~_i` (the bias coordinate included).
    fn add_row(&self, i: usize, v: f64, out: &mut [f64]) {
        if v != 0.0 {
            self.design.add_row(i, v, out);
            if self.bias {
                out[self.design.d()] += v;
            }
        }
    }

    /// Scale down the duals on the heavier side of `G_b(alpha) = (1/n) sum_ij c_ij alpha_ij` so
    /// that it is 0: every domain here keeps a point when components shrink toward 0, so the
    /// result stays in `Q`, and the dual function of a problem with a free bias is finite there.
    pub fn balance(&self, alpha: &mut [f64]) {
        let k = self.loss.components();
        let term = |i: usize, j: usize, a: f64| self.loss.coef(self.y[i], j).1 * a;
        let (mut plus, mut minus) = (0.0, 0.0);
        for (r, &a) in alpha.iter().enumerate() {
            let t = term(r / k, r % k, a);
            if t > 0.0 {
                plus += t;
            } else {
                minus -= t;
            }
        }
        if plus == minus {
            return;
        }
        let (heavy_positive, ratio) = if plus > minus {
            (true, minus / plus)
        } else {
            (false, plus / minus)
        };
        for (r, a) in alpha.iter_mut().enumerate() {
            let t = term(r / k, r % k, *a);
            if (t > 0.0) == heavy_positive && t != 0.0 {
                *a *= ratio;
            }
        }
    }

    /// The mean loss term `max_{alpha in Q} L(w, alpha)` at scores `s`.
    pub fn loss_term(&self, s: &[f64], scratch: &mut [f64]) -> f64 {
        self.dual_gradient(s, scratch);
        self.domain.support(scratch)
    }

    /// Lemma 3's constant `c >= ||H||^2` by `bound`.
    ///
    /// # Errors
    /// [`PdproxError::Unsupported`] if the eigenvalue solver fails (it does not on finite
    /// data, which [`LinearProblem::new`] checked).
    pub fn lipschitz(&self, bound: StepBound) -> Result<f64, PdproxError> {
        let n = self.n();
        let q = self.loss.q();
        let extra = if self.bias { 1.0 } else { 0.0 };
        let lambda = match bound {
            StepBound::RowNorm => {
                let max_row = (0..n)
                    .map(|i| self.design.row_norm_sq(i) + extra)
                    .fold(0.0, f64::max);
                return Ok(q * max_row / n as f64);
            }
            StepBound::Exact => self.design.largest_gram_eigenvalue(self.bias)?,
        };
        Ok(q * lambda / (n as f64 * n as f64))
    }
}
