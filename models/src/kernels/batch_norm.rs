//! Batch normalization over the channels of a contiguous `[B, C, S]` `f32` slice (`S` the
//! spatial size), fused per channel, in Burn's convention (biased batch variance, as
//! `ModuleOps::batch_norm_train` computes it):
//!
//! - training forward, two passes: the statistics `mu_c = mean x`, `v_c = mean (x - mu_c)^2`
//!   (accumulated in f64), then `y = gamma_c (x - mu_c) / sqrt(v_c + eps) + beta_c`;
//! - training backward, two passes: `dbeta_c = sum dy`, `dgamma_c = sum dy xhat` with
//!   `xhat = (x - mu_c) / sqrt(v_c + eps)`, then
//!   `dx = gamma_c / sqrt(v_c + eps) (dy - dbeta_c / N - xhat dgamma_c / N)`, `N = B S`;
//! - inference, one pass with the running statistics: `y = a_c x + b_c`,
//!   `a_c = gamma_c / sqrt(v_c + eps)`, `b_c = beta_c - a_c mu_c`.
//!
//! Channels are split over Rayon's threads for the sums, `(image, channel)` planes for the
//! element-wise pass.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::vectorized;

/// The shape `[B, C, S]` of a batch-norm input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BnShape {
    /// Images.
    pub batch: usize,
    /// Channels.
    pub channels: usize,
    /// Elements per channel and image (height times width).
    pub spatial: usize,
}

impl BnShape {
    fn len(&self) -> usize {
        self.batch * self.channels * self.spatial
    }

    /// Elements per channel over the batch.
    fn count(&self) -> f64 {
        (self.batch * self.spatial) as f64
    }

    /// The planes of channel `c`, one per image.
    fn planes<'a>(&self, v: &'a [f32], c: usize) -> impl Iterator<Item = &'a [f32]> {
        let (cs, s) = (self.channels, self.spatial);
        (0..self.batch).map(move |b| &v[(b * cs + c) * s..(b * cs + c + 1) * s])
    }
}

/// Lanes of the `f32` partial sums (eight: one AVX register); each plane's lanes are summed in
/// `f64`, and so are the planes.
const LANES: usize = 8;

/// `(sum (x - k), sum (x - k)^2)` over one plane, `k` a shift close to the mean (the shifted
/// one-pass variance, stable when the mean is large against the spread).
#[inline(always)]
fn shifted_sums(plane: &[f32], k: f32) -> (f64, f64) {
    let (mut s1, mut s2) = ([0.0f32; LANES], [0.0f32; LANES]);
    let chunks = plane.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for l in 0..LANES {
            let d = c[l] - k;
            s1[l] += d;
            s2[l] += d * d;
        }
    }
    let (mut a, mut b) = (0.0f64, 0.0f64);
    for l in 0..LANES {
        a += f64::from(s1[l]);
        b += f64::from(s2[l]);
    }
    for &v in rest {
        let d = f64::from(v - k);
        a += d;
        b += d * d;
    }
    (a, b)
}

/// What the training forward returns: the output, and per channel the batch mean and biased
/// variance.
#[derive(Debug, Clone, PartialEq)]
pub struct BnTrain {
    /// `y`, `[B, C, S]` (after the ReLU when it is fused).
    pub output: Vec<f32>,
    /// `mu`, `[C]`.
    pub mean: Vec<f32>,
    /// `v`, `[C]`.
    pub variance: Vec<f32>,
}

/// The per-channel affine map `y = a_c x + b_c` of batch norm with statistics `mean`, `var`.
fn affine(gamma: &[f32], beta: &[f32], mean: &[f64], var: &[f64], eps: f64) -> Vec<(f32, f32)> {
    (0..gamma.len())
        .map(|c| channel_affine(gamma[c], beta[c], mean[c], var[c], eps))
        .collect()
}

/// One channel's `(a_c, b_c)`.
fn channel_affine(gamma: f32, beta: f32, mean: f64, var: f64, eps: f64) -> (f32, f32) {
    let a = f64::from(gamma) / (var + eps).sqrt();
    (a as f32, (f64::from(beta) - a * mean) as f32)
}

/// The training forward (the module docs' two passes); `relu` applies `max(0, .)` to the
/// output in the same pass. One task per channel takes both passes over its planes, so that
/// the second reads them from the core's cache (the channel's planes of a ResNet-20 batch are
/// at most 100 KB).
pub fn train(s: BnShape, x: &[f32], gamma: &[f32], beta: &[f32], eps: f64, relu: bool) -> BnTrain {
    assert_eq!(x.len(), s.len(), "batch norm input length");
    assert!(gamma.len() == s.channels && beta.len() == s.channels);
    // Not zeroed first (a zeroed vector cost a `memset` of every element).
    let n = x.len();
    let mut y: Vec<f32> = Vec::with_capacity(n);
    let out = Planes::new(&mut y.spare_capacity_mut()[..n], s);
    let stats: Vec<(f64, f64)> = (0..s.channels)
        .into_par_iter()
        .map(|c| {
            let k = s
                .planes(x, c)
                .next()
                .and_then(|p| p.first())
                .copied()
                .unwrap_or(0.0);
            let (a, b) = s
                .planes(x, c)
                .map(|p| {
                    vectorized(
                        #[inline(always)]
                        || shifted_sums(p, k),
                    )
                })
                .fold((0.0, 0.0), |acc, v| (acc.0 + v.0, acc.1 + v.1));
            let (m1, m2) = (a / s.count(), b / s.count());
            let (mean, var) = (f64::from(k) + m1, (m2 - m1 * m1).max(0.0));
            let map = channel_affine(gamma[c], beta[c], mean, var, eps);
            for (b, xp) in s.planes(x, c).enumerate() {
                // SAFETY: channel `c`'s planes are this task's alone.
                apply_plane(unsafe { out.plane(b, c) }, xp, map, relu);
            }
            (mean, var)
        })
        .collect();
    // SAFETY: the channels' tasks together wrote every plane of `y` (`s.batch` images times
    // `s.channels` channels, `s.spatial` cells each: all `n` cells), each cell once.
    unsafe { y.set_len(n) };
    BnTrain {
        output: y,
        mean: stats.iter().map(|p| p.0 as f32).collect(),
        variance: stats.iter().map(|p| p.1 as f32).collect(),
    }
}

/// The planes of an output `[B, C, S]` that the channels' tasks write in parallel, each task
/// its own channel's.
struct Planes {
    base: *mut MaybeUninit<f32>,
    shape: BnShape,
}

// SAFETY: the tasks that share a `Planes` write disjoint planes (`Planes::plane`'s contract).
unsafe impl Sync for Planes {}

impl Planes {
    fn new(cells: &mut [MaybeUninit<f32>], shape: BnShape) -> Self {
        assert_eq!(cells.len(), shape.len(), "batch norm output length");
        Planes {
            base: cells.as_mut_ptr(),
            shape,
        }
    }

    /// Plane `(b, c)`.
    ///
    /// # Safety
    /// No other live reference to the same plane: each channel's planes are taken by one task.
    #[allow(clippy::mut_from_ref)]
    unsafe fn plane(&self, b: usize, c: usize) -> &mut [MaybeUninit<f32>] {
        let (cs, sp) = (self.shape.channels, self.shape.spatial);
        assert!(b < self.shape.batch && c < cs);
        // SAFETY: the plane lies inside the `len()` cells `new` took, and the caller
        // guarantees that nothing else refers to it.
        unsafe { std::slice::from_raw_parts_mut(self.base.add((b * cs + c) * sp), sp) }
    }
}

/// `y = a x + b` on one plane, then `max(0, y)` when `relu`.
#[inline]
fn apply_plane(yp: &mut [MaybeUninit<f32>], xp: &[f32], (a, b): (f32, f32), relu: bool) {
    vectorized(
        #[inline(always)]
        || {
            if relu {
                for (o, &v) in yp.iter_mut().zip(xp) {
                    o.write((a * v + b).max(0.0));
                }
            } else {
                for (o, &v) in yp.iter_mut().zip(xp) {
                    o.write(a * v + b);
                }
            }
        },
    )
}

/// `y = a_c x + b_c` per `(image, channel)` plane, then `max(0, y)` when `relu`.
fn apply(s: BnShape, x: &[f32], affine: &[(f32, f32)], relu: bool) -> Vec<f32> {
    // Not zeroed first (a zeroed vector cost a `memset` of every element).
    let n = x.len();
    let mut y: Vec<f32> = Vec::with_capacity(n);
    y.spare_capacity_mut()[..n]
        .par_chunks_mut(s.spatial.max(1))
        .zip(x.par_chunks(s.spatial.max(1)))
        .enumerate()
        .for_each(|(plane, (yp, xp))| apply_plane(yp, xp, affine[plane % s.channels], relu));
    // SAFETY: the first `n` cells were split into the same pieces as `x`, which holds `n`
    // elements, and `apply_plane` writes every cell of its piece.
    unsafe { y.set_len(n) };
    y
}

/// A batch norm's affine parameters and the statistics it normalizes with, per channel.
#[derive(Debug, Clone, Copy)]
pub struct Normalization<'a> {
    /// `gamma`, `[C]`.
    pub gamma: &'a [f32],
    /// `beta`, `[C]`.
    pub beta: &'a [f32],
    /// Mean, `[C]` (the batch's in training, the running one in inference).
    pub mean: &'a [f32],
    /// Variance, `[C]`.
    pub var: &'a [f32],
    /// `epsilon`.
    pub eps: f64,
}

impl Normalization<'_> {
    /// The per-channel affine map `y = a_c x + b_c`.
    fn affine(&self) -> Vec<(f32, f32)> {
        affine(
            self.gamma,
            self.beta,
            &wide(self.mean),
            &wide(self.var),
            self.eps,
        )
    }
}

fn wide(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&a| f64::from(a)).collect()
}

/// The inference forward with running statistics (and the fused ReLU).
pub fn inference(s: BnShape, x: &[f32], n: &Normalization<'_>, relu: bool) -> Vec<f32> {
    assert_eq!(x.len(), s.len(), "batch norm input length");
    apply(s, x, &n.affine(), relu)
}

/// `(sum dy, sum dy (x - m))` over one plane; with `relu`, `dy` counts only where the forward
/// output `a x + b` was positive (the ReLU's gradient mask, recomputed).
#[inline(always)]
fn grad_sums(xp: &[f32], dp: &[f32], m: f32, relu: Option<(f32, f32)>) -> (f64, f64) {
    // Without the ReLU the mask keeps every element: `0 x + 1` is positive (and NaN for an
    // infinite or NaN `x`, which keeps it too). One select on a comparison: the loop vectorizes.
    let (fa, fb) = relu.unwrap_or((0.0, 1.0));
    let keep = |xv: f32, d: f32| if fa * xv + fb <= 0.0 { 0.0 } else { d };
    let (mut s1, mut s2) = ([0.0f32; LANES], [0.0f32; LANES]);
    let n = xp.len() / LANES * LANES;
    for (xc, dc) in xp[..n].chunks_exact(LANES).zip(dp[..n].chunks_exact(LANES)) {
        for l in 0..LANES {
            let d = keep(xc[l], dc[l]);
            s1[l] += d;
            s2[l] += d * (xc[l] - m);
        }
    }
    let mut tail = (0.0f64, 0.0f64);
    for (&xv, &d) in xp[n..].iter().zip(&dp[n..]) {
        let d = f64::from(keep(xv, d));
        tail.0 += d;
        tail.1 += d * f64::from(xv - m);
    }
    let (mut a, mut b) = tail;
    for l in 0..LANES {
        a += f64::from(s1[l]);
        b += f64::from(s2[l]);
    }
    (a, b)
}

/// The gradients of the training forward: `(dx, dgamma, dbeta)` (`n` holding the batch
/// statistics the forward returned); with `relu`, of the fused `max(0, batch norm)`.
pub fn train_backward(
    s: BnShape,
    x: &[f32],
    n: &Normalization<'_>,
    relu: bool,
    dy: &[f32],
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    assert!(
        x.len() == s.len() && dy.len() == s.len(),
        "batch norm gradient length"
    );
    let (gamma, mean, eps) = (n.gamma, n.mean, n.eps);
    let (mean64, var64) = (wide(n.mean), wide(n.var));
    let forward = n.affine();
    let inv_std: Vec<f64> = var64.iter().map(|&v| 1.0 / (v + eps).sqrt()).collect();
    let n = s.count();
    // Not zeroed first (a zeroed vector cost a `memset` of every element).
    let n_dx = x.len();
    let mut dx: Vec<f32> = Vec::with_capacity(n_dx);
    let out = Planes::new(&mut dx.spare_capacity_mut()[..n_dx], s);
    // One task per channel: its sums, then its planes of dx (read again from the core's
    // cache).
    let sums: Vec<(f64, f64)> = (0..s.channels)
        .into_par_iter()
        .map(|c| {
            let mask = relu.then_some(forward[c]);
            let (db, dxm) = s
                .planes(x, c)
                .zip(s.planes(dy, c))
                .map(|(xp, dp)| {
                    vectorized(
                        #[inline(always)]
                        || grad_sums(xp, dp, mean[c], mask),
                    )
                })
                .fold((0.0, 0.0), |acc, v| (acc.0 + v.0, acc.1 + v.1));
            let dg = dxm * inv_std[c];
            // dx = k_c dy + a_c x + b_c (dy masked by the ReLU).
            let (m, r) = (mean64[c], inv_std[c]);
            let k = f64::from(gamma[c]) * r;
            let a = -k * dg / n * r;
            let b = -k * db / n - a * m;
            let (k, a, b) = (k as f32, a as f32, b as f32);
            for (i, (xp, dp)) in s.planes(x, c).zip(s.planes(dy, c)).enumerate() {
                // SAFETY: channel `c`'s planes are this task's alone.
                let o = unsafe { out.plane(i, c) };
                vectorized(
                    #[inline(always)]
                    || {
                        if let Some((fa, fb)) = mask {
                            for ((o, &xv), &d) in o.iter_mut().zip(xp).zip(dp) {
                                let d = if fa * xv + fb > 0.0 { d } else { 0.0 };
                                o.write(k * d + a * xv + b);
                            }
                        } else {
                            for ((o, &xv), &d) in o.iter_mut().zip(xp).zip(dp) {
                                o.write(k * d + a * xv + b);
                            }
                        }
                    },
                )
            }
            (db, dg)
        })
        .collect();
    // SAFETY: the channels' tasks together wrote every plane of `dx` (all `n_dx` cells), each
    // cell once.
    unsafe { dx.set_len(n_dx) };
    let dgamma = sums.iter().map(|p| p.1 as f32).collect();
    let dbeta = sums.iter().map(|p| p.0 as f32).collect();
    (dx, dgamma, dbeta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(n: usize, seed: f32) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 + seed) * 0.913).sin() * 2.0 + 0.5)
            .collect()
    }

    /// `L = sum w y` in f64 by the definition (`y` through the ReLU when `relu`).
    #[allow(clippy::too_many_arguments)]
    fn loss(
        s: BnShape,
        x: &[f64],
        gamma: &[f64],
        beta: &[f64],
        w: &[f32],
        eps: f64,
        relu: bool,
    ) -> f64 {
        let mut total = 0.0;
        for c in 0..s.channels {
            let idx: Vec<usize> = (0..s.batch)
                .flat_map(|b| (0..s.spatial).map(move |k| (b * s.channels + c) * s.spatial + k))
                .collect();
            let m = idx.iter().map(|&i| x[i]).sum::<f64>() / idx.len() as f64;
            let v = idx.iter().map(|&i| (x[i] - m).powi(2)).sum::<f64>() / idx.len() as f64;
            for &i in &idx {
                let y = gamma[c] * (x[i] - m) / (v + eps).sqrt() + beta[c];
                total += w[i] as f64 * if relu { y.max(0.0) } else { y };
            }
        }
        total
    }

    #[test]
    fn forward_and_gradients_match_the_definition_by_finite_differences() {
        let s = BnShape {
            batch: 3,
            channels: 4,
            spatial: 5,
        };
        let eps = 1e-5;
        let x = filled(s.len(), 0.2);
        let gamma = filled(s.channels, 3.0);
        let beta = filled(s.channels, 7.0);
        let w = filled(s.len(), 11.0);
        for relu in [false, true] {
            let out = train(s, &x, &gamma, &beta, eps, relu);
            let n = Normalization {
                gamma: &gamma,
                beta: &beta,
                mean: &out.mean,
                var: &out.variance,
                eps,
            };
            let inf = inference(s, &x, &n, relu);
            for (a, b) in out.output.iter().zip(&inf) {
                assert!((a - b).abs() < 1e-5);
            }
            if relu {
                assert!(out.output.contains(&0.0) && out.output.iter().any(|&v| v > 0.0));
            }
            let (dx, dg, db) = train_backward(s, &x, &n, relu, &w);
            let f64s = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<f64>>();
            let (xd, gd, bd) = (f64s(&x), f64s(&gamma), f64s(&beta));
            let h = 1e-6;
            let fd = |which: usize, i: usize| {
                let (mut xp, mut gp, mut bp) = (xd.clone(), gd.clone(), bd.clone());
                let (mut xm, mut gm, mut bm) = (xd.clone(), gd.clone(), bd.clone());
                match which {
                    0 => (xp[i] += h, xm[i] -= h),
                    1 => (gp[i] += h, gm[i] -= h),
                    _ => (bp[i] += h, bm[i] -= h),
                };
                (loss(s, &xp, &gp, &bp, &w, eps, relu) - loss(s, &xm, &gm, &bm, &w, eps, relu))
                    / (2.0 * h)
            };
            for (i, &d) in dx.iter().enumerate() {
                assert!((d as f64 - fd(0, i)).abs() < 1e-3, "relu {relu} dx[{i}]");
            }
            for c in 0..s.channels {
                assert!(
                    (dg[c] as f64 - fd(1, c)).abs() < 1e-3,
                    "relu {relu} dgamma[{c}]"
                );
                assert!(
                    (db[c] as f64 - fd(2, c)).abs() < 1e-3,
                    "relu {relu} dbeta[{c}]"
                );
            }
        }
    }
}
