//! The dual domains `Q_alpha` of problem (2) of papers/pdprox-primal-dual-nonsmooth.txt, each
//! with its Euclidean projection `Pi_Q` (steps 4 and 6 of Algorithm 1, step 5 of Algorithm 2)
//! and its support function `max_{alpha in Q} g^T alpha` (the primal objective and the gap).
//!
//! Duals are in the paper's scale: the loss term is `(1/n) sum_i alpha_i (...)`, so the ERM
//! hinge has `alpha in [0, 1]^n` and Lemma 3's constant is `c = 1/n` for unit rows.
//!
//! A convex spectral risk of the hinge loss, `sum_i sigma_i hinge(u)_[i]` with `sigma`
//! non-decreasing over ascending ranks, is `max_{alpha in n Q_sigma} (1/n) sum_i alpha_i (1 + u_i)`
//! with `Q_sigma = {alpha >= 0 : the k largest entries sum to at most the k largest sigmas, for
//! every k}`. Its support function is `sum_j s_j (g_(j))_+` (both sorted descending), and its
//! projection comes from the rank-based ADMM's z-step by the Moreau identity:
//! `Pi_{Q_sigma}(y) = y - 1 - z` with `z = PAVA(hinge, sigma, rho = 1, m = y - 1)` (the z-step
//! is the prox of `Omega(z) = h_Q(1 + z)`, `h_Q` the support function of `Q_sigma`).

use crate::math::loss::Loss;
use crate::math::order::ascending;
use crate::math::pava::Pava;
use crate::math::weights::Sigma;
use crate::pdprox::error::PdproxError;

/// A dual domain `Q_alpha` with what its projection needs.
#[derive(Debug, Clone)]
pub enum DualDomain {
    /// Every component in `[lo, hi]` (hinge: `[0, 1]`; absolute loss: `[-1, 1]`).
    Box {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// Components in pairs `(alpha_{2i}, alpha_{2i+1}) >= 0` with `alpha_{2i} + alpha_{2i+1} <= 1`
    /// (the generalized hinge and the epsilon-insensitive loss of section 4.1).
    PairSimplex,
    /// Lemma 4: `0 <= alpha_i <= hi` and `v^T alpha <= rho` with `v >= 0` (eq. 16 has `hi = 1`,
    /// `v = 1`, `rho = m`).
    BoxBudget {
        /// Upper bound of every component.
        hi: f64,
        /// The constraint's coefficients, `>= 0`.
        v: Vec<f64>,
        /// The constraint's level, `>= 0`.
        rho: f64,
    },
    /// `n Q_sigma`, the dual of a convex spectral risk of the hinge loss (ERM: `[0, 1]^n`; CVaR
    /// and top-k: Lemma 4's set); with `signed`, `{alpha : |alpha| in n Q_sigma}`, the dual of
    /// the same risk of the absolute loss.
    Spectral(Spectral),
}

/// `n Q_sigma` with the workspace of its projection.
#[derive(Debug, Clone)]
pub struct Spectral {
    /// Weights over ascending ranks, non-decreasing, summing to 1 or less.
    sigma: Sigma,
    /// Sign-symmetric (absolute loss) or not (hinge).
    signed: bool,
    pava: Pava,
    m: Vec<f64>,
    z: Vec<f64>,
    signs: Vec<f64>,
}

impl Spectral {
    /// `n Q_sigma` for weights over ascending ranks.
    ///
    /// # Errors
    /// [`PdproxError::Unsupported`] for CPT weights or weights that decrease somewhere (the
    /// risk is then not convex and has no such dual), [`PdproxError::Setting`] for a negative
    /// or non-finite weight.
    pub fn new(sigma: Sigma, signed: bool) -> Result<Self, PdproxError> {
        let Sigma::Fixed(s) = &sigma else {
            return Err(PdproxError::Unsupported(
                "CPT weights make the rank-based risk nonconvex: it has no bilinear dual".into(),
            ));
        };
        if let Some(&bad) = s.iter().find(|v| !v.is_finite() || **v < 0.0) {
            return Err(PdproxError::Setting {
                name: "every weight sigma_i",
                expected: "finite and >= 0",
                value: bad,
            });
        }
        if let Some(i) = s.windows(2).position(|p| p[1] < p[0] - 1e-15 * p[0].abs()) {
            return Err(PdproxError::Unsupported(format!(
                "the weights decrease between ascending ranks {} and {} ({} > {}): the risk is \
                 not convex (AoRR, EHRM, extremile with r < 1, ...) and has no bilinear dual",
                i + 1,
                i + 2,
                s[i],
                s[i + 1]
            )));
        }
        Ok(Spectral {
            sigma,
            signed,
            pava: Pava::new(),
            m: Vec::new(),
            z: Vec::new(),
            signs: Vec::new(),
        })
    }

    fn weights(&self) -> &[f64] {
        match &self.sigma {
            Sigma::Fixed(s) => s,
            Sigma::Cpt { .. } => unreachable!("refused by Spectral::new"),
        }
    }

    /// Project `y` onto `n Q_sigma` (or its signed version) in place.
    fn project(&mut self, y: &mut [f64]) -> Result<(), PdproxError> {
        let n = y.len() as f64;
        self.signs.clear();
        if self.signed {
            self.signs.extend(y.iter().map(|v| v.signum()));
            y.iter_mut().for_each(|v| *v = v.abs());
        }
        // Pi_{nQ}(y) = n Pi_Q(y / n), Pi_Q(u) = u - 1 - z, z = PAVA(hinge, sigma, 1, u - 1).
        self.m.clear();
        self.m.extend(y.iter().map(|v| v / n - 1.0));
        self.z.resize(y.len(), 0.0);
        self.pava
            .solve(&Loss::Hinge, &self.sigma, 1.0, &self.m, &mut self.z)?;
        for ((v, &m), &z) in y.iter_mut().zip(&self.m).zip(&self.z) {
            *v = (n * (m - z)).max(0.0);
        }
        if self.signed {
            y.iter_mut().zip(&self.signs).for_each(|(v, s)| *v *= s);
        }
        Ok(())
    }

    /// A maximizer of `g^T alpha` over the set: `n s_j` on the `j`-th largest positive entry
    /// (of `|g|`, with its sign, when signed), 0 elsewhere.
    fn maximizer(&self, g: &[f64], out: &mut [f64]) {
        let n = g.len() as f64;
        let key = |x: f64| if self.signed { x.abs() } else { x };
        let mut order: Vec<usize> = (0..g.len()).collect();
        order.sort_by(|&a, &b| ascending(&key(g[b]), &key(g[a])));
        out.fill(0.0);
        for (&i, s) in order.iter().zip(self.weights().iter().rev()) {
            if key(g[i]) > 0.0 {
                out[i] = n * s * if self.signed { g[i].signum() } else { 1.0 };
            }
        }
    }

    /// `n sum_j s_j (g_(j))_+` (`|g|` when signed), both sorted descending.
    fn support(&self, g: &[f64]) -> f64 {
        let mut v: Vec<f64> = if self.signed {
            g.iter().map(|x| x.abs()).collect()
        } else {
            g.to_vec()
        };
        v.sort_by(ascending);
        let n = g.len() as f64;
        n * v
            .iter()
            .zip(self.weights())
            .map(|(x, s)| s * x.max(0.0))
            .sum::<f64>()
    }
}

impl DualDomain {
    /// Check the domain against `len` dual components.
    ///
    /// # Errors
    /// [`PdproxError::Setting`] for an empty or non-finite box, a negative budget or
    /// coefficient, coefficients or weights of another length, or pairs of an odd length.
    pub fn validate(&self, len: usize) -> Result<(), PdproxError> {
        let bad = |name, expected, value| {
            Err(PdproxError::Setting {
                name,
                expected,
                value,
            })
        };
        match self {
            DualDomain::Box { lo, hi } if !(lo.is_finite() && hi.is_finite() && lo <= hi) => {
                bad("the box", "finite with lo <= hi", hi - lo)
            }
            DualDomain::PairSimplex if !len.is_multiple_of(2) => {
                bad("the number of paired duals", "even", len as f64)
            }
            DualDomain::BoxBudget { hi, v, rho } => {
                if !(hi.is_finite() && *hi >= 0.0) {
                    bad("the box bound", "finite and >= 0", *hi)
                } else if !(rho.is_finite() && *rho >= 0.0) {
                    bad("the budget rho", "finite and >= 0", *rho)
                } else if v.len() != len {
                    bad(
                        "the number of budget coefficients",
                        "one per dual",
                        v.len() as f64,
                    )
                } else if let Some(&c) = v.iter().find(|c| !(c.is_finite() && **c >= 0.0)) {
                    bad("every budget coefficient", "finite and >= 0", c)
                } else {
                    Ok(())
                }
            }
            DualDomain::Spectral(s) if s.sigma.len() != len => bad(
                "the number of weights",
                "one per dual",
                s.sigma.len() as f64,
            ),
            _ => Ok(()),
        }
    }

    /// `Pi_Q(y)` in place.
    ///
    /// # Errors
    /// [`PdproxError::Pava`] when the z-step refuses `y` (not finite).
    pub fn project(&mut self, y: &mut [f64]) -> Result<(), PdproxError> {
        match self {
            DualDomain::Box { lo, hi } => y.iter_mut().for_each(|v| *v = v.clamp(*lo, *hi)),
            DualDomain::PairSimplex => y.chunks_exact_mut(2).for_each(project_pair),
            DualDomain::BoxBudget { hi, v, rho } => project_box_budget(y, *hi, v, *rho),
            DualDomain::Spectral(s) => s.project(y)?,
        }
        Ok(())
    }

    /// A maximizer of `g^T alpha` over `Q` into `out` (the dual point that makes
    /// `G_w(alpha)` a subgradient of the loss term, for the subgradient baselines).
    pub fn maximizer(&self, g: &[f64], out: &mut [f64]) {
        match self {
            DualDomain::Box { lo, hi } => {
                for (o, x) in out.iter_mut().zip(g) {
                    *o = if *x > 0.0 {
                        *hi
                    } else if *x < 0.0 {
                        *lo
                    } else {
                        0.0f64.clamp(*lo, *hi)
                    };
                }
            }
            DualDomain::PairSimplex => {
                for (o, p) in out.chunks_exact_mut(2).zip(g.chunks_exact(2)) {
                    o.fill(0.0);
                    if p[0].max(p[1]) > 0.0 {
                        o[usize::from(p[1] > p[0])] = 1.0;
                    }
                }
            }
            DualDomain::BoxBudget { hi, v, rho } => {
                out.fill(0.0);
                let mut order: Vec<usize> = (0..g.len()).filter(|&i| g[i] > 0.0).collect();
                // Free components first, then by value per unit of budget.
                let ratio = |i: usize| {
                    if v[i] == 0.0 {
                        f64::INFINITY
                    } else {
                        g[i] / v[i]
                    }
                };
                order.sort_by(|&a, &b| ascending(&ratio(b), &ratio(a)));
                let mut left = *rho;
                for i in order {
                    let take = if v[i] == 0.0 {
                        *hi
                    } else {
                        (left / v[i]).min(*hi)
                    };
                    out[i] = take.max(0.0);
                    left -= out[i] * v[i];
                }
            }
            DualDomain::Spectral(s) => s.maximizer(g, out),
        }
    }

    /// `max_{alpha in Q} g^T alpha`.
    pub fn support(&self, g: &[f64]) -> f64 {
        match self {
            DualDomain::Box { lo, hi } => g.iter().map(|x| (lo * x).max(hi * x)).sum(),
            DualDomain::PairSimplex => g.chunks_exact(2).map(|p| p[0].max(p[1]).max(0.0)).sum(),
            DualDomain::BoxBudget { hi, v, rho } => box_budget_support(g, *hi, v, *rho),
            DualDomain::Spectral(s) => s.support(g),
        }
    }
}

/// Project a pair onto `{a, b >= 0, a + b <= 1}`: clip at 0; if the sum still exceeds 1, the
/// point of the segment `a + b = 1` nearest it.
fn project_pair(p: &mut [f64]) {
    let (a, b) = (p[0].max(0.0), p[1].max(0.0));
    if a + b <= 1.0 {
        p[0] = a;
        p[1] = b;
    } else {
        let t = ((p[0] - p[1] + 1.0) / 2.0).clamp(0.0, 1.0);
        p[0] = t;
        p[1] = 1.0 - t;
    }
}

/// `phi(eta) = sum_i v_i clip(y_i - eta v_i, 0, hi)`, non-increasing in `eta`.
fn budget_used(y: &[f64], hi: f64, v: &[f64], eta: f64) -> f64 {
    y.iter()
        .zip(v)
        .map(|(a, c)| c * (a - eta * c).clamp(0.0, hi))
        .sum()
}

/// Lemma 4: `alpha_i = clip(y_i - eta v_i, 0, hi)` with `eta = 0` when the clipped point meets
/// the budget, else the root of `phi(eta) = rho`. The paper finds the root by bisection; `phi`
/// is piecewise linear with breakpoints `(y_i - hi) / v_i` and `y_i / v_i`, so the root is found
/// exactly: bisection over the sorted breakpoints, then the linear piece that crosses `rho`.
fn project_box_budget(y: &mut [f64], hi: f64, v: &[f64], rho: f64) {
    if budget_used(y, hi, v, 0.0) > rho {
        let mut knots: Vec<f64> = y
            .iter()
            .zip(v)
            .filter(|(_, c)| **c > 0.0)
            .flat_map(|(a, c)| [(a - hi) / c, a / c])
            .filter(|k| *k > 0.0)
            .collect();
        knots.push(0.0);
        knots.sort_by(ascending);
        // phi(knots[0] = 0) > rho and phi(last knot) = 0 <= rho: find the last knot above rho.
        let (mut lo, mut up) = (0, knots.len() - 1);
        while up - lo > 1 {
            let mid = (lo + up) / 2;
            if budget_used(y, hi, v, knots[mid]) > rho {
                lo = mid;
            } else {
                up = mid;
            }
        }
        let (e0, e1) = (knots[lo], knots[up]);
        let (f0, f1) = (budget_used(y, hi, v, e0), budget_used(y, hi, v, e1));
        let eta = if f0 > f1 {
            e0 + (f0 - rho) / (f0 - f1) * (e1 - e0)
        } else {
            e1
        };
        for (a, c) in y.iter_mut().zip(v) {
            *a -= eta * c;
        }
    }
    y.iter_mut().for_each(|a| *a = a.clamp(0.0, hi));
}

/// `max g^T alpha` over Lemma 4's set: a fractional knapsack (free components with `v_i = 0`
/// first, then by `g_i / v_i` descending).
fn box_budget_support(g: &[f64], hi: f64, v: &[f64], rho: f64) -> f64 {
    let mut total = 0.0;
    let mut items: Vec<(f64, f64)> = Vec::new();
    for (&gi, &c) in g.iter().zip(v) {
        if gi > 0.0 {
            if c == 0.0 {
                total += hi * gi;
            } else {
                items.push((gi / c, c));
            }
        }
    }
    items.sort_by(|a, b| ascending(&b.0, &a.0));
    let mut left = rho;
    for (ratio, c) in items {
        let take = (left / c).min(hi);
        total += take * c * ratio;
        left -= take * c;
        if left <= 0.0 {
            break;
        }
    }
    total
}
