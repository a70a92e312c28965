//! Transposing copies of many equally shaped blocks, `dst[j d_rs + i] = src[i s_rs + j]`: the
//! layout changes between NCHW images and the convolutions' channels-last strips. Blocks are
//! copied in 8 x 8 tiles, each transposed in registers (eight AVX shuffle rounds where `pulp`
//! detects x86-64-v3, plain moves elsewhere); the results are the same bits either way. A
//! block's ragged edge (ResNet-20's 7- and 14-wide rows leave 7 and 6 columns) goes through
//! the same transpose on a tile filled in part: the 7 x 7 stage's blocks had been copied one
//! element at a time.
//!
//! The destination may be uninitialized memory: every cell a block covers is written, none is
//! read.

use std::mem::MaybeUninit;

/// The shape of each block: `rows x cols` read with row stride `s_rs`, written transposed with
/// row stride `d_rs`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Blocks {
    /// Source rows (destination columns).
    pub rows: usize,
    /// Source columns (destination rows).
    pub cols: usize,
    /// Source row stride.
    pub s_rs: usize,
    /// Destination row stride.
    pub d_rs: usize,
}

const T: usize = 8;
type Tile = [[f32; T]; T];

/// An 8 x 8 transpose.
trait Transposer: Copy {
    fn tile(self, t: &Tile) -> Tile;
}

/// Moves, for any CPU.
#[derive(Clone, Copy)]
struct Plain;

impl Transposer for Plain {
    #[inline(always)]
    fn tile(self, t: &Tile) -> Tile {
        std::array::from_fn(|j| std::array::from_fn(|i| t[i][j]))
    }
}

/// The unpack / shuffle / lane-permute transpose of eight AVX registers.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx(pulp::x86::V3);

#[cfg(target_arch = "x86_64")]
impl Transposer for Avx {
    #[inline(always)]
    fn tile(self, t: &Tile) -> Tile {
        use std::arch::x86_64::__m256;
        let avx = self.0.avx;
        let r: [__m256; T] = t.map(pulp::cast);
        // Rows (a_i) interleaved in pairs, then in fours, then the 128-bit halves swapped.
        let a: [__m256; T] = std::array::from_fn(|k| {
            let (x, y) = (r[2 * (k / 2)], r[2 * (k / 2) + 1]);
            if k % 2 == 0 {
                avx._mm256_unpacklo_ps(x, y)
            } else {
                avx._mm256_unpackhi_ps(x, y)
            }
        });
        let b: [__m256; T] = std::array::from_fn(|k| {
            // k = 4 q + 2 u + v: pairs (a[4q + v], a[4q + 2 + v]), low (u = 0) or high halves.
            let (q, u, v) = (k / 4, k / 2 % 2, k % 2);
            let (x, y) = (a[4 * q + v], a[4 * q + 2 + v]);
            if u == 0 {
                avx._mm256_shuffle_ps::<0x44>(x, y)
            } else {
                avx._mm256_shuffle_ps::<0xEE>(x, y)
            }
        });
        // b[0..4] hold columns 0, 2, 1, 3 of rows 0-3 (and 4, 6, 5, 7 in their high halves),
        // b[4..8] the same of rows 4-7.
        let order = [0, 2, 1, 3];
        std::array::from_fn(|j| {
            let (x, y) = (b[order[j % 4]], b[4 + order[j % 4]]);
            let out = if j < 4 {
                avx._mm256_permute2f128_ps::<0x20>(x, y)
            } else {
                avx._mm256_permute2f128_ps::<0x31>(x, y)
            };
            pulp::cast(out)
        })
    }
}

/// Copy every block, `starts` holding each block's first source and destination index.
pub(crate) fn transpose_blocks(
    src: &[f32],
    dst: &mut [MaybeUninit<f32>],
    shape: Blocks,
    starts: &[(usize, usize)],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v3) = pulp::x86::V3::try_new() {
        return v3.vectorize(
            #[inline(always)]
            || run(Avx(v3), src, dst, shape, starts),
        );
    }
    run(Plain, src, dst, shape, starts)
}

#[inline(always)]
fn run<X: Transposer>(
    x: X,
    src: &[f32],
    dst: &mut [MaybeUninit<f32>],
    sh: Blocks,
    starts: &[(usize, usize)],
) {
    for &(s0, d0) in starts {
        for i0 in (0..sh.rows).step_by(T) {
            let ni = T.min(sh.rows - i0);
            for j0 in (0..sh.cols).step_by(T) {
                let nj = T.min(sh.cols - j0);
                if ni < T || nj < T {
                    // A tile filled in part (the rest zeros, never written out).
                    // A tile filled in part. Eight lanes are read where the source has
                    // them (the lanes past `nj` are never written out); element by element,
                    // not by `copy_from_slice`, whose calls to `memcpy` for a few floats had
                    // taken 5% of a training step.
                    let mut tile: Tile = [[0.0; T]; T];
                    for (i, row) in tile.iter_mut().enumerate().take(ni) {
                        let at = s0 + (i0 + i) * sh.s_rs + j0;
                        if let Some(lanes) = src.get(at..at + T) {
                            *row = lanes.try_into().expect("eight lanes");
                        } else {
                            for (j, v) in row.iter_mut().enumerate().take(nj) {
                                *v = src[at + j];
                            }
                        }
                    }
                    for (j, row) in x.tile(&tile).iter().enumerate().take(nj) {
                        let at = d0 + (j0 + j) * sh.d_rs + i0;
                        for (i, &v) in row.iter().enumerate().take(ni) {
                            dst[at + i].write(v);
                        }
                    }
                    continue;
                }
                let tile: Tile = std::array::from_fn(|i| {
                    let at = s0 + (i0 + i) * sh.s_rs + j0;
                    src[at..at + T].try_into().expect("eight lanes")
                });
                for (j, row) in x.tile(&tile).iter().enumerate() {
                    let at = d0 + (j0 + j) * sh.d_rs + i0;
                    write(&mut dst[at..at + T], row);
                }
            }
        }
    }
}

#[inline(always)]
fn write(dst: &mut [MaybeUninit<f32>], src: &[f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(s);
    }
}

/// `f32` cells seen as possibly uninitialized, for [`transpose_blocks`] and the convolution's
/// row copies to write into. Sound: the callees only write initialized values.
pub(crate) fn as_uninit(cells: &mut [f32]) -> &mut [MaybeUninit<f32>] {
    // SAFETY: `MaybeUninit<f32>` has `f32`'s layout, and nothing writes an uninitialized value
    // through the returned slice (only `transpose_blocks` and `conv2d`'s `write_run`, which
    // write `f32`s, take it).
    unsafe { &mut *(cells as *mut [f32] as *mut [MaybeUninit<f32>]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_and_edges_match_the_definition() {
        // 19 x 13 blocks (full tiles and ragged edges) and 7 x 6 blocks (ragged only), two of
        // each, strided on both sides; cells outside the blocks keep their values.
        for (rows, cols, s_rs, d_rs) in [(19, 13, 15, 23), (7, 6, 7, 9)] {
            let sh = Blocks {
                rows,
                cols,
                s_rs,
                d_rs,
            };
            let starts = [(0, 1), (rows * s_rs + 4, cols * d_rs + 7)];
            let src: Vec<f32> = (0..2 * rows * s_rs + 8).map(|v| v as f32).collect();
            let mut dst = vec![-1.0f32; 2 * cols * d_rs + 8];
            transpose_blocks(&src, as_uninit(&mut dst), sh, &starts);
            let mut want = vec![-1.0f32; dst.len()];
            for &(s0, d0) in &starts {
                for i in 0..sh.rows {
                    for j in 0..sh.cols {
                        want[d0 + j * sh.d_rs + i] = src[s0 + i * sh.s_rs + j];
                    }
                }
            }
            assert_eq!(dst, want);
        }
        // The plain path gives the same tiles as the dispatched one.
        let tile: Tile = std::array::from_fn(|i| std::array::from_fn(|j| (i * 8 + j) as f32));
        let t = Plain.tile(&tile);
        assert!((0..64).all(|k| t[k % 8][k / 8] == tile[k / 8][k % 8]));
    }
}
