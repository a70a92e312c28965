//! The contract between the models and rankrisk's objectives: a Burn module that gives one
//! score per image (the `s_i` that every objective ranks: eq. (1) of the rank-based paper, the
//! pairs `s_i - s_j` of the pAUC paper). The objectives see nothing else of a model.

use burn::module::{Module, ModuleDisplay};
use burn::tensor::Tensor;

use crate::{DenseNet121, LinearScorer, ResNet20};

/// A module that scores images, one number per image.
pub trait Scorer: Module + ModuleDisplay {
    /// One score per image.
    ///
    /// # Shapes
    /// - input: `[batch, channels, height, width]`
    /// - output: `[batch]`
    fn score(&self, x: Tensor<4>) -> Tensor<1>;
}

/// The outputs of a one-output head, `[batch, 1]`, as one score per image, `[batch]`.
fn single_output(out: Tensor<2>) -> Tensor<1> {
    let [b, _] = out.dims();
    out.reshape([b])
}

impl Scorer for ResNet20 {
    /// The head's one output (build it with `num_outputs = 1`, the default).
    fn score(&self, x: Tensor<4>) -> Tensor<1> {
        single_output(self.forward(x))
    }
}

impl Scorer for DenseNet121 {
    /// The head's one output (build it with `num_outputs = 1`, the default).
    fn score(&self, x: Tensor<4>) -> Tensor<1> {
        single_output(self.forward(x))
    }
}

impl Scorer for LinearScorer {
    /// The pixels flattened to one feature vector per image (`d_input = c h w`).
    fn score(&self, x: Tensor<4>) -> Tensor<1> {
        let [b, c, h, w] = x.dims();
        self.forward(x.reshape([b, c * h * w]))
    }
}
