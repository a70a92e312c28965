//! The contract between the models and rankrisk's objectives: a Burn module that gives one
//! score per image (the `s_i` that every objective ranks: eq. (1) of the rank-based paper, the
//! pairs `s_i - s_j` of the pAUC paper). The objectives see nothing else of a model.

use burn::module::{Module, ModuleDisplay};
use burn::tensor::Tensor;

use crate::{DenseNet121, LinearScorer, ResNet20};

/// A module that scores images: one number per image and task (one task for a binary
/// problem, one per label for a multi-label one such as CheXpert's five competition tasks).
pub trait Scorer: Module + ModuleDisplay {
    /// One score per image and task.
    ///
    /// # Shapes
    /// - input: `[batch, channels, height, width]`
    /// - output: `[batch, tasks]`
    fn scores(&self, x: Tensor<4>) -> Tensor<2>;

    /// One score per image, for a model of one task (the only column of [`Scorer::scores`]).
    ///
    /// # Shapes
    /// - input: `[batch, channels, height, width]`
    /// - output: `[batch]`
    fn score(&self, x: Tensor<4>) -> Tensor<1> {
        let out = self.scores(x);
        let [b, _] = out.dims();
        out.reshape([b])
    }
}

impl Scorer for ResNet20 {
    /// The head's outputs (`num_outputs` tasks).
    fn scores(&self, x: Tensor<4>) -> Tensor<2> {
        self.forward(x)
    }
}

impl Scorer for DenseNet121 {
    /// The head's outputs (`num_outputs` tasks).
    fn scores(&self, x: Tensor<4>) -> Tensor<2> {
        self.forward(x)
    }
}

impl Scorer for LinearScorer {
    /// One task: the pixels flattened to one feature vector per image (`d_input = c h w`).
    fn scores(&self, x: Tensor<4>) -> Tensor<2> {
        let [b, c, h, w] = x.dims();
        self.forward(x.reshape([b, c * h * w])).reshape([b, 1])
    }

    fn score(&self, x: Tensor<4>) -> Tensor<1> {
        let [b, c, h, w] = x.dims();
        self.forward(x.reshape([b, c * h * w]))
    }
}
