//! Linear models under the non-smooth losses of section 4.1 of
//! papers/pdprox-primal-dual-nonsmooth.txt, written as the bilinear function (3)/(7):
//!
//! ```text
//! L(w, alpha) = (1/n) sum_i sum_j alpha_ij (a_ij + c_ij s_i),    s_i = x_i^T w (+ b)
//! G_alpha(w)  = (a + c o s) / n                    (one pass: X w)
//! G_w(alpha)  = (1/n) X^T v,  v_i = sum_j c_ij alpha_ij   (one pass: X^T v; the bias: sum v / n)
//! ```
//!
//! with one dual per sample (hinge, absolute) or two (generalized hinge, epsilon-insensitive).
//! Lemma 3's constant is `||H||^2 = q lambda_max(X~^T X~) / n^2`, `X~` the rows with a 1
//! appended when there is a bias and `q = sum_j c_ij^2` (the same for every row).

use std::fmt;
use std::str::FromStr;

use crate::pdprox::domain::{DualDomain, Spectral};
use crate::pdprox::error::PdproxError;
use crate::spec::{Params, SpecError, SpecKind, require};
use crate::vector::dot;
use crate::weights::Weights;

/// A loss with a bilinear dual (6).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DualLoss {
    /// `max(0, 1 - y s) = max_{alpha in [0, 1]} alpha (1 - y s)`, labels in {-1, +1}.
    Hinge,
    /// Bartlett and Wegkamp's generalized hinge (`a > 1`): `1 - a y s` for `y s <= 0`,
    /// `1 - y s` up to 1, then 0; `max alpha_1 (1 - a y s) + alpha_2 (1 - y s)` over
    /// `alpha >= 0, alpha_1 + alpha_2 <= 1`.
    GeneralizedHinge {
        /// Slope on the wrong side, `> 1`.
        a: f64,
    },
    /// `|s - y| = max_{alpha in [-1, 1]} alpha (s - y)`, real targets.
    Absolute,
    /// `max(|s - y| - eps, 0) = max (s - y)(alpha_1 - alpha_2) - eps (alpha_1 + alpha_2)` over
    /// `alpha >= 0, alpha_1 + alpha_2 <= 1`, real targets.
    EpsInsensitive {
        /// Width of the insensitive zone, `>= 0`.
        eps: f64,
    },
}

impl DualLoss {
    /// Duals per sample.
    pub fn components(&self) -> usize {
        match self {
            DualLoss::Hinge | DualLoss::Absolute => 1,
            DualLoss::GeneralizedHinge { .. } | DualLoss::EpsInsensitive { .. } => 2,
        }
    }

    /// Whether the loss classifies (labels -1/+1) rather than regresses (real targets).
    pub fn is_classification(&self) -> bool {
        matches!(self, DualLoss::Hinge | DualLoss::GeneralizedHinge { .. })
    }

    /// `(a_ij, c_ij)` of component `j` for target `y`.
    #[inline]
    fn coef(&self, y: f64, j: usize) -> (f64, f64) {
        match (*self, j) {
            (DualLoss::Hinge, _) => (1.0, -y),
            (DualLoss::GeneralizedHinge { a }, 0) => (1.0, -a * y),
            (DualLoss::GeneralizedHinge { .. }, _) => (1.0, -y),
            (DualLoss::Absolute, _) => (-y, 1.0),
            (DualLoss::EpsInsensitive { eps }, 0) => (-y - eps, 1.0),
            (DualLoss::EpsInsensitive { eps }, _) => (y - eps, -1.0),
        }
    }

    /// `q = sum_j c_ij^2` (labels -1/+1 for the classification losses).
    fn q(&self) -> f64 {
        match *self {
            DualLoss::Hinge | DualLoss::Absolute => 1.0,
            DualLoss::GeneralizedHinge { a } => a * a + 1.0,
            DualLoss::EpsInsensitive { .. } => 2.0,
        }
    }

    /// The loss of score `s` for target `y` (by the closed forms above).
    pub fn value(&self, s: f64, y: f64) -> f64 {
        match *self {
            DualLoss::Hinge => (1.0 - y * s).max(0.0),
            DualLoss::GeneralizedHinge { a } => (1.0 - a * y * s).max(1.0 - y * s).max(0.0),
            DualLoss::Absolute => (s - y).abs(),
            DualLoss::EpsInsensitive { eps } => ((s - y).abs() - eps).max(0.0),
        }
    }

    /// Check the parameters.
    ///
    /// # Errors
    /// [`SpecError::OutOfRange`] for `a <= 1` or `eps < 0` (or not finite).
    pub fn validate(&self) -> Result<(), SpecError> {
        match *self {
            DualLoss::GeneralizedHinge { a } => require(
                a.is_finite() && a > 1.0,
                SpecKind::Loss,
                "generalized-hinge",
                "a > 1",
                || a.to_string(),
            ),
            DualLoss::EpsInsensitive { eps } => require(
                eps.is_finite() && eps >= 0.0,
                SpecKind::Loss,
                "eps-insensitive",
                "eps >= 0",
                || eps.to_string(),
            ),
            _ => Ok(()),
        }
    }
}

impl FromStr for DualLoss {
    type Err = SpecError;

    /// `hinge`, `generalized-hinge[:a=A]` (default 2), `absolute`, `eps-insensitive[:eps=E]`
    /// (default 0.1).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        let (name, params) = s.split_once(':').unwrap_or((&s, ""));
        let loss = match name {
            "hinge" => DualLoss::Hinge,
            "absolute" | "abs" => DualLoss::Absolute,
            "generalized-hinge" | "ghinge" => {
                let p = Params::parse(SpecKind::Loss, "generalized-hinge", params)?;
                p.only(&["a"])?;
                DualLoss::GeneralizedHinge {
                    a: p.get("a", Some(2.0))?,
                }
            }
            "eps-insensitive" | "epsilon-insensitive" => {
                let p = Params::parse(SpecKind::Loss, "eps-insensitive", params)?;
                p.only(&["eps"])?;
                DualLoss::EpsInsensitive {
                    eps: p.get("eps", Some(0.1))?,
                }
            }
            other => {
                return Err(SpecError::Unknown {
                    kind: SpecKind::Loss,
                    name: other.to_string(),
                    expected: "hinge, generalized-hinge, absolute, eps-insensitive (the losses \
                               with a bilinear dual)",
                });
            }
        };
        loss.validate()?;
        Ok(loss)
    }
}

impl fmt::Display for DualLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DualLoss::Hinge => write!(f, "hinge"),
            DualLoss::GeneralizedHinge { a } => write!(f, "generalized-hinge:a={a}"),
            DualLoss::Absolute => write!(f, "absolute"),
            DualLoss::EpsInsensitive { eps } => write!(f, "eps-insensitive:eps={eps}"),
        }
    }
}

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
    x: &'a [f64],
    y: &'a [f64],
    d: usize,
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
        loss.validate()?;
        let n = y.len();
        if n == 0 || d == 0 {
            return Err(PdproxError::Empty { rows: n, d });
        }
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
        let erm = matches!(weights, Weights::Erm);
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
            (DualLoss::Hinge | DualLoss::Absolute, None) => DualDomain::Spectral(Spectral::new(
                weights.sigma(n)?,
                loss == DualLoss::Absolute,
            )?),
            (_, None) if erm => DualDomain::PairSimplex,
            (_, None) => {
                return Err(PdproxError::Unsupported(format!(
                    "the {loss} loss has two duals per sample; rank weights other than erm are \
                     offered for the hinge and the absolute loss"
                )));
            }
        };
        domain.validate(n * loss.components())?;
        Ok(LinearProblem {
            x,
            y,
            d,
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
        self.d + usize::from(self.bias)
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
        for (si, row) in s.iter_mut().zip(self.x.chunks_exact(self.d)) {
            *si = self.score(row, w);
        }
    }

    /// `x_i^T w (+ b)` for the row `row` of `X`.
    fn score(&self, row: &[f64], w: &[f64]) -> f64 {
        dot(row, &w[..self.d]) + if self.bias { w[self.d] } else { 0.0 }
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
            let row = &self.x[i * self.d..(i + 1) * self.d];
            let s = self.score(row, w);
            for (j, gj) in g.iter_mut().enumerate() {
                let (aj, cj) = self.loss.coef(self.y[i], j);
                *gj = (aj + cj * s) / n;
            }
            self.domain.maximizer(&g, &mut a);
            let v: f64 = (0..k)
                .map(|j| self.loss.coef(self.y[i], j).1 * a[j])
                .sum::<f64>()
                * scale;
            self.add_row(row, v, out);
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
        for (i, (row, &yi)) in self.x.chunks_exact(self.d).zip(self.y).enumerate() {
            let v: f64 = (0..k)
                .map(|j| self.loss.coef(yi, j).1 * alpha[i * k + j])
                .sum::<f64>()
                / n;
            self.add_row(row, v, out);
        }
    }

    /// `out += v x~_i` for the row `row` of `X` (the bias coordinate included).
    fn add_row(&self, row: &[f64], v: f64, out: &mut [f64]) {
        if v != 0.0 {
            for (o, &xij) in out[..self.d].iter_mut().zip(row) {
                *o += v * xij;
            }
            if self.bias {
                out[self.d] += v;
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
                let max_row = self
                    .x
                    .chunks_exact(self.d)
                    .map(|r| dot(r, r) + extra)
                    .fold(0.0, f64::max);
                return Ok(q * max_row / n as f64);
            }
            StepBound::Exact => self.largest_gram_eigenvalue()?,
        };
        Ok(q * lambda / (n as f64 * n as f64))
    }

    /// `lambda_max(X~^T X~)` from the smaller of the two Gram matrices.
    fn largest_gram_eigenvalue(&self) -> Result<f64, PdproxError> {
        let (n, d) = (self.n(), self.d);
        let p = self.primal_len();
        let at = |i: usize, j: usize| if j < d { self.x[i * d + j] } else { 1.0 };
        let xt = faer::Mat::<f64>::from_fn(n, p, at);
        let gram = if p <= n {
            xt.transpose() * &xt
        } else {
            &xt * xt.transpose()
        };
        let values = gram
            .self_adjoint_eigenvalues(faer::Side::Lower)
            .map_err(|e| PdproxError::Unsupported(format!("eigenvalues of X^T X: {e:?}")))?;
        Ok(values.last().copied().unwrap_or(0.0).max(0.0))
    }
}
