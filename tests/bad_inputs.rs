//! One table of bad inputs through the command line: each row writes its files, runs
//! `rankrisk` and expects exit status 2, no panic, and a message that names the input (a file,
//! a key, a value). Rows that need the fetched test data (Fashion-MNIST, the X-ray JPEGs) run
//! when it is there, as in CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A case: its name, the files it writes (relative name, bytes), the arguments (`{dir}` is
/// replaced by the scratch folder), standard input, environment, and the needles the error
/// message must contain (`{dir}` replaced too).
struct Case {
    name: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    args: Vec<&'static str>,
    stdin: Option<&'static str>,
    env: Vec<(&'static str, &'static str)>,
    needles: Vec<&'static str>,
}

fn case(name: &'static str, args: &[&'static str], needles: &[&'static str]) -> Case {
    Case {
        name,
        files: Vec::new(),
        args: args.to_vec(),
        stdin: None,
        env: Vec::new(),
        needles: needles.to_vec(),
    }
}

impl Case {
    fn file(mut self, name: &'static str, bytes: impl Into<Vec<u8>>) -> Case {
        self.files.push((name, bytes.into()));
        self
    }
    fn stdin(mut self, text: &'static str) -> Case {
        self.stdin = Some(text);
        self
    }
    fn env(mut self, key: &'static str, value: &'static str) -> Case {
        self.env.push((key, value));
        self
    }
}

/// A CheXpert folder with `csv` as train.csv and valid.csv and `image` as every image.
fn chexpert_files(c: Case, csv: &str, image: &[u8]) -> Case {
    let root = "cx/CheXpert-v1.0-small";
    let mut c = c
        .file(leak(format!("{root}/train.csv")), csv)
        .file(leak(format!("{root}/valid.csv")), csv);
    for p in PATIENTS {
        c = c.file(
            leak(format!("{root}/train/{p}/study1/view1_frontal.jpg")),
            image,
        );
    }
    c
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

const PATIENTS: [&str; 12] = [
    "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "p11", "p12",
];

const CX_HEADER: &str = "Path,Sex,Age,Frontal/Lateral,AP/PA,No Finding,Enlarged Cardiomediastinum,Cardiomegaly,Lung Opacity,Lung Lesion,Edema,Consolidation,Pneumonia,Atelectasis,Pneumothorax,Pleural Effusion,Pleural Other,Fracture,Support Devices";

fn cx_rows(header: &str) -> String {
    let cols = header.split(',').count();
    let mut text = format!("{header}\n");
    for (k, p) in PATIENTS.iter().enumerate() {
        let mut row = vec![String::new(); cols];
        row[0] = format!("CheXpert-v1.0-small/train/{p}/study1/view1_frontal.jpg");
        (row[1], row[2], row[3], row[4]) =
            ("Female".into(), "50".into(), "Frontal".into(), "AP".into());
        for v in row.iter_mut().skip(5) {
            *v = if k % 2 == 0 {
                "1.0".into()
            } else {
                "0.0".into()
            };
        }
        text.push_str(&row.join(","));
        text.push('\n');
    }
    text
}

fn cx_config(dir: &Path) -> String {
    format!(
        "task = \"chexpert\"\ndata_dir = {:?}\ntask_name = \"edema\"\nsize = 32\nepochs = 1\n\
         method = \"ce\"\nbatch = 4\nquiet = true\nout = {:?}\n",
        dir.join("cx"),
        dir.join("cx-out")
    )
}

fn run(c: &Case, dir: &Path) {
    for (name, bytes) in &c.files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
    }
    let d = dir.to_str().unwrap();
    let args: Vec<String> = c.args.iter().map(|a| a.replace("{dir}", d)).collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rankrisk"));
    cmd.args(&args)
        .env_remove("BURN_DEVICE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    if let Some(text) = c.stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}: {args:?} exited {:?}: {err}",
        c.name,
        out.status
    );
    assert!(!err.contains("panicked"), "{}: {err}", c.name);
    for n in &c.needles {
        let n = n.replace("{dir}", d);
        assert!(err.contains(&n), "{}: no {n:?} in: {err}", c.name);
    }
}

/// An empty scratch folder `name` of this process (each test takes its own name: the tests of
/// this binary run in parallel).
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rankrisk-bad-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run the binary with `args` (no `BURN_DEVICE` from the caller's environment).
fn rankrisk<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rankrisk"))
        .args(args)
        .env_remove("BURN_DEVICE")
        .output()
        .unwrap()
}

#[test]
fn every_bad_input_is_exit_2_with_a_message_naming_it() {
    let dir = scratch("table");
    let fit = |file: &'static str| -> Vec<&'static str> {
        vec![
            "fit-linear",
            "--train-file",
            leak(format!("{{dir}}/{file}")),
        ]
    };
    let train = |file: &'static str| -> Vec<&'static str> {
        vec!["train", "--dry-run", leak(format!("{{dir}}/{file}"))]
    };
    let mut cases = vec![
        // The issue's four.
        case(
            "pava overflow",
            &["pava", "--input", "-"],
            &["overflowed at m[0] = 1e308"],
        )
        .stdin(r#"{"m": [1e308, -1e308], "loss": "exponential", "weights": {"kind": "erm"}, "rho": 1e-300}"#),
        case("alpha >= beta in a config", &train("ab.toml"), &["alpha = 0.6, beta = 0.2", "ab.toml"])
            .file("ab.toml", "task = \"long-tailed\"\nalpha = 0.6\nbeta = 0.2\n"),
        case("negative epochs", &train("neg.toml"), &["'-3' for 'epochs'", "neg.toml"])
            .file("neg.toml", "task = \"long-tailed\"\nepochs = -3\n"),
        case("negative gradient clamp", &train("clip.toml"), &["grad_clip", "must be positive, got -1", "clip.toml"])
            .file("clip.toml", "task = \"long-tailed\"\ngrad_clip = -1.0\n"),
        // Data files.
        case("empty set", &fit("empty.csv"), &["empty.csv"]).file("empty.csv", ""),
        case("one class", &fit("one.csv"), &["both classes"]).file("one.csv", "1,2,1\n3,4,1\n5,6,1\n"),
        case("NaN feature", &fit("nan.csv"), &["not finite", "nan.csv"]).file("nan.csv", "1,2,1\n3,nan,0\n"),
        case("infinite feature", &fit("inf.csv"), &["not finite", "inf.csv"]).file("inf.csv", "1,2,1\n3,inf,0\n"),
        case("malformed CSV row", &fit("bad.csv"), &["bad.csv", "line 2"]).file("bad.csv", "1,2,1\n3,abc,0\n5,6,1\n"),
        case("rows of different lengths", &fit("ragged.csv"), &["ragged.csv"]).file("ragged.csv", "1,2,1\n3,0\n5,6,1\n"),
        case(
            "test file of another width",
            &["fit-linear", "--train-file", "{dir}/tr.csv", "--test-file", "{dir}/te.csv"],
            &["te.csv"],
        )
        .file("tr.csv", "1,2,1\n3,4,0\n5,6,1\n7,1,0\n")
        .file("te.csv", "1,2,3,1\n3,4,5,0\n"),
        case(
            "test file of another width, standardized",
            &["fit-linear", "--train-file", "{dir}/tr.csv", "--test-file", "{dir}/te.csv", "--standardize"],
            &["test data has 3 features, training data 2", "te.csv"],
        )
        .file("tr.csv", "1,2,1\n3,4,0\n5,6,1\n7,1,0\n")
        .file("te.csv", "1,2,3,1\n3,4,5,0\n"),
        case(
            "infinite regression target",
            &["fit-linear", "--train-file", "{dir}/inf.csv", "--loss", "absolute", "--solver", "pdprox-dual"],
            &["target of row 1", "not finite"],
        )
        .file("inf.csv", "1,2,0.5\n3,4,inf\n5,6,1.5\n"),
        case(
            "missing file",
            &fit("absent.csv"),
            &["{dir}/absent.csv", "last column", "LIBSVM"],
        ),
        // Scores and settings.
        case("infinite score", &["pava", "--input", "-"], &["line 1"])
            .stdin(r#"{"m": [1, 1e400], "loss": "hinge", "weights": {"kind": "erm"}, "rho": 1}"#),
        case(
            "alpha >= beta",
            &["fit-pauc", "--data", "australian", "--fpr", "0.6,0.2"],
            &["0.6"],
        ),
        case(
            "k <= m",
            &["fit-linear", "--data", "australian", "--objective", "aorr:m=5,k=3"],
            &["m < k"],
        ),
        case("unknown backend", &["smoke", "--backend", "cuda9"], &["cuda9"]),
        case("unknown backend from the environment", &["smoke"], &["BURN_DEVICE", "bogus"])
            .env("BURN_DEVICE", "bogus"),
        case(
            "missing data folder",
            &train("nodata.toml"),
            &["/nonexistent/fmnist", "does not exist", "t10k-images-idx3-ubyte", "fetch-test-data.sh"],
        )
        .file("nodata.toml", "task = \"long-tailed\"\ndata_dir = \"/nonexistent/fmnist\"\n"),
        // Every data folder names what it must hold and where it comes from: missing, not
        // given, and present without the files (the repository root, which holds none).
        case(
            "missing CIFAR-10 folder",
            &train("noc10.toml"),
            &["/nonexistent/c10", "data_batch_1.bin", "test_batch.bin", "cifar-10-binary.tar.gz"],
        )
        .file("noc10.toml", "task = \"long-tailed\"\ndata = \"cifar10\"\ndata_dir = \"/nonexistent/c10\"\n"),
        case(
            "CIFAR-10 without a folder",
            &train("c10.toml"),
            &["--data-dir", "data_batch_1.bin", "www.cs.toronto.edu"],
        )
        .file("c10.toml", "task = \"long-tailed\"\ndata = \"cifar10\"\n"),
        case(
            "missing CIFAR-100 folder",
            &train("noc100.toml"),
            &["/nonexistent/c100", "train.bin", "cifar-100-binary.tar.gz"],
        )
        .file("noc100.toml", "task = \"long-tailed\"\ndata = \"cifar100\"\ndata_dir = \"/nonexistent/c100\"\n"),
        case(
            "missing Tiny-ImageNet folder",
            &train("notin.toml"),
            &["/nonexistent/tin", "wnids.txt", "tiny-imagenet-200.zip"],
        )
        .file("notin.toml", "task = \"long-tailed\"\ndata = \"tiny-imagenet\"\ndata_dir = \"/nonexistent/tin\"\n"),
        case(
            "CIFAR-10 folder without its files",
            &["train", "{dir}/c10here.toml"],
            &["data_batch_1.bin not found", "cifar-10-binary.tar.gz"],
        )
        .file("c10here.toml", "task = \"long-tailed\"\ndata = \"cifar10\"\ndata_dir = \".\"\n"),
        case(
            "MNIST folder without its files",
            &["train", "{dir}/mnhere.toml"],
            &["train-images-idx3-ubyte[.gz] not found", "fetch-test-data.sh"],
        )
        .file("mnhere.toml", "task = \"long-tailed\"\ndata = \"mnist\"\ndata_dir = \".\"\n"),
        case(
            "Tiny-ImageNet folder without its files",
            &["train", "{dir}/tinhere.toml"],
            &["wnids.txt not found", "tiny-imagenet-200.zip"],
        )
        .file("tinhere.toml", "task = \"long-tailed\"\ndata = \"tiny-imagenet\"\ndata_dir = \".\"\n"),
        // Files the CLI reads: each message says what the file should hold.
        case(
            "missing config",
            &["train", "/nonexistent/cfg.toml"],
            &["/nonexistent/cfg.toml", "task", "[[run]]", "built-in default"],
        ),
        case(
            "missing scores file",
            &["metrics", "/nonexistent/s.csv"],
            &["/nonexistent/s.csv", "label column", "score columns", "scores_test.csv"],
        ),
        case(
            "missing pava input",
            &["pava", "--input", "/nonexistent/z.json"],
            &["/nonexistent/z.json", "\"m\"", "\"weights\"", "standard input"],
        ),
        case(
            "missing run folder",
            &["eval", "/nonexistent/run"],
            &["/nonexistent/run/config.toml not found", "output folder of an image run"],
        ),
        case(
            "missing CheXpert folder",
            &train("nocx.toml"),
            &["/nonexistent/cx", "does not exist", "CheXpert-v1.0-small/", "valid.csv", "stanfordmlgroup"],
        )
        .file("nocx.toml", "task = \"chexpert\"\ndata_dir = \"/nonexistent/cx\"\n"),
        case(
            "missing pretrained weights",
            &train("nopth.toml"),
            &["/nonexistent/w.pth", "do not exist", "densenet121-a639ec97.pth"],
        )
        .file(
            "nopth.toml",
            "task = \"chexpert\"\ndata_dir = \".\"\npretrained = \"/nonexistent/w.pth\"\n",
        ),
        case("unknown data set", &["fit-linear", "--data", "imagenet"], &["imagenet"]),
        // Pdprox: settings it cannot solve, each with the reason.
        case(
            "pdprox with a smooth loss",
            &["fit-linear", "--data", "australian", "--solver", "pdprox-dual"],
            &["logistic", "bilinear dual", "admm"],
        ),
        case(
            "pdprox with nonconvex weights",
            &["fit-linear", "--data", "australian", "--solver", "pdprox-primal", "--loss", "hinge", "--objective", "aorr:m=5,k=50"],
            &["not convex", "bilinear dual"],
        ),
        case(
            "pdprox with a nonconvex regularizer",
            &["fit-linear", "--data", "australian", "--solver", "pdprox-dual", "--loss", "hinge", "--reg", "mcp:0.1,3"],
            &["nonconvex", "admm"],
        ),
        case(
            "a pdprox loss with admm",
            &["fit-linear", "--data", "australian", "--loss", "absolute"],
            &["absolute", "pdprox-dual"],
        ),
        case(
            "group lasso without groups",
            &["fit-linear", "--data", "australian", "--solver", "pdprox-dual", "--loss", "hinge", "--reg", "group:0.1"],
            &["--groups"],
        ),
        case(
            "groups of another length",
            &["fit-linear", "--data", "australian", "--solver", "pdprox-dual", "--loss", "hinge", "--reg", "group:0.1", "--groups", "{dir}/groups.txt"],
            &["3 group labels for 14 features"],
        )
        .file("groups.txt", "a b c\n"),
    ];
    // Image data: a folder of Fashion-MNIST files with a wrong IDX magic number.
    let mut idx = vec![0u8, 0, 0x0d, 3, 0, 0, 0, 1, 0, 0, 0, 28, 0, 0, 0, 28];
    idx.extend(std::iter::repeat_n(0u8, 28 * 28));
    let mut magic = case(
        "wrong IDX magic",
        &["train", "{dir}/idx.toml"],
        &["train-images-idx3-ubyte"],
    )
    .file(
        "idx.toml",
        leak(format!(
            "task = \"long-tailed\"\ndata_dir = {:?}\nquiet = true\nout = {:?}\n",
            dir.join("idx"),
            dir.join("idx-out")
        )),
    );
    for f in ["train-images-idx3-ubyte", "t10k-images-idx3-ubyte"] {
        magic = magic.file(leak(format!("idx/{f}")), idx.clone());
    }
    for f in ["train-labels-idx1-ubyte", "t10k-labels-idx1-ubyte"] {
        magic = magic.file(leak(format!("idx/{f}")), vec![0u8, 0, 8, 1, 0, 0, 0, 1, 0]);
    }
    cases.push(magic);
    // CheXpert: a missing label column, an image that is not a JPEG, a truncated JPEG.
    let no_edema = CX_HEADER.replace(",Edema", "");
    let jpeg = rankrisk_datasets::fetched::require("xray").and_then(|d| {
        std::fs::read_dir(d)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jpeg" || x == "jpg"))
            .and_then(|p| std::fs::read(p).ok())
    });
    let cfg = leak(cx_config(&dir));
    cases.push(
        chexpert_files(
            case(
                "missing CheXpert column",
                &["train", "{dir}/cx.toml"],
                &["missing columns [\"Edema\"]", "train.csv"],
            ),
            &cx_rows(&no_edema),
            b"x",
        )
        .file("cx.toml", cfg),
    );
    cases.push(
        chexpert_files(
            case(
                "unreadable image",
                &["train", "{dir}/cx.toml"],
                &["view1_frontal.jpg"],
            ),
            &cx_rows(CX_HEADER),
            b"this is not an image",
        )
        .file("cx.toml", cfg),
    );
    if let Some(jpeg) = jpeg {
        cases.push(
            chexpert_files(
                case(
                    "truncated JPEG",
                    &["train", "{dir}/cx.toml"],
                    &["view1_frontal.jpg"],
                ),
                &cx_rows(CX_HEADER),
                &jpeg[..jpeg.len() / 3],
            )
            .file("cx.toml", cfg),
        );
    }
    for c in &cases {
        run(c, &dir);
    }
    eprintln!("{} bad inputs refused", cases.len());
    std::fs::remove_dir_all(&dir).ok();
}

// Classes of bad input with their own tests (issue 39), each in its own file under
// tests/bad_inputs/: they reuse `Case`, `case`, `run`, `scratch` and `rankrisk` above.
#[path = "bad_inputs/metrics_scale.rs"]
mod metrics_scale;
#[path = "bad_inputs/readers.rs"]
mod readers;
#[path = "bad_inputs/resume.rs"]
mod resume;
#[path = "bad_inputs/settings.rs"]
mod settings;
