//! The convolution against its definition, the one-pass backward against the two gradients,
//! and the thread count.

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
                                let xv = x[((b * g.c_in + c) * h + iy as usize) * wd + ix as usize]
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

/// `n` values of a sine, shifted by `seed`: test data for the convolution's modules.
pub(super) fn filled(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| ((i as f32 + seed) * 0.7311).sin()).collect()
}

/// A stride-1 geometry, for the tests of the shifted windows.
pub(super) fn stride_one(
    batch: usize,
    c_in: usize,
    input: [usize; 2],
    c_out: usize,
    kernel: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
) -> ConvGeometry {
    ConvGeometry {
        batch,
        c_in,
        input,
        c_out,
        kernel,
        stride: [1, 1],
        padding,
        dilation,
    }
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
        // Stride 1 by shifted windows: dilation, padding on one axis only, none, 7 x 7.
        g(8, [8, 9], 2, [3, 2], [1, 1], [2, 0], [2, 1]),
        g(9, [6, 5], 2, [3, 3], [1, 1], [0, 0], [1, 1]),
        g(8, [9, 10], 3, [7, 7], [1, 1], [3, 3], [1, 1]),
        g(8, [6, 6], 2, [3, 3], [1, 1], [0, 0], [2, 2]),
        g(8, [4, 5], 3, [3, 3], [1, 1], [1, 1], [1, 1]),
        // Padding beyond the kernel's span (im2col), and more output channels than input.
        g(8, [5, 6], 3, [3, 3], [1, 1], [3, 1], [1, 1]),
        g(8, [6, 5], 12, [3, 3], [1, 1], [1, 1], [1, 1]),
        // Larger maps (at stride 2, output rows of 9 and 8: the blocks of eight and four).
        g(2, [18, 17], 3, [3, 3], [1, 1], [1, 1], [1, 1]),
        g(2, [18, 17], 3, [3, 3], [2, 2], [1, 1], [1, 1]),
        g(2, [26, 24], 3, [3, 3], [2, 2], [1, 1], [1, 1]),
        g(3, [17, 16], 2, [1, 1], [1, 1], [0, 0], [1, 1]),
    ]
}

#[test]
fn forward_and_gradients_match_the_definition() {
    // Twice with other values: the second pass runs on the buffers the first left in this
    // thread's scratch (a strip's padding must still be zero).
    for (g, seed) in geometries().into_iter().flat_map(|g| [(g, 0.0), (g, 3.3)]) {
        let [oh, ow] = g.output();
        let x = filled(g.batch * g.in_len(), 0.3 + seed);
        let w = filled(g.c_out * g.k(), 1.9 + seed);
        let y = forward(&g, &x, &w);
        let want = direct(&g, &x, &w);
        for (a, b) in y.iter().zip(&want) {
            assert!((*a as f64 - b).abs() < 1e-4, "{g:?}: {a} vs {b}");
        }
        // <dY, conv(X, W)> is bilinear: its gradients are the adjoints, checked exactly
        // against the definition by perturbing one coordinate at a time in f64.
        let dy = filled(g.batch * g.c_out * oh * ow, 4.2 + seed);
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

#[test]
fn one_pass_backward_is_the_two_gradients_bit_for_bit() {
    // "Same" padding (the one-pass path) at map sizes whose forward and weight-gradient
    // strips differ (14 x 14: 8 + 8 against 10 + 6 images), more images than a chunk, a
    // dilated kernel, and geometries that take the two separate gradients.
    let g = stride_one;
    let cases = [
        g(37, 16, [14, 14], 16, [3, 3], [1, 1], [1, 1]),
        // ResNet-20's three stages (planar strips of `dY` up to 32 channels).
        g(32, 16, [28, 28], 16, [3, 3], [1, 1], [1, 1]),
        g(32, 32, [14, 14], 32, [3, 3], [1, 1], [1, 1]),
        g(32, 64, [7, 7], 64, [3, 3], [1, 1], [1, 1]),
        g(20, 8, [28, 28], 12, [3, 3], [1, 1], [1, 1]),
        g(33, 16, [7, 7], 8, [3, 3], [1, 1], [1, 1]),
        g(5, 8, [9, 10], 3, [5, 3], [4, 1], [2, 1]),
        g(4, 8, [9, 10], 3, [7, 7], [3, 3], [1, 1]),
        g(3, 8, [8, 9], 2, [3, 2], [2, 0], [2, 1]),
        g(3, 4, [6, 7], 2, [1, 1], [0, 0], [1, 1]),
    ];
    for g in cases {
        let [oh, ow] = g.output();
        let x = filled(g.batch * g.in_len(), 0.4);
        let w = filled(g.c_out * g.k(), 1.1);
        let dy = filled(g.batch * g.c_out * oh * ow, 2.6);
        // Twice: the second call runs on the scratch buffers the first left.
        for _ in 0..2 {
            let (dx, dw) = backward(&g, &x, &w, &dy, [true, true]);
            assert_eq!(dx.as_deref(), Some(&input_grad(&g, &w, &dy)[..]), "{g:?}");
            assert_eq!(dw.as_deref(), Some(&weight_grad(&g, &x, &dy)[..]), "{g:?}");
        }
        let (dx, dw) = backward(&g, &x, &w, &dy, [false, true]);
        assert!(dx.is_none() && dw == Some(weight_grad(&g, &x, &dy)));
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    // 37 images: three weight-gradient chunks and strips of several images.
    let cases = [
        (16, [9, 9], [3, 3], [1, 1], [1, 1]),
        (3, [10, 9], [3, 3], [2, 2], [1, 1]),
        (8, [5, 5], [1, 1], [1, 1], [0, 0]),
    ];
    for (c_in, input, kernel, stride, padding) in cases {
        let g = ConvGeometry {
            batch: 37,
            c_in,
            input,
            c_out: 6,
            kernel,
            stride,
            padding,
            dilation: [1, 1],
        };
        let [oh, ow] = g.output();
        let x = filled(g.batch * g.in_len(), 0.1);
        let w = filled(g.c_out * g.k(), 2.3);
        let dy = filled(g.batch * g.c_out * oh * ow, 5.7);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                [
                    forward(&g, &x, &w),
                    input_grad(&g, &w, &dy),
                    weight_grad(&g, &x, &dy),
                ]
            })
        };
        assert_eq!(run(1), run(3), "{g:?}");
    }
}
