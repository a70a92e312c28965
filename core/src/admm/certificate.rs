//! A duality-gap certificate for the convex problems (1) that Algorithm 1 solves:
//! `P(w) = Omega(D w) + g(w)` with `Omega(u) = sum_i sigma_i l(u_[i])`, `sigma` nondecreasing
//! and nonnegative, `l` convex and `g` one of l1, l2^2, elastic net.
//!
//! Fenchel's weak duality gives, for every `v`,
//! `P(w) >= -Omega^*(v) - g^*(-D^T v)`. The z-step (problem 10) supplies a `v` whose conjugate is
//! known: `z^{k+1} = argmin Omega(z) + rho/2 ||z - m||^2` means `v = rho (m - z^{k+1})` is a
//! subgradient of `Omega` at `z^{k+1}`, so `Omega^*(v) = v^T z^{k+1} - Omega(z^{k+1})` (equality
//! in Fenchel-Young; the z-step is exact up to rounding: closed forms, or Newton to 1e-15 for
//! the logistic and exponential losses). Near convergence `v = -lambda^{k+1} - rho D (w^{k+1} -
//! w^k)`, the multipliers up to the dual residual. Every loss here is `>= 0` with infimum 0,
//! so `Omega^*(0) = 0` and by convexity `Omega^*(t v) <= t Omega^*(v)` for `t` in `[0, 1]`:
//!
//! ```text
//! P(w) >= max_{t in [0, 1]}  -t Omega^*(v) - g^*(-t D^T v)
//! ```
//!
//! with `g^*(s) = 0` if `||s||_inf <= mu`, else infinity, for `mu ||w||_1` (the scaling `t`
//! makes `-t D^T v` feasible); `||s||^2 / (2 mu)` for `mu/2 ||w||^2`; and
//! `sum_j (|s_j| - l1)_+^2 / (2 l2)` for the elastic net. The bound is maximized over `t` in
//! closed form (l1, l2^2) or by golden-section search (elastic net; the bound is concave in
//! `t`). The same bound at the average of subgradients from the later half of the run
//! ([`DualAverage`], one every [`CERTIFY_EVERY`] iterations) is valid too, and on hinge + l1,
//! where the last subgradient oscillates, it is what certifies 1e-6: measured on the 48 convex
//! cells of the shipped sets, the default penalty reaches a certified 1e-6 within 10,000
//! iterations on 42 with the last subgradient checked when the residuals pass, on 45 with the
//! average of every iterate's subgradient, on 47 with that checked every [`CERTIFY_EVERY`]
//! iterations, and on all 48 with the average of every [`CERTIFY_EVERY`]-th subgradient
//! (48,847 iterations in all; see [`crate::admm::RhoSchedule::default_for`]). Sampling the
//! average keeps its cost (a sort per sampled iteration) a tenth of what it was: with every
//! iterate, ADMM's iterations on these sets took 25-40% longer.

use crate::math::loss::Loss;
use crate::math::regularizer::Regularizer;
use crate::math::vector::dot;
use crate::math::weights::Sigma;

/// Iterations between two certificate checks of Algorithm 1 (it is also checked whenever the
/// residual test passes).
pub const CERTIFY_EVERY: usize = 10;

/// Whether [`dual_bound`] applies: fixed, nondecreasing, nonnegative weights and a convex `g`
/// whose conjugate is finite somewhere off zero (l1, l2^2 or elastic net, with a positive
/// strength).
pub fn certifiable(sigma: &Sigma, reg: &Regularizer) -> bool {
    let monotone = matches!(
        sigma,
        Sigma::Fixed(s) if s.windows(2).all(|p| p[0] <= p[1]) && s.iter().all(|&v| v >= 0.0)
    );
    let strong = match *reg {
        Regularizer::L1 { mu } | Regularizer::L2 { mu } => mu > 0.0,
        Regularizer::ElasticNet { l1, l2 } => l1 > 0.0 || l2 > 0.0,
        _ => false,
    };
    monotone && strong
}

/// The z-step's subgradient `v = rho (m - z)` of `Omega` at `z` and its conjugate
/// `Omega^*(v) = v^T z - Omega(z)` (see the module docs).
///
/// The conjugate returned is an upper bound that allows for rounding: `z` is exact to about
/// `1e-15` relative, so each `v_i` carries an error up to `rho 1e-15 (|m_i| + |z_i|)` that
/// enters `v^T z`, and the sums round too. Raising `Omega^*(v)` by that much keeps every bound
/// made from it a lower bound. Without it, a huge penalty (`rho = 1e50`, where `m - z` is
/// rounding alone) certified a zero gap at `w = 0`; at the penalties the schedules use, the
/// allowance is about `1e-15 sum_i (|m_i| + |z_i|) |z_i|`, far below any tolerance.
pub fn subgradient(loss: &Loss, sigma: &Sigma, rho: f64, m: &[f64], z: &[f64]) -> (Vec<f64>, f64) {
    const REL: f64 = 1e-15;
    let v: Vec<f64> = m.iter().zip(z).map(|(mi, zi)| rho * (mi - zi)).collect();
    let omega = sigma.rank_loss(loss, z);
    let rounding: f64 = m
        .iter()
        .zip(z)
        .zip(&v)
        .map(|((mi, zi), vi)| (rho * REL * (mi.abs() + zi.abs()) + REL * vi.abs()) * zi.abs())
        .sum::<f64>()
        + REL * omega.abs() * z.len() as f64;
    let conj = dot(&v, z) - omega + rounding;
    (v, conj)
}

/// Running averages of the z-step's subgradients and of their conjugates since the last
/// restart, restarted whenever the iteration count doubles (the average covers the later half
/// of the run; one every [`CERTIFY_EVERY`] iterations, [`DualAverage::sample`]). By convexity
/// `Omega^*(mean v) <= mean Omega^*(v)`, so the averaged subgradient gives a valid bound too; on
/// nonsmooth losses it oscillates less than the last one.
#[derive(Debug, Clone, Default)]
pub struct DualAverage {
    sum: Vec<f64>,
    conj: f64,
    count: usize,
    next_restart: usize,
}

impl DualAverage {
    /// At every [`CERTIFY_EVERY`]-th iteration `k` (0-based), the z-step's subgradient and
    /// conjugate from `compute` ([`subgradient`]), added to the average and returned; `None`
    /// (nothing computed) at the others.
    pub fn sample(
        &mut self,
        k: usize,
        compute: impl FnOnce() -> (Vec<f64>, f64),
    ) -> Option<(Vec<f64>, f64)> {
        if !(k + 1).is_multiple_of(CERTIFY_EVERY) {
            return None;
        }
        let (v, conj) = compute();
        self.add(k, &v, conj);
        Some((v, conj))
    }

    /// Add iteration `k`'s (0-based) subgradient and conjugate.
    fn add(&mut self, k: usize, v: &[f64], conj: f64) {
        if k >= self.next_restart {
            self.sum = vec![0.0; v.len()];
            (self.conj, self.count) = (0.0, 0);
            self.next_restart = (2 * k).max(1);
        }
        for (s, x) in self.sum.iter_mut().zip(v) {
            *s += x;
        }
        self.conj += conj;
        self.count += 1;
    }

    /// The average subgradient and the average conjugate (an upper bound of the average's).
    pub fn mean(&self) -> Option<(Vec<f64>, f64)> {
        (self.count > 0).then(|| {
            let c = self.count as f64;
            (self.sum.iter().map(|s| s / c).collect(), self.conj / c)
        })
    }

    /// The better of the bounds from this iteration's subgradient `v` (with its conjugate
    /// `conj`, from [`subgradient`]) and from the average; 0 (valid since `P >= 0`) where
    /// neither applies.
    pub fn bound(
        &self,
        dt_times: impl Fn(&[f64]) -> Vec<f64>,
        sigma: &Sigma,
        reg: &Regularizer,
        v: &[f64],
        conj: f64,
    ) -> f64 {
        let last = dual_bound(&dt_times, sigma, reg, v, conj).unwrap_or(0.0);
        let mean = self
            .mean()
            .and_then(|(v, conj)| dual_bound(&dt_times, sigma, reg, &v, conj))
            .unwrap_or(0.0);
        last.max(mean)
    }
}

/// A lower bound on `min_w P(w)` from a subgradient `v` of `Omega` and an upper bound
/// `omega_star` of `Omega^*(v)` (see the module docs), `dt_times` computing `D^T v`; `None` when
/// [`certifiable`] is false.
pub fn dual_bound(
    dt_times: impl Fn(&[f64]) -> Vec<f64>,
    sigma: &Sigma,
    reg: &Regularizer,
    v: &[f64],
    omega_star: f64,
) -> Option<f64> {
    if !certifiable(sigma, reg) {
        return None;
    }
    let s = dt_times(v);
    let bound = |t: f64, conj: f64| -t * omega_star - conj;
    let l1_bound = |mu: f64| {
        let inf = s.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let t = if inf > mu { mu / inf } else { 1.0 };
        bound(t, 0.0)
    };
    let best = match *reg {
        Regularizer::L1 { mu } => l1_bound(mu),
        Regularizer::ElasticNet { l1, l2: 0.0 } => l1_bound(l1),
        Regularizer::L2 { .. } => {
            // -t A - t^2 B with B = g^*(s), maximized at t = -A / (2 B) within [0, 1].
            let b = reg.smooth_conjugate(&s)?;
            let t = if b > 0.0 {
                (-omega_star / (2.0 * b)).clamp(0.0, 1.0)
            } else {
                1.0
            };
            bound(t, t * t * b)
        }
        Regularizer::ElasticNet { .. } => {
            let f = |t: f64| {
                let scaled: Vec<f64> = s.iter().map(|x| t * x).collect();
                bound(t, reg.smooth_conjugate(&scaled).unwrap_or(f64::INFINITY))
            };
            golden_max(f, 0.0, 1.0)
        }
        _ => return None,
    };
    // t = 0 always gives 0, a valid bound since P >= 0.
    Some(best.max(0.0))
}

/// The maximum of a concave `f` on `[a, b]` by golden-section search (to `1e-12 (b - a)`).
fn golden_max(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    let width = b - a;
    while b - a > 1e-12 * width {
        if fc < fd {
            a = c;
            c = d;
            fc = fd;
            d = a + r * (b - a);
            fd = f(d);
        } else {
            b = d;
            d = c;
            fd = fc;
            c = b - r * (b - a);
            fc = f(c);
        }
    }
    f(a).max(f(b)).max(fc).max(fd)
}
