//! ResNet-20 for CIFAR-sized images (He et al. 2016, section 4.2): a 3x3 convolution with 16
//! filters, three stages of three basic blocks with 16, 32 and 64 filters (the first block of
//! stages 2 and 3 halves the resolution), option-A shortcuts (identity, or subsampling by 2 and
//! zero-padding the new channels: no parameters), global average pooling and a linear head.

use burn::config::Config;
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::module::adaptive_avg_pool2d;
use burn::tensor::{Device, Tensor, s};

use crate::kernels::{add_relu, batch_norm_layer, batch_norm_relu_layer, conv2d_layer};

/// Configuration of a [`ResNet20`].
#[derive(Config, Debug)]
pub struct ResNet20Config {
    /// Input channels (3 for CIFAR, 1 for grayscale images such as Fashion-MNIST).
    #[config(default = 3)]
    pub in_channels: usize,
    /// Outputs of the head (1 for a score).
    #[config(default = 1)]
    pub num_outputs: usize,
}

/// A basic block: conv3x3-BN-ReLU-conv3x3-BN, plus the option-A shortcut, then ReLU.
#[derive(Module, Debug)]
pub struct BasicBlock {
    /// First convolution (stride 1 or 2).
    pub conv1: Conv2d,
    /// Its batch norm.
    pub bn1: BatchNorm,
    /// Second convolution.
    pub conv2: Conv2d,
    /// Its batch norm.
    pub bn2: BatchNorm,
    /// Channels added by the shortcut's zero padding (0 for the identity shortcut).
    pub pad_channels: usize,
    /// Whether the shortcut subsamples by 2.
    pub downsample: bool,
}

fn conv3x3(c_in: usize, c_out: usize, stride: usize, device: &Device) -> Conv2d {
    Conv2dConfig::new([c_in, c_out], [3, 3])
        .with_stride([stride, stride])
        .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
        .with_bias(false)
        .init(device)
}

impl BasicBlock {
    fn new(c_in: usize, c_out: usize, stride: usize, device: &Device) -> Self {
        BasicBlock {
            conv1: conv3x3(c_in, c_out, stride, device),
            bn1: BatchNormConfig::new(c_out).init(device),
            conv2: conv3x3(c_out, c_out, 1, device),
            bn2: BatchNormConfig::new(c_out).init(device),
            pad_channels: c_out - c_in,
            downsample: stride == 2,
        }
    }

    /// # Shapes
    /// - input: `[batch, c_in, h, w]`
    /// - output: `[batch, c_out, h / stride, w / stride]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let out = batch_norm_relu_layer(&self.bn1, conv2d_layer(&self.conv1, x.clone()));
        let out = batch_norm_layer(&self.bn2, conv2d_layer(&self.conv2, out));
        let mut shortcut = if self.downsample {
            x.slice(s![.., .., ..;2, ..;2])
        } else {
            x
        };
        if self.pad_channels > 0 {
            let [b, _, h, w] = shortcut.dims();
            let half = self.pad_channels / 2;
            let device = shortcut.device();
            let before = Tensor::<4>::zeros([b, half, h, w], &device);
            let after = Tensor::<4>::zeros([b, self.pad_channels - half, h, w], &device);
            shortcut = Tensor::cat(vec![before, shortcut, after], 1);
        }
        add_relu(out, shortcut)
    }
}

/// ResNet-20 producing `num_outputs` values per image.
#[derive(Module, Debug)]
pub struct ResNet20 {
    /// Stem convolution (16 filters).
    pub conv: Conv2d,
    /// Stem batch norm.
    pub bn: BatchNorm,
    /// The nine basic blocks (three per stage).
    pub blocks: Vec<BasicBlock>,
    /// Linear head 64 -> num_outputs.
    pub head: Linear,
}

impl ResNet20Config {
    /// Create the network on `device` (Kaiming-uniform convolutions, Burn's default).
    pub fn init(&self, device: &Device) -> ResNet20 {
        let mut blocks = Vec::with_capacity(9);
        let mut c_in = 16;
        for (stage, c_out) in [16usize, 32, 64].into_iter().enumerate() {
            for b in 0..3 {
                let stride = if stage > 0 && b == 0 { 2 } else { 1 };
                blocks.push(BasicBlock::new(c_in, c_out, stride, device));
                c_in = c_out;
            }
        }
        ResNet20 {
            conv: conv3x3(self.in_channels, 16, 1, device),
            bn: BatchNormConfig::new(16).init(device),
            blocks,
            head: LinearConfig::new(64, self.num_outputs).init(device),
        }
    }
}

impl ResNet20 {
    /// Outputs per image.
    ///
    /// # Shapes
    /// - input: `[batch, in_channels, height, width]` (32 x 32 for CIFAR)
    /// - output: `[batch, num_outputs]`
    pub fn forward(&self, x: Tensor<4>) -> Tensor<2> {
        let mut out = batch_norm_relu_layer(&self.bn, conv2d_layer(&self.conv, x));
        for block in &self.blocks {
            out = block.forward(out);
        }
        let [b, c, _, _] = out.dims();
        let pooled = adaptive_avg_pool2d(out, [1, 1]).reshape([b, c]);
        self.head.forward(pooled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scorer;

    #[test]
    fn parameter_count_matches_the_published_architecture() {
        let device = Device::flex();
        // 10 classes: 432 + 32 (stem) + 14,016 + 51,072 + 203,520 (stages) + 650 (head)
        // = 269,722 trainable parameters, the "0.27M" of He et al. Burn's num_params also counts
        // the BatchNorm running mean and variance: 2 x 688 channels = 1,376 more.
        let model = ResNet20Config::new().with_num_outputs(10).init(&device);
        assert_eq!(model.num_params(), 269_722 + 1_376);
        let scorer = ResNet20Config::new().init(&device);
        assert_eq!(scorer.num_params(), 269_722 - 650 + 65 + 1_376);
    }

    #[test]
    fn shapes_for_rgb_and_grayscale_inputs() {
        let device = Device::flex();
        let model = ResNet20Config::new().with_num_outputs(10).init(&device);
        let out = model.forward(Tensor::<4>::zeros([2, 3, 32, 32], &device));
        assert_eq!(out.dims(), [2, 10]);
        let gray = ResNet20Config::new().with_in_channels(1).init(&device);
        let s = gray.score(Tensor::<4>::ones([3, 1, 28, 28], &device));
        assert_eq!(s.dims(), [3]);
        let v: Vec<f32> = s.into_data().try_into_vec().unwrap();
        assert!(v.iter().all(|x| x.is_finite()));
    }
}
