//! The `rankrisk` binary: contract of its subcommands and their errors (exit status 2).

use std::io::Write;
use std::process::{Command, Output, Stdio};

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
    assert!(
        text.contains("compiled backends: wgpu, ndarray, flex"),
        "{text}"
    );
    assert!(text.contains("wgpu adapters"), "{text}");
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
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("wgpu found no usable adapter") && err.contains("adapters seen: none"),
        "{err}"
    );
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
