//! A checked, single-threaded `f32` matrix product over strided slices (the `gemm` crate that
//! Burn's flex backend uses), for the kernels: `dst = A B` or `dst += A B`.

/// A row-major or transposed view of a matrix inside a slice: element `(i, j)` sits at
/// `i * rs + j * cs`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row stride.
    pub rs: usize,
    /// Column stride.
    pub cs: usize,
}

impl View {
    /// A contiguous row-major `rows x cols` matrix.
    pub fn rows(rows: usize, cols: usize) -> Self {
        View {
            rows,
            cols,
            rs: cols,
            cs: 1,
        }
    }

    /// The transpose of this view (no copy).
    pub fn t(self) -> Self {
        View {
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
        }
    }

    /// One past the largest index the view touches (0 when empty).
    fn extent(self) -> usize {
        if self.rows == 0 || self.cols == 0 {
            0
        } else {
            (self.rows - 1) * self.rs + (self.cols - 1) * self.cs + 1
        }
    }
}

/// `dst = a b` (`accumulate = false`) or `dst += a b`, all `f32`, on the calling thread.
///
/// # Panics
/// When the shapes do not chain or a view reaches past its slice.
pub(crate) fn matmul(
    dst: &mut [f32],
    d: View,
    a: &[f32],
    av: View,
    b: &[f32],
    bv: View,
    accumulate: bool,
) {
    assert!(
        av.rows == d.rows && bv.cols == d.cols && av.cols == bv.rows,
        "matmul shapes: {av:?} x {bv:?} -> {d:?}"
    );
    assert!(d.extent() <= dst.len() && av.extent() <= a.len() && bv.extent() <= b.len());
    if d.rows == 0 || d.cols == 0 {
        return;
    }
    if av.cols == 0 {
        if !accumulate {
            for i in 0..d.rows {
                for j in 0..d.cols {
                    dst[i * d.rs + j * d.cs] = 0.0;
                }
            }
        }
        return;
    }
    // SAFETY: every index the product reads or writes lies inside its slice (the extents were
    // checked above), `dst` is borrowed mutably and so does not alias `a` or `b`, and the
    // strides are non-negative.
    unsafe {
        gemm::gemm(
            d.rows,
            d.cols,
            av.cols,
            dst.as_mut_ptr(),
            d.cs as isize,
            d.rs as isize,
            accumulate,
            a.as_ptr(),
            av.cs as isize,
            av.rs as isize,
            b.as_ptr(),
            bv.cs as isize,
            bv.rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_match_the_triple_loop_for_every_transpose() {
        let (m, k, n) = (5, 7, 3);
        let a: Vec<f32> = (0..m * k).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..k * n).map(|i| (i as f32 * 0.11).cos()).collect();
        let mut want = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        let mut got = vec![1.0f32; m * n];
        matmul(
            &mut got,
            View::rows(m, n),
            &a,
            View::rows(m, k),
            &b,
            View::rows(k, n),
            false,
        );
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-5);
        }
        // (B^T A^T)^T written through a transposed destination view, accumulated twice.
        let mut acc = vec![0.0f32; m * n];
        for _ in 0..2 {
            matmul(
                &mut acc,
                View::rows(m, n).t(),
                &b,
                View::rows(k, n).t(),
                &a,
                View::rows(m, k).t(),
                true,
            );
        }
        for (g, w) in acc.iter().zip(&want) {
            assert!((g - 2.0 * w).abs() < 1e-5);
        }
    }
}
