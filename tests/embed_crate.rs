//! The README's embedding program (issue 40): a Burn program of a user's own that trains an MLP
//! on a tabular CSV with `SopaConfig` + `Objective::forward` + a Burn optimizer, saves SOPA's
//! record, loads it into a fresh SOPA and continues (`tests/embed_crate/program.rs`).
//!
//! The program is built as the example `embed_sopa`: an example is a crate of its own that sees
//! only rankrisk's public API, as a user's crate does, and `cargo test` compiles it with the
//! rest. What a user's crate adds is its manifest: a fresh crate outside the repository with
//! the README's entries must resolve rankrisk and Burn's tree with the very features this
//! build has, or Cargo builds Burn a second time (20+ minutes). That is checked from
//! `cargo tree` of both; building the fresh crate itself (issue 70: 3-7 minutes of CI, the
//! rankrisk crates again under another workspace root, no build script in them) would add
//! nothing the two checks do not show.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/cargo_tree.rs"]
mod cargo_tree;
use cargo_tree::cargo_tree;

/// The `burn = { ... }` entry of the workspace's dependencies, verbatim, so that the crate
/// asks for the same features (another feature set would rebuild Burn).
fn burn_entry(manifest: &str) -> String {
    let start = manifest
        .find("\nburn = {")
        .expect("the workspace names burn");
    let end = start + manifest[start..].find("] }").expect("burn's feature list") + 3;
    manifest[start + 1..end].to_string()
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>/examples, where `cargo test` put the examples.
fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

#[test]
fn the_embedding_program_trains_saves_sopa_reloads_it_and_continues() {
    let run = Command::new(example_binary("embed_sopa"))
        .arg(repo().join("datasets/data/tabular/australian.csv"))
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
}

/// Burn's tree (burn-*, cubecl-*) as `cargo tree --offline` resolves it for this machine with
/// the normal and build dependencies: each crate and version with its features.
fn burn_tree(manifest: &Path, args: &[&str]) -> BTreeMap<String, String> {
    let manifest = manifest.to_str().unwrap();
    let mut all = vec!["-e", "normal,build", "--format", "{p}|{f}"];
    all.extend(["--manifest-path", manifest]);
    all.extend(args);
    cargo_tree(&all)
        .lines()
        .filter(|line| line.starts_with("burn") || line.starts_with("cubecl"))
        .map(|line| {
            let (package, features) = line.split_once('|').unwrap();
            let features = features.trim_end_matches(" (*)").to_string();
            (package.to_string(), features)
        })
        .collect()
}

#[test]
fn a_fresh_crate_with_the_readmes_entries_resolves_burn_as_this_build_does() {
    let dir = std::env::temp_dir().join(format!("rankrisk-embed-crate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let path = |sub: &str| repo().join(sub).display().to_string();
    // The features this test was built with (the README's test command has wgpu).
    let wgpu = rankrisk::backend::BackendKind::WGPU_COMPILED;
    let features = if wgpu { ", features = [\"wgpu\"]" } else { "" };
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
    std::fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::copy(
        repo().join("tests/embed_crate/program.rs"),
        dir.join("src/main.rs"),
    )
    .unwrap();

    let fresh = burn_tree(&dir.join("Cargo.toml"), &[]);
    let ours = burn_tree(
        &repo().join("Cargo.toml"),
        if wgpu {
            &["--workspace", "--features", "wgpu"]
        } else {
            &["--workspace"]
        },
    );
    // The same crates and versions with the same features, or the fresh crate would build
    // Burn's tree again.
    assert_eq!(
        fresh, ours,
        "Burn's tree in the fresh crate and in this build"
    );
    for name in [
        "burn v",
        "burn-core v",
        "burn-flex v",
        "burn-ndarray v",
        "burn-autodiff v",
    ] {
        assert!(
            fresh.keys().any(|p| p.starts_with(name)),
            "{name} is not in the fresh crate's tree: {fresh:?}"
        );
    }
    assert_eq!(
        wgpu,
        fresh.keys().any(|p| p.starts_with("burn-wgpu v")),
        "burn-wgpu in the fresh crate's tree"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The README shows the `burn` entry a user's crate needs: it must be the workspace's own
/// (another feature set makes Cargo build Burn's tree a second time).
#[test]
fn the_readmes_burn_entry_is_the_workspaces() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let entry = burn_entry(&manifest);
    assert!(
        readme.contains(&entry),
        "README.md's burn entry differs from Cargo.toml's:\n{entry}"
    );
}
