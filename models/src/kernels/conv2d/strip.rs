//! The strips of shifted-window convolutions: their geometry ([`Strip`]), the copies of
//! images and gradients into them (channels last, or planar for the `planar` kernel) and out
//! of their products, and the per-thread buffers that hold them between calls ([`scratch`]).

use std::cell::RefCell;

use super::ConvGeometry;
use super::planar;
use crate::kernels::gemm::View;
use crate::kernels::transpose::{Blocks, as_uninit, transpose_blocks};

/// Output positions per shifted-window product that a group of images aims at: groups of
/// small maps (ResNet-20's 14 x 14 and 7 x 7 stages) make longer products.
pub const STRIP_POSITIONS: usize = 2048;

/// `nb` images side by side in one zero-padded, channels-last strip `[H_p, W_s, C]`: image
/// `b`'s pixel `(y, x)` at row `y + p_h`, column `p_w + b (W + p_w) + x`, neighbours sharing
/// `p_w` zero columns (at stride 1 a window reaches `p_w` columns past either edge of its
/// image). Output `(oy, ox)` of image `b` sits at position `q = oy W_s + b (W + p_w) + ox` of a
/// product.
#[derive(Debug, Clone, Copy)]
pub(super) struct Strip {
    /// Images in the strip.
    pub(super) nb: usize,
    /// Padded height `H_p = H + 2 p_h`.
    pub(super) hp: usize,
    /// Strip width `W_s = p_w + nb (W + p_w)`.
    pub(super) ws: usize,
    /// Columns from one image to the next, `W + p_w`.
    pub(super) pitch: usize,
    /// Positions of one product, `Q = (H_out - 1) W_s + (nb - 1) pitch + W_out`.
    pub(super) q: usize,
}

impl Strip {
    pub(super) fn new(g: &ConvGeometry, nb: usize) -> Self {
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

    /// Images per strip of the weight gradient: about [`STRIP_POSITIONS`] positions, at most
    /// [`GRAD_CHUNK_IMAGES`](super::GRAD_CHUNK_IMAGES). Not a share per thread: the strips,
    /// and with them the sums' order, must not depend on the thread count.
    pub(super) fn images(g: &ConvGeometry) -> usize {
        let per_image = g.output()[0] * (g.input[1] + g.padding[1]);
        STRIP_POSITIONS
            .div_ceil(per_image.max(1))
            .clamp(1, super::GRAD_CHUNK_IMAGES)
    }

    /// Images per strip of the forward convolution (and so of the input gradient): as many
    /// strips per chunk as [`Strip::images`] makes, evened out (14 x 14 maps: 2 strips of 8
    /// rather than 10 + 6). Each output sums over the same taps in the same order whatever
    /// strip holds it, so the strips change no result; the weight gradient's sums run over a
    /// strip's positions, and its strips stay as they were so that trained figures do not
    /// move.
    pub(super) fn even_images(g: &ConvGeometry) -> usize {
        let per = super::GRAD_CHUNK_IMAGES;
        per.div_ceil(per.div_ceil(Self::images(g)))
    }

    /// Entries of the strip of `g`'s input channels.
    pub(super) fn len(&self, g: &ConvGeometry) -> usize {
        self.hp * self.ws * g.c_in
    }

    /// The products of one convolution, `(o, r, k)`: the window starting at position `o`, its
    /// `k` ([`product_len`]) contiguous entries per position multiplied by rows `r .. r + k` of
    /// the rows-first weight. With no dilation along the width, kernel row `i`'s `kw` taps are
    /// the `kw C_in` entries from position `o_(i,0) = i d_h W_s` on; otherwise one product per
    /// tap `o_(i,j) = i d_h W_s + j d_w`.
    pub(super) fn products(&self, g: &ConvGeometry) -> Vec<(usize, usize, usize)> {
        let [kh, kw] = g.kernel;
        let k = product_len(g);
        (0..kh * kw * g.c_in / k)
            .map(|p| {
                // The product's first tap `(i, j)` (`j = 0` for a whole kernel row).
                let t = p * k / g.c_in;
                let (i, j) = (t / kw, t % kw);
                (i * g.dilation[0] * self.ws + j * g.dilation[1], p * k, k)
            })
            .collect()
    }

    /// The products of [`Strip::products`] for the [`planar`] kernel: per product its taps'
    /// offsets in a plane of the strip and their index `i kw + j` into the weight.
    pub(super) fn planar_products(&self, g: &ConvGeometry) -> Vec<planar::Product> {
        let [kh, kw] = g.kernel;
        let tap =
            |i: usize, j: usize| (i * g.dilation[0] * self.ws + j * g.dilation[1], i * kw + j);
        if g.dilation[1] == 1 {
            (0..kh)
                .map(|i| planar::Product {
                    taps: (0..kw).map(|j| tap(i, j)).collect(),
                })
                .collect()
        } else {
            (0..kh * kw)
                .map(|t| planar::Product {
                    taps: vec![tap(t / kw, t % kw)],
                })
                .collect()
        }
    }

    /// The window of a product with `k` entries per position: `[Q, k]`, rows a position
    /// (`C_in` entries) apart, overlapping when `k > C_in`.
    pub(super) fn window(&self, g: &ConvGeometry, k: usize) -> View {
        View {
            rows: self.q,
            cols: k,
            rs: g.c_in,
            cs: 1,
        }
    }

    /// Position of image `b`'s pixel `(y, 0)` (unpadded coordinates) in the strip.
    pub(super) fn pixel(&self, g: &ConvGeometry, b: usize, y: usize) -> usize {
        (y + g.padding[0]) * self.ws + g.padding[1] + b * self.pitch
    }

    /// Position of image `b`'s output `(y, 0)` in a product.
    pub(super) fn position(&self, b: usize, y: usize) -> usize {
        y * self.ws + b * self.pitch
    }
}

/// Entries per product of [`Strip::products`]: a kernel row's `kw C_in` taps, or one tap's
/// `C_in` when the kernel is dilated along the width.
pub(super) fn product_len(g: &ConvGeometry) -> usize {
    if g.dilation[1] == 1 {
        g.kernel[1] * g.c_in
    } else {
        g.c_in
    }
}

/// What a [`scratch`] buffer holds, which decides what may be left in it between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Use {
    /// A zero-padded strip of images ([`to_strip`]): only the pixels are ever written, the
    /// padding stays zero.
    Strip,
    /// Output gradients spread over a product's positions ([`widen`]): the unused positions
    /// stay zero.
    Spread,
    /// A zero-padded strip of output gradients (`shifted::backward`), as [`Use::Strip`]; apart
    /// from it because a convolution with as many output channels as input channels has the
    /// same layout for both, and `shifted::backward` holds both at once.
    GradientStrip,
    /// A product's output, overwritten whole by each call.
    Product,
    /// A zero-padded planar strip of images or output gradients ([`to_planar`]): only the
    /// pixels are ever written.
    Planar,
    /// The planar products' output, `[C_out, Q]`, overwritten whole by each call.
    PlanarProduct,
}

/// Buffers kept per thread, at most this many (the oldest dropped first): ResNet-20 uses 11
/// layouts, DenseNet121's dense layers more.
const SCRATCH_BUFFERS: usize = 32;

thread_local! {
    static SCRATCH: RefCell<Vec<(Use, ConvGeometry, Vec<f32>)>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` on this thread's buffer for `(use, g)` (`g.batch` the images of a strip), `len`
/// entries, zeroed when it is new, and keep it for the next call: a strip's padding and a
/// spread gradient's unused positions are written once per thread and layout, not per call
/// (the zeroing had been 5% of a ResNet-20 step). The buffer is taken out while `f` runs, so a
/// nested call gets a fresh one.
pub(super) fn scratch<R>(
    kind: Use,
    g: &ConvGeometry,
    len: usize,
    f: impl FnOnce(&mut [f32]) -> R,
) -> R {
    let key = (kind, *g);
    let found = SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let at = s.iter().position(|(k, l, _)| (*k, *l) == key);
        at.map(|i| s.remove(i).2)
    });
    let mut buffer = found
        .filter(|b| b.len() == len)
        .unwrap_or_else(|| vec![0.0; len]);
    let out = f(&mut buffer);
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() == SCRATCH_BUFFERS {
            s.remove(0);
        }
        s.push((key.0, key.1, buffer));
    });
    out
}

/// Copy images `x` (`[nb, C_in, H, W]`) into the channels-last strip `padded`, whose zero
/// columns and rows stay as they are.
pub(super) fn to_strip(g: &ConvGeometry, st: &Strip, x: &[f32], padded: &mut [f32]) {
    let [h, w] = g.input;
    let c = g.c_in;
    let starts: Vec<(usize, usize)> = (0..st.nb * h)
        .map(|r| ((r / h * c * h + r % h) * w, st.pixel(g, r / h, r % h) * c))
        .collect();
    let shape = Blocks {
        rows: c,
        cols: w,
        s_rs: h * w,
        d_rs: c,
    };
    transpose_blocks(x, as_uninit(padded), shape, &starts);
}

/// Starts of image `b`'s output row `y` in the images' `[nb, C, H_out, W_out]` and in a
/// product's `[Q, C]`, for every row of every image of the strip.
pub(super) fn output_rows(g: &ConvGeometry, st: &Strip, c: usize) -> Vec<(usize, usize)> {
    let [oh, ow] = g.output();
    (0..st.nb * oh)
        .map(|r| {
            (
                (r / oh * c * oh + r % oh) * ow,
                st.position(r / oh, r % oh) * c,
            )
        })
        .collect()
}

/// Spread output gradients `dy` (`[nb, C_out, H_out, W_out]`) over `wide` (`[Q, C_out]`,
/// whose unused positions stay zero).
pub(super) fn widen(g: &ConvGeometry, st: &Strip, dy: &[f32], wide: &mut [f32]) {
    let [oh, ow] = g.output();
    let c = g.c_out;
    let shape = Blocks {
        rows: c,
        cols: ow,
        s_rs: oh * ow,
        d_rs: c,
    };
    transpose_blocks(dy, as_uninit(wide), shape, &output_rows(g, st, c));
}

/// Copy images `x` (`[nb, C, H, W]`) into the planar strip `pad` (`[C, H_p, W_s]`) a row at a
/// time; its zero columns and rows stay as they are.
pub(super) fn to_planar(g: &ConvGeometry, st: &Strip, x: &[f32], pad: &mut [f32]) {
    let [h, w] = g.input;
    let plane = st.hp * st.ws;
    for (r, src) in x.chunks_exact(w).enumerate() {
        let (b, c, y) = (r / (g.c_in * h), r / h % g.c_in, r % h);
        let at = c * plane + st.pixel(g, b, y);
        super::copy_run(&mut pad[at..at + w], src);
    }
}
