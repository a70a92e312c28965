//! The rank-based paper's tabular sets, embedded in the crate (provenance and counts in
//! `datasets/data/tabular/README.md`), and generated sets by name.

use std::path::Path;

use super::Tabular;
use super::labels::{LabelColumn, binary_labels};
use super::read::parse_delimited;
use crate::error::DataError;

/// The data sets embedded in the crate (the rank-based paper's tabular sets).
pub const BUILTIN: [&str; 7] = [
    "australian",
    "phoneme",
    "titanic",
    "monks-3",
    "splice",
    "utkface",
    "synthetic[:n=..,d=..]",
];

const AUSTRALIAN: &str = include_str!("../../data/tabular/australian.csv");
const PHONEME: &str = include_str!("../../data/tabular/phoneme.csv");
const TITANIC: &str = include_str!("../../data/tabular/titanic.csv");
const MONKS3: &str = include_str!("../../data/tabular/monks-3.test");
pub(crate) const SPLICE: &str = include_str!("../../data/tabular/splice.data");
const UTKFACE: &str = include_str!("../../data/tabular/UTKFace/landmark_list_part3.txt");

/// Load one of the built-in sets ([`BUILTIN`]) with labels in {-1, +1} and raw (not yet
/// standardized) features. `utkface` carries the race group (white = 0, other = 1).
/// `synthetic[:n=..,d=..,...]` generates a set (see [`super::synthetic::parse_spec`]).
///
/// # Errors
/// [`DataError::UnknownDataset`] for another name.
pub fn load_builtin(name: &str) -> Result<Tabular, DataError> {
    let key = name.trim().to_ascii_lowercase();
    match key.as_str() {
        "australian" => parse_delimited(AUSTRALIAN, "australian", ',', LabelColumn::Last),
        "phoneme" => parse_delimited(PHONEME, "phoneme", ',', LabelColumn::Last),
        "titanic" => parse_delimited(TITANIC, "titanic", ',', LabelColumn::Last),
        "monks-3" | "monks" | "monk" => parse_monks(MONKS3, "monks-3"),
        "splice" => parse_splice(SPLICE, "splice"),
        "utkface" => parse_utkface(UTKFACE, "utkface"),
        k if k == "synthetic" || k.starts_with("synthetic:") => {
            super::synthetic::make_classification(&super::synthetic::parse_spec(&key)?)
        }
        _ => Err(DataError::UnknownDataset(
            name.to_string(),
            BUILTIN.join(", "),
        )),
    }
}

fn parse_monks(text: &str, name: &str) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut labels = Vec::new();
    let mut lines = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        if tokens.len() != 8 {
            return Err(DataError::parse(
                name,
                lineno + 1,
                format!("{} fields, expected 8", tokens.len()),
            ));
        }
        let nums: Result<Vec<f64>, _> = tokens[..7].iter().map(|t| t.parse::<f64>()).collect();
        let nums = nums.map_err(|_| DataError::parse(name, lineno + 1, "non-numeric attribute"))?;
        labels.push(nums[0]);
        lines.push(lineno + 1);
        x.extend_from_slice(&nums[1..]);
    }
    let y = binary_labels(&labels, &lines, Path::new(name))?;
    Tabular::new(name, 6, x, y, None)
}

fn parse_splice(text: &str, name: &str) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 3 || fields[2].len() != 60 {
            return Err(DataError::parse(
                name,
                lineno + 1,
                "expected 'class, id, 60 letters'",
            ));
        }
        y.push(match fields[0] {
            "N" => -1.0,
            "EI" | "IE" => 1.0,
            other => {
                return Err(DataError::parse(
                    name,
                    lineno + 1,
                    format!("unknown class '{other}'"),
                ));
            }
        });
        for c in fields[2].chars() {
            if !c.is_ascii_alphabetic() {
                return Err(DataError::parse(
                    name,
                    lineno + 1,
                    format!("'{c}' is not a letter"),
                ));
            }
            // The paper's encoding: a = 1, ..., z = 26.
            x.push(f64::from(c.to_ascii_lowercase() as u8 - b'a' + 1));
        }
    }
    Tabular::new(name, 60, x, y, None)
}

fn parse_utkface(text: &str, name: &str) -> Result<Tabular, DataError> {
    let mut x = Vec::new();
    let mut y = Vec::new();
    let mut group = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let mut tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.is_empty() {
            continue;
        }
        // One row of the original file reads "NAME .jpg x1 y1 ...": the extension got split off.
        if tokens.len() == 138 && tokens[1] == ".jpg" {
            tokens.remove(1);
        }
        let parts: Vec<&str> = tokens[0].trim_end_matches(".jpg").split('_').collect();
        if parts.len() != 4 {
            continue; // the provenance note: skip names that do not split into 4 parts
        }
        if tokens.len() != 137 {
            return Err(DataError::parse(
                name,
                lineno + 1,
                format!("{} landmark values, expected 136", tokens.len() - 1),
            ));
        }
        let gender = parts[1];
        let race = parts[2];
        y.push(match gender {
            "0" => -1.0,
            "1" => 1.0,
            other => {
                return Err(DataError::parse(
                    name,
                    lineno + 1,
                    format!("gender '{other}' is not 0 or 1"),
                ));
            }
        });
        group.push(u8::from(race != "0"));
        for t in &tokens[1..] {
            x.push(t.parse::<f64>().map_err(|_| {
                DataError::parse(name, lineno + 1, format!("'{t}' is not a number"))
            })?);
        }
    }
    Tabular::new(name, 136, x, y, Some(group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_sets_match_their_provenance_counts() {
        // (name, rows, features, positives) from datasets/data/tabular/README.md
        let expected = [
            ("australian", 690, 14, 307),
            ("phoneme", 5404, 5, 1586),
            ("titanic", 2201, 3, 711),
            ("monks-3", 432, 6, 228),
            ("splice", 3190, 60, 1535),
        ];
        for (name, n, d, pos) in expected {
            let t = load_builtin(name).unwrap();
            assert_eq!((t.n(), t.d, t.positives()), (n, d, pos), "{name}");
            t.require_both_classes().unwrap();
        }
        let utk = load_builtin("utkface").unwrap();
        assert_eq!(utk.d, 136);
        assert_eq!(utk.n(), 3209);
        let g = utk.group.as_ref().unwrap();
        assert!(g.contains(&0) && g.contains(&1));
    }

    #[test]
    fn unknown_name_lists_the_builtin_sets() {
        let err = load_builtin("mnist").unwrap_err().to_string();
        assert!(err.contains("mnist") && err.contains("australian"), "{err}");
    }
}
