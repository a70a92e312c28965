//! Readers never panic: every reader of a file or text the user hands us (tabular CSV, LIBSVM,
//! KEEL, CheXpert CSV, IDX, CIFAR binary, `rankrisk train` configs in TOML and JSON, burnpack
//! checkpoints, the `pava` JSON through the CLI) gets thousands of random and mutated inputs,
//! seeded, and must return `Ok` or an error, never unwind.
//!
//! The mutations start from a valid input and apply 1-4 edits: a flipped byte, a deleted or
//! duplicated range, a truncation, or an inserted token chosen to stress a parser (`nan`,
//! `1e999`, a lone `-`, separators, quotes, huge integers, a non-UTF-8 byte).
//!
//! The tabular readers are held to more than not panicking: a mutated CSV or LIBSVM input is
//! either refused or read to exactly the rows it holds (every non-blank line but a header, each
//! with the values written), checked against an oracle computed from the text alone.

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rankrisk_datasets::{LabelColumn, Tabular};

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

/// Tokens that stress the tabular readers' rules: missing values, other separators, comments,
/// labels that are not numbers, LIBSVM pairs (huge, zero, repeated indices), a BOM.
const TABLE_TOKENS: [&[u8]; 22] = [
    b"NA",
    b"nan",
    b"inf",
    b"1e999",
    b";",
    b"\t",
    b",",
    b"#",
    b"yes",
    b"\n",
    b"\r\n",
    b" ",
    b"0,1,2\n",
    b"a,b,y\n",
    b" 1:1",
    b" 2:3",
    b" 0:1",
    b" 1000000000000:1",
    b" 18446744073709551615:1",
    b" 1000000000000000000000000000000:1",
    b"\xef\xbb\xbf",
    b"\xe9",
];

/// One mutation of `seed` (or, one time in ten, random bytes).
fn mutate(rng: &mut StdRng, seed: &[u8]) -> Vec<u8> {
    mutate_with(rng, seed, &TOKENS)
}

/// [`mutate`] inserting `tokens`.
fn mutate_with(rng: &mut StdRng, seed: &[u8], tokens: &[&[u8]]) -> Vec<u8> {
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
                let t = tokens[rng.random_range(0..tokens.len())];
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
    use rankrisk_datasets::{read_csv, read_libsvm};
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

/// The rows a delimited text holds by the readers' rules, from the text alone: `None` when a
/// line is not a row of finite numbers (the reader must refuse the text then); a first line
/// that names its columns (no number in it) or reads 0,1,2,...,k may be a header.
fn csv_rows(text: &str) -> (Vec<Vec<f64>>, bool) {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let parse = |l: &str| -> Option<Vec<f64>> {
        l.split(',')
            .map(|f| f.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect()
    };
    let header = lines.first().is_some_and(|l| {
        let fields: Vec<&str> = l.split(',').map(str::trim).collect();
        fields.iter().all(|f| f.parse::<f64>().is_err())
            || (fields.len() > 2 && fields.iter().enumerate().all(|(k, f)| *f == k.to_string()))
    });
    let rows = lines.iter().filter_map(|l| parse(l)).collect();
    (rows, header)
}

/// An accepted CSV table holds exactly the input's rows: every non-blank line but a header,
/// in order, the features as written and the labels mapped to -1/+1 by their order.
fn check_csv(t: &Tabular, text: &str, label: LabelColumn) {
    let (rows, header) = csv_rows(text);
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let data_lines = lines - usize::from(header);
    assert_eq!(t.n(), data_lines, "rows dropped or invented from {text:?}");
    let skip = rows.len() - t.n();
    assert!(skip <= 1, "{text:?}");
    let rows = &rows[skip..];
    let labels: Vec<f64> = rows
        .iter()
        .map(|r| match label {
            LabelColumn::First => r[0],
            LabelColumn::Last => r[r.len() - 1],
        })
        .collect();
    let top = labels.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let two = labels.iter().any(|&l| l != top);
    for (i, r) in rows.iter().enumerate() {
        let feats: Vec<f64> = match label {
            LabelColumn::First => r[1..].to_vec(),
            LabelColumn::Last => r[..r.len() - 1].to_vec(),
        };
        assert_eq!(t.row(i), &feats[..], "row {i} of {text:?}");
        let y = if (two && labels[i] == top) || (!two && labels[i] > 0.0) {
            1.0
        } else {
            -1.0
        };
        assert_eq!(t.y[i], y, "label of row {i} of {text:?}");
    }
}

/// An accepted LIBSVM table holds exactly the input's rows (comments and blank lines aside),
/// each with the values at its indices and zeros elsewhere.
fn check_libsvm(t: &Tabular, text: &str) {
    let rows: Vec<&str> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(t.n(), rows.len(), "rows dropped or invented from {text:?}");
    let labels: Vec<f64> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    let top = labels.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let two = labels.iter().any(|&l| l != top);
    let mut width = 0;
    for (i, row) in rows.iter().enumerate() {
        let y = if (two && labels[i] == top) || (!two && labels[i] > 0.0) {
            1.0
        } else {
            -1.0
        };
        assert_eq!(t.y[i], y, "label of row {i} of {text:?}");
        let mut dense = vec![0.0; t.d];
        let mut previous = 0;
        for tok in row.split_whitespace().skip(1) {
            let (k, v) = tok.split_once(':').unwrap();
            let k: usize = k.parse().unwrap();
            assert!(
                k > previous,
                "index {k} after {previous} accepted in {text:?}"
            );
            previous = k;
            let v: f64 = v.parse().unwrap();
            assert!(v.is_finite(), "{text:?}");
            dense[k - 1] = v;
            width = width.max(k);
        }
        assert_eq!(t.row(i), &dense[..], "row {i} of {text:?}");
    }
    assert_eq!(t.d, width, "the width is the largest index of {text:?}");
}

#[test]
fn tabular_readers_keep_every_row_or_refuse() {
    use rankrisk_datasets::{read_csv, read_libsvm};
    let dir = scratch("rows");
    let seeds: [(&[u8], LabelColumn); 3] = [
        (
            b"a,b,label\n1.0,2.0,1\n3.0,4.0,0\n-1,0.5,1\n2.5,-3,0\n",
            LabelColumn::Last,
        ),
        (
            b"1,1.0,2.0\n0,3.0,4.0\n\n1,-1,0.5\n0,2.5,-3\n",
            LabelColumn::First,
        ),
        (b"0,1,2\n1.5,2,1\n3,4,0\n", LabelColumn::Last),
    ];
    let mut accepted = 0;
    for (k, (seed, label)) in seeds.into_iter().enumerate() {
        let mut rng = StdRng::seed_from_u64(0xc5 + k as u64);
        let path = dir.join("x.csv");
        for case in 0..3000 {
            let input = mutate_with(&mut rng, seed, &TABLE_TOKENS);
            std::fs::write(&path, &input).unwrap();
            let result = catch_unwind(AssertUnwindSafe(|| read_csv(&path, label)));
            match result {
                Err(_) => panic!(
                    "csv case {case} panicked on {:?}",
                    String::from_utf8_lossy(&input)
                ),
                Ok(Ok(t)) => {
                    accepted += 1;
                    let text = std::str::from_utf8(&input).unwrap();
                    check_csv(&t, text.trim_start_matches('\u{feff}'), label);
                }
                Ok(Err(e)) => {
                    let msg = e.to_string();
                    assert!(!msg.contains("Error {") && !msg.contains("kind:"), "{msg}");
                }
            }
        }
    }
    assert!(
        accepted > 100,
        "only {accepted} mutated CSV inputs were accepted"
    );
    let libsvm: &[u8] =
        b"# comment\n+1 1:0.5 3:1.2\n-1\n-1 2:0.1\n+1 1:-2 2:3e-2 3:4 # tail\n-1 3:1\n";
    let mut rng = StdRng::seed_from_u64(0x5c);
    let path = dir.join("x.txt");
    let mut accepted = 0;
    for case in 0..6000 {
        let input = mutate_with(&mut rng, libsvm, &TABLE_TOKENS);
        std::fs::write(&path, &input).unwrap();
        match catch_unwind(AssertUnwindSafe(|| read_libsvm(&path, None))) {
            Err(_) => panic!(
                "libsvm case {case} panicked on {:?}",
                String::from_utf8_lossy(&input)
            ),
            Ok(Ok(t)) => {
                accepted += 1;
                let text = std::str::from_utf8(&input).unwrap();
                check_libsvm(&t, text.trim_start_matches('\u{feff}'));
            }
            Ok(Err(e)) => {
                let msg = e.to_string();
                assert!(!msg.contains("Error {") && !msg.contains("kind:"), "{msg}");
            }
        }
    }
    assert!(
        accepted > 100,
        "only {accepted} mutated LIBSVM inputs were accepted"
    );
    // The format choice never panics, and a file it reads as LIBSVM or CSV parses as the
    // reader of that format parses it.
    let mut rng = StdRng::seed_from_u64(0xf0);
    for case in 0..3000 {
        let seed: &[u8] = if case % 2 == 0 { libsvm } else { seeds[0].0 };
        let input = mutate_with(&mut rng, seed, &TABLE_TOKENS);
        std::fs::write(&path, &input).unwrap();
        let read = catch_unwind(AssertUnwindSafe(|| {
            rankrisk_datasets::read_table(&path, None, None, LabelColumn::Last, Default::default())
        }));
        match read {
            Err(_) => panic!(
                "table case {case} panicked on {:?}",
                String::from_utf8_lossy(&input)
            ),
            Ok(Ok((t, choice))) => {
                let again = match choice.format {
                    rankrisk_datasets::TableFormat::Libsvm => read_libsvm(&path, None),
                    rankrisk_datasets::TableFormat::Csv => read_csv(&path, LabelColumn::Last),
                    rankrisk_datasets::TableFormat::Tsv => rankrisk_datasets::read_delimited_as(
                        &path,
                        '\t',
                        LabelColumn::Last,
                        Default::default(),
                    ),
                };
                let mut again = again.unwrap();
                again.name = t.name.clone();
                assert_eq!(t, again, "{choice}");
            }
            Ok(Err(_)) => {}
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ratings_and_headerless_keel_readers_never_panic() {
    use rankrisk_datasets::keel::read_keel;
    use rankrisk_datasets::ratings::read_ratings;
    let dir = scratch("ratings");
    let inter = b"user_id:token\titem_id:token\trating:float\ttimestamp:float\n\
                  196\t242\t3\t881250949\n186\t302\t3\t891717742\n196\t302\t5\t1\n";
    fuzz_file("ratings", inter, 3000, &dir.join("x.inter"), |p| {
        read_ratings(p).is_ok()
    });
    let keel = b"1.5,a,1\n2.5,b,0\n0.5,a,0\n";
    fuzz_file("keel-headerless", keel, 3000, &dir.join("x.dat"), |p| {
        read_keel(p, None).is_ok()
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
    use rankrisk::experiments::launch::DEFAULT_CONFIG;
    use rankrisk::experiments::plan::parse_plan;
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
    // Each mutated file gets a matching checksum file, so that Burn's reader itself sees
    // every mutation (without one, the checksum refuses them all first).
    fuzz_file("burnpack", &seed, 1500, &dir.join("x.bpk"), |p| {
        checkpoint::write_checksum(p).unwrap();
        checkpoint::load(fresh(), p).is_ok()
    });
    // Without the rewritten checksum, every mutation is refused as corrupted.
    let mut rng = StdRng::seed_from_u64(5);
    let x = dir.join("y.bpk");
    std::fs::copy(
        checkpoint::checksum_path(&path),
        checkpoint::checksum_path(&x),
    )
    .unwrap();
    for _ in 0..200 {
        let bytes = mutate(&mut rng, &seed);
        if bytes == seed {
            continue;
        }
        std::fs::write(&x, &bytes).unwrap();
        let err = checkpoint::load(fresh(), &x).err().map(|e| e.to_string());
        assert!(
            err.as_ref().is_some_and(|e| e.contains("corrupted")),
            "a mutated checkpoint was not refused as corrupted: {err:?}"
        );
    }
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
