//! Readers never panic: every reader of a file or text the user hands us (tabular CSV, LIBSVM,
//! KEEL, CheXpert CSV, IDX, CIFAR binary, `rankrisk train` configs in TOML and JSON, burnpack
//! checkpoints, the `pava` JSON through the CLI) gets thousands of random and mutated inputs,
//! seeded, and must return `Ok` or an error, never unwind.
//!
//! The mutations start from a valid input and apply 1-4 edits: a flipped byte, a deleted or
//! duplicated range, a truncation, or an inserted token chosen to stress a parser (`nan`,
//! `1e999`, a lone `-`, separators, quotes, huge integers, a non-UTF-8 byte).

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Tokens that parsers trip over.
const TOKENS: [&[u8]; 20] = [
    b"nan",
    b"NaN",
    b"inf",
    b"-inf",
    b"1e999",
    b"-",
    b"-0",
    b",",
    b",,",
    b":",
    b"\n",
    b"\r\n",
    b"\"",
    b"99999999999999999999999",
    b"{",
    b"[",
    b"@data\n",
    b" ",
    b"\xff\xfe",
    b"\0",
];

/// One mutation of `seed` (or, one time in ten, random bytes).
fn mutate(rng: &mut StdRng, seed: &[u8]) -> Vec<u8> {
    if rng.random_range(0..10) == 0 {
        let n = rng.random_range(0..200);
        return (0..n).map(|_| rng.random()).collect();
    }
    let mut v = seed.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let len = v.len();
        let at = if len == 0 {
            0
        } else {
            rng.random_range(0..len)
        };
        match rng.random_range(0..5) {
            0 if len > 0 => v[at] = rng.random(),
            1 if len > 0 => {
                let end = (at + rng.random_range(1..=16)).min(len);
                v.drain(at..end);
            }
            2 if len > 0 => {
                let end = (at + rng.random_range(1..=32)).min(len);
                let copy = v[at..end].to_vec();
                v.splice(at..at, copy);
            }
            3 => v.truncate(at),
            _ => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
        }
    }
    v
}

/// A scratch folder for this test binary.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rankrisk-fuzz-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Feed `cases` mutations of `seed` to `read` through the file `path`; count the inputs that
/// were accepted, and panic (failing the test) if `read` ever unwinds.
fn fuzz_file(
    name: &str,
    seed: &[u8],
    cases: usize,
    path: &Path,
    read: impl Fn(&Path) -> bool,
) -> usize {
    assert!(
        read_ok(&read, path, seed),
        "{name}: the seed input must be valid"
    );
    let mut rng = StdRng::seed_from_u64(0x5eed ^ name.len() as u64);
    let mut accepted = 0;
    for case in 0..cases {
        let input = mutate(&mut rng, seed);
        std::fs::File::create(path)
            .and_then(|mut f| f.write_all(&input))
            .unwrap();
        match catch_unwind(AssertUnwindSafe(|| read(path))) {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => panic!(
                "{name}: case {case} panicked on input {:?}",
                String::from_utf8_lossy(&input)
            ),
        }
    }
    // The mutations reach the error paths: some inputs are refused.
    assert!(accepted < cases, "{name}: every mutated input was accepted");
    accepted
}

fn read_ok(read: &impl Fn(&Path) -> bool, path: &Path, input: &[u8]) -> bool {
    std::fs::write(path, input).unwrap();
    read(path)
}

#[test]
fn tabular_readers_never_panic() {
    use rankrisk_datasets::keel::read_keel;
    use rankrisk_datasets::{LabelColumn, read_csv, read_libsvm};
    let dir = scratch("tabular");
    let last = b"a,b,label\n1.0,2.0,1\n3.0,4.0,0\n-1,0.5,1\n2.5,-3,0\n";
    let first = b"label,a,b\n1,1.0,2.0\n0,3.0,4.0\n1,-1,0.5\n0,2.5,-3\n";
    for (label, csv) in [(LabelColumn::Last, last), (LabelColumn::First, first)] {
        fuzz_file("csv", csv, 3000, &dir.join("x.csv"), |p| {
            read_csv(p, label).is_ok()
        });
    }
    let libsvm = b"+1 1:0.5 3:1.2\n-1 2:0.1\n+1 1:-2 2:3e-2 3:4\n-1 3:1\n";
    for d in [None, Some(3)] {
        fuzz_file("libsvm", libsvm, 3000, &dir.join("x.libsvm"), |p| {
            read_libsvm(p, d).is_ok()
        });
    }
    let keel = b"@relation toy\n@attribute a real [0.0, 1.0]\n@attribute b integer [0, 9]\n\
                 @attribute Class {positive, negative}\n@inputs a, b\n@outputs Class\n@data\n\
                 0.1, 2, positive\n0.3, 4, negative\n0.9, 1, negative\n";
    fuzz_file("keel", keel, 3000, &dir.join("x.dat"), |p| {
        read_keel(p, Some("positive")).is_ok()
    });
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn image_and_label_readers_never_panic() {
    use rankrisk_datasets::cifar::{Cifar, read_cifar_file};
    use rankrisk_datasets::idx::read_idx;
    let dir = scratch("images");
    // IDX: unsigned bytes (0x08), 3 dimensions 2 x 2 x 2.
    let mut idx = vec![0u8, 0, 0x08, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2];
    idx.extend(1..=8u8);
    fuzz_file("idx", &idx, 3000, &dir.join("x-idx3-ubyte"), |p| {
        read_idx(p).is_ok()
    });
    // CIFAR-10: two records of a label byte and 3,072 pixel bytes; CIFAR-100: two label bytes.
    for (kind, head) in [(Cifar::Ten, 1), (Cifar::Hundred, 2)] {
        let mut rec = Vec::new();
        for r in 0..2u8 {
            rec.extend(std::iter::repeat_n(r, head));
            rec.extend((0..3072u32).map(|i| (i % 251) as u8));
        }
        fuzz_file("cifar", &rec, 1500, &dir.join("x.bin"), |p| {
            read_cifar_file(p, kind, 0).is_ok()
        });
    }
    // CheXpert's train.csv: the real header and rows.
    let header = "Path,Sex,Age,Frontal/Lateral,AP/PA,No Finding,Enlarged Cardiomediastinum,\
                  Cardiomegaly,Lung Opacity,Lung Lesion,Edema,Consolidation,Pneumonia,\
                  Atelectasis,Pneumothorax,Pleural Effusion,Pleural Other,Fracture,Support Devices\n";
    let rows = "CheXpert-v1.0-small/train/patient00001/study1/view1_frontal.jpg,Female,68,Frontal,AP,1.0,,,,,,,,,0.0,,,,1.0\n\
                CheXpert-v1.0-small/train/patient00002/study2/view1_frontal.jpg,Female,87,Frontal,AP,,,-1.0,1.0,,-1.0,-1.0,,-1.0,,-1.0,,1.0,\n";
    let chexpert = format!("{header}{rows}");
    fuzz_file(
        "chexpert",
        chexpert.as_bytes(),
        3000,
        &dir.join("train.csv"),
        |p| rankrisk_datasets::chexpert::read_csv(p).is_ok(),
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn config_parsers_never_panic() {
    use rankrisk::cli::train::{DEFAULT_CONFIG, parse_plan};
    let json = r#"{"run": [{"task": "long-tailed", "method": "sbcd", "lr": [0.1, 0.3],
        "positive": [3], "epochs": 2, "out": "o"}, {"task": "tabular", "sets": ["australian"]}]}"#;
    for (text, is_json) in [(DEFAULT_CONFIG.as_bytes(), false), (json.as_bytes(), true)] {
        let mut rng = StdRng::seed_from_u64(7 + u64::from(is_json));
        if let Err(e) = parse_plan(std::str::from_utf8(text).unwrap(), is_json, "seed") {
            panic!("the seed config must parse: {e}");
        }
        for case in 0..3000 {
            let input = mutate(&mut rng, text);
            let s = String::from_utf8_lossy(&input);
            if catch_unwind(AssertUnwindSafe(|| parse_plan(&s, is_json, "fuzz"))).is_err() {
                panic!("config case {case} (json {is_json}) panicked on {s:?}");
            }
        }
    }
}

#[test]
fn checkpoint_reader_never_panics() {
    use burn::module::Module;
    use rankrisk::backend::{BackendKind, device};
    use rankrisk_models::{LinearScorerConfig, checkpoint};
    let dir = scratch("burnpack");
    let dev = device(BackendKind::Flex).unwrap();
    let model = LinearScorerConfig::new(4).with_hidden(Some(3)).init(&dev);
    let path = dir.join("m.bpk");
    checkpoint::save(&model, &path).unwrap();
    let seed = std::fs::read(&path).unwrap();
    let fresh = || LinearScorerConfig::new(4).with_hidden(Some(3)).init(&dev);
    fuzz_file("burnpack", &seed, 1500, &dir.join("x.bpk"), |p| {
        checkpoint::load(fresh(), p).is_ok()
    });
    assert!(model.num_params() > 0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn pava_cli_json_never_panics() {
    let seed = br#"{"m": [0.5, -1.0, 2.0, 0.1], "loss": "logistic", "weights": {"kind": "cvar", "q": 0.5}, "rho": 1.0}"#;
    let mut rng = StdRng::seed_from_u64(11);
    for case in 0..300 {
        let input = mutate(&mut rng, seed);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rankrisk"))
            .args(["pava", "--input", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).ok();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 2)) && !err.contains("panicked"),
            "pava case {case}: status {:?}, {err} on {:?}",
            out.status,
            String::from_utf8_lossy(&input)
        );
        if out.status.success() {
            // Accepted input gives finite JSON (no null from a NaN).
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(!text.contains("null"), "pava case {case}: {text}");
        }
    }
}
