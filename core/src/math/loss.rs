//! Individual losses `l(u)` of the margin `u = -y * score` (Assumption 1 of
//! papers/rank-based-loss-admm.txt: convex, nondecreasing, bounded below by 0).
//!
//! Besides value and derivative, each loss gives the scaled proximal map
//! `prox_{t l}(x) = argmin_v t l(v) + (v - x)^2 / 2`, which is exactly the block minimizer
//! the PAVA of problem (10) needs: a block with weight sum `S`, `L` elements and mean `mbar`
//! minimizes `S l(v) + rho/2 sum (v - m_i)^2`, whose minimizer is `prox_{t l}(mbar)` with
//! `t = S / (rho L)`.

use std::fmt;
use std::str::FromStr;

use crate::math::spec::{Params, SpecError, SpecKind, require};

/// An individual loss of the margin `u = -y s`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Loss {
    /// `log(1 + e^u)`, evaluated without overflow for any finite `u`.
    Logistic,
    /// `max(0, 1 + u)`.
    Hinge,
    /// `e^u`.
    Exponential,
    /// `max(0, 1 + u)^2`.
    SquaredHinge,
    /// The hinge with its kink smoothed over a width `delta > 0`: `0` for `u <= -1`,
    /// `(1 + u)^2 / (2 delta)` for `-1 < u <= -1 + delta`, `1 + u - delta/2` beyond.
    SmoothedHinge {
        /// Width of the quadratic piece.
        delta: f64,
    },
}

impl Loss {
    /// Check the loss parameters (the smoothed hinge needs a finite `delta > 0`).
    ///
    /// # Errors
    /// [`SpecError::OutOfRange`] naming the bad parameter.
    pub fn validate(&self) -> Result<(), SpecError> {
        match *self {
            Loss::SmoothedHinge { delta } => require(
                delta.is_finite() && delta > 0.0,
                SpecKind::Loss,
                "smoothed hinge",
                "delta > 0",
                || delta.to_string(),
            ),
            _ => Ok(()),
        }
    }

    /// `l(u)`.
    #[inline]
    pub fn value(&self, u: f64) -> f64 {
        match *self {
            Loss::Logistic => u.max(0.0) + (-u.abs()).exp().ln_1p(),
            Loss::Hinge => (1.0 + u).max(0.0),
            Loss::Exponential => u.exp(),
            Loss::SquaredHinge => {
                let h = (1.0 + u).max(0.0);
                h * h
            }
            Loss::SmoothedHinge { delta } => {
                let h = 1.0 + u;
                if h <= 0.0 {
                    0.0
                } else if h <= delta {
                    h * h / (2.0 * delta)
                } else {
                    h - delta / 2.0
                }
            }
        }
    }

    /// A (sub)derivative `l'(u)`; at the hinge's kink the left one, 0.
    #[inline]
    pub fn derivative(&self, u: f64) -> f64 {
        match *self {
            Loss::Logistic => sigmoid(u),
            Loss::Hinge => {
                if u > -1.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Loss::Exponential => u.exp(),
            Loss::SquaredHinge => 2.0 * (1.0 + u).max(0.0),
            Loss::SmoothedHinge { delta } => ((1.0 + u) / delta).clamp(0.0, 1.0),
        }
    }

    /// The subdifferential `[l'_-(u), l'_+(u)]` (a single point where `l` is differentiable).
    #[inline]
    pub fn subdifferential(&self, u: f64) -> (f64, f64) {
        match *self {
            Loss::Hinge if u == -1.0 => (0.0, 1.0),
            _ => {
                let d = self.derivative(u);
                (d, d)
            }
        }
    }

    /// `l''(u)` where it exists (0 on the hinge's linear pieces and at its kink).
    #[inline]
    pub fn second_derivative(&self, u: f64) -> f64 {
        match *self {
            Loss::Logistic => {
                let p = sigmoid(u);
                p * (1.0 - p)
            }
            Loss::Hinge => 0.0,
            Loss::Exponential => u.exp(),
            Loss::SquaredHinge => {
                if u > -1.0 {
                    2.0
                } else {
                    0.0
                }
            }
            Loss::SmoothedHinge { delta } => {
                let h = 1.0 + u;
                if h > 0.0 && h <= delta {
                    1.0 / delta
                } else {
                    0.0
                }
            }
        }
    }

    /// Whether `l` is differentiable everywhere.
    pub fn is_smooth(&self) -> bool {
        !matches!(self, Loss::Hinge)
    }

    /// `prox_{t l}(x) = argmin_v t l(v) + (v - x)^2 / 2` for `t >= 0`, and the number of
    /// Newton/bisection iterations it took (0 for the closed forms).
    ///
    /// Closed forms for `t = 0`, hinge, squared hinge and smoothed hinge; a safeguarded Newton
    /// iteration on the monotone equation `t l'(v) + v - x = 0` (slope >= 1) for logistic and
    /// exponential, bracketed by `[x - t l'(x), x]`.
    pub fn prox(&self, t: f64, x: f64) -> (f64, u32) {
        if t == 0.0 {
            return (x, 0);
        }
        match *self {
            Loss::Hinge => {
                let v = if x > t - 1.0 {
                    x - t
                } else if x < -1.0 {
                    x
                } else {
                    -1.0
                };
                (v, 0)
            }
            Loss::SquaredHinge => {
                let v = if x <= -1.0 {
                    x
                } else {
                    (x - 2.0 * t) / (1.0 + 2.0 * t)
                };
                (v, 0)
            }
            Loss::SmoothedHinge { delta } => {
                // Pieces of v: v <= -1 (l' = 0), -1 < v <= -1 + delta (l' = (1+v)/delta),
                // v > -1 + delta (l' = 1).
                let v = if x <= -1.0 {
                    x
                } else if x - t > -1.0 + delta {
                    x - t
                } else {
                    // v + t (1 + v) / delta = x  =>  v = (x - t/delta) / (1 + t/delta)
                    let r = t / delta;
                    (x - r) / (1.0 + r)
                };
                (v, 0)
            }
            Loss::Logistic | Loss::Exponential => self.prox_newton(t, x),
        }
    }

    /// Safeguarded Newton on `f(v) = t l'(v) + v - x`, increasing with `f' = 1 + t l'' >= 1`.
    fn prox_newton(&self, t: f64, x: f64) -> (f64, u32) {
        let f = |v: f64| t * self.derivative(v) + v - x;
        let mut hi = x; // f(x) = t l'(x) >= 0
        let step = t * self.derivative(x);
        let mut lo = if step.is_finite() { x - step } else { x - 1.0 };
        let mut iters = 0u32;
        // With an overflowing derivative the bracket grows downward until f(lo) <= 0.
        let mut width = 1.0;
        while f(lo) > 0.0 {
            hi = lo;
            width *= 2.0;
            lo = x - width;
            iters += 1;
        }
        let mut v = 0.5 * (lo + hi);
        for _ in 0..200 {
            iters += 1;
            let fv = f(v);
            if fv == 0.0 {
                return (v, iters);
            }
            if fv > 0.0 {
                hi = v;
            } else {
                lo = v;
            }
            let fp = 1.0 + t * self.second_derivative(v);
            let mut next = v - fv / fp;
            if !(next > lo && next < hi) {
                next = 0.5 * (lo + hi);
            }
            let scale = 1.0 + v.abs();
            if (next - v).abs() <= 1e-15 * scale || hi - lo <= 1e-15 * scale {
                return (next, iters);
            }
            v = next;
        }
        (v, iters)
    }
}

/// The logistic function `1 / (1 + e^-u)` without overflow.
#[inline]
pub fn sigmoid(u: f64) -> f64 {
    if u >= 0.0 {
        1.0 / (1.0 + (-u).exp())
    } else {
        let e = u.exp();
        e / (1.0 + e)
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loss::Logistic => f.write_str("logistic"),
            Loss::Hinge => f.write_str("hinge"),
            Loss::Exponential => f.write_str("exponential"),
            Loss::SquaredHinge => f.write_str("sqhinge"),
            Loss::SmoothedHinge { delta } => write!(f, "smooth-hinge:delta={delta}"),
        }
    }
}

impl FromStr for Loss {
    type Err = SpecError;

    /// `logistic`, `hinge`, `exponential`, `sqhinge` (or `squared_hinge`),
    /// `smooth-hinge[:delta=D]` (default delta 0.5).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        let (name, params) = s.split_once(':').unwrap_or((&s, ""));
        let loss = match name {
            "logistic" => Loss::Logistic,
            "hinge" => Loss::Hinge,
            "exponential" | "exp" => Loss::Exponential,
            "sqhinge" | "squared_hinge" | "squared-hinge" => Loss::SquaredHinge,
            "smooth-hinge" | "smoothed_hinge" | "smoothed-hinge" => {
                let p = Params::parse(SpecKind::Loss, "smooth-hinge", params)?;
                p.only(&["delta"])?;
                Loss::SmoothedHinge {
                    delta: p.get("delta", Some(0.5))?,
                }
            }
            other => {
                return Err(SpecError::Unknown {
                    kind: SpecKind::Loss,
                    name: other.to_string(),
                    expected: "logistic, hinge, exponential, sqhinge, smooth-hinge",
                });
            }
        };
        loss.validate()?;
        Ok(loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOSSES: [Loss; 5] = [
        Loss::Logistic,
        Loss::Hinge,
        Loss::Exponential,
        Loss::SquaredHinge,
        Loss::SmoothedHinge { delta: 0.7 },
    ];

    #[test]
    fn logistic_is_stable_for_large_margins() {
        let l = Loss::Logistic;
        assert_eq!(l.value(1e4), 1e4);
        assert!(l.value(-1e4) >= 0.0 && l.value(-1e4) < 1e-300);
        assert!((l.value(0.0) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(l.derivative(1e4), 1.0);
        assert_eq!(l.derivative(-1e4), 0.0);
        let (v, _) = l.prox(3.0, 1e4);
        assert!((v - (1e4 - 3.0)).abs() < 1e-9, "{v}");
        let (v, _) = l.prox(3.0, -1e4);
        assert!((v + 1e4).abs() < 1e-9, "{v}");
    }

    #[test]
    fn derivatives_match_finite_differences() {
        for loss in LOSSES {
            for &u in &[-3.0, -1.2, -0.9, -0.5, 0.0, 0.4, 2.5] {
                let h = 1e-6;
                let fd = (loss.value(u + h) - loss.value(u - h)) / (2.0 * h);
                assert!(
                    (fd - loss.derivative(u)).abs() < 1e-5,
                    "{loss} at {u}: {fd}"
                );
                assert!(loss.value(u) >= 0.0);
            }
        }
    }

    #[test]
    fn prox_satisfies_its_optimality_condition() {
        for loss in LOSSES {
            for &t in &[1e-3, 0.3, 1.0, 7.0] {
                for &x in &[-50.0, -3.0, -1.0, -0.6, 0.0, 0.2, 1.5, 40.0] {
                    let (v, _) = loss.prox(t, x);
                    // 0 in t * dl(v) + v - x
                    let (dl_lo, dl_hi) = loss.subdifferential(v);
                    let lo = t * dl_lo + v - x;
                    let hi = t * dl_hi + v - x;
                    let tol = 1e-10 * (1.0 + x.abs());
                    if loss.is_smooth() {
                        assert!(lo.abs() <= tol, "{loss} t={t} x={x}: v={v}, residual {lo}");
                    } else {
                        assert!(
                            lo <= tol && hi >= -tol,
                            "{loss} t={t} x={x}: v={v} [{lo},{hi}]"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn parse_round_trip_and_errors() {
        for loss in LOSSES {
            assert_eq!(loss.to_string().parse::<Loss>().unwrap(), loss);
        }
        assert!("cauchy".parse::<Loss>().is_err());
        assert!("smooth-hinge:delta=-1".parse::<Loss>().is_err());
    }
}
