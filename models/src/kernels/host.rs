//! Contiguous `f32` views of the CPU backends' tensor primitives, and primitives built from
//! vectors, so that one slice kernel serves flex and ndarray.

// ndarray stays a supported CPU backend in rankrisk (deprecated in burn 0.22).
#![allow(deprecated)]

use std::borrow::Cow;

use burn::backend::ndarray::NdArrayTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Flex, NdArray, TensorMetadata};
use burn::tensor::{Shape, TensorData};

/// A CPU backend whose float tensors the kernels can read as `f32` slices.
pub trait HostF32: Backend {
    /// The elements of `t` in row-major order, borrowed when `t` is contiguous.
    ///
    /// # Panics
    /// When `t` does not hold `f32` (the layers only route `f32` tensors here).
    fn view(t: &FloatTensor<Self>) -> Cow<'_, [f32]>;

    /// A tensor of `shape` holding `data` (row-major), without a copy.
    fn tensor(data: Vec<f32>, shape: Shape) -> FloatTensor<Self>;

    /// The dimensions of `t`.
    fn dims(t: &FloatTensor<Self>) -> Vec<usize> {
        t.shape().to_vec()
    }
}

impl HostF32 for Flex {
    fn view(t: &FloatTensor<Self>) -> Cow<'_, [f32]> {
        match t.as_slice::<f32>() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(
                t.to_contiguous()
                    .as_slice::<f32>()
                    .expect("a contiguous f32 tensor")
                    .to_vec(),
            ),
        }
    }

    fn tensor(data: Vec<f32>, shape: Shape) -> FloatTensor<Self> {
        burn::backend::flex::FlexTensor::from_data(TensorData::new(data, shape))
    }
}

impl HostF32 for NdArray {
    fn view(t: &FloatTensor<Self>) -> Cow<'_, [f32]> {
        match t {
            NdArrayTensor::F32(storage) => {
                let view = storage.view();
                match view.to_slice() {
                    Some(s) => Cow::Borrowed(s),
                    None => Cow::Owned(view.iter().copied().collect()),
                }
            }
            other => panic!("the CPU kernels take f32 tensors, got {:?}", other.dtype()),
        }
    }

    fn tensor(data: Vec<f32>, shape: Shape) -> FloatTensor<Self> {
        NdArrayTensor::from_data(TensorData::new(data, shape))
    }
}
