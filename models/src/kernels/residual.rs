//! The residual join of a ResNet block, `y = max(0, a + b)`, in one pass, and its gradient
//! `da = db = dy [y > 0]` in one pass (where Burn's ops take an addition, a ReLU, the ReLU's
//! mask and its product, each a full pass with its own tensor).

use rayon::prelude::*;

use super::vectorized;

/// Elements per parallel task.
const CHUNK: usize = 1 << 14;

/// `f(a_i, b_i)` element-wise, in parallel chunks, each compiled for the widest instruction set.
///
/// The output is not zeroed first (a zeroed vector cost a `memset` of every element).
fn zip_map(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32 + Sync) -> Vec<f32> {
    let n = a.len();
    assert_eq!(n, b.len(), "zip_map operands' lengths");
    let mut out: Vec<f32> = Vec::with_capacity(n);
    out.spare_capacity_mut()[..n]
        .par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|(oc, (ac, bc))| {
            vectorized(
                #[inline(always)]
                || {
                    for ((o, &u), &v) in oc.iter_mut().zip(ac).zip(bc) {
                        o.write(f(u, v));
                    }
                },
            )
        });
    // SAFETY: the first `n` cells were split into the same pieces as `a` and `b`, which both
    // hold `n` elements, and the loop above wrote every cell of every piece.
    unsafe { out.set_len(n) };
    out
}

/// `max(0, a + b)` element-wise.
///
/// # Panics
/// When `a` and `b` differ in length.
pub fn add_relu(a: &[f32], b: &[f32]) -> Vec<f32> {
    assert_eq!(a.len(), b.len(), "residual operands' lengths");
    zip_map(a, b, |u, v| (u + v).max(0.0))
}

/// `dy` where the forward output `y` is positive, 0 elsewhere: the gradient of [`add_relu`]
/// with respect to either operand.
///
/// # Panics
/// When `y` and `dy` differ in length.
pub fn add_relu_grad(y: &[f32], dy: &[f32]) -> Vec<f32> {
    assert_eq!(y.len(), dy.len(), "residual gradient length");
    zip_map(y, dy, |u, d| if u > 0.0 { d } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_and_gradient_follow_the_definition() {
        let n = 3 * CHUNK + 5;
        let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos() * 0.5).collect();
        let dy: Vec<f32> = (0..n).map(|i| (i as f32 * 0.23).sin() + 2.0).collect();
        let y = add_relu(&a, &b);
        let g = add_relu_grad(&y, &dy);
        for i in 0..n {
            let s = a[i] + b[i];
            assert_eq!(y[i], s.max(0.0));
            assert_eq!(g[i], if s > 0.0 { dy[i] } else { 0.0 });
        }
    }
}
