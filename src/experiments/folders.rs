//! Every run of a `rankrisk train` config in its own output folder: checked once, before any
//! run starts, over the whole config (every run table and every grid point), so that no run
//! writes over another's model, metrics or `config.toml`. Two runs may not share a folder, and
//! no run's folder may lie inside another's (a grid's points lie inside the grid's own folder,
//! which holds its `grid.md` and `grid.json`, and nowhere else). Folders are compared as
//! absolute paths with `.` and `..` resolved, so `out/a` and `./out/b/../a` are one folder.

use std::path::{Component, Path, PathBuf};

use super::ExperimentError;

/// The longest folder name most file systems take, in bytes.
pub const MAX_NAME: usize = 255;

/// `path` made absolute (from the working folder) with `.` and `..` resolved by their names,
/// as the runs will create it (links are not followed: a folder that does not exist yet has
/// none to follow).
pub fn normalized(path: &Path) -> PathBuf {
    let base = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_default()
    };
    let mut out = PathBuf::new();
    for c in base.join(path).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// One folder a config writes, and who writes it.
struct Claim {
    folder: PathBuf,
    /// `run 2`, `run 1 (grid point lr=0.1)`, `run 1's grid`.
    who: String,
    /// The grid's run table for a grid folder or a grid point, else `None`.
    grid: Option<usize>,
    /// Whether this is a grid's own folder (holding its points).
    grid_folder: bool,
}

/// The output folder of one planned run.
#[derive(Debug, Clone, PartialEq)]
pub struct Output<'a> {
    /// The run's `out` (a grid point's own folder).
    pub out: &'a Path,
    /// The config's run table (0-based).
    pub table: usize,
    /// For a grid point: the grid's run table, the grid's folder and the point's label.
    pub grid: Option<(usize, &'a Path, String)>,
}

/// Check that the planned runs write to folders of their own.
///
/// # Errors
/// A message naming both runs (and grid points) and the folder when two share a folder or one
/// lies inside another's, or a grid point whose folder name is too long.
pub fn check_distinct(outputs: &[Output<'_>]) -> Result<(), ExperimentError> {
    let mut claims: Vec<Claim> = Vec::new();
    for o in outputs {
        let (out, run) = (o.out, format!("run {}", o.table + 1));
        match &o.grid {
            None => claims.push(Claim {
                folder: normalized(out),
                who: run,
                grid: None,
                grid_folder: false,
            }),
            Some((group, grid_out, label)) => {
                let group = *group;
                if label.len() > MAX_NAME {
                    return Err(ExperimentError::Output(format!(
                        "{run}: grid point {label}: its folder name is {} bytes, more than a \
                         file system takes ({MAX_NAME}); shorten the values (or the keys) of \
                         the grid",
                        label.len()
                    )));
                }
                if !claims
                    .iter()
                    .any(|c| c.grid_folder && c.grid == Some(group))
                {
                    claims.push(Claim {
                        folder: normalized(grid_out),
                        who: format!("{run}'s grid"),
                        grid: Some(group),
                        grid_folder: true,
                    });
                }
                claims.push(Claim {
                    folder: normalized(out),
                    who: format!("{run} (grid point {label})"),
                    grid: Some(group),
                    grid_folder: false,
                });
            }
        }
    }
    for (i, a) in claims.iter().enumerate() {
        for b in &claims[..i] {
            // A grid's points lie inside its own folder.
            let own = a.grid.is_some() && a.grid == b.grid && (a.grid_folder || b.grid_folder);
            if own && a.folder != b.folder {
                continue;
            }
            let shared = if a.folder == b.folder {
                "both write to".to_string()
            } else if a.folder.starts_with(&b.folder) {
                format!("{} writes inside the folder of {}:", a.who, b.who)
            } else if b.folder.starts_with(&a.folder) {
                format!("{} writes inside the folder of {}:", b.who, a.who)
            } else {
                continue;
            };
            let folder = if a.folder.starts_with(&b.folder) {
                &a.folder
            } else {
                &b.folder
            };
            return Err(ExperimentError::Output(format!(
                "{} and {}: {shared} {}; each run needs an `out` folder of its own (a second run \
                 would replace the first's model, metrics and config.toml)",
                b.who,
                a.who,
                folder.display()
            )));
        }
    }
    Ok(())
}
