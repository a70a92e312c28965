//! The test crates' one way to ask Cargo for a dependency tree (`tests/layers.rs`,
//! `tests/embed_crate.rs`, by `#[path]`).

use std::process::Command;

/// The lines `cargo tree --offline --prefix none` prints for `args` (edge kinds, format,
/// selection, or `--manifest-path` for another crate), run in this repository.
pub fn cargo_tree(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--prefix", "none"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo tree {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
