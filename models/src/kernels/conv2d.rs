//! 2-D convolution (groups 1) on contiguous NCHW `f32` slices, forward and both gradients, by
//! im2col / col2im and one matrix product per image:
//!
//! - forward: `Y_b = W col(X_b)`, with `W` the `[C_out, C_in kh kw]` weight matrix and
//!   `col(X_b)` the `[C_in kh kw, H_out W_out]` patch matrix of image `b`,
//!   `col[(c, i, j), (oy, ox)] = X[c, oy s_h - p_h + i d_h, ox s_w - p_w + j d_w]` (0 outside);
//! - input gradient: `dX_b = col^T(W^T dY_b)`, col2im adding each patch entry back where it came
//!   from;
//! - weight gradient: `dW = sum_b dY_b col(X_b)^T`.
//!
//! A 1 x 1 convolution with stride 1 and no padding needs no patch matrix: `col(X_b) = X_b`.
//! Images are split over Rayon's threads; each thread keeps one patch buffer, and the weight
//! gradient sums one accumulator per thread. Two alternatives for small maps, where one
//! image's product is short (ResNet-20's 14 x 14 and 7 x 7 stages), were measured no faster on
//! the project's 2-core machine and dropped: one patch matrix for the whole batch with a
//! product split by the `gemm` crate (3.9-4.3 ms against 5.8-7.2 for the 32 -> 32 convolution
//! at 14 x 14, forward and backward at batch 32), and groups of images with about 1,024 output
//! positions per product (ResNet-20 step 107-139 ms against 105-137 per image, alternating
//! runs; this machine's timings vary by 20% from one run to the next). (One patch matrix for the whole batch and one
//! product over it, which keeps the product's inner dimension long at ResNet-20's 14 x 14 and
//! 7 x 7 maps, measured no faster on the project's 2-core machine: 3.9-4.3 ms against 5.8-7.2
//! for the 32 -> 32 convolution at 14 x 14, forward and backward at batch 32.)

use rayon::prelude::*;

use super::gemm::{View, matmul};

/// The geometry of one convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Images.
    pub batch: usize,
    /// Input channels.
    pub c_in: usize,
    /// Input height and width.
    pub input: [usize; 2],
    /// Output channels.
    pub c_out: usize,
    /// Kernel height and width.
    pub kernel: [usize; 2],
    /// Stride.
    pub stride: [usize; 2],
    /// Zero padding on each side.
    pub padding: [usize; 2],
    /// Dilation.
    pub dilation: [usize; 2],
}

impl ConvGeometry {
    /// Output height and width: `(in + 2 p - d (k - 1) - 1) / s + 1`.
    pub fn output(&self) -> [usize; 2] {
        let dim = |a: usize| {
            let span = self.dilation[a] * (self.kernel[a] - 1) + 1;
            (self.input[a] + 2 * self.padding[a]).saturating_sub(span) / self.stride[a] + 1
        };
        [dim(0), dim(1)]
    }

    /// Rows of the patch matrix: `C_in kh kw`.
    fn k(&self) -> usize {
        self.c_in * self.kernel[0] * self.kernel[1]
    }

    /// Whether the patch matrix is the image itself (1 x 1, stride 1, no padding).
    fn is_pointwise(&self) -> bool {
        self.kernel == [1, 1] && self.stride == [1, 1] && self.padding == [0, 0]
    }

    fn in_len(&self) -> usize {
        self.c_in * self.input[0] * self.input[1]
    }

    fn out_len(&self) -> usize {
        let [h, w] = self.output();
        self.c_out * h * w
    }

    /// Output positions `o` along axis `a` whose input coordinate `o s - p + t d` (`t` the
    /// kernel tap) lies inside the image: a half-open range.
    fn valid(&self, a: usize, tap: usize, out: usize) -> (usize, usize) {
        let (s, p, n) = (self.stride[a], self.padding[a], self.input[a]);
        let shift = tap * self.dilation[a];
        // o s + shift >= p  and  o s + shift < p + n
        let lo = if shift >= p {
            0
        } else {
            (p - shift).div_ceil(s)
        };
        let hi = if p + n > shift {
            ((p + n - shift).div_ceil(s)).min(out)
        } else {
            0
        };
        (lo.min(hi), hi)
    }
}

/// `dst = src` for the short runs of one image row: eight lanes at a time (a fixed-size copy that
/// the compiler inlines, where a `memcpy` call per run of ~28 values costs as much as the copy).
#[inline]
fn copy_run(dst: &mut [f32], src: &[f32]) {
    let mut d = dst.chunks_exact_mut(8);
    let mut s = src.chunks_exact(8);
    for (a, b) in (&mut d).zip(&mut s) {
        let b: &[f32; 8] = b.try_into().expect("eight lanes");
        a.copy_from_slice(b);
    }
    for (a, b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *a = *b;
    }
}

/// `dst += src`, as [`copy_run`].
#[inline]
fn add_run(dst: &mut [f32], src: &[f32]) {
    let mut d = dst.chunks_exact_mut(8);
    let mut s = src.chunks_exact(8);
    for (a, b) in (&mut d).zip(&mut s) {
        for l in 0..8 {
            a[l] += b[l];
        }
    }
    for (a, b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *a += *b;
    }
}

/// Row `(i, j)` of one channel's patch matrix: `out[(oy, ox)] = plane[oy s - p + i d, ...]`, 0
/// outside the image (`out` has `H_out W_out` entries).
fn patch_row(g: &ConvGeometry, plane: &[f32], i: usize, j: usize, out: &mut [f32]) {
    let w = g.input[1];
    let [oh, ow] = g.output();
    let (ylo, yhi) = g.valid(0, i, oh);
    let (xlo, xhi) = g.valid(1, j, ow);
    for oy in 0..oh {
        let out = &mut out[oy * ow..(oy + 1) * ow];
        if oy < ylo || oy >= yhi || xlo >= xhi {
            out.fill(0.0);
            continue;
        }
        let iy = oy * g.stride[0] + i * g.dilation[0] - g.padding[0];
        let src = &plane[iy * w..(iy + 1) * w];
        let (head, rest) = out.split_at_mut(xlo);
        for o in head.iter_mut().chain(rest[xhi - xlo..].iter_mut()) {
            *o = 0.0;
        }
        let x0 = xlo * g.stride[1] + j * g.dilation[1] - g.padding[1];
        if g.stride[1] == 1 {
            copy_run(&mut out[xlo..xhi], &src[x0..x0 + (xhi - xlo)]);
        } else {
            for (k, o) in out[xlo..xhi].iter_mut().enumerate() {
                *o = src[x0 + k * g.stride[1]];
            }
        }
    }
}

/// The adjoint of [`patch_row`]: add `row` back into `plane`.
fn add_patch_row(g: &ConvGeometry, row: &[f32], i: usize, j: usize, plane: &mut [f32]) {
    let w = g.input[1];
    let [oh, ow] = g.output();
    let (ylo, yhi) = g.valid(0, i, oh);
    let (xlo, xhi) = g.valid(1, j, ow);
    if xlo >= xhi {
        return;
    }
    for oy in ylo..yhi {
        let iy = oy * g.stride[0] + i * g.dilation[0] - g.padding[0];
        let dst = &mut plane[iy * w..(iy + 1) * w];
        let src = &row[oy * ow + xlo..oy * ow + xhi];
        let x0 = xlo * g.stride[1] + j * g.dilation[1] - g.padding[1];
        if g.stride[1] == 1 {
            add_run(&mut dst[x0..x0 + src.len()], src);
        } else {
            for (k, s) in src.iter().enumerate() {
                dst[x0 + k * g.stride[1]] += s;
            }
        }
    }
}

/// `(c, i, j)` of patch-matrix row `r`.
fn tap(g: &ConvGeometry, r: usize) -> (usize, usize, usize) {
    let [kh, kw] = g.kernel;
    (r / (kh * kw), (r / kw) % kh, r % kw)
}

/// Fill `col` (`[C_in kh kw, H_out W_out]`) with the patches of one image `x` (`[C_in, H, W]`).
fn im2col(g: &ConvGeometry, x: &[f32], col: &mut [f32]) {
    let plane = g.input[0] * g.input[1];
    let p = g.output()[0] * g.output()[1];
    for (r, row) in col.chunks_mut(p).enumerate().take(g.k()) {
        let (c, i, j) = tap(g, r);
        patch_row(g, &x[c * plane..(c + 1) * plane], i, j, row);
    }
}

/// Add the patch matrix `col` into one image gradient `dx` (`[C_in, H, W]`, zeros on entry).
fn col2im(g: &ConvGeometry, col: &[f32], dx: &mut [f32]) {
    let plane = g.input[0] * g.input[1];
    let p = g.output()[0] * g.output()[1];
    for (r, row) in col.chunks(p).enumerate().take(g.k()) {
        let (c, i, j) = tap(g, r);
        add_patch_row(g, row, i, j, &mut dx[c * plane..(c + 1) * plane]);
    }
}

/// The forward convolution: `y` (`[B, C_out, H_out, W_out]`) from `x` (`[B, C_in, H, W]`) and
/// `weight` (`[C_out, C_in, kh, kw]`), without bias.
pub fn forward(g: &ConvGeometry, x: &[f32], weight: &[f32]) -> Vec<f32> {
    let [oh, ow] = g.output();
    let (k, p) = (g.k(), oh * ow);
    assert_eq!(x.len(), g.batch * g.in_len(), "conv2d input length");
    assert_eq!(weight.len(), g.c_out * k, "conv2d weight length");
    let wv = View::rows(g.c_out, k);
    let mut y = vec![0.0f32; g.batch * g.out_len()];
    y.par_chunks_mut(g.out_len().max(1))
        .zip(x.par_chunks(g.in_len().max(1)))
        .for_each_init(Vec::new, |col: &mut Vec<f32>, (yb, xb)| {
            let src: &[f32] = if g.is_pointwise() {
                xb
            } else {
                col.resize(k * p, 0.0);
                im2col(g, xb, col);
                col
            };
            matmul(
                yb,
                View::rows(g.c_out, p),
                weight,
                wv,
                src,
                View::rows(k, p),
                false,
            );
        });
    y
}

/// The gradient with respect to the input, `[B, C_in, H, W]`, from the output gradient `dy`.
pub fn input_grad(g: &ConvGeometry, weight: &[f32], dy: &[f32]) -> Vec<f32> {
    let [oh, ow] = g.output();
    let (k, p) = (g.k(), oh * ow);
    assert_eq!(
        dy.len(),
        g.batch * g.out_len(),
        "conv2d output gradient length"
    );
    let wt = View::rows(g.c_out, k).t();
    let mut dx = vec![0.0f32; g.batch * g.in_len()];
    dx.par_chunks_mut(g.in_len().max(1))
        .zip(dy.par_chunks(g.out_len().max(1)))
        .for_each_init(Vec::new, |col: &mut Vec<f32>, (dxb, dyb)| {
            let dyv = View::rows(g.c_out, p);
            if g.is_pointwise() {
                matmul(dxb, View::rows(k, p), weight, wt, dyb, dyv, false);
            } else {
                col.resize(k * p, 0.0);
                matmul(col, View::rows(k, p), weight, wt, dyb, dyv, false);
                col2im(g, col, dxb);
            }
        });
    dx
}

/// The gradient with respect to the weight, `[C_out, C_in, kh, kw]`.
pub fn weight_grad(g: &ConvGeometry, x: &[f32], dy: &[f32]) -> Vec<f32> {
    let [oh, ow] = g.output();
    let (k, p) = (g.k(), oh * ow);
    assert_eq!(x.len(), g.batch * g.in_len(), "conv2d input length");
    assert_eq!(
        dy.len(),
        g.batch * g.out_len(),
        "conv2d output gradient length"
    );
    let dw_len = g.c_out * k;
    let threads = rayon::current_num_threads().max(1);
    let per = g.batch.div_ceil(threads).max(1);
    let partial: Vec<Vec<f32>> = (0..g.batch.div_ceil(per))
        .into_par_iter()
        .map(|chunk| {
            let mut dw = vec![0.0f32; dw_len];
            let mut col = Vec::new();
            for b in chunk * per..((chunk + 1) * per).min(g.batch) {
                let xb = &x[b * g.in_len()..(b + 1) * g.in_len()];
                let dyb = &dy[b * g.out_len()..(b + 1) * g.out_len()];
                let src: &[f32] = if g.is_pointwise() {
                    xb
                } else {
                    col.resize(k * p, 0.0);
                    im2col(g, xb, &mut col);
                    &col
                };
                // dW [C_out, K] += dY_b [C_out, P] col^T [P, K]
                matmul(
                    &mut dw,
                    View::rows(g.c_out, k),
                    dyb,
                    View::rows(g.c_out, p),
                    src,
                    View::rows(k, p).t(),
                    true,
                );
            }
            dw
        })
        .collect();
    let mut iter = partial.into_iter();
    let mut dw = iter.next().unwrap_or_else(|| vec![0.0; dw_len]);
    for other in iter {
        for (a, b) in dw.iter_mut().zip(other) {
            *a += b;
        }
    }
    dw
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The convolution by its definition, in f64.
    fn direct(g: &ConvGeometry, x: &[f32], w: &[f32]) -> Vec<f64> {
        let [h, wd] = g.input;
        let [oh, ow] = g.output();
        let [kh, kw] = g.kernel;
        let mut y = vec![0.0f64; g.batch * g.c_out * oh * ow];
        for b in 0..g.batch {
            for co in 0..g.c_out {
                for oy in 0..oh {
                    for ox in 0..ow {
                        let mut s = 0.0f64;
                        for c in 0..g.c_in {
                            for i in 0..kh {
                                for j in 0..kw {
                                    let iy = (oy * g.stride[0] + i * g.dilation[0]) as isize
                                        - g.padding[0] as isize;
                                    let ix = (ox * g.stride[1] + j * g.dilation[1]) as isize
                                        - g.padding[1] as isize;
                                    if iy < 0 || ix < 0 || iy >= h as isize || ix >= wd as isize {
                                        continue;
                                    }
                                    let xv = x
                                        [((b * g.c_in + c) * h + iy as usize) * wd + ix as usize]
                                        as f64;
                                    s += xv * w[((co * g.c_in + c) * kh + i) * kw + j] as f64;
                                }
                            }
                        }
                        y[((b * g.c_out + co) * oh + oy) * ow + ox] = s;
                    }
                }
            }
        }
        y
    }

    fn filled(n: usize, seed: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32 + seed) * 0.7311).sin()).collect()
    }

    fn geometries() -> Vec<ConvGeometry> {
        let g = |c_in, input, c_out, kernel, stride, padding, dilation| ConvGeometry {
            batch: 3,
            c_in,
            input,
            c_out,
            kernel,
            stride,
            padding,
            dilation,
        };
        vec![
            g(2, [7, 6], 3, [3, 3], [1, 1], [1, 1], [1, 1]),
            g(3, [9, 8], 4, [3, 3], [2, 2], [1, 1], [1, 1]),
            g(4, [5, 5], 2, [1, 1], [1, 1], [0, 0], [1, 1]),
            g(4, [6, 7], 2, [1, 1], [2, 2], [0, 0], [1, 1]),
            g(2, [11, 10], 3, [7, 7], [2, 2], [3, 3], [1, 1]),
            g(2, [8, 9], 2, [3, 2], [1, 2], [2, 0], [2, 1]),
            // Larger maps.
            g(2, [18, 17], 3, [3, 3], [1, 1], [1, 1], [1, 1]),
            g(3, [17, 16], 2, [1, 1], [1, 1], [0, 0], [1, 1]),
        ]
    }

    #[test]
    fn forward_and_gradients_match_the_definition() {
        for g in geometries() {
            let [oh, ow] = g.output();
            let x = filled(g.batch * g.in_len(), 0.3);
            let w = filled(g.c_out * g.k(), 1.9);
            let y = forward(&g, &x, &w);
            let want = direct(&g, &x, &w);
            for (a, b) in y.iter().zip(&want) {
                assert!((*a as f64 - b).abs() < 1e-4, "{g:?}: {a} vs {b}");
            }
            // <dY, conv(X, W)> is bilinear: its gradients are the adjoints, checked exactly
            // against the definition by perturbing one coordinate at a time in f64.
            let dy = filled(g.batch * g.c_out * oh * ow, 4.2);
            let inner = |x: &[f32], w: &[f32]| -> f64 {
                direct(&g, x, w)
                    .iter()
                    .zip(&dy)
                    .map(|(a, b)| a * *b as f64)
                    .sum()
            };
            let dx = input_grad(&g, &w, &dy);
            let dw = weight_grad(&g, &x, &dy);
            for idx in (0..x.len()).step_by(7) {
                let mut e = vec![0.0f32; x.len()];
                e[idx] = 1.0;
                let want = inner(&e, &w);
                assert!((dx[idx] as f64 - want).abs() < 1e-4, "{g:?} dx[{idx}]");
            }
            for idx in 0..w.len() {
                let mut e = vec![0.0f32; w.len()];
                e[idx] = 1.0;
                let want = inner(&x, &e);
                assert!((dw[idx] as f64 - want).abs() < 1e-3, "{g:?} dw[{idx}]");
            }
        }
    }
}
