//! Grids in a `rankrisk train` config, for tuning as the partial-AUC paper does (section 6.1:
//! learning rate and `gamma` chosen on validation data from a small grid).
//!
//! A list of values where a key takes one value (`lr = [0.03, 0.1, 0.3]`), or a list of lists
//! where a key takes a comma list (`positive = [[3], [3, 5]]`), makes that key an axis. A run
//! table with axes expands into one run per point of their Cartesian product (axes in the
//! keys' alphabetical order, the first varying slowest). Each point trains into its own folder
//! under the run's `out` (`out/gamma_scale=2000,lr=0.1`); `rankrisk train` then selects the
//! point with the best validation pAUC and reports the grid ([`GridRun`], [`select`],
//! [`markdown`]).

use crate::experiments::ExperimentError;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::train::run::RunSummary;

/// One point of a grid: each axis's key and the value it takes there, in the keys' order.
pub type GridPoint = Vec<(String, Value)>;

/// A run table with one value per key, and the grid point it stands for.
pub type PointTable = (Map<String, Value>, GridPoint);

/// The most grid points (trainings) one config expands to.
pub const MAX_POINTS: usize = 1000;

/// Split a run's table into the tables of its grid points. `takes_list(key)` says whether the
/// key's flag takes a comma list (so that a list of scalars is its one value, not an axis). A
/// table without axes gives itself with an empty point. The points are counted before they
/// are made: more than `room` (what [`MAX_POINTS`] leaves to this table) is refused.
///
/// # Errors
/// A message naming the key for an empty axis, an axis over `task` or `out`, or a grid over a
/// list key written with scalars; a message with the axes and the count for a grid of more
/// than `room` points.
pub fn expand(
    table: &Map<String, Value>,
    takes_list: impl Fn(&str) -> bool,
    room: usize,
) -> Result<Vec<PointTable>, ExperimentError> {
    let axes: Vec<(&String, usize)> = table
        .iter()
        .filter_map(|(key, value)| match value {
            Value::Array(items) if !takes_list(key) || items.iter().any(Value::is_array) => {
                Some((key, items.len()))
            }
            _ => None,
        })
        .collect();
    let count = axes
        .iter()
        .try_fold(1usize, |n, (_, len)| n.checked_mul(*len));
    if count.is_none_or(|n| n > room) {
        let product = axes
            .iter()
            .map(|(key, len)| format!("`{key}` ({len} values)"))
            .collect::<Vec<_>>()
            .join(" x ");
        let count = count.map_or("more than 2^64".to_string(), |n| n.to_string());
        return Err(ExperimentError::Config(format!(
            "the grid {product} makes {count} points (trainings); a config holds at most \
             {MAX_POINTS} in all ({room} left for this run): make the lists shorter or split \
             the grid"
        )));
    }
    let mut points = vec![(table.clone(), GridPoint::new())];
    for (key, value) in table {
        let Value::Array(items) = value else {
            continue;
        };
        let list_key = takes_list(key);
        let nested = items.iter().filter(|v| v.is_array()).count();
        if list_key && nested == 0 {
            continue;
        }
        if items.is_empty() {
            return Err(ExperimentError::Config(format!(
                "`{key}`: an empty list of grid values"
            )));
        }
        if list_key && nested != items.len() {
            return Err(ExperimentError::Config(format!(
                "`{key}`: a grid over a list key is a list of lists, e.g. [[3], [3, 5]]"
            )));
        }
        if matches!(key.as_str(), "task" | "out") {
            return Err(ExperimentError::Config(format!(
                "`{key}` cannot be a grid axis"
            )));
        }
        points = points
            .into_iter()
            .flat_map(|(t, p)| {
                items.iter().map(move |v| {
                    let mut t = t.clone();
                    t.insert(key.clone(), v.clone());
                    let mut p = p.clone();
                    p.push((key.clone(), v.clone()));
                    (t, p)
                })
            })
            .collect();
    }
    Ok(points)
}

/// `text` with every byte but ASCII letters, digits, `.`, `_` and `-` written as `%XX`, so that
/// a value's folder name holds no path separator and no two values share one (`a/b` is
/// `a%2Fb`, `a_b` stays `a_b`).
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A grid value as written in folder names and tables: `0.1`, `sbcd`, `3+5` for a list, each
/// scalar [`escaped`] (so `+` inside a value is `%2B` and never reads as a list).
fn show(value: &Value) -> String {
    match value {
        Value::String(s) => escaped(s),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join("+"),
        other => escaped(&other.to_string()),
    }
}

/// The point as `key=value` pairs joined by commas (`gamma_scale=2000,lr=0.1`): its folder
/// name under the run's `out` and its label in tables. Two different points of one grid never
/// get one label: the keys are the grid's axes in order and every value is escaped (`%XX`).
pub fn label(point: &GridPoint) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{}={}", k.replace('-', "_"), show(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// The output folder of a grid point: the run's `out` joined with the point's label.
pub fn folder(out: &Path, point: &GridPoint) -> PathBuf {
    out.join(label(point))
}

/// A trained grid point: its settings and the summary of its run.
#[derive(Debug, Clone)]
pub struct GridRun {
    /// The point.
    pub point: GridPoint,
    /// Its run's summary (`best` is the evaluation point with the best validation pAUC).
    pub summary: RunSummary,
}

/// The index of the point whose best evaluation has the highest validation figure of its
/// run's `select` (the pAUC, or the two-way pAUC; the first on a tie; a NaN never wins), or
/// `None` for an empty grid.
pub fn select(runs: &[GridRun]) -> Option<usize> {
    let figure = |r: &GridRun| r.summary.best.selection_figure(r.summary.config.select);
    let mut chosen: Option<usize> = None;
    for (i, r) in runs.iter().enumerate() {
        let v = figure(r);
        if v.is_nan() {
            continue;
        }
        if chosen.is_none_or(|c| v > figure(&runs[c])) {
            chosen = Some(i);
        }
    }
    chosen
}

/// One row of `grid.json`.
#[derive(Serialize)]
struct Row<'a> {
    point: String,
    chosen: bool,
    epoch: usize,
    val_auc: f64,
    val_pauc: f64,
    test_auc: f64,
    test_pauc: f64,
    train_seconds: f64,
    out: &'a Path,
}

fn rows(runs: &[GridRun], chosen: Option<usize>) -> Vec<Row<'_>> {
    runs.iter()
        .enumerate()
        .map(|(i, r)| Row {
            point: label(&r.point),
            chosen: chosen == Some(i),
            epoch: r.summary.best.epoch,
            val_auc: r.summary.best.val_auc,
            val_pauc: r.summary.best.val_pauc,
            test_auc: r.summary.best.test_auc,
            test_pauc: r.summary.best.test_pauc,
            train_seconds: r.summary.history.last().map_or(0.0, |h| h.seconds),
            out: &r.summary.config.out,
        })
        .collect()
}

/// The grid as a markdown table: each point's best evaluation (by validation pAUC), the chosen
/// point marked.
pub fn markdown(runs: &[GridRun], chosen: Option<usize>) -> String {
    let mut out = String::from(
        "| grid point | epoch | val AUC | val pAUC | test AUC | test pAUC | train s | chosen |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows(runs, chosen) {
        out.push_str(&format!(
            "| {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.1} | {} |\n",
            r.point,
            r.epoch,
            r.val_auc,
            r.val_pauc,
            r.test_auc,
            r.test_pauc,
            r.train_seconds,
            if r.chosen { "yes" } else { "" }
        ));
    }
    out
}

/// Write the grid's table as `grid.md` and `grid.json` into `dir` (the run's `out`).
///
/// # Errors
/// A message naming the file that could not be written.
pub fn save(dir: &Path, runs: &[GridRun], chosen: Option<usize>) -> Result<(), ExperimentError> {
    let err = |p: &Path, e: &dyn std::fmt::Display| {
        ExperimentError::Config(format!("{}: {e}", p.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| err(dir, &e))?;
    let md = dir.join("grid.md");
    std::fs::write(&md, markdown(runs, chosen)).map_err(|e| err(&md, &e))?;
    let json = dir.join("grid.json");
    let text = serde_json::to_string_pretty(&rows(runs, chosen)).map_err(|e| err(&json, &e))?;
    std::fs::write(&json, text).map_err(|e| err(&json, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_of_different_points_differ_and_hold_no_separator() {
        let point = |v: Value| vec![("init_model".to_string(), v)];
        let values = [
            Value::from("runs/a/best.bpk"),
            Value::from("runs/a_best.bpk"),
            Value::from("runs\\a/best.bpk"),
            Value::from("a+b"),
            serde_json::json!(["a", "b"]),
            Value::from("a%2Fb"),
            Value::from("a/b"),
            Value::from(0.1),
        ];
        let labels: Vec<String> = values.iter().map(|v| label(&point(v.clone()))).collect();
        for (i, a) in labels.iter().enumerate() {
            assert!(!a.contains('/') && !a.contains('\\'), "{a}");
            for b in &labels[..i] {
                assert_ne!(a, b);
            }
        }
        let plain = vec![
            ("gamma_scale".to_string(), Value::from(2000)),
            ("lr".to_string(), Value::from(0.1)),
        ];
        assert_eq!(label(&plain), "gamma_scale=2000,lr=0.1");
        // The number 0.1 and the text "0.1" are one flag value, so one run and one label.
        assert_eq!(
            label(&point(Value::from("0.1"))),
            label(&point(Value::from(0.1)))
        );
    }

    #[test]
    fn a_grid_is_counted_before_it_is_made() {
        let table: Map<String, Value> = serde_json::from_str(
            r#"{"task": "long-tailed", "lr": [1, 2, 3], "gamma_scale": [1, 2], "positive": [3]}"#,
        )
        .unwrap();
        let list = |k: &str| k == "positive";
        assert_eq!(expand(&table, list, 6).unwrap().len(), 6);
        let e = expand(&table, list, 5).unwrap_err().to_string();
        assert!(
            e.contains("`gamma_scale` (2 values) x `lr` (3 values) makes 6 points"),
            "{e}"
        );
    }
}
