//! The losses with a bilinear dual (6) of papers/pdprox-primal-dual-nonsmooth.txt, section 4.1:
//! each is `max_{alpha in Q_i} sum_j alpha_j (a_j + c_j s)` at score `s`, with `(a_j, c_j)`
//! depending on the target only; [`crate::pdprox::linear`] sums them over the rows.

use std::fmt;
use std::str::FromStr;

use crate::math::spec::{Params, SpecError, SpecKind, require};

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
    /// The all-threshold hinge of max-margin matrix factorization (Rennie and Srebro 2005;
    /// section 5.3) for ratings `y` in 1..=5 with thresholds `theta_1 < ... < theta_4`:
    /// `sum_k h(T_k (theta_k - s))`, `h(z) = max(0, 1 - z)`, `T_k = -1` for `k < y` and `+1`
    /// for `k >= y`; one dual in `[0, 1]` per threshold: `a_k = 1 - T_k theta_k`, `c_k = T_k`.
    AllThreshold {
        /// `theta_1..theta_4` (the paper: 0, 3, 6, 9).
        theta: [f64; 4],
    },
}

impl DualLoss {
    /// Duals per sample.
    pub fn components(&self) -> usize {
        match self {
            DualLoss::Hinge | DualLoss::Absolute => 1,
            DualLoss::GeneralizedHinge { .. } | DualLoss::EpsInsensitive { .. } => 2,
            DualLoss::AllThreshold { .. } => 4,
        }
    }

    /// Whether the loss classifies (labels -1/+1) rather than regresses (real targets).
    pub fn is_classification(&self) -> bool {
        matches!(self, DualLoss::Hinge | DualLoss::GeneralizedHinge { .. })
    }

    /// `(a_ij, c_ij)` of component `j` for target `y`.
    #[inline]
    pub(crate) fn coef(&self, y: f64, j: usize) -> (f64, f64) {
        match (*self, j) {
            (DualLoss::Hinge, _) => (1.0, -y),
            (DualLoss::GeneralizedHinge { a }, 0) => (1.0, -a * y),
            (DualLoss::GeneralizedHinge { .. }, _) => (1.0, -y),
            (DualLoss::Absolute, _) => (-y, 1.0),
            (DualLoss::EpsInsensitive { eps }, 0) => (-y - eps, 1.0),
            (DualLoss::EpsInsensitive { eps }, _) => (y - eps, -1.0),
            (DualLoss::AllThreshold { theta }, k) => {
                let t = if ((k + 1) as f64) < y { -1.0 } else { 1.0 };
                (1.0 - t * theta[k], t)
            }
        }
    }

    /// `q = sum_j c_ij^2` (labels -1/+1 for the classification losses).
    pub(crate) fn q(&self) -> f64 {
        match *self {
            DualLoss::Hinge | DualLoss::Absolute => 1.0,
            DualLoss::GeneralizedHinge { a } => a * a + 1.0,
            DualLoss::EpsInsensitive { .. } => 2.0,
            DualLoss::AllThreshold { .. } => 4.0,
        }
    }

    /// The loss of score `s` for target `y` (by the closed forms above).
    pub fn value(&self, s: f64, y: f64) -> f64 {
        match *self {
            DualLoss::Hinge => (1.0 - y * s).max(0.0),
            DualLoss::GeneralizedHinge { a } => (1.0 - a * y * s).max(1.0 - y * s).max(0.0),
            DualLoss::Absolute => (s - y).abs(),
            DualLoss::EpsInsensitive { eps } => ((s - y).abs() - eps).max(0.0),
            DualLoss::AllThreshold { .. } => (0..4)
                .map(|k| {
                    let (a, c) = self.coef(y, k);
                    (a + c * s).max(0.0)
                })
                .sum(),
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
            DualLoss::AllThreshold { theta } => require(
                theta.iter().all(|t| t.is_finite()) && theta.windows(2).all(|p| p[0] < p[1]),
                SpecKind::Loss,
                "all-threshold",
                "finite increasing thresholds",
                || {
                    let t: Vec<String> = theta.iter().map(f64::to_string).collect();
                    format!("[{}]", t.join(", "))
                },
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
            "all-threshold" => {
                let p = Params::parse(SpecKind::Loss, "all-threshold", params)?;
                p.only(&["t1", "t2", "t3", "t4"])?;
                DualLoss::AllThreshold {
                    theta: [
                        p.get("t1", Some(0.0))?,
                        p.get("t2", Some(3.0))?,
                        p.get("t3", Some(6.0))?,
                        p.get("t4", Some(9.0))?,
                    ],
                }
            }
            other => {
                return Err(SpecError::Unknown {
                    kind: SpecKind::Loss,
                    name: other.to_string(),
                    expected: "hinge, generalized-hinge, absolute, eps-insensitive, \
                               all-threshold (the losses with a bilinear dual)",
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
            DualLoss::AllThreshold {
                theta: [t1, t2, t3, t4],
            } => {
                write!(f, "all-threshold:t1={t1},t2={t2},t3={t3},t4={t4}")
            }
        }
    }
}
