//! The structure docs/ARCHITECTURE.md describes, checked on the source text:
//!
//! - the crates: `rankrisk-core` has no Burn, cubecl or wgpu in its dependency tree;
//! - the libraries' layers (the core crate's and the root crate's): no file imports from a
//!   layer above its own;
//! - no import circles between files, in the library and in the `models` and `datasets` crates;
//! - no library file over 500 lines unless it is listed here with the one idea it holds;
//! - one feature set of the third-party crates for the workspace and for each member built
//!   alone (`hack/Cargo.toml`), so that `cargo test -p rankrisk-models` reuses the workspace
//!   build.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "common/cargo_tree.rs"]
mod cargo_tree;
use cargo_tree::cargo_tree;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The root library's layers, lowest first: a file may import from its own layer or below.
/// The core crate (`core/src`, [`CORE_LAYERS`]) lies below them all. The binary's `cli`
/// (src/main.rs's module, not the library's) sits above them all.
const LAYERS: &[&[&str]] = &[
    &["device", "plot"],
    &["train"],
    &["tasks"],
    &["experiments"],
    &["cli"],
];

/// The core crate's layers, lowest first.
const CORE_LAYERS: &[&[&str]] = &[
    &["math", "sampler", "config"],
    &["metrics"],
    &["admm", "pauc", "pdprox"],
    &["objective"],
];

/// Library files allowed over 500 lines, with the one idea each holds.
const LONG_FILES: [(&str, &str); 4] = [
    (
        "src/experiments/plan.rs",
        "a config file read as the flags: its runs, their grids, a run folder's saved config",
    ),
    (
        "core/src/math/weights.rs",
        "the rank weights sigma of every rank-based objective (eq. 3-6)",
    ),
    (
        "core/src/admm/schedule.rs",
        "the penalty schedules of ADMM (Table 6)",
    ),
    (
        "core/src/pauc/agd.rs",
        "the model-free iterations of AGD-SBCD (Algorithms 1-2)",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below `src` (`train/run/mod.rs` -> `["train", "run"]`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file of the longest prefix of `path` that is a module of the crate.
fn resolve(modules: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (0..=path.len())
        .rev()
        .find_map(|k| modules.get(&path[..k]).cloned())
}

/// The paths a file refers to through `crate::` and `super::`, as module paths, from its code
/// lines (comments and doc comments are skipped).
fn references(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Test modules sit at the end of a file; their `use super::*` is not the file's import.
    for line in text.lines().take_while(|l| l.trim() != "#[cfg(test)]") {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let code = code.split("//").next().unwrap_or("");
        for (start, kind) in code
            .match_indices("crate::")
            .map(|(i, _)| (i + 7, "crate"))
            .chain(code.match_indices("super::").map(|(i, _)| (i + 7, "super")))
        {
            let before = &code[..start - 7];
            if kind == "super" && before.ends_with("::") {
                continue;
            }
            let rest: String = code[start..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            // `super` is the parent module (of `a/b.rs` and of `a/b/mod.rs` alike: `a`).
            let mut path: Vec<String> = if kind == "crate" {
                Vec::new()
            } else {
                module[..module.len().saturating_sub(1)].to_vec()
            };
            path.extend(
                rest.split("::")
                    .filter(|s| !s.is_empty() && s.chars().next().is_some_and(char::is_lowercase))
                    .map(str::to_string),
            );
            out.push(path);
        }
    }
    out
}

/// Edges file -> file of a crate's `src`.
fn graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let mut edges = BTreeMap::new();
    for f in &files {
        let module = module_of(src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let targets: BTreeSet<PathBuf> = references(&module, &text)
            .iter()
            .filter_map(|p| resolve(&modules, p))
            .filter(|t| t != f)
            .collect();
        edges.insert(f.clone(), targets);
    }
    edges
}

/// A cycle of the graph, if there is one.
fn find_cycle(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    fn visit(
        node: &PathBuf,
        edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, u8>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if state.get(node).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(node, edges, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

fn layer(layers: &[&[&str]], src: &Path, file: &Path) -> Option<usize> {
    let module = module_of(src, file);
    let top = module.first()?;
    layers.iter().position(|l| l.contains(&top.as_str()))
}

#[test]
fn no_library_file_imports_from_a_layer_above_its_own() {
    for (dir, layers) in [("src", LAYERS), ("core/src", CORE_LAYERS)] {
        check_layers(&Path::new(ROOT).join(dir), layers);
    }
}

fn check_layers(src: &Path, layers: &[&[&str]]) {
    let layer = |src: &Path, f: &Path| layer(layers, src, f);
    let edges = graph(src);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    for f in &files {
        let top = module_of(src, f);
        if top.is_empty() {
            continue; // lib.rs and main.rs sit above every layer
        }
        let own = layer(src, f).unwrap_or_else(|| {
            panic!(
                "{}: module {:?} is in no layer of LAYERS",
                f.display(),
                top[0]
            )
        });
        for target in &edges[f] {
            if let Some(theirs) = layer(src, target) {
                assert!(
                    theirs <= own,
                    "{} (layer {own}) imports {} (layer {theirs})",
                    f.display(),
                    target.display()
                );
            }
        }
    }
}

#[test]
fn no_import_circles_between_files() {
    for dir in ["src", "core/src", "models/src", "datasets/src"] {
        let edges = graph(&Path::new(ROOT).join(dir));
        if let Some(cycle) = find_cycle(&edges) {
            let names: Vec<String> = cycle.iter().map(|p| p.display().to_string()).collect();
            panic!("import circle: {}", names.join(" -> "));
        }
    }
}

#[test]
fn the_checker_sees_an_upward_import_and_a_circle() {
    // The checker itself: a layer-2 file importing from train, and two files importing each
    // other, are found.
    let dir = std::env::temp_dir().join(format!("rankrisk-layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("train")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod loss;\npub mod train;\n").unwrap();
    std::fs::write(src.join("loss.rs"), "use crate::train::run::Thing;\n").unwrap();
    std::fs::write(src.join("train/mod.rs"), "pub mod run;\n").unwrap();
    std::fs::write(
        src.join("train/run.rs"),
        "use crate::loss::X;\n// crate::nothing\n",
    )
    .unwrap();
    let edges = graph(&src);
    assert!(edges[&src.join("loss.rs")].contains(&src.join("train/run.rs")));
    assert!(!edges[&src.join("train/run.rs")].contains(&src.join("lib.rs")));
    let layers: &[&[&str]] = &[&["loss"], &["train"]];
    assert!(
        layer(layers, &src, &src.join("train/run.rs")) > layer(layers, &src, &src.join("loss.rs"))
    );
    assert!(find_cycle(&edges).is_some());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn no_library_file_over_500_lines_but_the_listed_ones() {
    for dir in ["src", "core/src", "models/src", "datasets/src"] {
        let mut files = Vec::new();
        rust_files(&Path::new(ROOT).join(dir), &mut files);
        for f in files {
            let lines = std::fs::read_to_string(&f).unwrap().lines().count();
            let rel = f.strip_prefix(ROOT).unwrap().display().to_string();
            let listed = LONG_FILES.iter().any(|(p, _)| *p == rel);
            assert!(
                lines <= 500 || listed,
                "{rel} has {lines} lines: split it, or list it in LONG_FILES with the one idea it holds"
            );
        }
    }
}

/// The functions of `text` longer than `max` lines: `(name, lines)`. A function starts at a
/// line whose first token after the indentation (and `pub`, `pub(crate)`, ...) is `fn` and
/// ends at the first later line that is its indentation followed by `}` (rustfmt's layout).
fn long_functions(text: &str, max: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let mut rest = line.trim_start();
        for prefix in ["pub(crate) ", "pub(super) ", "pub "] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let Some(after) = rest.strip_prefix("fn ") else {
            i += 1;
            continue;
        };
        if line.trim_end().ends_with(';') {
            i += 1;
            continue;
        }
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{}}}", " ".repeat(indent));
        let end = (i + 1..lines.len())
            .find(|&j| lines[j].trim_end() == close)
            .unwrap_or(lines.len() - 1);
        if end - i + 1 > max {
            out.push((name, end - i + 1));
        }
        i = end + 1;
    }
    out
}

/// Issue 40: the run driver and the objectives in functions a reader can hold.
#[test]
fn no_function_in_src_train_over_80_lines() {
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("src/train"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(ROOT).unwrap().display().to_string();
        let long = long_functions(&text, 80);
        assert!(long.is_empty(), "{rel}: {long:?} over 80 lines: split them");
    }
    // The checker finds one.
    let body = "    let x = 1;\n".repeat(81);
    let text = format!("pub(crate) fn big() {{\n{body}}}\nfn small() {{}}\n");
    assert_eq!(long_functions(&text, 80), vec![("big".to_string(), 83)]);
}

/// `cargo tree` of the given selection: one `name version features` line per package.
fn feature_set(selection: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["-e", "normal,build,dev", "-f", "{p} {f}"];
    args.extend(selection);
    cargo_tree(&args)
        .lines()
        .map(|l| l.trim_end_matches(" (*)").to_string())
        .filter(|l| !l.starts_with("rankrisk"))
        .collect()
}

#[test]
fn each_member_builds_with_the_workspace_feature_set() {
    let workspace = feature_set(&["--workspace"]);
    for member in ["rankrisk-models", "rankrisk-datasets"] {
        let alone = feature_set(&["-p", member]);
        let differ: Vec<&String> = alone.difference(&workspace).collect();
        assert!(
            differ.is_empty(),
            "{member} alone builds these with other features than the workspace (add them to \
             hack/Cargo.toml): {differ:?}"
        );
    }
}

/// Issue 57: the core crate builds without Burn's stack (nothing of Burn, cubecl or wgpu in
/// its normal dependencies, with or without its `clap` feature).
#[test]
fn the_core_crate_has_no_burn_below_it() {
    for features in [&[][..], &["--features", "clap"][..]] {
        let mut args = vec!["-e", "normal", "-f", "{p}", "-p", "rankrisk-core"];
        args.extend(features);
        let tree = cargo_tree(&args);
        assert!(tree.lines().any(|l| l.starts_with("faer ")), "{tree}");
        let framework: Vec<&str> = tree
            .lines()
            .filter(|l| ["burn", "cubecl", "wgpu"].iter().any(|n| l.starts_with(n)))
            .collect();
        assert!(framework.is_empty(), "{features:?}: {framework:?}");
    }
}
