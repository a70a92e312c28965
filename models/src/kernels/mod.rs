//! CPU kernels for the layers that dominate a CNN step, and the layer functions that use them.
//!
//! Burn's CPU backends compute a convolution's gradients through generic fallbacks (the weight
//! gradient as a convolution over swapped dimensions, the input gradient as a transposed
//! convolution) and compose batch norm from 8 forward and 15 backward primitive ops. This module
//! computes both directly on `f32` slices ([`conv2d`](mod@conv2d): one matrix product per tap
//! over shifted windows of a padded strip of images at stride 1, im2col/col2im + one product per
//! image otherwise; [`batch_norm`](mod@batch_norm): two fused passes per channel;
//! [`residual`](mod@residual): a ResNet block's `max(0, a + b)` in one pass), registered as Burn
//! backend operations for flex and ndarray with a handwritten autodiff backward
//! ([`ops::CpuKernels`]). The element-wise loops run on the widest instruction set `pulp`
//! detects at run time.
//!
//! [`conv2d_layer`], [`batch_norm_layer`] and [`batch_norm_relu_layer`] (batch norm with the
//! following ReLU fused into its passes) are drop-in forwards for Burn's [`Conv2d`] and
//! [`BatchNorm`] modules (same parameters, same records, same running-statistics update), and
//! [`add_relu`] for `relu(a + b)`: on a
//! flex or ndarray device with `f32` tensors they run these kernels, on every other backend
//! (wgpu, CUDA, remote) and for what the kernels do not cover (groups, asymmetric padding, other
//! float types) Burn's own ops. A user's own Burn model can call them the same way.
//!
//! ```
//! use burn::nn::conv::Conv2dConfig;
//! use burn::nn::{BatchNormConfig, PaddingConfig2d};
//! use burn::tensor::{Device, Distribution, Tensor};
//! use rankrisk_models::kernels::{batch_norm_relu_layer, conv2d_layer};
//!
//! let device = Device::flex().autodiff();
//! let conv = Conv2dConfig::new([3, 8], [3, 3])
//!     .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
//!     .init(&device);
//! let bn = BatchNormConfig::new(8).init(&device);
//! let x = Tensor::<4>::random([2, 3, 16, 16], Distribution::Default, &device);
//! let y = batch_norm_relu_layer(&bn, conv2d_layer(&conv, x));
//! assert_eq!(y.dims(), [2, 8, 16, 16]);
//! ```

pub mod batch_norm;
pub mod conv2d;
mod gemm;
pub mod host;
pub mod memory;
pub mod ops;
pub mod residual;
mod transpose;

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use burn::backend::Dispatch;
use burn::backend::{DispatchDevice, ops::ConvOptions};
use burn::nn::conv::Conv2d;
use burn::nn::{BatchNorm, PaddingConfig2d};
use burn::tensor::{DType, Tensor};

use ops::CpuKernels;

/// Run `f` compiled for the widest instruction set this CPU has that `pulp` detects at run
/// time (AVX2 + FMA on x86-64-v3 machines; SSE2 otherwise): the element-wise loops of the
/// kernels, written as plain loops over fixed-size lanes, vectorize to 8 lanes instead of the
/// baseline's 4. Rust does not contract `a * b + c` into an FMA, so the results are the same
/// on every instruction set.
pub(crate) fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}

/// The environment variable that, set to `0`, lets [`on_pool`]'s other workers sleep between
/// parallel loops instead of polling for them.
pub const POOL_SPIN: &str = "RANKRISK_POOL_SPIN";

/// Run `f` on a worker thread of Rayon's global pool and return its result (directly where
/// this thread is one already, or where the pool has a single thread).
///
/// The kernels' parallel loops, gemm's and Burn's CPU backends' run on that pool. Called from
/// a thread outside it (a program's main thread), each parallel loop is handed to the pool
/// and the caller sleeps until a worker wakes, takes it and finishes: two wake-ups per loop,
/// hundreds per training step. Called from a worker, the loop starts at once on that worker
/// and the other workers join it. A training loop run inside `on_pool` (the run driver's is)
/// measured 55.5-57.7 ms per ResNet-20 step against 58.4-63.2 ms outside, four runs each
/// alternated, with a third of the spread (`bench_step`, batch 32, on 2 cores); the results
/// are the same bits, as no sum's order depends on the threads.
///
/// While `f` runs, the pool's other workers poll for its parallel loops instead of going to
/// sleep between them (each a job of this scope that takes Rayon's pending jobs, and yields
/// its core to the OS when there are none): a loop's second half then starts without a
/// futex wake-up of a sleeping worker, which had taken 2-5% of a step's samples in `perf`.
/// `bench_step` (ResNet-20, batch 32, 2 threads, four alternated pairs): our driver's step
/// 52.4-56.3 ms against 55.4-62.6 without, 2.2-7.3 ms less in every pair; one pass of CE on
/// full Fashion-MNIST-LT trained in 23.1 and 22.8 s against 25.0 and 23.9, the same bits.
/// The workers are busy while `f` runs, waiting or not; [`POOL_SPIN`]`=0` in the environment
/// lets them sleep as before.
///
/// It first calls [`memory::reuse_freed_memory`], so that glibc's arena limit takes effect
/// before the pool's workers allocate (DenseNet121 at 224 x 224: 4.9-5.0 s per step against
/// 5.6-6.0, the module's docs).
///
/// `f` must not wait for another thread that itself waits for the pool with a single worker
/// left free; with one thread in the pool `f` runs on the caller.
pub fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    // Before the pool's workers allocate: glibc's arena limit holds only then.
    memory::reuse_freed_memory();
    if rayon::current_thread_index().is_some() || rayon::current_num_threads() < 2 {
        return f();
    }
    if std::env::var_os(POOL_SPIN).is_some_and(|v| v == "0") {
        return rayon::scope(|_| f());
    }
    let helpers = rayon::current_num_threads() - 1;
    let (done, started) = (AtomicBool::new(false), AtomicUsize::new(0));
    rayon::scope(|s| {
        for _ in 0..helpers {
            s.spawn(|_| {
                started.fetch_add(1, Ordering::AcqRel);
                while !done.load(Ordering::Acquire) {
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        std::thread::yield_now();
                    }
                }
            });
        }
        // The helpers must all run on other workers before `f` may wait in the pool (where
        // this worker would otherwise pick a helper from its own deque and never return).
        while started.load(Ordering::Acquire) < helpers {
            std::thread::yield_now();
        }
        // Set on return and on a panic of `f` alike, so that the scope's wait for its helpers
        // ends and the panic propagates.
        struct Release<'a>(&'a AtomicBool);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
            }
        }
        let _release = Release(&done);
        f()
    })
}

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Run `f` with the kernels switched off on this thread: the layer functions then use Burn's
/// own ops on every backend (for comparisons and benchmarks; the autodiff graph remembers which
/// op each forward used, so a backward outside `f` stays consistent).
pub fn with_burn_ops<R>(f: impl FnOnce() -> R) -> R {
    let before = ENABLED.with(|e| e.replace(false));
    let out = f();
    ENABLED.with(|e| e.set(before));
    out
}

/// Whether tensors on `device` with this dtype go through the kernels.
fn on_kernels(tensor: &Tensor<4>) -> bool {
    if !ENABLED.with(Cell::get) || tensor.dtype() != DType::F32 {
        return false;
    }
    let cpu = matches!(
        tensor.device().inner().as_dispatch(),
        DispatchDevice::Flex(_) | DispatchDevice::NdArray(_)
    );
    if cpu {
        memory::reuse_freed_memory();
    }
    cpu
}

/// 2-D convolution (`burn::tensor::module::conv2d`'s contract) by the kernels where they apply.
pub fn conv2d(
    x: Tensor<4>,
    weight: Tensor<4>,
    bias: Option<Tensor<1>>,
    options: ConvOptions<2>,
) -> Tensor<4> {
    if !on_kernels(&x) || options.groups != 1 || options.is_asymmetric() {
        return burn::tensor::module::conv2d(x, weight, bias, options);
    }
    let out =
        <Dispatch as CpuKernels>::conv2d_kernel(x.into_dispatch(), weight.into_dispatch(), options);
    let out = Tensor::<4>::from_dispatch(out);
    match bias {
        Some(b) => {
            let c = b.dims()[0];
            out + b.reshape([1, c, 1, 1])
        }
        None => out,
    }
}

/// `max(0, a + b)`, the residual join of a ResNet block: one fused pass forward and one
/// backward on the kernels ([`residual`](mod@residual)), Burn's addition and ReLU elsewhere
/// (and when the shapes differ, which Burn broadcasts).
pub fn add_relu(a: Tensor<4>, b: Tensor<4>) -> Tensor<4> {
    if !on_kernels(&a) || a.dims() != b.dims() || b.dtype() != DType::F32 {
        return burn::tensor::activation::relu(a + b);
    }
    Tensor::<4>::from_dispatch(<Dispatch as CpuKernels>::add_relu_kernel(
        a.into_dispatch(),
        b.into_dispatch(),
    ))
}

/// [`Conv2d::forward`] through [`conv2d`](fn@conv2d) (explicit and valid padding; `Same` padding, which
/// Burn resolves per input size, goes to [`Conv2d::forward`]).
pub fn conv2d_layer(conv: &Conv2d, x: Tensor<4>) -> Tensor<4> {
    let padding = match conv.padding {
        PaddingConfig2d::Valid => [(0, 0), (0, 0)],
        PaddingConfig2d::Explicit(top, left, bottom, right) => [(top, bottom), (left, right)],
        PaddingConfig2d::Same => return conv.forward(x),
    };
    let options = ConvOptions::new_with_padding(conv.stride, padding, conv.dilation, conv.groups);
    conv2d(
        x,
        conv.weight.val(),
        conv.bias.as_ref().map(|b| b.val()),
        options,
    )
}

/// [`BatchNorm::forward`] with the kernels: batch statistics on an autodiff device while the
/// layer trains (and the running statistics updated as Burn does:
/// `running = (1 - momentum) running + momentum batch`, biased variance), the running statistics
/// otherwise.
pub fn batch_norm_layer(bn: &BatchNorm, x: Tensor<4>) -> Tensor<4> {
    batch_norm(bn, x, false)
}

/// `relu(`[`batch_norm_layer`]`(bn, x))`, fused into the batch norm's passes on the kernels
/// (the ReLU's mask is recomputed in the backward pass, so its output is not kept).
pub fn batch_norm_relu_layer(bn: &BatchNorm, x: Tensor<4>) -> Tensor<4> {
    batch_norm(bn, x, true)
}

fn batch_norm(bn: &BatchNorm, x: Tensor<4>, relu: bool) -> Tensor<4> {
    if !on_kernels(&x) {
        let y = bn.forward(x);
        return if relu {
            burn::tensor::activation::relu(y)
        } else {
            y
        };
    }
    let device = x.device();
    if device.is_autodiff() && bn.training.is_enabled() {
        let r = <Dispatch as CpuKernels>::batch_norm_train_kernel(
            x.into_dispatch(),
            bn.gamma.val().into_dispatch(),
            bn.beta.val().into_dispatch(),
            bn.epsilon,
            relu,
        );
        let m = bn.momentum;
        for (running, batch) in [(&bn.running_mean, r.mean), (&bn.running_var, r.variance)] {
            let batch = Tensor::<1>::from_dispatch(batch).detach();
            let old = running.value_sync().to_device(&device);
            running.update(old.mul_scalar(1.0 - m).add(batch.mul_scalar(m)).detach());
        }
        Tensor::<4>::from_dispatch(r.output)
    } else {
        let mean = bn.running_mean.value().to_device(&device);
        let var = bn.running_var.value().to_device(&device);
        let out = <Dispatch as CpuKernels>::batch_norm_inference_kernel(
            x.into_dispatch(),
            bn.gamma.val().into_dispatch(),
            bn.beta.val().into_dispatch(),
            mean.into_dispatch(),
            var.into_dispatch(),
            bn.epsilon,
            relu,
        );
        Tensor::<4>::from_dispatch(out)
    }
}

#[cfg(test)]
mod tests {
    use super::on_pool;

    #[test]
    fn on_pool_runs_on_a_worker_and_returns_the_result() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        // From outside a pool `on_pool` moves to a worker of the current (global) pool; inside
        // `install` the current pool is this one, and the caller is already a worker.
        let (outside, inside) = (
            on_pool(rayon::current_thread_index),
            pool.install(|| on_pool(rayon::current_thread_index)),
        );
        if rayon::current_num_threads() >= 2 {
            assert!(outside.is_some());
        }
        assert!(inside.is_some());
        assert_eq!(on_pool(|| 7 * 6), 42);
    }

    #[test]
    fn on_pool_propagates_a_panic_and_releases_its_helpers() {
        // A panic in `f` reaches the caller (the helpers stop polling rather than keep the
        // scope waiting), and the pool runs the next call and its parallel loops.
        let caught = std::panic::catch_unwind(|| on_pool(|| panic!("in f")));
        assert!(caught.is_err());
        let sum: u64 = on_pool(|| {
            use rayon::prelude::*;
            (0..10_000u64).into_par_iter().sum()
        });
        assert_eq!(sum, 49_995_000);
    }
}
