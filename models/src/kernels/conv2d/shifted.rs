//! Stride-1 convolution by shifted windows over a zero-padded, channels-last strip of images
//! (the layout and equations are in the parent module's docs): one matrix product per kernel
//! row (one per tap when the kernel is dilated along the width), no patch matrix.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::ConvGeometry;
use super::planar;
use super::strip::{Strip, Use, output_rows, product_len, scratch, to_planar, to_strip, widen};
use crate::kernels::gemm::{View, matmul};
use crate::kernels::transpose::{Blocks, transpose_blocks};

/// The weight `[C_out, C_in, kh, kw]` as `[kh, kw, C_in, C_out]`: kernel row `i`'s taps are the
/// `[kw C_in, C_out]` block that one product multiplies. Written in the output's order, the
/// reads striding over `C_out` (a few cache lines, reused from one input channel to the
/// next): written in the input's order, the writes to one output channel at 64 channels fell
/// 16 KB apart and thrashed a few L1 sets. 64 -> 64 at 3 x 3 (1,000 calls, one thread): 79
/// -> 20 us per call; [`rows_last`] 72 -> 26; the flip and the re-layout of [`adjoint`],
/// once two passes, 97 -> 17. They run outside the parallel loops, on one core.
fn rows_first(g: &ConvGeometry, weight: &[f32]) -> Vec<f32> {
    let taps = g.kernel[0] * g.kernel[1];
    let (ci, co) = (g.c_in, g.c_out);
    assert_eq!(weight.len(), co * ci * taps, "conv2d weight length");
    let mut out = Vec::with_capacity(weight.len());
    for t in 0..taps {
        for c in 0..ci {
            out.extend((0..co).map(|o| weight[(o * ci + c) * taps + t]));
        }
    }
    out
}

/// `[C_out, C_in, kh, kw]` from a weight gradient accumulated product by product, each
/// product's `k` rows of `[kh, kw, C_in]` (from row `r` on) as a `[C_out, k]` block at `r C_out`
/// ([`weight_grad_from`]). Written in the output's order, as [`rows_first`].
pub(super) fn rows_last(g: &ConvGeometry, dwr: &[f32]) -> Vec<f32> {
    let (taps, k) = (g.kernel[0] * g.kernel[1], product_len(g));
    let (ci, co) = (g.c_in, g.c_out);
    assert_eq!(dwr.len(), co * ci * taps, "conv2d weight gradient length");
    // Tap `t`'s rows `t C_in + c` lie in block `t C_in / k`, from its row `t C_in % k` on.
    let start: Vec<usize> = (0..taps)
        .map(|t| t * ci / k * co * k + t * ci % k)
        .collect();
    let mut out = Vec::with_capacity(dwr.len());
    for o in 0..co {
        for c in 0..ci {
            out.extend(start.iter().map(|s| dwr[s + o * k + c]));
        }
    }
    out
}

/// The input gradient's convolution: at stride 1, `dX` is the correlation of `dY` with the
/// kernel flipped in both axes and its channels swapped, `W'[c, o, i, j] =
/// W[o, c, kh - 1 - i, kw - 1 - j]`, padded by `p' = d (k - 1) - p` (which keeps `dX`'s size;
/// [`ConvGeometry::is_shifted`] requires `p' >= 0`). Returns that geometry and `W'` rows first
/// (as [`rows_first`] lays out the adjoint's weight), in one pass over the weight.
pub(super) fn adjoint(g: &ConvGeometry, weight: &[f32]) -> (ConvGeometry, Vec<f32>) {
    let pad = |a: usize| g.dilation[a] * (g.kernel[a] - 1) - g.padding[a];
    let ga = ConvGeometry {
        batch: g.batch,
        c_in: g.c_out,
        input: g.output(),
        c_out: g.c_in,
        kernel: g.kernel,
        stride: [1, 1],
        padding: [pad(0), pad(1)],
        dilation: g.dilation,
    };
    let taps = g.kernel[0] * g.kernel[1];
    let (ci, co) = (g.c_in, g.c_out);
    assert_eq!(weight.len(), co * ci * taps, "conv2d weight length");
    // Row `(taps - 1 - t, o)` of the adjoint's rows-first weight, its `C_in` columns `c`:
    // `W'[c, o, taps - 1 - t] = W[o, c, t]`.
    let mut wr = Vec::with_capacity(weight.len());
    for t in (0..taps).rev() {
        for o in 0..co {
            wr.extend((0..ci).map(|c| weight[(o * ci + c) * taps + t]));
        }
    }
    (ga, wr)
}

/// The forward convolution by shifted windows: chunks of
/// [`GRAD_CHUNK_IMAGES`](super::GRAD_CHUNK_IMAGES) images split over Rayon's threads (equal
/// work per chunk), each chunk in strips of [`Strip::even_images`] images on per-thread buffers
/// ([`scratch`]).
pub(super) fn forward(g: &ConvGeometry, x: &[f32], weight: &[f32]) -> Vec<f32> {
    forward_rows(g, x, &rows_first(g, weight))
}

/// [`forward`] with the weight already rows first (`wr`, from [`rows_first`] or
/// [`adjoint`]).
fn forward_rows(g: &ConvGeometry, x: &[f32], wr: &[f32]) -> Vec<f32> {
    let (nb, per) = (Strip::even_images(g), super::GRAD_CHUNK_IMAGES);
    // Not zeroed first: the copy out of each group's products writes every output cell.
    let planar = planar_pays(g);
    let n = g.batch * g.out_len();
    let mut y: Vec<f32> = Vec::with_capacity(n);
    y.spare_capacity_mut()[..n]
        .par_chunks_mut(per * g.out_len())
        .zip(x.par_chunks(per * g.in_len()))
        .for_each(|(yc, xc)| {
            for (yb, xb) in yc
                .chunks_mut(nb * g.out_len())
                .zip(xc.chunks(nb * g.in_len()))
            {
                if planar {
                    forward_planar(g, wr, xb, yb);
                } else {
                    forward_shifted(g, wr, xb, yb);
                }
            }
        });
    // SAFETY: the first `n` cells were split into groups of whole images, the images of `x`
    // (`g.batch` of them), and `forward_shifted` and `forward_planar` write every output row
    // of every image of their group, each row whole.
    unsafe { y.set_len(n) };
    y
}

/// Input channels up to which the forward convolution takes the `planar` kernel instead of
/// the channels-last products. Measured on ResNet-20's layers (`bench_step --kernels`, batch
/// 32, 2 threads): the forward 16 -> 16 at 28 x 28 went from 0.72-0.80 to 0.55-0.57 ms,
/// 32 -> 32 at 14 x 14 stayed at 0.54-0.63, and 64 -> 64 at 7 x 7 lost (0.54-0.63 -> 0.65:
/// a tile's window of 64 planes and the weights no longer stay in the L1 cache, where `gemm`
/// packs them). The one-pass `backward` takes the planar kernel up to as many output
/// channels (its input gradient's input): 16 -> 16 at 28 x 28 forward and backward 2.23-2.51
/// -> 1.75-1.90 ms, 32 -> 32 at 14 x 14 1.86-1.93 -> 1.72-1.97 (four alternated rounds; with
/// `dY` copied into both a planar and a channels-last strip it had been no faster).
pub const PLANAR_MAX_CHANNELS: usize = 32;

/// Whether a shifted-window convolution of geometry `g` takes the [`planar`] kernel: a CPU
/// with AVX-512F, at most [`PLANAR_MAX_CHANNELS`] input channels.
fn planar_pays(g: &ConvGeometry) -> bool {
    g.c_in <= PLANAR_MAX_CHANNELS && planar::available()
}

/// The input gradient by shifted windows: the forward convolution of `dy` by the
/// [`adjoint`] geometry and weight.
pub(super) fn input_grad(g: &ConvGeometry, weight: &[f32], dy: &[f32]) -> Vec<f32> {
    let (ga, wr) = adjoint(g, weight);
    forward_rows(&ga, dy, &wr)
}

/// Forward by shifted windows (see the module docs) of one group of images into `y`, with the
/// weight rows first (`wr`, from [`rows_first`]); every cell of `y` is written.
fn forward_shifted(g: &ConvGeometry, wr: &[f32], x: &[f32], y: &mut [MaybeUninit<f32>]) {
    let st = Strip::new(g, x.len() / g.in_len());
    let layout = ConvGeometry { batch: st.nb, ..*g };
    scratch(Use::Strip, &layout, st.len(g), |pad| {
        to_strip(g, &st, x, pad);
        forward_from_strip(g, &st, wr, pad, y);
    })
}

/// The products of [`forward_shifted`] on a strip already filled (`pad`), and their
/// transposing copy into the group's output `y`, every cell of which is written.
fn forward_from_strip(
    g: &ConvGeometry,
    st: &Strip,
    wr: &[f32],
    pad: &[f32],
    y: &mut [MaybeUninit<f32>],
) {
    let [oh, ow] = g.output();
    let layout = ConvGeometry { batch: st.nb, ..*g };
    scratch(Use::Product, &layout, st.q * g.c_out, |wide| {
        for (n, (o, r, k)) in st.products(g).into_iter().enumerate() {
            matmul(
                wide,
                View::rows(st.q, g.c_out),
                &pad[o * g.c_in..],
                st.window(g, k),
                &wr[r * g.c_out..(r + k) * g.c_out],
                View::rows(k, g.c_out),
                n > 0,
            );
        }
        let c = g.c_out;
        let starts: Vec<(usize, usize)> = output_rows(g, st, c)
            .into_iter()
            .map(|(image, product)| (product, image))
            .collect();
        let shape = Blocks {
            rows: ow,
            cols: c,
            s_rs: c,
            d_rs: oh * ow,
        };
        transpose_blocks(wide, y, shape, &starts);
    })
}

/// Whether [`backward`] can hand the input gradient's strip of `dY` to the weight gradient:
/// with "same" padding (`p = d (k - 1) / 2` on both axes, so that the adjoint pads as much),
/// the strip of `dY` (`[H_p, W_s, C_out]`) is the spread output gradient `dY'` (`[Q, C_out]`)
/// shifted by `p_h W_s + p_w` positions, zeros included: both have the pitch `W + p_w`.
pub(super) fn shares_strip(g: &ConvGeometry) -> bool {
    (0..2).all(|a| 2 * g.padding[a] == g.dilation[a] * (g.kernel[a] - 1))
}

/// Both gradients by shifted windows in one pass over the batch, for a geometry that
/// [`shares_strip`]: chunks of [`GRAD_CHUNK_IMAGES`](super::GRAD_CHUNK_IMAGES) images over
/// Rayon's threads, each in the weight gradient's strips of [`Strip::images`] images. Per
/// strip, `dY` is copied once into the adjoint's strip; its products give `dX` (as
/// [`input_grad`]) and, read from `p_h W_s + p_w` positions on, it is the `dY'` of
/// [`weight_grad_shifted`]. Where the adjoint [`planar_pays`], the strip is planar
/// (`[C_out, H_p, W_s]`, rows copied whole): the [`planar`] kernel takes `dX`, and `gemm`
/// reads `dY'` from it with a stride of a plane between channels (it packs its operands
/// either way), so that `dY` is not transposed at all and neither is `dX`. Every sum runs
/// over the same terms in the same order as in [`input_grad`] and [`weight_grad_shifted`]
/// (the strips an output falls in change no product's inner sums): the results are the same
/// bits, one transposing copy of `dY` fewer (three with the planar strip).
/// Returns `dX` (`[B, C_in, H, W]`) and `dW` accumulated product by product (for
/// [`rows_last`]).
pub(super) fn backward(
    g: &ConvGeometry,
    weight: &[f32],
    x: &[f32],
    dy: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    debug_assert!(g.is_shifted() && shares_strip(g));
    let (ga, wr) = adjoint(g, weight);
    let (per, nb) = (super::GRAD_CHUNK_IMAGES, Strip::images(g));
    let planar = planar_pays(&ga);
    let dw_len = g.c_out * g.k();
    let n = g.batch * g.in_len();
    let mut dx: Vec<f32> = Vec::with_capacity(n);
    let partial: Vec<Vec<f32>> = dx.spare_capacity_mut()[..n]
        .par_chunks_mut(per * g.in_len())
        .zip(dy.par_chunks(per * g.out_len()))
        .zip(x.par_chunks(per * g.in_len()))
        .map(|((dxc, dyc), xc)| {
            let mut dw = vec![0.0f32; dw_len];
            for ((dxs, dys), xs) in dxc
                .chunks_mut(nb * g.in_len())
                .zip(dyc.chunks(nb * g.out_len()))
                .zip(xc.chunks(nb * g.in_len()))
            {
                let sta = Strip::new(&ga, dys.len() / ga.in_len());
                let layout = ConvGeometry {
                    batch: sta.nb,
                    ..ga
                };
                let st = Strip::new(g, sta.nb);
                let shift = g.padding[0] * st.ws + g.padding[1];
                if planar {
                    let plane = sta.hp * sta.ws;
                    scratch(Use::Planar, &layout, plane * ga.c_in, |dpad| {
                        to_planar(&ga, &sta, dys, dpad);
                        planar_from_strip(&ga, &sta, &wr, dpad, dxs);
                        let sv = View {
                            rows: st.q,
                            cols: g.c_out,
                            rs: 1,
                            cs: plane,
                        };
                        weight_grad_from(g, &st, xs, &dpad[shift..], sv, &mut dw);
                    });
                } else {
                    scratch(Use::GradientStrip, &layout, sta.len(&ga), |dpad| {
                        to_strip(&ga, &sta, dys, dpad);
                        forward_from_strip(&ga, &sta, &wr, dpad, dxs);
                        let spread = &dpad[shift * g.c_out..][..st.q * g.c_out];
                        let sv = View::rows(st.q, g.c_out);
                        weight_grad_from(g, &st, xs, spread, sv, &mut dw);
                    });
                }
            }
            dw
        })
        .collect();
    // SAFETY: the first `n` cells were split into groups of whole images, the images of `dy`
    // (`g.batch` of them), and `forward_from_strip` writes every cell of its group's `dX`.
    unsafe { dx.set_len(n) };
    (dx, super::sum_chunks(partial, dw_len))
}

/// Forward by shifted windows of one group of images into `y` from a planar strip
/// (`[C_in, H_p, W_s]`, the images' rows copied whole), by the [`planar`] kernel: the same
/// sums as [`forward_shifted`], with copies of image rows in place of its two transposing
/// copies; every cell of `y` is written.
fn forward_planar(g: &ConvGeometry, wr: &[f32], x: &[f32], y: &mut [MaybeUninit<f32>]) {
    let st = Strip::new(g, x.len() / g.in_len());
    let layout = ConvGeometry { batch: st.nb, ..*g };
    scratch(Use::Planar, &layout, st.hp * st.ws * g.c_in, |pad| {
        to_planar(g, &st, x, pad);
        planar_from_strip(g, &st, wr, pad, y);
    })
}

/// The products of [`forward_planar`] on a planar strip already filled (`pad`), and the copy
/// of their rows into the group's output `y`, every cell of which is written.
fn planar_from_strip(
    g: &ConvGeometry,
    st: &Strip,
    wr: &[f32],
    pad: &[f32],
    y: &mut [MaybeUninit<f32>],
) {
    let [oh, ow] = g.output();
    let layout = ConvGeometry { batch: st.nb, ..*g };
    scratch(Use::PlanarProduct, &layout, g.c_out * st.q, |out| {
        let shape = planar::Shape {
            q: st.q,
            c_in: g.c_in,
            plane: st.hp * st.ws,
            c_out: g.c_out,
            out_rs: st.q,
            taps: g.kernel[0] * g.kernel[1],
        };
        planar::products(out, shape, pad, wr, &st.planar_products(g));
        for (r, dst) in y.chunks_exact_mut(ow).enumerate() {
            // Row `r` of the group's output: image `b`, channel `o`, output row `oy`.
            let (b, o, oy) = (r / (g.c_out * oh), r / oh % g.c_out, r % oh);
            let src = &out[o * st.q + st.position(b, oy)..][..ow];
            super::write_run(dst, src);
        }
    })
}

/// `dW_i += P[window_i]^T dY'` for every product of one group of images, into `dwr` (laid
/// out for [`rows_last`]).
pub(super) fn weight_grad_shifted(g: &ConvGeometry, x: &[f32], dy: &[f32], dwr: &mut [f32]) {
    let st = Strip::new(g, x.len() / g.in_len());
    let layout = ConvGeometry { batch: st.nb, ..*g };
    scratch(Use::Spread, &layout, st.q * g.c_out, |wide| {
        widen(g, &st, dy, wide);
        weight_grad_from(g, &st, x, wide, View::rows(st.q, g.c_out), dwr);
    })
}

/// The products of [`weight_grad_shifted`] with the spread output gradient `spread`
/// (`[Q, C_out]`) in hand: `x`'s strip, then `dW_i += P[window_i]^T dY'`, each `dW_i` stored
/// transposed (`[C_out, k]`), so that `gemm` takes the product's `k` rows (48 at 16 channels)
/// as its micro-kernel's long side instead of the `C_out` columns (its 16-row kernel: a
/// load per six multiply-adds): the same sums in the same order.
fn weight_grad_from(
    g: &ConvGeometry,
    st: &Strip,
    x: &[f32],
    spread: &[f32],
    sv: View,
    dwr: &mut [f32],
) {
    let layout = ConvGeometry { batch: st.nb, ..*g };
    scratch(Use::Strip, &layout, st.len(g), |pad| {
        to_strip(g, st, x, pad);
        for (o, r, k) in st.products(g) {
            matmul(
                &mut dwr[r * g.c_out..(r + k) * g.c_out],
                View::rows(g.c_out, k).t(),
                &pad[o * g.c_in..],
                st.window(g, k).t(),
                spread,
                sv,
                true,
            );
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{filled, stride_one};
    use super::*;

    /// A group's forward: [`forward_planar`] or [`forward_shifted`].
    type GroupForward = fn(&ConvGeometry, &[f32], &[f32], &mut [MaybeUninit<f32>]);

    /// One group's output by `f`, as plain numbers.
    fn group(g: &ConvGeometry, wr: &[f32], x: &[f32], f: GroupForward) -> Vec<f32> {
        let n = x.len() / g.in_len() * g.out_len();
        let mut y = vec![f32::NAN; n];
        // SAFETY: `f32` and `MaybeUninit<f32>` have the same layout; `y` is initialized.
        let uninit = unsafe { &mut *(y.as_mut_slice() as *mut [f32] as *mut [MaybeUninit<f32>]) };
        f(g, wr, x, uninit);
        y
    }

    #[test]
    fn relayouts_match_their_definitions() {
        let g = stride_one;
        // A kernel row per product, one tap per product (dilated along the width), unequal
        // channel counts.
        for g in [
            g(2, 16, [7, 7], 16, [3, 3], [1, 1], [1, 1]),
            g(2, 5, [9, 8], 3, [3, 2], [2, 0], [2, 1]),
            g(2, 3, [9, 9], 7, [2, 3], [1, 1], [1, 1]),
        ] {
            let (ci, co, taps) = (g.c_in, g.c_out, g.kernel[0] * g.kernel[1]);
            let w = filled(co * g.k(), 0.7);
            let at = |o: usize, c: usize, t: usize| w[(o * ci + c) * taps + t];
            let (wr, (ga, wa)) = (rows_first(&g, &w), adjoint(&g, &w));
            assert_eq!((ga.c_in, ga.c_out), (co, ci));
            let k = product_len(&g);
            let mut dwr = vec![0.0; w.len()];
            for t in 0..taps {
                for c in 0..ci {
                    for o in 0..co {
                        assert_eq!(wr[(t * ci + c) * co + o], at(o, c, t));
                        assert_eq!(wa[(t * co + o) * ci + c], at(o, c, taps - 1 - t));
                        let r = t * ci + c;
                        dwr[(r / k * co + o) * k + r % k] = at(o, c, t);
                    }
                }
            }
            assert_eq!(rows_last(&g, &dwr), w, "{g:?}");
        }
    }

    #[test]
    fn planar_strips_give_the_channels_last_bits() {
        if !planar::available() {
            return;
        }
        let g = stride_one;
        // ResNet-20's stages in their strips (forward and input gradient: 16 <-> 16 channels
        // share a geometry), DenseNet121's 3 x 3 layer and its adjoint, odd channel counts,
        // dilation, uneven padding and a 7 x 7 kernel.
        let cases = [
            g(3, 16, [28, 28], 16, [3, 3], [1, 1], [1, 1]),
            g(8, 32, [14, 14], 32, [3, 3], [1, 1], [1, 1]),
            g(10, 32, [14, 14], 32, [3, 3], [1, 1], [1, 1]),
            g(16, 64, [7, 7], 64, [3, 3], [1, 1], [1, 1]),
            g(2, 128, [14, 14], 32, [3, 3], [1, 1], [1, 1]),
            g(2, 32, [14, 14], 128, [3, 3], [1, 1], [1, 1]),
            g(3, 9, [6, 5], 13, [3, 3], [0, 0], [1, 1]),
            g(2, 8, [8, 9], 2, [3, 2], [2, 0], [2, 1]),
            g(2, 8, [9, 10], 3, [7, 7], [3, 3], [1, 1]),
        ];
        for g in cases {
            let x = filled(g.batch * g.in_len(), 0.2);
            let wr = rows_first(&g, &filled(g.c_out * g.k(), 1.3));
            let planar = group(&g, &wr, &x, forward_planar);
            let last = group(&g, &wr, &x, forward_shifted);
            let same = planar
                .iter()
                .zip(&last)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{g:?}");
        }
    }
}
