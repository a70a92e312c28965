//! Regularizers `g(w)` of problem (1) (papers/rank-based-loss-admm.txt, section 2.2): value,
//! proximal map `prox_{g,gamma}` in closed form, weak-convexity constant `c`, Moreau envelope
//! `M_{g,gamma}` (eq. 7) and its gradient `(w - prox(w)) / gamma` (eq. 8).
//!
//! All are separable, so every map works coordinate-wise.

use std::fmt;
use std::str::FromStr;

use crate::math::spec::{SpecError, SpecKind, count, numbers, require};

/// A separable regularizer.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Regularizer {
    /// `g = 0`.
    None,
    /// `mu ||w||_1`.
    L1 {
        /// Strength.
        mu: f64,
    },
    /// `mu/2 ||w||^2`.
    L2 {
        /// Strength.
        mu: f64,
    },
    /// `l1 ||w||_1 + l2/2 ||w||^2`.
    ElasticNet {
        /// l1 strength.
        l1: f64,
        /// l2 strength.
        l2: f64,
    },
    /// Minimax concave penalty, per coordinate `lambda |x| - x^2 / (2 theta)` for
    /// `|x| <= theta lambda`, `theta lambda^2 / 2` beyond; `(1/theta)`-weakly convex.
    Mcp {
        /// Level `lambda > 0`.
        lambda: f64,
        /// Concavity `theta > 0` (often called gamma).
        theta: f64,
    },
    /// Smoothly clipped absolute deviation with `a > 2`: `lambda |x|` for `|x| <= lambda`,
    /// `(2 a lambda |x| - x^2 - lambda^2) / (2 (a - 1))` up to `a lambda`, then
    /// `lambda^2 (a + 1) / 2`; `1/(a-1)`-weakly convex.
    Scad {
        /// Level `lambda > 0`.
        lambda: f64,
        /// Shape `a > 2` (3.7 is customary).
        a: f64,
    },
}

fn soft(x: f64, t: f64) -> f64 {
    x.signum() * (x.abs() - t).max(0.0)
}

impl Regularizer {
    /// Check the parameters.
    ///
    /// # Errors
    /// [`SpecError::OutOfRange`] naming the bad parameter.
    pub fn validate(&self) -> Result<(), SpecError> {
        let check = |ok: bool, family, requirement, got: f64| {
            require(ok, SpecKind::Regularizer, family, requirement, || {
                got.to_string()
            })
        };
        let nonneg =
            |family, requirement, v: f64| check(v.is_finite() && v >= 0.0, family, requirement, v);
        match *self {
            Regularizer::None => Ok(()),
            Regularizer::L1 { mu } => nonneg("l1", "a finite mu >= 0", mu),
            Regularizer::L2 { mu } => nonneg("l2", "a finite mu >= 0", mu),
            Regularizer::ElasticNet { l1, l2 } => {
                nonneg("enet", "a finite l1 >= 0", l1)?;
                nonneg("enet", "a finite l2 >= 0", l2)
            }
            Regularizer::Mcp { lambda, theta } => {
                nonneg("mcp", "a finite lambda >= 0", lambda)?;
                check(theta.is_finite() && theta > 0.0, "mcp", "theta > 0", theta)
            }
            Regularizer::Scad { lambda, a } => {
                nonneg("scad", "a finite lambda >= 0", lambda)?;
                check(a.is_finite() && a > 2.0, "scad", "a > 2", a)
            }
        }
    }

    /// Weak-convexity constant `c`: `g + c/2 ||.||^2` is convex (0 for convex `g`).
    pub fn weak_convexity(&self) -> f64 {
        match *self {
            Regularizer::Mcp { theta, .. } => 1.0 / theta,
            Regularizer::Scad { a, .. } => 1.0 / (a - 1.0),
            _ => 0.0,
        }
    }

    /// Whether `g` is differentiable (none and squared l2).
    pub fn is_smooth(&self) -> bool {
        matches!(self, Regularizer::None | Regularizer::L2 { .. })
    }

    /// `g` of one coordinate.
    pub fn value_1d(&self, x: f64) -> f64 {
        let ax = x.abs();
        match *self {
            Regularizer::None => 0.0,
            Regularizer::L1 { mu } => mu * ax,
            Regularizer::L2 { mu } => 0.5 * mu * x * x,
            Regularizer::ElasticNet { l1, l2 } => l1 * ax + 0.5 * l2 * x * x,
            Regularizer::Mcp { lambda, theta } => {
                if ax <= theta * lambda {
                    lambda * ax - x * x / (2.0 * theta)
                } else {
                    0.5 * theta * lambda * lambda
                }
            }
            Regularizer::Scad { lambda, a } => {
                if ax <= lambda {
                    lambda * ax
                } else if ax <= a * lambda {
                    (2.0 * a * lambda * ax - x * x - lambda * lambda) / (2.0 * (a - 1.0))
                } else {
                    0.5 * lambda * lambda * (a + 1.0)
                }
            }
        }
    }

    /// `g(w)`.
    pub fn value(&self, w: &[f64]) -> f64 {
        w.iter().map(|&x| self.value_1d(x)).sum()
    }

    /// The convex conjugate `g^*(s) = sup_w s^T w - g(w)` where it is finite everywhere:
    /// `||s||^2 / (2 mu)` for `mu/2 ||w||^2` and `sum_j (|s_j| - l1)_+^2 / (2 l2)` for the
    /// elastic net; `None` for the others (l1, none and strength 0 are indicators, MCP and SCAD
    /// are not convex). The duality gaps of ADMM and Pdprox evaluate it.
    pub fn smooth_conjugate(&self, s: &[f64]) -> Option<f64> {
        match *self {
            Regularizer::L2 { mu } if mu > 0.0 => {
                Some(s.iter().map(|x| x * x).sum::<f64>() / (2.0 * mu))
            }
            Regularizer::ElasticNet { l1, l2 } if l2 > 0.0 => Some(
                s.iter()
                    .map(|x| (x.abs() - l1).max(0.0).powi(2))
                    .sum::<f64>()
                    / (2.0 * l2),
            ),
            _ => None,
        }
    }

    /// The largest `gamma` for which `prox_{g,gamma}` is single-valued (`1/c`, or infinity).
    pub fn max_gamma(&self) -> f64 {
        let c = self.weak_convexity();
        if c > 0.0 { 1.0 / c } else { f64::INFINITY }
    }

    /// `prox_{g,gamma}(x) = argmin_v g(v) + (v - x)^2 / (2 gamma)` of one coordinate, for
    /// `0 < gamma < 1/c`.
    pub fn prox_1d(&self, x: f64, gamma: f64) -> f64 {
        match *self {
            Regularizer::None => x,
            Regularizer::L1 { mu } => soft(x, gamma * mu),
            Regularizer::L2 { mu } => x / (1.0 + gamma * mu),
            Regularizer::ElasticNet { l1, l2 } => soft(x, gamma * l1) / (1.0 + gamma * l2),
            Regularizer::Mcp { lambda, theta } => {
                let ax = x.abs();
                if ax <= gamma * lambda {
                    0.0
                } else if ax <= theta * lambda {
                    x.signum() * (ax - gamma * lambda) / (1.0 - gamma / theta)
                } else {
                    x
                }
            }
            Regularizer::Scad { lambda, a } => {
                let ax = x.abs();
                if ax <= lambda * (1.0 + gamma) {
                    soft(x, gamma * lambda)
                } else if ax <= a * lambda {
                    ((a - 1.0) * x - x.signum() * gamma * a * lambda) / (a - 1.0 - gamma)
                } else {
                    x
                }
            }
        }
    }

    /// `prox_{g,gamma}(w)` into `out`.
    pub fn prox(&self, w: &[f64], gamma: f64, out: &mut [f64]) {
        for (o, &x) in out.iter_mut().zip(w) {
            *o = self.prox_1d(x, gamma);
        }
    }

    /// Moreau envelope `M_{g,gamma}(w) = min_x g(x) + ||x - w||^2 / (2 gamma)` (eq. 7).
    pub fn moreau(&self, w: &[f64], gamma: f64) -> f64 {
        w.iter()
            .map(|&x| {
                let p = self.prox_1d(x, gamma);
                self.value_1d(p) + (p - x) * (p - x) / (2.0 * gamma)
            })
            .sum()
    }

    /// `grad M_{g,gamma}(w) = (w - prox_{g,gamma}(w)) / gamma` (eq. 8) into `out`.
    pub fn moreau_grad(&self, w: &[f64], gamma: f64, out: &mut [f64]) {
        for (o, &x) in out.iter_mut().zip(w) {
            *o = (x - self.prox_1d(x, gamma)) / gamma;
        }
    }
}

impl fmt::Display for Regularizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Regularizer::None => f.write_str("none"),
            Regularizer::L1 { mu } => write!(f, "l1:{mu}"),
            Regularizer::L2 { mu } => write!(f, "l2:{mu}"),
            Regularizer::ElasticNet { l1, l2 } => write!(f, "enet:{l1},{l2}"),
            Regularizer::Mcp { lambda, theta } => write!(f, "mcp:{lambda},{theta}"),
            Regularizer::Scad { lambda, a } => write!(f, "scad:{lambda},{a}"),
        }
    }
}

impl FromStr for Regularizer {
    type Err = SpecError;

    /// `none`, `l2:MU` (`MU/2 ||w||^2`), `l1:MU` (`MU ||w||_1`), `enet:L1,L2`,
    /// `mcp:LAMBDA,THETA`, `scad:LAMBDA,A`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        let (name, args) = s.split_once(':').unwrap_or((&s, ""));
        let nums = numbers(SpecKind::Regularizer, name, args)?;
        let want = |k: usize| count(SpecKind::Regularizer, name, &nums, k, args);
        let reg = match name {
            "none" => {
                want(0)?;
                Regularizer::None
            }
            "l1" => {
                want(1)?;
                Regularizer::L1 { mu: nums[0] }
            }
            "l2" => {
                want(1)?;
                Regularizer::L2 { mu: nums[0] }
            }
            "enet" | "elasticnet" | "elastic-net" => {
                want(2)?;
                Regularizer::ElasticNet {
                    l1: nums[0],
                    l2: nums[1],
                }
            }
            "mcp" => {
                want(2)?;
                Regularizer::Mcp {
                    lambda: nums[0],
                    theta: nums[1],
                }
            }
            "scad" => {
                want(2)?;
                Regularizer::Scad {
                    lambda: nums[0],
                    a: nums[1],
                }
            }
            other => {
                return Err(SpecError::Unknown {
                    kind: SpecKind::Regularizer,
                    name: other.to_string(),
                    expected: "none, l1, l2, enet, mcp, scad",
                });
            }
        };
        reg.validate()?;
        Ok(reg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGS: [Regularizer; 6] = [
        Regularizer::None,
        Regularizer::L1 { mu: 0.7 },
        Regularizer::L2 { mu: 1.3 },
        Regularizer::ElasticNet { l1: 0.4, l2: 0.9 },
        Regularizer::Mcp {
            lambda: 0.8,
            theta: 3.0,
        },
        Regularizer::Scad {
            lambda: 0.6,
            a: 3.7,
        },
    ];

    fn points() -> Vec<f64> {
        (-60..=60).map(|i| f64::from(i) * 0.071 + 0.003).collect()
    }

    #[test]
    fn prox_is_the_minimizer_of_its_1d_problem() {
        for reg in REGS {
            let gamma = 0.5 * reg.max_gamma().min(2.0);
            for x in points() {
                let p = reg.prox_1d(x, gamma);
                let f = |v: f64| reg.value_1d(v) + (v - x) * (v - x) / (2.0 * gamma);
                // dense scan around the claimed minimizer
                for k in -400..=400 {
                    let v = p + f64::from(k) * 0.005;
                    assert!(
                        f(v) >= f(p) - 1e-12,
                        "{reg} x={x}: f({v})={} < f({p})={}",
                        f(v),
                        f(p)
                    );
                }
            }
        }
    }

    #[test]
    fn moreau_gradient_matches_finite_differences_and_eq8() {
        for reg in REGS {
            let gamma = 0.3 * reg.max_gamma().min(2.0);
            for x in points() {
                let h = 1e-6;
                let fd = (reg.moreau(&[x + h], gamma) - reg.moreau(&[x - h], gamma)) / (2.0 * h);
                let mut g = [0.0];
                reg.moreau_grad(&[x], gamma, &mut g);
                assert!((fd - g[0]).abs() < 1e-5, "{reg} x={x}: fd {fd} vs {}", g[0]);
                // eq. (8): the gradient is a (Clarke) subgradient of g at prox(x); check it
                // against one-sided difference quotients of g there.
                let p = reg.prox_1d(x, gamma);
                let right = (reg.value_1d(p + h) - reg.value_1d(p)) / h;
                let left = (reg.value_1d(p) - reg.value_1d(p - h)) / h;
                assert!(
                    g[0] >= left.min(right) - 1e-4 && g[0] <= left.max(right) + 1e-4,
                    "{reg} x={x}"
                );
            }
        }
    }

    #[test]
    fn weak_convexity_constant_makes_g_convex() {
        for reg in REGS {
            let c = reg.weak_convexity();
            let f = |x: f64| reg.value_1d(x) + 0.5 * c * x * x;
            for x in points() {
                let h = 0.01;
                assert!(f(x + h) + f(x - h) - 2.0 * f(x) >= -1e-12, "{reg} at {x}");
            }
        }
    }

    #[test]
    fn parsing_round_trips_and_rejects_bad_input() {
        for reg in REGS {
            assert_eq!(reg.to_string().parse::<Regularizer>().unwrap(), reg);
        }
        for bad in [
            "l1",
            "l2:-1",
            "l2:x",
            "scad:0.5,2",
            "mcp:1,0",
            "enet:1",
            "ridge:1",
        ] {
            assert!(bad.parse::<Regularizer>().is_err(), "{bad}");
        }
    }
}
