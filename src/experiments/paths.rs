//! Output paths checked before the work that writes them: a `--json FILE` of `fit-linear`,
//! `fit-pauc`, `fit-sorr` and `metrics`, and the `out` folder of a `rankrisk train` run. A
//! path that cannot be written is refused before any data is read or any solver runs, not
//! after; the checks leave nothing behind (a probe file they create is removed at once).

use crate::experiments::ExperimentError;
use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Check that the file `path` can be written: an existing file must open for writing (it is
/// not truncated), a new one must be creatable in an existing folder (it is created and removed
/// again, so that a failed run leaves no empty file). `what` names the setting in the message
/// (`--json`).
///
/// # Errors
/// A message naming the setting, the path and the reason: a folder in its place, a missing
/// parent folder, no permission, a read-only file system.
pub fn check_file(path: &Path, what: &str) -> Result<(), ExperimentError> {
    let err =
        |reason: String| ExperimentError::Output(format!("{what} {}: {reason}", path.display()));
    if path.as_os_str().is_empty() {
        return Err(ExperimentError::Output(format!("{what}: an empty path")));
    }
    if path.is_dir() {
        return Err(err("is a folder; give a file name".into()));
    }
    if path.exists() {
        return OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| err(format!("cannot be written: {e}")));
    }
    let parent = parent_of(path);
    if !parent.is_dir() {
        return Err(err(format!(
            "the folder {} does not exist (create it first)",
            parent.display()
        )));
    }
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => {
            drop(file);
            Ok(std::fs::remove_file(path).map_err(|e| err(format!("cannot be written: {e}")))?)
        }
        // Created meanwhile by someone else: it is there, so check it as an existing file.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => check_file(path, what),
        Err(e) => Err(err(format!("cannot be written: {e}"))),
    }
}

/// [`check_file`] for an output file that must not be one of the command's `inputs`
/// (`--json` naming the training file would replace the data with the report).
///
/// # Errors
/// As [`check_file`]; a message naming both paths when they are the same file.
pub fn check_output(path: &Path, what: &str, inputs: &[&Path]) -> Result<(), ExperimentError> {
    check_file(path, what)?;
    let Ok(out) = path.canonicalize() else {
        // Not there yet: it cannot be an input that was read.
        return Ok(());
    };
    match inputs
        .iter()
        .find(|input| input.canonicalize().is_ok_and(|i| i == out))
    {
        Some(input) => Err(ExperimentError::Output(format!(
            "{what} {}: is the input file {}; writing the report would replace it",
            path.display(),
            input.display()
        ))),
        None => Ok(()),
    }
}

/// Check that the output folder `path` can be made and written: an existing path must be a
/// folder we can create files in; a missing one needs its nearest existing ancestor to be a
/// folder we can create files in (the run creates the rest). `what` names the setting in the
/// message (`out`).
///
/// # Errors
/// A message naming the setting, the path and the reason: a file in its place or in the place
/// of one of its folders, no permission, a read-only file system.
pub fn check_folder(path: &Path, what: &str) -> Result<(), ExperimentError> {
    let err =
        |reason: String| ExperimentError::Output(format!("{what}: {}: {reason}", path.display()));
    if path.as_os_str().is_empty() {
        return Err(ExperimentError::Output(format!("{what}: an empty path")));
    }
    let mut existing: PathBuf = path.to_path_buf();
    while !existing.exists() {
        existing = parent_of(&existing);
    }
    if !existing.is_dir() {
        return Err(err(format!(
            "{} is a file, not a folder",
            existing.display()
        )));
    }
    probe(&existing).map_err(|e| {
        err(format!(
            "cannot create files in {}: {e}",
            existing.display()
        ))
    })
}

/// The parent folder of `path` (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Create and remove a probe file in `folder`.
fn probe(folder: &Path) -> std::io::Result<()> {
    for k in 0..100u32 {
        let name = format!(".rankrisk-write-check-{}-{k}", std::process::id());
        let p = folder.join(name);
        match OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(file) => {
                drop(file);
                return std::fs::remove_file(&p);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free probe file name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rankrisk-paths-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_new_file_in_a_folder_passes_and_leaves_nothing() {
        let d = scratch("new");
        let f = d.join("out.json");
        check_file(&f, "--json").unwrap();
        assert!(!f.exists());
        std::fs::write(&f, "keep").unwrap();
        check_file(&f, "--json").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "keep");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn missing_folders_and_folders_in_place_of_files_are_refused() {
        let d = scratch("bad");
        let e = check_file(&d.join("no/such/out.json"), "--json").unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let e = check_file(&d, "--json").unwrap_err();
        assert!(e.to_string().contains("is a folder"), "{e}");
        std::fs::write(d.join("file"), "x").unwrap();
        let e = check_folder(&d.join("file/run"), "out").unwrap_err();
        assert!(e.to_string().contains("is a file"), "{e}");
        check_folder(&d.join("a/b/c"), "out").unwrap();
        assert!(!d.join("a").exists());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).ok();
    }
}
