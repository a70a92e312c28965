//! The user's entry points: a real-data run of the long-tailed task (Fashion-MNIST-LT,
//! ResNet-20, a few hundred steps on the default CPU backend) that must beat chance clearly and
//! write every artifact, `--resume` continuing it, every example's `--help`, and a missing or
//! wrong data folder explained.

use std::path::{Path, PathBuf};
use std::process::Command;

use rankrisk::cli::BackendArg;
use rankrisk::train::image::Method;
use rankrisk::train::tasks::{LongTailedArgs, LtData, TrainingArgs, run_long_tailed};

fn fashion_dir() -> Option<PathBuf> {
    rankrisk_datasets::fetched::require("fashion-mnist")
}

fn args(out: &Path, dir: &Path) -> LongTailedArgs {
    LongTailedArgs {
        data: LtData::FashionMnist,
        data_dir: Some(dir.to_path_buf()),
        positive: vec![3],
        imbalance: 0.01,
        out: out.to_path_buf(),
        training: TrainingArgs {
            method: Method::Ce,
            epochs: 1,
            batch: 32,
            lr: None,
            alpha: 0.05,
            beta: 0.5,
            limit: 6000,
            backend: BackendArg { backend: None },
            seed: 0,
            resume: false,
            quiet: true,
        },
    }
}

#[test]
fn long_tailed_run_on_real_images_writes_everything_and_resumes() {
    let Some(dir) = fashion_dir() else { return };
    let out = std::env::temp_dir().join(format!("rankrisk-lt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    // One pass: 5,400 training images of Fashion-MNIST-LT (dresses positive), 169 steps of CE
    // (the fastest method to a clear margin; AGD-SBCD is checked in tests/train.rs).
    let first = run_long_tailed(&args(&out, &dir)).unwrap();
    assert_eq!(
        first.history.len(),
        first.best.epoch.max(first.history.len())
    );
    let last = *first.history.last().unwrap();
    eprintln!("after one pass: {last:?}");
    assert!(last.test_auc > 0.9, "test AUC {}", last.test_auc);
    assert!(last.test_pauc > 0.5, "test pAUC {}", last.test_pauc);
    for f in [
        "metrics.csv",
        "metrics.json",
        "summary.json",
        "roc.png",
        "curves.png",
        "best.bpk",
        "checkpoint/model.bpk",
        "checkpoint/optimizer.bpk",
        "checkpoint/state.cbor",
    ] {
        let p = out.join(f);
        assert!(
            p.is_file() && std::fs::metadata(&p).unwrap().len() > 0,
            "{f} missing"
        );
    }
    // --resume with a larger budget continues from the checkpoint: the first record is kept
    // and training goes on.
    let mut more = args(&out, &dir);
    more.training.epochs = 2;
    more.training.resume = true;
    let second = run_long_tailed(&more).unwrap();
    assert!(second.history.len() > first.history.len());
    assert_eq!(second.history[..first.history.len()], first.history[..]);
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    assert_eq!(csv.lines().count(), second.history.len() + 1);
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn missing_or_wrong_data_says_what_to_download() {
    let out = std::env::temp_dir().join(format!("rankrisk-lt-bad-{}", std::process::id()));
    let empty = out.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut a = args(&out, &empty);
    a.data = LtData::Cifar10;
    let err = run_long_tailed(&a).unwrap_err().to_string();
    assert!(
        err.contains("data_batch_1.bin not found") && err.contains("cifar-10-binary"),
        "{err}"
    );
    a.data_dir = None;
    let err = run_long_tailed(&a).unwrap_err().to_string();
    assert!(err.contains("give --data-dir"), "{err}");
    a.data = LtData::FashionMnist;
    a.data_dir = Some(empty.clone());
    let err = run_long_tailed(&a).unwrap_err().to_string();
    assert!(err.contains("fetch-test-data.sh"), "{err}");
    // A file in the wrong format.
    std::fs::write(empty.join("train-images-idx3-ubyte"), b"not idx").unwrap();
    std::fs::write(empty.join("train-labels-idx1-ubyte"), b"not idx").unwrap();
    let err = run_long_tailed(&a).unwrap_err().to_string();
    assert!(err.contains("not an IDX file"), "{err}");
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn every_example_answers_help() {
    // Integration tests live in target/<profile>/deps; `cargo test` builds the examples into
    // target/<profile>/examples.
    let exe = std::env::current_exe().unwrap();
    let examples = exe.parent().unwrap().parent().unwrap().join("examples");
    for name in [
        "cifar_lt",
        "chexpert",
        "tabular",
        "custom_loop",
        "learner",
        "bench_models",
        "bench_train_step",
    ] {
        let bin = examples.join(name);
        let out = Command::new(&bin)
            .arg("--help")
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("Usage"),
            "{name}: {text}"
        );
    }
}
