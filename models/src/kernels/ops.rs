//! The kernels as Burn backend operations: [`CpuKernels`] is a backend extension
//! (`#[backend_extension]`) implemented on flex and ndarray by the slice kernels of
//! [`super::conv2d`](mod@super::conv2d), [`super::batch_norm`](mod@super::batch_norm) and
//! [`super::residual`](mod@super::residual), and on `Autodiff<B>` with a handwritten backward
//! that calls the same kernels for the gradients.

// ndarray stays a supported CPU backend in rankrisk (deprecated in burn 0.22).
#![allow(deprecated)]

use burn::backend::autodiff::NodeId;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::ops::{ActivationOps, ConvOptions, ModuleOps};
use burn::backend::tensor::FloatTensor;
use burn::backend::{
    Autodiff, AutodiffBackend, Backend, ExtensionType, Flex, NdArray, backend_extension,
};
use burn::tensor::Shape;

use super::batch_norm::{self, BnShape, Normalization};
use super::conv2d::{self, ConvGeometry};
use super::host::HostF32;
use super::residual;

/// The training batch norm's results: the output and the batch statistics per channel.
#[derive(ExtensionType)]
pub struct BatchNormTrained<B: Backend> {
    /// `y`, the input's shape.
    pub output: FloatTensor<B>,
    /// Batch mean per channel, `[C]`.
    pub mean: FloatTensor<B>,
    /// Biased batch variance per channel, `[C]`.
    pub variance: FloatTensor<B>,
}

/// Convolution and batch norm computed by this crate's CPU kernels.
#[backend_extension(Flex, NdArray, Autodiff)]
pub trait CpuKernels: Backend {
    /// 2-D convolution without bias (groups 1, symmetric padding): `x` `[B, C_in, H, W]`,
    /// `weight` `[C_out, C_in, kh, kw]`.
    fn conv2d_kernel(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        options: ConvOptions<2>,
    ) -> FloatTensor<Self>;

    /// Batch norm with batch statistics over dimension 1 of `x` (`[B, C, ...]`), followed by
    /// `max(0, .)` when `relu`.
    fn batch_norm_train_kernel(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
        relu: bool,
    ) -> BatchNormTrained<Self>;

    /// Batch norm with the given (running) statistics `mean` and `var`, per channel, followed
    /// by `max(0, .)` when `relu`.
    fn batch_norm_inference_kernel(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        mean: FloatTensor<Self>,
        var: FloatTensor<Self>,
        epsilon: f64,
        relu: bool,
    ) -> FloatTensor<Self>;

    /// `max(0, a + b)` of two tensors of one shape.
    fn add_relu_kernel(a: FloatTensor<Self>, b: FloatTensor<Self>) -> FloatTensor<Self>;
}

/// The geometry of a convolution of `x` by `weight`.
fn geometry(x: &[usize], w: &[usize], options: &ConvOptions<2>) -> ConvGeometry {
    assert!(
        x.len() == 4 && w.len() == 4 && x[1] == w[1],
        "conv2d shapes {x:?} and {w:?}"
    );
    ConvGeometry {
        batch: x[0],
        c_in: x[1],
        input: [x[2], x[3]],
        c_out: w[0],
        kernel: [w[2], w[3]],
        stride: options.stride,
        padding: options.padding_begin(),
        dilation: options.dilation,
    }
}

fn bn_shape(dims: &[usize]) -> BnShape {
    BnShape {
        batch: dims[0],
        channels: dims[1],
        spatial: dims[2..].iter().product(),
    }
}

/// The kernels on one CPU backend: forward and gradients, on primitives.
pub trait CpuCompute: HostF32 {
    /// Forward convolution.
    fn conv_forward(
        x: FloatTensor<Self>,
        w: FloatTensor<Self>,
        o: &ConvOptions<2>,
    ) -> FloatTensor<Self> {
        let g = geometry(&Self::dims(&x), &Self::dims(&w), o);
        let [oh, ow] = g.output();
        let y = conv2d::forward(&g, &Self::view(&x), &Self::view(&w));
        Self::tensor(y, Shape::new([g.batch, g.c_out, oh, ow]))
    }

    /// `(dx, dw)` of a convolution, each only when asked for.
    fn conv_backward(
        x: &FloatTensor<Self>,
        w: &FloatTensor<Self>,
        dy: &FloatTensor<Self>,
        o: &ConvOptions<2>,
        want: [bool; 2],
    ) -> (Option<FloatTensor<Self>>, Option<FloatTensor<Self>>) {
        let (xd, wd) = (Self::dims(x), Self::dims(w));
        let g = geometry(&xd, &wd, o);
        let (dx, dw) = conv2d::backward(&g, &Self::view(x), &Self::view(w), &Self::view(dy), want);
        (
            dx.map(|v| Self::tensor(v, Shape::from(xd))),
            dw.map(|v| Self::tensor(v, Shape::from(wd))),
        )
    }

    /// Training batch norm (and the fused ReLU): `(y, mean, variance)`.
    fn bn_forward(
        x: &FloatTensor<Self>,
        gamma: &FloatTensor<Self>,
        beta: &FloatTensor<Self>,
        eps: f64,
        relu: bool,
    ) -> BatchNormTrained<Self> {
        let dims = Self::dims(x);
        let s = bn_shape(&dims);
        let (xv, gv, bv) = (Self::view(x), Self::view(gamma), Self::view(beta));
        let r = batch_norm::train(s, &xv, &gv, &bv, eps, relu);
        BatchNormTrained {
            output: Self::tensor(r.output, Shape::from(dims)),
            mean: Self::tensor(r.mean, Shape::new([s.channels])),
            variance: Self::tensor(r.variance, Shape::new([s.channels])),
        }
    }

    /// Inference batch norm with running statistics (and the fused ReLU).
    #[allow(clippy::too_many_arguments)]
    fn bn_inference(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        mean: FloatTensor<Self>,
        var: FloatTensor<Self>,
        eps: f64,
        relu: bool,
    ) -> FloatTensor<Self> {
        let dims = Self::dims(&x);
        let (g, b, m, v) = (
            Self::view(&gamma),
            Self::view(&beta),
            Self::view(&mean),
            Self::view(&var),
        );
        let n = Normalization {
            gamma: &g,
            beta: &b,
            mean: &m,
            var: &v,
            eps,
        };
        let y = batch_norm::inference(bn_shape(&dims), &Self::view(&x), &n, relu);
        Self::tensor(y, Shape::from(dims))
    }

    /// `(dx, dgamma, dbeta)` of the training batch norm (and the fused ReLU).
    #[allow(clippy::too_many_arguments)]
    fn bn_backward(
        x: &FloatTensor<Self>,
        gamma: &FloatTensor<Self>,
        beta: &FloatTensor<Self>,
        mean: &FloatTensor<Self>,
        variance: &FloatTensor<Self>,
        eps: f64,
        relu: bool,
        dy: &FloatTensor<Self>,
    ) -> [FloatTensor<Self>; 3] {
        let dims = Self::dims(x);
        let s = bn_shape(&dims);
        let (g, b, m, v) = (
            Self::view(gamma),
            Self::view(beta),
            Self::view(mean),
            Self::view(variance),
        );
        let n = Normalization {
            gamma: &g,
            beta: &b,
            mean: &m,
            var: &v,
            eps,
        };
        let (dx, dg, db) = batch_norm::train_backward(s, &Self::view(x), &n, relu, &Self::view(dy));
        [
            Self::tensor(dx, Shape::from(dims)),
            Self::tensor(dg, Shape::new([s.channels])),
            Self::tensor(db, Shape::new([s.channels])),
        ]
    }

    /// `max(0, a + b)`.
    fn add_relu_forward(a: &FloatTensor<Self>, b: &FloatTensor<Self>) -> FloatTensor<Self> {
        let dims = Self::dims(a);
        assert_eq!(dims, Self::dims(b), "residual operands' shapes");
        let y = residual::add_relu(&Self::view(a), &Self::view(b));
        Self::tensor(y, Shape::from(dims))
    }

    /// The gradient of [`Self::add_relu_forward`] for either operand, from its output `y`.
    fn add_relu_backward(y: &FloatTensor<Self>, dy: &FloatTensor<Self>) -> FloatTensor<Self> {
        let g = residual::add_relu_grad(&Self::view(y), &Self::view(dy));
        Self::tensor(g, Shape::from(Self::dims(y)))
    }
}

impl CpuCompute for Flex {}
impl CpuCompute for NdArray {}

/// `CpuKernels` on a CPU backend: the trait's operations are the backend's [`CpuCompute`]
/// kernels.
macro_rules! cpu_kernels {
    ($($backend:ty),*) => {$(
        impl CpuKernels for $backend {
            fn conv2d_kernel(
                x: FloatTensor<Self>,
                w: FloatTensor<Self>,
                o: ConvOptions<2>,
            ) -> FloatTensor<Self> {
                Self::conv_forward(x, w, &o)
            }

            fn batch_norm_train_kernel(
                x: FloatTensor<Self>,
                gamma: FloatTensor<Self>,
                beta: FloatTensor<Self>,
                epsilon: f64,
                relu: bool,
            ) -> BatchNormTrained<Self> {
                Self::bn_forward(&x, &gamma, &beta, epsilon, relu)
            }

            fn batch_norm_inference_kernel(
                x: FloatTensor<Self>,
                gamma: FloatTensor<Self>,
                beta: FloatTensor<Self>,
                mean: FloatTensor<Self>,
                var: FloatTensor<Self>,
                epsilon: f64,
                relu: bool,
            ) -> FloatTensor<Self> {
                Self::bn_inference(x, gamma, beta, mean, var, epsilon, relu)
            }

            fn add_relu_kernel(a: FloatTensor<Self>, b: FloatTensor<Self>) -> FloatTensor<Self> {
                Self::add_relu_forward(&a, &b)
            }
        }
    )*};
}

cpu_kernels!(Flex, NdArray);

#[derive(Debug)]
struct ConvBackward;

impl<B: CpuCompute> Backward<B, 2> for ConvBackward {
    type State = (NodeId, NodeId, ConvOptions<2>);

    fn backward(
        self,
        ops: Ops<Self::State, 2>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [node_x, node_w] = ops.parents;
        let dy = grads.consume::<B>(&ops.node);
        let (x_state, w_state, options) = ops.state;
        let x = checkpointer.retrieve_node_output::<FloatTensor<B>>(x_state);
        let w = checkpointer.retrieve_node_output::<FloatTensor<B>>(w_state);
        let (dx, dw) =
            B::conv_backward(&x, &w, &dy, &options, [node_x.is_some(), node_w.is_some()]);
        if let (Some(node), Some(dx)) = (node_x, dx) {
            grads.register::<B>(node.id, dx);
        }
        if let (Some(node), Some(dw)) = (node_w, dw) {
            grads.register::<B>(node.id, dw);
        }
    }
}

#[derive(Debug)]
struct AddReluBackward;

impl<B: CpuCompute> Backward<B, 2> for AddReluBackward {
    /// The forward output `y`, whose sign is the ReLU's mask.
    type State = FloatTensor<B>;

    fn backward(
        self,
        ops: Ops<Self::State, 2>,
        grads: &mut Gradients,
        _checkpointer: &mut Checkpointer,
    ) {
        let dy = grads.consume::<B>(&ops.node);
        let g = B::add_relu_backward(&ops.state, &dy);
        match ops.parents {
            [Some(a), Some(b)] => {
                grads.register::<B>(a.id, g.clone());
                grads.register::<B>(b.id, g);
            }
            [Some(node), None] | [None, Some(node)] => grads.register::<B>(node.id, g),
            [None, None] => {}
        }
    }
}

#[derive(Debug)]
struct BatchNormBackward;

/// What the batch-norm backward keeps: the checkpointed input, gamma and beta, the batch
/// statistics, epsilon and whether the ReLU is fused.
type BnState<B> = (
    NodeId,
    NodeId,
    NodeId,
    FloatTensor<B>,
    FloatTensor<B>,
    f64,
    bool,
);

impl<B: CpuCompute> Backward<B, 3> for BatchNormBackward {
    type State = BnState<B>;

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [node_x, node_gamma, node_beta] = ops.parents;
        let dy = grads.consume::<B>(&ops.node);
        let (x_state, gamma_state, beta_state, mean, variance, eps, relu) = ops.state;
        let x = checkpointer.retrieve_node_output::<FloatTensor<B>>(x_state);
        let gamma = checkpointer.retrieve_node_output::<FloatTensor<B>>(gamma_state);
        let beta = checkpointer.retrieve_node_output::<FloatTensor<B>>(beta_state);
        let [dx, dgamma, dbeta] =
            B::bn_backward(&x, &gamma, &beta, &mean, &variance, eps, relu, &dy);
        for (node, grad) in [(node_x, dx), (node_gamma, dgamma), (node_beta, dbeta)] {
            if let Some(node) = node {
                grads.register::<B>(node.id, grad);
            }
        }
    }
}

impl<B: CpuCompute + CpuKernels, C: CheckpointStrategy> CpuKernels for Autodiff<B, C> {
    fn conv2d_kernel(
        x: FloatTensor<Self>,
        w: FloatTensor<Self>,
        o: ConvOptions<2>,
    ) -> FloatTensor<Self> {
        match ConvBackward
            .prepare::<C>([x.node(), w.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let state = (prep.checkpoint(&x), prep.checkpoint(&w), o.clone());
                prep.finish(
                    state,
                    B::conv_forward(x.into_primitive(), w.into_primitive(), &o),
                )
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::conv_forward(x.into_primitive(), w.into_primitive(), &o))
            }
        }
    }

    fn batch_norm_train_kernel(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
        relu: bool,
    ) -> BatchNormTrained<Self> {
        let leaf = <FloatTensor<Self>>::new;
        let prep = BatchNormBackward
            .prepare::<C>([x.node(), gamma.node(), beta.node()])
            .compute_bound()
            .stateful();
        match prep {
            OpsKind::Tracked(mut prep) => {
                let states = [&x, &gamma, &beta].map(|t| prep.checkpoint(t));
                let r = B::bn_forward(
                    x.primitive(),
                    gamma.primitive(),
                    beta.primitive(),
                    epsilon,
                    relu,
                );
                let [xs, gs, bs] = states;
                let state = (
                    xs,
                    gs,
                    bs,
                    r.mean.clone(),
                    r.variance.clone(),
                    epsilon,
                    relu,
                );
                BatchNormTrained {
                    output: prep.finish(state, r.output),
                    mean: leaf(r.mean),
                    variance: leaf(r.variance),
                }
            }
            OpsKind::UnTracked(prep) => {
                let r = B::bn_forward(
                    x.primitive(),
                    gamma.primitive(),
                    beta.primitive(),
                    epsilon,
                    relu,
                );
                BatchNormTrained {
                    output: prep.finish(r.output),
                    mean: leaf(r.mean),
                    variance: leaf(r.variance),
                }
            }
        }
    }

    fn add_relu_kernel(a: FloatTensor<Self>, b: FloatTensor<Self>) -> FloatTensor<Self> {
        let y = B::add_relu_forward(a.primitive(), b.primitive());
        match AddReluBackward
            .prepare::<C>([a.node(), b.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => prep.finish(y.clone(), y),
            OpsKind::UnTracked(prep) => prep.finish(y),
        }
    }

    /// The kernel where nothing is tracked (evaluation on an autodiff device); else Burn's own
    /// batch norm, which in inference mode still passes gradients to its input and parameters.
    fn batch_norm_inference_kernel(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        mean: FloatTensor<Self>,
        var: FloatTensor<Self>,
        epsilon: f64,
        relu: bool,
    ) -> FloatTensor<Self> {
        if !x.is_tracked() && !gamma.is_tracked() && !beta.is_tracked() {
            return <Self as AutodiffBackend>::from_inner(B::bn_inference(
                x.into_primitive(),
                gamma.into_primitive(),
                beta.into_primitive(),
                mean.into_primitive(),
                var.into_primitive(),
                epsilon,
                relu,
            ));
        }
        let y = <Self as ModuleOps<Self>>::batch_norm(x, gamma, beta, mean, var, epsilon);
        if relu {
            <Self as ActivationOps<Self>>::relu(y)
        } else {
            y
        }
    }
}
