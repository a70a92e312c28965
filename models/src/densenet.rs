//! DenseNet121 (Huang et al. 2017, "Densely Connected Convolutional Networks", Table 1 and
//! section 3): a 7x7/2 convolution with 64 filters and a 3x3/2 max pool, four dense blocks of
//! (6, 12, 24, 16) bottleneck layers with growth rate 32 (BN-ReLU-conv1x1 to 4 x 32 channels,
//! BN-ReLU-conv3x3 to 32), transition layers with compression 0.5 (BN-ReLU-conv1x1, 2x2/2
//! average pool) between the blocks, a final batch norm, ReLU, global average pooling and a
//! linear head. The layout (and parameter count) is torchvision's `densenet121`, so its
//! ImageNet weights load with [`crate::pretrained`].

use burn::config::Config;
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{AvgPool2d, AvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::module::adaptive_avg_pool2d;
use burn::tensor::{Device, Tensor};

use crate::kernels::{batch_norm_relu_layer, conv2d_layer};

/// Configuration of a [`DenseNet121`]; the defaults are DenseNet-121's (Huang et al. 2017,
/// Table 1) with a one-output head.
#[derive(Config, Debug)]
pub struct DenseNet121Config {
    /// Channels added by each dense layer (k in the paper).
    #[config(default = 32)]
    pub growth_rate: usize,
    /// Dense layers per block.
    #[config(default = "vec![6, 12, 24, 16]")]
    pub block_config: Vec<usize>,
    /// Filters of the stem convolution.
    #[config(default = 64)]
    pub init_features: usize,
    /// Bottleneck width as a multiple of the growth rate (the 1x1 convolution has
    /// `bn_size * growth_rate` filters).
    #[config(default = 4)]
    pub bn_size: usize,
    /// Compression of the transition layers (theta in section 3).
    #[config(default = 0.5)]
    pub compression: f64,
    /// Input channels (3 for RGB or grayscale replicated to 3, as in CheXpert training).
    #[config(default = 3)]
    pub in_channels: usize,
    /// Outputs of the head (1 for a score, 1000 for ImageNet).
    #[config(default = 1)]
    pub num_outputs: usize,
}

/// A bottleneck layer: BN-ReLU-conv1x1 (`bn_size * growth` filters), BN-ReLU-conv3x3
/// (`growth` filters). Field names follow torchvision's `_DenseLayer`.
#[derive(Module, Debug)]
pub struct DenseLayer {
    /// Batch norm of the concatenated input.
    pub norm1: BatchNorm,
    /// 1x1 bottleneck convolution.
    pub conv1: Conv2d,
    /// Batch norm of the bottleneck.
    pub norm2: BatchNorm,
    /// 3x3 convolution producing the new features.
    pub conv2: Conv2d,
}

impl DenseLayer {
    fn new(c_in: usize, growth: usize, bn_size: usize, device: &Device) -> Self {
        let width = bn_size * growth;
        DenseLayer {
            norm1: BatchNormConfig::new(c_in).init(device),
            conv1: Conv2dConfig::new([c_in, width], [1, 1])
                .with_bias(false)
                .init(device),
            norm2: BatchNormConfig::new(width).init(device),
            conv2: Conv2dConfig::new([width, growth], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .with_bias(false)
                .init(device),
        }
    }

    /// The new feature maps.
    ///
    /// # Shapes
    /// - input: `[batch, c_in, h, w]` (all earlier feature maps of the block, concatenated)
    /// - output: `[batch, growth, h, w]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let out = conv2d_layer(&self.conv1, batch_norm_relu_layer(&self.norm1, x));
        conv2d_layer(&self.conv2, batch_norm_relu_layer(&self.norm2, out))
    }
}

/// A dense block: each layer sees the concatenation of the block input and every earlier
/// layer's output (eq. 2 of Huang et al.).
#[derive(Module, Debug)]
pub struct DenseBlock {
    /// The bottleneck layers in order.
    pub layers: Vec<DenseLayer>,
}

impl DenseBlock {
    /// # Shapes
    /// - input: `[batch, c, h, w]`
    /// - output: `[batch, c + layers * growth, h, w]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let mut features = x;
        for layer in &self.layers {
            let new = layer.forward(features.clone());
            features = Tensor::cat(vec![features, new], 1);
        }
        features
    }
}

/// A transition layer: BN-ReLU-conv1x1 (compression) and a 2x2 average pool with stride 2.
#[derive(Module, Debug)]
pub struct Transition {
    /// Batch norm.
    pub norm: BatchNorm,
    /// 1x1 convolution to `floor(compression * c)` channels.
    pub conv: Conv2d,
    /// 2x2 average pool, stride 2.
    pub pool: AvgPool2d,
}

impl Transition {
    /// # Shapes
    /// - input: `[batch, c_in, h, w]`
    /// - output: `[batch, c_out, h / 2, w / 2]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let out = conv2d_layer(&self.conv, batch_norm_relu_layer(&self.norm, x));
        self.pool.forward(out)
    }
}

/// DenseNet121 producing `num_outputs` values per image.
#[derive(Module, Debug)]
pub struct DenseNet121 {
    /// Stem: 7x7 convolution, stride 2.
    pub conv0: Conv2d,
    /// Stem batch norm.
    pub norm0: BatchNorm,
    /// Stem max pool: 3x3, stride 2, padding 1.
    pub pool0: MaxPool2d,
    /// The dense blocks.
    pub blocks: Vec<DenseBlock>,
    /// The transitions after every block but the last.
    pub transitions: Vec<Transition>,
    /// Final batch norm (torchvision's `features.norm5`).
    pub norm5: BatchNorm,
    /// Linear head.
    pub classifier: Linear,
}

impl DenseNet121Config {
    /// Create the network on `device` (Burn's default initializers).
    pub fn init(&self, device: &Device) -> DenseNet121 {
        let mut c = self.init_features;
        let mut blocks = Vec::with_capacity(self.block_config.len());
        let mut transitions = Vec::new();
        for (i, &layers) in self.block_config.iter().enumerate() {
            let block = DenseBlock {
                layers: (0..layers)
                    .map(|j| {
                        DenseLayer::new(
                            c + j * self.growth_rate,
                            self.growth_rate,
                            self.bn_size,
                            device,
                        )
                    })
                    .collect(),
            };
            blocks.push(block);
            c += layers * self.growth_rate;
            if i + 1 < self.block_config.len() {
                let out = (c as f64 * self.compression).floor() as usize;
                transitions.push(Transition {
                    norm: BatchNormConfig::new(c).init(device),
                    conv: Conv2dConfig::new([c, out], [1, 1])
                        .with_bias(false)
                        .init(device),
                    pool: AvgPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
                });
                c = out;
            }
        }
        DenseNet121 {
            conv0: Conv2dConfig::new([self.in_channels, self.init_features], [7, 7])
                .with_stride([2, 2])
                .with_padding(PaddingConfig2d::Explicit(3, 3, 3, 3))
                .with_bias(false)
                .init(device),
            norm0: BatchNormConfig::new(self.init_features).init(device),
            pool0: MaxPool2dConfig::new([3, 3])
                .with_strides([2, 2])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(),
            blocks,
            transitions,
            norm5: BatchNormConfig::new(c).init(device),
            classifier: LinearConfig::new(c, self.num_outputs).init(device),
        }
    }
}

impl DenseNet121 {
    /// Feature vector before the head (1024 values for DenseNet-121).
    ///
    /// # Shapes
    /// - input: `[batch, in_channels, height, width]` (224 x 224 for ImageNet and CheXpert;
    ///   any size of at least 32 x 32 works)
    /// - output: `[batch, features]`
    pub fn embed(&self, x: Tensor<4>) -> Tensor<2> {
        let mut out = self.pool0.forward(batch_norm_relu_layer(
            &self.norm0,
            conv2d_layer(&self.conv0, x),
        ));
        for (i, block) in self.blocks.iter().enumerate() {
            out = block.forward(out);
            if let Some(transition) = self.transitions.get(i) {
                out = transition.forward(out);
            }
        }
        let out = batch_norm_relu_layer(&self.norm5, out);
        let [b, c, _, _] = out.dims();
        adaptive_avg_pool2d(out, [1, 1]).reshape([b, c])
    }

    /// Outputs per image.
    ///
    /// # Shapes
    /// - input: `[batch, in_channels, height, width]`
    /// - output: `[batch, num_outputs]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<2> {
        self.classifier.forward(self.embed(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scorer;

    /// Channels entering each batch norm, as torchvision's DenseNet-121 has them.
    fn bn_channels() -> usize {
        let mut total = 64; // norm0
        let mut c = 64;
        for (i, layers) in [6usize, 12, 24, 16].into_iter().enumerate() {
            for j in 0..layers {
                total += (c + 32 * j) + 128; // norm1, norm2
            }
            c += 32 * layers;
            if i < 3 {
                total += c; // transition norm
                c /= 2;
            }
        }
        total + c // norm5
    }

    #[test]
    fn parameter_count_matches_torchvision() {
        let device = Device::flex();
        let imagenet = DenseNet121Config::new()
            .with_num_outputs(1000)
            .init(&device);
        // torchvision's densenet121 has 7,978,856 parameters; Burn's num_params also counts the
        // batch-norm running mean and variance (two per normalized channel).
        let bn = bn_channels();
        assert_eq!(bn, 41_824);
        assert_eq!(imagenet.num_params(), 7_978_856 + 2 * bn);
        let scorer = DenseNet121Config::new().init(&device);
        assert_eq!(scorer.num_params(), 7_978_856 - 1_025_000 + 1_025 + 2 * bn);
        assert_eq!(scorer.classifier.weight.dims(), [1024, 1]);
    }

    #[test]
    fn shapes_at_a_small_input_size() {
        let device = Device::flex();
        let model = DenseNet121Config::new().init(&device);
        let s = model.score(Tensor::<4>::ones([2, 3, 64, 64], &device));
        assert_eq!(s.dims(), [2]);
        let v: Vec<f32> = s.into_data().try_into_vec().unwrap();
        assert!(v.iter().all(|x| x.is_finite()));
        let gray = DenseNet121Config::new()
            .with_in_channels(1)
            .with_num_outputs(5)
            .init(&device);
        let out = gray.forward(Tensor::<4>::zeros([1, 1, 32, 32], &device));
        assert_eq!(out.dims(), [1, 5]);
    }
}
