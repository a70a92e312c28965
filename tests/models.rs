//! The same weights give the same scores on every backend: a model is built on flex, written
//! to a burnpack checkpoint, and read back on ndarray and wgpu (lavapipe in CI; set
//! RANKRISK_SKIP_WGPU=1 on a machine without any Vulkan driver). Inference mode, so batch norm
//! uses its running statistics, which are set to non-trivial values first.

use burn::module::RunningState;
use burn::nn::BatchNorm;
use burn::tensor::{Device, Tensor, TensorData};
use rankrisk::backend::{BackendKind, device};
use rankrisk_models::checkpoint;
use rankrisk_models::{DenseNet121Config, ResNet20Config, Scorer};

fn wgpu_skipped() -> bool {
    std::env::var_os("RANKRISK_SKIP_WGPU").is_some_and(|v| v == "1")
}

fn kinds() -> Vec<BackendKind> {
    let mut k = vec![BackendKind::Ndarray, BackendKind::Flex];
    if !wgpu_skipped() {
        k.push(BackendKind::Wgpu);
    }
    k
}

fn input(device: &Device, b: usize, c: usize, hw: usize) -> Tensor<4> {
    let n = b * c * hw * hw;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    Tensor::from_data(TensorData::new(v, [b, c, hw, hw]), device)
}

fn scores(t: Tensor<1>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_into_vec().unwrap()
}

fn set_stats(bn: &mut BatchNorm, k: f32, device: &Device) {
    let c = bn.gamma.dims()[0];
    let mean: Vec<f32> = (0..c)
        .map(|i| ((i as f32) * 0.37 + k).sin() * 0.1)
        .collect();
    let var: Vec<f32> = (0..c)
        .map(|i| 1.0 + ((i as f32) * 0.11 + k).cos() * 0.5)
        .collect();
    bn.running_mean = RunningState::new(Tensor::from_data(TensorData::new(mean, [c]), device));
    bn.running_var = RunningState::new(Tensor::from_data(TensorData::new(var, [c]), device));
}

fn assert_close(name: &str, kind: BackendKind, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-4 * scale,
            "{name} on {kind}: {got:?} vs flex {want:?}"
        );
    }
}

#[test]
fn resnet20_scores_agree_across_backends() {
    let flex = Device::flex();
    flex.seed(21);
    let mut model = ResNet20Config::new().init(&flex);
    for (i, block) in model.blocks.iter_mut().enumerate() {
        set_stats(&mut block.bn1, i as f32, &flex);
        set_stats(&mut block.bn2, i as f32 + 0.5, &flex);
    }
    let dir = std::env::temp_dir().join(format!("rankrisk-xb-resnet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("resnet20.bpk");
    checkpoint::save(&model, &path).unwrap();
    let want = scores(model.score(input(&flex, 4, 3, 32)));
    assert!(want.iter().any(|v| v.abs() > 1e-3));
    for kind in kinds() {
        let dev = device(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let m = checkpoint::load(ResNet20Config::new().init(&dev), &path).unwrap();
        assert_close(
            "ResNet-20",
            kind,
            &scores(m.score(input(&dev, 4, 3, 32))),
            &want,
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn densenet121_scores_agree_across_backends() {
    let flex = Device::flex();
    flex.seed(22);
    let mut model = DenseNet121Config::new().init(&flex);
    set_stats(&mut model.norm0, 0.0, &flex);
    set_stats(&mut model.norm5, 1.0, &flex);
    for (b, block) in model.blocks.iter_mut().enumerate() {
        for layer in block.layers.iter_mut() {
            set_stats(&mut layer.norm1, b as f32, &flex);
            set_stats(&mut layer.norm2, b as f32 + 0.5, &flex);
        }
    }
    let dir = std::env::temp_dir().join(format!("rankrisk-xb-densenet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("densenet121.bpk");
    checkpoint::save(&model, &path).unwrap();
    let want = scores(model.score(input(&flex, 2, 3, 64)));
    assert!(want.iter().any(|v| v.abs() > 1e-3));
    for kind in kinds() {
        let dev = device(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let m = checkpoint::load(DenseNet121Config::new().init(&dev), &path).unwrap();
        assert_close(
            "DenseNet121",
            kind,
            &scores(m.score(input(&dev, 2, 3, 64))),
            &want,
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
