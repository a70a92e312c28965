//! DenseNet-121 weight import from a `.pth` file with torchvision's key names, and burnpack
//! checkpoints. No weights can be downloaded here, so the test writes the fixture itself: a
//! state dict in PyTorch's legacy serialization (the format of the published
//! `densenet121-a639ec97.pth`: magic number, protocol 1001, system info, the pickled state
//! dict with persistent storage ids, the storage key list, then the raw storages), with the
//! legacy `denselayerN.norm.1.weight` names. The names are produced here from torchvision's
//! layout, independently of the import's remapping rules.

use std::path::Path;

use burn::nn::BatchNorm;
use burn::tensor::{Device, Tensor, TensorData};
use rankrisk_models::checkpoint;
use rankrisk_models::pretrained::{Head, PretrainedError, load_torchvision_densenet121};
use rankrisk_models::{DenseNet121, DenseNet121Config, ResNet20Config, Scorer};

/// One entry of a state dict: name, shape, and values (f32, or i64 for counters).
enum Values {
    F32(Vec<f32>),
    I64(Vec<i64>),
}

struct Entry {
    name: String,
    shape: Vec<usize>,
    values: Values,
}

fn f32s<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_into_vec().unwrap()
}

fn push_bn(out: &mut Vec<Entry>, prefix: &str, bn: &BatchNorm) {
    let c = bn.gamma.dims()[0];
    for (suffix, v) in [
        ("weight", f32s(bn.gamma.val())),
        ("bias", f32s(bn.beta.val())),
        ("running_mean", f32s(bn.running_mean.value())),
        ("running_var", f32s(bn.running_var.value())),
    ] {
        out.push(Entry {
            name: format!("{prefix}.{suffix}"),
            shape: vec![c],
            values: Values::F32(v),
        });
    }
    out.push(Entry {
        name: format!("{prefix}.num_batches_tracked"),
        shape: vec![],
        values: Values::I64(vec![0]),
    });
}

fn push_conv(out: &mut Vec<Entry>, name: &str, w: Tensor<4>) {
    out.push(Entry {
        name: format!("{name}.weight"),
        shape: w.dims().to_vec(),
        values: Values::F32(f32s(w)),
    });
}

/// torchvision's state dict of `model`, with the legacy dense-layer names.
fn torchvision_state_dict(model: &DenseNet121) -> Vec<Entry> {
    let mut out = Vec::new();
    push_conv(&mut out, "features.conv0", model.conv0.weight.val());
    push_bn(&mut out, "features.norm0", &model.norm0);
    for (b, block) in model.blocks.iter().enumerate() {
        for (l, layer) in block.layers.iter().enumerate() {
            let p = format!("features.denseblock{}.denselayer{}", b + 1, l + 1);
            push_bn(&mut out, &format!("{p}.norm.1"), &layer.norm1);
            push_conv(&mut out, &format!("{p}.conv.1"), layer.conv1.weight.val());
            push_bn(&mut out, &format!("{p}.norm.2"), &layer.norm2);
            push_conv(&mut out, &format!("{p}.conv.2"), layer.conv2.weight.val());
        }
        if let Some(t) = model.transitions.get(b) {
            let p = format!("features.transition{}", b + 1);
            push_bn(&mut out, &format!("{p}.norm"), &t.norm);
            push_conv(&mut out, &format!("{p}.conv"), t.conv.weight.val());
        }
    }
    push_bn(&mut out, "features.norm5", &model.norm5);
    // PyTorch stores a linear weight as [out, in]; Burn as [in, out].
    let w = model.classifier.weight.val().transpose();
    out.push(Entry {
        name: "classifier.weight".to_string(),
        shape: w.dims().to_vec(),
        values: Values::F32(f32s(w)),
    });
    let bias = model.classifier.bias.as_ref().unwrap().val();
    out.push(Entry {
        name: "classifier.bias".to_string(),
        shape: bias.dims().to_vec(),
        values: Values::F32(f32s(bias)),
    });
    out
}

/// A minimal protocol-2 pickle writer, enough for torch's legacy serialization.
struct Pickle(Vec<u8>);

impl Pickle {
    fn new() -> Self {
        Pickle(vec![0x80, 0x02])
    }
    fn op(&mut self, b: u8) -> &mut Self {
        self.0.push(b);
        self
    }
    fn global(&mut self, module: &str, name: &str) -> &mut Self {
        self.0.push(b'c');
        self.0
            .extend_from_slice(format!("{module}\n{name}\n").as_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.0.push(b'X');
        self.0.extend_from_slice(&(s.len() as u32).to_le_bytes());
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn int(&mut self, v: i64) -> &mut Self {
        self.0.push(b'J');
        self.0.extend_from_slice(&(v as i32).to_le_bytes());
        self
    }
    fn ints(&mut self, v: &[i64]) -> &mut Self {
        if v.is_empty() {
            return self.op(b')');
        }
        self.op(b'(');
        for &x in v {
            self.int(x);
        }
        self.op(b't')
    }
    fn finish(&mut self) -> Vec<u8> {
        self.0.push(b'.');
        std::mem::take(&mut self.0)
    }
}

fn write_legacy_pth(path: &Path, entries: &[Entry]) {
    let mut file = Vec::new();
    // Magic number 0x1950a86a20f9469cfc6c as a LONG1.
    let mut p = Pickle::new();
    p.op(0x8a).op(10);
    p.0.extend_from_slice(&[0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19]);
    file.extend(p.finish());
    file.extend(Pickle::new().int(1001).finish());
    let mut p = Pickle::new();
    p.op(b'}').op(b'(').str("protocol_version").int(1001);
    p.str("little_endian").op(0x88);
    p.str("type_sizes").op(b'}').op(b'(');
    p.str("short").int(2).str("int").int(4).str("long").int(4);
    file.extend(p.op(b'u').op(b'u').finish());

    let mut p = Pickle::new();
    p.global("collections", "OrderedDict")
        .op(b')')
        .op(b'R')
        .op(b'(');
    for (i, e) in entries.iter().enumerate() {
        let numel: usize = e.shape.iter().product();
        let class = match e.values {
            Values::F32(_) => "FloatStorage",
            Values::I64(_) => "LongStorage",
        };
        let mut stride = vec![1i64; e.shape.len()];
        for d in (0..e.shape.len().saturating_sub(1)).rev() {
            stride[d] = stride[d + 1] * e.shape[d + 1] as i64;
        }
        let shape: Vec<i64> = e.shape.iter().map(|&d| d as i64).collect();
        p.str(&e.name);
        p.global("torch._utils", "_rebuild_tensor_v2").op(b'(');
        p.op(b'(')
            .str("storage")
            .global("torch", class)
            .str(&i.to_string());
        p.str("cpu").int(numel as i64).op(b'N').op(b't').op(b'Q');
        p.int(0).ints(&shape).ints(&stride).op(0x89);
        p.global("collections", "OrderedDict").op(b')').op(b'R');
        p.op(b't').op(b'R');
    }
    file.extend(p.op(b'u').finish());

    let mut p = Pickle::new();
    p.op(b']').op(b'(');
    for i in 0..entries.len() {
        p.str(&i.to_string());
    }
    file.extend(p.op(b'e').finish());
    for e in entries {
        match &e.values {
            Values::F32(v) => {
                file.extend((v.len() as i64).to_le_bytes());
                v.iter().for_each(|x| file.extend(x.to_le_bytes()));
            }
            Values::I64(v) => {
                file.extend((v.len() as i64).to_le_bytes());
                v.iter().for_each(|x| file.extend(x.to_le_bytes()));
            }
        }
    }
    std::fs::write(path, file).unwrap();
}

fn input(device: &Device, b: usize, c: usize, hw: usize) -> Tensor<4> {
    let n = b * c * hw * hw;
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    Tensor::from_data(TensorData::new(v, [b, c, hw, hw]), device)
}

fn max_abs_diff<const D: usize>(a: Tensor<D>, b: Tensor<D>) -> f32 {
    f32s(a)
        .iter()
        .zip(f32s(b))
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// A trained-looking source: random weights and non-trivial batch-norm statistics.
fn source_model(device: &Device) -> DenseNet121 {
    device.seed(11);
    let mut m = DenseNet121Config::new().with_num_outputs(1000).init(device);
    let perturb = |bn: &mut BatchNorm, k: f32| {
        let c = bn.gamma.dims()[0];
        let mean: Vec<f32> = (0..c)
            .map(|i| ((i as f32) * 0.37 + k).sin() * 0.1)
            .collect();
        let var: Vec<f32> = (0..c)
            .map(|i| 1.0 + ((i as f32) * 0.11 + k).cos() * 0.5)
            .collect();
        bn.running_mean =
            burn::module::RunningState::new(Tensor::from_data(TensorData::new(mean, [c]), device));
        bn.running_var =
            burn::module::RunningState::new(Tensor::from_data(TensorData::new(var, [c]), device));
    };
    perturb(&mut m.norm0, 0.0);
    perturb(&mut m.norm5, 1.0);
    for (b, block) in m.blocks.iter_mut().enumerate() {
        for layer in block.layers.iter_mut() {
            perturb(&mut layer.norm1, b as f32);
            perturb(&mut layer.norm2, b as f32 + 0.5);
        }
    }
    m
}

#[test]
fn torchvision_densenet121_weights_load_with_the_legacy_key_names() {
    let device = Device::flex();
    let dir = std::env::temp_dir().join(format!("rankrisk-pth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("densenet121-fixture.pth");
    let source = source_model(&device);
    let entries = torchvision_state_dict(&source);
    // torchvision's state dict: 364 parameters, the running mean and variance of its 121 batch
    // norms, and their 121 num_batches_tracked counters.
    assert_eq!(entries.len(), 364 + 2 * 121 + 121);
    write_legacy_pth(&path, &entries);
    let x = input(&device, 2, 3, 64);

    // The whole network, classifier included.
    device.seed(99);
    let mut full = DenseNet121Config::new()
        .with_num_outputs(1000)
        .init(&device);
    assert!(max_abs_diff(full.forward(x.clone()), source.forward(x.clone())) > 1e-3);
    let report = load_torchvision_densenet121(&mut full, &path, Head::Load, None).unwrap();
    assert_eq!(report.applied.len(), 606, "{report}");
    assert!(report.missing.is_empty() && report.skipped.is_empty());
    assert_eq!(report.unused.len(), 121);
    assert!(
        report
            .unused
            .iter()
            .all(|k| k.ends_with("num_batches_tracked"))
    );
    assert!(
        report
            .applied
            .contains(&"blocks.2.layers.23.norm2.gamma".to_string())
    );
    let diff = max_abs_diff(full.forward(x.clone()), source.forward(x.clone()));
    assert!(diff < 1e-5, "scores differ by {diff}");

    // A one-output scorer on ImageNet features: the classifier is left out.
    let mut scorer = DenseNet121Config::new().init(&device);
    let report = load_torchvision_densenet121(&mut scorer, &path, Head::Replace, None).unwrap();
    assert_eq!(report.applied.len(), 604, "{report}");
    assert!(report.missing.is_empty(), "{report}");
    assert!(
        report
            .to_string()
            .starts_with("604 tensors applied, 0 missing, 121 unused, 2 skipped"),
        "{report}"
    );
    assert_eq!(report.skipped, vec!["classifier.bias", "classifier.weight"]);
    let diff = max_abs_diff(scorer.embed(x.clone()), source.embed(x.clone()));
    assert!(diff < 1e-5, "features differ by {diff}");

    // A 1000-class file into a one-output head, loaded as is: a shape error naming the tensor.
    let mut wrong_head = DenseNet121Config::new().init(&device);
    let err = load_torchvision_densenet121(&mut wrong_head, &path, Head::Load, None).unwrap_err();
    assert!(matches!(err, PretrainedError::Mismatch { .. }));
    assert!(err.to_string().contains("classifier"), "{err}");

    // One input channel cannot take the RGB stem.
    let mut gray = DenseNet121Config::new().with_in_channels(1).init(&device);
    let err = load_torchvision_densenet121(&mut gray, &path, Head::Replace, None).unwrap_err();
    assert!(err.to_string().contains("conv0"), "{err}");

    // Another architecture's file: everything missing.
    let mut resnet_file = Vec::new();
    for e in entries.iter().take(3) {
        resnet_file.push(Entry {
            name: e.name.replace("features.", "backbone."),
            shape: e.shape.clone(),
            values: match &e.values {
                Values::F32(v) => Values::F32(v.clone()),
                Values::I64(v) => Values::I64(v.clone()),
            },
        });
    }
    let other = dir.join("other.pth");
    write_legacy_pth(&other, &resnet_file);
    let mut m = DenseNet121Config::new().init(&device);
    let err = load_torchvision_densenet121(&mut m, &other, Head::Replace, None).unwrap_err();
    assert!(err.to_string().contains("lacks tensors"), "{err}");

    // Not a PyTorch file at all, and a missing file.
    let junk = dir.join("junk.pth");
    std::fs::write(&junk, b"not a checkpoint").unwrap();
    for p in [junk.as_path(), dir.join("absent.pth").as_path()] {
        let err = load_torchvision_densenet121(&mut m, p, Head::Replace, None).unwrap_err();
        assert!(matches!(err, PretrainedError::Read { .. }), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn checkpoints_round_trip_bit_for_bit_and_refuse_other_models() {
    let device = Device::flex();
    let dir = std::env::temp_dir().join(format!("rankrisk-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("resnet20.bpk");
    device.seed(5);
    let model = ResNet20Config::new().init(&device);
    checkpoint::save(&model, &path).unwrap();
    // Saving again overwrites.
    checkpoint::save(&model, &path).unwrap();
    device.seed(6);
    let fresh = ResNet20Config::new().init(&device);
    let x = input(&device, 3, 3, 32);
    assert!(max_abs_diff(fresh.score(x.clone()), model.score(x.clone())) > 0.0);
    let loaded = checkpoint::load(fresh, &path).unwrap();
    assert_eq!(
        f32s(loaded.score(x.clone())),
        f32s(model.score(x.clone())),
        "a checkpoint round trip must give identical scores"
    );

    // A checkpoint of another configuration, and a missing file: errors, no panic.
    let gray = ResNet20Config::new().with_in_channels(1).init(&device);
    let err = checkpoint::load(gray, &path).unwrap_err().to_string();
    // In words, without the store's debug structures (`Shape { dims: ... }`).
    assert!(
        err.contains("resnet20.bpk")
            && err.contains("has shape [16, 3, 3, 3] in the file, [16, 1, 3, 3] in the model")
            && !err.contains('{'),
        "{err}"
    );
    let err = checkpoint::load(model, &dir.join("absent.bpk")).unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
