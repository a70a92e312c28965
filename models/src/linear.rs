//! A linear scorer `s = x w + b` (optionally through one hidden ReLU layer): the model of the
//! rank-based paper's experiments (eq. 1 scores samples by `X w`) and of the tabular examples.

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::tensor::{Device, Tensor};

/// Configuration of a [`LinearScorer`].
#[derive(Config, Debug)]
pub struct LinearScorerConfig {
    /// Number of input features `d`.
    pub d_input: usize,
    /// Width of an optional hidden ReLU layer; `None` (the default) gives the plain linear model.
    #[config(default = "None")]
    pub hidden: Option<usize>,
    /// Whether the output layer has a bias. The rank-based paper's linear models have none.
    #[config(default = false)]
    pub bias: bool,
}

/// Scores each sample with one number: `x w (+ b)`, or `relu(x W1 + b1) w2 (+ b2)` with a hidden
/// layer.
#[derive(Module, Debug)]
pub struct LinearScorer {
    /// Optional hidden layer.
    pub hidden: Option<Linear>,
    /// Activation after the hidden layer.
    pub activation: Relu,
    /// Output layer: `d -> 1` (its weight is `w` of eq. 1 for the plain linear model).
    pub output: Linear,
}

impl LinearScorerConfig {
    /// Create the scorer on `device` (Kaiming-uniform initialization, Burn's default).
    pub fn init(&self, device: &Device) -> LinearScorer {
        let (hidden, d_out_in) = match self.hidden {
            Some(width) => (
                Some(LinearConfig::new(self.d_input, width).init(device)),
                width,
            ),
            None => (None, self.d_input),
        };
        LinearScorer {
            hidden,
            activation: Relu::new(),
            output: LinearConfig::new(d_out_in, 1)
                .with_bias(self.bias)
                .init(device),
        }
    }
}

impl LinearScorer {
    /// One score per sample.
    ///
    /// # Shapes
    /// - input: `[batch, d_input]`
    /// - output: `[batch]`
    pub fn forward(&self, input: Tensor<2>) -> Tensor<1> {
        let features = match &self.hidden {
            Some(layer) => self.activation.forward(layer.forward(input)),
            None => input,
        };
        let [batch, _] = features.dims();
        self.output.forward(features).reshape([batch])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    #[test]
    fn scores_have_one_value_per_row_and_match_x_times_w() {
        let device = Device::flex();
        let model = LinearScorerConfig::new(3).init(&device);
        let x = Tensor::<2>::from_data(
            TensorData::new(vec![1.0f32, 2.0, 3.0, -1.0, 0.5, 0.0], [2, 3]),
            &device,
        );
        let s: Vec<f32> = model.forward(x).into_data().try_into_vec().unwrap();
        let w: Vec<f32> = model
            .output
            .weight
            .val()
            .into_data()
            .try_into_vec()
            .unwrap();
        assert_eq!(s.len(), 2);
        let expect0 = w[0] + 2.0 * w[1] + 3.0 * w[2];
        let expect1 = -w[0] + 0.5 * w[1];
        assert!(
            (s[0] - expect0).abs() < 1e-6 && (s[1] - expect1).abs() < 1e-6,
            "{s:?} {w:?}"
        );
    }

    #[test]
    fn hidden_layer_variant_runs() {
        let device = Device::flex();
        let model = LinearScorerConfig::new(4)
            .with_hidden(Some(8))
            .with_bias(true)
            .init(&device);
        let x = Tensor::<2>::ones([5, 4], &device);
        assert_eq!(model.forward(x).dims(), [5]);
    }
}
