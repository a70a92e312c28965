//! The contract between the models and rankrisk's objectives: a Burn module that gives one
//! score per sample (the `s_i` that every objective ranks: eq. (1) of the rank-based paper, the
//! pairs `s_i - s_j` of the pAUC paper). The objectives see nothing else of a model. The input
//! may be of any rank: images `[batch, channels, height, width]` (the default, `Scorer` is
//! `Scorer<4>`) or tabular rows `[batch, features]` (`Scorer<2>`); a user's own Burn model
//! implements [`Scorer::scores`] for its input.

use burn::module::{Module, ModuleDisplay};
use burn::tensor::Tensor;

use crate::{DenseNet121, LinearScorer, ResNet20};

/// A module that scores samples of rank-`D` inputs (images by default): one number per sample
/// and task (one task for a binary problem, one per label for a multi-label one such as
/// CheXpert's five competition tasks).
pub trait Scorer<const D: usize = 4>: Module + ModuleDisplay {
    /// One score per sample and task.
    ///
    /// # Shapes
    /// - input: `[batch, ...]` of rank `D` (`[batch, channels, height, width]` for images,
    ///   `[batch, features]` for tabular rows)
    /// - output: `[batch, tasks]`
    fn scores(&self, x: Tensor<D>) -> Tensor<2>;

    /// One score per sample, for a model of one task (the only column of [`Scorer::scores`]).
    ///
    /// # Shapes
    /// - input: `[batch, ...]` of rank `D`
    /// - output: `[batch]`
    ///
    /// # Panics
    /// For a model of several tasks (outputs), with a message that says so and points to
    /// [`Scorer::scores`].
    fn score(&self, x: Tensor<D>) -> Tensor<1> {
        let out = self.scores(x);
        let [b, tasks] = out.dims();
        assert!(
            tasks == 1,
            "Scorer::score gives one score per sample, for a model of one task; this model has \
             {tasks} outputs: use Scorer::scores ([batch, tasks]) and pick a column"
        );
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

impl Scorer<2> for LinearScorer {
    /// One task: one feature vector per row (`d_input` features).
    fn scores(&self, x: Tensor<2>) -> Tensor<2> {
        let [b, _] = x.dims();
        self.forward(x).reshape([b, 1])
    }

    fn score(&self, x: Tensor<2>) -> Tensor<1> {
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

#[cfg(test)]
mod tests {
    use burn::tensor::{Device, TensorData};

    use super::*;

    #[test]
    #[should_panic(expected = "this model has 10 outputs: use Scorer::scores")]
    fn score_of_a_model_of_several_tasks_says_to_use_scores() {
        let device = Device::flex();
        let model = crate::resnet20::ResNet20Config::new()
            .with_num_outputs(10)
            .init(&device);
        let x = Tensor::<4>::zeros([2, 3, 32, 32], &device);
        let _ = model.score(x);
    }
    use crate::LinearScorerConfig;

    /// The same model scores tabular rows (`Scorer<2>`) as it scores the same values laid out
    /// as images (`Scorer<4>`, flattened).
    #[test]
    fn a_linear_scorer_scores_rows_and_images_alike() {
        let device = Device::flex();
        let model = LinearScorerConfig::new(6)
            .with_hidden(Some(4))
            .with_bias(true)
            .init(&device);
        let values: Vec<f32> = (0..18).map(|v| (v as f32 * 0.37).sin()).collect();
        let rows = Tensor::<2>::from_data(TensorData::new(values.clone(), [3, 6]), &device);
        let images = Tensor::<4>::from_data(TensorData::new(values, [3, 1, 2, 3]), &device);
        let a: Vec<f32> = Scorer::<2>::score(&model, rows)
            .into_data()
            .try_to_vec()
            .unwrap();
        let b: Vec<f32> = Scorer::<4>::score(&model, images)
            .into_data()
            .try_to_vec()
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 3);
    }
}
