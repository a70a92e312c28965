//! im2col / col2im: the patch matrix `col(X_b)` of one image (`[C_in kh kw, H_out W_out]`) and
//! its adjoint, for the convolutions that shifted windows do not cover (strides above 1, few
//! input channels).

use super::{ConvGeometry, add_run, copy_run};

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
        match g.stride[1] {
            1 => copy_run(&mut out[xlo..xhi], &src[x0..x0 + (xhi - xlo)]),
            2 => copy_every_other(&mut out[xlo..xhi], &src[x0..]),
            s => {
                for (k, o) in out[xlo..xhi].iter_mut().enumerate() {
                    *o = src[x0 + k * s];
                }
            }
        }
    }
}

/// `dst[k] = src[2 k]`: eight outputs from sixteen inputs at a time, then four from eight
/// (fixed-size blocks that the compiler turns into vector shuffles; the element-by-element
/// loop had been most of im2col's time at stride 2).
#[inline]
fn copy_every_other(dst: &mut [f32], src: &[f32]) {
    // Whole blocks only where the source has all sixteen inputs (a row's last output may sit
    // on its last pixel).
    let full = (dst.len() / 8).min(src.len() / 16);
    for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(16)).take(full) {
        let s: &[f32; 16] = s.try_into().expect("sixteen lanes");
        for l in 0..8 {
            d[l] = s[2 * l];
        }
    }
    let mut k = 8 * full;
    // A block of four (ResNet-20's 7-wide rows at stride 2).
    if dst.len() - k >= 4 && src.len() >= 2 * k + 8 {
        let s: &[f32; 8] = src[2 * k..2 * k + 8].try_into().expect("eight lanes");
        for l in 0..4 {
            dst[k + l] = s[2 * l];
        }
        k += 4;
    }
    for k in k..dst.len() {
        dst[k] = src[2 * k];
    }
}

/// `dst[2 k] += src[k]`, the adjoint of [`copy_every_other`], in the same blocks.
#[inline]
fn add_every_other(dst: &mut [f32], src: &[f32]) {
    let full = (src.len() / 8).min(dst.len() / 16);
    for (d, s) in dst.chunks_exact_mut(16).zip(src.chunks_exact(8)).take(full) {
        let d: &mut [f32; 16] = d.try_into().expect("sixteen lanes");
        for l in 0..8 {
            d[2 * l] += s[l];
        }
    }
    let mut k = 8 * full;
    if src.len() - k >= 4 && dst.len() >= 2 * k + 8 {
        let d: &mut [f32; 8] = (&mut dst[2 * k..2 * k + 8])
            .try_into()
            .expect("eight lanes");
        for l in 0..4 {
            d[2 * l] += src[k + l];
        }
        k += 4;
    }
    for k in k..src.len() {
        dst[2 * k] += src[k];
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
        match g.stride[1] {
            1 => add_run(&mut dst[x0..x0 + src.len()], src),
            2 => add_every_other(&mut dst[x0..], src),
            stride => {
                for (k, s) in src.iter().enumerate() {
                    dst[x0 + k * stride] += s;
                }
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
pub(super) fn im2col(g: &ConvGeometry, x: &[f32], col: &mut [f32]) {
    let plane = g.input[0] * g.input[1];
    let p = g.output()[0] * g.output()[1];
    for (r, row) in col.chunks_mut(p).enumerate().take(g.k()) {
        let (c, i, j) = tap(g, r);
        patch_row(g, &x[c * plane..(c + 1) * plane], i, j, row);
    }
}

/// Add the patch matrix `col` into one image gradient `dx` (`[C_in, H, W]`, zeros on entry).
pub(super) fn col2im(g: &ConvGeometry, col: &[f32], dx: &mut [f32]) {
    let plane = g.input[0] * g.input[1];
    let p = g.output()[0] * g.output()[1];
    for (r, row) in col.chunks(p).enumerate().take(g.k()) {
        let (c, i, j) = tap(g, r);
        add_patch_row(g, row, i, j, &mut dx[c * plane..(c + 1) * plane]);
    }
}
