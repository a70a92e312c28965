//! `benches/gpu.sh`, the one-command GPU benchmark, on a machine without a GPU: its argument
//! handling, its refusal without a GPU adapter, a run on lavapipe with tiny shapes (`--tiny`),
//! and the table (`benches/gpu_table.py`) from a folder of known figures. Needs bash and
//! python3 (CI has both); the lavapipe run is skipped with RANKRISK_SKIP_WGPU=1.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>, where `cargo test` put the binary and the examples.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rankrisk-gpu-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn gpu_sh(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(root().join("benches/gpu.sh"))
        .arg("--bin")
        .arg(bin_dir())
        .args(args)
        .output()
        .expect("bash runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn bad_arguments_are_refused_with_status_2() {
    let o = gpu_sh(&["--frobnicate"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("unknown argument '--frobnicate'"));
    let o = gpu_sh(&["--bin-nofusion", "/nonexistent-rankrisk"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no bench_step in /nonexistent-rankrisk"));
}

#[test]
fn without_a_gpu_it_says_so_and_exits_3() {
    if !rankrisk::backend::BackendKind::WGPU_COMPILED {
        eprintln!("a build without wgpu: gpu.sh's refusal of it is checked instead");
        let o = gpu_sh(&[]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("built without wgpu"), "{}", text(&o));
        return;
    }
    let info = Command::new(env!("CARGO_BIN_EXE_rankrisk"))
        .arg("info")
        .output()
        .unwrap();
    let info = text(&info);
    if info.contains("type: DiscreteGpu") || info.contains("type: IntegratedGpu") {
        eprintln!("a GPU adapter is present: the refusal is not checked here");
        return;
    }
    let out = scratch("refuse");
    let o = gpu_sh(&["--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("wgpu finds no GPU adapter"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn tiny_run_on_lavapipe_prints_the_table() {
    if !rankrisk::backend::BackendKind::WGPU_COMPILED
        || std::env::var_os("RANKRISK_SKIP_WGPU").is_some_and(|v| v == "1")
    {
        eprintln!("RANKRISK_SKIP_WGPU=1: the lavapipe run is skipped");
        return;
    }
    let out = scratch("tiny");
    // A Python without torch: PyTorch's columns stay empty and the table says why.
    let o = gpu_sh(&[
        "--tiny",
        "--python",
        "/nonexistent-python",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let table = std::fs::read_to_string(out.join("table.md")).unwrap();
    for tag in ["resnet20-1x8-b2", "resnet20-3x8-b2"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| {tag} |")))
            .unwrap_or_else(|| panic!("no row {tag} in\n{table}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // The step's median: a positive number of milliseconds.
        let step: f64 = cells[2].split(' ').next().unwrap().parse().unwrap();
        assert!(step > 0.0, "{row}");
        assert_eq!(cells[9], "-", "no PyTorch figures without torch: {row}");
    }
    assert!(table.contains("PyTorch: "), "{table}");
    assert!(table.contains("The objectives' CPU side"), "{table}");
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn the_table_puts_ours_and_pytorch_side_by_side() {
    let out = scratch("table");
    let ours = |step: f64, first: f64| {
        serde_json::json!([
            {"backend": "wgpu", "model": "ResNet-20", "path": "rankrisk (CE)",
             "phase": "first step (compilation, tuning)", "median_ms": first, "iqr_ms": 0.0, "n": 1},
            {"backend": "wgpu", "model": "ResNet-20", "path": "rankrisk (CE)",
             "phase": "score read-back", "median_ms": 0.5, "iqr_ms": 0.1, "n": 20},
            {"backend": "wgpu", "model": "ResNet-20", "path": "rankrisk (CE)",
             "phase": "step", "median_ms": step, "iqr_ms": 0.2, "n": 20},
        ])
        .to_string()
    };
    let tag = "resnet20-1x28-b32";
    std::fs::write(
        out.join(format!("ours-fusion-{tag}.json")),
        ours(6.0, 2500.0),
    )
    .unwrap();
    std::fs::write(
        out.join(format!("ours-nofusion-{tag}.json")),
        ours(9.0, 900.0),
    )
    .unwrap();
    std::fs::write(
        out.join(format!("torch-{tag}.json")),
        serde_json::json!({"results": {
            "step": {"median_ms": 4.0, "iqr_ms": 0.1},
            "first step": {"median_ms": 300.0, "iqr_ms": 0.0}},
            "peak_memory_mib": 120.4})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        out.join(format!("ours-fusion-{tag}.mem")),
        "400\n410\n650\n500\n",
    )
    .unwrap();
    let o = Command::new("python3")
        .arg(root().join("benches/gpu_table.py"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    let row = t
        .lines()
        .find(|l| l.starts_with(&format!("| {tag} |")))
        .unwrap_or_else(|| panic!("{t}"));
    assert_eq!(
        row,
        "| resnet20-1x28-b32 | 6.00 (0.20) | 2.50 | 250 | 0.50 (0.10) | 9.00 (0.20) | 0.90 \
         | - | 4.00 (0.10) | 0.30 | - / 120 | 1.50x |"
    );
    std::fs::remove_dir_all(&out).ok();
}
