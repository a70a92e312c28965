//! The `rankrisk` binary: contract of its subcommands and their errors (exit status 2).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use rankrisk::backend::BackendKind;

fn rankrisk(args: &[&str], envs: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rankrisk"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn rankrisk");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

#[test]
fn info_lists_backends() {
    let out = rankrisk(&["info"], &[], None);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    if BackendKind::WGPU_COMPILED {
        assert!(
            text.contains("compiled backends: wgpu, ndarray, flex"),
            "{text}"
        );
        assert!(text.contains("wgpu adapters"), "{text}");
    } else {
        assert!(text.contains("compiled backends: ndarray, flex"), "{text}");
        assert!(text.contains("--features wgpu"), "{text}");
    }
}

/// Without the `wgpu` feature, `--backend wgpu` is refused with the way to build it.
fn refused_without_wgpu(out: &Output) -> bool {
    if BackendKind::WGPU_COMPILED {
        return false;
    }
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--features wgpu"), "{err}");
    true
}

#[test]
fn unknown_backend_from_env_is_exit_2() {
    let out = rankrisk(&["smoke", "--steps", "1"], &[("BURN_DEVICE", "tpu")], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("BURN_DEVICE") && err.contains("tpu"), "{err}");
}

#[test]
fn wgpu_without_any_adapter_names_what_it_saw() {
    // Hide every Vulkan driver and every EGL vendor: wgpu enumerates nothing.
    let out = rankrisk(
        &["smoke", "--backend", "wgpu", "--steps", "1"],
        &[
            ("VK_ICD_FILENAMES", "/nonexistent.json"),
            ("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent.json"),
        ],
        None,
    );
    if refused_without_wgpu(&out) {
        return;
    }
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("wgpu found no usable adapter") && err.contains("adapters seen: none"),
        "{err}"
    );
}

/// `cmd` started now, its output in files; see [`finish_within`].
fn start(cmd: &mut Command, tag: &str) -> (std::process::Child, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("rankrisk-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let child = cmd
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap();
    (child, dir)
}

/// The exit status and standard error of a process [`start`]ed, which must end within `limit`
/// seconds (it is killed and the test fails as a hang otherwise).
fn finish_within(
    (mut child, dir): (std::process::Child, std::path::PathBuf),
    limit: u64,
) -> (Option<i32>, String) {
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed().as_secs() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "still running after {limit} s (a hang); stderr:\n{}",
                std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let err = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
    std::fs::remove_dir_all(&dir).ok();
    (status.code(), err)
}

/// wgpu's OpenGL layer is refused at start, not run into a hang (issue 53: a device thread
/// panicked with "Could not lock adapter context" while autotune ran under load, and the
/// process then waited forever). With the Vulkan drivers hidden, what wgpu sees is Mesa's
/// OpenGL adapter where it is installed (CI installs it), else nothing; two runs at once with
/// the tune cache off, the case that reproduced the hang, both exit 2 at once with the reason.
#[test]
fn opengl_only_is_refused_at_start_instead_of_hanging() {
    let hidden = [
        ("VK_ICD_FILENAMES", "/nonexistent.json"),
        ("VK_DRIVER_FILES", "/nonexistent.json"),
        ("CUBECL_AUTOTUNE_CACHE", "off"),
    ];
    if refused_without_wgpu(&rankrisk(&["smoke", "--backend", "wgpu"], &[], None)) {
        return;
    }
    let info = rankrisk(&["info"], &hidden, None);
    let listing = String::from_utf8_lossy(&info.stdout).to_string();
    let gl = listing.contains("api: Gl");
    eprintln!(
        "with Vulkan hidden, an OpenGL adapter is {}",
        if gl { "there" } else { "not there" }
    );
    if gl {
        assert!(listing.contains("not used: OpenGL"), "{listing}");
        assert!(listing.contains("will refuse to start"), "{listing}");
    }
    let runs: Vec<_> = (0..2)
        .map(|k| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_rankrisk"));
            cmd.args(["smoke", "--backend", "wgpu", "--steps", "3"])
                .envs(hidden);
            start(&mut cmd, &format!("gl-{k}"))
        })
        .collect();
    for run in runs {
        let (code, err) = finish_within(run, 120);
        assert_eq!(code, Some(2), "{err}");
        let reason = if gl {
            "wgpu sees only OpenGL adapters"
        } else {
            "wgpu found no usable adapter"
        };
        assert!(
            err.contains(reason) && err.contains("--backend flex"),
            "{err}"
        );
    }
}

/// A panic on one of the GPU runtime's device threads (cubecl names them `DSU-*`, `DSD-*`)
/// ends the process with status 2 and a message that names the thread and the device, while
/// the caller waits for that thread's answer as Burn's runtime does; before the guard such a
/// process waited forever. The test runs itself as the child process.
#[test]
fn a_panic_on_a_device_thread_ends_the_process_with_status_2() {
    const CHILD: &str = "RANKRISK_TEST_DEVICE_THREAD_PANIC";
    if std::env::var_os(CHILD).is_some() {
        rankrisk::device::panic_guard::install("wgpu on a test adapter [Cpu, Vulkan]");
        // A panic on any other thread is left alone: joined as an error, the process goes on.
        let other = std::thread::Builder::new()
            .name("not-a-device".to_string())
            .spawn(|| panic!("an ordinary panic"))
            .unwrap()
            .join();
        assert!(other.is_err());
        let (answer, wait) = std::sync::mpsc::channel::<()>();
        let keep_open = answer.clone();
        std::thread::Builder::new()
            .name("DSD-0-0".to_string())
            .spawn(move || {
                let _answer = answer;
                panic!("Could not lock adapter context. This is most-likely a deadlock.");
            })
            .unwrap();
        // Never answered: `keep_open` holds the channel open, as a queued call's would be.
        let _ = wait.recv();
        drop(keep_open);
        return;
    }
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "a_panic_on_a_device_thread_ends_the_process_with_status_2",
        "--test-threads=1",
        "--nocapture",
    ])
    .env(CHILD, "1");
    let (code, err) = finish_within(start(&mut cmd, "device-panic"), 60);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("Could not lock adapter context")
            && err.contains("device thread DSD-0-0 panicked")
            && err.contains("wgpu on a test adapter")
            && err.contains("--backend flex"),
        "{err}"
    );
    // The child's panic on another thread went to the previous hook and was joined as usual.
    assert!(err.contains("an ordinary panic"), "{err}");
}

#[test]
fn unknown_dataset_is_exit_2() {
    let out = rankrisk(&["smoke", "--data", "imagenet"], &[], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown data set 'imagenet'"));
}

#[test]
fn pava_reads_json_and_prints_the_solution() {
    let input = r#"{"m": [0.3, -1.2, 2.0, 0.7], "loss": "logistic", "weights": {"kind": "cvar", "q": 0.5}, "rho": 1.0}"#;
    let out = rankrisk(&["pava", "--input", "-"], &[], Some(input));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let z: Vec<f64> = v["z"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(z.len(), 4);
    // z sorted like m: m order is 1, 0, 3, 2
    assert!(z[1] <= z[0] && z[0] <= z[3] && z[3] <= z[2], "{z:?}");
    // CVaR(0.5) weights the two largest: those z are pulled below their m
    assert!(z[2] < 2.0 && z[3] < 0.7);
    assert!(v["objective"].as_f64().unwrap() > 0.0);
    assert!(v["blocks"].as_u64().unwrap() >= 1);
}

#[test]
fn pava_bad_inputs_are_exit_2() {
    let cases = [
        (
            r#"{"m": [1, 2], "loss": "logistic", "weights": {"kind": "erm"}, "rho": 0}"#,
            "rho",
        ),
        (
            r#"{"m": [1, 2], "loss": "logistic", "weights": {"kind": "aorr", "m": 2, "k": 2}, "rho": 1}"#,
            "m < k",
        ),
        (
            r#"{"m": [1, 2], "loss": "cauchy", "weights": {"kind": "erm"}, "rho": 1}"#,
            "unknown loss",
        ),
        (
            r#"{"m": [1, 2], "loss": "hinge", "weights": {"kind": "topk", "k": 3}, "rho": 1}"#,
            "k <= n",
        ),
        (
            r#"{"m": [1, NaN], "loss": "hinge", "weights": {"kind": "erm"}, "rho": 1}"#,
            "line 1",
        ),
        // exp overflows and rho/2 ||z - m||^2 exceeds f64: an error, not `null`s.
        (
            r#"{"m": [1e308, -1e308], "loss": "exponential", "weights": {"kind": "erm"}, "rho": 1e-300}"#,
            "overflowed at m[0] = 1e308",
        ),
        // A finite solution whose objective exceeds f64.
        (
            r#"{"m": [1e200, -1e200], "loss": "sqhinge", "weights": {"kind": "erm"}, "rho": 1}"#,
            "floating-point range",
        ),
    ];
    for (input, needle) in cases {
        let out = rankrisk(&["pava", "--input", "-"], &[], Some(input));
        assert_eq!(out.status.code(), Some(2), "{input}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{input}: {err}");
    }
    let out = rankrisk(&["pava", "--input", "/nonexistent/file.json"], &[], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/file.json"));
}

#[test]
fn metrics_counts_signed_zeros_as_ties() {
    // The issue's six rows: three positives, three negatives, every score 0.0 or -0.0.
    let dir = std::env::temp_dir().join(format!("rankrisk-cli-zeros-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("zeros.csv");
    std::fs::write(
        &csv,
        "label,score\n1,0.0\n0,-0.0\n1,-0.0\n0,0.0\n1,0.0\n0,-0.0\n",
    )
    .unwrap();
    let out = rankrisk(
        &["metrics", csv.to_str().unwrap(), "--min-tpr", "0.5"],
        &[],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("| score |"))
        .expect("a row for the column");
    // AUC with its DeLong interval, pAUC (bootstrap), McClish pAUC, two-way pAUC (bootstrap).
    assert!(
        row.contains(
            "| 0.5000 [0.5000, 0.5000] | 0.5000 [0.5000, 0.5000] | 0.5000 | 0.5000 [0.5000, 0.5000] |"
        ),
        "{row}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fit_linear_writes_the_documented_json() {
    let dir = std::env::temp_dir().join(format!("rankrisk-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("fit.json");
    let out = rankrisk(
        &[
            "fit-linear",
            "--data",
            "australian",
            "--objective",
            "extremile:r=2",
            "--loss",
            "hinge",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for key in [
        "objective",
        "train_accuracy",
        "test_accuracy",
        "iterations",
        "seconds",
        "history",
        "w",
    ] {
        assert!(!v[key].is_null(), "missing {key}: {v}");
    }
    assert_eq!(v["w"].as_array().unwrap().len(), 14);
    let hist = v["history"].as_array().unwrap();
    assert_eq!(hist.len() as u64, v["iterations"].as_u64().unwrap());
    assert!(hist[0]["primal_residual"].is_number() && hist[0]["seconds"].is_number());
    assert!(v["test_accuracy"].as_f64().unwrap() > 0.6);
    // The default cap lets this convex nonsmooth problem reach the tolerance, silently: its
    // stop is the certified duality gap (ADMM's `gap`, absolute), not the residuals.
    assert_eq!(v["converged"], true, "{}", v["residuals"]);
    let relative = v["gap"].as_f64().unwrap() / v["objective"].as_f64().unwrap();
    assert!(relative > -1e-12 && relative <= 1e-6, "{relative}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
    // A cap that stops it early says so, on standard error and in the JSON.
    let out = rankrisk(
        &[
            "fit-linear",
            "--data",
            "australian",
            "--loss",
            "hinge",
            "--reg",
            "l1:0.01",
            "--max-iter",
            "300",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: ADMM stopped at the iteration cap (300)"),
        "{err}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["converged"], false);
}

#[test]
fn fit_linear_pdprox_writes_the_gap_and_matches_admm() {
    let dir = std::env::temp_dir().join(format!("rankrisk-cli-pdprox-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut objectives = Vec::new();
    for solver in ["admm", "pdprox-dual", "pdprox-primal"] {
        let json = dir.join(format!("{solver}.json"));
        let out = rankrisk(
            &[
                "fit-linear",
                "--data",
                "australian",
                "--objective",
                "cvar:q=0.7",
                "--loss",
                "hinge",
                "--reg",
                "l2:0.01",
                "--solver",
                solver,
                "--json",
                json.to_str().unwrap(),
            ],
            &[],
            None,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{solver}: {err}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(v["converged"], true, "{solver}: {v}");
        if solver != "admm" {
            for key in [
                "objective",
                "gap",
                "best_gap",
                "iterate",
                "averaged_objective",
                "last_objective",
                "iterations",
                "passes",
                "seconds",
                "converged",
            ] {
                assert!(!v[key].is_null(), "{solver}: missing {key}");
            }
            let best_gap = v["best_gap"].as_f64().unwrap();
            assert!((0.0..=1e-4).contains(&best_gap), "{solver}: gap {best_gap}");
            // The reported iterate is the better of the two, the one the stop certifies.
            assert_eq!(v["gap"].as_f64().unwrap(), best_gap);
            let (avg, last) = (
                v["averaged_objective"].as_f64().unwrap(),
                v["last_objective"].as_f64().unwrap(),
            );
            assert_eq!(v["objective"].as_f64().unwrap(), avg.min(last));
            let named = if avg <= last { "averaged" } else { "last" };
            assert_eq!(v["iterate"], named, "{solver}");
            if named == "averaged" {
                assert_eq!(v["averaged_w"], v["w"]);
            } else {
                assert_eq!(v["averaged_w"].as_array().unwrap().len(), 14);
            }
            assert!(v["passes"].as_u64().unwrap() >= 2 * v["iterations"].as_u64().unwrap());
            assert!(v["history"][0]["gap"].is_number());
            assert!(!err.contains("warning"), "{err}");
        }
        objectives.push((v["objective"].as_f64().unwrap(), v["gap"].as_f64()));
    }
    // Within the certified gap of ADMM's optimum (ADMM's own tolerance is 1e-6 relative).
    for (obj, gap) in &objectives[1..] {
        assert!(
            (obj - objectives[0].0).abs() <= gap.unwrap() + 1e-5,
            "{objectives:?}"
        );
    }
    // The group lasso over pairs of features, the absolute loss and a free bias.
    let json = dir.join("group.json");
    let out = rankrisk(
        &[
            "fit-linear",
            "--data",
            "australian",
            "--loss",
            "absolute",
            "--reg",
            "group:0.01",
            "--groups",
            "size=2",
            "--bias",
            "--solver",
            "pdprox-primal",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["converged"], true);
    assert_eq!(
        v["w"].as_array().unwrap().len(),
        15,
        "14 weights and the bias"
    );
    assert!(v["test_accuracy"].as_f64().unwrap() > 0.7);
    // A cap that stops it early says so.
    let out = rankrisk(
        &[
            "fit-linear",
            "--data",
            "australian",
            "--loss",
            "hinge",
            "--reg",
            "l1:0.01",
            "--solver",
            "pdprox-dual",
            "--max-iter",
            "20",
        ],
        &[],
        None,
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: Pdprox stopped at the iteration cap (20)"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fit_linear_reads_real_targets_for_the_regression_losses() {
    let dir = std::env::temp_dir().join(format!("rankrisk-cli-targets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // y = 2 a - b + 0.5, every tenth training row shifted by +5: least absolute deviations
    // ignore the outliers, the test rows have none.
    let row = |i: usize, outlier: bool| {
        let (a, b) = ((i as f64 * 0.9).sin(), (i as f64 * 1.7).cos());
        let y = 2.0 * a - b + 0.5 + if outlier { 5.0 } else { 0.0 };
        format!("{a},{b},{y}\n")
    };
    let train: String = (0..80).map(|i| row(i, i % 10 == 3)).collect();
    let test: String = (80..110).map(|i| row(i, false)).collect();
    let (train_csv, test_csv) = (dir.join("train.csv"), dir.join("test.csv"));
    std::fs::write(&train_csv, format!("a,b,y\n{train}")).unwrap();
    std::fs::write(&test_csv, format!("a,b,y\n{test}")).unwrap();
    let json = dir.join("lad.json");
    let fit = |loss: &str| {
        rankrisk(
            &[
                "fit-linear",
                "--train-file",
                train_csv.to_str().unwrap(),
                "--test-file",
                test_csv.to_str().unwrap(),
                "--loss",
                loss,
                "--reg",
                "l2:0.0001",
                "--bias",
                "--solver",
                "pdprox-dual",
                "--tol",
                "1e-6",
                "--max-iter",
                "200000",
                "--json",
                json.to_str().unwrap(),
            ],
            &[],
            None,
        )
    };
    let out = fit("absolute");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("test MAE"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["converged"], true);
    assert!(v["gap"].as_f64().unwrap() <= 1e-6, "{v}");
    let w: Vec<f64> = v["w"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    for (got, want) in w.iter().zip([2.0, -1.0, 0.5]) {
        assert!((got - want).abs() < 0.02, "{w:?}");
    }
    assert!(v["test_mae"].as_f64().unwrap() < 0.02, "{v}");
    assert!(v["test_accuracy"].is_null(), "NaN is written as null");
    // The reported objective is the one the targets define: (1/n) sum |a w1 + b w2 + w0 - y|
    // + (mu / 2) ||w||^2 (the bias unpenalized), evaluated here from the file's numbers.
    let rows: Vec<Vec<f64>> = train
        .lines()
        .map(|l| l.split(',').map(|f| f.parse().unwrap()).collect())
        .collect();
    let loss = rows
        .iter()
        .map(|r| (r[0] * w[0] + r[1] * w[1] + w[2] - r[2]).abs())
        .sum::<f64>()
        / rows.len() as f64;
    let objective = loss + 0.5e-4 * (w[0] * w[0] + w[1] * w[1]);
    assert!(
        (v["objective"].as_f64().unwrap() - objective).abs() < 1e-9,
        "{objective} vs {v}"
    );
    // The same file is not a binary task for the hinge loss.
    let out = fit("hinge");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("more than two label values"), "{err}");
}

#[test]
fn fit_linear_bad_inputs_are_exit_2() {
    let dir = std::env::temp_dir().join(format!("rankrisk-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one_class = dir.join("one.csv");
    std::fs::write(&one_class, "1,2,1\n3,4,1\n5,6,1\n").unwrap();
    let nan = dir.join("nan.csv");
    std::fs::write(&nan, "1,2,1\n3,nan,0\n").unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["fit-linear", "--train-file", one_class.to_str().unwrap()],
            "both classes",
        ),
        (
            &["fit-linear", "--train-file", nan.to_str().unwrap()],
            "not finite",
        ),
        (
            &[
                "fit-linear",
                "--data",
                "australian",
                "--objective",
                "aorr:m=5,k=5",
            ],
            "m < k",
        ),
        (
            &["fit-linear", "--data", "mnist"],
            "unknown data set 'mnist'",
        ),
        (
            &["fit-linear", "--data", "australian", "--solver", "newton"],
            "unknown solver",
        ),
    ];
    for (args, needle) in cases {
        let out = rankrisk(args, &[], None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn fit_pauc_writes_json_and_refuses_bad_input() {
    let dir = std::env::temp_dir().join(format!("rankrisk-cli-pauc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("pauc.json");
    let out = rankrisk(
        &[
            "fit-pauc",
            "--data",
            "australian",
            "--epochs",
            "4",
            "--batch",
            "20,20",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for key in [
        "objective",
        "train_pauc",
        "test_pauc",
        "test_auc",
        "seconds",
        "history",
    ] {
        assert!(
            v[key].is_number() || v[key].is_array(),
            "missing {key}: {v}"
        );
    }
    assert_eq!(v["history"].as_array().unwrap().len(), 4);
    assert!(v["test_auc"].as_f64().unwrap() > 0.7);
    let one_class = dir.join("one.csv");
    std::fs::write(&one_class, "1,2,1\n3,4,1\n").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["fit-pauc", "--data", "australian", "--fpr", "0.5,0.2"],
            "alpha < beta",
        ),
        (
            &["fit-pauc", "--data", "australian", "--fpr", "0.5"],
            "two comma-separated",
        ),
        (
            &["fit-pauc", "--train-file", one_class.to_str().unwrap()],
            "both classes",
        ),
        (
            &["fit-pauc", "--data", "australian", "--solver", "svm"],
            "unknown solver",
        ),
    ];
    for (args, needle) in cases {
        let out = rankrisk(args, &[], None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

mod train_config {
    use super::rankrisk;
    use rankrisk::experiments::launch::DEFAULT_CONFIG;
    use rankrisk::experiments::plan::{Run, parse_config, parse_plan, to_toml};
    use std::process::Output;

    /// `rankrisk train --dry-run` on a config file `c.toml` holding `text`, in a scratch folder
    /// named after `tag` (removed afterwards).
    fn dry_run(tag: &str, text: &str) -> Output {
        let dir = std::env::temp_dir().join(format!("rankrisk-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("c.toml");
        std::fs::write(&cfg, text).unwrap();
        let out = rankrisk(&["train", "--dry-run", cfg.to_str().unwrap()], &[], None);
        std::fs::remove_dir_all(&dir).ok();
        out
    }

    #[test]
    fn the_resolved_config_reads_back_to_the_same_runs() {
        let runs = parse_config(DEFAULT_CONFIG, false, "default").unwrap();
        assert_eq!(runs.len(), 4);
        let printed = to_toml(&runs).unwrap();
        assert_eq!(parse_config(&printed, false, "printed").unwrap(), runs);
        let Run::LongTailed(sbcd) = &runs[3] else {
            panic!("fourth default run is long-tailed: {runs:?}");
        };
        // Defaults filled in, the method's learning rate resolved.
        assert_eq!(sbcd.training.t_scale, 50);
        assert_eq!(sbcd.training.batch, 32);
        // AGD-SBCD resolves to AgdSbcdConfig's default c.
        assert_eq!(sbcd.training.lr, Some(0.1));
        assert!(sbcd.training.backend.backend.is_some());
    }

    /// UPAUCI's weight step (issue 56) as a config key and a flag, `exact` by default.
    #[test]
    fn the_weight_step_is_a_setting() {
        let runs = parse_config(
            "task = \"long-tailed\"\nmethod = \"upauci\"\nweight_step = \"paper\"\n",
            false,
            "c",
        )
        .unwrap();
        let Run::LongTailed(args) = &runs[0] else {
            panic!("{runs:?}");
        };
        assert_eq!(
            args.training.weight_step,
            rankrisk::train::instance_pauc::WeightStep::Paper
        );
        assert!(to_toml(&runs).unwrap().contains("weight_step = \"paper\""));
        let runs = parse_config("task = \"long-tailed\"\n", false, "d").unwrap();
        let Run::LongTailed(args) = &runs[0] else {
            panic!("{runs:?}");
        };
        assert_eq!(
            args.training.weight_step,
            rankrisk::train::instance_pauc::WeightStep::Exact
        );
        let e = parse_config(
            "task = \"long-tailed\"\nweight_step = \"newton\"\n",
            false,
            "e",
        )
        .unwrap_err();
        assert!(e.to_string().contains("newton"), "{e}");
        // Adam's epsilon (issue 56): Burn's 1e-5 by default, PyTorch's 1e-8 when asked, and
        // not 0.
        assert_eq!(args.training.recipe.adam_epsilon, 1e-5);
        let runs =
            parse_config("task = \"long-tailed\"\nadam_epsilon = 1e-8\n", false, "f").unwrap();
        let Run::LongTailed(args) = &runs[0] else {
            panic!("{runs:?}");
        };
        assert_eq!(args.training.recipe.adam_epsilon, 1e-8);
        let e = parse_config("task = \"long-tailed\"\nadam_epsilon = 0\n", false, "g").unwrap_err();
        assert!(e.to_string().contains("adam_epsilon"), "{e}");
        // PAUCI's gamma direction (issue 56): the released code's descent by default, the
        // paper's ascent when asked.
        use rankrisk::train::instance_pauc::GammaStep;
        assert_eq!(args.training.gamma_step, GammaStep::Descent);
        let runs = parse_config(
            "task = \"long-tailed\"\nmethod = \"pauci\"\ngamma_step = \"ascent\"\n",
            false,
            "h",
        )
        .unwrap();
        let Run::LongTailed(args) = &runs[0] else {
            panic!("{runs:?}");
        };
        assert_eq!(args.training.gamma_step, GammaStep::Ascent);
        assert!(to_toml(&runs).unwrap().contains("gamma_step = \"ascent\""));
    }

    #[test]
    fn the_recipe_is_a_setting_and_bad_recipes_name_the_key() {
        use rankrisk::train::recipe::{OptimizerKind, Schedule};
        let text = "task = \"long-tailed\"\nmethod = \"ce\"\nepochs = 10\noptimizer = \"sgd\"\n\
                    momentum = 0.9\nnesterov = true\nweight_decay = 5e-4\nlr_schedule = \"step\"\n\
                    decay_epochs = [3, 6]\ndecay_factor = 5\nwarmup_steps = 10\neval_every = 100\n";
        let runs = parse_config(text, false, "a").unwrap();
        assert_eq!(runs.len(), 1, "decay_epochs is one list, not a grid axis");
        let Run::LongTailed(args) = &runs[0] else {
            panic!("{runs:?}");
        };
        let r = &args.training.recipe;
        assert_eq!(r.optimizer, Some(OptimizerKind::Sgd));
        assert_eq!(
            (r.momentum, r.nesterov, r.weight_decay),
            (0.9, true, Some(5e-4))
        );
        assert_eq!(
            (r.lr_schedule, &r.decay_epochs[..]),
            (Schedule::Step, &[3, 6][..])
        );
        assert_eq!(
            (r.decay_factor, r.warmup_steps, r.eval_every),
            (5.0, 10, Some(100))
        );
        // The printed config reads back to the same recipe.
        let again = parse_config(&to_toml(&runs).unwrap(), false, "b").unwrap();
        assert_eq!(again, runs);
        for (bad, key) in [
            ("optimizer = \"rmsprop\"\n", "rmsprop"),
            (
                "lr_schedule = \"step\"\ndecay_epochs = [2, 12]\n",
                "decay_epochs",
            ),
            (
                "lr_schedule = \"step\"\ndecay_epochs = [2]\ndecay_factor = -10\n",
                "decay_factor",
            ),
            ("decay_epochs = [2]\n", "decay_epochs"),
            ("momentum = 0.9\n", "momentum"),
            ("method = \"aucm\"\noptimizer = \"adam\"\n", "optimizer"),
            (
                "method = \"sbcd\"\nlr_schedule = \"cosine\"\n",
                "lr_schedule",
            ),
            ("method = \"sbcd\"\neval_every = 10\n", "eval_every"),
            (
                "method = \"pauci\"\nsolver = \"asgda\"\nweight_decay = 1e-4\n",
                "weight_decay",
            ),
        ] {
            let text = format!("task = \"long-tailed\"\nepochs = 10\n{bad}");
            let e = parse_config(&text, false, "c").unwrap_err().to_string();
            assert!(e.contains(key), "{bad}: {e}");
        }
    }

    #[test]
    fn json_toml_and_dashed_keys_agree() {
        let toml = "task = \"long-tailed\"\nmethod = \"mb\"\npositive = [1, 2]\ntest_limit = 10\nresume = true\n";
        let json = r#"{"task": "long-tailed", "method": "mb", "positive": [1, 2], "test-limit": 10, "resume": true}"#;
        let a = parse_config(toml, false, "a").unwrap();
        let b = parse_config(json, true, "b").unwrap();
        assert_eq!(a, b);
        let Run::LongTailed(args) = &a[0] else {
            panic!("{a:?}")
        };
        assert_eq!(args.positive, vec![1, 2]);
        assert!(args.training.resume);
        assert_eq!(args.test_limit, 10);
    }

    /// Every method prints as the command line spells it and reads back; the names that
    /// configs written before 2026-11-24 hold (`sopas`, `sotas`) still read.
    #[test]
    fn every_method_prints_and_reads_back() {
        for (written, old) in [
            ("sbcd", None),
            ("ce", None),
            ("aucm", None),
            ("mb", None),
            ("sopa", None),
            ("sopa-s", Some("sopas")),
            ("sota-s", Some("sotas")),
            ("staco", None),
            ("pauci", None),
            ("upauci", None),
        ] {
            let text = format!("task = \"long-tailed\"\nmethod = \"{written}\"\n");
            let runs = parse_config(&text, false, "x").unwrap();
            let printed = to_toml(&runs).unwrap();
            assert!(
                printed.contains(&format!("method = \"{written}\"")),
                "{printed}"
            );
            assert_eq!(parse_config(&printed, false, "printed").unwrap(), runs);
            if let Some(old) = old {
                let text = format!("task = \"long-tailed\"\nmethod = \"{old}\"\n");
                assert_eq!(parse_config(&text, false, "old").unwrap(), runs);
            }
        }
    }

    #[test]
    fn a_chexpert_run_keeps_its_task_name_apart_from_the_run_kind() {
        let text = "task = \"chexpert\"\ndata_dir = \"/data\"\ntask_name = \"pleural-effusion\"\nsize = 320\n";
        let runs = parse_config(text, false, "x").unwrap();
        let Run::Chexpert(args) = &runs[0] else {
            panic!("{runs:?}")
        };
        assert_eq!(args.task, "pleural-effusion");
        assert_eq!(args.size, 320);
        let printed = to_toml(&runs).unwrap();
        assert!(printed.contains("task = \"chexpert\""), "{printed}");
        assert!(
            printed.contains("task_name = \"pleural-effusion\""),
            "{printed}"
        );
        assert_eq!(parse_config(&printed, false, "printed").unwrap(), runs);
    }

    #[test]
    fn bad_configs_name_the_run_and_the_key() {
        let cases = [
            ("task = \"long-tailed\"\nepochz = 3\n", "epochz"),
            ("task = \"long-tailed\"\nepochs = \"two\"\n", "epochs"),
            ("task = \"long-tailed\"\nmethod = \"adam\"\n", "adam"),
            ("epochs = 3\n", "task"),
            ("task = \"imagenet\"\n", "imagenet"),
            ("task = \"tabular\"\n[extra]\nx = 1\n", "run"),
            (
                "[[run]]\ntask = \"tabular\"\n[[run]]\ntask = \"tabular\"\nsets = {a = 1}\n",
                "run 2",
            ),
            ("task = \"tabular\"\nsets = [\n", "line 2"),
            ("task = \"chexpert\"\n", "data_dir"),
        ];
        for (text, needle) in cases {
            let err = parse_config(text, false, "cfg.toml")
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
            assert!(err.starts_with("cfg.toml"), "{err}");
        }
        let err = parse_config("{\"task\": ", true, "cfg.json")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("cfg.json"), "{err}");
    }

    #[test]
    fn a_list_for_a_one_value_key_is_a_grid_with_a_folder_per_point() {
        let text = "task = \"long-tailed\"\nmethod = \"sbcd\"\nout = \"o\"\npositive = [3]\n\
                    lr = [0.03, 0.1, 0.3]\ngamma_scale = [1000, 2000]\nepochs = 1\n";
        let plan = parse_plan(text, false, "g").unwrap();
        assert_eq!(plan.len(), 6);
        let mut folders = Vec::new();
        for p in &plan {
            let Run::LongTailed(a) = &p.run else {
                panic!("{p:?}")
            };
            let member = p.grid.as_ref().expect("a grid point");
            assert_eq!(member.group, 0);
            assert_eq!(member.out, std::path::Path::new("o"));
            // The list key keeps its list; the axes take one value each.
            assert_eq!(a.positive, vec![3]);
            assert_eq!(a.training.epochs, 1);
            let want = format!(
                "gamma_scale={},lr={}",
                a.training.gamma_scale,
                a.training.lr.unwrap()
            );
            assert_eq!(a.out, std::path::Path::new("o").join(&want));
            folders.push(want);
        }
        // Axes in key order, the first varying slowest; every point once.
        assert_eq!(folders[0], "gamma_scale=1000,lr=0.03");
        assert_eq!(folders[5], "gamma_scale=2000,lr=0.3");
        folders.sort();
        folders.dedup();
        assert_eq!(folders.len(), 6);
        // A grid over a list key is a list of lists; the runs of a config keep their groups.
        // (Each run in a folder of its own: the second may not write into the grid's.)
        let text = "[[run]]\ntask = \"long-tailed\"\npositive = [[3], [3, 5]]\n\
                    [[run]]\ntask = \"long-tailed\"\nmethod = \"ce\"\nout = \"o2\"\n";
        let plan = parse_plan(text, false, "g").unwrap();
        assert_eq!(plan.len(), 3);
        let Run::LongTailed(a) = &plan[1].run else {
            panic!()
        };
        assert_eq!(a.positive, vec![3, 5]);
        assert!(a.out.ends_with("positive=3+5"), "{:?}", a.out);
        assert!(plan[2].grid.is_none());
        // The flattened runs read back to themselves.
        let runs = parse_config(text, false, "g").unwrap();
        assert_eq!(
            parse_config(&to_toml(&runs).unwrap(), false, "p").unwrap(),
            runs
        );
    }

    #[test]
    fn bad_grids_and_negative_budgets_name_the_key() {
        let cases = [
            ("task = \"tabular\"\nouter = [3, 5]\n", "tabular"),
            ("task = \"long-tailed\"\nlr = []\n", "`lr`: an empty list"),
            (
                "task = \"long-tailed\"\npositive = [[3], 5]\n",
                "list of lists",
            ),
            ("task = \"long-tailed\"\nout = [\"a\", \"b\"]\n", "`out`"),
            ("task = \"long-tailed\"\nlr = [0.1, \"x\"]\n", "'x'"),
            ("task = \"long-tailed\"\nepochs = -3\n", "'-3' for 'epochs'"),
            ("task = \"long-tailed\"\nepochs = 0\n", "epochs: the budget"),
            (
                "task = \"long-tailed\"\nalpha = 0.6\nbeta = 0.2\n",
                "0 <= alpha < beta <= 1",
            ),
            (
                "task = \"long-tailed\"\nlr = -0.1\n",
                "lr: must be a positive",
            ),
            ("task = \"long-tailed\"\nbatch = 1\n", "batch: at least 2"),
            // An AGD-SBCD constant (not the default method since 2026-11-24).
            (
                "task = \"long-tailed\"\nmethod = \"sbcd\"\nmu_scale = 0\n",
                "mu_scale",
            ),
        ];
        for (text, needle) in cases {
            let err = parse_plan(text, false, "cfg.toml").unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
            assert!(err.starts_with("cfg.toml: run 1"), "{err}");
        }
    }

    #[test]
    fn dry_run_refuses_what_training_would_refuse() {
        for (text, needle) in [
            (
                "task = \"long-tailed\"\nalpha = 0.6\nbeta = 0.2\n",
                "alpha = 0.6",
            ),
            (
                "task = \"long-tailed\"\ndata_dir = \"/nonexistent/fmnist\"\n",
                "/nonexistent/fmnist",
            ),
            (
                "task = \"chexpert\"\ndata_dir = \"/nonexistent/cx\"\n",
                "/nonexistent/cx",
            ),
            (
                "task = \"long-tailed\"\nimbalance = 0\n",
                "imbalance: must be in (0, 1]",
            ),
        ] {
            let out = dry_run("dry", text);
            assert_eq!(out.status.code(), Some(2), "{text}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(needle) && err.contains("run 1"),
                "{text}: {err}"
            );
            assert!(out.stdout.is_empty(), "{text}: printed a config");
        }
    }

    /// This build has no CUDA backend (CI builds without the `cuda` feature): asking for it,
    /// as the backend or among the data-parallel devices, is a clear exit 2.
    #[test]
    fn cuda_in_a_build_without_it_says_how_to_get_it() {
        for text in [
            "task = \"long-tailed\"\nbackend = \"cuda\"\n",
            "task = \"long-tailed\"\ndevices = [\"flex\", \"cuda:1\"]\n",
        ] {
            let out = dry_run("cuda", text);
            assert_eq!(out.status.code(), Some(2), "{text}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("--features cuda"), "{text}: {err}");
        }
        let out = rankrisk(&["smoke", "--backend", "cuda:0", "--steps", "1"], &[], None);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--features cuda"), "{err}");
        let out = rankrisk(&["info"], &[], None);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("cuda: not compiled"), "{text}");
    }

    /// Remote devices: a remote first device is refused (it would hold the model and the CPU
    /// state); in a build without the `remote` feature every remote device and `rankrisk
    /// serve` say how to get them.
    #[test]
    fn remote_devices_are_refused_clearly_where_they_cannot_run() {
        let compiled = cfg!(feature = "remote");
        let first = "task = \"long-tailed\"\ndevices = [\"remote:ws://127.0.0.1:9\", \"flex\"]\n";
        let out = dry_run("remote", first);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        let expected = if compiled {
            "first device"
        } else {
            "--features remote"
        };
        assert!(err.contains(expected), "{err}");
        if !compiled {
            let second = "task = \"long-tailed\"\ndevices = [\"flex\", \"remote:ws://h:1\"]\n";
            let out = dry_run("remote", second);
            assert_eq!(out.status.code(), Some(2));
            assert!(String::from_utf8_lossy(&out.stderr).contains("--features remote"));
            let out = rankrisk(&["serve", "--port", "0"], &[], None);
            assert_eq!(out.status.code(), Some(2));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("--features remote"), "{err}");
        }
    }

    #[test]
    fn train_runs_a_tabular_config_and_prints_the_table() {
        let dir = std::env::temp_dir().join(format!("rankrisk-train-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("tab.toml");
        std::fs::write(
            &cfg,
            "task = \"tabular\"\nsets = [\"australian\"]\nouter = 3\n",
        )
        .unwrap();
        let out = rankrisk(&["train", cfg.to_str().unwrap()], &[], None);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("# resolved config"), "{text}");
        assert!(text.contains("train_share = 0.6"), "{text}");
        // Both ADMM fits of australian converge within the default cap: no warning.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("warning"), "{err}");
        for method in ["ADMM ERM", "ADMM CVaR 0.3", "AGD-SBCD"] {
            let line = text
                .lines()
                .find(|l| l.starts_with("| australian | ") && l.contains(method))
                .unwrap_or_else(|| panic!("no {method} row: {text}"));
            // test AUC column, `AUC [lower, upper]`: a real classifier on australian, far
            // above chance, inside its 95% interval.
            let cell = line.split('|').nth(3).unwrap().trim();
            let numbers: Vec<f64> = cell
                .split([' ', '[', ']', ','])
                .filter(|t| !t.is_empty())
                .map(|t| t.parse().unwrap())
                .collect();
            let [auc, lower, upper] = numbers[..] else {
                panic!("{line}")
            };
            assert!(auc > 0.8, "{line}");
            assert!(lower < auc && auc < upper, "{line}");
        }
        let out = rankrisk(&["train", "/nonexistent/cfg.toml"], &[], None);
        assert_eq!(out.status.code(), Some(2));
        let out = rankrisk(&["eval", dir.to_str().unwrap()], &[], None);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("config.toml not found"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// Found while printing the rank-based tables again: `PdproxArgs::default()` (used by the
/// reproduction examples) had `check_every = 0` where the command line's default is 10, so
/// every run of `reproduce_rank_based` failed and the table held only "failed". The `Default`
/// of every argument group the examples build equals the command line's defaults.
#[test]
fn argument_defaults_equal_the_command_lines() {
    use clap::Parser;
    use rankrisk::experiments::fit_pdprox::PdproxArgs;
    use rankrisk::experiments::linear_data::DataArgs;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        pdprox: PdproxArgs,
        #[command(flatten)]
        data: DataArgs,
    }
    let parsed = Wrap::try_parse_from(["defaults"]).unwrap();
    assert_eq!(
        format!("{:?}", parsed.pdprox),
        format!("{:?}", PdproxArgs::default())
    );
    assert_eq!(
        format!("{:?}", parsed.data),
        format!("{:?}", DataArgs::default())
    );
}
