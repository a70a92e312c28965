//! Stride-1 convolution by shifted windows over a zero-padded strip of images (the layout and
//! equations are in the parent module's docs): one matrix product per kernel tap, no patch
//! matrix.

use super::ConvGeometry;
use super::copy_run;
use crate::kernels::gemm::{View, matmul};

/// `[kh kw, C_out, C_in]`: the weight `[C_out, C_in, kh, kw]` with its taps first.
fn taps_first(g: &ConvGeometry, weight: &[f32]) -> Vec<f32> {
    let taps = g.kernel[0] * g.kernel[1];
    let mut out = vec![0.0f32; weight.len()];
    for (r, w) in weight.iter().enumerate() {
        out[(r % taps) * g.c_out * g.c_in + r / taps] = *w;
    }
    out
}

/// `[C_out, C_in, kh, kw]` from a weight gradient accumulated taps first (`[kh kw, C_out,
/// C_in]`): the inverse of [`taps_first`].
pub(super) fn taps_last(g: &ConvGeometry, dwt: &[f32]) -> Vec<f32> {
    let taps = g.kernel[0] * g.kernel[1];
    let mut out = vec![0.0f32; dwt.len()];
    for (r, o) in out.iter_mut().enumerate() {
        *o = dwt[(r % taps) * g.c_out * g.c_in + r / taps];
    }
    out
}

/// What [`super::forward`] and [`super::input_grad`] need for shifted windows: the weight taps
/// first and the images per strip, or `None` when the geometry goes through im2col.
pub(super) fn plan(g: &ConvGeometry, weight: &[f32]) -> Option<(Vec<f32>, usize)> {
    g.is_shifted()
        .then(|| (taps_first(g, weight), Strip::images(g)))
}

/// Output positions per shifted-window product that a group of images aims at: groups of
/// small maps (ResNet-20's 14 x 14 and 7 x 7 stages) make longer products.
pub const STRIP_POSITIONS: usize = 2048;

/// `nb` images side by side in one zero-padded strip `[C, H_p, W_s]`: image `b`'s pixel
/// `(y, x)` at row `y + p_h`, column `p_w + b (W + p_w) + x`, neighbours sharing `p_w` zero
/// columns (at stride 1 a window reaches `p_w` columns past either edge of its image).
/// Output `(oy, ox)` of image `b` sits at `q = oy W_s + b (W + p_w) + ox` of a product.
#[derive(Debug, Clone, Copy)]
pub(super) struct Strip {
    /// Images in the strip.
    nb: usize,
    /// Padded height `H_p = H + 2 p_h`.
    hp: usize,
    /// Strip width `W_s = p_w + nb (W + p_w)`.
    ws: usize,
    /// Columns from one image to the next, `W + p_w`.
    pitch: usize,
    /// Positions of one product, `Q = (H_out - 1) W_s + (nb - 1) pitch + W_out`.
    q: usize,
}

impl Strip {
    fn new(g: &ConvGeometry, nb: usize) -> Self {
        let [oh, ow] = g.output();
        let pitch = g.input[1] + g.padding[1];
        let ws = g.padding[1] + nb * pitch;
        Strip {
            nb,
            hp: g.input[0] + 2 * g.padding[0],
            ws,
            pitch,
            q: (oh - 1) * ws + (nb - 1) * pitch + ow,
        }
    }

    /// Images per strip for this geometry: about [`STRIP_POSITIONS`] positions, at most
    /// [`GRAD_CHUNK_IMAGES`](super::GRAD_CHUNK_IMAGES) (not a share per thread: the strips, and
    /// with them the sums' order, must not depend on the thread count).
    pub(super) fn images(g: &ConvGeometry) -> usize {
        let per_image = g.output()[0] * (g.input[1] + g.padding[1]);
        STRIP_POSITIONS
            .div_ceil(per_image.max(1))
            .clamp(1, super::GRAD_CHUNK_IMAGES)
    }

    /// Entries of a strip of `channels` channels.
    fn len(&self, channels: usize) -> usize {
        channels * self.hp * self.ws
    }

    /// `o_(i,j) = i d_h W_s + j d_w` for tap `t = i kw + j`.
    fn offset(&self, g: &ConvGeometry, t: usize) -> usize {
        let (i, j) = (t / g.kernel[1], t % g.kernel[1]);
        i * g.dilation[0] * self.ws + j * g.dilation[1]
    }

    /// The window of one tap: `[channels, Q]`, rows a channel apart.
    fn window(&self, channels: usize) -> View {
        View {
            rows: channels,
            cols: self.q,
            rs: self.hp * self.ws,
            cs: 1,
        }
    }

    /// Start of image `b`'s row `y` (unpadded coordinates) in channel `c` of a strip.
    fn pixel(&self, g: &ConvGeometry, c: usize, b: usize, y: usize) -> usize {
        (c * self.hp + y + g.padding[0]) * self.ws + g.padding[1] + b * self.pitch
    }

    /// Start of image `b`'s output row `y` in row `c` of a product (`[C_out, Q]`).
    fn position(&self, c: usize, b: usize, y: usize) -> usize {
        c * self.q + y * self.ws + b * self.pitch
    }

    /// `(b, c, y, r)` for every row `y` of every channel `c` of every image `b` of the strip,
    /// `r` that row's index in the images' own layout `[nb, channels, rows, ..]`.
    fn rows(
        &self,
        channels: usize,
        rows: usize,
    ) -> impl Iterator<Item = (usize, usize, usize, usize)> {
        (0..self.nb * channels * rows)
            .map(move |r| (r / (channels * rows), r / rows % channels, r % rows, r))
    }
}

/// `buffer` as `len` zeros when its length differs (a new layout), else as it is.
fn zeros_once(buffer: &mut Vec<f32>, len: usize) {
    if buffer.len() != len {
        buffer.clear();
        buffer.resize(len, 0.0);
    }
}

/// Copy images `x` (`[nb, C_in, H, W]`) into the strip `padded`, whose zero columns and rows
/// stay as they are.
fn to_strip(g: &ConvGeometry, st: &Strip, x: &[f32], padded: &mut Vec<f32>) {
    let [h, w] = g.input;
    zeros_once(padded, st.len(g.c_in));
    for (b, c, y, r) in st.rows(g.c_in, h) {
        let dst = st.pixel(g, c, b, y);
        copy_run(&mut padded[dst..dst + w], &x[r * w..(r + 1) * w]);
    }
}

/// Spread output gradients `dy` (`[nb, C_out, H_out, W_out]`) over `wide` (`[C_out, Q]`,
/// whose unused columns stay zero).
fn widen(g: &ConvGeometry, st: &Strip, dy: &[f32], wide: &mut Vec<f32>) {
    let [oh, ow] = g.output();
    zeros_once(wide, g.c_out * st.q);
    for (b, c, y, r) in st.rows(g.c_out, oh) {
        let dst = st.position(c, b, y);
        copy_run(&mut wide[dst..dst + ow], &dy[r * ow..(r + 1) * ow]);
    }
}

/// Forward by shifted windows (see the module docs) of one group of images into `y`.
pub(super) fn forward_shifted(
    g: &ConvGeometry,
    wt: &[f32],
    x: &[f32],
    bufs: &mut [Vec<f32>; 2],
    y: &mut [f32],
) {
    let [oh, ow] = g.output();
    let st = Strip::new(g, x.len() / g.in_len());
    let [pad, wide] = bufs;
    to_strip(g, &st, x, pad);
    wide.resize(g.c_out * st.q, 0.0);
    let n = g.c_out * g.c_in;
    for t in 0..g.kernel[0] * g.kernel[1] {
        matmul(
            wide,
            View::rows(g.c_out, st.q),
            &wt[t * n..(t + 1) * n],
            View::rows(g.c_out, g.c_in),
            &pad[st.offset(g, t)..],
            st.window(g.c_in),
            t > 0,
        );
    }
    for (b, c, row, r) in st.rows(g.c_out, oh) {
        let src = st.position(c, b, row);
        copy_run(&mut y[r * ow..(r + 1) * ow], &wide[src..src + ow]);
    }
}

/// Input gradient by shifted windows of one group of images into `dx`.
pub(super) fn input_grad_shifted(
    g: &ConvGeometry,
    wt: &[f32],
    dy: &[f32],
    bufs: &mut [Vec<f32>; 2],
    dx: &mut [f32],
) {
    let [h, w] = g.input;
    let st = Strip::new(g, dy.len() / g.out_len());
    let [pad, wide] = bufs;
    widen(g, &st, dy, wide);
    pad.clear();
    pad.resize(st.len(g.c_in), 0.0);
    let n = g.c_out * g.c_in;
    for t in 0..g.kernel[0] * g.kernel[1] {
        matmul(
            &mut pad[st.offset(g, t)..],
            st.window(g.c_in),
            &wt[t * n..(t + 1) * n],
            View::rows(g.c_out, g.c_in).t(),
            wide,
            View::rows(g.c_out, st.q),
            true,
        );
    }
    for (b, c, y, r) in st.rows(g.c_in, h) {
        let src = st.pixel(g, c, b, y);
        copy_run(&mut dx[r * w..(r + 1) * w], &pad[src..src + w]);
    }
}

/// `dW_(i,j) += dY' P[window]^T` for every tap of one group of images, into `dwt`
/// (`[kh kw, C_out, C_in]`).
pub(super) fn weight_grad_shifted(
    g: &ConvGeometry,
    x: &[f32],
    dy: &[f32],
    bufs: &mut [Vec<f32>; 2],
    dwt: &mut [f32],
) {
    let st = Strip::new(g, x.len() / g.in_len());
    let [pad, wide] = bufs;
    widen(g, &st, dy, wide);
    to_strip(g, &st, x, pad);
    let n = g.c_out * g.c_in;
    for t in 0..g.kernel[0] * g.kernel[1] {
        matmul(
            &mut dwt[t * n..(t + 1) * n],
            View::rows(g.c_out, g.c_in),
            wide,
            View::rows(g.c_out, st.q),
            &pad[st.offset(g, t)..],
            st.window(g.c_in).t(),
            true,
        );
    }
}
