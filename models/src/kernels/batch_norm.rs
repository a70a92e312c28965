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
        .map(|c| {
            let a = f64::from(gamma[c]) / (var[c] + eps).sqrt();
            (a as f32, (f64::from(beta[c]) - a * mean[c]) as f32)
        })
        .collect()
}

/// The training forward (the module docs' two passes); `relu` applies `max(0, .)` to the
/// output in the same pass.
pub fn train(s: BnShape, x: &[f32], gamma: &[f32], beta: &[f32], eps: f64, relu: bool) -> BnTrain {
    assert_eq!(x.len(), s.len(), "batch norm input length");
    assert!(gamma.len() == s.channels && beta.len() == s.channels);
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
            (f64::from(k) + m1, (m2 - m1 * m1).max(0.0))
        })
        .collect();
    let mean: Vec<f64> = stats.iter().map(|p| p.0).collect();
    let var: Vec<f64> = stats.iter().map(|p| p.1).collect();
    BnTrain {
        output: apply(s, x, &affine(gamma, beta, &mean, &var, eps), relu),
        mean: mean.iter().map(|&v| v as f32).collect(),
        variance: var.iter().map(|&v| v as f32).collect(),
    }
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
        .for_each(|(plane, (yp, xp))| {
            let (a, b) = affine[plane % s.channels];
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
        });
    // SAFETY: the first `n` cells were split into the same pieces as `x`, which holds `n`
    // elements, and both branches above wrote every cell of every piece.
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
            (db, dxm * inv_std[c])
        })
        .collect();
    let n = s.count();
    // dx = k_c dy + a_c x + b_c (dy masked by the ReLU), expanded per channel.
    let coef: Vec<(f32, f32, f32)> = (0..s.channels)
        .map(|c| {
            let (db, dg) = sums[c];
            let (m, r) = (mean64[c], inv_std[c]);
            let k = f64::from(gamma[c]) * r;
            let a = -k * dg / n * r;
            let b = -k * db / n - a * m;
            (k as f32, a as f32, b as f32)
        })
        .collect();
    // Not zeroed first (a zeroed vector cost a `memset` of every element).
    let n_dx = x.len();
    assert_eq!(
        n_dx,
        dy.len(),
        "batch norm's input and output gradient lengths"
    );
    let mut dx: Vec<f32> = Vec::with_capacity(n_dx);
    dx.spare_capacity_mut()[..n_dx]
        .par_chunks_mut(s.spatial.max(1))
        .zip(
            x.par_chunks(s.spatial.max(1))
                .zip(dy.par_chunks(s.spatial.max(1))),
        )
        .enumerate()
        .for_each(|(plane, (out, (xp, dp)))| {
            let c = plane % s.channels;
            let (k, a, b) = coef[c];
            vectorized(
                #[inline(always)]
                || {
                    if relu {
                        let (fa, fb) = forward[c];
                        for ((o, &xv), &d) in out.iter_mut().zip(xp).zip(dp) {
                            let d = if fa * xv + fb > 0.0 { d } else { 0.0 };
                            o.write(k * d + a * xv + b);
                        }
                    } else {
                        for ((o, &xv), &d) in out.iter_mut().zip(xp).zip(dp) {
                            o.write(k * d + a * xv + b);
                        }
                    }
                },
            )
        });
    // SAFETY: the first `n_dx` cells were split into the same pieces as `x` and `dy`, which
    // both hold `n_dx` elements, and both branches above wrote every cell of every piece.
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
