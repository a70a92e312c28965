//! A fresh crate outside the repository that depends on rankrisk by path (issue 40): it trains
//! an MLP on a tabular CSV with `SopaConfig` + `Objective::forward` + a Burn optimizer, saves
//! SOPA's record, loads it into a fresh SOPA and continues (`tests/embed_crate/program.rs`, the
//! program the README shows). The crate is built with this repository's lock file and target
//! folder, so only the rankrisk crates and the program compile.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `burn = { ... }` entry of the workspace's dependencies, verbatim, so that the crate
/// asks for the same features (another feature set would rebuild Burn).
fn burn_entry(manifest: &str) -> String {
    let start = manifest
        .find("\nburn = {")
        .expect("the workspace names burn");
    let end = start + manifest[start..].find("] }").expect("burn's feature list") + 3;
    manifest[start + 1..end].to_string()
}

/// The target folder this test was built in (`<target>/release/deps/embed_crate-...`).
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

#[test]
fn a_fresh_crate_embeds_sopa_saves_its_record_and_continues() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("rankrisk-embed-crate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let path = |sub: &str| repo.join(sub).display().to_string();
    // The features this test was built with (the README's test command has wgpu), so that the
    // crate reuses the test build's Burn instead of building another feature set of it.
    let features = if rankrisk::backend::BackendKind::WGPU_COMPILED {
        ", features = [\"wgpu\"]"
    } else {
        ""
    };
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"embed_demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\nrankrisk = {{ path = {:?}{features} }}\n\
             rankrisk-datasets = {{ path = {:?} }}\nrankrisk-models = {{ path = {:?} }}\n{}\n\n\
             [workspace]\n",
            path(""),
            path("datasets"),
            path("models"),
            burn_entry(&manifest)
        ),
    )
    .unwrap();
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::copy(
        repo.join("tests/embed_crate/program.rs"),
        dir.join("src/main.rs"),
    )
    .unwrap();
    let target = target_dir();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(cargo)
        .args(["build", "--release", "--offline", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "the fresh crate does not build:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let run = Command::new(target.join("release/embed_demo"))
        .arg(repo.join("datasets/data/tabular/australian.csv"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        out.contains("reloaded SOPA equals the saved one: true"),
        "{out}"
    );
    let auc: f64 = out
        .split("training AUC ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no AUC in: {out}"));
    assert!(auc > 0.85, "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The README shows the `burn` entry a user's crate needs: it must be the workspace's own
/// (another feature set makes Cargo build Burn's tree a second time).
#[test]
fn the_readmes_burn_entry_is_the_workspaces() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let entry = burn_entry(&manifest);
    assert!(
        readme.contains(&entry),
        "README.md's burn entry differs from Cargo.toml's:\n{entry}"
    );
}
