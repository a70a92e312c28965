//! The shifted-window products of one strip of images held channel by channel ("planar",
//! `[C_in, H_p, W_s]`), by an AVX-512 kernel that writes the output channel by channel
//! (`[C_out, Q]`): no layout change on the way in or out, only copies of whole image rows.
//!
//! A tile is `CO` output channels by `16 V` consecutive positions. For each tap `t` of a
//! product and each input channel `c`, it loads the `V` registers of positions
//! `P[c, q + o_t ..]` (`o_t` the tap's offset in the strip), broadcasts the `CO` weights
//! `W[o, c, t]`, and adds their products into its `CO V` accumulators. Each output's sum is
//! the channels-last products' (`gemm`'s), term for term in the same order: a fused
//! multiply-add chain from zero over the product's entries `k = (tap, c)`, taps first, then
//! `Y' = acc` for the first product and `Y' = Y' + acc` for the next. The results are the
//! same bits, which the tests check against `gemm`.

use std::sync::OnceLock;

/// One product of a strip: its taps' offsets in a channel's plane, in the order its entries
/// run (a kernel row's `kw` taps, or a single tap with dilation along the width), and the
/// taps' index `i kw + j` into the weight.
#[derive(Debug, Clone)]
pub(super) struct Product {
    /// `(offset, tap)` per tap: the tap reads `P[c, q + offset]` for output position `q`, and
    /// its weights are `W[o, c, tap]`.
    pub taps: Vec<(usize, usize)>,
}

/// Whether this CPU runs the planar kernel (x86-64 with AVX-512F, asked once).
pub(super) fn available() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx512f")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

/// The shape of one call: `q` output positions per channel, `c_in` planes of `plane` entries,
/// `c_out` output rows of `out_rs` entries, `taps` taps per input channel in the weight.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    /// Output positions per channel.
    pub q: usize,
    /// Input channels (planes of the strip).
    pub c_in: usize,
    /// Entries from one plane of the strip to the next.
    pub plane: usize,
    /// Output channels.
    pub c_out: usize,
    /// Entries from one output channel's row to the next.
    pub out_rs: usize,
    /// Taps of the kernel, `kh kw`.
    pub taps: usize,
}

/// `out[o, q] = sum_n sum_(t, c) W[o, c, t] P[c, q + offset_t]` over the products `list` in
/// order, for `q < shape.q`. `wr` is the weight rows first, `[taps, C_in, C_out]`
/// (`wr[(t C_in + c) C_out + o] = W[o, c, t]`).
///
/// # Panics
/// When [`available`] is false, or a read or write would fall outside its slice.
pub(super) fn products(out: &mut [f32], s: Shape, pad: &[f32], wr: &[f32], list: &[Product]) {
    assert!(available(), "the planar kernel needs AVX-512F");
    if s.q == 0 || s.c_out == 0 {
        return;
    }
    let reach = list
        .iter()
        .flat_map(|p| p.taps.iter().map(|t| t.0))
        .max()
        .unwrap_or(0);
    assert!(
        s.c_in == 0 || (s.c_in - 1) * s.plane + reach + s.q <= pad.len(),
        "a tap reaches past the strip"
    );
    assert!(
        list.iter().all(|p| p.taps.iter().all(|&(_, t)| t < s.taps)),
        "a tap outside the weight"
    );
    assert!(
        wr.len() >= s.taps * s.c_in * s.c_out,
        "the weight is too short"
    );
    assert!(
        (s.c_out - 1) * s.out_rs + s.q <= out.len(),
        "the output is too short"
    );
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX-512F is present (asserted); every position read lies below
    // `(c_in - 1) plane + reach + q`, every weight below `taps c_in c_out`, every output below
    // `(c_out - 1) out_rs + q` (asserted above); masked loads and stores touch no lane past
    // position `q`.
    unsafe {
        avx512::products(out.as_mut_ptr(), s, pad.as_ptr(), wr.as_ptr(), list)
    };
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m512, __mmask16, _mm512_add_ps, _mm512_fmadd_ps, _mm512_mask_storeu_ps,
        _mm512_maskz_loadu_ps, _mm512_set1_ps, _mm512_setzero_ps,
    };

    use super::{Product, Shape};

    /// Position registers per tile.
    const V: usize = 3;
    /// Output channels per full tile.
    const CO: usize = 8;
    // The remainder's `match` below covers up to seven channels.
    const _: () = assert!(CO <= 8);

    /// Every tile of the output: positions in tiles of `16 V`, each over channel blocks of
    /// [`CO`] (then the rest), so that a tile's window of the strip stays in the L1 cache
    /// while the channel blocks read it.
    ///
    /// # Safety
    /// AVX-512F present; the bounds of [`super::products`].
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn products(
        out: *mut f32,
        s: Shape,
        pad: *const f32,
        wr: *const f32,
        list: &[Product],
    ) {
        let mut p = 0;
        while p < s.q {
            let left = s.q - p;
            let masks: [__mmask16; V] = std::array::from_fn(|v| {
                let lanes = left.saturating_sub(16 * v).min(16);
                if lanes == 16 {
                    u16::MAX
                } else {
                    (1u16 << lanes) - 1
                }
            });
            let mut o = 0;
            // SAFETY: the caller's bounds; every tile stays inside channels `.. c_out`, and
            // lanes at or past position `q` are masked off.
            unsafe {
                while s.c_out - o >= CO {
                    tile::<CO>(out, s, pad, wr, list, o, p, masks);
                    o += CO;
                }
                match s.c_out - o {
                    0 => {}
                    1 => tile::<1>(out, s, pad, wr, list, o, p, masks),
                    2 => tile::<2>(out, s, pad, wr, list, o, p, masks),
                    3 => tile::<3>(out, s, pad, wr, list, o, p, masks),
                    4 => tile::<4>(out, s, pad, wr, list, o, p, masks),
                    5 => tile::<5>(out, s, pad, wr, list, o, p, masks),
                    6 => tile::<6>(out, s, pad, wr, list, o, p, masks),
                    _ => tile::<7>(out, s, pad, wr, list, o, p, masks),
                }
            }
            p += 16 * V;
        }
    }

    /// Channels `o .. o + C` at positions `p .. p + 16 V` (lanes off in `masks` untouched).
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile<const C: usize>(
        out: *mut f32,
        s: Shape,
        pad: *const f32,
        wr: *const f32,
        list: &[Product],
        o: usize,
        p: usize,
        masks: [__mmask16; V],
    ) {
        for (n, prod) in list.iter().enumerate() {
            let mut acc: [[__m512; V]; C] = [[_mm512_setzero_ps(); V]; C];
            // SAFETY: the caller's bounds.
            unsafe {
                for &(offset, t) in &prod.taps {
                    let at = pad.add(p + offset);
                    let w = wr.add(t * s.c_in * s.c_out + o);
                    for c in 0..s.c_in {
                        let src = at.add(c * s.plane);
                        let x: [__m512; V] = std::array::from_fn(|v| {
                            _mm512_maskz_loadu_ps(masks[v], src.add(16 * v))
                        });
                        let wc = w.add(c * s.c_out);
                        for (k, a) in acc.iter_mut().enumerate() {
                            let wk = _mm512_set1_ps(*wc.add(k));
                            for v in 0..V {
                                a[v] = _mm512_fmadd_ps(wk, x[v], a[v]);
                            }
                        }
                    }
                }
                for (k, a) in acc.iter().enumerate() {
                    let dst = out.add((o + k) * s.out_rs + p);
                    for v in 0..V {
                        let d = dst.add(16 * v);
                        let val = if n == 0 {
                            a[v]
                        } else {
                            _mm512_add_ps(_mm512_maskz_loadu_ps(masks[v], d), a[v])
                        };
                        _mm512_mask_storeu_ps(d, masks[v], val);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::filled;
    use super::*;
    use crate::kernels::gemm::{View, matmul};

    /// The channels-last product by `gemm` (one call per kernel row), as `[C_out, Q]`.
    #[allow(clippy::too_many_arguments)]
    fn by_gemm(
        q: usize,
        c_in: usize,
        c_out: usize,
        planar: &[f32],
        plane: usize,
        wr: &[f32],
        rows: &[usize],
        kw: usize,
    ) -> Vec<f32> {
        // Channels-last copy of the planar strip.
        let mut last = vec![0.0f32; plane * c_in];
        for c in 0..c_in {
            for i in 0..plane {
                last[i * c_in + c] = planar[c * plane + i];
            }
        }
        let mut wide = vec![0.0f32; q * c_out];
        for (n, &off) in rows.iter().enumerate() {
            let k = kw * c_in;
            matmul(
                &mut wide,
                View::rows(q, c_out),
                &last[off * c_in..],
                View {
                    rows: q,
                    cols: k,
                    rs: c_in,
                    cs: 1,
                },
                &wr[n * k * c_out..(n + 1) * k * c_out],
                View::rows(k, c_out),
                n > 0,
            );
        }
        let mut out = vec![0.0f32; q * c_out];
        for i in 0..q {
            for o in 0..c_out {
                out[o * q + i] = wide[i * c_out + o];
            }
        }
        out
    }

    #[test]
    fn the_tiles_are_gemm_bit_for_bit() {
        if !available() {
            return;
        }
        // ResNet-20's stages (strips of 3, 8 and 16 images), DenseNet121's 3 x 3 layer and its
        // adjoint, and odd channel counts (the narrower tiles).
        for (c_in, c_out, q, ws) in [
            (16, 16, 2462, 88),
            (32, 32, 1815, 121),
            (64, 64, 1081, 129),
            (128, 32, 611, 57),
            (32, 128, 611, 57),
            (8, 13, 100, 12),
            (9, 5, 37, 9),
        ] {
            let (kh, kw) = (3, 3);
            let rows: Vec<usize> = (0..kh).map(|i| i * ws).collect();
            let plane = q + 2 * ws + kw + 5;
            let planar = filled(c_in * plane, 0.3);
            let wr = filled(kh * kw * c_in * c_out, 1.7);
            let list: Vec<Product> = rows
                .iter()
                .enumerate()
                .map(|(i, &r)| Product {
                    taps: (0..kw).map(|j| (r + j, i * kw + j)).collect(),
                })
                .collect();
            let mut ours = vec![f32::NAN; c_out * q];
            let shape = Shape {
                q,
                c_in,
                plane,
                c_out,
                out_rs: q,
                taps: kh * kw,
            };
            products(&mut ours, shape, &planar, &wr, &list);
            let want = by_gemm(q, c_in, c_out, &planar, plane, &wr, &rows, kw);
            let same = ours
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "c_in {c_in}, c_out {c_out}, q {q}");
        }
    }
}
