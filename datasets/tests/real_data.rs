//! The loaders on real data fetched by `datasets/fetch-test-data.sh` (see its header for the
//! sources and the cache folder, `$RANKRISK_TEST_DATA` or `datasets/test-data/`). A test whose
//! data is absent is skipped with a message, or fails when RANKRISK_REQUIRE_TEST_DATA=1 (CI).
//! The expected figures were counted independently (Python's csv/gzip modules) from the same
//! files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use burn::tensor::Device;
use rankrisk_datasets::batcher::{ChexpertBatcher, ImageBatcher};
use rankrisk_datasets::chexpert::{Chexpert, ChexpertConfig, Task, Uncertain, read_csv};
use rankrisk_datasets::cifar::{Cifar, read_cifar, write_cifar_file};
use rankrisk_datasets::idx::read_mnist_style;
use rankrisk_datasets::keel::read_keel;
use rankrisk_datasets::sampler::DualSampler;
use rankrisk_datasets::transform::XrayTransform;
use rankrisk_datasets::{DataError, ImageSet, LabelColumn};

fn data(sub: &str) -> Option<PathBuf> {
    rankrisk_datasets::fetched::require(sub)
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rankrisk-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn chexpert_train_csv_label_statistics() {
    let Some(dir) = data("chexpert") else { return };
    let records = read_csv(&dir.join("train.csv")).unwrap();
    assert_eq!(records.len(), 223_414);
    assert_eq!(records.iter().filter(|r| r.frontal).count(), 191_027);
    let root = Path::new("/nonexistent");
    // Frontal views, LibAUC's policies (U-Ones for Edema and Atelectasis, U-Zeros otherwise).
    for (task, positives) in [
        (Task::Cardiomegaly, 23_385),
        (Task::Edema, 49_675 + 11_818),
        (Task::Consolidation, 12_983),
        (Task::Atelectasis, 29_720 + 29_863),
        (Task::PleuralEffusion, 76_899),
    ] {
        let set = Chexpert::from_records(root, &records, &ChexpertConfig::single(task)).unwrap();
        assert_eq!(
            (set.len(), set.positives(0)),
            (191_027, positives),
            "{task:?}"
        );
    }
    // Other policies and views.
    let mut cfg = ChexpertConfig::single(Task::Cardiomegaly);
    cfg.policies = vec![Uncertain::Ones];
    let set = Chexpert::from_records(root, &records, &cfg).unwrap();
    assert_eq!(set.positives(0), 23_385 + 6_707);
    cfg.policies = vec![Uncertain::Ignore];
    let set = Chexpert::from_records(root, &records, &cfg).unwrap();
    assert_eq!((set.len(), set.positives(0)), (191_027 - 6_707, 23_385));
    let mut cfg = ChexpertConfig::single(Task::Edema);
    cfg.frontal_only = false;
    let set = Chexpert::from_records(root, &records, &cfg).unwrap();
    assert_eq!((set.len(), set.positives(0)), (223_414, 52_246 + 12_984));
    // Multi-label: the five tasks at once.
    let five = Chexpert::from_records(root, &records, &ChexpertConfig::five_tasks()).unwrap();
    assert_eq!(five.label(0).len(), 5);
    assert_eq!(five.positives(4), 76_899);
    // Seeded 9:1 split into disjoint parts.
    let set = Chexpert::from_records(root, &records, &ChexpertConfig::single(Task::Edema)).unwrap();
    let (train, val) = set.split(0.9, 1).unwrap();
    assert_eq!((train.len(), val.len()), (171_924, 19_103));
    let mut rows: Vec<usize> = train.row.iter().chain(&val.row).copied().collect();
    rows.sort_unstable();
    rows.dedup();
    assert_eq!(rows.len(), set.len());
    assert_eq!(set.split(0.9, 1).unwrap().0.row, train.row);
}

/// Lay the real X-ray JPEGs out as CheXpert-v1.0-small and write a train.csv for them.
fn chexpert_layout(xray: &Path, root: &Path, extra_rows: &[&str]) -> usize {
    let mut files: Vec<PathBuf> = std::fs::read_dir(xray)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jpeg"))
        .collect();
    files.sort();
    let mut csv = String::from(
        "Path,Sex,Age,Frontal/Lateral,AP/PA,No Finding,Enlarged Cardiomediastinum,Cardiomegaly,Lung Opacity,Lung Lesion,Edema,Consolidation,Pneumonia,Atelectasis,Pneumothorax,Pleural Effusion,Pleural Other,Fracture,Support Devices\n",
    );
    for (k, f) in files.iter().enumerate() {
        let rel = format!(
            "CheXpert-v1.0-small/train/patient{:05}/study1/view1_frontal.jpg",
            k + 1
        );
        let dst = root.join(&rel);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(f, &dst).unwrap();
        // Kermany's file names say which images show pneumonia; use that as the Edema label.
        let label = if f.to_string_lossy().contains("NORMAL") {
            "0.0"
        } else {
            "1.0"
        };
        csv.push_str(&format!(
            "{rel},Female,50,Frontal,AP,,,,,,{label},,,,,,,,\n"
        ));
    }
    for row in extra_rows {
        csv.push_str(row);
        csv.push('\n');
    }
    let dir = root.join("CheXpert-v1.0-small");
    std::fs::write(dir.join("train.csv"), csv).unwrap();
    files.len()
}

#[test]
fn chexpert_images_from_real_xray_jpegs() {
    let Some(xray) = data("xray") else { return };
    let root = temp_dir("chexpert");
    let n = chexpert_layout(&xray, &root, &[]);
    assert_eq!(n, 16);
    let cfg = ChexpertConfig::single(Task::Edema);
    // Either the parent folder or CheXpert-v1.0-small itself works as the root.
    for r in [root.clone(), root.join("CheXpert-v1.0-small")] {
        let set = Chexpert::open(&r, "train.csv", &cfg).unwrap();
        assert_eq!((set.len(), set.positives(0)), (16, 8));
        assert!(set.image_path(3).is_file());
    }
    let set = Arc::new(Chexpert::open(&root, "train.csv", &cfg).unwrap());
    let device = Device::flex();
    let eval = ChexpertBatcher::new(set.clone(), XrayTransform::eval(64), 0);
    let batch = eval.try_batch(&[0, 5, 15], &device).unwrap();
    assert_eq!(batch.inputs.dims(), [3, 3, 64, 64]);
    assert_eq!(batch.ids, vec![0, 5, 15]);
    let x: Vec<f32> = batch.inputs.into_data().try_into_vec().unwrap();
    assert!(x.iter().all(|v| v.is_finite()));
    // Normalized with ImageNet statistics: inside [(0 - 0.485) / 0.229, (1 - 0.406) / 0.225].
    assert!(x.iter().all(|&v| (-2.12..=2.64).contains(&v)));
    let spread =
        x.iter().fold(f32::MIN, |m, &v| m.max(v)) - x.iter().fold(f32::MAX, |m, &v| m.min(v));
    assert!(spread > 2.0, "a real X-ray has contrast: {spread}");
    // Every one of the 16 real JPEGs decodes.
    let all: Vec<usize> = (0..16).collect();
    assert_eq!(
        eval.try_batch(&all, &device).unwrap().inputs.dims(),
        [16, 3, 64, 64]
    );
    // Augmentation: deterministic per (seed, id, epoch), different from the plain image.
    let train = ChexpertBatcher::new(set.clone(), XrayTransform::train(64), 0);
    let pixels = |b: &ChexpertBatcher| -> Vec<f32> {
        let batch = b.try_batch(&[2], &device).unwrap();
        batch.inputs.into_data().try_into_vec().unwrap()
    };
    let (a, b, plain) = (pixels(&train), pixels(&train), pixels(&eval));
    assert_eq!(a, b);
    assert_ne!(a, plain);
    // Out-of-range ids are errors.
    assert!(eval.try_batch(&[16], &device).is_err());
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn chexpert_bad_input_names_the_file_and_row() {
    let Some(xray) = data("xray") else { return };
    let root = temp_dir("chexpert-bad");
    chexpert_layout(&xray, &root, &[]);
    // A truncated JPEG.
    let victim = root.join("CheXpert-v1.0-small/train/patient00001/study1/view1_frontal.jpg");
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 3]).unwrap();
    let set =
        Arc::new(Chexpert::open(&root, "train.csv", &ChexpertConfig::single(Task::Edema)).unwrap());
    let err = ChexpertBatcher::new(set, XrayTransform::eval(32), 0)
        .try_batch(&[0], &Device::flex())
        .unwrap_err();
    assert!(matches!(err, DataError::Image { .. }));
    assert!(err.to_string().contains("patient00001"), "{err}");

    // A row with a missing column, and an unknown label value.
    for (row, what) in [
        (
            "CheXpert-v1.0-small/train/p/s/v.jpg,Male,40,Frontal,AP,,,",
            "columns",
        ),
        (
            "CheXpert-v1.0-small/train/p/s/v.jpg,Male,40,Frontal,AP,,,2.0,,,,,,,,,,,",
            "unknown label value '2.0'",
        ),
    ] {
        chexpert_layout(&xray, &root, &[row]);
        let err =
            Chexpert::open(&root, "train.csv", &ChexpertConfig::single(Task::Edema)).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("line 18") && msg.contains(what), "{msg}");
    }
    // No CSV at all: say what to download.
    let err = Chexpert::open(
        &root.join("nothing"),
        "valid.csv",
        &ChexpertConfig::single(Task::Edema),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("download CheXpert-v1.0-small"),
        "{err}"
    );
    std::fs::remove_dir_all(&root).ok();
}

/// The foolbox PNGs of one set (`<prefix>_<index>_<label>.png`) as an ImageSet.
fn foolbox_images(dir: &Path, prefix: &str, classes: usize) -> ImageSet {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.starts_with(&format!("{prefix}_")) && name.ends_with(".png")
        })
        .collect();
    files.sort();
    let mut set = ImageSet {
        name: prefix.into(),
        channels: 3,
        height: 32,
        width: 32,
        pixels: Vec::new(),
        labels: Vec::new(),
        source: Vec::new(),
        num_classes: classes,
    };
    for (k, f) in files.iter().enumerate() {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let label: u16 = stem.rsplit('_').next().unwrap().parse().unwrap();
        let rgb = image::open(f).unwrap().to_rgb8();
        assert_eq!(rgb.dimensions(), (32, 32));
        for c in 0..3 {
            for p in rgb.pixels() {
                set.pixels.push(p.0[c]);
            }
        }
        set.labels.push(label);
        set.source.push(k);
    }
    set
}

#[test]
fn cifar_binary_files_from_real_test_images() {
    let Some(dir) = data("foolbox") else { return };
    let out = temp_dir("cifar");
    for (kind, prefix, classes, file) in [
        (Cifar::Ten, "cifar10", 10, "test_batch.bin"),
        (Cifar::Hundred, "cifar100", 100, "test.bin"),
    ] {
        let real = foolbox_images(&dir, prefix, classes);
        assert_eq!(real.len(), 20);
        write_cifar_file(&out.join(file), kind, &real).unwrap();
        let read = read_cifar(&out, kind, false).unwrap();
        assert_eq!(read.labels, real.labels);
        assert_eq!(read.pixels, real.pixels);
        assert_eq!(read.source, (0..20).collect::<Vec<_>>());
    }
    // The first CIFAR-10 test image is a cat (class 3), as in the official test batch.
    let real = foolbox_images(&dir, "cifar10", 10);
    assert_eq!(real.labels[0], 3);
    // A truncated file names the record; a missing training batch says what to download.
    let bytes = std::fs::read(out.join("test_batch.bin")).unwrap();
    std::fs::write(out.join("test_batch.bin"), &bytes[..3073 * 5 + 100]).unwrap();
    let err = read_cifar(&out, Cifar::Ten, false).unwrap_err();
    assert!(err.to_string().contains("record 6 is truncated"), "{err}");
    let err = read_cifar(&out, Cifar::Ten, true).unwrap_err();
    assert!(
        err.to_string().contains("data_batch_1.bin not found"),
        "{err}"
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn fashion_mnist_and_mnist_full_sets_and_long_tailed_task() {
    let Some(fashion) = data("fashion-mnist") else {
        return;
    };
    let train = read_mnist_style(&fashion, true).unwrap();
    assert_eq!(
        (train.len(), train.height, train.width, train.channels),
        (60_000, 28, 28, 1)
    );
    assert_eq!(train.class_counts(), vec![6000; 10]);
    assert_eq!(read_mnist_style(&fashion, false).unwrap().len(), 10_000);
    let lt = train.long_tailed(0.01).unwrap();
    assert_eq!(
        lt.class_counts(),
        vec![6000, 3596, 2156, 1292, 774, 464, 278, 166, 100, 60]
    );
    let task = lt.binary(&[3]).unwrap();
    assert_eq!((task.positives(), task.negatives()), (1292, 13_594));
    // Batches of the real task through the positive-oversampling sampler.
    let task = Arc::new(task);
    let mut sampler = DualSampler::new(&task.positive, 32, 0.5, 0).unwrap();
    let batcher = ImageBatcher::new(task.clone(), &[0.2860], &[0.3530]).unwrap();
    let ids = sampler.next_batch();
    let batch = batcher.try_batch(&ids, &Device::flex()).unwrap();
    assert_eq!(batch.inputs.dims(), [32, 1, 28, 28]);
    let y: Vec<f32> = batch.labels.into_data().try_into_vec().unwrap();
    assert_eq!(y.iter().filter(|&&v| v > 0.0).count(), 16);
    assert!(
        batcher
            .try_batch(&[task.images.len()], &Device::flex())
            .is_err()
    );

    let Some(mnist) = data("mnist") else { return };
    let digits = read_mnist_style(&mnist, true).unwrap();
    assert_eq!(
        digits.class_counts(),
        vec![5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    );
    // A missing folder says what to put there.
    let err = read_mnist_style(&mnist.join("absent"), true).unwrap_err();
    assert!(err.to_string().contains("fetch-test-data.sh"), "{err}");
}

#[test]
fn keel_and_libsvm_tabular_files() {
    let Some(keel) = data("keel") else { return };
    let aus = read_keel(&keel.join("australian.dat"), None).unwrap();
    assert_eq!((aus.n(), aus.d, aus.positives()), (690, 14, 307));
    let titanic = read_keel(&keel.join("titanic.dat"), None).unwrap();
    assert_eq!((titanic.n(), titanic.positives()), (2201, 711));
    let err = read_keel(&keel.join("splice.dat"), None).unwrap_err();
    assert!(err.to_string().contains("name the positive one"), "{err}");
    let splice = read_keel(&keel.join("splice.dat"), Some("EI")).unwrap();
    assert_eq!((splice.n(), splice.d, splice.positives()), (3190, 60, 767));
    assert!(read_keel(&keel.join("splice.dat"), Some("XX")).is_err());

    let Some(libsvm) = data("libsvm") else { return };
    for (file, n, d, pos) in [
        ("svmguide1", 3089, 4, 2000),
        ("svmguide1.t", 4000, 4, 2000),
        ("a1a", 1605, 123, 395),
        ("a1a.t", 30_956, 123, 7446),
    ] {
        let t = rankrisk_datasets::read_csv(&libsvm.join(file), LabelColumn::First).unwrap();
        assert_eq!((t.n(), t.d, t.positives()), (n, d, pos), "{file}");
    }
}

#[test]
fn tiny_imagenet_layout_and_image_folders_from_real_images() {
    use rankrisk_datasets::folder::{TINY_IMAGENET_BIRDS, read_image_folder, read_tiny_imagenet};
    let Some(dir) = data("foolbox") else { return };
    let mut pngs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("cifar"))
        .collect();
    pngs.sort();
    assert_eq!(pngs.len(), 40);
    // 24 classes with made-up wnids (written unsorted), the 40 real images spread over them
    // as 64x64 JPEGs, as Tiny-ImageNet-200 stores them.
    let root = temp_dir("tiny");
    let wnids: Vec<String> = (0..24).rev().map(|k| format!("n{:08}", 1000 + k)).collect();
    std::fs::write(root.join("wnids.txt"), wnids.join("\n")).unwrap();
    let mut sorted = wnids.clone();
    sorted.sort();
    let mut ann = String::new();
    std::fs::create_dir_all(root.join("val/images")).unwrap();
    for (k, png) in pngs.iter().enumerate() {
        let w = &sorted[k % 24];
        let img = image::open(png)
            .unwrap()
            .resize_exact(64, 64, image::imageops::FilterType::Triangle)
            .to_rgb8();
        let d = root.join("train").join(w).join("images");
        std::fs::create_dir_all(&d).unwrap();
        img.save(d.join(format!("{w}_{k}.JPEG"))).unwrap();
        img.save(root.join("val/images").join(format!("val_{k}.JPEG")))
            .unwrap();
        ann.push_str(&format!("val_{k}.JPEG\t{w}\t0\t0\t63\t63\n"));
    }
    std::fs::write(root.join("val/val_annotations.txt"), &ann).unwrap();
    let train = read_tiny_imagenet(&root, true).unwrap();
    assert_eq!(
        (train.len(), train.num_classes, train.channels, train.height),
        (40, 24, 3, 64)
    );
    // Classes 0..15 hold two images each, 16..23 one.
    assert_eq!(train.class_counts()[..16], [2; 16]);
    let birds = train.binary(&TINY_IMAGENET_BIRDS).unwrap();
    assert_eq!(birds.positives(), 2 + 1 + 1 + 1);
    let val = read_tiny_imagenet(&root, false).unwrap();
    assert_eq!(val.len(), 40);
    assert_eq!(val.labels[..3], [0, 1, 2]);
    std::fs::write(
        root.join("val/val_annotations.txt"),
        "val_0.JPEG\tn99999999\n",
    )
    .unwrap();
    let err = read_tiny_imagenet(&root, false).unwrap_err();
    assert!(
        err.to_string().contains("line 1") && err.to_string().contains("n99999999"),
        "{err}"
    );
    let err = read_tiny_imagenet(&root.join("absent"), true).unwrap_err();
    assert!(err.to_string().contains("tiny-imagenet-200.zip"), "{err}");

    // The plain class-per-folder layout, grayscale.
    let (set, classes) = read_image_folder(&root.join("train"), 1, 32).unwrap();
    assert_eq!(
        (set.len(), classes.len(), set.channels, set.width),
        (40, 24, 1, 32)
    );
    assert_eq!(classes[0], sorted[0]);
    std::fs::remove_dir_all(&root).ok();
}
