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
//!
//! A stride-1 convolution with at least [`SHIFTED_MIN_CHANNELS`] input channels and padding
//! `p <= d (k - 1)` needs none either ("shifted windows"). A group of `nb` images is laid side
//! by side in one zero-padded, channels-last strip `P = [H_p, W_s, C_in]` (`H_p = H + 2 p_h`,
//! `W_s = p_w + nb (W + p_w)`: neighbours share `p_w` zero columns, as far as a stride-1
//! window reaches past an image's edge). Output `(oy, ox)` of image `b` is position
//! `q = oy W_s + b (W + p_w) + ox`, and reads `P[q + o_(i,j), c]` for tap `(i, j)`,
//! `o_(i,j) = i d_h W_s + j d_w`. With `d_w = 1` the `kw` taps of kernel row `i` read the
//! `kw C_in` consecutive entries `P[q + o_(i,0) ..][.. kw C_in]` (channels last, the positions
//! `q + o_(i,0) + j` follow each other), so that one product covers a kernel row:
//!
//! - forward: `Y' = sum_i P_i W_i`, `P_i = [Q, kw C_in]` the window from position `o_(i,0)`
//!   whose rows, one per output position, start `C_in` entries apart and overlap,
//!   `W_i[(j, c), o] = W[o, c, i, j]` (`[kw C_in, C_out]`), and
//!   `Q = (H_out - 1) W_s + (nb - 1)(W + p_w) + W_out`: `kh` products (3 for a 3 x 3 kernel,
//!   with inner dimension `3 C_in`, where one product per tap would make 9 with `C_in`), no
//!   patch matrix; the unused positions of `Y' = [Q, C_out]` (the shared columns) are dropped
//!   when it is copied, transposed, to `Y`. With `d_w > 1`, one product per tap;
//! - input gradient: at stride 1 the adjoint is itself a convolution, of `dY` with the kernel
//!   flipped in both axes and its channels swapped, `W'[c, o, i, j] = W[o, c, kh-1-i, kw-1-j]`,
//!   padding `d (k - 1) - p`: the forward above, applied to `dY`;
//! - weight gradient: `dW_i += P_i^T dY'` per group, `dY' = [Q, C_out]` the output gradient
//!   spread over the strip's positions (zeros in the unused ones).
//!
//! The layout changes (NCHW images into the strip, `Y'` back to NCHW, `dY` into `dY'`) are
//! transposing copies in 8 x 8 tiles. Measured (`bench_step`, ResNet-20 step, batch 32, the
//! same binaries alternated): one thread 125 ms median of five runs against 140 with one
//! product per tap over a `[C_in, H_p, W_s]` strip; the weight gradient gained most (16 -> 16
//! at 28 x 28, one thread: 1.7 against 2.4 ms), the 32 -> 32 forward at 14 x 14 lost (1.9
//! against 1.7 ms).
//!
//! On a CPU with AVX-512F, a forward convolution with at most [`PLANAR_MAX_CHANNELS`] input
//! channels lays its strip out channel by channel instead (`[C_in, H_p, W_s]`, image rows
//! copied whole) and runs `planar`'s kernel, which reads the strip where it lies and writes
//! `Y'` channel by channel: no transposing copy in or out, the same sums in the same order as
//! `gemm`'s products (the same bits, tested). So does the input gradient of the one-pass
//! backward at up to as many output channels, whose weight gradient then reads `dY'` from
//! that planar strip.
//!
//! Groups hold about [`STRIP_POSITIONS`] positions, so that the products of small maps stay
//! long (ResNet-20's 7 x 7 stage: 16 images per strip).
//!
//! Images are split over Rayon's threads: one per task for im2col, chunks of
//! [`GRAD_CHUNK_IMAGES`] for shifted windows, each chunk in strips of equal size (the strips
//! of 14 x 14 maps held 10, 10, 10 and 2 images of a batch of 32, so that one thread had 20
//! and the other 12: 32 -> 32 at 14 x 14 took 2.73 ms forward and backward, 2.23 in chunks
//! of two strips of 8; 16 -> 16 at 28 x 28 2.59 -> 2.34). The strips and the spread output
//! gradients are kept per thread and layout across calls, so that their zero padding is
//! written once (`strip::scratch`). The weight gradient sums one accumulator per chunk of
//! [`GRAD_CHUNK_IMAGES`] images, chunks in order: no sum's order depends on the thread count,
//! so a run prints the same figures on 1, 2 or 16 threads (with chunks per thread, 1 and 2
//! threads gave 0.9790 / 0.9797 and 0.9781 / 0.9767 for the same CE run, `cifar_lt --data
//! fashion-mnist --positive 3 --limit 3000 --epochs 1 --method ce`; now both the latter). Measured on the
//! project's 2-core machine (`bench_step --kernels`: batch 32, forward + both gradients; its
//! timings vary by 20% from one run to the next): shifted windows replaced im2col/col2im, which
//! took about a quarter of a training step copying patches (`perf` profile), and took the
//! 16 -> 16 convolution at 28 x 28 from 5.9 to 3.4 ms, 32 -> 32 at 14 x 14 from 4.9 to 3.5 and
//! 64 -> 64 at 7 x 7 from 5.5 to 2.7 (one image per strip: 4.8, 4.1 and 3.9). For im2col, one
//! patch matrix for the whole batch with a product split by the `gemm` crate measured no
//! faster and was dropped.

use rayon::prelude::*;

use std::mem::MaybeUninit;

use super::gemm::{View, matmul};
use super::transpose::as_uninit;

mod im2col;
mod planar;
mod shifted;
mod strip;

use im2col::{col2im, im2col};
pub use shifted::PLANAR_MAX_CHANNELS;
use shifted::{rows_last, weight_grad_shifted};
pub use strip::STRIP_POSITIONS;
use strip::Strip;

/// Fewer input channels than this go through im2col even at stride 1: each shifted-window
/// product's inner dimension is `C_in`, and the grayscale stem of ResNet-20 (`C_in = 1`) took
/// 1.0 ms forward and backward by shifted windows against 0.7 by im2col (batch 32, 28 x 28).
pub const SHIFTED_MIN_CHANNELS: usize = 8;

/// Images per accumulator of the weight gradient, and at most per strip: 16 keeps ResNet-20's
/// batches of 32 in two chunks, one per core of the project's 2-core machine.
pub const GRAD_CHUNK_IMAGES: usize = 16;

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
    /// Output height and width: `(in + 2 p - d (k - 1) - 1) / s + 1`, 0 where the kernel's span
    /// exceeds the padded input.
    pub fn output(&self) -> [usize; 2] {
        let dim = |a: usize| {
            let span = self.dilation[a] * (self.kernel[a] - 1) + 1;
            match (self.input[a] + 2 * self.padding[a]).checked_sub(span) {
                Some(room) => room / self.stride[a] + 1,
                None => 0,
            }
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

    /// Whether the stride-1 shifted-window products apply: any kernel but a pointwise one,
    /// with stride 1, at least [`SHIFTED_MIN_CHANNELS`] input channels and no more padding than
    /// the kernel's span less one (`p <= d (k - 1)`, so that the input gradient is a
    /// convolution with padding `d (k - 1) - p >= 0`).
    fn is_shifted(&self) -> bool {
        self.stride == [1, 1]
            && !self.is_pointwise()
            && self.c_in >= SHIFTED_MIN_CHANNELS
            && (0..2).all(|a| self.padding[a] <= self.dilation[a] * (self.kernel[a] - 1))
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

/// `dst = src` for the short runs of one image row, into cells that may be uninitialized: eight
/// lanes at a time (a fixed-size copy that the compiler inlines, where a `memcpy` call per run
/// of ~28 values costs as much as the copy).
#[inline]
fn write_run(dst: &mut [MaybeUninit<f32>], src: &[f32]) {
    let mut d = dst.chunks_exact_mut(8);
    let mut s = src.chunks_exact(8);
    for (a, b) in (&mut d).zip(&mut s) {
        let a: &mut [MaybeUninit<f32>; 8] = a.try_into().expect("eight lanes");
        let b: &[f32; 8] = b.try_into().expect("eight lanes");
        for l in 0..8 {
            a[l].write(b[l]);
        }
    }
    for (a, b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        a.write(*b);
    }
}

/// `cells` set to zero, as initialized numbers: the im2col paths zero each image's output in
/// its own task, where a `vec![0.0; n]` for the batch had run on one core while the other
/// waited (0.4% of a ResNet-20 step's samples in `perf`).
fn zeroed(cells: &mut [MaybeUninit<f32>]) -> &mut [f32] {
    for c in cells.iter_mut() {
        c.write(0.0);
    }
    // SAFETY: every cell was just written, and `MaybeUninit<f32>` has the layout of `f32`.
    unsafe { &mut *(cells as *mut [MaybeUninit<f32>] as *mut [f32]) }
}

/// `dst = src`, as [`write_run`].
#[inline]
fn copy_run(dst: &mut [f32], src: &[f32]) {
    write_run(as_uninit(dst), src);
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

/// The forward convolution: `y` (`[B, C_out, H_out, W_out]`) from `x` (`[B, C_in, H, W]`) and
/// `weight` (`[C_out, C_in, kh, kw]`), without bias.
pub fn forward(g: &ConvGeometry, x: &[f32], weight: &[f32]) -> Vec<f32> {
    let [oh, ow] = g.output();
    let (k, p) = (g.k(), oh * ow);
    assert_eq!(x.len(), g.batch * g.in_len(), "conv2d input length");
    assert_eq!(weight.len(), g.c_out * k, "conv2d weight length");
    if g.out_len() == 0 || g.in_len() == 0 {
        return vec![0.0; g.batch * g.out_len()];
    }
    if g.is_shifted() {
        return shifted::forward(g, x, weight);
    }
    let n = g.batch * g.out_len();
    let mut y: Vec<f32> = Vec::with_capacity(n);
    let wv = View::rows(g.c_out, k);
    y.spare_capacity_mut()[..n]
        .par_chunks_mut(g.out_len())
        .zip(x.par_chunks(g.in_len()))
        .for_each_init(
            || [Vec::new(), Vec::new()],
            |bufs: &mut [Vec<f32>; 2], (yb, xb)| {
                let yb = zeroed(yb);
                let col = &mut bufs[0];
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
            },
        );
    // SAFETY: the first `n` cells were split into one piece per image (`g.batch` of them, as
    // many as `x` holds), and `zeroed` wrote every cell of each piece.
    unsafe { y.set_len(n) };
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
    if g.out_len() == 0 || g.in_len() == 0 {
        return vec![0.0; g.batch * g.in_len()];
    }
    if g.is_shifted() {
        return shifted::input_grad(g, weight, dy);
    }
    let n = g.batch * g.in_len();
    let mut dx: Vec<f32> = Vec::with_capacity(n);
    let wtv = View::rows(g.c_out, k).t();
    dx.spare_capacity_mut()[..n]
        .par_chunks_mut(g.in_len())
        .zip(dy.par_chunks(g.out_len()))
        .for_each_init(
            || [Vec::new(), Vec::new()],
            |bufs: &mut [Vec<f32>; 2], (dxb, dyb)| {
                let dxb = zeroed(dxb);
                let dyv = View::rows(g.c_out, p);
                if g.is_pointwise() {
                    matmul(dxb, View::rows(k, p), weight, wtv, dyb, dyv, false);
                } else {
                    let col = &mut bufs[0];
                    col.resize(k * p, 0.0);
                    matmul(col, View::rows(k, p), weight, wtv, dyb, dyv, false);
                    col2im(g, col, dxb);
                }
            },
        );
    // SAFETY: the first `n` cells were split into one piece per image (`g.batch` of them, as
    // many as `dy` holds), and `zeroed` wrote every cell of each piece.
    unsafe { dx.set_len(n) };
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
    if g.out_len() == 0 || g.in_len() == 0 {
        return vec![0.0; dw_len];
    }
    let shifted = g.is_shifted();
    let per = GRAD_CHUNK_IMAGES;
    let partial: Vec<Vec<f32>> = (0..g.batch.div_ceil(per))
        .into_par_iter()
        .map(|chunk| {
            let mut dw = vec![0.0f32; dw_len];
            let mut col = Vec::new();
            let images = chunk * per..((chunk + 1) * per).min(g.batch);
            if shifted {
                let (nb, end) = (Strip::images(g), images.end);
                for b in images.step_by(nb) {
                    let e = (b + nb).min(end);
                    let xs = &x[b * g.in_len()..e * g.in_len()];
                    let dys = &dy[b * g.out_len()..e * g.out_len()];
                    weight_grad_shifted(g, xs, dys, &mut dw);
                }
                return dw;
            }
            for b in images {
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
    let dw = sum_chunks(partial, dw_len);
    if shifted { rows_last(g, &dw) } else { dw }
}

/// The weight gradient's accumulators, one per chunk of [`GRAD_CHUNK_IMAGES`] images, summed
/// in chunk order (so that no sum's order depends on the thread count); `len` zeros when there
/// are none.
fn sum_chunks(partial: Vec<Vec<f32>>, len: usize) -> Vec<f32> {
    let mut iter = partial.into_iter();
    let mut dw = iter.next().unwrap_or_else(|| vec![0.0; len]);
    for other in iter {
        for (a, b) in dw.iter_mut().zip(other) {
            *a += b;
        }
    }
    dw
}

/// Both gradients of one convolution, `(dX, dW)`, each only when asked for: the same bits as
/// [`input_grad`] and [`weight_grad`]. With both asked for, a stride-1 convolution by shifted
/// windows with "same" padding (ResNet-20's and DenseNet121's 3 x 3 ones) takes them in one
/// pass over the batch that copies `dY` into a channels-last strip once for both
/// (`shifted::backward`; six layout copies per convolution become five).
pub fn backward(
    g: &ConvGeometry,
    x: &[f32],
    weight: &[f32],
    dy: &[f32],
    want: [bool; 2],
) -> (Option<Vec<f32>>, Option<Vec<f32>>) {
    let fused = want == [true, true]
        && g.is_shifted()
        && shifted::shares_strip(g)
        && g.out_len() > 0
        && g.in_len() > 0;
    if fused {
        assert_eq!(x.len(), g.batch * g.in_len(), "conv2d input length");
        assert_eq!(weight.len(), g.c_out * g.k(), "conv2d weight length");
        assert_eq!(
            dy.len(),
            g.batch * g.out_len(),
            "conv2d output gradient length"
        );
        let (dx, dwr) = shifted::backward(g, weight, x, dy);
        return (Some(dx), Some(rows_last(g, &dwr)));
    }
    (
        want[0].then(|| input_grad(g, weight, dy)),
        want[1].then(|| weight_grad(g, x, dy)),
    )
}

#[cfg(test)]
mod tests;
